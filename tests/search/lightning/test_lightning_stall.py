"""lightning's ``stall`` option (issue 44): it stops once its best node has not improved for as
long as it took to find it and for ``stall`` of the limit; the genetic seed uses it to hand the
rest of the limit to the genetic search.

The walk is the same with and without ``stall`` up to where it stops, so a stalled run's answer
is the answer of a run limited to the same number of evaluations (checked), and it never
evaluates more than the limit."""

from __future__ import annotations

import pytest

import sqlanon
from sqlanon.errors import ConfigError
from sqlanon.search.genetic import seeding
from test_lightning import wide_table


def test_a_stalled_walk_answers_what_the_same_steps_answer(tmp_path):
    data, qi, _, _ = wide_table(tmp_path, n_qi=10, n_rows=400, seed=6)
    common = dict(input=data, qi=qi, k=4, max_suppression=0.1, metric="loss", search="lightning", dry_run=True, keep_others=True)
    stalled = sqlanon.anonymize(search_options={"step_limit": 3000, "stall": 0.05}, **common)
    info = stalled.extra["heuristic"]
    assert info["stopped_by"] == "stalled" and info["evaluations"] < 3000
    # stopped as soon as the best was older than max(its own age, 5 % of the steps)
    found = info["best_found_at_evaluation"]
    assert info["evaluations"] - found > max(found, 0.05 * 3000)
    same = sqlanon.anonymize(search_options={"step_limit": info["evaluations"]}, **common)
    assert same.transformation == stalled.transformation and same.metric.value == stalled.metric.value


def test_stall_is_checked():
    with pytest.raises(ConfigError, match="stall"):
        from sqlanon.search.lightning.planner import parse_options

        parse_options({"stall": 0})


def test_the_seed_stalls_only_under_a_limit():
    from sqlanon.search.limits import Limits

    assert seeding.lightning_options(Limits(10.0, None))["stall"] == seeding.LIGHTNING_STALL
    assert seeding.lightning_options(Limits(10.0, None))["time_limit"] <= seeding.LIGHTNING_SHARE * 10.0
    assert "stall" not in seeding.lightning_options(None)


def test_stall_from_the_cli(tmp_path):
    import json

    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    data, qi, _, _ = wide_table(tmp_path, n_qi=10, n_rows=400, seed=6)
    args = ["anonymize", "--keep-others", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "4", "--max-suppression", "0.1",
            "--metric", "loss", "--search", "lightning", "--step-limit", "3000", "--dry-run", "--json", "-q"]
    ok = CliRunner().invoke(app, [*args, "--option", "stall=0.05"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["heuristic"]["stopped_by"] == "stalled"
    bad = CliRunner().invoke(app, [*args, "--option", "stall=-1"])
    first = bad.output.strip().splitlines()[0]  # the one-line error (then --json's object)
    assert bad.exit_code != 0 and first.startswith("error:") and "'stall'" in first
