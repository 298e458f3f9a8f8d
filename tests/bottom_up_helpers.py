"""Shared helpers for the bottom-up tests: tiny contexts and a slow pure-Python bottom-up search."""

from __future__ import annotations

import math
import random
from collections import Counter

import pyarrow as pa

from sqlanon.engine import connect
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.privacy import KAnonymity, Requirement
from sqlanon.search.bottom_up.planner import Taxonomy, choice_key
from sqlanon.search.context import SearchContext
from sqlanon.engine.source import Source
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.stats import Statistics

# ------------------------------------------------------------------------------------------------
# Example 1 / Figures 1-2 of the paper (Workclass above f3 is read from the garbled figure: only
# f3 = {c3, d3} matters, and that neither g3 nor ANY is valid at the start)

EX1_HIERARCHIES = {
    "Relationship": [["a1", "e1", "ANY"], ["b1", "e1", "ANY"], ["c1", "f1", "ANY"], ["d1", "f1", "ANY"]],
    "Race": [["a2", "e2", "ANY"], ["b2", "e2", "ANY"], ["c2", "f2", "ANY"], ["d2", "f2", "ANY"]],
    "Workclass": [
        ["a3", "a3", "g3", "ANY"],
        ["b3", "b3", "g3", "ANY"],
        ["c3", "f3", "g3", "ANY"],
        ["d3", "f3", "g3", "ANY"],
        ["e3", "e3", "e3", "ANY"],
    ],
}

# Figure 1: vid, a(vid), Y, N
EX1_VIDS = [
    (("c1", "b2", "a3"), 0, 4),
    (("c1", "b2", "c3"), 0, 4),
    (("c1", "b2", "d3"), 0, 3),
    (("c1", "c2", "a3"), 2, 1),
    (("c1", "c2", "b3"), 2, 2),
    (("d1", "c2", "b3"), 4, 0),
    (("d1", "c2", "e3"), 2, 0),
    (("d1", "d2", "b3"), 2, 1),
    (("d1", "d2", "e3"), 2, 0),
]


def example1_rows() -> list[tuple]:
    rows = []
    for vid, y, n in EX1_VIDS:
        rows += [vid + ("Y",)] * y + [vid + ("N",)] * n
    return rows


def make_ctx(rows, columns, hierarchies: dict, k: int, class_column: str | None = "cls", budget: int = 0, options=None, class_in_stats: bool = False):
    """Register ``rows`` as a table in a fresh in-memory DuckDB and build a prepared context."""
    engine = connect(database=":memory:")
    data = {c: pa.array([str(r[i]) for r in rows], pa.string()) for i, c in enumerate(columns)}
    engine.register_arrow("data", pa.table(data))
    source = Source(kind="table", table="data")
    qis = list(hierarchies)
    hs = [h if isinstance(h, Hierarchy) else Hierarchy(attribute=q, rows=h) for q, h in hierarchies.items()]
    needs = ClassNeeds(majority_y=class_in_stats)
    stats = Statistics(engine, source, qis, hs, class_column=class_column, needs=needs)
    stats.prepare()
    req = Requirement([KAnonymity(k)], budget=budget)
    return SearchContext(stats, req, None, dict(options or {}))


# ------------------------------------------------------------------------------------------------
# random data


def random_hierarchy(rng: random.Random, name: str, n_leaves: int, depth: int) -> list[list[str]]:
    leaves = [f"{name}{i}" for i in range(n_leaves)]
    rows = [[leaf] for leaf in leaves]
    groups = list(range(n_leaves))  # current group id per leaf
    for level in range(1, depth):
        distinct = sorted(set(groups))
        n_up = max(1, rng.randint(1, max(1, len(distinct) - 1)))
        up = {g: rng.randrange(n_up) for g in distinct}
        groups = [up[g] for g in groups]
        for r, g in zip(rows, groups):
            r.append(f"{name}L{level}_{g}")
    for r in rows:
        r.append("*")
    return rows


def random_case(seed: int):
    rng = random.Random(seed)
    n_attrs = rng.randint(2, 4)
    hier = {}
    for a in range(n_attrs):
        hier[f"a{a}"] = random_hierarchy(rng, f"v{a}_", rng.randint(2, 6), rng.randint(1, 3))
    n_rows = rng.randint(20, 120)
    n_cls = rng.randint(2, 3)
    weights = {a: [rng.random() ** 2 + 0.01 for _ in h] for a, h in hier.items()}
    rows = []
    for _ in range(n_rows):
        vals = tuple(rng.choices([r[0] for r in h], weights[a])[0] for a, h in hier.items())
        rows.append(vals + (f"c{rng.randrange(n_cls)}",))
    k = rng.randint(2, 8)
    return rows, list(hier) + ["cls"], hier, k


# ------------------------------------------------------------------------------------------------
# a slow, independent bottom-up search over raw rows


def _entropy(counter: Counter) -> float:
    n = sum(counter.values())
    return -sum(v / n * math.log2(v / n) for v in counter.values() if v) if n else 0.0


def naive_info_loss(rows, tax: Taxonomy, attr: int, p: int) -> tuple[float, int]:
    """I(G) straight from the definition, over the raw rows."""
    leaf_index = {lab: i for i, lab in enumerate(tax.labels[: tax.n_leaves])}
    child_of = {}
    for c in tax.children[p]:
        for leaf in tax.leaves_under(c):
            child_of[leaf] = c
    rc: dict[int, Counter] = {}
    rp = Counter()
    for r in rows:
        leaf = leaf_index[r[attr]]
        if leaf in child_of:
            rc.setdefault(child_of[leaf], Counter())[r[-1]] += 1
            rp[r[-1]] += 1
    n = sum(rp.values())
    if not n:
        return 0.0, 0
    return _entropy(rp) - sum(sum(c.values()) / n * _entropy(c) for c in rc.values()), n


class NaiveBottomUp:
    """Algorithm 1 without pruning: IP(G) for every valid G by re-counting the raw rows."""

    def __init__(self, rows, taxes: list[Taxonomy], K: int, budget: int = 0) -> None:
        self.rows, self.tax, self.K, self.budget = rows, taxes, K, budget
        self.cut = [set(range(t.n_leaves)) for t in taxes]
        self.leaf_index = [{lab: i for i, lab in enumerate(t.labels[: t.n_leaves])} for t in taxes]

    def node_of(self, a: int, leaf: int, cut=None) -> int:
        cut = cut if cut is not None else self.cut[a]
        x = leaf
        while x not in cut:
            x = self.tax[a].parent[x]
        return x

    def counts(self, cuts=None) -> Counter:
        cuts = cuts or self.cut
        return Counter(
            tuple(self.node_of(a, self.leaf_index[a][r[a]], cuts[a]) for a in range(len(self.tax))) for r in self.rows
        )

    def anonymity(self, cuts=None) -> int:
        return min(self.counts(cuts).values())

    def valid(self):
        return [
            (a, p)
            for a, t in enumerate(self.tax)
            for p in t.internal()
            if p not in self.cut[a] and all(c in self.cut[a] for c in t.children[p])
        ]

    def after(self, g) -> list[set]:
        a, p = g
        cuts = [set(c) for c in self.cut]
        cuts[a] -= set(self.tax[a].children[p])
        cuts[a].add(p)
        return cuts

    def gains(self) -> dict:
        A = self.anonymity()
        return {g: min(self.anonymity(self.after(g)), self.K) - A for g in self.valid()}

    def violating(self) -> int:
        return sum(n for n in self.counts().values() if n < self.K)

    def run(self) -> list[tuple]:
        seq = []
        while self.violating() > self.budget:
            valid = self.valid()
            if not valid:
                return seq + [None]
            gains = self.gains()
            infos = {g: naive_info_loss(self.rows, self.tax[g[0]], g[0], g[1])[0] for g in valid}
            best = min(valid, key=lambda g: choice_key(infos[g], max(gains[g], 0), g[0], g[1]))
            seq.append((best, round(infos[best], 9), gains[best]))
            self.cut = self.after(best)
        return seq


def naive_full_loss(rows, tax: Taxonomy, attr: int) -> float:
    """I({every leaf} -> root) of one attribute: H(class) - sum_leaf |R_leaf|/N H(class | leaf)."""
    by_leaf: dict[str, Counter] = {}
    for r in rows:
        by_leaf.setdefault(r[attr], Counter())[r[-1]] += 1
    n = len(rows)
    return _entropy(Counter(r[-1] for r in rows)) - sum(sum(c.values()) / n * _entropy(c) for c in by_leaf.values())


def naive_best_stop(rows, taxes: list[Taxonomy], K: int, budget: int) -> tuple[int, float]:
    """The suppression-aware stopping rule, from the definition: run Algorithm 1 to k without
    suppression, score every prefix whose classes < K fit the budget (and release a row) as
    (sum |Rp| I(G) + suppressed * sum_a I_a(leaves -> root)) / N; the cheapest prefix wins
    (the first on ties). Returns (prefix length, cost)."""
    full = NaiveBottomUp(rows, taxes, K, 0)
    per_row = sum(naive_full_loss(rows, t, a) for a, t in enumerate(taxes))
    n = len(rows)
    best = None
    loss = 0.0
    step = 0
    while True:
        suppressed = full.violating()
        if suppressed <= budget and suppressed < n:
            cost = (loss + suppressed * per_row) / n
            if best is None or cost < best[1] - 1e-12:
                best = (step, cost)
            if suppressed == 0:
                break
        valid = full.valid()
        if not valid:
            break
        gains = full.gains()
        infos = {g: naive_info_loss(rows, full.tax[g[0]], g[0], g[1]) for g in valid}
        g = min(valid, key=lambda g: choice_key(infos[g][0], max(gains[g], 0), g[0], g[1]))
        loss += infos[g][0] * infos[g][1]
        full.cut = full.after(g)
        step += 1
    return best
