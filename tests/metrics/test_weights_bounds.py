"""Attribute weights and per-QI level bounds: oracle tests on small random tables.

Every weighted metric is recomputed here in plain Python from ARX's definition (each QI's value
times its weight over the largest weight; precision and LM averaged over QIs, entropy and height
summed), and every lattice search with bounds is checked against exhaustive enumeration of the
bounded lattice (a node outside the bounds must never be evaluated or returned). The flexible
planners (bottom-up, top-down, genetic) are tested in tests/search/test_planner_weights_bounds.py.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats, write_hierarchy_csvs  # noqa: E402

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402

WEIGHTED = ["precision", "lm", "entropy", "height"]


def approx(x):
    return pytest.approx(x, rel=1e-9, abs=1e-9)


def weighted_metrics(case, node, spec, budget, weights) -> tuple[int, bool, dict]:
    """Row by row, from the definitions (nothing from sqlanon)."""
    top = max(weights)
    w = [x / top for x in weights] if top > 0 else [1.0] * len(weights)
    n, nq = case.n, len(case.qis)
    groups = brute.group(case, node)
    global_s = Counter(r[case.sensitive] for r in case.rows)
    ok = {key: spec.ok(m, case, global_s) for key, m in groups.items()}
    sup = sum(len(m) for key, m in groups.items() if not ok[key])
    prec = [0.0] * nq
    lm = [0.0] * nq
    for key, members in groups.items():
        for i in range(nq):
            if ok[key]:
                prec[i] += len(members) * (node[i] / case.maxes[i] if case.maxes[i] else 0.0)
                big_m = len(case.hier_rows[i])
                lm[i] += len(members) * (0.0 if big_m <= 1 else (brute.leaves_under(case, i, node[i], key[i]) - 1) / (big_m - 1))
            else:
                prec[i] += len(members)
                lm[i] += len(members)
    ent = [0.0] * nq
    for i, q in enumerate(case.qis):
        f_leaf = Counter(r[q] for r in case.rows)
        f_gen = Counter(case.maps[i][r[q]][node[i]] for r in case.rows)
        ent[i] = sum(-math.log2(f_leaf[r[q]] / f_gen[case.maps[i][r[q]][node[i]]]) for r in case.rows)
    values = {
        "precision": sum(w[i] * prec[i] / n for i in range(nq)) / nq,
        "lm": sum(w[i] * lm[i] / n for i in range(nq)) / nq,
        "entropy": sum(w[i] * ent[i] for i in range(nq)),
        "height": float(sum(w[i] * node[i] for i in range(nq))),
    }
    return sup, sup <= budget, values


def random_bounds(rng, maxes):
    out = []
    for m in maxes:
        lo = rng.randint(0, m)
        hi = rng.randint(lo, m)
        if rng.random() < 0.3:
            lo, hi = 0, m
        out.append((lo, hi))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_weighted_metrics_and_bounded_searches_equal_exhaustive(seed, tmp_path):
    rng = random.Random(7919 * seed + 11)
    n_qi = rng.randint(2, 3)
    depths = [rng.randint(1, 3) for _ in range(n_qi)]
    case = brute.random_case(rng, tmp_path, n_qi=n_qi, n_rows=rng.randint(40, 200), depths=depths)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds(), materialize_rows=rng.choice([0, 250_000]))
        checked = 0
        for trial in range(4):
            k = rng.randint(2, 5)
            budget = math.floor(rng.choice([0.0, 0.06, 0.12]) * case.n + 1e-9)
            weights = [rng.choice([0.0, 0.25, 0.5, 1.0, 3.0]) for _ in case.qis]
            if trial == 0:
                weights = [0.0] * len(case.qis)  # ARX: all zero means all equal
            bounds = random_bounds(rng, case.maxes)
            inside = [nd for nd in case.all_nodes() if all(lo <= lv <= hi for lv, (lo, hi) in zip(nd, bounds))]
            table = {nd: weighted_metrics(case, nd, brute.Spec(k=k), budget, weights) for nd in inside}
            sat = {nd: v for nd, (_, ok, v) in table.items() if ok}
            for mname in WEIGHTED:
                tag = f"seed={seed} trial={trial} k={k} budget={budget} weights={weights} bounds={bounds} metric={mname}"
                for sname, search in LATTICE_SEARCHES.items():
                    metric = METRICS[mname](weights=weights)
                    lattice = Lattice(stats, Requirement([KAnonymity(k)], budget=budget), metric, bounds=bounds)
                    assert len(lattice) == len(inside)
                    if not sat:
                        with pytest.raises(UnsatisfiableError):
                            search(lattice)
                        continue
                    res = search(lattice)
                    assert res.node in sat, f"{tag} {sname} returned {res.node}"
                    for idx in lattice.evaluated:  # never evaluated outside the bounds
                        assert lattice.node(idx) in table, f"{tag} {sname} evaluated {lattice.node(idx)}"
                    assert res.node_stats.suppressed == table[res.node][0], tag
                    assert res.value == approx(sat[res.node][mname]), f"{tag} {sname}: the value differs from the oracle"
                    if sname == "samarati":
                        h = min(sum(nd) for nd in sat)
                        assert sum(res.node) == h, tag
                        assert res.value == approx(min(v[mname] for nd, v in sat.items() if sum(nd) == h)), tag
                    else:
                        assert res.value == approx(min(v[mname] for v in sat.values())), f"{tag} {sname} not optimal"
                    checked += 1
        assert checked  # at least one satisfiable case was compared
    finally:
        engine.close()


def test_weights_change_the_optimum(tmp_path):
    """A heavily weighted QI is kept specific: its level at the weighted optimum is never above
    its level at the unweighted optimum (same data, same requirement), and the weighted optimum is
    the exhaustive one."""
    rng = random.Random(5)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=160, depths=[3, 2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    base = sqlanon.run.api.anonymize(input=case.path, qi=qi, k=4, max_suppression=0.05, dry_run=True)
    heavy = case.qis[0]
    weighted = sqlanon.run.api.anonymize(input=case.path, qi=qi, k=4, max_suppression=0.05, dry_run=True, weights={heavy: 100})
    assert weighted.transformation[heavy] <= base.transformation[heavy]
    assert weighted.weights[heavy] == 1.0 and all(weighted.weights[q] == 0.01 for q in case.qis[1:])
    budget = math.floor(0.05 * case.n + 1e-9)
    w = [100.0, 1.0, 1.0]
    table = {nd: weighted_metrics(case, nd, brute.Spec(k=4), budget, w) for nd in case.all_nodes()}
    best = min(v["precision"] for _, ok, v in table.values() if ok)
    assert weighted.metric.value == approx(best)


def test_cli_policy_and_api_bounds_agree(tmp_path):
    rng = random.Random(8)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150, depths=[3, 2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    a, b = case.qis[0], case.qis[1]
    api = sqlanon.run.api.anonymize(input=case.path, qi=qi, k=3, max_suppression=0.3, dry_run=True, min_level={a: 1}, max_level={a: 2, b: 1}, weights={b: 2})
    assert 1 <= api.transformation[a] <= 2 and api.transformation[b] <= 1
    assert api.extra['level_bounds'][a] == [1, 2] and api.extra['level_bounds'][b] == [0, 1]
    policy = tmp_path / "p.yaml"
    import yaml

    policy.write_text(yaml.safe_dump({"input": case.path, "qi": qi, "k": 3, "max_suppression": 0.3, "min_level": {a: 1}, "max_level": {a: 2, b: 1}, "weights": {b: 2}}))
    from_file = sqlanon.run.api.anonymize(str(policy), dry_run=True)
    runner = CliRunner()
    flags = []
    for c, spec in qi.items():
        flags += ["--qi", f"{c}={spec}"]
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "-i", case.path, *flags, "--k", "3", "--max-suppression", "0.3", "--min-level", f"{a}=1", "--max-level", f"{a}=2", "--max-level", f"{b}=1", "--weights", f"{b}=2", "--dry-run", "--json", "-q"])
    assert res.exit_code == 0, res.output
    cli = json.loads(res.stdout)
    assert api.transformation == from_file.transformation == cli["transformation"]
    assert api.metric == from_file.metric and from_file.to_dict()["metric"] == cli["metric"]


@pytest.mark.parametrize(
    "options,message",
    [
        ({"min_level": {"nope": 1}}, "min_level names 'nope'"),
        ({"max_level": {"A": 9}}, "outside its hierarchy"),
        ({"min_level": {"A": 2}, "max_level": {"A": 1}}, "is above max_level"),
        ({"weights": {"nope": 1}}, "weights names 'nope'"),
        ({"weights": {"A": -1}}, ">= 0"),
        ({"weights": {"A": 2}, "metric": "discernibility"}, "metric discernibility scores equivalence classes"),
        ({"weights": "A=x"}, "is not a number"),
    ],
)
def test_bad_weights_and_bounds_are_refused(tmp_path, options, message):
    path = tmp_path / "t.csv"
    path.write_text("A,B\n" + "\n".join(f"{i % 4},{i % 3}" for i in range(40)) + "\n")
    with pytest.raises(ConfigError, match=message):
        sqlanon.run.api.anonymize(input=str(path), qi={"A": "bands:2,4", "B": "flat"}, k=2, dry_run=True, **options)


def test_cli_refuses_bad_bounds_with_exit_2(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("A,B\n" + "\n".join(f"{i % 4},{i % 3}" for i in range(40)) + "\n")
    res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "-i", str(path), "--qi", "A=bands:2,4", "--qi", "B=flat", "--k", "2", "--max-level", "A=7", "--dry-run"])
    assert res.exit_code == 2
    assert "max_level A=7 is outside" in res.output
