"""Bottom-up generalization (Wang, Yu, Chakraborty, ICDM 2004), with its statistics in SQL.

Starting from the most specific data, each iteration applies the valid generalization
``G = {c} -> p`` (all children of ``p`` are current values of the attribute) that minimizes

    IP(G) = I(G) / P(G)

* ``I(G)`` -- entropy information loss of the class: ``Info(Rp) - sum_c |Rc|/|Rp| Info(Rc)``;
* ``P(G) = min(AG(VID), K) - A(VID)`` -- anonymity gain capped at K; ``IP = inf`` when ``P = 0``;
  ties, and the case where no generalization is *critical* (``P = 0`` for all), go to the smaller
  ``I(G)`` (then larger ``P``, then VID order, then taxonomy order, so runs are reproducible);

until ``A(VID) >= K`` (or, with a suppression budget, until the rows of vids with ``a(vid) < K``
fit in the budget; those rows are suppressed by the release).

``AG(VID)`` is computed only for the at most ``|VID|`` generalizations that pass Theorem 1 (every
anonymity vid generalized by a segment of size > 1 of G), and each such computation reads only the
vids G generalizes (see :mod:`sqlanon.search.bottom_up.stats`). The sequence of generalizations, with
``I``, ``P``, ``IP`` and ``A(VID)`` after each, is the trace.

Taxonomies come from the hierarchy tables: a node is a set of leaves, so a chain of single-child
levels (``Preschool -> Primary School -> Primary education``) is one node, released under its
lowest label. A flat numeric hierarchy (``--numeric COL``) gets a tree of adjacent intervals
(``numeric_fanout`` values per node, default 2).

Attribute weights (``ctx.weights``, normalized to the largest) multiply ``I(G)`` of every
generalization of that attribute, so ``IP = w_a I(G) / P(G)``; the suppressed-row cost becomes
``sum_a w_a I_a(root)`` and, without a class column (``I = 0``), the LM that picks the stopping
point weighs QI ``i``'s per-row loss by ``w_i``; equally ranked generalizations then go to the
lighter attribute first. Level bounds (``ctx.bounds``): the search starts from the min-level cut
(each leaf at its level-``lo`` ancestor; its information loss, measured on the leaves first, is
counted like any generalization's) and a
generalization whose node lies above the max level is never valid; a node standing for a chain
of levels below ``lo`` is released under its level-``lo`` label. A flat numeric QI (intervals,
no levels) refuses bounds.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Sequence
from types import SimpleNamespace

from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.metrics.lm import leaf_share_loss, recoding_aggregates as lm_recoding_aggregates, recoding_value as lm_recoding_value
from sqlanon.plan import Plan, Recoding
from sqlanon.search.limits import Limits
from sqlanon.search.bottom_up.stats import Probe, VidTable, class_values_query
from sqlanon.privacy.base import Requirement
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.search.context import SearchContext
from sqlanon.privacy.needs import ClassNeeds, NodeStats
from sqlanon.stats import Statistics
from sqlanon.search.bounds import refuse_levelless
from sqlanon.privacy.diagnosis import unsatisfiable

ROUND = 9  # decimals used when comparing I and IP (ties across float summation orders)
#: generalizations whose I(G) one statement computes (a statement per batch: its cost is bounded,
#: and the time limit is checked between them)
INFO_BATCH = 128


class OutOfTime(Exception):
    """The time limit ran out while the search state was being built or updated."""


# ------------------------------------------------------------------------------------------------
# taxonomy trees


@dataclass
class Taxonomy:
    """A taxonomy tree over the leaves of a hierarchy. Node ids ``0..L-1`` are the leaf codes."""

    attribute: str
    labels: list[str]
    parent: list[int]
    children: list[list[int]] = field(default_factory=list)
    n_leaves: int = 0
    #: per node, the ``(lowest, highest)`` hierarchy level holding its leaf set (None: intervals)
    levels: list[tuple[int, int]] | None = None

    def __post_init__(self) -> None:
        if not self.children:
            self.children = [[] for _ in self.labels]
            for node, p in enumerate(self.parent):
                if p >= 0:
                    self.children[p].append(node)

    @property
    def root(self) -> int:
        return next(i for i, p in enumerate(self.parent) if p < 0)

    def internal(self) -> list[int]:
        return [i for i, ch in enumerate(self.children) if ch]

    def node(self, label: str) -> int:
        """The node with this label (the lowest one if a label repeats)."""
        for i, lab in enumerate(self.labels):
            if lab == label:
                return i
        raise KeyError(label)

    def leaves_under(self, node: int) -> list[int]:
        out, stack = [], [node]
        while stack:
            x = stack.pop()
            if x < self.n_leaves:
                out.append(x)
            stack.extend(self.children[x])
        return sorted(out)

    @classmethod
    def from_hierarchy(cls, h, fanout: int = 2) -> Taxonomy:
        if h.numeric and h.max_level == 1 and len(h.rows) > 2:
            return cls.numeric_intervals(h, fanout)
        leaves = h.leaves
        n = len(leaves)
        labels = list(leaves)
        index: dict[frozenset, int] = {frozenset([i]): i for i in range(n)}
        # leaf set of every (level, label)
        sets: dict[tuple[int, str], set] = {}
        for code, row in enumerate(h.rows):
            for level, label in enumerate(row):
                sets.setdefault((level, label), set()).add(code)
        parent = [-1] * n
        levels = [[0, 0] for _ in range(n)]
        for code, row in enumerate(h.rows):
            prev = code
            for level in range(1, len(row)):
                s = frozenset(sets[(level, row[level])])
                node = index.get(s)
                if node is None:
                    node = len(labels)
                    index[s] = node
                    labels.append(row[level])
                    parent.append(-1)
                    levels.append([level, level])
                levels[node][1] = max(levels[node][1], level)
                if node != prev:
                    parent[prev] = node
                    prev = node
        return cls(h.attribute, labels, parent, n_leaves=n, levels=[(lo, hi) for lo, hi in levels])

    def bounded(self, h, lo: int, hi: int) -> tuple[list[int], set[int]]:
        """Level bounds ``lo..hi``: relabel every node standing for levels below ``lo`` (a chain
        of single children) by its level-``lo`` label, and return the start (per leaf, the node of
        its level-``lo`` ancestor) and the nodes a generalization may not reach (lowest level
        above ``hi``)."""
        assert self.levels is not None  # a tree built from a hierarchy knows its nodes' levels
        levels = self.levels
        start = []
        for leaf, _row in enumerate(h.rows):
            x = leaf
            while levels[x][1] < lo:
                x = self.parent[x]
            start.append(x)
        for node, (low, top) in enumerate(levels):
            if low < lo <= top:
                leaf = self.leaves_under(node)[0]
                self.labels[node] = h.rows[leaf][lo]
        above = {node for node, (low, _) in enumerate(levels) if low > hi}
        return start, above

    @classmethod
    def numeric_intervals(cls, h, fanout: int = 2) -> Taxonomy:
        """Adjacent intervals of the sorted distinct values, ``fanout`` per node, up to the root."""
        fanout = max(2, int(fanout))
        leaves = h.leaves
        order = sorted(range(len(leaves)), key=lambda i: float(leaves[i]))
        labels = list(leaves)
        parent = [-1] * len(leaves)
        span = {i: (leaves[i], leaves[i]) for i in range(len(leaves))}
        level = order
        while len(level) > 1:
            nxt = []
            for start in range(0, len(level), fanout):
                group = level[start : start + fanout]
                if len(group) == 1:
                    nxt.append(group[0])
                    continue
                node = len(labels)
                lo, hi = span[group[0]][0], span[group[-1]][1]
                span[node] = (lo, hi)
                labels.append(f"[{lo}, {hi}]")
                parent.append(-1)
                for g in group:
                    parent[g] = node
                nxt.append(node)
            level = nxt
        if labels and len(leaves) > 1:
            labels[level[0]] = "*"
        return cls(h.attribute, labels, parent, n_leaves=len(leaves))


# ------------------------------------------------------------------------------------------------
# the search state


@dataclass
class Step:
    attr: int
    parent: int
    children: list[int]
    info_loss: float
    gain: int
    ip: float
    critical: bool
    anonymity_after: int
    rows_touched: int
    vids_after: int
    candidates: list[tuple[int, int]]


def lm_node_losses(t: Taxonomy, weight: float = 1.0) -> list[float]:
    """Per node of ``t``, its LM loss ``w (M_P - 1) / (M - 1)`` (``M_P`` the leaves under it, ``M``
    all leaves), as :func:`sqlanon.metrics.lm.recoding_losses` computes it for a released value
    (:func:`~sqlanon.metrics.lm.leaf_share_loss`)."""
    under = [0] * len(t.labels)
    for leaf in range(t.n_leaves):
        x = leaf
        while x >= 0:
            under[x] += 1
            x = t.parent[x]
    return [weight * leaf_share_loss(u, t.n_leaves) for u in under]


def _ip(info: float, gain: int) -> float:
    return info / gain if gain > 0 else math.inf


def choice_key(info: float, gain: int, attr: int, parent: int, weight: float = 0.0) -> tuple:
    """The order of generalizations: IP, then I (the paper), then larger P, the lighter attribute
    (with weights), VID order, node id."""
    ip = _ip(info, gain)
    return (round(ip, ROUND) if math.isfinite(ip) else math.inf, round(info, ROUND), -gain, weight, attr, parent)


class BottomUp:
    """Algorithm 1 with the pruning of Section 5, over a :class:`VidTable`."""

    def __init__(self, engine, taxonomies: Sequence[Taxonomy], base_table: str, classes: Sequence[str] | None, K: int, requirement: Requirement, prune: bool = True,
                 start: Sequence[Sequence[int] | None] | None = None, barred: Sequence[set[int]] | None = None, weights: Sequence[float] | None = None,
                 limits: Limits | None = None) -> None:
        """``start`` (per attribute, leaf -> node; None: the leaves) is the first cut (level bounds:
        the min-level cut); ``barred`` (per attribute) the nodes no generalization may produce
        (above the max level); ``weights`` multiply each attribute's ``I(G)`` in ``IP``."""
        self.engine = engine
        self.limits = limits if limits is not None else Limits(None)
        #: without a class every I(G) is 0 (one class has no entropy): no statement computes it
        self.classless = not classes
        #: the time limit ran out before the first state was complete (then only the most
        #: general cut is left to release)
        self.incomplete = False
        self.tax = list(taxonomies)
        self.K = int(K)
        self.requirement = requirement
        self.prune = prune
        self.weights = list(weights) if weights is not None else None
        self.barred = [set(b) for b in barred] if barred is not None else [set() for _ in self.tax]
        self.vids = self._vid_table(engine, classes)
        leaf_nodes = self._start_nodes(start)
        moved = leaf_nodes is not None
        #: with a class and a min-level start: ``{(attr, node): (I, |Rp|)}`` of generalizing the
        #: leaves straight to each start node and to the root (``|Rp| I`` telescopes over the
        #: levels in between), measured on the leaves before the start cut is applied
        self.leaf_info: dict[tuple[int, int], tuple[float, int]] = {}
        if leaf_nodes is not None and classes:
            self._measure_leaf_info(base_table, classes, leaf_nodes)
        self.vid_count0 = self.vids.create(base_table, classes, leaf_nodes)
        self.vid_count = self.vid_count0
        self.cut: list[set[int]] = [set(m) for m in leaf_nodes] if leaf_nodes is not None else [set(range(t.n_leaves)) for t in self.tax]
        self.parents = [list(t.parent) for t in self.tax]
        #: per attribute, how many nodes of the cut carry each label (two nodes with one label are
        #: one released value: then a class can hold several vids)
        self._labels = [Counter(t.labels[x] for x in cut) for t, cut in zip(self.tax, self.cut)]
        self._clashes = sum(n - 1 for c in self._labels for n in c.values())
        self.O = self.vids.count_histogram(self.K)  # the paper's O[i], i < K
        self.info: dict[tuple[int, int], tuple[float, int]] = {}
        self._valid: set[tuple[int, int]] = set()
        self.steps: list[Step] = []
        self.rows_touched = 0
        self.probes = 0
        #: with a class: ``I({leaves} -> root)`` and ``|Rp|`` per attribute (a suppressed row's cost)
        self.root_info: dict[tuple[int, int], tuple[float, int]] = {}
        if not self.incomplete:
            self._first_state(bool(classes) and not moved)

    def _vid_table(self, engine, classes: Sequence[str] | None) -> VidTable:
        """The vid table. Without a class the stopping point is chosen by LM: every vid carries
        its LM (the sum of its values' losses), so a state's LM is one small statement on it."""
        node_loss = [lm_node_losses(t, 1.0 if self.weights is None else self.weights[a]) for a, t in enumerate(self.tax)] if self.classless else None
        return VidTable(engine, len(self.tax), len(classes) if classes else 1, node_loss=node_loss, n_leaves=[t.n_leaves for t in self.tax])

    def _start_nodes(self, start: Sequence[Sequence[int] | None] | None) -> list[list[int]] | None:
        """Per attribute, leaf -> node of the first cut; None when every attribute starts at its leaves."""
        if start is None or not any(m is not None and list(m) != list(range(t.n_leaves)) for m, t in zip(start, self.tax)):
            return None
        return [list(m) if m is not None else list(range(t.n_leaves)) for m, t in zip(start, self.tax)]

    def _measure_leaf_info(self, base_table: str, classes: Sequence[str], leaf_nodes: list[list[int]]) -> None:
        """Fill :attr:`leaf_info` on a vid table of the leaves (dropped after)."""
        self.vids.create(base_table, classes)
        gens = {}
        for a, (m, t) in enumerate(zip(leaf_nodes, self.tax)):
            for p in sorted(set(m)) + ([t.root] if t.children[t.root] else []):
                if p >= t.n_leaves:
                    gens[(a, p)] = (a, p, t.leaves_under(p))
        try:
            self.leaf_info = self._info_loss(list(gens.values()))
        except OutOfTime:
            self.incomplete = True
        self.vids.drop()

    def _first_state(self, root_info: bool) -> None:
        """The valid generalizations of the first cut and their I(G) (and, when ``root_info``,
        every attribute's I({leaves} -> root)); out of time: the search is incomplete."""
        try:
            if root_info:
                self.root_info = self._info_loss([(a, t.root, list(range(t.n_leaves))) for a, t in enumerate(self.tax) if t.children[t.root]])
            self._refresh_valid(range(len(self.tax)))
        except OutOfTime:
            self.incomplete = True

    # -- state ----------------------------------------------------------------------------------
    def _is_valid(self, attr: int, p: int) -> bool:
        return all(c in self.cut[attr] for c in self.tax[attr].children[p])

    def _refresh_valid(self, attrs) -> None:
        new = []
        for a in attrs:
            for p in self.tax[a].internal():
                if p in self.barred[a]:
                    continue
                if (a, p) not in self._valid and p not in self.cut[a] and self._is_valid(a, p):
                    self._valid.add((a, p))
                    if (a, p) not in self.info:
                        new.append((a, p, self.tax[a].children[p]))
        if new:
            self.info.update(self._info_loss(new))

    def _info_loss(self, gens: list) -> dict[tuple[int, int], tuple[float, int]]:
        """``I(G)`` and ``|Rp|`` of ``gens``, :data:`INFO_BATCH` per statement, each sized to the
        time left (:class:`OutOfTime` when none fits); without a class, 0 with no statement."""
        if self.classless:
            return {(a, p): (0.0, 0) for a, p, _ in gens}
        out: dict[tuple[int, int], tuple[float, int]] = {}
        todo = list(gens)
        while todo:
            room = self.limits.room(min(INFO_BATCH, len(todo)))
            if not room:
                raise OutOfTime
            chunk, todo = todo[:room], todo[room:]
            out.update(self.limits.run(len(chunk), lambda: self.vids.info_loss(chunk)))
        return out

    def valid(self) -> list[tuple[int, int]]:
        """Valid generalizations ``(attr, parent)`` in VID then taxonomy order."""
        return sorted(self._valid)

    @property
    def anonymity(self) -> int:
        """A(VID): the smallest a(vid) (from O[i] while it is below K)."""
        small = [c for c, n in self.O.items() if n > 0]
        return min(small) if small else self.vids.min_count()

    def violating_rows(self) -> int:
        return sum(c * n for c, n in self.O.items())

    def k_satisfied(self) -> bool:
        return self.requirement.fits(self.violating_rows())

    def vids_are_classes(self) -> bool:
        """Whether the vids are exactly the classes of the released cut (no two nodes of a cut
        share a label): then the rows a k-anonymity check suppresses are those of the vids below K."""
        return self._clashes == 0

    # -- Step 1 ---------------------------------------------------------------------------------
    def candidates(self) -> list[tuple[int, int]]:
        """Generalizations passing the "only if" condition of Theorem 1 (at most one per level)."""
        A = self.anonymity
        out = []
        children = [t.children for t in self.tax]
        for row in self.vids.candidates(A, self.parents, children, self._valid):
            p = row["p"]
            if row["parents"] == 1 and p is not None and p >= 0 and row["min_k"] > 1 and (row["lvl"], p) in self._valid:
                out.append((row["lvl"], p))
        return out

    # -- Step 2 ---------------------------------------------------------------------------------
    def anonymity_after(self, pr: Probe) -> int:
        """AG(VID) = min(A^n_G, A^o_G), capped at K (A^o_G from O[i] minus the generalized vids)."""
        a_new = pr.min_new if pr.min_new is not None else self.K
        a_old = self.K
        for c in sorted(self.O):
            if self.O[c] - pr.old_hist.get(c, 0) > 0:
                a_old = c
                break
        return min(a_new, a_old, self.K)

    def weighted_info(self, g: tuple[int, int]) -> float:
        """``w_a * I(G)`` for a generalization of attribute ``a`` (``I(G)`` without weights)."""
        info = self.info[g][0]
        return info if self.weights is None else self.weights[g[0]] * info

    def weight_key(self, attr: int) -> float:
        """Tie-break after IP, I and P: the lighter attribute first (0 for all without weights)."""
        return 0.0 if self.weights is None else self.weights[attr]

    def probe(self, attr: int, p: int) -> Probe:
        self.probes += 1
        return self.vids.probe(attr, p, self.tax[attr].children[p], self.K)

    # -- one iteration ----------------------------------------------------------------------------
    def step(self, limits: Limits | None = None, tick=None) -> Step | None:
        """One generalization (None when none is valid, or when ``limits`` run out before its
        statements: then nothing is applied and ``limits.stopped_by`` says so). ``tick(done,
        total)`` is called after each probe (progress on long steps)."""
        valid = self.valid()
        if not valid:
            return None
        limits = limits or Limits(None)
        if not limits.room(1):
            return None
        A = self.anonymity
        cand = limits.run(1, self.candidates) if self.prune else valid
        probes: dict[tuple[int, int], Probe] = {}
        gains: dict[tuple[int, int], int] = {}
        for g in cand:
            if not limits.room(1):  # the clock is read before every probe statement
                return None
            pr = limits.run(1, lambda: self.probe(*g))
            probes[g] = pr
            if tick is not None:
                tick(len(probes), len(cand))
            gains[g] = max(0, self.anonymity_after(pr) - A)
        best = min(valid, key=lambda g: choice_key(self.weighted_info(g), gains.get(g, 0), g[0], g[1], self.weight_key(g[0])))
        probed = probes.get(best)
        if probed is not None:
            self.vids.commit(probed)
            pr = probed
        else:  # chosen without its gain (not a candidate of Theorem 1's test): applied and measured at once
            self.probes += 1
            pr = limits.run(1, lambda: self.vids.apply(best[0], best[1], self.tax[best[0]].children[best[1]], self.K))
        self._applied(pr)
        info, gain = self.weighted_info(best), gains.get(best, 0)
        step = Step(
            attr=best[0], parent=best[1], children=list(self.tax[best[0]].children[best[1]]),
            info_loss=info, gain=gain, ip=_ip(info, gain), critical=gain > 0,
            anonymity_after=self.anonymity, rows_touched=pr.rows_touched,
            vids_after=self.vid_count, candidates=list(cand) if self.prune else [],
        )
        self.steps.append(step)
        return step

    def _applied(self, pr: Probe) -> None:
        """The state after the vid table took ``pr``: O[i], the cut, the valid generalizations."""
        for c, n in pr.old_hist.items():
            self.O[c] = self.O.get(c, 0) - n
            if self.O[c] <= 0:
                del self.O[c]
        for c, n in pr.new_hist.items():
            self.O[c] = self.O.get(c, 0) + n
        a = pr.attr
        labels, names = self._labels[a], self.tax[a].labels
        for c in pr.children:
            self.cut[a].discard(c)
            labels[names[c]] -= 1
            self._clashes -= labels[names[c]] > 0
        self._clashes += labels[names[pr.parent]] > 0
        labels[names[pr.parent]] += 1
        self.cut[a].add(pr.parent)
        self._valid.discard((a, pr.parent))
        self._refresh_valid([a])
        self.rows_touched += pr.rows_touched
        self.vid_count += pr.new_vids - pr.old_vids

    # -- results --------------------------------------------------------------------------------
    def released(self, attr: int) -> list[int]:
        """Per leaf code, the node of the current cut holding it."""
        t = self.tax[attr]
        out = []
        for leaf in range(t.n_leaves):
            x = leaf
            while x not in self.cut[attr]:
                x = t.parent[x]
            out.append(x)
        return out

    def recoding(self) -> Recoding:
        return Recoding.from_values([[self.tax[a].labels[x] for x in self.released(a)] for a in range(len(self.tax))])

    def cut_labels(self, attr: int) -> list[str]:
        t = self.tax[attr]
        seen, out = set(), []
        for x in self.released(attr):
            if x not in seen:
                seen.add(x)
                out.append(t.labels[x])
        return out

    def describe_step(self, s: Step, qis: Sequence[str], number: int) -> dict:
        t = self.tax[s.attr]
        d = {
            "step": number,
            "attribute": qis[s.attr],
            "generalization": "{" + ", ".join("NULL" if t.labels[c] is None else t.labels[c] for c in s.children) + "} -> " + t.labels[s.parent],
            "children": [t.labels[c] for c in s.children],
            "parent": t.labels[s.parent],
            "I": round(s.info_loss, 12),
            "P": s.gain,
            "IP": round(s.ip, 12) if math.isfinite(s.ip) else None,
            "critical": s.critical,
            "A": s.anonymity_after,
            "candidates": [f"{qis[a]}:{self.tax[a].labels[p]}" for a, p in s.candidates],
            "rows_touched": s.rows_touched,
            "vids": s.vids_after,
        }
        return d


# ------------------------------------------------------------------------------------------------
# the planner


def _class_base(ctx):
    """A base frequency set with the class as a key: ``ctx.stats`` when it has one, else one scan."""
    stats = ctx.stats
    class_column = stats.class_column or ctx.options.get("class_column")
    if class_column is None:
        return stats.base.table, None
    if not stats.has_y or stats.class_column != class_column:
        stats = Statistics(ctx.engine, ctx.source, ctx.qis, ctx.hierarchies, class_column=class_column, needs=ClassNeeds(majority_y=True),
                           nulls=dict(zip(ctx.qis, ctx.stats.null_modes)))
        stats.prepare()
    classes = [str(r[0]) for r in ctx.engine.fetch_all(class_values_query(stats.base.table))]
    return stats.base.table, classes


def _int_option(options: dict, key: str, default: int) -> int:
    value = options.get(key, default)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"search option {key!r} must be a whole number, got {value!r}") from None


def _most_general(search: BottomUp) -> list[set[int]]:
    """Per attribute, the most general cut the search may reach (the root, or under a max level
    the highest nodes below it)."""
    cuts = []
    for t, barred in zip(search.tax, search.barred):
        cut = set()
        for leaf in range(t.n_leaves):
            x = leaf
            while t.parent[x] >= 0 and t.parent[x] not in barred:
                x = t.parent[x]
            cut.add(x)
        cuts.append(cut)
    return cuts


def _k(ctx: SearchContext) -> int:
    """K: the requirement's k (1 without models)."""
    K = int(ctx.requirement.k)
    if K < 1:
        raise ConfigError(f"k must be >= 1 for the bottom-up search, got {K}")
    return K


def _bounded_start(ctx, taxonomies: list[Taxonomy], bounds) -> tuple[list[list[int] | None], list[set[int]]]:
    """Level bounds: per attribute the min-level start cut and the nodes above the max level."""
    refuse_levelless(ctx, "bottom-up", [i for i, t in enumerate(taxonomies) if t.levels is None])
    start: list[list[int] | None] = []
    barred: list[set[int]] = []
    for t, h, (lo, hi) in zip(taxonomies, ctx.hierarchies, bounds):
        if t.levels is None:
            start.append(None)
            barred.append(set())
            continue
        first, above = t.bounded(h, lo, hi)
        start.append(first)
        barred.append(above)
    return start, barred


def _suppression_cost(search: BottomUp, weights) -> tuple[float, float]:
    """What a suppressed row costs (suppression is never free): with a class column, the entropy
    loss of generalizing the row to the root in every QI (per row, sum over QIs of I({leaves} ->
    root)), so the information loss of suppressing everything equals that of releasing everything
    at the root; without a class column (or when the class carries no information about the QIs)
    I(G) is 0 everywhere and the stopping point is chosen by Iyengar's LM instead (a suppressed
    row counts 1 in every QI). Returns ``(start loss, per-row cost)``; the start loss is that of
    generalizing the leaves to a min-level start cut."""
    def w(a: int) -> float:
        return 1.0 if weights is None else weights[a]

    start_loss = 0.0
    if search.leaf_info:
        full = {(a, t.root): search.leaf_info[(a, t.root)] for a, t in enumerate(search.tax) if (a, t.root) in search.leaf_info}
        start_loss = sum(w(a) * search.leaf_info[(a, p)][0] * search.leaf_info[(a, p)][1] for a, cut in enumerate(search.cut) for p in cut if (a, p) in search.leaf_info)
    else:
        full = search.root_info
    per_row = sum(info * w(a) for (a, _), (info, _) in full.items())
    return start_loss, per_row


class _Walk:
    """The walk of a bottom-up run: generalize in IP order until the budget is met, then keep
    going while suppression remains, scoring every state within the budget; the best (cheapest
    generalization + suppression) is ``(cost, steps, cut, suppressed, generalization loss)``."""

    def __init__(self, ctx: SearchContext, search: BottomUp, limits: Limits, K: int, use_lm: bool, per_row: float, start_loss: float) -> None:
        self.ctx, self.search, self.limits = ctx, search, limits
        self.K, self.use_lm, self.per_row = K, use_lm, per_row
        self.weights = ctx.weights
        self.requirement = ctx.requirement
        self.ok = ctx.requirement.predicate()
        models = list(ctx.requirement.models)
        #: k-anonymity with the search's K alone: a state's suppressed rows are those of the vids
        #: below K (the search's O[i]) and its LM is summed on the vid table
        self.k_only = len(models) == 1 and isinstance(models[0], KAnonymity) and models[0].k == K
        self.rows = ctx.stats.rows
        self.metric_name = "lm" if use_lm else "information_loss"
        self.trace = bool(ctx.options.get("trace"))
        self.trace_rows: list[dict] = []
        self.loss = start_loss
        self.best: tuple | None = None
        self.explored = 0
        self.said = limits.elapsed()

    def consider(self) -> int:
        """Score the current cut if it fits the budget and releases something; return its
        suppressed rows."""
        stats, search = self.ctx.stats, self.search
        if self.k_only and search.vids_are_classes() and (search.vids.node_loss is not None or not self.use_lm):
            # the vids are the classes: no statement on the base set
            ns: NodeStats | SimpleNamespace = SimpleNamespace(suppressed=search.violating_rows(), extra={})
            if self.use_lm and self.requirement.fits(ns.suppressed, self.rows):
                ns.extra["lm_released"] = search.vids.lm_released(self.K)
        else:
            recoding = search.recoding()
            aggs = lm_recoding_aggregates(stats, recoding, self.weights) if self.use_lm else ()
            ns = stats.evaluate(recoding, self.ok, aggs)
        if not self.requirement.fits(ns.suppressed, self.rows):
            return ns.suppressed
        cost = lm_recoding_value(stats, ns, self.weights) if self.use_lm else (self.loss + ns.suppressed * self.per_row) / self.rows
        if self.best is None or cost < self.best[0] - 1e-12:
            self.best = (cost, len(search.steps), [set(c) for c in search.cut], ns.suppressed, self.loss / self.rows)
        return ns.suppressed

    def tick(self, probed: int = 0, candidates: int = 0) -> None:
        """A progress line every few seconds, within long steps too."""
        now = self.limits.elapsed()
        if now - self.said < 5.0:
            return
        self.said = now
        search = self.search
        within = f" (step {self.explored + 1}: {probed} of {candidates} candidates probed)" if candidates else ""
        self.ctx.progress(f"bottom-up: {self.explored} steps in {now:.0f} s{within}, A(VID) = {search.anonymity} (K = {self.K}), "
                          f"{search.violating_rows():,} rows in vids below K (budget {self.requirement.budget:,}), {search.vid_count:,} vids"
                          + (f", best {self.metric_name} {self.best[0]:.6g}" if self.best is not None else ""))

    def walk(self) -> None:
        search, limits = self.search, self.limits
        while not search.incomplete:
            if search.k_satisfied() and limits.room(1) and limits.run(1, self.consider) == 0:
                break  # nothing suppressed: any further step only adds loss
            try:
                s = search.step(limits, self.tick)
            except OutOfTime:  # applied, but the new generalizations' I(G) is missing: stop here
                break
            if s is None:
                break
            self.explored += 1
            self.tick()
            self.loss += search.weighted_info((s.attr, s.parent)) * search.info[(s.attr, s.parent)][1]
            self._record(s)

    def _record(self, s: Step) -> None:
        """The step in the trace (and on stderr with ``trace``)."""
        d = self.search.describe_step(s, self.ctx.qis, len(self.search.steps))
        self.trace_rows.append(d)
        self.ctx.trace(d)
        if self.trace:
            self.ctx.progress(
                f"step {d['step']}: {d['attribute']} {d['generalization']}  I={d['I']:.6g} P={d['P']} "
                f"IP={'inf' if d['IP'] is None else format(d['IP'], '.6g')}  A(VID)={d['A']}"
            )

    def most_general(self) -> None:
        """Out of time before the budget was met: score the most general cut the search may reach."""
        stats, search, rows = self.ctx.stats, self.search, self.rows
        search.cut = _most_general(search)
        recoding = search.recoding()
        aggs = lm_recoding_aggregates(stats, recoding, self.weights) if self.use_lm else ()
        ns = stats.evaluate(recoding, self.ok, aggs)
        if self.requirement.fits(ns.suppressed, rows):
            cost = lm_recoding_value(stats, ns, self.weights) if self.use_lm else self.per_row * (rows + ns.suppressed) / rows
            self.best = (cost, len(search.steps), [set(c) for c in search.cut], ns.suppressed, self.per_row if not self.use_lm else 0.0)

    def unsatisfiable(self, bounds) -> UnsatisfiableError:
        """No state within the budget: the error naming the classes at fault at the last cut."""
        recoding = self.search.recoding()
        self.search.vids.drop()
        scope = "(bottom-up, every quasi-identifier generalized as far as " + ("its --max-level allows)" if bounds is not None else "it goes)")
        if self.limits.stopped_by:
            scope = f"(bottom-up, stopped by its time limit after {self.explored} steps)"
        return unsatisfiable(self.ctx.stats, self.ctx.requirement, recoding, qis=self.ctx.qis, scope=scope,
                             label="the most general cut bottom-up reached")


def _plan(walk: _Walk, best: tuple, stopped_by: str, bounds) -> Plan:
    """Release the best state: its cut, what it suppresses, and what the run reports."""
    ctx, search, limits, weights = walk.ctx, walk.search, walk.limits, walk.weights
    cost, chosen_steps, cut, _, gen_loss = best
    search.cut = cut
    recoding = search.recoding()
    ns = ctx.stats.evaluate(recoding, walk.ok)
    extra = {
        "steps": chosen_steps,
        "steps_explored": walk.explored,
        "vids": search.vid_count0,
        "vids_final": search.vids.size(),
        "probes": search.probes,
        "rows_touched": search.rows_touched,
        "search_seconds": round(limits.elapsed(), 3),
        "stopped_by": stopped_by,
        "time_limit": limits.time_limit,
        "suppressed_row_cost": (1.0 if weights is None else sum(weights) / len(weights)) if walk.use_lm else walk.per_row,
        "generalization_loss": gen_loss,
    }
    if weights is not None:
        extra["weights"] = dict(zip(ctx.qis, weights))
    if bounds is not None:
        extra["level_bounds"] = {q: list(b) for q, b in zip(ctx.qis, bounds)}
    if walk.trace:
        extra["trace"] = walk.trace_rows[:chosen_steps]
        if walk.explored > chosen_steps:
            extra["trace_explored"] = walk.trace_rows[chosen_steps:]
    search.vids.drop()
    return Plan(
        search="bottom-up",
        qis=list(ctx.qis),
        recoding=recoding,
        transformation={q: search.cut_labels(i) for i, q in enumerate(ctx.qis)},
        requirement=ctx.requirement,
        rows=walk.rows,
        suppressed_rows=ns.suppressed,
        metric_name=walk.metric_name,
        metric_value=cost,
        node=None,
        nodes_evaluated=search.probes,
        extra=extra,
    )


def run(ctx: SearchContext) -> Plan:
    options = ctx.options
    time_limit = options.get("time_limit")
    limits = Limits(float(time_limit) if time_limit is not None else None)  # the vids and every step count
    K = _k(ctx)
    fanout = _int_option(options, "numeric_fanout", 2)
    prune = str(options.get("pruning", "true")).lower() not in ("false", "0", "no", "off")
    taxonomies = [Taxonomy.from_hierarchy(h, fanout) for h in ctx.hierarchies]
    weights = ctx.weights
    bounds = ctx.bounds
    start, barred = _bounded_start(ctx, taxonomies, bounds) if bounds is not None else (None, None)
    base_table, classes = _class_base(ctx)
    if classes is None:
        ctx.progress("bottom-up: no --class-column, so I(G) = 0 and generalizations are chosen by anonymity gain")
    search = BottomUp(ctx.engine, taxonomies, base_table, classes, K, ctx.requirement, prune=prune, start=start, barred=barred, weights=weights, limits=limits)
    ctx.progress(f"bottom-up: {search.vid_count0:,} vids, A(VID) = {search.anonymity}, K = {K}"
                 + (", out of time before its first state" if search.incomplete else ""))
    start_loss, per_row = _suppression_cost(search, weights)
    use_lm = classes is None or per_row <= 1e-12
    walk = _Walk(ctx, search, limits, K, use_lm, per_row, start_loss)
    walk.walk()
    stopped_by = limits.stopped_by or "done"
    ctx.progress(f"bottom-up: stopped by {stopped_by} after {walk.explored} steps, {search.probes} probes in {limits.elapsed():.1f} s")
    if walk.best is None and limits.stopped_by and (use_lm or bounds is None):
        walk.most_general()
    if walk.best is None:
        raise walk.unsatisfiable(bounds)
    return _plan(walk, walk.best, stopped_by, bounds)
