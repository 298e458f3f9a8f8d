"""KRIMP: the code table that compresses a database best (Siebes, Vreeken, van Leeuwen 2006/2011).

The input is a :class:`WeightedDatabase`: the *frequency set* of the source (its distinct rows,
integer-coded, with their counts) as produced by one SQL ``GROUP BY`` in
:mod:`sqlanon.generate.itemsets`. Every categorical row has exactly one item per column, so an
itemset is a partial assignment ``column -> value`` and is encoded as a column bitmask plus values.

What is KRIMP here, exactly as the KRIMP papers define it:

* **Standard code table** ST: the singletons, code length ``-log2(supp(i) / sum_j supp(j))``.
* **Candidate order** (the order candidates are tried): support desc, length desc,
  lexicographic on item ids (items numbered in the source's item order, see ``itemsets``).
* **Cover order** (the order of the code table): length desc, support desc, lexicographic.
  Support is the support in the database, never the usage.
* **Cover**: for each row, walk the code table in cover order and take every element that is a
  subset of the still-uncovered part of the row.
* **Sizes**: ``L(D|CT) = sum_X usage(X) * -log2(usage(X)/sum usage)``;
  ``L(CT|D) = sum_{X: usage(X) > 0} (L(X|ST) + L(code_CT(X)))`` with ``L(X|ST)`` the sum of the
  standard code lengths of the items of X. ``L% = (L(CT|D)+L(D|CT)) / (L(ST|D)+L(D|ST))``.
* A candidate is kept iff the total size strictly drops; after an acceptance the non-singleton
  elements whose usage fell are pruned (lowest usage first) while that lowers the total size.
  An element whose usage fell to zero is dropped outright (it costs nothing and codes nothing).

**Usages are computed in a vectorized way, not in SQL.** KRIMP tries every candidate (307,591 for
nursery at min_sup 1) and each try is a *cover* of the rows the candidate touches. A SQL round
trip costs ~5 ms (DESIGN.md), so one statement per candidate would take half an hour on nursery;
instead the cover of the frequency set (distinct rows with weights, at most the number of rows and
usually far fewer) is kept in numpy arrays, and a candidate only re-covers the rows that contain
it and where its columns are still covered by later elements. Re-covering is vectorized over
rows *and* code-table elements: each "wave" picks, for every affected row at once, the first
usable element in cover order, so the loop runs at most (number of columns) times per candidate.
Memory is O(distinct rows x columns + code table x distinct rows), independent of the row count;
100K+ rows cost one SQL ``GROUP BY``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from sqlanon.errors import ConfigError

MAX_COLUMNS = 62  # column sets are int64 bitmasks


@dataclass
class WeightedDatabase:
    """Distinct rows as item ids (one per column) with their counts.

    ``item_column[i]`` is the column of item ``i``; item ids follow the item order used for the
    lexicographic tie-breaks. ``item_labels[i]`` is the original value (for output/reporting).
    """

    rows: np.ndarray  # (R, m) int64, item ids
    weights: np.ndarray  # (R,) int64
    item_column: np.ndarray  # (I,) int64
    item_labels: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rows = np.asarray(self.rows, dtype=np.int64)
        self.weights = np.asarray(self.weights, dtype=np.int64)
        self.item_column = np.asarray(self.item_column, dtype=np.int64)
        if self.rows.ndim != 2:
            raise ConfigError("a weighted database needs a 2-d array of item ids")
        if self.n_columns > MAX_COLUMNS:
            raise ConfigError(f"KRIMP here handles at most {MAX_COLUMNS} columns, got {self.n_columns}")

    @property
    def n_columns(self) -> int:
        return int(self.rows.shape[1])

    @property
    def n_items(self) -> int:
        return int(len(self.item_column))

    @property
    def n_rows(self) -> int:
        return int(self.weights.sum())

    def item_support(self) -> np.ndarray:
        return np.bincount(self.rows.ravel(), weights=np.repeat(self.weights, self.n_columns), minlength=self.n_items).astype(np.int64)


def code_lengths(usage: np.ndarray) -> np.ndarray:
    """Shannon-optimal code lengths ``-log2(u / sum u)`` (inf for zero usage)."""
    usage = np.asarray(usage, dtype=np.float64)
    total = usage.sum()
    with np.errstate(divide="ignore"):
        return -np.log2(usage / total)


def total_size(usage: np.ndarray, st_lengths: np.ndarray) -> tuple[float, float]:
    """``(L(CT|D), L(D|CT))`` for elements with ``usage`` and standard-code sizes ``st_lengths``."""
    usage = np.asarray(usage, dtype=np.float64)
    used = usage > 0
    u = usage[used]
    total = u.sum()
    if total == 0:
        return 0.0, 0.0
    lens = np.log2(total) - np.log2(u)
    data = float((u * lens).sum())
    table = float((lens + np.asarray(st_lengths, dtype=np.float64)[used]).sum())
    return table, data


def standard_size(db: WeightedDatabase) -> tuple[float, float]:
    """``(L(ST|D), L(D|ST))``: the database under the standard code table."""
    sup = db.item_support()
    st = code_lengths(sup)
    used = sup > 0
    # every singleton of ST is written in ST code (left column) and with its own code (right column)
    return float(2 * st[used].sum()), float((sup[used] * st[used]).sum())


@dataclass
class CodeTable:
    """A KRIMP code table: itemsets (tuples of item ids) in cover order with their usages."""

    itemsets: list[tuple[int, ...]]
    usage: np.ndarray
    support: np.ndarray
    table_bits: float
    data_bits: float
    standard_table_bits: float
    standard_data_bits: float
    candidates_tried: int = 0
    accepted: int = 0
    pruned: int = 0

    @property
    def total_bits(self) -> float:
        return self.table_bits + self.data_bits

    @property
    def standard_bits(self) -> float:
        return self.standard_table_bits + self.standard_data_bits

    @property
    def compression_ratio(self) -> float:
        """L% (compressed size as a percentage of the size under the standard code table)."""
        return 100.0 * self.total_bits / self.standard_bits if self.standard_bits else 100.0

    @property
    def non_singletons(self) -> int:
        return sum(1 for s, u in zip(self.itemsets, self.usage) if len(s) > 1 and u > 0)


def candidate_order(itemsets: Sequence[tuple[int, ...]], support: Sequence[int]) -> list[int]:
    """Indices in KRIMP's standard candidate order: support desc, length desc, lexicographic."""
    return sorted(range(len(itemsets)), key=lambda i: (-int(support[i]), -len(itemsets[i]), itemsets[i]))


def cover_order(itemsets: Sequence[tuple[int, ...]], support: Sequence[int]) -> list[int]:
    """Indices in KRIMP's standard cover order: length desc, support desc, lexicographic."""
    return sorted(range(len(itemsets)), key=lambda i: (-len(itemsets[i]), -int(support[i]), itemsets[i]))


class _Krimp:
    """State of one KRIMP run: the cover of every distinct row, kept in numpy arrays."""

    def __init__(self, db: WeightedDatabase, candidates: Sequence[tuple[int, ...]], supports: Sequence[int]) -> None:
        self.db = db
        R, m = db.rows.shape
        n_items = db.n_items
        item_sup = db.item_support()
        self.st_len = code_lengths(item_sup)
        self.st_len[~np.isfinite(self.st_len)] = 0.0
        cands = [tuple(c) for c in candidates]
        # element ids: items 0..I-1 are the singletons, then the (non-singleton) candidates
        keep = [i for i, c in enumerate(cands) if len(c) > 1]
        self.elements: list[tuple[int, ...]] = [(i,) for i in range(n_items)] + [cands[i] for i in keep]
        sup = np.concatenate([item_sup, np.asarray([int(supports[i]) for i in keep], dtype=np.int64)])
        self.support = sup
        n_el = len(self.elements)
        order = cover_order(self.elements, sup)
        self.rank = np.empty(n_el, dtype=np.int64)
        self.rank[np.asarray(order, dtype=np.int64)] = np.arange(n_el, dtype=np.int64)
        colbit = np.int64(1) << np.arange(m, dtype=np.int64)
        self.colbit = colbit
        self.mask = np.zeros(n_el, dtype=np.int64)
        self.firstcol = np.zeros(n_el, dtype=np.int64)
        self.stlen_el = np.zeros(n_el, dtype=np.float64)
        icol = db.item_column
        for e, items in enumerate(self.elements):
            cols = icol[list(items)]
            if len(set(cols.tolist())) != len(items):
                raise ConfigError(f"candidate {items} has two items of one column")
            self.mask[e] = int(np.bitwise_or.reduce(colbit[cols]))
            self.firstcol[e] = int(cols.min())
            self.stlen_el[e] = float(self.st_len[list(items)].sum())
        self.cand_order = [n_items + j for j in candidate_order(self.elements[n_items:], sup[n_items:])]
        # rows containing each item (bool), for containment tests
        self.item_rows = np.zeros((n_items, R), dtype=bool)
        for c in range(m):
            self.item_rows[db.rows[:, c], np.arange(R)] = True
        self.w = db.weights
        # the cover: element (and its rank) covering each column of each row
        self.cov_elem = db.rows.copy()
        self.cov_rank = self.rank[self.cov_elem]
        self.usage = np.zeros(n_el, dtype=np.float64)
        self.usage[:n_items] = item_sup
        # the code table, kept sorted by rank; column j of ``ctt`` = rows containing element j
        self.ct_rank = np.empty(0, dtype=np.int64)
        self.ct_elem = np.empty(0, dtype=np.int64)
        self.ctt = np.zeros((R, 0), dtype=bool)
        for i in range(n_items):
            self._insert(i, self.item_rows[i])
        self.size = self._size(self.ct_elem, self.usage[self.ct_elem])
        self.accepted = 0
        self.pruned = 0

    # -- code table bookkeeping ------------------------------------------------------------------
    def _insert(self, e: int, rows_bool: np.ndarray) -> None:
        pos = int(np.searchsorted(self.ct_rank, self.rank[e]))
        self.ct_rank = np.insert(self.ct_rank, pos, self.rank[e])
        self.ct_elem = np.insert(self.ct_elem, pos, e)
        self.ctt = np.insert(self.ctt, pos, rows_bool, axis=1)

    def _remove(self, e: int) -> None:
        pos = int(np.searchsorted(self.ct_rank, self.rank[e]))
        assert self.ct_elem[pos] == e
        self.ct_rank = np.delete(self.ct_rank, pos)
        self.ct_elem = np.delete(self.ct_elem, pos)
        self.ctt = np.delete(self.ctt, pos, axis=1)

    def _size(self, elems: np.ndarray, usage: np.ndarray) -> float:
        t, d = total_size(usage, self.stlen_el[elems])
        return t + d

    def contains(self, e: int) -> np.ndarray:
        items = self.elements[e]
        out = self.item_rows[items[0]].copy()
        for i in items[1:]:
            out &= self.item_rows[i]
        return out

    # -- covering ----------------------------------------------------------------------------------
    def recover(self, U: np.ndarray, r0: int, start: int, extra: tuple[int, np.ndarray] | None = None):
        """Re-cover rows ``U`` from cover rank ``r0`` on, with code-table elements ``elems``.

        Columns covered by elements ranked before ``r0`` stay as they are. ``extra`` is an element
        not (yet) in the code table, ranked exactly ``r0`` and contained in all of ``U``.
        Returns the new per-column element/rank for ``U`` and the usage deltas ``(ids, delta)``.
        """
        cov_e = self.cov_elem[U]
        cov_r = self.cov_rank[U]
        fixed = cov_r < r0
        covered = (fixed * self.colbit[None, :]).sum(axis=1)
        w = self.w[U]
        new_e = cov_e.copy()
        new_r = cov_r.copy()
        u = len(U)
        new_rows: list[np.ndarray] = []
        new_ids: list[np.ndarray] = []
        if extra is not None:
            x, _ = extra
            covered = covered | self.mask[x]
            xcols = (self.mask[x] & self.colbit) != 0
            new_e[:, xcols] = x
            new_r[:, xcols] = self.rank[x]
            new_rows.append(np.arange(u))
            new_ids.append(np.full(u, x, dtype=np.int64))
        elems = self.ct_elem[start:]
        if len(elems):
            A = self.ctt[U, start:]  # (u, E) containment
            useful = A.any(axis=0)
            if not useful.all():
                A = A[:, useful]
                elems = elems[useful]
            emask = self.mask[elems]
            A &= (emask[None, :] & covered[:, None]) == 0
            idx = np.nonzero(A.any(axis=1))[0]
            pos = np.arange(len(elems))
            while len(idx):
                sub = A[idx]
                first = sub.argmax(axis=1)
                chosen = elems[first]
                cm = self.mask[chosen]
                covered[idx] |= cm
                r, c = np.nonzero((cm[:, None] & self.colbit[None, :]) != 0)
                new_e[idx[r], c] = chosen[r]
                new_r[idx[r], c] = self.rank[chosen[r]]
                new_rows.append(idx)
                new_ids.append(chosen)
                sub &= pos[None, :] > first[:, None]
                sub &= (emask[None, :] & covered[idx, None]) == 0
                A[idx] = sub
                still = sub.any(axis=1)
                idx = idx[still]
        # usage deltas: old elements ranked >= r0 leave, the new ones arrive
        old_mask = (~fixed) & (np.arange(cov_e.shape[1])[None, :] == self.firstcol[cov_e])
        orow, ocol = np.nonzero(old_mask)
        old_ids = cov_e[orow, ocol]
        if new_rows:
            nrow = np.concatenate(new_rows)
            nid = np.concatenate(new_ids)
        else:
            nrow = np.empty(0, dtype=np.int64)
            nid = np.empty(0, dtype=np.int64)
        ids = np.concatenate([nid, old_ids])
        vals = np.concatenate([w[nrow], -w[orow]]).astype(np.float64)
        uniq, inv = np.unique(ids, return_inverse=True)
        delta = np.bincount(inv, weights=vals, minlength=len(uniq))
        nz = delta != 0
        return new_e, new_r, uniq[nz], delta[nz]

    def _trial_size(self, ids: np.ndarray, delta: np.ndarray, add: int | None = None, drop: int | None = None) -> float:
        elems = self.ct_elem
        usage = self.usage[elems].copy()
        if len(ids):
            pos = np.searchsorted(self.ct_rank, self.rank[ids])
            inside = (pos < len(elems)) & (elems[np.minimum(pos, len(elems) - 1)] == ids)
            usage[pos[inside]] += delta[inside]
            if add is not None:
                extra = delta[ids == add].sum()
        if add is not None:
            elems = np.append(elems, add)
            usage = np.append(usage, extra if len(ids) else 0.0)
        if drop is not None:
            usage[elems == drop] = 0.0
        return self._size(elems, usage)

    def _commit(self, U, new_e, new_r, ids, delta) -> None:
        self.cov_elem[U] = new_e
        self.cov_rank[U] = new_r
        self.usage[ids] += delta

    # -- the algorithm -----------------------------------------------------------------------------
    def try_candidate(self, x: int) -> bool:
        rows = self.contains(x)
        U = np.nonzero(rows)[0]
        if not len(U):
            return False
        xcols = np.nonzero((self.mask[x] & self.colbit) != 0)[0]
        rx = self.rank[x]
        usable = (self.cov_rank[np.ix_(U, xcols)] > rx).all(axis=1)
        U = U[usable]
        if not len(U):
            return False
        pos = int(np.searchsorted(self.ct_rank, rx))
        new_e, new_r, ids, delta = self.recover(U, rx, pos, extra=(x, rows))
        new_size = self._trial_size(ids, delta, add=x)
        if not new_size < self.size - 1e-9:
            return False
        self._commit(U, new_e, new_r, ids, delta)
        self._insert(x, rows)
        self.size = new_size
        fell = ids[(delta < 0) & (ids >= self.db.n_items)]
        self.accepted += 1
        self._prune(set(int(e) for e in fell))
        return True

    def _prune(self, prune_set: set[int]) -> None:
        n_items = self.db.n_items
        while prune_set:
            p = min(prune_set, key=lambda e: (self.usage[e], self.rank[e]))
            prune_set.discard(p)
            if self.usage[p] <= 0:
                self._remove(p)
                self.pruned += 1
                continue
            U = np.nonzero(self.cov_elem[:, self.firstcol[p]] == p)[0]
            rp = self.rank[p]
            pos = int(np.searchsorted(self.ct_rank, rp))
            new_e, new_r, ids, delta = self.recover(U, rp, pos + 1)
            new_size = self._trial_size(ids, delta)
            if new_size < self.size - 1e-9:
                self._commit(U, new_e, new_r, ids, delta)
                self._remove(p)
                self.size = new_size
                self.pruned += 1
                for e in ids[(delta < 0) & (ids >= n_items)]:
                    if int(e) != p:
                        prune_set.add(int(e))

    def run(self, progress: Callable[[int, int], None] | None = None) -> None:
        self.accepted = 0
        self.pruned = 0
        n = len(self.cand_order)
        for k, x in enumerate(self.cand_order):
            self.try_candidate(x)
            if progress is not None and k % 10000 == 0:
                progress(k, n)

    def code_table(self) -> CodeTable:
        st_t, st_d = standard_size(self.db)
        elems = self.ct_elem
        usage = self.usage[elems]
        t, d = total_size(usage, self.stlen_el[elems])
        return CodeTable(
            itemsets=[self.elements[e] for e in elems],
            usage=usage.astype(np.int64),
            support=self.support[elems],
            table_bits=t,
            data_bits=d,
            standard_table_bits=st_t,
            standard_data_bits=st_d,
            candidates_tried=len(self.cand_order),
            accepted=self.accepted,
            pruned=self.pruned,
        )


def krimp(
    db: WeightedDatabase,
    candidates: Sequence[tuple[int, ...]],
    supports: Sequence[int],
    progress: Callable[[int, int], None] | None = None,
) -> CodeTable:
    """Run KRIMP over ``candidates`` (itemsets of item ids with their supports in ``db``).

    >>> import numpy as np
    >>> db = WeightedDatabase(np.array([[0, 2], [1, 3]]), np.array([5, 1]), np.array([0, 0, 1, 1]))
    >>> ct = krimp(db, [(0, 2), (1, 3)], [5, 1])
    >>> [s for s in ct.itemsets if len(s) > 1]
    [(0, 2)]
    """
    state = _Krimp(db, candidates, supports)
    state.run(progress)
    return state.code_table()


# ---------------------------------------------------------------------------------------------
# brute force (tests): the same definitions, one row and one element at a time


def cover_row(row: Sequence[int], table: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
    """KRIMP's cover of one row by a code table given in cover order."""
    left = set(row)
    out = []
    for x in table:
        if set(x) <= left:
            out.append(x)
            left -= set(x)
        if not left:
            break
    return out


def encoded_size_bruteforce(
    rows: Sequence[Sequence[int]], table: Sequence[tuple[int, ...]], supports: dict
) -> tuple[float, float, dict]:
    """``(L(CT|D), L(D|CT), usage)`` computed from first principles, row by row."""
    item_sup: dict[int, int] = {}
    for r in rows:
        for i in r:
            item_sup[i] = item_sup.get(i, 0) + 1
    tot = sum(item_sup.values())
    st = {i: -math.log2(s / tot) for i, s in item_sup.items()}
    order = sorted(table, key=lambda x: (-len(x), -supports[x], x))
    usage = {x: 0 for x in order}
    for r in rows:
        for x in cover_row(r, order):
            usage[x] += 1
    U = sum(usage.values())
    data = sum(u * -math.log2(u / U) for u in usage.values() if u)
    ct = sum(-math.log2(u / U) + sum(st[i] for i in x) for x, u in usage.items() if u)
    return ct, data, usage
