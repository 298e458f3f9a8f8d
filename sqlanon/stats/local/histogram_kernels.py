"""Compiled roll-up of the in-process model route (:mod:`sqlanon.stats.histograms`; numba, ``nopython``).

A set of classes (their codes, QIs x rows, and sensitive histograms, rows x m integer counts) is
grouped at a node's levels in one pass per step: every QI's code mapped up (a per-QI map, all
maps in one flat array), packed into one integer key (mixed radix below 2**62), the keys grouped
and the histograms summed per class, exactly (integers). Classes come out in key order, as
:func:`sqlanon.stats.histograms._group`'s numpy forms number them, so every later sum over the
classes runs in the same order on either path.

Loaded on first use only (through :func:`sqlanon.stats.histograms._kernels`, once the kernels of
:mod:`sqlanon.stats.local` are loaded): numba stays out of the CLI's start.
"""

from __future__ import annotations

import numpy as np

from sqlanon.jit import njit  # numba's, with the settings the kernels need


@njit(cache=True, nogil=True)
def rolled(codes, hist, maps_flat, maps_off, mults, span, dense):
    """``(codes at the node's levels: QIs x classes, histograms: classes x m)`` of the rows of
    ``codes``/``hist`` grouped by their mapped codes (QI ``i``'s map is
    ``maps_flat[maps_off[i]:maps_off[i + 1]]``, its multiplier ``mults[i]``, the key's range
    ``span``): by a table over the key's range when ``dense``, a sort otherwise."""
    q, n = codes.shape
    m = hist.shape[1]
    key = np.zeros(n, dtype=np.int64)
    for i in range(q):
        off = maps_off[i]
        mult = mults[i]
        for r in range(n):
            key[r] += maps_flat[off + codes[i, r]] * mult
    row_class = np.empty(n, dtype=np.int64)
    if dense:
        slot = np.zeros(span, dtype=np.int64)
        for r in range(n):
            slot[key[r]] = 1
        classes = 0
        for v in range(span):
            if slot[v]:
                slot[v] = classes
                classes += 1
        for r in range(n):
            row_class[r] = slot[key[r]]
    else:
        order = np.argsort(key)
        classes = 0
        last = -1
        for j in range(n):
            r = order[j]
            if j == 0 or key[r] != last:
                classes += 1
                last = key[r]
            row_class[r] = classes - 1
    out_hist = np.zeros((classes, m), dtype=np.int64)
    out_codes = np.empty((q, classes), dtype=np.int64)
    for r in range(n):
        c = row_class[r]
        for j in range(m):
            out_hist[c, j] += hist[r, j]
    for i in range(q):
        off = maps_off[i]
        for r in range(n):
            out_codes[i, row_class[r]] = maps_flat[off + codes[i, r]]
    return out_codes, out_hist
