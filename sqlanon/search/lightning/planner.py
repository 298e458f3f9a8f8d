"""LIGHTNING-style heuristic lattice search for lattices too large to search exactly.

Wide tables (15-30 QIs) have full-domain lattices of 10^8-10^14 nodes: the exact searches
(``optimal``, ``samarati``, ``incognito``) refuse them. This search, in the style of ARX's
LIGHTNING (Prasser et al., "Lightning: Utility-Driven Anonymization of High-Dimensional Data",
TDP 2016), never builds the lattice: it walks it from both ends, greedy on the metric, until a
time or step limit, and returns the best node found and how far it got.

* **From the bottom** (ARX's LIGHTNING): best-first by the node's metric value (suppressed rows
  counted, whether or not they fit the budget): the cheapest node in the queue is *expanded*, that
  is all its direct generalizations are evaluated (one statement for the lot) and queued; every
  ``stepping``-th expansion (``stepping`` = the height of the top node) is instead a greedy dive
  that follows the cheapest successor up to the top, so a releasable node is found early. A node
  whose data-free lower bound (``metric.prior_bound``) is no better than the incumbent is never
  evaluated nor expanded.
* **From the top**: best-first by metric value over direct *specializations*, starting at the
  most general node; a node that fails the requirement is not expanded when the requirement is
  monotone (its specializations fail too).

The two walks alternate one expansion each and share the incumbent: the best node that
*releases* (suppressed rows within the budget, and not every row suppressed). When the bottom
walk runs out of nodes before a limit is hit, every node that could beat the incumbent has been
evaluated (the lower bound is monotone and below every value), so the result is the optimum and
``optimal`` is reported true.

Options: ``time_limit`` (seconds, default 30), ``step_limit`` (node evaluations, default none),
``batch`` (nodes per statement, default 64), ``stall`` (default none: off; a share of the limits,
e.g. 0.1): stop early, ``stopped_by: stalled``, once the incumbent has not improved for as long as
it took to find it and for at least ``stall`` of the time limit (of the step limit, counted in
evaluations): the genetic search's seed (:mod:`sqlanon.search.genetic.seeding`) hands the rest of
the limit on when lightning's walk stops paying. The report (``heuristic``) gives evaluations,
expansions, seconds, what stopped the search (``time_limit``, ``step_limit`` or ``exhausted``),
whether the optimum is proven, and the evaluation at which the returned node was found.
"""

from __future__ import annotations

import heapq
import math

from sqlanon.errors import ConfigError
from sqlanon.search.lattice.lattice import LatticeResult
from sqlanon.search.limits import Limits
from sqlanon.plan import Plan
from sqlanon.search.context import SearchContext, heuristic_plan
from sqlanon.search.options import given
from sqlanon.search.lattice.spec import lattice_size
from sqlanon.privacy.diagnosis import closest, unsatisfiable

DEFAULT_TIME_LIMIT = 30.0
DEFAULT_BATCH = 64
#: expand queued nodes of one key together (:meth:`Lightning.tied`)
TIES = True
OPTIONS = ("time_limit", "step_limit", "batch", "stall")


def parse_options(options: dict) -> dict:
    """``time_limit`` (> 0 seconds), ``step_limit`` (>= 1 evaluations), ``batch`` (>= 1)."""
    # local_rows is the statistics' (set by the run before the search: sqlanon.stats.local)
    unknown = sorted(k for k, v in options.items() if k not in OPTIONS and k not in ("trace", "local_rows") and given(v))
    if unknown:
        raise ConfigError(f"search option {unknown[0]!r} does not apply to the lightning search (its options: {', '.join(OPTIONS)})")
    out = {"time_limit": DEFAULT_TIME_LIMIT, "step_limit": None, "batch": DEFAULT_BATCH, "stall": None}
    for key, kind in (("time_limit", float), ("step_limit", int), ("batch", int), ("stall", float)):
        value = options.get(key)
        if value is None:
            continue
        try:
            if isinstance(value, bool) or (kind is int and isinstance(value, float) and not value.is_integer()):
                raise ValueError
            value = kind(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key} must be a {'number' if kind is float else 'whole number'}, got {value!r}") from None
        if not (value > 0 if kind is float else value >= 1) or (kind is float and not math.isfinite(value)):
            raise ConfigError(f"{key} must be {'> 0 seconds' if kind is float else '>= 1'}, got {value!r}")
        out[key] = value
    return out


class Lightning:
    """The walk's state: evaluated nodes, the incumbent, the limits."""

    #: the search's name in its messages
    label = "lightning"

    def __init__(self, stats, requirement, metric, bounds, opts: dict, progress=None) -> None:
        self.stats = stats
        self.requirement = requirement
        self.metric = metric
        self.mins = [lo for lo, _ in bounds]
        self.maxes = [hi for _, hi in bounds]
        self.opts = opts
        self.progress = progress or (lambda message: None)
        self.ok = requirement.predicate()
        metric.bind(requirement)
        self.evaluated: dict[tuple, tuple] = {}  # node -> (NodeStats, releasable, value)
        self.priors: dict[tuple, float] = {}
        self.best: tuple | None = None
        self.best_value = math.inf
        self.best_at = 0
        #: when the incumbent was found (seconds into the search), and every improvement
        #: ``(seconds, evaluations, value)``
        self.best_seconds = 0.0
        self.improvements: list[tuple] = []
        self.limits = Limits(opts["time_limit"], opts["step_limit"])  # the clock starts with the search
        self.expansions = {"bottom": 0, "top": 0}
        self.dives = 0
        self._said = 0.0

    @property
    def stopped_by(self) -> str | None:
        return self.limits.stopped_by

    @stopped_by.setter
    def stopped_by(self, value: str | None) -> None:
        self.limits.stopped_by = value

    # -- limits -----------------------------------------------------------------------------------
    def must_stop(self) -> bool:
        if self.limits.expired():
            return True
        if self.opts["stall"] is not None and self.best is not None and self.stalled():
            self.stopped_by = "stalled"
            return True
        return False

    def stalled(self) -> bool:
        """The incumbent has not improved for as long as it took to find it and for at least
        ``stall`` of the time limit, or of the step limit in evaluations (``stall`` option)."""
        share = float(self.opts["stall"])
        time_limit, step_limit = self.opts["time_limit"], self.opts["step_limit"]
        if step_limit is not None:
            since = len(self.evaluated) - self.best_at
            if since > max(self.best_at, share * step_limit):
                return True
        if time_limit is not None and step_limit is None:
            since_s = self.limits.elapsed() - self.best_seconds
            return since_s > max(self.best_seconds, share * time_limit)
        return False

    # -- nodes ------------------------------------------------------------------------------------
    def prior(self, node: tuple) -> float:
        p = self.priors.get(node)
        if p is None:
            p = self.priors[node] = float(self.metric.prior_bound(self.stats, node))
        return p

    def successors(self, node: tuple) -> list[tuple]:
        return [node[:i] + (node[i] + 1,) + node[i + 1 :] for i in range(len(node)) if node[i] < self.maxes[i]]

    def predecessors(self, node: tuple) -> list[tuple]:
        return [node[:i] + (node[i] - 1,) + node[i + 1 :] for i in range(len(node)) if node[i] > self.mins[i]]

    def hopeless(self, node: tuple) -> bool:
        """Its lower bound cannot beat the incumbent (nor can any generalization's)."""
        return self.prior(node) >= self.best_value - 1e-12 * max(1.0, abs(self.best_value))

    def evaluate(self, nodes: list[tuple]) -> None:
        """Evaluate the nodes not seen yet, ``batch`` per statement, each statement sized to the
        time and steps left (:class:`~sqlanon.search.limits.Limits`)."""
        todo = [n for n in dict.fromkeys(nodes) if n not in self.evaluated]
        while todo:
            room = self.limits.room(min(self.opts["batch"], len(todo)))
            if room == 0:
                break
            chunk, todo = todo[:room], todo[room:]
            results = self.limits.run(len(chunk), lambda: self.stats.evaluate_many(chunk, self.ok, lambda n: self.metric.aggregates(self.stats, n), metric=self.metric))
            for node, ns in zip(chunk, results):
                self._record(node, ns)
        elapsed = self.limits.elapsed()
        if elapsed - self._said >= 5.0:
            self._said = elapsed
            best = f", best {self.metric.name} {self.best_value:.6g}" if self.best is not None else ""
            self.progress(f"{self.label}: {len(self.evaluated)} nodes evaluated in {elapsed:.0f} s{best}")

    def _record(self, node: tuple, ns) -> None:
        ok = self.requirement.fits(ns.suppressed, ns.rows)
        value = float(self.metric.value(self.stats, node, ns))
        self.evaluated[node] = (ns, ok, value)
        if ok and (value < self.best_value or (value == self.best_value and self.best is not None and sum(node) < sum(self.best))):
            self.best, self.best_value, self.best_at = node, value, len(self.evaluated)
            self.best_seconds = self.limits.elapsed()
            self.improvements.append((round(self.best_seconds, 3), len(self.evaluated), value))

    def value(self, node: tuple) -> float:
        return self.evaluated[node][2]

    def key(self, node: tuple) -> tuple:
        return (self.value(node), sum(node), node)

    # -- the walk from the bottom (ARX's LIGHTNING) --------------------------------------------
    def expand_up(self, queue: list, expanded: set, node: tuple) -> tuple | None:
        """Evaluate and queue the node's generalizations that may still beat the incumbent;
        return the cheapest of them."""
        expanded.add(node)
        self.expansions["bottom"] += 1
        fresh = [s for s in self.successors(node) if s not in expanded and not self.hopeless(s)]
        self.evaluate(fresh)
        best = None
        for s in fresh:
            if s in self.evaluated:
                heapq.heappush(queue, self.key(s))
                if best is None or self.key(s) < self.key(best):
                    best = s
        return best

    def expand_up_tied(self, queue: list, expanded: set, nodes: list[tuple]) -> None:
        """Expand several nodes of one key (value and height) with one evaluation of all their
        successors (:meth:`expand_up` one by one would expand them in this order too, unless a
        successor of an earlier one is cheaper than a later one)."""
        fresh: list[tuple] = []
        for node in nodes:
            expanded.add(node)
            self.expansions["bottom"] += 1
            fresh.extend(s for s in self.successors(node) if s not in expanded and not self.hopeless(s))
        fresh = list(dict.fromkeys(fresh))
        self.evaluate(fresh)
        for s in fresh:
            if s in self.evaluated:
                heapq.heappush(queue, self.key(s))

    def tied(self, queue: list, expanded: set, key: tuple, steps: int, stepping: int) -> list[tuple]:
        """Queued nodes with the same value and height as ``key``, while their successors fit a
        statement (``batch``) and no greedy dive is due."""
        out: list[tuple] = []
        room = self.opts["batch"] - sum(1 for _ in self.successors(key[2]))
        while queue and queue[0][:2] == key[:2] and (steps + len(out) + 1) % stepping != 0:
            node = queue[0][2]
            n = sum(1 for s in self.successors(node) if s not in expanded)
            if node not in expanded and n > room:
                break
            heapq.heappop(queue)
            if node in expanded or self.hopeless(node):
                continue
            out.append(node)
            room -= n
        return out

    def dive(self, queue: list, expanded: set, node: tuple | None) -> None:
        """Greedy depth-first, no backtracking: follow the cheapest successor."""
        self.dives += 1
        while node is not None and not self.must_stop():
            node = self.expand_up(queue, expanded, node)
            if node is not None and node in expanded:
                break

    # -- the walk from the top --------------------------------------------------------------------
    def expand_down(self, queue: list, expanded: set, node: tuple) -> None:
        expanded.add(node)
        self.expansions["top"] += 1
        fresh = [p for p in self.predecessors(node) if p not in expanded]
        self.evaluate(fresh)
        for p in fresh:
            if p in self.evaluated:
                heapq.heappush(queue, self.key(p))

    def top_worth_expanding(self, node: tuple) -> bool:
        if self.requirement.monotone and not self.evaluated[node][1]:
            return False  # every specialization fails too
        return True

    # -- both -------------------------------------------------------------------------------------
    def run(self) -> LatticeResult:
        bottom, top = tuple(self.mins), tuple(self.maxes)
        self.evaluate([bottom, top])
        stepping = max(sum(hi - lo for lo, hi in zip(self.mins, self.maxes)), 1)
        up_q: list = [self.key(bottom)] if bottom in self.evaluated else []
        down_q: list = [self.key(top)] if top in self.evaluated and top != bottom else []
        up_done: set = set()
        down_done: set = set()
        steps = 0
        exhausted = False
        while not self.must_stop():
            # one expansion from the bottom
            while up_q:
                key = heapq.heappop(up_q)
                node = key[2]
                if node in up_done or self.hopeless(node):
                    continue
                steps += 1
                if steps % stepping == 0:
                    self.dive(up_q, up_done, node)
                else:
                    more = self.tied(up_q, up_done, key, steps, stepping) if TIES else []
                    steps += len(more)
                    self.expand_up_tied(up_q, up_done, [node, *more])
                break
            if not up_q and not self.must_stop():
                exhausted = True  # every node that could beat the incumbent was evaluated
                break
            # one expansion from the top
            while down_q and not self.must_stop():
                _, _, node = heapq.heappop(down_q)
                if node in down_done or not self.top_worth_expanding(node):
                    continue
                self.expand_down(down_q, down_done, node)
                break
        if exhausted:
            self.stopped_by = "exhausted"
        return self.result()

    def result(self) -> LatticeResult:
        info = {
            "evaluations": len(self.evaluated),
            "expansions_from_bottom": self.expansions["bottom"],
            "expansions_from_top": self.expansions["top"],
            "greedy_dives": self.dives,
            "seconds": round(self.limits.elapsed(), 3),
            "stopped_by": self.stopped_by,
            "optimal": self.stopped_by == "exhausted",
            "best_found_at_evaluation": self.best_at if self.best is not None else None,
            "best_found_at_seconds": round(self.best_seconds, 3) if self.best is not None else None,
            "time_limit": self.opts["time_limit"],
            "step_limit": self.opts["step_limit"],
            "lattice_nodes": lattice_size(zip(self.mins, self.maxes)),
        }
        if self.best is None:
            node = closest((n, ns) for n, (ns, _, _) in self.evaluated.items()) or tuple(self.maxes)
            assert self.stopped_by is not None  # no best node: exhausted, or a limit stopped it
            how = "among every candidate node" if self.stopped_by == "exhausted" else f"among the {len(self.evaluated)} nodes {self.label} evaluated before its {self.stopped_by.replace('_', ' ')}"
            raise unsatisfiable(self.stats, self.requirement, node, scope=how)
        ns, _, value = self.evaluated[self.best]
        result = LatticeResult(self.best, ns, value, len(self.evaluated), info["lattice_nodes"], [])
        result.extra = {"heuristic": info, "stopped_by": self.stopped_by}
        return result


def run(stats, requirement, metric, bounds, options: dict | None = None, progress=None) -> LatticeResult:
    """Search the lattice within ``bounds`` (``[(lowest, highest)]`` per QI)."""
    opts = parse_options(dict(options or {}))
    return Lightning(stats, requirement, metric, list(bounds), opts, progress).run()


def search(ctx: SearchContext) -> Plan:
    """The search's contract: ``run(ctx) -> Plan``."""
    return heuristic_plan(ctx, run)
