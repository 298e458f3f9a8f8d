"""The lattice of full-domain generalizations and what every lattice search shares.

Nodes are held in a numpy array (one row per node, one column per QI level), so predictive
tagging is vectorized: a node that satisfies the requirement makes every generalization satisfy
it (monotonicity, Aggarwal 20.3); a node that fails makes every specialization fail.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Callable

import numpy as np
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, if_, lit, sum_
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.stats.marginals import rare_rows
from sqlanon.stats.local.sets import local_set
from sqlanon.privacy.diagnosis import closest, unsatisfiable
from sqlanon.search.lattice.spec import MAX_LATTICE_NODES, lattice_size

UNKNOWN, SATISFIES, FAILS = 0, 1, -1
#: the extra column of a node's rows suppressed by the requirement's monotone part
MONO = "mono_suppressed"


@dataclass
class LatticeResult:
    node: tuple[int, ...]
    node_stats: object
    value: float
    nodes_evaluated: int
    nodes_total: int
    trace: list = field(default_factory=list)
    statements: int = 0  # node-evaluating statements (a batch of nodes counts once)
    #: merged into the report (e.g. the heuristic search's ``heuristic`` progress figures)
    extra: dict = field(default_factory=dict)


def level_bounds(hierarchies, qis, min_level: dict | None = None, max_level: dict | None = None) -> list[tuple[int, int]]:
    """Per QI, the ``(lowest, highest)`` level a search may choose (``--min-level``/``--max-level``).

    Every name must be a QI and every level within its hierarchy (``0..max``), lowest <= highest:
    otherwise a :class:`ConfigError` naming the culprit.
    """
    min_level, max_level = dict(min_level or {}), dict(max_level or {})
    for flag, given in (("min_level", min_level), ("max_level", max_level)):
        for name, level in given.items():
            if name not in qis:
                raise ConfigError(f"{flag} names {name!r}, which is not a quasi-identifier ({', '.join(qis)})")
            h = hierarchies[qis.index(name)]
            if isinstance(level, bool) or not isinstance(level, int) or not 0 <= level <= h.max_level:
                raise ConfigError(f"{flag} {name}={level!r} is outside its hierarchy's levels (0..{h.max_level})")
    out = []
    for name, h in zip(qis, hierarchies):
        lo, hi = min_level.get(name, 0), max_level.get(name, h.max_level)
        if lo > hi:
            raise ConfigError(f"min_level {name}={lo} is above max_level {name}={hi}")
        out.append((lo, hi))
    return out


def require_size(bounds, max_nodes: int = MAX_LATTICE_NODES) -> int:
    """The number of nodes within ``bounds``; a lattice above ``max_nodes`` is refused. It depends
    on the hierarchies and level bounds alone, so runs check it before touching the data."""
    size = lattice_size(bounds)
    if size > max_nodes:
        raise ConfigError(
            f"the lattice has {size:,} nodes, more than {max_nodes:,}: use --search lightning "
            "(time/step-limited heuristic lattice search, --time-limit/--step-limit) or --search auto, "
            "fewer levels (--max-level), or a flexible search (bottom-up, top-down, genetic)"
        )
    return size


class Lattice:
    """The full-domain lattice, restricted to per-QI level ``bounds`` (``[(lowest, highest)]``, one
    pair per QI; default: every level). A node outside the bounds is never built, evaluated or
    returned: ``self.mins``/``self.maxes`` are the per-QI level range every search walks."""

    def __init__(self, stats, requirement, metric, progress=None, max_nodes: int = MAX_LATTICE_NODES, bounds=None) -> None:
        self.stats = stats
        self.requirement = requirement
        self.metric = metric
        self.progress = progress
        #: called before every statement (a time limit raises there: the genetic search's seed)
        self.guard: Callable[[], None] | None = None
        if bounds is None:
            bounds = [(0, h.max_level) for h in stats.hierarchies]
        if len(bounds) != len(stats.hierarchies) or any(not 0 <= lo <= hi <= h.max_level for (lo, hi), h in zip(bounds, stats.hierarchies)):
            raise ConfigError(f"level bounds {list(bounds)} do not fit the hierarchies")
        self.mins = [int(lo) for lo, _ in bounds]
        self.maxes = [int(hi) for _, hi in bounds]
        require_size(bounds, max_nodes)
        spans = [hi - lo + 1 for lo, hi in zip(self.mins, self.maxes)]
        #: the per-node arrays' shape as the grid of levels (:meth:`cone`'s boxes)
        self.shape = tuple(spans)
        # every node in itertools.product's order (the last QI fastest), built by numpy
        grid = np.indices(spans, dtype=np.int16).reshape(len(spans), math.prod(spans))
        self.nodes = np.ascontiguousarray(grid.T) + np.array(self.mins, dtype=np.int16)
        self.strides = np.array([math.prod(spans[i + 1 :]) for i in range(len(spans))], dtype=np.int64)
        self.offset = np.array(self.mins, dtype=np.int64)
        self.bounded = any(lo > 0 or hi < h.max_level for lo, hi, h in zip(self.mins, self.maxes, stats.hierarchies))
        self.height = self.nodes.sum(axis=1).astype(np.int32)
        self.status = np.zeros(len(self.nodes), dtype=np.int8)
        #: a requirement that is not monotone, with a monotone part (:attr:`mono_finals`): that
        #: part's status, tagged like :attr:`status` is for a monotone one (Flash's probes walk it)
        self.mono_status = np.zeros(len(self.nodes), dtype=np.int8)
        self.pruned = np.zeros(len(self.nodes), dtype=bool)
        # suppressed rows are anti-monotone: s(n) >= s(g) for every evaluated generalization g
        self.s_lower = np.zeros(len(self.nodes), dtype=np.int64)
        self.evaluated: dict[int, tuple] = {}  # idx -> (NodeStats, satisfies, value)
        self.is_evaluated = np.zeros(len(self.nodes), dtype=bool)
        self.statements = 0  # node-evaluating statements run (one per check or batch)
        self.ok = requirement.predicate()
        #: a requirement that is not monotone: the rows its monotone part suppresses, per node
        #: (``mono_suppressed``, :meth:`Requirement.monotone_predicate`), bound its specializations
        mono = requirement.monotone_predicate()
        self.mono_finals: list[tuple[str, exp.Expr]] = [] if mono is None else [(MONO, sum_(if_(mono, lit(0), col("cnt"))))]
        metric.bind(requirement)  # the bounds read the requirement's k
        #: whether the engine scans with more than one thread (:func:`optimal`'s lookahead; asked once)
        self.threads_wide: bool | None = None
        self.best_value = math.inf
        self.best_idx: int | None = None

    def __len__(self) -> int:
        return len(self.nodes)

    def idx(self, node) -> int:
        return int(np.dot(np.asarray(node, dtype=np.int64) - self.offset, self.strides))

    def node(self, idx: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.nodes[idx])

    @property
    def top(self) -> int:
        return len(self.nodes) - 1

    # -- checking ---------------------------------------------------------------------------------
    def check(self, idx: int) -> bool:
        """Run the node's query (once), tag the lattice, offer the value to the incumbent."""
        if idx in self.evaluated:
            return self.evaluated[idx][1]
        node = self.node(idx)
        if self.guard is not None:
            self.guard()
        ns = self.stats.evaluate(node, self.ok, self._aggregates(node), metric=self.metric, extra_finals=self.mono_finals)
        self.statements += 1
        return self._record(idx, ns)

    def _aggregates(self, node):
        """The metric's aggregates of ``node`` and the monotone part's (:attr:`mono_finals`)."""
        aggs = self.metric.aggregates(self.stats, node)
        if not self.mono_finals:
            return aggs
        if callable(aggs):
            return lambda params: [*aggs(params), *self.mono_finals]
        return [*aggs, *self.mono_finals]

    def check_many(self, idxs: list[int]) -> list[bool]:
        """Evaluate several nodes in one statement (the batch statement of
        :mod:`sqlanon.stats.batch` when the requirement and metric allow it)."""
        todo = [i for i in dict.fromkeys(idxs) if i not in self.evaluated]
        if len(todo) == 1:
            self.check(todo[0])
        elif todo:
            if self.guard is not None:
                self.guard()
            results = self.stats.evaluate_many([self.node(i) for i in todo], self.ok, self._aggregates, metric=self.metric, extra_finals=self.mono_finals)
            self.statements += 1
            for i, ns in zip(todo, results):
                self._record(i, ns)
        return [self.evaluated[i][1] for i in idxs]

    #: lattices up to this size keep per-QI level masks (``nodes[:, i] >= v`` / ``<= v``), so a
    #: cone is an AND of a few precomputed masks instead of a comparison of the whole node array
    MASK_NODES = 250_000

    @cached_property
    def level_masks(self):
        """Per QI, ``{level: nodes[:, i] >= level}`` and ``{level: nodes[:, i] <= level}``, or
        False past :attr:`MASK_NODES` nodes (built on first use, kept for the lattice's life)."""
        if len(self.nodes) > self.MASK_NODES:
            return False
        ge, le = [], []
        for i, (lo, hi) in enumerate(zip(self.mins, self.maxes)):
            column = self.nodes[:, i]
            ge.append({v: column >= v for v in range(lo + 1, hi + 1)})
            le.append({v: column <= v for v in range(lo, hi)})
        return (ge, le)

    def above(self, idx: int) -> np.ndarray:
        """Mask of the node's generalizations (itself included)."""
        masks = self.level_masks
        node = self.nodes[idx]
        if masks is False:
            return (self.nodes >= node).all(axis=1)
        out = np.ones(len(self.nodes), dtype=bool)
        for i, v in enumerate(node):
            m = masks[0][i].get(int(v))
            if m is not None:
                out &= m
        return out

    def below(self, idx: int) -> np.ndarray:
        """Mask of the node's specializations (itself included)."""
        masks = self.level_masks
        node = self.nodes[idx]
        if masks is False:
            return (self.nodes <= node).all(axis=1)
        out = np.ones(len(self.nodes), dtype=bool)
        for i, v in enumerate(node):
            m = masks[1][i].get(int(v))
            if m is not None:
                out &= m
        return out

    def cone(self, values: np.ndarray, node: tuple[int, ...], up: bool) -> np.ndarray:
        """The view of ``values`` (a per-node array of the lattice's, C-ordered) at ``node``'s
        generalizations (``up``) or specializations, the node itself included: a box of the grid
        of levels, so tagging a cone is one strided assignment, not a mask of every node."""
        if up:
            box = tuple(slice(v - lo, None) for v, lo in zip(node, self.mins))
        else:
            box = tuple(slice(0, v - lo + 1) for v, lo in zip(node, self.mins))
        grid = values.reshape(self.shape)
        assert np.may_share_memory(grid, values)  # a view: what is assigned lands in values
        return grid[box]

    def _record(self, idx: int, ns) -> bool:
        node = self.node(idx)
        # within the budget and releasing a row (Requirement.fits): both parts are monotone under
        # generalization when suppression is, so tagging stays valid
        satisfies = self.requirement.fits(ns.suppressed, ns.rows)
        value = self.metric.value(self.stats, node, ns) if satisfies else math.inf
        self.evaluated[idx] = (ns, satisfies, value)
        self.is_evaluated[idx] = True
        self.tag(idx, satisfies, node)
        if ns.suppressed and self.requirement.monotone:
            below = self.cone(self.s_lower, node, up=False)
            np.maximum(below, ns.suppressed, out=below)
        elif self.mono_finals:
            self._tag_monotone_part(idx, ns, node)
        if satisfies and (value < self.best_value or (value == self.best_value and self.best_idx is not None and self.height[idx] < self.height[self.best_idx])):
            self.best_value, self.best_idx = value, idx
        qb = self.metric.query_bound(self.stats, node, ns)
        if qb is not None and qb >= self.best_value:
            self.prune_above(idx, node)
        if self.progress:
            self.progress(len(self.evaluated))
        return satisfies

    def _tag_monotone_part(self, idx: int, ns, node: tuple[int, ...]) -> None:
        """A requirement that is not monotone: the rows its monotone part suppresses at the node
        bound the suppressed rows of every specialization (the metric bounds read ``s_lower``),
        and when they exceed the budget (or are every row) every specialization fails."""
        if MONO not in ns.extra:
            return  # evaluated without the part's column (a search's own statement): nothing known
        mono = int(ns.extra[MONO] or 0)
        if mono <= self.requirement.budget and mono < ns.rows:
            self.cone(self.mono_status, node, up=True)[...] = SATISFIES
        if not mono:
            return
        below = self.cone(self.s_lower, node, up=False)
        np.maximum(below, mono, out=below)
        if mono > self.requirement.budget or mono >= ns.rows:
            self.cone(self.status, node, up=False)[...] = FAILS
            self.cone(self.mono_status, node, up=False)[...] = FAILS

    @property
    def path_status(self) -> np.ndarray:
        """The status Flash's probes walk: :attr:`status`, or for a requirement that is not
        monotone but has a monotone part, that part's (:attr:`mono_status`): the probes then find
        the part's lowest satisfying nodes, tagging whole cones of failing nodes below them,
        and the nodes that meet the part are checked one by one."""
        return self.mono_status if self.mono_finals else self.status

    def tag(self, idx: int, satisfies: bool, node: tuple[int, ...] | None = None) -> None:
        """Tag the node's cone (``node``: its levels, when known)."""
        if not self.requirement.monotone:
            # entropy l-diversity / t-closeness with a budget: a node says nothing about others
            self.status[idx] = SATISFIES if satisfies else FAILS
            return
        self.cone(self.status, self.node(idx) if node is None else node, up=satisfies)[...] = SATISFIES if satisfies else FAILS

    def offer(self, idx: int, value: float) -> None:
        """A node tagged as satisfying whose value is known without a query (``Metric.known_value``):
        it becomes the incumbent if it is better. Its statistics are fetched only if it wins."""
        if value < self.best_value or (value == self.best_value and self.best_idx is not None and self.height[idx] < self.height[self.best_idx]):
            self.best_value, self.best_idx = value, idx

    def marginal_suppression(self, pairs: bool = True, triples: bool | None = None) -> np.ndarray:
        """Per node, rows certainly suppressed, known from small marginals alone: with k-anonymity,
        a value (or, with ``pairs``, a value pair or triple) at the node's levels held by fewer
        than k rows puts each of its rows in a class of fewer than k rows, whatever the other QIs
        (:func:`sqlanon.stats.marginals.rare_rows`; zeros without a k-anonymity model).

        Triples (default: when the budget allows suppression) cost a larger statement; with no
        suppression allowed a rare value or pair already fails most nodes and the search needs
        few statements (Adult's 0 % cases: 2-7), so there they cost more than they save."""
        k = max([m.k for m in self.requirement.models if isinstance(m, KAnonymity)], default=1)
        if triples is None:
            triples = self.requirement.budget > 0
        # where the in-process path holds the base set, the marginals are summed from it (its one
        # fetch, needed by the first node batch anyway) instead of an engine statement
        local_set(self.stats)
        return rare_rows(self.stats, self.nodes, k, pairs, triples)

    def tag_marginal(self, pairs: bool = True, triples: bool | None = None) -> int:
        """Bound every node's suppressed rows by :meth:`marginal_suppression` (``s_lower``, which
        the metric bounds use) and tag the nodes it puts over the budget as failing, without a
        query. Returns how many were tagged."""
        low = self.marginal_suppression(pairs, triples)
        self.s_lower = np.maximum(self.s_lower, low)
        over = (low > self.requirement.budget) & (self.status == UNKNOWN)
        self.status[over] = FAILS
        self.mono_status[over] = FAILS  # k-anonymity is the monotone part
        return int(over.sum())

    @cached_property
    def height_layers(self) -> list[np.ndarray]:
        """The nodes' indices per height, the highest first (built on first use)."""
        heights = self.height
        return [np.flatnonzero(heights == h) for h in range(int(heights.max()), -1, -1)]

    def has_above(self, mask: np.ndarray) -> np.ndarray:
        """Per node, whether one of its strict generalizations is in ``mask``: one pass down the
        lattice's heights, each node OR-ing its immediate generalizations (a numpy gather per QI
        and height), so no pairwise comparison of nodes."""
        layers = self.height_layers
        reach = mask.copy()  # in mask, or below a node in mask
        above = np.zeros(len(mask), dtype=bool)
        for ids in layers:
            got = np.zeros(len(ids), dtype=bool)
            for i, (stride, hi) in enumerate(zip(self.strides, self.maxes)):
                up = self.nodes[ids, i] < hi
                got[up] |= reach[ids[up] + int(stride)]
            above[ids] = got
            reach[ids] |= got
        return above

    def prune_above(self, idx: int, node: tuple[int, ...] | None = None) -> None:
        """Prune the node's strict generalizations (``node``: its levels, when known)."""
        itself = self.pruned[idx]
        self.cone(self.pruned, self.node(idx) if node is None else node, up=True)[...] = True
        self.pruned[idx] = itself

    def satisfies(self, idx: int) -> bool:
        if self.status[idx] == UNKNOWN:
            return self.check(idx)
        return self.status[idx] == SATISFIES

    def value(self, idx: int) -> float:
        """The metric value of a node known to satisfy (queries it if it was only tagged)."""
        if idx not in self.evaluated:
            self.check(idx)
        return self.evaluated[idx][2]

    def successors(self, idx: int) -> list[int]:
        node = self.nodes[idx]
        return [idx + int(self.strides[i]) for i in range(len(self.maxes)) if node[i] < self.maxes[i]]

    def require_top(self) -> None:
        """Corollary of monotonicity: if the most general node fails, nothing satisfies.
        (Without monotonicity a more specific node may still fit the budget: nothing to conclude.)

        When the top is known without a query (:meth:`top_known`) it is tagged and its value
        offered, as its evaluation would (on Spark a statement is a job, costly even at one node:
        docs/measurements.md)."""
        value = self.top_known()
        if value is not None:
            self.tag(self.top, True)
            self.offer(self.top, value)
            self.pruned[self.top] = True  # scored: never evaluated for its value
            return
        if not self.satisfies(self.top) and self.requirement.monotone:
            raise self.unsatisfiable(self.top)

    def top_known(self) -> float | None:
        """The top's value when it needs no query: every QI at its top level has one label, so the
        top is one class of all rows; under k-anonymity alone (no sensitive, class or population
        aggregates) that class is released whole when it holds k rows, and a metric whose value
        with nothing suppressed needs no data (:meth:`Metric.known_value` with no budget) gives
        its value. None otherwise (the top is then evaluated)."""
        stats, models = self.stats, self.requirement.models
        if not models or any(type(m) is not KAnonymity for m in models) or stats.needs.any:
            return None
        if any(len(h.labels(hi)) != 1 for h, hi in zip(stats.hierarchies, self.maxes)) or stats.rows < max(m.k for m in models):
            return None
        return self.metric.known_value(stats, self.node(self.top), 0)

    def unsatisfiable(self, idx: int | None = None):
        """The :class:`UnsatisfiableError` naming the failing model(s) and the closest node
        (``idx``, or the evaluated node suppressing the fewest rows)."""
        if idx is None:
            node = closest((self.node(i), ns) for i, (ns, _, _) in self.evaluated.items())
            if node is None:  # nothing evaluated: the most general node is the natural witness
                node = self.node(self.top)
        else:
            node = self.node(idx)
        scope = "within the level bounds" if self.bounded else ""
        return unsatisfiable(self.stats, self.requirement, node, scope=scope)

    def result(self, trace=None) -> LatticeResult:
        if self.best_idx is None:
            raise self.unsatisfiable()
        if self.best_idx not in self.evaluated:  # an incumbent offered by its known value
            self.check(self.best_idx)
        ns, _, value = self.evaluated[self.best_idx]
        return LatticeResult(self.node(self.best_idx), ns, value, len(self.evaluated), len(self.nodes), trace or [], self.statements)

    # -- Flash-style probing ----------------------------------------------------------------------
    def greedy_path(self, start: int, prior: np.ndarray) -> list[int]:
        """From ``start`` up through unknown nodes, each step to the successor with the lowest
        bound (ties by index): the path Flash binary-searches for its lowest satisfying node."""
        path = [start]
        cur = start
        while True:
            nxt = [s for s in self.successors(cur) if self.path_status[s] == UNKNOWN]
            if not nxt:
                return path
            cur = min(nxt, key=lambda s: (prior[s], s))
            path.append(cur)

    def probe(self, idx: int, prior: np.ndarray) -> None:
        """Walk up from ``idx`` through unknown nodes (cheapest bound first) and binary-search the
        path for its lowest satisfying node; every check tags a whole cone of the lattice."""
        if not self.requirement.monotone:
            self.check(idx)  # no tagging to gain from a path: just decide the node itself
            return
        path = self.greedy_path(idx, prior)
        lo, hi = 0, len(path) - 1
        if not self.satisfies(path[hi]):
            return
        while lo < hi:
            mid = (lo + hi) // 2
            if self.status[path[mid]] == SATISFIES or (self.status[path[mid]] == UNKNOWN and self.check(path[mid])):
                hi = mid
            else:
                lo = mid + 1
        if self.status[path[0]] == UNKNOWN:
            self.check(path[0])
