"""Samarati's binary search on height (Aggarwal 20.3.1).

By monotonicity, if some node of height h satisfies the requirement, some node of every greater
height does; binary search finds the lowest such height, and among the satisfying nodes of that
height the one with the best metric is returned (that is Samarati's k-minimal generalization).
"""

from __future__ import annotations

import numpy as np

from sqlanon.search.lattice.lattice import SATISFIES, UNKNOWN, Lattice, LatticeResult


def run(lattice: Lattice, **options) -> LatticeResult:
    lattice.require_top()
    heights = lattice.height
    by_height = {h: np.flatnonzero(heights == h) for h in range(int(heights.max()) + 1)}

    # within a height, try the most general-looking nodes first: they are likeliest to satisfy
    spread = np.array([sum((lv - lo) / (hi - lo) if hi > lo else 0 for lv, lo, hi in zip(lattice.node(i), lattice.mins, lattice.maxes)) for i in range(len(lattice))])

    def exists_at(h: int) -> bool:
        nodes = sorted((int(i) for i in by_height[h]), key=lambda i: -spread[i])
        if any(lattice.status[i] == SATISFIES for i in nodes):
            return True
        for idx in nodes:  # one at a time: each failing check tags its specializations
            if lattice.status[idx] == UNKNOWN and lattice.check(idx):
                return True
        return False

    lo, hi = 0, int(heights.max())
    trace = []
    if not lattice.requirement.monotone:
        # no monotonicity (entropy l-diversity / t-closeness with a budget): scan heights upwards
        while lo <= hi and not exists_at(lo):
            trace.append({"height": lo, "satisfiable": False})
            lo += 1
        if lo > hi:
            return lattice.result(trace)  # raises UnsatisfiableError
        hi = lo
    while lo < hi:
        mid = (lo + hi) // 2
        found = exists_at(mid)
        trace.append({"height": mid, "satisfiable": found})
        if found:
            hi = mid
        else:
            lo = mid + 1
    lattice.best_value, lattice.best_idx = float("inf"), None
    candidates = [int(i) for i in by_height[lo] if lattice.status[int(i)] != -1]
    for start in range(0, len(candidates), 16):
        lattice.check_many(candidates[start : start + 16])
    for idx in candidates:
        if lattice.satisfies(int(idx)):
            ns, _, value = lattice.evaluated[int(idx)]
            if value < lattice.best_value:
                lattice.best_value, lattice.best_idx = value, int(idx)
    result = lattice.result(trace)
    result.trace.append({"minimal_height": lo})
    return result
