"""End to end: the CLI and the Python API with --search top-down (a release from the registry)."""

from __future__ import annotations

import json

import duckdb
from typer.testing import CliRunner

import sqlanon
from sqlanon.cli.app import app
from sqlanon.hierarchy import load_hierarchy
from sqlanon.search.top_down.join import Tree
from sqlanon.privacy.xy import anonymity_on_rows

from test_top_down import example1, materialized_join, read_rows  # noqa: F401  (fixture)


def _rows(path):
    con = duckdb.connect()
    try:
        cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
        names = [d[0] for d in cur.description]
        return [{k: str(v) for k, v in zip(names, r)} for r in cur.fetchall()]
    finally:
        con.close()


def test_cli_previous_release_from_registry(example1, monkeypatch):
    d = example1["dir"]
    monkeypatch.chdir(d)
    runner = CliRunner()
    first = runner.invoke(app, ["anonymize", "--keep-others", "--input", example1["t2"], "--qi", f"Job={example1['qi']['Job']}", "--k", "1", "--output", str(d / "t2rel.parquet"), "--json"])
    assert first.exit_code == 0, first.output
    rel_id = json.loads(first.stdout.strip().splitlines()[-1])["release_id"]
    res = runner.invoke(app, [
        "anonymize", "--keep-others", "--input", example1["t1"], "--qi", "Name=flat", "--qi", f"Job={example1['qi']['Job']}", "--class-column", "Class",
        "--search", "top-down", "--previous", str(rel_id), "--x", "Name,Job,Disease", "--y", "K1,K2", "--privacy", "xy-anonymity",
        "--k", "2", "--output", str(d / "t1rel.parquet"), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["privacy_achieved"] >= 2 and report["transformation"]["Job"] == ["White-collar", "Blue-collar"]
    # independent re-check on the written files: the join is 2-anonymous on {Name, Disease}
    t1 = _rows(d / "t1rel.parquet")
    t2 = _rows(d / "t2rel.parquet")
    tree = Tree(load_hierarchy(example1["qi"]["Job"], "Job"))
    join = materialized_join([t1, t2], {"Job": tree})
    assert report["join_rows_estimated"] == len(join)
    assert anonymity_on_rows(join, ["0.Name", "1.Disease"], ["0.K1", "1.K2"]) >= 2


def test_cli_unsatisfiable_exit_code(example1):
    res = CliRunner().invoke(app, [
        "anonymize", "--keep-others", "--input", example1["t1"], "--qi", "Name=flat", "--qi", f"Job={example1['qi']['Job']}",
        "--search", "top-down", "--previous", example1["t2"], "--x", "Name,Disease", "--y", "K1,K2", "--k", "3", "--dry-run"])
    assert res.exit_code == 3
    assert "Disease=HIV" in res.output


def test_python_api_linkability(example1):
    report = sqlanon.anonymize(keep_others=True, input=example1["t1"], qi={"Name": "flat", "Job": example1["qi"]["Job"]}, k=1, search="top-down",
                               class_column="Class", search_options={"previous": [example1["t2"]], "x": ["Name"], "y": ["Disease"],
                                                                      "privacy": "xy-linkability", "sensitive_values": ["Cancer:0.75"]}, dry_run=True)
    assert report.transformation == {"Name": ["*"]}
    assert abs(report.extra['privacy_achieved'] - 5 / 7) < 1e-9
    assert report.extra['join_rows_estimated'] == 7
