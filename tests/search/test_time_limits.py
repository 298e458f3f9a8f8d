"""The heuristics' limit contract (issue 24), on a fake clock: no test reads the wall clock.

The fake time source advances only when a statement runs (a fixed cost per statement plus a cost
per node or candidate), so the figures are exact: the clock is read before every statement, each
statement is sized to the time left, the search's own setup counts, and ``stopped_by`` and the
evaluations are reported while the release is still verified (``bench/time_limits.py`` measures
the real seconds)."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
from test_lightning import wide_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.search import limits as limits_mod  # noqa: E402


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0
        self.statements = 0

    def __call__(self) -> float:
        return self.t

    def spend(self, seconds: float) -> None:
        self.statements += 1
        self.t += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(limits_mod, "clock", fake)
    return fake


def _charge(monkeypatch, cls, name, clock, fixed, per_item, count=len):
    original = getattr(cls, name)

    def charged(self, items, *args, **kwargs):
        out = original(self, items, *args, **kwargs)
        clock.spend(fixed + per_item * count(items))
        return out

    monkeypatch.setattr(cls, name, charged)


def test_lightning_stops_within_its_time_limit_and_says_so(tmp_path, clock, monkeypatch):
    from sqlanon.stats import Statistics

    # a statement costs 0.05 s plus 0.1 s per node: 32 nodes = 3.25 s, so a 10 s limit ends mid-batch
    _charge(monkeypatch, Statistics, "evaluate_many", clock, 0.05, 0.1)
    data, qi, qis, hier = wide_table(tmp_path, n_qi=12, n_rows=400)
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=3, max_suppression=0.05, metric="loss", search="lightning",
                               search_options={"time_limit": 10}, output=out)
    info = report.extra['heuristic']
    assert report.stopped_by == info["stopped_by"] == "time_limit"
    # seconds of the fake clock (FakeClock, advanced only by the charged statements), not wall time
    assert info["seconds"] <= 10.0  # not one statement past the limit
    assert info["seconds"] >= 9.0  # and the time was used: the last statements shrank to fit
    assert info["evaluations"] == report.nodes_evaluated > 0
    rows = checker.read_rows(out)  # the release is still the verified node's
    assert checker.check_k(rows, qis, 3, 0.05)["ok"]


def test_lightning_step_limit_is_reported(tmp_path, clock):
    data, qi, _, _ = wide_table(tmp_path, n_qi=8, n_rows=300)
    report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=3, max_suppression=0.05, search="lightning", search_options={"step_limit": 7}, dry_run=True)
    assert report.stopped_by == "step_limit" and report.nodes_evaluated == 7


def _genetic_clock(monkeypatch, clock, prepare_seconds: float):
    from sqlanon.search.genetic.objective import FlexibleEvaluator

    original_prepare = FlexibleEvaluator.prepare

    def prepare(self):
        original_prepare(self)
        clock.spend(prepare_seconds)  # the search's own frequency set counts against its limit

    monkeypatch.setattr(FlexibleEvaluator, "prepare", prepare)
    original_score = FlexibleEvaluator.score

    def score(self, chromosomes, per_column=False, keys=None):
        before = self.evaluations
        out = original_score(self, chromosomes, per_column, keys)
        if self.evaluations > before and not per_column:
            clock.spend(0.02 + 0.01 * (self.evaluations - before))
        return out

    monkeypatch.setattr(FlexibleEvaluator, "score", score)


def test_genetic_counts_its_setup_and_first_population_and_stops_in_time(tmp_path, clock, monkeypatch):
    _genetic_clock(monkeypatch, clock, prepare_seconds=1.0)
    data, qi, qis, _ = wide_table(tmp_path, n_qi=6, n_rows=300)
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=3, max_suppression=0.05, search="genetic", output=out,
                               search_options={"time_limit": 3, "iterations": 10**6, "population": 40, "seed": 1, "seed_lattice": False})
    assert report.stopped_by == "time_limit"
    # seconds of the fake clock (setup and statements charged by _genetic_clock), not wall time
    assert report.extra['search_seconds'] <= 3.0
    assert report.extra['search_seconds'] >= 2.8
    assert 0 < report.extra['iterations'] < 10**6 and report.extra['evaluations'] > 40
    assert checker.check_k(checker.read_rows(out), qis, 3, 0.05)["ok"]


def test_genetic_out_of_time_before_its_population_returns_the_most_general_and_warns(tmp_path, clock, monkeypatch):
    _genetic_clock(monkeypatch, clock, prepare_seconds=5.0)  # its frequency set alone takes longer than the limit
    data, qi, qis, _ = wide_table(tmp_path, n_qi=6, n_rows=300)
    messages = []
    report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=3, max_suppression=0.05, search="genetic", dry_run=True, progress=messages.append,
                               search_options={"time_limit": 2, "iterations": 10**6, "population": 40, "seed": 1, "seed_lattice": False})
    assert report.stopped_by == "time_limit" and report.extra['iterations'] == 0
    assert report.extra['evaluations'] == 2  # only the most general solution was scored (and scored again per column)
    assert any("stopped by time_limit after 0 iterations" in m for m in messages)
    warning, = report.warnings  # the most general solution keeps nothing: said, with the limit that caused it
    assert warning["kind"] == "near_top" and warning["cause"] == "time_limit"


def test_genetic_without_a_limit_reports_its_iterations(tmp_path, clock, monkeypatch):
    _genetic_clock(monkeypatch, clock, prepare_seconds=1.0)
    data, qi, _, _ = wide_table(tmp_path, n_qi=4, n_rows=200)
    report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=3, max_suppression=0.05, search="genetic", dry_run=True,
                               search_options={"iterations": 30, "population": 10, "seed": 1, "seed_lattice": False})
    assert report.stopped_by == "iterations" and report.extra['iterations'] == 30


def test_a_step_limit_that_leaves_nearly_everything_suppressed_warns(tmp_path):
    import json

    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    data, qi, _, _ = wide_table(tmp_path, n_qi=4, n_rows=300)
    args = ["anonymize", "--keep-others", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "3", "--max-suppression", "1",
            "--search", "lightning", "--step-limit", "1", "--metric", "loss", "--dry-run", "--json", "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["suppressed_rows"] >= 0.9 * report["rows"]  # the leaves: nearly every row suppressed
    warning, = report["warnings"]
    assert warning["cause"] == "step_limit" and "a larger --step-limit" in warning["message"]
    lines = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(lines) == 1 and "stopped by its step_limit after 1 evaluations" in lines[0]
    # with room to search, the same run keeps most rows and says nothing
    args[args.index("--step-limit") + 1] = "400"
    report = json.loads(CliRunner().invoke(app, args).stdout)
    assert "warnings" not in report and report["suppressed_rows"] < 0.9 * report["rows"]


def _bottom_up_clock(monkeypatch, clock, probe_seconds: float):
    from sqlanon.search.bottom_up.stats import VidTable

    # a generalization is measured by a probe, or by applying it when it was chosen unprobed
    for name in ("probe", "apply"):
        original = getattr(VidTable, name)

        def measured(self, *args, original=original, **kwargs):
            out = original(self, *args, **kwargs)
            clock.spend(probe_seconds)
            return out

        monkeypatch.setattr(VidTable, name, measured)


def test_bottom_up_reports_progress_and_keeps_its_time_limit(tmp_path, clock, monkeypatch):
    _bottom_up_clock(monkeypatch, clock, probe_seconds=1.0)
    data, qi, qis, _ = wide_table(tmp_path, n_qi=4, n_rows=300)
    unlimited = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=4, max_suppression=0.3, search="bottom-up", dry_run=True)
    assert unlimited.stopped_by == "done"
    spent = unlimited.extra['search_seconds']
    assert spent > 20  # enough probes that a limit of a third of it stops the search after a progress line
    messages = []
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data, qi=qi, k=4, max_suppression=0.3, search="bottom-up", output=out, progress=messages.append,
                               search_options={"time_limit": spent * 0.8})
    assert report.stopped_by == "time_limit"
    assert report.extra['search_seconds'] <= spent * 0.8  # the clock is read before every probe
    assert report.extra['steps_explored'] < unlimited.extra['steps_explored']
    assert any(m.startswith("bottom-up: ") and " steps in " in m and "A(VID)" in m for m in messages)  # progress every 5 s
    assert any("bottom-up: stopped by time_limit" in m for m in messages)
    assert not report.warnings
    got = checker.check_k(checker.read_rows(out), qis, 4, 0.3)
    assert got["ok"], got  # the cheapest state within the budget so far, verified
    # out of time before the budget is met: the most general cut, said to keep nothing, and why
    report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=4, max_suppression=0.3, search="bottom-up", dry_run=True, search_options={"time_limit": 1})
    assert report.stopped_by == "time_limit" and report.extra['search_seconds'] <= 1
    assert set(report.transformation[qis[0]]) == {"*"}
    warning, = report.warnings
    assert warning["cause"] == "time_limit"


def test_bottom_up_time_limit_from_the_cli(tmp_path, clock, monkeypatch):
    import json

    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    _bottom_up_clock(monkeypatch, clock, probe_seconds=0.5)
    data, qi, _, _ = wide_table(tmp_path, n_qi=4, n_rows=300)
    args = ["anonymize", "--keep-others", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "4", "--search", "bottom-up", "--max-suppression", "0.3",
            "--time-limit", "2", "--dry-run", "--json", "-q"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["stopped_by"] == "time_limit" and report["time_limit"] == 2 and report["search_seconds"] <= 2


def test_bottom_up_state_is_built_in_batches_within_the_limit(tmp_path, clock, monkeypatch):
    """I(G) of the first state's generalizations (thousands on wide tables with large domains) is
    computed in batches sized to the time left; out of time there, the most general cut is
    returned and warned about. Without a class no statement computes it (I(G) = 0)."""
    import csv
    import random

    from sqlanon.search.bottom_up import planner as bottom_up
    from sqlanon.search.bottom_up.stats import VidTable

    rng = random.Random(4)
    data = tmp_path / "c.csv"
    with open(data, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "y"])
        for _ in range(200):
            w.writerow([rng.randrange(64), rng.randrange(64), rng.choice("pq")])
    qi = {"a": "bands:2,4,8,16,32", "b": "bands:2,4,8,16,32"}
    calls = []
    original = VidTable.info_loss

    def info_loss(self, gens):
        calls.append(len(gens))
        out = original(self, gens)
        clock.spend(0.1 * len(gens))
        return out

    monkeypatch.setattr(VidTable, "info_loss", info_loss)
    monkeypatch.setattr(bottom_up, "INFO_BATCH", 8)
    report = sqlanon.anonymize(keep_others=True, input=str(data), qi=qi, k=3, max_suppression=0.1, search="bottom-up", class_column="y", dry_run=True,
                               search_options={"time_limit": 2.0})
    assert report.stopped_by == "time_limit" and report.extra['search_seconds'] <= 2.0
    assert max(calls) <= 8 and report.extra['steps_explored'] == 0  # 64 generalizations per QI at the start: never reached a step
    assert set(report.transformation["a"]) == {"*"} and report.warnings[0]["cause"] == "time_limit"
    calls.clear()
    sqlanon.anonymize(keep_others=True, input=str(data), qi=qi, k=3, max_suppression=0.1, search="bottom-up", dry_run=True)
    assert calls == []  # no class: I(G) is 0 without a statement
