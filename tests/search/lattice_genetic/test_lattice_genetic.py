"""``--search lattice-genetic``: Wan et al.'s genetic algorithm over full-domain nodes (ARX's GA).

Oracle: on small random tables (2 to 4 QIs, pure-Python enumeration of every node), a run with
enough generations returns a node that releases within the budget, with the value the oracle gives
that node, and on lattices this small the exhaustive optimum; under a step limit it never returns
a node over the budget and is the same for the same seed. End to end (API and CLI) on a wide table
the release is re-checked by the independent checker and equals the release of its transformation.
"""

from __future__ import annotations

import json
import os
import random
import sys

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lightning"))

import checker  # noqa: E402
from test_lightning import _bounds, exhaustive_cases, step_limited_cases, wide_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.cli.app import app  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice_genetic import planner as lattice_genetic  # noqa: E402


@pytest.mark.parametrize("seed", [0, 3])
def test_enough_generations_find_the_exhaustive_optimum_on_small_lattices(seed, tmp_path):
    checked = 0
    for stats, req, mname, table, sat, n, at in exhaustive_cases(random.Random(101 * seed + 7), tmp_path, ("precision", "lm", "loss")):
        opts = {"time_limit": 600, "iterations": 30, "population": 12, "seed": seed}
        at = f"seed={seed} {at}"
        if not sat:
            with pytest.raises(UnsatisfiableError):
                lattice_genetic.run(stats, req, METRICS[mname](), _bounds(stats), opts)
            continue
        res = lattice_genetic.run(stats, req, METRICS[mname](), _bounds(stats), opts)
        info = res.extra["heuristic"]
        assert res.node in sat and res.node_stats.suppressed == table[res.node][0] < n, at
        if mname in sat[res.node]:
            assert res.value == pytest.approx(sat[res.node][mname], rel=1e-9, abs=1e-9), at
            assert res.value == pytest.approx(min(m[mname] for m in sat.values()), rel=1e-9, abs=1e-9), at
        assert info["stopped_by"] == "iterations" and info["generations"] == 30 and info["optimal"] is False, at
        assert res.nodes_evaluated <= len(table), at
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("seed", range(3))
def test_step_limited_runs_release_within_budget_and_repeat_for_a_seed(seed, tmp_path):
    for stats, k, budget, table, n in step_limited_cases(random.Random(13 * seed + 2), tmp_path):
        req = Requirement([KAnonymity(k)], budget=budget)
        for steps in (1, 5, 30):
            opts = {"step_limit": steps, "batch": 4, "population": 6, "seed": seed}
            try:
                res = lattice_genetic.run(stats, req, METRICS["lm"](), _bounds(stats), opts)
            except UnsatisfiableError as err:
                assert "lattice-genetic evaluated before its step limit" in str(err) and f"k={k}" in str(err)
                continue
            suppressed, ok, _ = table[res.node]
            assert res.nodes_evaluated <= steps and ok and suppressed <= budget and suppressed < n, (budget, steps, res.node)
            again = lattice_genetic.run(stats, req, METRICS["lm"](), _bounds(stats), opts)
            assert again.node == res.node and again.value == res.value


def test_operators_stay_within_the_level_bounds():
    """The triangle covers the lattice (node i: QIs 0..i at the top), random nodes and mutants stay
    within the bounds, mutants move at most ceil(mutation x QIs) QIs, immigration swaps the best."""
    bounds = [(0, 3), (1, 2), (0, 0), (2, 5)]
    ga = lattice_genetic.LatticeGenetic.__new__(lattice_genetic.LatticeGenetic)
    ga.mins, ga.maxes = [lo for lo, _ in bounds], [hi for _, hi in bounds]
    ga.opts = lattice_genetic.parse_options({"mutation": 0.5, "immigration": 0.5})
    import numpy as np

    ga.rng = np.random.default_rng(3)
    assert ga.triangle() == [(3, 1, 0, 2), (3, 2, 0, 2), (3, 2, 0, 2), (3, 2, 0, 5)]
    for _ in range(200):
        node = ga.random_node()
        assert all(lo <= v <= hi for v, (lo, hi) in zip(node, bounds))
        m = ga.mutant(node)
        assert all(lo <= v <= hi for v, (lo, hi) in zip(m, bounds)) and sum(a != b for a, b in zip(m, node)) <= 2
    ga.evaluated = {n: (None, True, float(sum(n))) for n in [(0, 1, 0, 2), (1, 1, 0, 2), (2, 1, 0, 2), (3, 1, 0, 2), (0, 2, 0, 5), (1, 2, 0, 5)]}
    z1 = sorted([(0, 1, 0, 2), (1, 1, 0, 2), (2, 1, 0, 2), (3, 1, 0, 2)], key=ga.rank)
    z2 = sorted([(0, 2, 0, 5), (1, 2, 0, 5)], key=ga.rank)
    a, b = ga.immigrate(z1, z2)
    # half of z1 (2 nodes, all of z2) cross over: each side's best replace the other's worst
    assert a == [(0, 1, 0, 2), (1, 1, 0, 2), (0, 2, 0, 5), (1, 2, 0, 5)]
    assert b == [(0, 1, 0, 2), (1, 1, 0, 2)]
    picked = ga.parents(z1, 400)
    assert (3, 1, 0, 2) not in picked  # production 0.2 of 4: the best one alone
    assert set(picked) == {(0, 1, 0, 2)}


def test_options_are_checked():
    with pytest.raises(ConfigError, match="crossover must be a share between 0 and 1"):
        lattice_genetic.parse_options({"crossover": 1.5})
    with pytest.raises(ConfigError, match="population must be a whole number >= 1"):
        lattice_genetic.parse_options({"population": 0})
    with pytest.raises(ConfigError, match="elite \\+ crossover must be at most 1"):
        lattice_genetic.parse_options({"elite": 0.7, "crossover": 0.5})
    with pytest.raises(ConfigError, match="time_limit"):
        lattice_genetic.parse_options({"time_limit": 0})
    with pytest.raises(ConfigError, match="does not apply"):
        lattice_genetic.parse_options({"objective": "lm"})
    opts = lattice_genetic.parse_options({"population": "40", "crossover": "0.5"})
    assert opts["population"] == 40 and opts["crossover"] == 0.5 and opts["time_limit"] == 30.0


def test_api_and_cli_on_a_wide_table_release_what_the_plan_says(tmp_path):
    data, qi, qis, hier = wide_table(tmp_path, n_qi=12, n_rows=600, seed=4)  # 4^12 nodes: no exact search
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=5, max_suppression=0.05, metric="loss", search="lattice-genetic",
                               search_options={"step_limit": 300, "population": 20, "seed": 2}, output=out)
    info = report.extra["heuristic"]
    assert report.search == "lattice-genetic" and info["stopped_by"] == "step_limit" and info["evaluations"] == report.nodes_evaluated <= 300
    assert info["generations"] >= 1 and info["population"] == 32 and info["optimal"] is False
    rows = checker.read_rows(out)
    got = checker.check_k(rows, qis, 5, 0.05)
    assert got["ok"], got["problems"]
    expected, suppressed = checker.expected_release(checker.read_rows(data), {q: hier for q in qis}, report.transformation, 5)
    assert checker.released_multiset(rows, qis) == expected and suppressed == report.suppressed_rows
    args = ["anonymize", "--keep-others", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "5", "--search", "lattice-genetic", "--step-limit", "300",
            "--option", "population=20", "--option", "seed=2", "--metric", "loss", "--max-suppression", "0.05", "--dry-run", "--json", "-q"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["transformation"] == report.transformation  # the same seed, the same answer
    bad = CliRunner().invoke(app, args[:-3] + ["--option", "mutation=3", "--dry-run", "-q"])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and "mutation" in bad.output
