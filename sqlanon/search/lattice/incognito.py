"""Incognito (LeFevre et al.; Aggarwal 20.3.2): attribute-subset closure, bottom-up.

For subsets of the QIs of growing size, the candidate nodes of a subset are those whose every
projection on a subset one smaller satisfies the requirement (Apriori-style: a generalization of a
subset that fails cannot be rescued by adding attributes). Candidates are checked bottom-up with
predictive tagging; a subset node is evaluated as the full node with the other attributes at their
root (the projection), rolled up from the smallest saved frequency set. The last round yields every
satisfying full-domain node; the best under the metric is then chosen best-first by bound.
"""

from __future__ import annotations

import itertools

import numpy as np

from sqlanon.search.lattice.lattice import Lattice, LatticeResult
from sqlanon.search.lattice import optimal
from sqlanon.search.lattice.optimal import TOL, priors


def _candidates(subset: tuple[int, ...], mins, maxes, satisfying: dict[tuple[int, ...], set[tuple[int, ...]]]) -> list[tuple[int, ...]]:
    """The level vectors of ``subset`` whose every projection one attribute smaller satisfies
    (Apriori), lowest height first."""
    size = len(subset)
    cands = []
    for levels in itertools.product(*[range(mins[a], maxes[a] + 1) for a in subset]):
        if size > 1 and not all(
            tuple(levels[j] for j in range(size) if j != drop) in satisfying[tuple(a for j, a in enumerate(subset) if j != drop)]
            for drop in range(size)
        ):
            continue
        cands.append(levels)
    cands.sort(key=sum)
    return cands


def _check_subset(lattice: Lattice, subset: tuple[int, ...], cands: list[tuple[int, ...]]) -> set[tuple[int, ...]]:
    """The satisfying candidates of ``subset``, bottom-up with predictive tagging: a candidate
    above a satisfying one satisfies; the others are checked as the full node with the other
    attributes at their root."""
    ok: set[tuple[int, ...]] = set()
    for levels in cands:
        if any(all(a <= b for a, b in zip(s, levels)) for s in ok if sum(s) < sum(levels)):
            ok.add(levels)
            continue
        full = list(lattice.maxes)
        for a, lv in zip(subset, levels):
            full[a] = lv
        if lattice.satisfies(lattice.idx(full)):
            ok.add(levels)
    return ok


def _choose_best(lattice: Lattice, full_ok: set[tuple[int, ...]]) -> None:
    """Value the satisfying full nodes best-first by bound until none can beat the best."""
    prior = priors(lattice)
    lattice.best_value, lattice.best_idx = float("inf"), None
    for idx in full_ok:
        i = lattice.idx(idx)
        if i in lattice.evaluated:
            value = lattice.evaluated[i][2]
            if value < lattice.best_value:
                lattice.best_value, lattice.best_idx = value, i
    ok_idx = np.array(sorted(lattice.idx(v) for v in full_ok), dtype=np.int64)
    for i in ok_idx[np.lexsort((ok_idx, lattice.height[ok_idx], prior[ok_idx]))]:
        i = int(i)
        if prior[i] >= lattice.best_value - TOL * max(1.0, abs(lattice.best_value)):
            break
        if lattice.pruned[i]:
            continue
        lattice.value(i)


def run(lattice: Lattice, **options) -> LatticeResult:
    if not lattice.requirement.monotone:
        # Incognito's subset pruning needs monotonicity, which entropy l-diversity and t-closeness
        # lose with a suppression budget: the bound-ordered optimal search is exact without it
        result = optimal.run(lattice, **options)
        result.trace.append({"fallback": "optimal (requirement not monotone with suppression)"})
        return result
    n = len(lattice.maxes)
    satisfying: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    trace = []
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            satisfying[subset] = _check_subset(lattice, subset, _candidates(subset, lattice.mins, lattice.maxes, satisfying))
        trace.append({"subset_size": size, "queries": len(lattice.evaluated)})
    full_ok = satisfying[tuple(range(n))]
    if not full_ok:
        lattice.require_top()
    # choose the best satisfying node, best-first by bound
    _choose_best(lattice, full_ok)
    result = lattice.result(trace)
    result.trace.append({"satisfying_nodes": len(full_ok)})
    return result
