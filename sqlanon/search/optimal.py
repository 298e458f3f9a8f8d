"""Optimal full-domain search: the best node under the metric, provably.

Best-first over the lattice by the metric's data-free lower bound (``prior_bound``): once the
cheapest unvisited bound is no better than the incumbent, nothing can beat it. Whether a node
satisfies the privacy model is found by Flash-style probes (binary search on a path of
generalizations) with predictive tagging, so most nodes are decided without a query; monotone
query bounds (discernibility, AECS, CM) prune whole cones above a node. Suppressed rows are
anti-monotone, so each evaluated node also bounds the suppression of all its specializations, and
metrics that charge suppressed rows (precision, LM) turn that into a sharper bound.
"""

from __future__ import annotations


import numpy as np

from sqlanon.search.lattice import FAILS, SATISFIES, UNKNOWN, Lattice

TOL = 1e-12


def priors(lattice: Lattice) -> np.ndarray:
    stats, metric = lattice.stats, lattice.metric
    return np.array([metric.prior_bound(stats, lattice.node(i)) for i in range(len(lattice))], dtype=np.float64)


BATCH = 16


def _worth(lattice: Lattice, prior: np.ndarray, idx: int) -> bool:
    """Can this node still beat the incumbent (by its prior and its suppression bound)?"""
    best = lattice.best_value - TOL * max(1.0, abs(lattice.best_value))
    if prior[idx] >= best or lattice.pruned[idx] or lattice.status[idx] == FAILS:
        return False
    if lattice.s_lower[idx] and idx not in lattice.evaluated:
        bound = lattice.metric.suppressed_bound(lattice.stats, lattice.node(idx), prior[idx], int(lattice.s_lower[idx]))
        if bound >= best:
            return False
    return True


def run(lattice: Lattice, batch: int = BATCH, **options) -> object:
    lattice.require_top()
    prior = priors(lattice)
    order = np.lexsort((np.arange(len(lattice)), lattice.height, prior))
    for pos, idx in enumerate(order):
        idx = int(idx)
        if prior[idx] >= lattice.best_value - TOL * max(1.0, abs(lattice.best_value)):
            break
        if not _worth(lattice, prior, idx):
            continue
        if lattice.status[idx] == SATISFIES and idx not in lattice.evaluated and batch > 1:
            # its value is needed: fetch it with the next few such nodes in one statement
            group = [idx]
            for nxt in order[pos + 1 :]:
                nxt = int(nxt)
                if prior[nxt] >= lattice.best_value:
                    break
                if lattice.status[nxt] == SATISFIES and nxt not in lattice.evaluated and _worth(lattice, prior, nxt):
                    group.append(nxt)
                    if len(group) == batch:
                        break
            lattice.check_many(group)
            continue
        if lattice.status[idx] == UNKNOWN:
            if lattice.requirement.monotone:
                lattice.probe(idx, prior)
            else:  # a probe's checks say nothing about other nodes here
                lattice.check(idx)
        if lattice.status[idx] == SATISFIES and not lattice.pruned[idx]:
            lattice.value(idx)
    return lattice.result()
