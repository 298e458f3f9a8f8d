"""Rows certainly suppressed by k-anonymity, known from small marginals of the data.

The class of a row under a full-domain node is contained in the rows sharing its generalized values
on any subset of the QIs. If that subset's combination is held by fewer than k rows, so is the
class: the row is suppressed, whatever the other QIs. For one QI these are the rows of *rare
values* (from the per-column frequencies the statistics already hold); for pairs and triples of
QIs, the rows of rare value pairs and triples. Their counts come from one statement over the base
frequency set (one ``UNION ALL`` part per pair or triple, returning the leaf-code counts); every
combination of levels is then rolled up from those counts in numpy. A node's suppressed rows are
at least the largest such count over the subsets at its levels (:func:`rare_rows`, used by
``Lattice.marginal_suppression``).

Triples bite where pairs do not (Adult, k=5 at 5 %: 2,700 of the 12,960 nodes are over the budget
by their rare triples, 864 by their rare pairs), but there are many of them (84 on 9 QIs) and each
has many cells, so only the ``TRIPLES`` triples with the most rare rows expected under independence
(from the column frequencies) are read, and the pairs inside a triple read are not read at all
(a triple's cell lies inside its pair's: its bound is never below theirs). Any subset of triples gives a valid bound: the choice only
decides how tight it is.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import as_bigint, sum_

#: pair marginals are read when the base set has at most this many rows (the statement reads it
#: once per pair); above, only the single-QI bounds (free) are used
PAIR_SET_ROWS = 500_000
#: triples are read when the base set has at most this many rows (a triple's counts have up to
#: as many rows as the base set: at most TRIPLES x this many rows come back)
TRIPLE_SET_ROWS = 100_000
#: the subset of a row is read from which QI codes are NULL, as the bits of one integer
MAX_QIS = 62
#: at most this many triples are read (those with the most rare rows expected under independence)
TRIPLES = 16
#: the independence estimate is computed over at most this many cells per triple (above: the
#: triple is taken to be all rare, the largest estimate)
ESTIMATE_CELLS = 1_000_000
#: a subset's level combinations are rolled up in one ``bincount`` when their codes span at most
#: this many bins (else by sorting)
DENSE_BINS = 4_000_000
#: a base set of at most this many rows is read once (its QI codes and counts) and every subset's
#: leaf-code counts are summed in numpy (a ``bincount`` each); a larger one is grouped by the
#: engine (:func:`marginal_counts_query`): on Adult the read and bincounts are several times
#: cheaper than the GROUPING SETS statement (docs/measurements.md)
LOCAL_ROWS = 100_000



def marginal_counts_query(stats, subsets) -> exp.Expr:
    """The rows of every combination of leaf codes of each QI pair or triple in ``subsets``: one
    ``GROUP BY GROUPING SETS`` (one set per subset) over the base frequency set. A row holds the
    codes ``q{i}`` of its subset's QIs (NULL for the others: codes are never NULL, so the NULLs
    name the subset) and ``n``, a BIGINT (a sum's wider type would come back as decimals)."""
    used = sorted({i for subset in subsets for i in subset})
    sets = exp.GroupingSets(expressions=[exp.Tuple(expressions=[col(stats.qcol(i)) for i in subset]) for subset in subsets])
    q = exp.select(*[col(stats.qcol(i)) for i in used], exp.alias_(as_bigint(sum_(col("cnt"))), "n", quoted=True), copy=False)
    q = q.from_(table_ref(stats.base.table), copy=False)
    q.set("group", exp.Group(expressions=[sets]))
    return q


def pair_counts_query(stats, pairs) -> exp.Expr:
    """``(pair index, code a, code b, rows)`` for every QI pair in ``pairs`` (leaf codes)."""
    return marginal_counts_query(stats, pairs)


def _rare(counts: np.ndarray, k: int) -> int:
    return int(round(float(counts[(counts > 0) & (counts < k)].sum())))


def single_rare(stats, i: int, k: int) -> np.ndarray:
    """Per level of QI ``i``: rows whose value at that level is held by fewer than ``k`` rows."""
    h = stats.hierarchies[i]
    return np.array([_rare(np.asarray(stats.leaf_level_freq(i, lv), dtype=np.int64), k) for lv in range(h.max_level + 1)], dtype=np.int64)


def level_maps(stats) -> list[list[np.ndarray]]:
    """Per QI, per level: the code at that level of every leaf code."""
    memory = stats.memory.marginals
    if memory.level_maps is None:
        memory.level_maps = [[np.asarray(h.leaf_to_level(lv), dtype=np.int64) for lv in range(h.max_level + 1)] for h in stats.hierarchies]
    return memory.level_maps


def rare_by_levels(codes: list[np.ndarray], cnts: np.ndarray, maps: list[list[np.ndarray]], k: int) -> np.ndarray:
    """Rows whose combination is held by fewer than ``k`` rows, for every combination of levels of
    a subset of QIs: ``codes[j]`` are the leaf codes of the subset's QI ``j`` in each cell of its
    counts ``cnts``, ``maps[j][lv]`` the leaf -> level ``lv`` codes. Returns an array indexed by
    the levels (one axis per QI).

    All combinations at once: each QI's codes at all its levels are stacked into one code range
    (level ``lv``'s codes shifted by the widths of the levels below it), the cells are repeated
    over every combination, and one ``bincount`` gives the count of every generalized cell of
    every combination; the rare ones are then summed per combination."""
    shape = tuple(len(m) for m in maps)
    d = len(codes)
    stacked, level_of, spans = [], [], []
    for c, per_level in zip(codes, maps):
        widths = [int(m.max()) + 1 if len(m) else 1 for m in per_level]
        offsets = np.cumsum([0, *widths[:-1]])
        stacked.append(np.stack([m[c] + o for m, o in zip(per_level, offsets)]))
        level_of.append(np.repeat(np.arange(len(per_level)), widths))
        spans.append(int(sum(widths)))
    if not len(cnts):
        return np.zeros(shape, dtype=np.int64)
    key = np.zeros((1,) * d + (len(cnts),), dtype=np.int64)
    for j in range(d):
        view = [1] * d + [len(cnts)]
        view[j] = shape[j]
        key = key * spans[j] + stacked[j].reshape(view)
    weights = np.broadcast_to(cnts.astype(np.float64), key.shape).ravel()
    key = key.ravel()
    bins = math.prod(spans)
    if bins <= DENSE_BINS:
        grid = np.bincount(key, weights=weights, minlength=bins)
        cells = np.flatnonzero((grid > 0) & (grid < k))
        rows = grid[cells]
    else:
        cells, inverse = np.unique(key, return_inverse=True)
        grid = np.bincount(inverse, weights=weights)
        rare = (grid > 0) & (grid < k)
        cells, rows = cells[rare], grid[rare]
    parts = np.unravel_index(cells, spans)
    combo = np.ravel_multi_index(tuple(level_of[j][parts[j]] for j in range(d)), shape)
    out = np.bincount(combo, weights=rows, minlength=math.prod(shape))
    return np.rint(out).astype(np.int64).reshape(shape)


def expected_rare(stats, subset, k: int) -> float:
    """Rows in cells of ``subset``'s leaf combinations expected to hold fewer than ``k`` rows if
    its QIs were independent (column frequencies): how much a triple may add to the bound."""
    freqs = [np.asarray(stats.column_freqs[i], dtype=np.float64) for i in subset]
    freqs = [f[f > 0] for f in freqs]
    total = float(freqs[0].sum()) if len(freqs[0]) else 0.0
    if total <= 0:
        return 0.0
    if math.prod(len(f) for f in freqs) > ESTIMATE_CELLS:
        return total
    cells = freqs[0]
    for f in freqs[1:]:
        cells = np.multiply.outer(cells, f / total)
    return float(cells[(cells > 0) & (cells < k)].sum())


def chosen_triples(stats, k: int, limit: int | None = None) -> list[tuple[int, int, int]]:
    """The triples to read: the ``limit`` (default ``TRIPLES``) with the most rare rows expected
    (none expected: none)."""
    limit = TRIPLES if limit is None else limit
    n = len(stats.qis)
    if limit <= 0 or n < 3 or not stats.prepared or stats.base.rows > TRIPLE_SET_ROWS:
        return []
    scored = [(expected_rare(stats, t, k), t) for t in itertools.combinations(range(n), 3)]
    scored = [(s, t) for s, t in scored if s > 0]
    scored.sort(key=lambda st: -st[0])  # stable: ties keep the QIs' order
    return sorted(t for _, t in scored[:limit])


def subset_rare(stats, k: int, triples: bool = True) -> dict[tuple[int, ...], np.ndarray]:
    """Per QI pair and (with ``triples``) chosen triple: an array over their levels of the rows
    whose value combination at those levels is held by fewer than ``k`` rows (one statement;
    cached per k). A pair inside a chosen triple is left out: a triple's cell lies inside its pair's
    cell, so a row of a rare pair is in a rare triple at every level of the third QI (the triple's
    bound is never below the pair's)."""
    cache = stats.memory.marginals.subset_rare
    if (k, triples) in cache:
        return cache[(k, triples)]
    n = len(stats.qis)
    out: dict[tuple[int, ...], np.ndarray] = {}
    pairs = list(itertools.combinations(range(n), 2))
    if not pairs or not stats.prepared or stats.base.rows > PAIR_SET_ROWS or n > MAX_QIS:
        cache[(k, triples)] = out
        return out
    chosen = chosen_triples(stats, k) if triples else []
    covered = {pair for t in chosen for pair in itertools.combinations(t, 2)}
    subsets = [*chosen, *[p for p in pairs if p not in covered]]
    maps = level_maps(stats)
    # a subset's cells are numbered in int64 (its codes over every level in mixed radix): one
    # whose numbers could pass 2^62 is left out (any set of subsets gives a valid bound)
    subsets = [t for t in subsets if fits_int64([sum(len(m) for m in maps[i]) for i in t])]
    for subset, (codes, cnts) in subset_counts(stats, subsets).items():
        out[subset] = rare_by_levels(codes, cnts, [maps[i] for i in subset], k)
    cache[(k, triples)] = out
    return out


#: a subset's cell numbers (:func:`subset_counts`, :func:`rare_by_levels`) stay below this
CELL_LIMIT = 1 << 62


def fits_int64(spans) -> bool:
    """Whether cells numbered in mixed radix over ``spans`` stay below :data:`CELL_LIMIT`.

    >>> fits_int64([3_000, 3_000, 3_000]), fits_int64([2_000_000] * 3)
    (True, False)
    """
    return math.prod(int(s) for s in spans) < CELL_LIMIT


def subset_counts(stats, subsets) -> dict[tuple[int, ...], tuple[list[np.ndarray], np.ndarray]]:
    """Per subset of QIs, its non-empty cells of leaf codes: the codes (one array per QI) and the
    rows of each cell. No statement where the in-process path holds the base set's codes and
    counts (``stats.memory.local.set``: summed per subset here); else one: on a base set of at
    most :data:`LOCAL_ROWS` rows (the engine's ``marginal_fetch_rows``), its codes and counts,
    summed per subset here; on a larger one,
    the engine's grouping (:func:`marginal_counts_query`)."""
    used = sorted({i for subset in subsets for i in subset})
    held = stats.memory.local.set
    if held is not None and held[0] is stats.base:
        # the in-process path's fetched set (its leaf codes and counts): no statement at all
        codes_of = {i: held[1].codes[:, i].astype(np.int64) for i in used}
        counts = np.asarray(held[1].cnt, dtype=np.int64)
        return _summed(stats, subsets, used, codes_of, counts)
    fetch_rows = stats.engine.marginal_fetch_rows
    if stats.base.rows > (LOCAL_ROWS if fetch_rows is None else fetch_rows):
        return engine_counts(stats, subsets, used)
    query = exp.select(*[col(stats.qcol(i)) for i in used], exp.alias_(as_bigint(col("cnt")), "n", quoted=True), copy=False)
    table = stats.engine.fetch_arrow(query.from_(table_ref(stats.base.table), copy=False))
    codes_of = {i: arrow_ints(table.column(stats.qcol(i)))[0] for i in used}
    counts = arrow_ints(table.column("n"))[0]
    return _summed(stats, subsets, used, codes_of, counts)


def _summed(stats, subsets, used, codes_of: dict[int, np.ndarray], counts: np.ndarray) -> dict[tuple[int, ...], tuple[list[np.ndarray], np.ndarray]]:
    """:func:`subset_counts` from the base set's leaf codes and counts, summed per subset here."""
    widths = {i: len(level_maps(stats)[i][0]) for i in used}
    out = {}
    for subset in subsets:
        key = np.zeros(len(counts), dtype=np.int64)
        for i in subset:
            key = key * widths[i] + codes_of[i]
        bins = math.prod(widths[i] for i in subset)
        if bins <= DENSE_BINS:
            grid = np.bincount(key, weights=counts, minlength=bins)
            cells = np.flatnonzero(grid)
            rows = grid[cells]
        else:
            cells, inverse = np.unique(key, return_inverse=True)
            rows = np.bincount(inverse, weights=counts)
        parts = np.unravel_index(cells, [widths[i] for i in subset])
        out[subset] = ([np.asarray(p, dtype=np.int64) for p in parts], np.rint(rows).astype(np.int64))
    return out


def arrow_ints(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """An integer Arrow column as int64 values (0 where NULL) and its validity, read from the
    chunks' buffers: pyarrow's ``to_numpy`` imports pandas, slow in a fresh process (the CLI
    paid it before the first node of every lattice search; nothing else in a run imports it).

    >>> arrow_ints(pa.chunked_array([pa.array([3, None, 5], pa.int16()), pa.array([7], pa.int16())]))
    (array([3, 0, 5, 7]), array([ True, False,  True,  True]))
    """
    values, valid = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=bool)]
    for chunk in column.chunks:
        kind = "i" if pa.types.is_signed_integer(chunk.type) else "u"
        if kind == "u" and not pa.types.is_unsigned_integer(chunk.type):
            raise TypeError(f"not an integer column: {chunk.type}")
        mask, data = chunk.buffers()[:2]
        n, off = len(chunk), chunk.offset
        got = np.frombuffer(data, dtype=np.dtype(f"<{kind}{chunk.type.bit_width // 8}"), count=off + n)[off:].astype(np.int64)
        ok = np.ones(n, dtype=bool) if mask is None or not chunk.null_count else np.unpackbits(np.frombuffer(mask, dtype=np.uint8), bitorder="little")[off : off + n].astype(bool)
        values.append(np.where(ok, got, 0))
        valid.append(ok)
    return np.concatenate(values), np.concatenate(valid)


def arrow_into(column: pa.ChunkedArray, out: np.ndarray) -> None:
    """An integer Arrow column without NULLs copied into ``out`` (a numpy view as long as the
    column, e.g. a column of a 2-D array), chunk by chunk from its buffers, cast on the way: one
    copy where :func:`arrow_ints` makes three (docs/measurements.md).
    NULLs: :func:`arrow_ints`' zeros.

    >>> out = np.zeros(4, dtype=np.int32)
    >>> arrow_into(pa.chunked_array([pa.array([3, 4, 5], pa.int16()).slice(1), pa.array([7, 8], pa.int16())]), out); out
    array([4, 5, 7, 8], dtype=int32)
    >>> arrow_into(pa.chunked_array([pa.array([1, None, 3, 4], pa.int64())]), out); out
    array([1, 0, 3, 4], dtype=int32)
    """
    if column.null_count:
        out[:] = arrow_ints(column)[0]
        return
    at = 0
    for chunk in column.chunks:
        kind = "i" if pa.types.is_signed_integer(chunk.type) else "u"
        if kind == "u" and not pa.types.is_unsigned_integer(chunk.type):
            raise TypeError(f"not an integer column: {chunk.type}")
        data = chunk.buffers()[1]
        n, off = len(chunk), chunk.offset
        out[at:at + n] = np.frombuffer(data, dtype=np.dtype(f"<{kind}{chunk.type.bit_width // 8}"), count=off + n)[off:]
        at += n
    if at != len(out):
        raise ValueError(f"{at} values for {len(out)} places")


def engine_counts(stats, subsets, used) -> dict[tuple[int, ...], tuple[list[np.ndarray], np.ndarray]]:
    """:func:`subset_counts` from the engine's ``GROUPING SETS`` statement (large base sets)."""
    table = stats.engine.fetch_arrow(marginal_counts_query(stats, subsets))
    pattern = np.zeros(table.num_rows, dtype=np.int64)  # the QIs a row groups by, as bits
    codes_of = {}
    for i in used:
        codes_of[i], valid = arrow_ints(table.column(stats.qcol(i)))
        pattern |= valid.astype(np.int64) << i
    counts = arrow_ints(table.column("n"))[0]
    order = np.argsort(pattern, kind="stable")
    pattern = pattern[order]
    out = {}
    for subset in subsets:
        bits = sum(1 << i for i in subset)
        mine = order[np.searchsorted(pattern, bits, "left") : np.searchsorted(pattern, bits, "right")]
        out[subset] = ([codes_of[i][mine] for i in subset], counts[mine])
    return out


def rare_rows(stats, nodes: np.ndarray, k: int, pairs: bool = True, triples: bool = True) -> np.ndarray:
    """Per node (rows of ``nodes``: one level per QI), rows certainly suppressed by k-anonymity:
    from single QIs (free) and, with ``pairs``, from QI pairs and (with ``triples``) the chosen
    triples (one statement)."""
    out = np.zeros(len(nodes), dtype=np.int64)
    if k <= 1 or not stats.column_freqs:
        return out
    for i in range(len(stats.qis)):
        out = np.maximum(out, single_rare(stats, i, k)[nodes[:, i]])
    for subset, m in (subset_rare(stats, k, triples) if pairs else {}).items():
        out = np.maximum(out, m[tuple(nodes[:, i] for i in subset)])
    return out
