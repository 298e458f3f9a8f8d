"""``--search optimal`` on lattices too large to build: Flash's binary search without the lattice,
bounded by ``--time-limit`` / ``--step-limit`` (:mod:`sqlanon.search.bounded.planner`).

Oracle: on small random tables the bounded search, given no limit, must prove and return the
exhaustive optimum (pure-Python enumeration of every node), for monotone requirements (closures
and paths) and one that is not (entropy l-diversity: every node taken is evaluated); with step
limits it may stop anywhere but never returns a node beyond the budget. End to end on a 16.7M-node
lattice (above the 2M the lattice is built for) ``optimal`` runs, says the result is not proven,
and the release passes the independent checker.
"""

from __future__ import annotations

import json
import os
import random
import sys

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
from test_lightning import _bounds, assert_unlimited_search_is_exhaustive, step_limited_cases, wide_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.cli.app import app  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.bounded import planner as bounded  # noqa: E402


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_unlimited_bounded_optimal_proves_the_exhaustive_optimum(seed, tmp_path):
    rng = random.Random(4099 * seed + 3)
    assert assert_unlimited_search_is_exhaustive(bounded.run, rng, tmp_path, f"seed={seed}", lambda info: info["bounded"] and info["paths"] >= 0) > 0


@pytest.mark.parametrize("seed", range(3))
def test_step_limited_bounded_optimal_never_returns_an_over_budget_plan(seed, tmp_path):
    for stats, k, budget, table, n in step_limited_cases(random.Random(97 * seed + 1), tmp_path):
        for steps in (1, 2, 3, 5, 8, 20):
            try:
                res = bounded.run(stats, Requirement([KAnonymity(k)], budget=budget), METRICS["loss"](), _bounds(stats), {"step_limit": steps})
            except UnsatisfiableError as err:
                assert "optimal (bounded) evaluated before its step limit" in str(err) or "every candidate" in str(err)
                continue
            assert res.nodes_evaluated <= steps
            suppressed, ok, _ = table[res.node]
            assert ok and suppressed <= budget and suppressed < n, (budget, steps, res.node)
            info = res.extra["heuristic"]
            assert info["stopped_by"] in ("step_limit", "exhausted") and info["optimal"] == (info["stopped_by"] == "exhausted")


def test_optimal_on_a_lattice_above_the_limit_runs_bounded_and_says_so(tmp_path):
    data, qi, qis, hier = wide_table(tmp_path)  # 4^12 = 16.7M nodes
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=5, max_suppression=0.05, metric="loss", search="optimal",
                               search_options={"step_limit": 80}, output=out)
    assert report.search == "optimal"
    info = report.extra["heuristic"]
    assert info["bounded"] and not info["optimal"] and info["stopped_by"] == "step_limit" and info["lattice_nodes"] == 4**12
    assert info["paths"] >= 1  # the bottom fails: Flash's paths found what releases
    assert info["evaluations"] == report.nodes_evaluated <= 80
    assert 0 <= report.suppressed_rows <= report.suppression_budget < report.rows
    rows, original = checker.read_rows(out), checker.read_rows(data)
    got = checker.check_k(rows, qis, 5, 0.05)
    assert got["ok"], got["problems"]
    expected, suppressed = checker.expected_release(original, {q: hier for q in qis}, report.transformation, 5)
    assert checker.released_multiset(rows, qis) == expected and suppressed == report.suppressed_rows


def test_searches_that_need_the_built_lattice_still_refuse_it(tmp_path):
    data, qi, _, _ = wide_table(tmp_path)
    for search in ("samarati", "incognito"):
        with pytest.raises(ConfigError, match="more than 2,000,000"):
            sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=5, search=search, dry_run=True)
    with pytest.raises(ConfigError, match="more than 2,000,000"):  # local recoding re-searches the lattice
        sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=5, search="optimal", local_recoding=True, dry_run=True)


def test_cli_limits_on_optimal_only_where_they_apply(tmp_path):
    data, qi, _, _ = wide_table(tmp_path, n_qi=10, n_rows=400, seed=5)  # 4^10 = 1M nodes: built, exact
    flags = [a for q in qi for a in ("--qi", q)]
    small = CliRunner().invoke(app, ["anonymize", "--keep-others", "-i", data, *flags, "--k", "3", "--search", "optimal", "--step-limit", "5", "--dry-run"])
    assert small.exit_code == 2 and "optimal on a lattice above 2,000,000 nodes" in small.output
    data, qi, _, _ = wide_table(tmp_path, n_qi=11, n_rows=400, seed=5)  # 4^11 = 4.2M nodes: bounded
    flags = [a for q in qi for a in ("--qi", q)]
    big = CliRunner().invoke(app, ["anonymize", "--keep-others", "-i", data, *flags, "--k", "3", "--search", "optimal", "--step-limit", "40", "--dry-run", "--json", "-q"])
    assert big.exit_code == 0, big.output
    report = json.loads(big.stdout)
    assert report["search"] == "optimal" and report["heuristic"]["bounded"] and report["heuristic"]["step_limit"] == 40
