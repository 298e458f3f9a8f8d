"""Rows certainly suppressed by k-anonymity, known from small marginals of the data.

The class of a row under a full-domain node is contained in the rows sharing its generalized values
on any subset of the QIs. If that subset's combination is held by fewer than k rows, so is the
class: the row is suppressed, whatever the other QIs. For one QI these are the rows of *rare
values* (from the per-column frequencies the statistics already hold); for pairs of QIs, the rows
of rare value pairs (one statement over the base frequency set, one ``UNION ALL`` part per pair,
returning only the pair counts). A node's suppressed rows are at least the largest such count over
the QIs and pairs at its levels (:func:`rare_rows`, used by ``Lattice.marginal_suppression``).
"""

from __future__ import annotations

import itertools

import numpy as np
from sqlglot import exp

from sqlanon.source import col, table_ref
from sqlanon.stats.build import lit, sum_, union_all

#: pair marginals are read when the base set has at most this many rows (the statement reads it
#: once per pair); above, only the single-QI bounds (free) are used
PAIR_SET_ROWS = 500_000


def pair_counts_query(stats, pairs) -> exp.Expression:
    """``(pair index, code a, code b, rows)`` for every QI pair in ``pairs`` (leaf codes)."""
    parts = []
    for p, (a, b) in enumerate(pairs):
        qa, qb = col(stats.qcol(a)), col(stats.qcol(b))
        part = exp.select(
            exp.alias_(lit(p), "p", quoted=True), exp.alias_(qa, "a", quoted=True), exp.alias_(qb, "b", quoted=True),
            exp.alias_(sum_(col("cnt")), "n", quoted=True), copy=False,
        )
        parts.append(part.from_(table_ref(stats.base.table), copy=False).group_by(qa.copy(), qb.copy(), copy=False))
    return union_all(parts)


def _rare(counts: np.ndarray, k: int) -> int:
    return int(round(float(counts[(counts > 0) & (counts < k)].sum())))


def single_rare(stats, i: int, k: int) -> np.ndarray:
    """Per level of QI ``i``: rows whose value at that level is held by fewer than ``k`` rows."""
    h = stats.hierarchies[i]
    return np.array([_rare(np.asarray(stats.leaf_level_freq(i, lv), dtype=np.int64), k) for lv in range(h.max_level + 1)], dtype=np.int64)


def pair_rare(stats, k: int) -> dict[tuple[int, int], np.ndarray]:
    """Per QI pair ``(a, b)``: a matrix over (level of a, level of b) of the rows whose value pair
    at those levels is held by fewer than ``k`` rows (one statement; cached per k)."""
    cache = stats.__dict__.setdefault("_pair_rare", {})
    if k in cache:
        return cache[k]
    n = len(stats.qis)
    pairs = list(itertools.combinations(range(n), 2))
    out: dict[tuple[int, int], np.ndarray] = {}
    if not pairs or stats.base is None or stats.base.rows > PAIR_SET_ROWS:
        cache[k] = out
        return out
    rows = stats.engine.fetch_all(pair_counts_query(stats, pairs))
    by_pair: dict[int, list[tuple[int, int, int]]] = {}
    for p, a, b, cnt in rows:
        by_pair.setdefault(int(p), []).append((int(a), int(b), int(cnt)))
    maps = [[np.asarray(h.leaf_to_level(lv), dtype=np.int64) for lv in range(h.max_level + 1)] for h in stats.hierarchies]
    for p, (a, b) in enumerate(pairs):
        got = np.array(by_pair.get(p, []), dtype=np.int64).reshape(-1, 3)
        codes_a, codes_b, cnts = got[:, 0], got[:, 1], got[:, 2]
        m = np.zeros((len(maps[a]), len(maps[b])), dtype=np.int64)
        for la, map_a in enumerate(maps[a]):
            ga = map_a[codes_a]
            for lb, map_b in enumerate(maps[b]):
                width = int(map_b.max()) + 1 if len(map_b) else 1
                grid = np.bincount(ga * width + map_b[codes_b], weights=cnts, minlength=1)
                m[la, lb] = _rare(grid, k)
        out[(a, b)] = m
    cache[k] = out
    return out


def rare_rows(stats, nodes: np.ndarray, k: int, pairs: bool = True) -> np.ndarray:
    """Per node (rows of ``nodes``: one level per QI), rows certainly suppressed by k-anonymity:
    from single QIs (free) and, with ``pairs``, from QI pairs (one statement)."""
    out = np.zeros(len(nodes), dtype=np.int64)
    if k <= 1 or not stats.column_freqs:
        return out
    for i in range(len(stats.qis)):
        out = np.maximum(out, single_rare(stats, i, k)[nodes[:, i]])
    for (a, b), m in (pair_rare(stats, k) if pairs else {}).items():
        out = np.maximum(out, m[nodes[:, a], nodes[:, b]])
    return out
