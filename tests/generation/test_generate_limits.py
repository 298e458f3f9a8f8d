"""``sqlanon generate --time-limit`` covers every phase: a fake clock that runs out in the scores
or the risk phase stops the run there, with nothing written (no file, no registry entry, no
report), ``stopped_in`` naming the phase; the CLI exits 1 with one line; the scores' optional
parts end at their share of the limit and say so (``scores_time_limited``)."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from sqlanon.cli.app import app
from sqlanon.cli.generate import run_generate
from sqlanon.generation import pipeline
from sqlanon.search import limits


def _csv(tmp_path, n=150, seed=3):
    rnd = random.Random(seed)
    rows = [",".join(f"v{rnd.randrange(d)}" for d in (3, 2, 4, 3)) for _ in range(n)]
    path = tmp_path / "t.csv"
    path.write_text("a0,a1,a2,a3\n" + "\n".join(rows) + "\n")
    return str(path)


class _Clock:
    """A fake clock that jumps ``by`` seconds when the named phase of the run starts."""

    def __init__(self, monkeypatch, phase: str, by: float = 1000.0) -> None:
        self.t = 0.0
        monkeypatch.setattr(limits, "clock", lambda: self.t)
        original = getattr(pipeline, phase) if phase != "risk" else pipeline.measure_table

        def jumped(*args, **kwargs):
            self.t += by
            return original(*args, **kwargs)

        monkeypatch.setattr(pipeline, phase if phase != "risk" else "measure_table", jumped)


@pytest.mark.parametrize("phase, stopped_in", [("compare_tables", "scores"), ("risk", "risk")])
def test_time_limit_in_scores_or_risk_writes_nothing(tmp_path, monkeypatch, phase, stopped_in):
    _Clock(monkeypatch, phase)
    out_path, report = tmp_path / "gen.parquet", tmp_path / "r.html"
    said: list[str] = []
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=60, output=str(out_path), report=str(report), progress=said.append)
    assert got["stopped_by"] == "time_limit" and got["stopped_in"] == stopped_in
    assert got["written"] is False and got["output"] is None and got["release_id"] is None
    assert got["rows"] == got["rows_asked"] == 150  # the rows were generated, then discarded
    assert not out_path.exists() and not report.exists() and not list(tmp_path.glob("gen*"))
    assert ("risk" in got) is False
    assert any(f"{stopped_in} phase" in m and "nothing written" in m for m in said)


def test_no_time_limit_writes(tmp_path):
    out_path = tmp_path / "gen.parquet"
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=600, output=str(out_path))
    assert got["stopped_by"] is None and got["stopped_in"] is None and got["written"] is True
    assert out_path.exists() and got["scores_time_limited"] is False


def test_cli_exit_1_and_json_when_stopped(tmp_path, monkeypatch):
    _Clock(monkeypatch, "compare_tables")
    out_path = tmp_path / "gen.csv"
    res = CliRunner().invoke(app, ["generate", "-i", _csv(tmp_path), "--seed", "1", "--time-limit", "60", "--json", "-o", str(out_path)])
    assert res.exit_code == 1, res.output
    body = json.loads(res.stdout.strip().splitlines()[-1])
    assert body["stopped_in"] == "scores" and body["exit_code"] == 1 and body["written"] is False
    assert not out_path.exists()


def test_scores_share_cuts_the_optional_parts(tmp_path, monkeypatch):
    """A soft deadline already past when the scores start: the NAS is computed on all rows, the
    pattern comparison is skipped and the released table's KRIMP run is cut short, and the run
    (whose hard limit has not passed) still writes."""
    t = [0.0]
    monkeypatch.setattr(limits, "clock", lambda: t[0])
    original = pipeline.compare_tables

    def late(*args, **kwargs):
        t[0] += 95.0  # past 90 % of the 100 s limit, before it
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compare_tables", late)
    out_path = tmp_path / "gen.parquet"
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=100, output=str(out_path))
    assert got["scores_time_limited"] is True and got["pct_equal_itemsets"] is None
    assert got["dissimilarity_time_limited"] is True and 0.0 <= got["nas"] <= 1.0
    assert got["stopped_in"] is None and got["written"] is True and out_path.exists()
    monkeypatch.undo()
    free = run_generate(_csv(tmp_path), format="csv", seed=1)
    assert got["nas"] == free["nas"] and got["as"] == free["as"]  # the NAS is the full-data one
