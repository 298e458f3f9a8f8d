"""The sensitive-attribute models answered in-process: per-class sensitive histograms rolled up in numpy.

**Why.** Every model over a sensitive column (distinct, entropy and recursive (c,l)-diversity;
equal, ordered and hierarchical t-closeness) makes the batch statement group each node's rows
twice (by class and sensitive value, then by class) and, for the EMDs, join the classes to the
sensitive domain and hierarchy: several times a k-only node's work, one statement per round. The
compiled kernels of :mod:`sqlanon.stats.local` answer k alone. This route answers the models:

1. the base frequency set is fetched **once** as a histogram: per distinct QI code tuple its
   leaf codes and a row of counts per sensitive value of the table's domain (``classes x m``
   integers; :func:`histogram_set`), when that fits :data:`HIST_CELLS` cells;
2. a round of nodes is rolled up to its *meet* (per QI its lowest level) once, then each node
   from the meet: every QI's codes mapped to the node's level, packed into one integer key,
   grouped (a dense count when the key's range is small, a sort otherwise) and the histograms
   summed per class, in one compiled pass (:mod:`sqlanon.stats.local.histogram_kernels`, once
   the in-process kernels are loaded; numpy otherwise, with the same classes in the same order);
3. once per round, over all the round's nodes' classes side by side (:func:`_round_stats`: the
   numpy and Python work is per round, not per node), each model's class column (``distinct_s``,
   ``nlogn_s``, ``emd_equal``, ``emd_ordered``, ``emd_hier``, ``top_s``/``tail_s``) is computed
   from the class histograms by the formulas of their SQL (:mod:`sqlanon.stats.models`, the
   models' ``Aggregate`` forms; the counting ones in one compiled pass,
   :func:`sqlanon.stats.local.histogram_kernels.class_columns`), the metric's parts per class from
   the class's codes (:func:`sqlanon.stats.batch.class_terms`' values), and the requirement's
   ``ok`` and the finals, sqlglot expressions compiled once into closures, are evaluated over
   those arrays, each final reduced per node (:mod:`sqlanon.stats.vectors`, ``compiled_segments``).

Anything else (a need with no form here, a Recoding, an expression the evaluator does not know,
a sensitive value missing from the domain, ``local_rows = 0``) is refused by :func:`accepts` and
the nodes go to SQL, which stays the oracle (``tests/stats/test_histograms_route.py``: every
node's verdict and suppression equal the SQL route's and the Python twins').
"""

from __future__ import annotations

from collections.abc import Sequence
import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from sqlanon.expr.atoms import as_bigint, col, table_ref
from sqlanon.privacy.needs import NodeStats
import sqlanon.stats.batch as batch
import sqlanon.stats.local as local
from sqlanon.stats.marginals import level_maps
import sqlanon.stats.store as store
import sqlanon.stats.vectors as vectors

#: the fetched histogram set may hold at most this many cells (rows x (QIs + sensitive values))
HIST_CELLS = 32_000_000
#: the needs this route computes (any other asked need sends the nodes to SQL)
NEEDS = frozenset({"distinct_s", "entropy_s", "emd_equal", "emd_ordered", "emd_hierarchical", "recursive_l"})
#: ... and of them, the needs it takes by default: all of them. Where it beat the batch statement
#: in the same run (``bench/arx_reference.py --group models``, docs/measurements.md): since a
#: round's columns, ``ok`` and finals are computed once over all its nodes' classes
#: (:func:`_round_stats`) and the class columns in one compiled pass, every model, ordered
#: t-closeness and recursive (c,l)-diversity among them, searches several times faster
#: in-process than by SQL
PREFERRED = NEEDS
#: a node's key range is grouped by a dense count up to this many times the rows it groups
DENSE_FACTOR = 8


def needs_ok(stats) -> bool:
    """Whether every need asked is one this route computes, one of them :data:`PREFERRED`."""
    names = stats.needs.names()
    return bool(stats.has_s) and names <= NEEDS and bool(names & PREFERRED) and bool(stats.sensitive_domain)


def accepts(stats, nodes, ok: exp.Expr, metric, extra_finals=()) -> bool:
    """Whether :func:`evaluate` answers these nodes."""
    if not nodes or int(stats.local_rows or 0) <= 0 or not stats.qis or not stats.base.rows or not needs_ok(stats):
        return False
    if not all(isinstance(n, tuple) for n in nodes) or any(lv != 0 for lv in stats.base.levels):
        return False
    cells = stats.base.rows * (len(stats.qis) + len(stats.sensitive_domain))
    if cells > HIST_CELLS or stats.base.rows > int(stats.local_rows):
        return False
    need, room = 8 * cells * (1 + KEPT_ROWS), local.sets.budget(stats)  # int64 cells, the set and its kept roll-ups
    if need > room:
        return False
    got = _compiled(stats, ok, metric, extra_finals)
    if got is None or histogram_set(stats) is None:
        return False
    # the report's local_route (the compiled kernels' own route is never asked with a sensitive need)
    stats.memory.local.route = (stats.base, int(stats.local_rows), True, f"in-process (histograms): {stats.base.rows:,} tuples x {len(stats.sensitive_domain):,} sensitive values need at most {need / 2**20:,.1f} MiB of a {room / 2**20:,.1f} MiB budget")
    return True


def _compiled(stats, ok: exp.Expr, metric, extra_finals):
    """``(metric's row parts, ok, finals)``, the predicate and finals compiled
    (:func:`sqlanon.stats.vectors.compiled`), when every one is evaluable, else None (cached per
    predicate, metric and finals)."""
    cache = stats.memory.histograms.programs
    key = (ok.sql(), batch.metric_key(metric), tuple((name, e.sql()) for name, e in extra_finals))
    if key not in cache:
        got = metric.batch_terms(stats) if metric is not None else ([], [])
        cache[key] = None
        if got is not None:
            terms, finals = got
            finals = [*finals, *extra_finals]
            if vectors.evaluable(ok) and all(vectors.evaluable(e) for _, e in finals):
                try:
                    cache[key] = (terms, vectors.compiled(ok), [(name, vectors.compiled_segments(e)) for name, e in finals])
                except ValueError:  # a form the evaluator refuses (a CASE without ELSE, say): SQL
                    cache[key] = None
    return cache[key]


def histogram_set(stats) -> tuple[np.ndarray, np.ndarray] | None:
    """The base set as ``(leaf codes: QIs x rows, histogram: rows x m)``, fetched once (one
    statement) and kept; None when a sensitive value is outside the domain (NULL, say)."""
    memory = stats.memory.histograms
    if memory.set is None or memory.set[0] is not stats.base:
        memory.set = (stats.base, _fetched(stats))
        memory.drop_search()
    return memory.set[1]


def _fetched(stats) -> tuple[np.ndarray, np.ndarray] | None:
    names = stats.qnames
    q = exp.select(*map(col, names), col("s"), exp.alias_(as_bigint(col("cnt")), "n", quoted=True), copy=False)
    table = stats.engine.fetch_arrow(q.from_(table_ref(stats.base.table), copy=False))
    domain = pa.array([v for v, _ in stats.sensitive_domain], pa.string())
    s = pc.index_in(pc.cast(table.column("s"), pa.string()), value_set=domain)
    if s.null_count:
        return None
    j = s.to_numpy(zero_copy_only=False).astype(np.int64)
    codes = np.stack([table.column(n).to_numpy(zero_copy_only=False).astype(np.int64) for n in names])
    cnt = table.column("n").to_numpy(zero_copy_only=False).astype(np.int64)
    key, span = _key([codes[i] for i in range(len(names))], [len(h.leaf_to_level(0)) for h in stats.hierarchies])
    inv, first = _group(key, span, codes)
    hist = np.zeros((len(first), len(domain)), dtype=np.int64)
    np.add.at(hist, (inv, j), cnt)
    return np.ascontiguousarray(codes[:, first]), hist


def _key(columns: Sequence[np.ndarray], widths: Sequence[int]) -> tuple[np.ndarray | None, int]:
    """The columns of codes packed into one int64 key per row (mixed radix) and its range;
    ``(None, 0)`` past 62 bits."""
    key = np.zeros(len(columns[0]) if columns else 1, dtype=np.int64)
    span = 1
    for c, w in zip(columns, widths):
        w = max(int(w), 1)
        if span * w >= 1 << 62:
            return None, 0
        key += c * span if span > 1 else c
        span *= w
    return key, span


def _group(key: np.ndarray | None, span: int, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class (0..n-1, in key order) and one row of each class: by a dense count when
    the key's range is small, a sort otherwise (of the codes, QIs x rows, when no key fits)."""
    if key is None:
        _, first, inv = np.unique(codes.T, axis=0, return_index=True, return_inverse=True)
        return inv.reshape(-1), first
    if span <= DENSE_FACTOR * max(len(key), 1):
        seen = np.zeros(span, dtype=np.int64)
        seen[key] = 1
        slot = np.cumsum(seen) - 1
        inv = slot[key]
        first = np.empty(int(slot[-1]) + 1, dtype=np.int64)
        first[inv[::-1]] = np.arange(len(key) - 1, -1, -1)
        return inv, first
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return inv.reshape(-1), first


def _mults(widths: Sequence[int]) -> tuple[np.ndarray, int]:
    """The mixed radix multipliers of :func:`_key` and the key's range; range 0 past 62 bits."""
    mults = np.ones(len(widths), dtype=np.int64)
    span = 1
    for i, w in enumerate(widths):
        w = max(int(w), 1)
        if span * w >= 1 << 62:
            return mults, 0
        mults[i] = span
        span *= w
    return mults, span


#: whether the roll-up may run compiled (:mod:`sqlanon.stats.local.histogram_kernels`) once the
#: in-process kernels are loaded; False: numpy throughout (the oracle tests run both)
COMPILED = True


def _kernels(stats):
    """The compiled roll-up's module when :data:`COMPILED` and the kernels of
    :mod:`sqlanon.stats.local` load (numba present), else None (numpy)."""
    if not COMPILED or not local.ready(stats):
        return None
    import sqlanon.stats.local.histogram_kernels as kernels

    return kernels


def _summed(inv: np.ndarray, n: int, hist: np.ndarray) -> np.ndarray:
    """The rows of ``hist`` summed by class ``inv`` (``n`` classes); exact below 2**53 rows."""
    out = np.empty((n, hist.shape[1]), dtype=np.int64)
    for j in range(hist.shape[1]):
        out[:, j] = np.bincount(inv, weights=hist[:, j], minlength=n)
    return out


def _between(stats, i: int, low: int, level: int) -> tuple[np.ndarray, int]:
    """QI ``i``'s codes at level ``low`` -> at ``level`` (``low <= level``) and the codes' width there, kept."""
    cache = stats.memory.histograms.maps
    key = (i, low, level)
    if key not in cache:
        maps = level_maps(stats)[i]
        lo, hi = maps[low], maps[level]
        out = np.zeros(int(lo.max()) + 1 if len(lo) else 0, dtype=np.int64)
        out[lo] = hi
        cache[key] = (out, int(hi.max()) + 1 if len(hi) else 1)
    return cache[key]


def _map_table(stats) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Every QI's maps between its levels (:func:`_between`, ``low <= level``) in one flat array,
    their offsets (QI x low x level), the codes' widths (QI x level), and whether every node's
    packed key fits 62 bits (the widest level of every QI's, multiplied), kept."""
    memory = stats.memory.histograms
    if memory.table is None:
        heights = [h.max_level + 1 for h in stats.hierarchies]
        top = max(heights)
        offsets = np.zeros((len(heights), top, top), dtype=np.int64)
        widths = np.ones((len(heights), top), dtype=np.int64)
        parts, at = [], 0
        for i, height in enumerate(heights):
            for low in range(height):
                for level in range(low, height):
                    up, width = _between(stats, i, low, level)
                    offsets[i, low, level] = at
                    widths[i, level] = width
                    parts.append(up)
                    at += len(up)
        fits = math.prod(max(int(w), 1) for w in widths.max(axis=1).tolist()) < 1 << 62
        memory.table = (np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64), offsets, widths, fits)
    return memory.table


def _rolled(stats, src: tuple[int, ...], codes: np.ndarray, hist: np.ndarray, levels: tuple[int, ...], kern=None) -> tuple[np.ndarray, np.ndarray]:
    """A set at levels ``src`` (``codes``: QIs x rows, ``hist``) grouped at ``levels``: each
    class's codes there (QIs x classes) and its summed histogram (compiled by ``kern``, the
    roll-up's module, else numpy)."""
    if kern is not None and levels:
        flat, offsets, widths, fits = _map_table(stats)
        if fits:  # the maps, multipliers and key range read in the kernel: no per-node numpy
            return kern.rolled_at(codes, hist, flat, offsets, widths, np.asarray(src, dtype=np.int64), np.asarray(levels, dtype=np.int64), DENSE_FACTOR)
        q = np.arange(len(levels))
        mults, span = _mults(widths[q, levels].tolist())
        if span:
            return kern.rolled(codes, hist, flat, offsets[q, src, levels], mults, span, span <= DENSE_FACTOR * max(len(hist), 1))
    ups = [_between(stats, i, src[i], lv) for i, lv in enumerate(levels)]
    moved = [u[codes[i]] if src[i] != lv else codes[i] for i, ((u, _), lv) in enumerate(zip(ups, levels))]
    key, span = _key(moved, [w for _, w in ups])
    inv, first = _group(key, span, np.stack(moved) if key is None else codes)
    return np.stack([m[first] for m in moved]) if moved else codes[:, first], _summed(inv, len(first), hist)


#: classes of evaluated nodes (and meets) kept to roll later nodes up from, at most this many sets ...
KEPT_SETS = 256
#: ... holding at most this many times the base set's rows
KEPT_ROWS = 4


_EMPTY = np.iinfo(np.int64).max


def _index(stats):
    """The kept sets' index ``(slot of each levels, levels at each slot, levels as a matrix,
    rows: empty slots the largest int, the empty slots, the lowest last)``, kept in step with
    the kept sets (built when None)."""
    memory = stats.memory.histograms
    if memory.index is None:
        size = KEPT_SETS + 1
        grid = np.zeros((size, len(stats.qis)), dtype=np.int64)
        rows = np.full(size, _EMPTY, dtype=np.int64)
        memory.index = ({}, [None] * size, grid, rows, list(range(size - 1, -1, -1)))
        for levels, (_, hist) in memory.kept.items():
            _indexed(memory.index, levels, len(hist))
    return memory.index


def _indexed(index, levels: tuple[int, ...], rows: int) -> None:
    slot_of, at, grid, sizes, free = index
    slot = slot_of.get(levels)
    if slot is None:
        slot = slot_of[levels] = free.pop()
    at[slot] = levels
    grid[slot] = levels
    sizes[slot] = rows


def _source(stats, node: tuple[int, ...], kern=None) -> tuple[tuple[int, ...], np.ndarray, np.ndarray]:
    """The smallest kept set ``node`` generalizes (its levels, codes and histograms), else the
    base set (picked by the compiled ``kern``'s loop when given). Which one does not change the
    classes (numbered in key order), only the work."""
    memory = stats.memory.histograms
    got = histogram_set(stats)
    assert got is not None
    if memory.kept and kern is not None:
        _, at, grid, rows, _ = _index(stats)
        best = kern.smallest_under(grid, rows, np.asarray(node, dtype=np.int64), len(got[1]))
        if best >= 0:
            return (at[best], *memory.kept[at[best]])
    elif memory.kept:
        _, at, grid, rows, _ = _index(stats)
        under = (grid <= np.asarray(node, dtype=np.int64)).all(axis=1)
        best = int(np.argmin(np.where(under, rows, _EMPTY)))
        if under[best] and rows[best] < len(got[1]):
            return (at[best], *memory.kept[at[best]])
    return (tuple(0 for _ in node), *got)


def _keep(stats, levels: tuple[int, ...], codes: np.ndarray, hist: np.ndarray) -> None:
    memory = stats.memory.histograms
    kept = memory.kept
    index = _index(stats)
    kept[levels] = (codes, hist)
    _indexed(index, levels, len(hist))
    memory.kept_rows += len(hist)
    cap = KEPT_ROWS * max(stats.base.rows, 1)
    while len(kept) > KEPT_SETS or (len(kept) > 1 and memory.kept_rows > cap):
        gone = next(iter(kept))
        memory.kept_rows -= len(kept.pop(gone)[1])
        slot = index[0].pop(gone)
        index[1][slot], index[3][slot] = None, _EMPTY
        index[4].append(slot)


def classes_of(stats, node: tuple[int, ...], kern=None) -> tuple[np.ndarray, np.ndarray]:
    """``node``'s classes: their codes (QIs x classes) and sensitive histograms, rolled up from
    the smallest kept set it generalizes and kept in turn (by the compiled roll-up ``kern``,
    :func:`_kernels`' module, else numpy)."""
    kept = stats.memory.histograms.kept
    if node in kept:
        return kept[node]
    src, codes, hist = _source(stats, node, kern)
    got = _rolled(stats, src, codes, hist, node, kern)
    _keep(stats, node, *got)
    return got


def evaluate(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list[NodeStats]:
    """Every node's :class:`NodeStats` (the finals in ``extra`` by name). Call only when :func:`accepts`.

    Each node's classes are rolled up on their own; their columns, ``ok`` and the finals are
    computed once for the whole round, over every node's classes side by side (the Python and
    numpy work per round, not per node)."""
    compiled = _compiled(stats, ok, metric, extra_finals)
    assert compiled is not None
    terms, ok_fn, finals = compiled
    kern = _kernels(stats)
    nodes = [tuple(int(v) for v in n) for n in nodes]
    if len(nodes) > 1:
        # the round's meet first (its classes hold every node's), when no kept set is as small
        classes_of(stats, tuple(int(v) for v in np.asarray(nodes, dtype=np.int64).min(axis=0)), kern)
    out = _round_stats(stats, nodes, [classes_of(stats, node, kern) for node in nodes], ok_fn, terms, finals, kern)
    stats.nodes_evaluated += len(nodes)
    stats.nodes_local = stats.nodes_local + len(nodes)
    store.remember(stats, [(n, stats.base, ns.classes) for n, ns in zip(nodes, out)])
    return out


def _round_stats(stats, nodes: list[tuple[int, ...]], rolled: list[tuple[np.ndarray, np.ndarray]], ok: vectors.Fn, terms, finals, kern) -> list[NodeStats]:
    """The nodes' NodeStats from their classes (``rolled``: each node's generalized codes and
    histograms), every column computed over all the nodes' classes at once (node ``j``'s classes
    the rows ``starts[j]:starts[j] + sizes[j]``, none empty)."""
    sizes = np.fromiter((len(h) for _, h in rolled), dtype=np.int64, count=len(rolled))
    starts = np.zeros(len(sizes), dtype=np.int64)
    np.cumsum(sizes[:-1], out=starts[1:])
    hist = np.concatenate([h for _, h in rolled]) if len(rolled) > 1 else rolled[0][1]
    cols = class_columns(stats, hist, kern)
    cnt = cols["cnt"]
    if terms:
        codes = np.concatenate([c for c, _ in rolled], axis=1) if len(rolled) > 1 else rolled[0][0]
        levels = np.repeat(np.asarray(nodes, dtype=np.int64), sizes, axis=0)  # each class's node's levels
        for name, per_qi in terms:
            part = np.zeros(len(cnt), dtype=np.float64)
            for i, per_level in per_qi:
                values, offsets = _part_table(stats, name, i, per_level)
                part += values[offsets[levels[:, i]] + codes[i]]
            cols[name] = cnt * part
    flag = np.asarray(ok(cols), dtype=bool) & np.ones(len(cnt), dtype=bool)
    cols["ok"] = flag
    extra = [(name, fn(cols, starts, sizes)) for name, fn in finals]
    rows = np.add.reduceat(cnt, starts).tolist()
    low = np.minimum.reduceat(cnt, starts).tolist()
    high = np.maximum.reduceat(cnt, starts).tolist()
    supp = np.add.reduceat(np.where(flag, 0, cnt), starts).tolist()
    bad = np.add.reduceat((~flag).astype(np.int64), starts).tolist()
    return [NodeStats(node, n, rows[j], low[j], high[j], supp[j], bad[j], {name: v[j] for name, v in extra})
            for j, (node, n) in enumerate(zip(nodes, sizes.tolist()))]


def class_columns(stats, hist: np.ndarray, kern=None) -> dict[str, np.ndarray]:
    """The class table's columns from the class histograms (``cnt`` and what the needs ask):
    the counting ones (``cnt``, ``distinct_s``, ``nlogn_s``, ``emd_ordered``, ``top_s``/``tail_s``)
    in one compiled pass over the classes when ``kern`` (the roll-up's module), else numpy; the
    equal and hierarchical EMDs in numpy (whole-array products)."""
    needs = stats.needs
    total = float(stats.rows)
    q = np.asarray([n / total for _, n in stats.sensitive_domain], dtype=np.float64)
    cols = _compiled_columns(needs, hist, q, kern) if kern is not None else _numpy_columns(needs, hist, q)
    if needs.emd_equal or needs.emd_hierarchical:
        diff = hist / np.maximum(cols["cnt"], 1)[:, None].astype(np.float64) - q
        if needs.emd_equal:
            cols["emd_equal"] = 0.5 * np.abs(diff).sum(axis=1)
        if needs.emd_hierarchical:
            cols["emd_hier"] = _emd_hier(stats, diff)
    return cols


def _compiled_columns(needs, hist: np.ndarray, q: np.ndarray, kern) -> dict[str, np.ndarray]:
    cnt, distinct, nlogn, emd, top, tail = kern.class_columns(hist, q, bool(needs.entropy_s), bool(needs.emd_ordered), int(needs.recursive_l or 0))
    cols = {"cnt": cnt}
    for on, name, v in ((needs.distinct_s, "distinct_s", distinct), (needs.entropy_s, "nlogn_s", nlogn), (needs.emd_ordered, "emd_ordered", emd),
                        (needs.recursive_l, "top_s", top), (needs.recursive_l, "tail_s", tail)):
        if on:
            cols[name] = v
    return cols


def _numpy_columns(needs, hist: np.ndarray, q: np.ndarray) -> dict[str, np.ndarray]:
    cnt = hist.sum(axis=1)
    cols = {"cnt": cnt}
    if needs.distinct_s:
        cols["distinct_s"] = (hist > 0).sum(axis=1)
    if needs.entropy_s:
        h = hist.astype(np.float64)
        cols["nlogn_s"] = (h * np.log(np.maximum(h, 1.0))).sum(axis=1)
    if needs.emd_ordered:
        m = len(q)
        cum = np.cumsum(hist / np.maximum(cnt, 1)[:, None].astype(np.float64) - q, axis=1)[:, : max(m - 1, 0)]
        cols["emd_ordered"] = np.abs(cum).sum(axis=1) / float(max(m - 1, 1))
    if needs.recursive_l:
        ranked = -np.sort(-hist, axis=1)
        cols["top_s"] = ranked[:, 0]
        cols["tail_s"] = ranked[:, int(needs.recursive_l) - 1 :].sum(axis=1)
    return cols


def _emd_hier(stats, diff: np.ndarray) -> np.ndarray:
    """Hierarchical EMD per class (its ``p - q`` over the domain): per level, the extras of each
    (parent, child) pair summed over the child's leaves, each parent's cost ``w * min(pos, neg)``."""
    total = np.zeros(diff.shape[0], dtype=np.float64)
    for w, pair_of, parent_of in _hier_levels(stats):
        extra = diff @ pair_of
        total += w * np.minimum(np.maximum(extra, 0.0) @ parent_of, np.maximum(-extra, 0.0) @ parent_of).sum(axis=1)
    return total


def _hier_levels(stats) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Per level of the sensitive hierarchy: its weight ``(lvl + 1) / H``, the domain's values x
    (parent, child) pairs and the pairs x parents, as 0/1 matrices (kept)."""
    memory = stats.memory.histograms
    if memory.hier is None:
        h = stats.sensitive_hierarchy
        index = {leaf: i for i, leaf in enumerate(h.leaves)}
        leaves = np.asarray([index[v] for v, _ in stats.sensitive_domain], dtype=np.int64)
        out = []
        for lv in range(h.max_level):
            child = np.asarray(h.leaf_to_level(lv), dtype=np.int64)[leaves]
            parent = np.asarray(h.leaf_to_level(lv + 1), dtype=np.int64)[leaves]
            pairs, pair_idx = np.unique(np.stack([parent, child], axis=1), axis=0, return_inverse=True)
            pair_of = np.zeros((len(leaves), len(pairs)))
            pair_of[np.arange(len(leaves)), pair_idx.reshape(-1)] = 1.0
            parents, parent_idx = np.unique(pairs[:, 0], return_inverse=True)
            parent_of = np.zeros((len(pairs), len(parents)))
            parent_of[np.arange(len(pairs)), parent_idx.reshape(-1)] = 1.0
            out.append(((lv + 1) / h.max_level, pair_of, parent_of))
        memory.hier = out
    return memory.hier


def _part_table(stats, name: str, i: int, per_level) -> tuple[np.ndarray, np.ndarray]:
    """A metric part's values over QI ``i``'s codes at every level, one after another, and where
    each level's start (kept per search): the value of code ``c`` at level ``lv`` is
    ``values[offsets[lv] + c]``."""
    cache = stats.memory.histograms.parts
    key = (name, i)
    if key not in cache:
        per = [np.asarray([float(v) for v in per_level(lv)], dtype=np.float64) for lv in range(stats.hierarchies[i].max_level + 1)]
        offsets = np.zeros(len(per), dtype=np.int64)
        np.cumsum([len(v) for v in per[:-1]], out=offsets[1:])
        cache[key] = (np.concatenate(per), offsets)
    return cache[key]
