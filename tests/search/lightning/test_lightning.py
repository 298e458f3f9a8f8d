"""The LIGHTNING-style heuristic lattice search and ``--search auto``.

Oracle: on small random tables the heuristic, given no limit, walks until its bottom-up queue is
empty and must then return the exhaustive optimum (pure-Python enumeration of every node); with
step limits it may stop anywhere but never returns a node that suppresses beyond the budget or
suppresses everything. End to end (CLI and API) on a wide table whose lattice the exact searches
refuse, every release is re-checked by the independent checker.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import sys

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
import oracle_brute as brute  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.cli.app import app  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lightning import planner as lightning  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402


def _stats(engine, case):
    hierarchies = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    stats = Statistics(engine, Source.open(case.path), case.qis, hierarchies, sensitive=case.sensitive,
                       class_column=case.class_column, needs=ClassNeeds(distinct_s=True, entropy_s=True, majority_y=True), keep_sets=4)
    stats.prepare()
    return stats


def _bounds(stats):
    return [(0, h.max_level) for h in stats.hierarchies]


MODELS = {
    "k": lambda k: ([KAnonymity(k)], brute.Spec(k=k)),
    "k+distinct-l": lambda k: ([KAnonymity(k), DistinctLDiversity(2)], brute.Spec(k=k, l_distinct=2)),
    "entropy-l": lambda k: ([EntropyLDiversity(1.6)], brute.Spec(l_entropy=1.6)),
}


def exhaustive_cases(rng, tmp_path, metrics=("precision", "lm", "discernibility", "height")):
    """On a random case (2 to 4 QIs), every model, budget and metric: ``(stats, requirement,
    metric name, table, sat, rows)`` with the oracle's every node (``table``) and those that
    release (``sat``, their metrics)."""
    n_qi = rng.randint(2, 4)
    case = brute.random_case(rng, tmp_path, n_qi=n_qi, n_rows=rng.randint(40, 200), depths=[rng.randint(1, 2 if n_qi > 2 else 3) for _ in range(n_qi)])
    engine = connect(threads=1)
    try:
        stats = _stats(engine, case)
        for model_name in MODELS:
            models, spec = MODELS[model_name](rng.randint(2, 5))
            for fraction in (0.0, 0.1, 1.0):
                budget = math.floor(fraction * case.n + 1e-9)
                table = brute.exhaustive(case, spec, budget)
                sat = {node: m for node, (_, ok, m) in table.items() if ok}
                for mname in metrics:
                    yield stats, Requirement(models, budget=budget), mname, table, sat, case.n, f"model={model_name} budget={budget} metric={mname}"
    finally:
        engine.close()


def assert_unlimited_search_is_exhaustive(run, rng, tmp_path, where: str, proven) -> int:
    """:func:`exhaustive_cases`: ``run(stats, requirement, metric, bounds, options)`` given no
    limit returns the exhaustive optimum (or raises UnsatisfiableError where no node releases)
    and ``proven(info)`` holds of its report; the number of cases checked. The oracle of
    lightning and of the bounded optimal search."""
    checked = 0
    for stats, req, mname, table, sat, n, at in exhaustive_cases(rng, tmp_path):
        at = f"{where} {at}"
        if not sat:
            with pytest.raises(UnsatisfiableError):
                run(stats, req, METRICS[mname](), _bounds(stats), {"time_limit": 600})
            continue
        res = run(stats, req, METRICS[mname](), _bounds(stats), {"time_limit": 600})
        info = res.extra["heuristic"]
        assert info["stopped_by"] == "exhausted" and info["optimal"] and proven(info), at
        assert res.node in sat, at + f": {res.node} does not release within the budget"
        assert res.node_stats.suppressed == table[res.node][0] < n, at
        expected = min(m[mname] for m in sat.values())
        assert res.value == pytest.approx(expected, rel=1e-9, abs=1e-9), at
        assert res.nodes_evaluated <= len(table), at
        checked += 1
    return checked


# seeds 0, 1, 5 in the default run (2 to 4 QIs, every model, budget and metric); the rest are slow
@pytest.mark.parametrize("seed", [s if s in (0, 1, 5) else pytest.param(s, marks=pytest.mark.slow) for s in range(8)])
def test_unlimited_lightning_returns_the_exhaustive_optimum(seed, tmp_path):
    rng = random.Random(7919 * seed + 11)
    assert assert_unlimited_search_is_exhaustive(lightning.run, rng, tmp_path, f"seed={seed}", lambda info: "expansions_from_bottom" in info) > 0


def step_limited_cases(rng, tmp_path, min_rows=60):
    """Cases for a step-limited search on a random 4-QI table: ``(stats, k, budget, table)`` per
    suppression budget (0 %, 5 %, every row), ``table`` the oracle's every node."""
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=rng.randint(min_rows, 200), depths=[2, 2, 2, 2])
    engine = connect(threads=1)
    try:
        stats = _stats(engine, case)
        k = rng.randint(2, 6)
        for fraction in (0.0, 0.05, 1.0):
            budget = math.floor(fraction * case.n + 1e-9)
            yield stats, k, budget, brute.exhaustive(case, brute.Spec(k=k), budget), case.n
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(4))
def test_step_limited_lightning_never_returns_an_over_budget_plan(seed, tmp_path):
    for stats, k, budget, table, n in step_limited_cases(random.Random(31 * seed + 5), tmp_path):
        for steps in (1, 2, 3, 5, 8, 20):
            req = Requirement([KAnonymity(k)], budget=budget)
            try:
                res = lightning.run(stats, req, METRICS["lm"](), _bounds(stats), {"step_limit": steps, "batch": 3})
            except UnsatisfiableError as err:
                assert "lightning evaluated before its step limit" in str(err) and f"k={k}" in str(err) and "Closest:" in str(err)
                continue
            assert res.nodes_evaluated <= steps
            suppressed, ok, _ = table[res.node]
            assert ok and suppressed <= budget and suppressed < n, (budget, steps, res.node)
            assert res.extra["heuristic"]["stopped_by"] in ("step_limit", "exhausted")


def test_options_are_checked():
    with pytest.raises(ConfigError, match="time_limit"):
        lightning.parse_options({"time_limit": 0})
    with pytest.raises(ConfigError, match="step_limit"):
        lightning.parse_options({"step_limit": 0})
    with pytest.raises(ConfigError, match="step_limit"):
        lightning.parse_options({"step_limit": "many"})
    with pytest.raises(ConfigError, match="iterations"):
        lightning.parse_options({"iterations": 5})
    assert lightning.parse_options({"time_limit": "2.5"})["time_limit"] == 2.5


# ------------------------------------------------------------------------------------------------
# end to end on a wide table


def wide_table(tmp_path, n_qi=12, n_rows=800, seed=3):
    """Integer-coded QIs (16 values each) with 3-level interval hierarchies (4-bands, 8-bands, *)."""
    rng = random.Random(seed)
    qis = [f"a{i}" for i in range(n_qi)]
    path = tmp_path / "wide.csv"
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", *qis, "s"])
        for r in range(n_rows):
            w.writerow([r, *[min(int(rng.expovariate(0.35)), 15) for _ in qis], rng.choice("xyz")])
    hpath = tmp_path / "h.csv"
    with open(hpath, "w") as fh:
        for v in range(16):
            fh.write(f"{v};{v // 4 * 4}-{v // 4 * 4 + 3};{v // 8 * 8}-{v // 8 * 8 + 7};*\n")
    return str(path), [f"{q}={hpath}" for q in qis], qis, {str(v): [str(v), f"{v // 4 * 4}-{v // 4 * 4 + 3}", f"{v // 8 * 8}-{v // 8 * 8 + 7}", "*"] for v in range(16)}


def test_exact_searches_name_the_heuristic_and_auto_picks_it(tmp_path):
    data, qi, qis, hier = wide_table(tmp_path)  # 4^12 = 16.7M nodes
    with pytest.raises(ConfigError, match="--search lightning"):
        sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=5, search="samarati", dry_run=True)
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=5, max_suppression=0.05, metric="lm", search="auto",
                               search_options={"step_limit": 150, "genetic": False}, output=out)
    assert report.search == "lightning"
    assert report.extra['search_auto']["chose"] == "lightning" and report.extra['search_auto']["lattice_nodes"] == 4**12
    info = report.extra['heuristic']
    assert info["stopped_by"] == "step_limit" and info["evaluations"] == report.nodes_evaluated <= 150
    assert 0 <= report.suppressed_rows <= report.suppression_budget < report.rows
    rows = checker.read_rows(out)
    original = checker.read_rows(data)
    got = checker.check_k(rows, qis, 5, 0.05)
    assert got["ok"], got["problems"]
    expected, suppressed = checker.expected_release(original, {q: hier for q in qis}, report.transformation, 5)
    assert checker.released_multiset(rows, qis) == expected and suppressed == report.suppressed_rows


def test_cli_lightning_with_limits_and_full_suppression_budget(tmp_path):
    data, qi, qis, hier = wide_table(tmp_path, n_qi=10, n_rows=500, seed=9)
    out = str(tmp_path / "o.csv")
    args = ["anonymize", "--keep-others", "--keep-column", "id", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "5", "--max-suppression", "1",
            "--search", "lightning", "--step-limit", "120", "--time-limit", "300", "--metric", "precision", "-o", out, "--json", "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["heuristic"]["step_limit"] == 120 and report["heuristic"]["time_limit"] == 300
    # a budget of every row still never returns a release that suppresses every row
    assert report["suppressed_rows"] < report["rows"]
    rows = checker.read_rows(out)
    assert checker.check_k(rows, qis, 5, 1.0)["ok"]
    expected, suppressed = checker.expected_release(checker.read_rows(data), {q: hier for q in qis}, report["transformation"], 5)
    assert checker.released_multiset(rows, qis) == expected


def test_limits_are_refused_where_they_would_be_ignored(tmp_path):
    data, qi, _, _ = wide_table(tmp_path, n_qi=3, n_rows=100)
    result = CliRunner().invoke(app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "2", "--search", "samarati", "--step-limit", "5", "--dry-run"])
    assert result.exit_code != 0 and "step_limit" in result.output and "lightning" in result.output
    result = CliRunner().invoke(app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "2", "--search", "lightning", "--step-limit", "0", "--dry-run"])
    assert result.exit_code != 0 and "step_limit" in result.output
    # auto on a small lattice runs the exact search and says the limit was not needed
    report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=2, search="auto", search_options={"time_limit": 5}, dry_run=True)
    assert report.search == "optimal" and report.extra['search_auto']["limits_not_needed"] == ["time_limit"]


def test_an_unknown_option_set_to_zero_is_refused():
    """``{"iterations": 0}`` was dropped as 'not given' (0 == False): a key given is a key used."""
    with pytest.raises(ConfigError, match="'iterations' does not apply to the lightning search"):
        lightning.parse_options({"iterations": 0})
    assert lightning.parse_options({"trace": False, "numeric": []})["batch"] == lightning.DEFAULT_BATCH


def test_engine_one_thread_restores_the_setting():
    """DuckDB's ``threads`` is 1 inside ``one_thread`` and back to what it was after, even on an
    error; a thread count the user gave is left alone."""
    from sqlanon.engine import connect

    engine = connect()
    try:
        engine.set_option("threads", "2")
        with engine.one_thread():
            assert engine.scan_threads() == 1
        assert engine.scan_threads() == 2
        with pytest.raises(RuntimeError), engine.one_thread():
            raise RuntimeError("boom")
        assert engine.scan_threads() == 2
    finally:
        engine.close()
    engine = connect(threads=2)
    try:
        with engine.one_thread():
            assert engine.scan_threads() == 2
    finally:
        engine.close()


@pytest.mark.parametrize("seed", range(3))
def test_tied_nodes_are_expanded_together(seed, tmp_path, monkeypatch, sql_only):
    """Queued nodes of one value and height are expanded with one evaluation of all their
    successors: the same optimum as one at a time, in fewer statements (by SQL: the statements are
    counted)."""
    rng = random.Random(101 * seed + 3)
    case = brute.random_case(rng, tmp_path, n_qi=4, n_rows=rng.randint(60, 120), depths=[2] * 4)
    engine = connect(threads=1)
    try:
        stats = _stats(engine, case)
        # a k no class near the bottom reaches: the lowest nodes all suppress every row (one value)
        req = Requirement([KAnonymity(case.n // 4)], budget=math.floor(0.05 * case.n))
        got = {}
        for ties in (True, False):
            monkeypatch.setattr(lightning, "TIES", ties)
            before = engine.queries
            res = lightning.run(stats, req, METRICS["loss"](), _bounds(stats), {"time_limit": 600})
            got[ties] = (res.value, res.extra["heuristic"]["stopped_by"], engine.queries - before)
        assert got[True][:2] == got[False][:2] and got[True][1] == "exhausted"
        assert got[True][2] < got[False][2]
    finally:
        engine.close()
