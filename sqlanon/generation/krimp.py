"""KRIMP: the code table that compresses a database best (Siebes, Vreeken, van Leeuwen 2006/2011).

The input is a :class:`WeightedDatabase`: the *frequency set* of the source (its distinct rows,
integer-coded, with their counts) as produced by one SQL ``GROUP BY`` in
:mod:`sqlanon.generation.itemsets`. Every categorical row has exactly one item per column, so an
itemset is a partial assignment ``column -> value`` and is encoded as a column bitmask plus values.

What is KRIMP here, exactly as the KRIMP papers define it:

* **Standard code table** ST: the singletons, code length ``-log2(supp(i) / sum_j supp(j))``.
* **Candidate order** (the order candidates are tried): support desc, length desc,
  lexicographic on item ids (items numbered in the source's item order, see ``itemsets``).
* **Cover order**: length desc, then the order of insertion (so candidate order: support desc,
  lexicographic), as the authors' ``CCCPCodeTable`` keeps it. Singletons cover what is left.
* **Cover**: for each row, walk the code table in cover order and take every element that is a
  subset of the still-uncovered part of the row.
* **Sizes**: ``L(D|CT) = sum_X usage(X) * -log2(usage(X)/sum usage)``;
  ``L(CT|D) = sum_{X: usage(X) > 0} (L(X|ST) + L(code_CT(X)))`` with ``L(X|ST)`` the sum of the
  standard code lengths of the items of X. ``L% = (L(CT|D)+L(D|CT)) / (L(ST|D)+L(D|ST))``.
* A candidate is kept iff the total size strictly drops. Then post-acceptance pruning exactly as
  the authors' ``Algo::PrunePostAccept``: the elements after it whose usage fell, in code-table
  order; one with usage 0 is dropped, another is dropped if the size does not grow (``<=``); after
  each drop the rest of the list is re-sorted by their one-pass-per-position bubble sort and the
  elements whose usage fell are added (starting one past the dropped position, as theirs does).
  These details decide ties: with them led7 gives the reference's 152 elements and L% 28.53.

**Runs compiled** (:func:`sqlanon.generation.kernels.krimp_run`, numba) over the frequency set:
per distinct row and element length a cached bitset of the uncovered items, a candidate tried
only on the rows holding its rarest item, and the old and new covers of a row advanced together
until they agree. No SQL per candidate (a round trip each, and mushroom has 109,304
candidates: docs/measurements.md) and no per-row Python loop. Memory is O(distinct rows x columns x items/64 +
candidates x items/64).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sqlanon.errors import ConfigError
from sqlanon.search import limits as lim

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
    candidates_total: int = 0
    time_limited: bool = False

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


@dataclass
class Candidates:
    """Itemsets in compact form: itemset ``k`` is ``items[offsets[k]:offsets[k+1]]`` (ascending
    item ids) with ``support[k]``. No Python object per itemset (there can be millions)."""

    items: np.ndarray  # int32, flat
    offsets: np.ndarray  # int64, n + 1
    support: np.ndarray  # int64, n

    def __len__(self) -> int:
        return int(len(self.support))

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @classmethod
    def from_tuples(cls, itemsets: Sequence[Sequence[int]], support: Sequence[int]) -> Candidates:
        sets = [tuple(sorted(int(i) for i in s)) for s in itemsets]
        lens = np.asarray([len(s) for s in sets], dtype=np.int64)
        offsets = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        flat = np.fromiter((i for s in sets for i in s), dtype=np.int32, count=int(lens.sum()))
        return cls(flat, offsets, np.asarray(support, dtype=np.int64).reshape(-1))

    def tuples(self) -> list[tuple[int, ...]]:
        flat = self.items.tolist()
        off = self.offsets.tolist()
        return [tuple(flat[off[k] : off[k + 1]]) for k in range(len(self))]

    def padded(self, fill: int = -1, small: bool = False) -> np.ndarray:
        """``(n, max length)`` matrix of the itemsets' items, ``fill`` past each one's end
        (``small``: int16 when the item ids fit)."""
        lens = self.lengths
        width = int(lens.max()) if len(lens) else 0
        fits = small and (int(self.items.max()) if len(self.items) else 0) < 32000
        out = np.full((len(self), width), fill, dtype=np.int16 if fits else np.int32)
        if len(self.items):
            from sqlanon.generation.kernels import fill_padded

            fill_padded(self.items, self.offsets, out)
        return out

    def select(self, idx: np.ndarray) -> Candidates:
        lens = self.lengths[idx]
        offsets = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        starts = np.repeat(self.offsets[:-1][idx], lens)
        pos = np.arange(int(lens.sum())) - np.repeat(offsets[:-1], lens)
        return Candidates(self.items[starts + pos], offsets, self.support[idx])


def candidate_permutation(c: Candidates) -> np.ndarray:
    """Indices of ``c`` in KRIMP's standard candidate order: support desc, length desc, then
    lexicographic on the (ascending) item ids."""
    pad = c.padded(small=True)
    keys = [pad[:, j] for j in range(pad.shape[1] - 1, -1, -1)] + [-c.lengths, -c.support]
    return np.lexsort(keys) if len(c) else np.empty(0, dtype=np.int64)


ProgressFn = Callable[[int, int, int, float], None]


@runtime_checkable
class MinedCandidates(Protocol):
    """Mined itemsets that carry their :class:`Candidates` (:class:`~sqlanon.generation.itemsets.Itemsets`)."""

    candidates: Candidates


class _Krimp:
    """One KRIMP run over compiled kernels (:mod:`sqlanon.generation.kernels`).

    Elements ``0..I-1`` are the singletons, ``I + k`` the ``k``-th non-singleton candidate in
    candidate order. The code table ``ct`` holds the non-singletons in cover order: length desc,
    and within a length in order of insertion, which is candidate order (support desc, then
    lexicographic) -- the authors' ``CCCPCodeTable`` inserts a new element at the end of its
    length's block. Singletons cover last, whatever is left of a row.
    """

    def __init__(self, db: WeightedDatabase, cands: Candidates) -> None:
        from sqlanon.generation import kernels

        self.kernels = kernels
        self.db = db
        R, m = db.rows.shape
        I = db.n_items
        item_sup = db.item_support()
        st_len = code_lengths(item_sup)
        st_len[~np.isfinite(st_len)] = 0.0
        order = candidate_permutation(cands)
        order = order[cands.lengths[order] > 1]  # singletons are the standard code table's
        items, offsets = kernels.gather(cands.items, cands.offsets, order)
        self.cands = Candidates(items, offsets, cands.support[order])
        N = len(self.cands)
        E = I + N
        W = max(1, (I + 63) // 64)
        self.n_items, self.m, self.W = I, m, W
        # rows as item bitsets (a row's items are distinct: summing their bits is or-ing them)
        rows = db.rows
        row_bits = np.zeros((R, W), dtype=np.uint64)
        bit_r = np.left_shift(np.uint64(1), (rows % 64).astype(np.uint64))
        for k in range(W):
            row_bits[:, k] = np.where(rows // 64 == k, bit_r, np.uint64(0)).sum(axis=1, dtype=np.uint64)
        el_bits, lens, el_rare, el_st, bad = kernels.element_arrays(
            self.cands.items, self.cands.offsets, I, item_sup, st_len, db.item_column, W)
        if bad >= 0:
            raise ConfigError(f"candidate {self.element(I + int(bad))} has two items of one column")
        # rows per item
        flat_items = rows.ravel()
        occ_order = np.argsort(flat_items, kind="stable")
        occ = (occ_order // m).astype(np.int32)
        occ_ptr = np.zeros(I + 1, dtype=np.int64)
        np.cumsum(np.bincount(flat_items, minlength=I), out=occ_ptr[1:])
        self.row_bits, self.el_bits, self.el_len = row_bits, el_bits, lens
        self.el_rare, self.el_st, self.occ, self.occ_ptr = el_rare, el_st, occ, occ_ptr
        self.wts = db.weights.astype(np.int64)
        self.usage = np.zeros(E, dtype=np.int64)
        self.usage[:I] = item_sup
        self.ct = np.zeros(N + 1, dtype=np.int32)
        self.meta = np.zeros(4, dtype=np.int64)  # table size, accepted, pruned, zapped
        self.cnt_len = np.zeros(m + 2, dtype=np.int64)
        self.cache = np.broadcast_to(row_bits, (m + 2, R, W)).copy()
        self.agg = np.zeros(6, dtype=np.float64)
        self.delta = np.zeros(E, dtype=np.int64)
        self.mark = np.zeros(E, dtype=np.uint8)
        self.touched = np.zeros(E + 1, dtype=np.int32)
        self.use_rows = np.zeros(R + 1, dtype=np.int32)
        self.plist = np.zeros(2 * N + 16, dtype=np.int32)
        self.support = np.concatenate([item_sup, self.cands.support])
        self.done = 0
        self.recompute()

    def recompute(self) -> None:
        self.kernels._recompute(self.ct, int(self.meta[0]), self.usage, self.el_st, self.n_items, self.agg)

    @property
    def size(self) -> float:
        return float(self.agg[5])

    @property
    def table_size(self) -> int:
        return int(self.meta[0])

    def element(self, e: int) -> tuple[int, ...]:
        if e < self.n_items:
            return (e,)
        k = e - self.n_items
        c = self.cands if hasattr(self, "cands") else None
        return tuple(int(i) for i in c.items[c.offsets[k] : c.offsets[k + 1]]) if c is not None else (e,)

    def step(self, k1: int) -> None:
        """Try the candidates ``done..k1-1``."""
        k1 = min(k1, len(self.cands))
        if k1 <= self.done:
            return
        self.kernels.krimp_run(
            self.done, k1, self.n_items, self.row_bits, self.wts, self.occ_ptr, self.occ, self.el_bits, self.el_len,
            self.el_rare, self.el_st, self.usage, self.ct, self.meta, self.cnt_len, self.cache, self.agg, self.delta,
            self.mark, self.touched, self.use_rows, self.plist, self.m, 1e-7,
        )
        self.done = k1

    def run(self, progress: ProgressFn | None = None, deadline: float | None = None) -> None:
        """All candidates, in slices of about a quarter second (progress and the deadline are
        looked at between slices)."""
        n = len(self.cands)
        chunk = 256
        while self.done < n:
            if deadline is not None and lim.now() >= deadline:
                break
            t = time.monotonic()
            self.step(self.done + chunk)
            spent = time.monotonic() - t
            chunk = int(min(max(chunk * (0.25 / spent if spent > 0 else 4.0), 16), 1 << 20)) if spent < 0.1 or spent > 0.5 else chunk
            if progress is not None:
                progress(self.done, n, self.non_singletons(), self.size)

    def non_singletons(self) -> int:
        ct = self.ct[: self.table_size]
        return int((self.usage[ct] > 0).sum())

    def code_table(self, time_limited: bool = False) -> CodeTable:
        st_t, st_d = standard_size(self.db)
        I = self.n_items
        ct = self.ct[: self.table_size].astype(np.int64)
        item_sup = self.support[:I]
        singles = np.lexsort((np.arange(I), -item_sup))  # support desc, then item id
        elems = np.concatenate([ct, singles])
        usage = self.usage[elems]
        t, d = total_size(usage, self.el_st[elems])
        return CodeTable(
            itemsets=[self.element(int(e)) for e in elems],
            usage=usage.astype(np.int64),
            support=self.support[elems],
            table_bits=t,
            data_bits=d,
            standard_table_bits=st_t,
            standard_data_bits=st_d,
            candidates_tried=int(self.done),
            accepted=int(self.meta[1]),
            pruned=int(self.meta[2] + self.meta[3]),
            candidates_total=len(self.cands),
            time_limited=time_limited,
        )


def krimp(
    db: WeightedDatabase,
    candidates: Candidates | MinedCandidates | Sequence[tuple[int, ...]],
    supports: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
    deadline: float | None = None,
) -> CodeTable:
    """Run KRIMP over ``candidates`` (itemsets of item ids with their supports in ``db``).

    ``progress(done, total, code_table_size, total_bits)`` is called between slices of
    candidates; ``deadline`` stops early with the code table
    built so far (``CodeTable.time_limited``); instants are :func:`sqlanon.search.limits.now`.

    >>> import numpy as np
    >>> db = WeightedDatabase(np.array([[0, 2], [1, 3]]), np.array([5, 1]), np.array([0, 0, 1, 1]))
    >>> ct = krimp(db, [(0, 2), (1, 3)], [5, 1])
    >>> [s for s in ct.itemsets if len(s) > 1]  # (1, 3) pays too: 23.8 -> 16.4 bits, its singletons unused
    [(0, 2), (1, 3)]
    """
    if isinstance(candidates, MinedCandidates):  # itemsets.Itemsets
        candidates = candidates.candidates
    if not isinstance(candidates, Candidates):
        candidates = Candidates.from_tuples(list(candidates), [] if supports is None else list(supports))
    if deadline is not None and lim.now() >= deadline and len(candidates):
        # past the deadline already: the standard code table, without sorting the candidates
        # into KRIMP's order first (seconds at 2M candidates)
        state = _Krimp(db, candidates.select(np.zeros(0, dtype=np.int64)))
        return replace(state.code_table(time_limited=True), candidates_total=int((candidates.lengths > 1).sum()))
    state = _Krimp(db, candidates)
    state.run(progress, deadline)
    return state.code_table(time_limited=state.done < len(state.cands))


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
