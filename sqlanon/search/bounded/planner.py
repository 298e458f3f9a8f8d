"""The optimal search on lattices too large to build: Flash's binary search, bounded by time and steps.

``--search optimal`` builds the lattice (:class:`~sqlanon.search.lattice.lattice.Lattice`) up to
:data:`~sqlanon.search.lattice.lattice.MAX_LATTICE_NODES` nodes and proves its answer optimal.
Above that size it runs this search instead: the same answer when it finishes, the best node found
so far when a ``--time-limit`` or ``--step-limit`` stops it, and the report says which
(``heuristic.optimal``: proven or not). ARX runs Flash the same way on such lattices.

The lattice is never built: nodes are tuples of levels, visited lazily.

* **Order** (Flash's, by bounds): nodes are taken cheapest data-free lower bound first
  (``metric.prior_bound``, a heap seeded with the bottom node; a node's generalizations enter the
  heap when it is taken, keyed by its bound until their own is computed, when they come up: so
  only the bounds of nodes that come up are computed, not those of every generalization). The bound does not decrease upwards (a generalization loses at least as
  much), so once the cheapest node in the heap cannot beat the incumbent no node left can:
  the incumbent is then **proven optimal** (``stopped_by: exhausted``).
* **Paths** (Flash's probes): a node taken whose status is unknown starts a path upwards through
  nodes of unknown status, each step to the successor with the cheapest bound, up to the top; a
  search over the path finds its lowest node that releases (``PROBE_POINTS`` evenly spaced nodes
  per statement, so the interval shrinks ``PROBE_POINTS + 1``-fold a statement).
* **Closures** (when the requirement is monotone: k-anonymity and distinct l-diversity with a
  budget, every model without one): a node below one that fails fails, a node above one that
  releases releases. A failing node is never evaluated again; a releasing node still is once,
  for its value (with suppression a generalization can lose less than the node it generalizes).
  A requirement that is not monotone gets no closures: every node taken is evaluated.

Options: ``time_limit`` (seconds; :data:`DEFAULT_TIME_LIMIT` when none is given), ``step_limit``
(node evaluations), ``batch`` (unused here, accepted as lightning's). The report (``heuristic``)
gives evaluations, paths, seconds, what stopped the search and whether the optimum is proven.
"""

from __future__ import annotations

import heapq

import numpy as np

from sqlanon.search.lattice.lattice import LatticeResult
from sqlanon.search.lightning.planner import Lightning, parse_options

#: seconds the bounded search runs when no --time-limit is given (an unbounded walk of 10^8 nodes
#: would run for hours)
DEFAULT_TIME_LIMIT = 60.0
#: nodes of a path evaluated in one statement
PROBE_POINTS = 3
TOL = 1e-12


class _Tags:
    """Nodes known to fail (every specialization fails) or to release (every generalization
    releases): rows of a growing int16 array, tested by one vectorized comparison."""

    def __init__(self, width: int) -> None:
        self.rows = np.zeros((64, width), dtype=np.int16)
        self.n = 0

    def add(self, node: tuple) -> None:
        if self.n == len(self.rows):
            self.rows = np.concatenate([self.rows, np.zeros_like(self.rows)])
        self.rows[self.n] = node
        self.n += 1

    def below_some(self, node: tuple) -> bool:
        """Is ``node`` a specialization of (or equal to) a tagged node?"""
        return bool(self.n) and bool((self.rows[: self.n] >= np.asarray(node, dtype=np.int16)).all(axis=1).any())

    def above_some(self, node: tuple) -> bool:
        """Is ``node`` a generalization of (or equal to) a tagged node?"""
        return bool(self.n) and bool((self.rows[: self.n] <= np.asarray(node, dtype=np.int16)).all(axis=1).any())


class BoundedFlash(Lightning):
    """The walk's state; nodes are evaluated through :meth:`Lightning.evaluate` (the same limits,
    statements and incumbent as lightning's)."""

    label = "optimal (bounded)"

    def __init__(self, stats, requirement, metric, bounds, opts: dict, progress=None) -> None:
        super().__init__(stats, requirement, metric, bounds, opts, progress)
        self.fails = _Tags(len(bounds))
        self.releases = _Tags(len(bounds))
        self.paths = 0
        self.taken = 0

    # -- what is known of a node ------------------------------------------------------------------
    def status(self, node: tuple) -> bool | None:
        """True: releases, False: fails, None: unknown (closures only for a monotone requirement)."""
        if node in self.evaluated:
            return self.evaluated[node][1]
        if not self.requirement.monotone:
            return None
        if self.fails.below_some(node):
            return False
        if self.releases.above_some(node):
            return True
        return None

    def _record(self, node: tuple, ns) -> None:
        super()._record(node, ns)
        if self.requirement.monotone:
            (self.releases if self.evaluated[node][1] else self.fails).add(node)

    # -- Flash's path ------------------------------------------------------------------------------
    def path(self, node: tuple) -> list[tuple]:
        """Upwards from ``node`` through nodes of unknown status, each step to the cheapest successor
        (ties: the first QI), up to the top or a node known to release."""
        out = [node]
        while True:
            nexts = [s for s in self.successors(out[-1]) if self.status(s) is not False]
            if not nexts:
                return out
            step = min(nexts, key=lambda s: (self.prior(s), s))
            out.append(step)
            if self.status(step) is True:
                return out

    def probe(self, node: tuple) -> None:
        """Find the lowest node of ``node``'s path that releases, a few nodes per statement."""
        self.paths += 1
        path = self.path(node)
        lo, hi = 0, len(path)  # the lowest releasing index lies in [lo, hi] (hi: none on the path)
        while lo < hi and not self.must_stop():
            known = [(i, self.status(path[i])) for i in range(lo, hi)]
            decided = next(((i, s) for i, s in known if s is not None), None)
            if decided is not None:  # narrow by what is known before asking
                i, releases = decided
                lo, hi = (lo, i) if releases else (i + 1, hi)
                continue
            span = hi - lo
            points = sorted({lo + (span * (j + 1)) // (PROBE_POINTS + 1) for j in range(PROBE_POINTS)} | ({lo} if span <= PROBE_POINTS else set()))
            points = [p for p in points if lo <= p < hi]
            self.evaluate([path[p] for p in points])
            if not all(path[p] in self.evaluated for p in points):
                return  # a limit stopped the statement
            for p in points:
                if self.evaluated[path[p]][1]:
                    hi = min(hi, p)
                else:
                    lo = max(lo, p + 1)

    # -- the walk ---------------------------------------------------------------------------------
    def run(self) -> LatticeResult:
        bottom, top = tuple(self.mins), tuple(self.maxes)
        self.evaluate([bottom, top] if top != bottom else [bottom])
        # (key, height, node, exact): a node enters with its parent's bound as key (a lower bound
        # of its own: bounds do not decrease upwards) and gets its own when first popped
        heap: list = [(self.prior(bottom), sum(bottom), bottom, True)]
        seen = {bottom}
        exhausted = False
        while not self.must_stop():
            if not heap:
                exhausted = True  # every node was taken
                break
            prior, height, node, exact = heapq.heappop(heap)
            if prior >= self.best_value - TOL * max(1.0, abs(self.best_value)):
                exhausted = True  # no node left can beat the incumbent: it is the optimum
                break
            if not exact:
                own = self.prior(node)
                if own > prior:
                    heapq.heappush(heap, (own, height, node, True))
                    continue
            self.taken += 1
            self.priors.pop(node, None)  # taken nodes' bounds are not needed again
            for s in self.successors(node):
                if s not in seen:
                    seen.add(s)
                    heapq.heappush(heap, (prior, height + 1, s, False))
            known = self.status(node)
            if known is False:
                continue
            if known is None and self.requirement.monotone:
                self.probe(node)
            if node not in self.evaluated and self.status(node) is not False:
                self.evaluate([node])  # its value (a releasing node may beat the incumbent)
        if exhausted:
            self.stopped_by = "exhausted"
        return self.result()

    def result(self) -> LatticeResult:
        result = super().result()
        info = result.extra["heuristic"]
        for key in ("expansions_from_bottom", "expansions_from_top", "greedy_dives"):
            info.pop(key, None)
        info.update({"bounded": True, "paths": self.paths, "nodes_taken": self.taken, "proof": "no untaken node's lower bound beats the result" if info["optimal"] else None})
        return result


def run(stats, requirement, metric, bounds, options: dict | None = None, progress=None) -> LatticeResult:
    """The optimal search over ``bounds`` without building the lattice, within the limits."""
    # the exact search's options (probes, lookahead_threads, ..) do not apply without the lattice
    opts = parse_options({k: v for k, v in (options or {}).items() if k in ("time_limit", "step_limit", "batch", "local_rows", "trace")})
    if not (options or {}).get("time_limit"):
        opts["time_limit"] = DEFAULT_TIME_LIMIT
    return BoundedFlash(stats, requirement, metric, list(bounds), opts, progress).run()


__all__ = ["run", "BoundedFlash", "DEFAULT_TIME_LIMIT"]
