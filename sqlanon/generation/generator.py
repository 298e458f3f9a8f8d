"""The KRIMP categorical data generator (Vreeken, van Leeuwen, Siebes, ICDM-PADM 2007, Section 4).

``GenerateTransaction(CT, D)``: start with an empty row; while a domain (column) has no value,
pick one of the unfilled domains uniformly at random, pick one code-table element that sets a
value for it -- among the elements that set no already-filled domain -- with probability
proportional to ``usage + laplace``, and add its items; a filled domain is never re-assigned.
Every singleton is in the code table, so with ``laplace > 0`` a row can always be completed.

Rows are generated independently, so all rows are advanced together ("waves", one domain per row
per wave, at most one wave per column): the same distribution as the paper's row-at-a-time loop,
vectorized. A ``seed`` makes the output reproducible (numpy PCG64). The generated rows are
synthetic, not source rows; they are handed to the release writer as one Arrow table.

:func:`row_probabilities` gives the *exact* probability that ``GenerateTransaction`` returns a
given row (a recursion over the set of filled domains), and :func:`expected_anonymity` turns it
into the expected NAS of ``n`` generated rows (rows are independent, so an original transaction
with probability ``p`` occurs at least once with probability ``1 - (1 - p)^n``) and the expected
share of generated rows that copy an original row. Both are exact, without sampling noise, which
is how the Laplace experiments of ``bench/krimp_uci.py`` and the tests measure trends.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Set as AbstractSet

import numpy as np

from sqlanon.errors import ConfigError
from sqlanon.search import limits


@dataclass
class GeneratorModel:
    """A code table as the generator sees it: per element its column mask, items and weight."""

    itemsets: list[tuple[int, ...]]
    weights: np.ndarray  # usage + laplace
    item_column: np.ndarray
    n_columns: int

    @classmethod
    def from_code_table(cls, itemsets, usage, item_column, n_columns: int, laplace: float) -> GeneratorModel:
        if not (laplace > 0):
            raise ConfigError(f"--laplace must be > 0 (it keeps every value possible), got {laplace}")
        w = np.asarray(usage, dtype=np.float64) + float(laplace)
        return cls([tuple(s) for s in itemsets], w, np.asarray(item_column, dtype=np.int64), int(n_columns))

    def __post_init__(self) -> None:
        m = self.n_columns
        self.masks = np.zeros(len(self.itemsets), dtype=np.int64)
        # values[e, c] = item of element e in column c, or -1
        self.values = np.full((len(self.itemsets), m), -1, dtype=np.int64)
        for e, items in enumerate(self.itemsets):
            for i in items:
                c = int(self.item_column[i])
                self.values[e, c] = i
                self.masks[e] |= np.int64(1) << np.int64(c)
        # the elements' items, flat (CSR): what a chosen element writes, item by item
        self.lengths = np.asarray([len(items) for items in self.itemsets], dtype=np.int64)
        self.offsets = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(self.lengths)])
        self.items = np.asarray([i for items in self.itemsets for i in items], dtype=np.int64)
        self.by_column = [np.nonzero(self.values[:, c] >= 0)[0] for c in range(m)]
        for c in range(m):
            if not len(self.by_column[c]):
                raise ConfigError(f"the code table sets no value for column {c}")

    def probabilities(self, column: int, filled: AbstractSet[int] = frozenset()) -> dict[tuple[int, ...], float]:
        """P(element | domain ``column`` is picked, ``filled`` domains already set) -- the paper's CT_D."""
        fmask = 0
        for c in filled:
            fmask |= 1 << c
        elems = [e for e in self.by_column[column] if not (int(self.masks[e]) & fmask)]
        tot = float(sum(self.weights[e] for e in elems))
        return {self.itemsets[e]: float(self.weights[e]) / tot for e in elems}


GENERATE_BLOCK = 65_536  # rows generated at once (one random stream across blocks)
#: floats of eligible-element cumulative weights kept between waves and blocks (the sampler's
#: cache of ``(column, filled domains)`` -> eligible elements; cleared when it would grow past this)
CACHE_FLOATS = 8_000_000


def generate(model: GeneratorModel, n_rows: int, seed: int | None = None, progress=None, deadline: float | None = None, clock=None) -> np.ndarray:
    """``n_rows`` generated rows as item ids, shape ``(n_rows, n_columns)``: the blocks of
    :func:`generate_blocks` in one array (``int32``). With a ``deadline`` fewer rows may come back."""
    if n_rows < 0:
        raise ConfigError(f"--rows must be >= 0, got {n_rows}")
    out = np.full((n_rows, model.n_columns), -1, dtype=np.int32)
    done = 0
    for lo, block in generate_blocks(model, n_rows, seed, progress, deadline, clock):
        out[lo : lo + len(block)] = block
        done = lo + len(block)
    return out if done == n_rows else out[:done]


def generate_blocks(model: GeneratorModel, n_rows: int, seed: int | None = None, progress=None, deadline: float | None = None, clock=None):
    """Yield ``(first row, rows)`` blocks of ``GENERATE_BLOCK`` generated rows (item ids, one random
    stream across blocks), so neither the sampler's memory nor the caller's need grow with
    ``n_rows``: the caller may turn each block into output before the next is drawn. The blocks,
    concatenated, are :func:`generate`'s rows for the same seed. ``progress(done, total)`` is
    called after each block. With a ``deadline`` (a ``clock()`` reading,
    :func:`sqlanon.search.limits.now` by default) the blocks stop once it has passed, the first
    block always generated (fewer rows than asked)."""
    if n_rows < 0:
        raise ConfigError(f"--rows must be >= 0, got {n_rows}")
    if clock is None:
        clock = limits.now
    rng = np.random.Generator(np.random.PCG64(seed))
    sampler = _Sampler(model, rng)
    for lo in range(0, n_rows, GENERATE_BLOCK):
        if lo and deadline is not None and clock() >= deadline:
            return
        hi = min(n_rows, lo + GENERATE_BLOCK)
        block = _generate_block(model, hi - lo, rng, sampler).astype(np.int32)
        if progress is not None:
            progress(hi, n_rows)
        yield lo, block


#: rounds of rejection sampling before a row's element is drawn among the eligible ones directly
REJECTION_ROUNDS = 32


class _Sampler:
    """Draws of one code-table element per row, among the elements of the picked column that set
    no filled domain, with probability proportional to their weights.

    **Rejection first**: a draw from all of the column's elements (one ``searchsorted`` on their
    cumulative weights) is kept when it sets no filled domain, else drawn again, up to
    :data:`REJECTION_ROUNDS` times; kept draws are distributed as the eligible elements' weights
    say (a draw conditioned on being eligible). **The rest exactly**: rows still without an element
    are grouped by their filled domains, and each group draws by the inverse CDF of its eligible
    elements (computed once a group, cached). Both cost ``O(log elements)`` a row, where a row x
    element matrix cost ``O(rows x elements)`` time and memory (19,502 elements: 1M rows in
    minutes and GBs)."""

    def __init__(self, model: GeneratorModel, rng: np.random.Generator | None = None) -> None:
        self.model = model
        self.rng = rng
        self.cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self.floats = 0
        self.columns = [self.eligible(c, 0) for c in range(model.n_columns)]

    def eligible(self, column: int, filled: int) -> tuple[np.ndarray, np.ndarray]:
        key = (column, filled)
        got = self.cache.get(key)
        if got is None:
            elems = self.model.by_column[column]
            mine = elems[(self.model.masks[elems] & np.int64(filled)) == 0]
            got = (mine, np.cumsum(self.model.weights[mine]))
            if self.floats + len(mine) > CACHE_FLOATS:
                self.cache.clear()
                self.floats = 0
            self.cache[key] = got
            self.floats += len(mine)
        return got

    def _draw(self, elems: np.ndarray, cs: np.ndarray, draws: np.ndarray) -> np.ndarray:
        return elems[np.minimum(np.searchsorted(cs, draws * cs[-1], side="right"), len(elems) - 1)]

    def pick(self, column: int, filled: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """One element per row (``filled``: the rows' filled-domain masks, ``draws`` in [0, 1))."""
        elems, cs = self.columns[column]
        chosen = self._draw(elems, cs, draws)
        todo = np.nonzero(self.model.masks[chosen] & filled)[0]
        rng = self.rng
        for _ in range(REJECTION_ROUNDS):
            if rng is None or not len(todo):
                break
            again = self._draw(elems, cs, rng.random(len(todo)))
            chosen[todo] = again
            todo = todo[(self.model.masks[again] & filled[todo]) != 0]
        if len(todo):
            masks, group = np.unique(filled[todo], return_inverse=True)
            fresh = draws[todo] if rng is None else rng.random(len(todo))
            order = np.argsort(group, kind="stable")
            bounds = np.searchsorted(group[order], np.arange(len(masks) + 1))
            for g, mask in enumerate(masks):
                rows = order[bounds[g] : bounds[g + 1]]
                e, c = self.eligible(column, int(mask))
                chosen[todo[rows]] = self._draw(e, c, fresh[rows])
        return chosen


def _generate_block(model: GeneratorModel, n_rows: int, rng: np.random.Generator, sampler: _Sampler | None = None) -> np.ndarray:
    """``n_rows`` rows, advanced together one domain per row a wave. The domain a row picks among
    its unfilled ones, uniformly: each row walks a uniformly random permutation of the domains,
    past those already filled (the first unfilled domain of the rest of a uniform permutation is
    uniform among the unfilled ones, whatever filled them), so a wave costs O(rows), not
    O(rows x domains); a chosen element's items are written item by item (O(items))."""
    m = model.n_columns
    sampler = sampler or _Sampler(model, rng)
    out = np.full((n_rows, m), -1, dtype=np.int64)
    filled = np.zeros(n_rows, dtype=np.int64)
    full = (np.int64(1) << np.int64(m)) - 1
    perm = rng.permuted(np.tile(np.arange(m, dtype=np.int64), (n_rows, 1)), axis=1)
    pos = np.zeros(n_rows, dtype=np.int64)
    active = np.arange(n_rows)
    while len(active):
        dom = _next_unfilled(perm, pos, filled, active)
        draws = rng.random(len(active))
        order = np.argsort(dom.astype(np.int16), kind="stable")  # a radix sort on 16-bit keys (m <= 62)
        bounds = np.searchsorted(dom[order], np.arange(m + 1))
        for c in range(m):
            sel = order[bounds[c] : bounds[c + 1]]
            if not len(sel):
                continue
            rows = active[sel]
            chosen = sampler.pick(c, filled[rows], draws[sel])
            lens = model.lengths[chosen]
            first = np.cumsum(lens) - lens
            at = np.repeat(model.offsets[chosen] - first, lens) + np.arange(int(lens.sum()))
            items = model.items[at]
            out[np.repeat(rows, lens), model.item_column[items]] = items
            filled[rows] |= model.masks[chosen]
        active = active[filled[active] != full]
    return out


def _next_unfilled(perm: np.ndarray, pos: np.ndarray, filled: np.ndarray, active: np.ndarray) -> np.ndarray:
    """The next domain of each active row's permutation that is not filled (``pos`` moves past it)."""
    dom = perm[active, pos[active]]
    todo = np.nonzero((filled[active] >> dom) & 1)[0]
    while len(todo):
        rows = active[todo]
        pos[rows] += 1
        dom[todo] = perm[rows, pos[rows]]
        todo = todo[((filled[rows] >> dom[todo]) & 1) != 0]
    pos[active] += 1
    return dom


MAX_EXACT_COLUMNS = 20  # the exact recursion memoizes up to 2^columns filled-domain states


def row_probabilities(model: GeneratorModel, rows: np.ndarray) -> np.ndarray:
    """P(``GenerateTransaction`` returns exactly ``rows[r]``), for item-id rows of shape (R, columns).

    ``P(F)`` = probability of completing the row from filled domains ``F``: the mean over the
    unfilled domains ``c`` (picked uniformly) of the sum over the elements ``e`` of ``CT_c`` that
    set no filled domain (weight ``w_e / W(c, F)``, ``W`` over all such elements) *and* agree with
    the row, of ``P(F | columns(e))``. Vectorized over rows, memoized over ``F``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    m = model.n_columns
    if m > MAX_EXACT_COLUMNS:
        raise ConfigError(f"exact generator probabilities handle at most {MAX_EXACT_COLUMNS} columns, got {m}")
    R = len(rows)
    n_el = len(model.itemsets)
    # agree[r, e]: element e is a subset of row r
    agree = np.ones((R, n_el), dtype=bool)
    for c in range(m):
        v = model.values[:, c]
        has = v >= 0
        agree[:, has] &= rows[:, c][:, None] == v[has][None, :]
    masks = [int(x) for x in model.masks]
    full = (1 << m) - 1
    memo: dict[int, np.ndarray] = {full: np.ones(R)}

    def complete(F: int) -> np.ndarray:
        got = memo.get(F)
        if got is not None:
            return got
        free = [c for c in range(m) if not (F >> c) & 1]
        tot = np.zeros(R)
        for c in free:
            elems = [int(e) for e in model.by_column[c] if not (masks[int(e)] & F)]
            W = float(model.weights[elems].sum())
            for e in elems:
                a = agree[:, e]
                if a.any():
                    tot += a * (float(model.weights[e]) / W) * complete(F | masks[e])
        tot /= len(free)
        memo[F] = tot
        return tot

    return complete(0)


def expected_anonymity(model: GeneratorModel, rows: np.ndarray, counts: np.ndarray, n_rows: int) -> dict:
    """Expected AS/NAS (Definitions 1-2) of ``n_rows`` generated rows against the original whose
    distinct rows are ``rows`` with multiplicities ``counts``; also ``original_share``, the expected
    fraction of generated rows that are a copy of some original row."""
    p = row_probabilities(model, rows)
    counts = np.asarray(counts, dtype=np.int64)
    found = 1.0 - (1.0 - p) ** int(n_rows)
    as_p = as_o = 0.0
    for s in np.unique(counts):
        sel = counts == s
        as_p += float(found[sel].mean()) / float(s)
        as_o += 1.0 / float(s)
    return {"as": as_p, "as_max": as_o, "nas": as_p / as_o if as_o else 0.0, "original_share": float(p.sum())}
