"""Bottom-up from the CLI, a policy file and the Python API; outputs re-checked independently."""

from __future__ import annotations

import csv
import json
import random
from collections import Counter

import pytest
import yaml
from typer.testing import CliRunner

from bottom_up_helpers import NaiveBottomUp, random_case
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.search.bottom_up.planner import Taxonomy

cli = pytest.importorskip("sqlanon.cli.app")
api = pytest.importorskip("sqlanon.run.api")


def _write_case(tmp_path, seed=21, with_age=False):
    rows, columns, hier, k = random_case(seed)
    rng = random.Random(seed)
    header = columns[:-1] + (["age"] if with_age else []) + ["cls"]
    data = tmp_path / "data.csv"
    with open(data, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        for r in rows:
            w.writerow(list(r[:-1]) + ([rng.randint(17, 90)] if with_age else []) + [r[-1]])
    paths = {}
    for q, h in hier.items():
        p = tmp_path / f"{q}.csv"
        with open(p, "w", newline="") as fh:
            csv.writer(fh, delimiter=";").writerows(h)
        paths[q] = str(p)
    return rows, hier, k, str(data), paths


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _check(out_rows, qis, k, report):
    classes = Counter(tuple(r[q] for q in qis) for r in out_rows)
    released = {key: n for key, n in classes.items() if not all(v == "*" for v in key)}
    assert min(released.values()) >= k
    for i, q in enumerate(qis):
        assert {key[i] for key in released} <= set(report["transformation"][q])


def test_cli_bottom_up_json_and_trace(tmp_path):
    rows, hier, k, data, paths = _write_case(tmp_path)
    out = tmp_path / "out.csv"
    args = ["anonymize", "--input", data, "--search", "bottom-up", "--k", str(k), "--class-column", "cls", "--json", "--trace", "--output", str(out), "--quiet"]
    for q, p in paths.items():
        args += ["--qi", f"{q}={p}"]
    res = CliRunner().invoke(cli.app, args)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["search"] == "bottom-up"
    assert report["steps"] == len(report["trace"])
    assert report["suppressed_rows"] == 0
    # the same number of steps as the slow pure-Python search
    taxes = [Taxonomy.from_hierarchy(Hierarchy(q, h)) for q, h in hier.items()]
    assert report["steps"] == len(NaiveBottomUp(rows, taxes, k).run())
    for step in report["trace"]:
        assert {"generalization", "I", "P", "IP", "A"} <= set(step)
    out_rows = _read(out)
    assert len(out_rows) == len(rows)
    _check(out_rows, list(hier), k, report)


def test_cli_numeric_column_and_suppression(tmp_path):
    rows, hier, k, data, paths = _write_case(tmp_path, seed=33, with_age=True)
    out = tmp_path / "out.csv"
    args = ["anonymize", "--input", data, "--search", "bottom-up", "--k", str(k), "--class-column", "cls", "--numeric", "age", "--max-suppression", "0.05", "--json", "--output", str(out), "--quiet"]
    for q, p in paths.items():
        args += ["--qi", f"{q}={p}"]
    res = CliRunner().invoke(cli.app, args)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["suppressed_rows"] <= int(0.05 * len(rows))
    assert "age" in report["transformation"]
    out_rows = _read(out)
    _check(out_rows, list(hier) + ["age"], k, report)
    assert sum(1 for r in out_rows if r["age"] == "*" and all(r[q] == "*" for q in hier)) == report["suppressed_rows"]


def test_policy_file_and_python_api(tmp_path):
    rows, hier, k, data, paths = _write_case(tmp_path, seed=44)
    policy = tmp_path / "policy.yaml"
    policy.write_text(yaml.safe_dump({
        "input": data, "qi": paths, "k": k, "search": "bottom-up", "class_column": "cls",
        "search_options": {"trace": True},
    }))
    res = CliRunner().invoke(cli.app, ["anonymize", "--policy", str(policy), "--json", "--dry-run", "--quiet"])
    assert res.exit_code == 0, res.output
    from_policy = json.loads(res.stdout.strip().splitlines()[-1])
    report = api.anonymize(input=data, qi=paths, k=k, search="bottom-up", class_column="cls", output=str(tmp_path / "o.parquet"))
    assert report.transformation == from_policy["transformation"]
    assert report.extra['steps'] == from_policy["steps"] and "trace" not in report.extra
    import pyarrow.parquet as pq

    out_rows = pq.read_table(tmp_path / "o.parquet").to_pylist()
    _check([{q: str(r[q]) for q in hier} for r in out_rows], list(hier), k, report.to_dict())


def test_cli_unsatisfiable_exit_code(tmp_path):
    rows, hier, k, data, paths = _write_case(tmp_path, seed=45)
    args = ["anonymize", "--input", data, "--search", "bottom-up", "--k", str(len(rows) + 1), "--class-column", "cls", "--json", "--quiet"]
    for q, p in paths.items():
        args += ["--qi", f"{q}={p}"]
    res = CliRunner().invoke(cli.app, args)
    assert res.exit_code == 3


@pytest.mark.parametrize("search", ["bottom-up", "genetic"])
def test_api_class_planners_scan_the_source_once(tmp_path, monkeypatch, search):
    """The class is kept in the shared base frequency set, so the planner rolls up from it: the
    source's rows are grouped into a base set once per run (the release's write is the only other
    read of the source, and it is not a base set)."""
    from sqlanon import stats as stats_mod

    rows, hier, k, data, paths = _write_case(tmp_path, seed=46)
    created = []
    original = stats_mod.Statistics.base_query

    def counting(self):
        created.append(self.class_column if self.has_y else None)
        return original(self)

    monkeypatch.setattr(stats_mod.Statistics, "base_query", counting)
    extra = {"metric": "cm", "search_options": {"iterations": 200, "population": 20, "seed": 1}} if search == "genetic" else {}
    report = api.anonymize(input=data, qi=paths, k=k, search=search, class_column="cls", output=str(tmp_path / "o.csv"), **extra)
    assert created == ["cls"]
    _check(_read(tmp_path / "o.csv"), list(hier), k, report.to_dict())
