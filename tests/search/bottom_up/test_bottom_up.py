"""Bottom-up generalization (Wang, Yu, Chakraborty 2004): the paper's example, oracles, releases."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from sqlanon.errors import UnsatisfiableError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.privacy import Requirement
from sqlanon.search.bottom_up import planner as bottom_up
from sqlanon.search.bottom_up.planner import BottomUp, Taxonomy, _class_base
from sqlanon.search.bottom_up.stats import VidTable

from bottom_up_helpers import (
    EX1_HIERARCHIES,
    EX1_VIDS,
    NaiveBottomUp,
    example1_rows,
    make_ctx,
    naive_best_stop,
    naive_info_loss,
    random_case,
)

EX1_COLUMNS = ["Relationship", "Race", "Workclass", "cls"]


def _search(ctx, K, prune=True, budget=0):
    taxes = [Taxonomy.from_hierarchy(h) for h in ctx.hierarchies]
    base, classes = _class_base(ctx)
    return BottomUp(ctx.engine, taxes, base, classes, K, Requirement([], budget=budget), prune=prune), taxes


def _labels(taxes, vid):
    return "".join(t.labels[x] for t, x in zip(taxes, vid))


# ------------------------------------------------------------------------------------------------
# Example 1 and Figures 1-2


@pytest.fixture(scope="module")
def example1():
    ctx = make_ctx(example1_rows(), EX1_COLUMNS, EX1_HIERARCHIES, 3)
    return ctx


def test_example1_vid_table_is_figure1(example1):
    search, taxes = _search(example1, 3)
    got = {_labels(taxes, r[:3]): (r[4], r[3], r[5]) for r in search.vids.rows()}  # classes sorted: N, Y
    want = {"".join(v): (y, n, y + n) for v, y, n in EX1_VIDS}
    assert got == want


def test_example1_initial_state(example1):
    search, taxes = _search(example1, 3)
    valid = {taxes[a].labels[p] for a, p in search.valid()}
    assert valid == {"e1", "f1", "e2", "f2", "f3"}
    assert search.anonymity == 2
    assert {_labels(taxes, v) for v in search.vids.anonymity_vids(2)} == {"d1c2e3", "d1d2e3"}


def test_example1_first_generalization_is_f2(example1):
    search, taxes = _search(example1, 3)
    # Theorem 1: only f1 and f2 pass the segment test; f1 is not critical, f2 is
    assert {taxes[a].labels[p] for a, p in search.candidates()} == {"f1", "f2"}
    step = search.step()
    assert (step.attr, taxes[1].labels[step.parent]) == (1, "f2")
    assert sorted(taxes[1].labels[c] for c in step.children) == ["c2", "d2"]
    assert step.critical and step.gain == 1 and step.anonymity_after == 3
    counts = {_labels(taxes, r[:3]): r[-1] for r in search.vids.rows()}
    assert counts["d1f2e3"] == 4 and counts["d1f2b3"] == 7
    assert counts["c1f2a3"] == 3 and counts["c1f2b3"] == 4
    assert search.k_satisfied()


def test_example1_figure2_segments(example1):
    search, taxes = _search(example1, 3)
    vt: VidTable = search.vids

    def segs(attr, label):
        t = taxes[attr]
        got = vt.segments(attr, t.children[t.node(label)])
        return sorted(
            ("".join(taxes[i].labels[x] for i, x in enumerate(prefix)), "".join(t.labels[c] for c in members))
            for prefix, members in got.items()
        )

    assert segs(0, "f1") == [("", "c1d1")]  # level 1: {c1, d1}
    assert segs(1, "f2") == [("c1", "c2"), ("d1", "c2d2")]  # level 2: {c1c2}, {d1c2, d1d2}
    assert segs(2, "f3") == [("c1b2", "c3d3")]  # level 3: {c1b2c3, c1b2d3}
    # Observation 1: the anonymity vids sit in the size-2 segments of f1 and f2, not of f3
    cands = {row["lvl"]: row for row in vt.candidates(2, search.parents, [t.children for t in taxes])}
    assert cands[0]["min_k"] == 2 and cands[1]["min_k"] == 2
    assert cands[0]["p"] == taxes[0].node("f1") and cands[1]["p"] == taxes[1].node("f2")
    assert cands[2]["p"] != taxes[2].node("f3")  # e3 is not under f3: no segment of f3 holds them


def test_example1_run_plan(example1):
    plan = bottom_up.run(example1)
    assert plan.extra["steps"] == 1
    assert plan.transformation["Race"] == ["a2", "b2", "f2"]
    assert plan.transformation["Relationship"] == ["a1", "b1", "c1", "d1"]
    assert plan.suppressed_rows == 0
    _check_release(example1_rows(), plan, 3, example1.hierarchies)


# ------------------------------------------------------------------------------------------------
# taxonomy


def test_taxonomy_collapses_single_child_chains():
    h = Hierarchy("edu", [["Pre", "Primary School", "Primary education", "*"], ["1st", "Primary School", "Primary education", "*"], ["HS", "High", "Secondary", "*"], ["HS2", "High", "Secondary", "*"], ["Col", "Col", "Higher", "*"]])
    t = Taxonomy.from_hierarchy(h)
    # Primary School == Primary education (same leaves): one node, lowest label; Col/Higher too
    assert sorted(t.labels[c] for c in t.children[t.root]) == ["Col", "High", "Primary School"]
    assert t.labels[t.parent[t.node("HS")]] == "High"
    assert len(t.internal()) == 3  # Primary School, High, *


def test_numeric_flat_hierarchy_becomes_intervals():
    h = Hierarchy("age", [[str(v), "*"] for v in (30, 17, 45, 22, 60)], numeric=True)
    t = Taxonomy.from_hierarchy(h, fanout=2)
    assert t.labels[t.root] == "*"
    first = t.parent[t.node("17")]
    assert t.labels[first] == "[17, 22]" and sorted(t.labels[c] for c in t.children[first]) == ["17", "22"]
    for node in t.internal():  # adjacent intervals: leaves under a node are contiguous in value
        vals = sorted(float(t.labels[x]) for x in t.leaves_under(node))
        everything = sorted(float(v) for v in t.labels[: t.n_leaves])
        i = everything.index(vals[0])
        assert everything[i : i + len(vals)] == vals


# ------------------------------------------------------------------------------------------------
# oracles on random data


def _check_release(rows, plan, k, hierarchies, budget=0):
    """Independent re-check: apply the plan's per-leaf released values to the raw rows."""
    released = [dict(zip(h.leaves, plan.recoding.values(i))) for i, h in enumerate(hierarchies)]
    classes = Counter(tuple(released[i][r[i]] for i in range(len(plan.qis))) for r in rows)
    bad = sum(n for n in classes.values() if n < k)
    assert bad == plan.suppressed_rows
    assert bad <= budget
    # the released values are the plan's cut
    for i, q in enumerate(plan.qis):
        assert set(released[i].values()) == set(plan.transformation[q])


@pytest.mark.parametrize("seed", range(20))
def test_pruned_greedy_matches_naive_greedy(seed):
    rows, columns, hier, k = random_case(seed)
    ctx = make_ctx(rows, columns, hier, k)
    search, taxes = _search(ctx, k)
    naive = NaiveBottomUp(rows, taxes, k)
    # I(G) by SQL == I(G) from its definition over the raw rows
    for (a, p), (info, rp) in search.info.items():
        want, n = naive_info_loss(rows, taxes[a], a, p)
        assert math.isclose(info, want, abs_tol=1e-9) and rp == n
    want_seq = naive.run()
    assert want_seq and want_seq[-1] is not None or not want_seq
    got = []
    replay = NaiveBottomUp(rows, taxes, k)
    while not search.k_satisfied():
        # Theorem 1: every critical generalization passes the segment test
        critical = {g for g, gain in replay.gains().items() if gain > 0}
        assert critical <= set(search.candidates())
        step = search.step()
        assert step is not None
        got.append(((step.attr, step.parent), round(step.info_loss, 9), step.gain))
        replay.cut = replay.after((step.attr, step.parent))
        assert step.anonymity_after == replay.anonymity()
    assert [g for g, _, _ in got] == [g for g, _, _ in want_seq]
    assert [p for _, _, p in got] == [p for _, _, p in want_seq]
    for (_, i1, _), (_, i2, _) in zip(got, want_seq):
        assert math.isclose(i1, i2, abs_tol=1e-8)


@pytest.mark.parametrize("seed", range(4))
def test_pruning_does_not_change_the_sequence(seed):
    rows, columns, hier, k = random_case(100 + seed)
    ctx = make_ctx(rows, columns, hier, k)
    a, _ = _search(ctx, k, prune=True)
    b, _ = _search(ctx, k, prune=False)
    seq_a, seq_b = [], []
    while not a.k_satisfied():
        s = a.step()
        seq_a.append((s.attr, s.parent, s.gain))
    while not b.k_satisfied():
        s = b.step()
        seq_b.append((s.attr, s.parent, s.gain))
    assert seq_a == seq_b
    assert a.probes <= b.probes


@pytest.mark.parametrize("seed,budget", [(200, 0), (201, 5), (202, 10), (203, 3), (204, 0)])
def test_run_releases_are_k_anonymous(seed, budget):
    rows, columns, hier, k = random_case(seed)
    ctx = make_ctx(rows, columns, hier, k, budget=budget, options={"trace": True})
    plan = bottom_up.run(ctx)
    _check_release(rows, plan, k, ctx.hierarchies, budget)
    assert plan.extra["steps"] == len(plan.extra["trace"])
    steps, cost = naive_best_stop(rows, [Taxonomy.from_hierarchy(h) for h in ctx.hierarchies], k, budget)
    assert plan.extra["steps"] == steps
    assert plan.metric_name == "information_loss" and math.isclose(plan.metric_value, cost, rel_tol=1e-9, abs_tol=1e-12)
    if budget == 0:
        naive = NaiveBottomUp(rows, [Taxonomy.from_hierarchy(h) for h in ctx.hierarchies], k, budget)
        assert len(naive.run()) == plan.extra["steps"]
    for step in plan.extra["trace"]:
        assert step["IP"] is None or math.isclose(step["IP"], step["I"] / step["P"], rel_tol=1e-9)


def test_suppression_is_never_free():
    """A budget of every row used to stop at step 0, suppress everything and report loss 0."""
    rows, columns, hier, k = random_case(7)
    full = bottom_up.run(make_ctx(rows, columns, hier, k))
    for class_column in ("cls", None):
        loose = bottom_up.run(make_ctx(rows, columns, hier, k, budget=len(rows), class_column=class_column))
        assert loose.suppressed_rows < len(rows)
        assert loose.metric_value > 0
        assert loose.metric_name == ("information_loss" if class_column else "lm")
        assert loose.extra["steps"] <= full.extra["steps"]
    loose = bottom_up.run(make_ctx(rows, columns, hier, k, budget=len(rows)))
    steps, cost = naive_best_stop(rows, [Taxonomy.from_hierarchy(h) for h in make_ctx(rows, columns, hier, k).hierarchies], k, len(rows))
    assert loose.extra["steps"] == steps and math.isclose(loose.metric_value, cost, rel_tol=1e-9)
    # the cost of the chosen plan is never above the plan without suppression
    assert loose.metric_value <= full.metric_value + 1e-12


def test_class_from_statistics_or_own_scan_agree():
    rows, columns, hier, k = random_case(11)
    a = bottom_up.run(make_ctx(rows, columns, hier, k, class_in_stats=True))
    b = bottom_up.run(make_ctx(rows, columns, hier, k, class_in_stats=False))
    assert a.transformation == b.transformation


def test_unsatisfiable_when_k_exceeds_rows():
    rows, columns, hier, _ = random_case(3)
    ctx = make_ctx(rows, columns, hier, len(rows) + 1)
    with pytest.raises(UnsatisfiableError):
        bottom_up.run(ctx)


def test_without_class_column_still_reaches_k():
    rows, columns, hier, k = random_case(5)
    ctx = make_ctx(rows, columns, hier, k, class_column=None)
    plan = bottom_up.run(ctx)
    _check_release(rows, plan, k, ctx.hierarchies)


def _both_paths(monkeypatch):
    """Make every ``_Walk.consider`` score the state twice: from the vid table (k-anonymity alone,
    labels unique: O[i] and the vids' LM) and from the base set (a statement per state); the
    two must agree. Returns the list of (fast path taken, suppressed) per state."""
    seen = []
    original = bottom_up._Walk.consider

    def both(walk):
        before = walk.best
        fast = walk.k_only and walk.search.vids_are_classes()
        got = original(walk)
        fast_best, walk.best = walk.best, before
        walk.k_only = False
        try:
            want = original(walk)
        finally:
            walk.k_only = True
        assert got == want
        assert (fast_best is None) == (walk.best is None)
        if fast_best is not None:
            assert math.isclose(fast_best[0], walk.best[0], rel_tol=1e-12, abs_tol=1e-12)
            assert fast_best[1:4] == walk.best[1:4]
        seen.append((fast, got))
        return got

    monkeypatch.setattr(bottom_up._Walk, "consider", both)
    return seen


@pytest.mark.parametrize("seed,share,weighted,bounded", [(300, 0.0, False, False), (301, 0.3, False, False), (302, 1.0, False, False), (303, 0.5, True, False),
                                                          (304, 1.0, True, False), (305, 1.0, False, False), (306, 1.0, False, True), (307, 0.5, True, True)])
def test_states_scored_on_the_vids_match_the_base_set(seed, share, weighted, bounded, monkeypatch):
    """Without a class column every state's LM and suppressed rows come from the vid table; they
    equal the base set's (one statement per state), with and without attribute weights and a
    min-level start cut."""
    rows, columns, hier, k = random_case(seed)
    ctx = make_ctx(rows, columns, hier, k, class_column=None, budget=int(share * len(rows)))
    if weighted:
        ctx.weights = [0.25 + 0.75 * (i % 2) for i in range(len(hier))]
    if bounded:
        ctx.bounds = [(1 if h.max_level >= 2 else 0, h.max_level) for h in ctx.hierarchies]
        assert any(lo for lo, _ in ctx.bounds)
    seen = _both_paths(monkeypatch)
    plan = bottom_up.run(ctx)
    assert seen and all(fast for fast, _ in seen)
    assert ("level_bounds" in plan.extra) == bounded
    _check_release(rows, plan, k, ctx.hierarchies, budget=int(share * len(rows)))


def test_a_label_shared_by_two_nodes_scores_on_the_base_set(monkeypatch):
    """Leaf ``m`` and the group ``m`` of {p, q} are one released value: once both are in the cut
    the vids are not the classes, and that state is scored on the base set."""
    h = [["m", "g1", "*"], ["n", "g1", "*"], ["p", "m", "*"], ["q", "m", "*"]]
    rows = [("m", "x", "c")] * 3 + [("p", "x", "c"), ("q", "x", "c")]
    ctx = make_ctx(rows, ["a", "b", "cls"], {"a": h, "b": [["x", "*"]]}, 2, class_column=None, budget=len(rows))
    seen = _both_paths(monkeypatch)
    plan = bottom_up.run(ctx)
    assert [fast for fast, _ in seen] == [True, False]  # {p, q} -> m puts two "m" in the cut
    assert plan.suppressed_rows == 0
    _check_release(rows, plan, 2, ctx.hierarchies, budget=len(rows))
