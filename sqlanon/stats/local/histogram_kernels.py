"""Compiled roll-up of the in-process model route (:mod:`sqlanon.stats.histograms`; numba, ``nopython``).

A set of classes (their codes, QIs x rows, and sensitive histograms, rows x m integer counts) is
grouped at a node's levels in one pass per step: every QI's code mapped up (a per-QI map, all
maps in one flat array), packed into one integer key (mixed radix below 2**62), the keys grouped
and the histograms summed per class, exactly (integers); each class's codes are those of one of
its rows, mapped (a gather per QI and class: undoing the mixed radix by a division per QI and
class cost more than the grouping itself when a node has many classes). Classes come out in key order, as
:func:`sqlanon.stats.histograms._group`'s numpy forms number them, so every later sum over the
classes runs in the same order on either path.

:func:`rolled_at` reads a node's maps, multipliers and key range from the tables of every QI's
maps (no per-node Python), :func:`smallest_under` picks the smallest kept set a node generalizes.
:func:`class_columns` computes the models' class columns (``nlogn_s``, ``emd_ordered``,
``top_s``/``tail_s``, ...) from the class histograms in one pass over each class's row.

Loaded on first use only (through :func:`sqlanon.stats.histograms._kernels`, once the kernels of
:mod:`sqlanon.stats.local` are loaded): numba stays out of the CLI's start.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.jit import njit  # numba's, with the settings the kernels need


@njit(cache=True, nogil=True)
def rolled(codes, hist, maps_flat, maps_off, mults, span, dense):
    """``(codes at the node's levels: QIs x classes, histograms: classes x m)`` of the rows of
    ``codes``/``hist`` grouped by their mapped codes (QI ``i``'s map is
    ``maps_flat[maps_off[i]:maps_off[i + 1]]``, its multiplier ``mults[i]``, the key's range
    ``span``): by a table over the key's range when ``dense``, a sort otherwise. Each class's
    codes are mapped from one of its rows (a gather per QI, no division of the key)."""
    q, n = codes.shape
    m = hist.shape[1]
    key = np.zeros(n, dtype=np.int64)
    for i in range(q):
        mult = mults[i]
        if (mults[i + 1] if i + 1 < q else span) == mult:
            continue  # one value at this level (the root): nothing to the key
        off = maps_off[i]
        for r in range(n):
            key[r] += maps_flat[off + codes[i, r]] * mult
    if dense:
        slot = np.zeros(span, dtype=np.int64)
        for r in range(n):
            slot[key[r]] = r + 1  # a row of the key's class, 1-based (0: no row)
        rep = np.empty(min(span, n), dtype=np.int64)
        classes = 0
        for v in range(span):
            if slot[v]:
                rep[classes] = slot[v] - 1
                slot[v] = classes
                classes += 1
        out_hist = np.zeros((classes, m), dtype=np.int64)
        for r in range(n):
            c = slot[key[r]]
            for j in range(m):
                out_hist[c, j] += hist[r, j]
    else:
        order = np.argsort(key)
        row_class = np.empty(n, dtype=np.int64)
        rep = np.empty(n, dtype=np.int64)
        classes = 0
        last = -1
        for j in range(n):
            r = order[j]
            if j == 0 or key[r] != last:
                rep[classes] = r
                classes += 1
                last = key[r]
            row_class[r] = classes - 1
        out_hist = np.zeros((classes, m), dtype=np.int64)
        for r in range(n):
            c = row_class[r]
            for j in range(m):
                out_hist[c, j] += hist[r, j]
    out_codes = np.empty((q, classes), dtype=np.int64)
    for i in range(q):
        off = maps_off[i]
        for c in range(classes):
            out_codes[i, c] = maps_flat[off + codes[i, rep[c]]]
    return out_codes, out_hist


@njit(cache=True, nogil=True)
def rolled_at(codes, hist, maps_flat, offsets, widths, src, levels, dense_factor):
    """:func:`rolled` of a set at levels ``src`` to ``levels``, its maps, multipliers and key
    range read here from the tables of every QI's maps (``offsets``: QI x low x level into
    ``maps_flat``, ``widths``: QI x level; the key's range must fit 62 bits at every level),
    grouped densely when the range is at most ``dense_factor`` times the rows."""
    q = len(levels)
    maps_off = np.empty(q, dtype=np.int64)
    mults = np.ones(q, dtype=np.int64)
    span = 1
    for i in range(q):
        maps_off[i] = offsets[i, src[i], levels[i]]
        mults[i] = span
        span *= max(widths[i, levels[i]], 1)
    return rolled(codes, hist, maps_flat, maps_off, mults, span, span <= dense_factor * max(hist.shape[0], 1))


@njit(cache=True, nogil=True)
def smallest_under(grid, rows, node, limit):
    """The slot of the fewest ``rows`` (below ``limit``; the first of equals) whose levels
    (``grid``'s row) are at or below ``node`` in every QI, -1 when none is."""
    best = -1
    fewest = limit
    for s in range(grid.shape[0]):
        if rows[s] >= fewest:
            continue
        under = True
        for i in range(grid.shape[1]):
            if grid[s, i] > node[i]:
                under = False
                break
        if under:
            best = s
            fewest = rows[s]
    return best


@njit(cache=True, nogil=True)
def class_columns(hist, q, entropy, ordered, recursive_l):
    """Per class (a row of ``hist``): its rows, distinct sensitive values, ``sum h ln h``
    (``entropy``), the ordered-distance EMD to the table's ``q`` (``ordered``), and the largest
    count and the sum of the counts from the ``recursive_l``-th largest on (``recursive_l`` > 0).
    Columns not asked are left zero."""
    n, m = hist.shape
    cnt = np.zeros(n, dtype=np.int64)
    distinct = np.zeros(n, dtype=np.int64)
    nlogn = np.zeros(n, dtype=np.float64)
    emd = np.zeros(n, dtype=np.float64)
    top = np.zeros(n, dtype=np.int64)
    tail = np.zeros(n, dtype=np.int64)
    lead = max(recursive_l - 1, 0)  # r_1 .. r_(l-1): the counts left out of the tail
    best = np.zeros(max(lead, 1), dtype=np.int64)  # the lead largest counts so far, largest first
    scale = 1.0 / max(m - 1, 1)
    for c in range(n):
        total = 0
        seen = 0
        for j in range(m):
            h = hist[c, j]
            total += h
            if h > 0:
                seen += 1
        cnt[c] = total
        distinct[c] = seen
        if entropy:
            s = 0.0
            for j in range(m):
                h = float(hist[c, j])
                s += h * math.log(max(h, 1.0))
            nlogn[c] = s
        if ordered:
            div = float(max(total, 1))
            cum = 0.0
            s = 0.0
            for j in range(m - 1):
                cum += hist[c, j] / div - q[j]
                s += abs(cum)
            emd[c] = s * scale
        if recursive_l > 0:
            for j in range(lead):
                best[j] = 0
            largest = 0
            for j in range(m):
                h = hist[c, j]
                if h > largest:
                    largest = h
                if lead and h > best[lead - 1]:
                    p = lead - 1
                    while p > 0 and best[p - 1] < h:
                        best[p] = best[p - 1]
                        p -= 1
                    best[p] = h
            kept = 0
            for j in range(lead):
                kept += best[j]
            top[c] = largest
            tail[c] = total - kept
    return cnt, distinct, nlogn, emd, top, tail
