"""What the release hides, nothing shows: the ``--json`` report, the HTML page, the registry row
and a re-rendered report name no value only suppressed rows (or classes under k) have, and no
absolute path of the machine unless ``--full-paths`` asks."""

from __future__ import annotations

import json
import logging
import os
import random
from collections import Counter

import duckdb
import numpy as np
import pytest
from typer.testing import CliRunner

import sqlanon.cli.app
from checker import read_rows
from sqlanon.report.utility import shown_before

runner = CliRunner()
#: values that only one row has (each in a class under k): the release suppresses them
SECRETS = {"zip": "99917", "sex": "zzq", "dob": "1901-02-03"}


def invoke(args):
    return runner.invoke(sqlanon.cli.app.app, args)


@pytest.fixture
def warehouse(tmp_path):
    """A warehouse-like table in a DuckDB file: zips with leading zeros, skew, NULLs, a DECIMAL
    income, a DATE of birth, a TIMESTAMP, and rows whose values no other row has."""
    rnd = random.Random(41)
    zips = ["01001", "01002", "01003", "02134", "02135"]
    rows = []
    for i in range(400):
        z = zips[min(int(rnd.expovariate(0.9)), len(zips) - 1)]  # skewed
        sex = rnd.choice(["m", "f"])
        dob = f"19{rnd.randint(50, 59)}-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}"
        income = rnd.randint(1000, 90000) / 100 if i % 17 else None  # NULLs in a kept column (NULL QIs: another issue)
        rows.append((z, sex, dob, income, f"2024-01-0{rnd.randint(1, 9)} 10:00:00"))
    rows.append((SECRETS["zip"], "m", "1955-05-15", 123.45, "2024-01-01 10:00:00"))  # a zip only one row has
    rows.append(("01001", SECRETS["sex"], "1956-06-16", 99.99, "2024-01-02 10:00:00"))  # a sex only one row has
    rows.append(("01002", "f", SECRETS["dob"], 10.01, "2024-01-03 10:00:00"))  # a date only one row has
    db = tmp_path / "wh.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE people (zip VARCHAR, sex VARCHAR, dob DATE, income DECIMAL(9,2), seen TIMESTAMP)")
    con.executemany("INSERT INTO people VALUES (?, ?, CAST(? AS DATE), ?, CAST(? AS TIMESTAMP))", rows)
    con.close()
    return {"dir": tmp_path, "db": str(db), "rows": rows}


def _anonymize(wh, out_dir, *extra, sex="flat"):
    os.makedirs(out_dir, exist_ok=True)
    out, html = os.path.join(out_dir, "out.parquet"), os.path.join(out_dir, "r.html")
    args = ["anonymize", "--keep-others", "--input", wh["db"], "--table", "people", "--qi", "zip=mask", "--qi", f"sex={sex}", "--qi", "dob=dates",
            "--keep-column", "income", "--drop-column", "seen", "--k", "3", "--max-suppression", "0.05",
            "--output", out, "--report", html, "--json", *extra]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    return report, out, html, result.stderr


def _registry_text(path: str) -> str:
    con = duckdb.connect(path, read_only=True)
    try:
        return json.dumps(con.execute("SELECT * FROM sqlanon_releases").fetchall(), default=str)
    finally:
        con.close()


def _assert_hidden(text: str, where: str) -> None:
    for column, value in SECRETS.items():
        assert value not in text, f"{where} names {column} {value!r}, a value only a suppressed row has"


@pytest.fixture
def env_logging():
    """SQLANON_LOG configures the process's ``sqlanon`` logger (a handler, a level): the CLI run
    in-process here leaves it so, and the tests after it in this worker must not log."""
    logger = logging.getLogger("sqlanon")
    handlers, level = list(logger.handlers), logger.level
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)


@pytest.mark.parametrize("search", ["optimal", "lightning", "bottom-up"])
@pytest.mark.parametrize("suppression", [None, "drop"])
def test_no_output_names_a_value_only_suppressed_rows_have(warehouse, tmp_path, search, suppression, monkeypatch, env_logging):
    monkeypatch.setenv("SQLANON_LOG", "INFO")  # the log lines are checked too
    extra = ["--search", search] + (["--suppression", suppression] if suppression else [])
    report, out, html, stderr = _anonymize(warehouse, str(tmp_path / "o"), *extra)
    assert report["suppressed_rows"] >= 1  # a secret's row at least (the others may be generalized)
    released = read_rows(out)
    released_text = json.dumps(released, default=str)
    _assert_hidden(released_text, "the release")  # the premise: the release hides them
    _assert_hidden(json.dumps(report), "the --json report")
    with open(html, encoding="utf-8") as fh:
        _assert_hidden(fh.read(), "the HTML report")
    registry = str(tmp_path / "o" / "sqlanon_releases.duckdb")
    _assert_hidden(_registry_text(registry), "the registry row")
    _assert_hidden(stderr, "the progress and log lines")
    again = tmp_path / "again.html"
    result = invoke(["report", "--release", str(report["release_id"]), "--database", registry, "-o", str(again)])
    assert result.exit_code == 0, result.output
    _assert_hidden(again.read_text(encoding="utf-8"), "the re-rendered report")


def test_before_distributions_name_only_values_of_k_rows_that_are_released(warehouse, tmp_path):
    """An independent re-check of every value the "before" lists name, against the input and the
    release read back: at least k input rows, and (a column released at level 0) in the release."""
    report, out, _, _ = _anonymize(warehouse, str(tmp_path / "o"))
    k = report["k"]
    con = duckdb.connect(warehouse["db"], read_only=True)
    released = read_rows(out)
    for column, u in report["utility"].items():
        counts = Counter(str(v) if v is not None else None for (v,) in con.execute(f'SELECT CAST("{column}" AS VARCHAR) FROM people').fetchall())
        named = [e for e in u["before"] if not e.get("other")]
        other = [e for e in u["before"] if e.get("other")]
        for e in named:
            value = None if e["value"] is None else str(e["value"])
            assert counts.get(value, 0) >= k and e["rows"] == counts[value], (column, e)
            if report["transformation"][column] == 0:
                assert any(str(r[column]) == str(value) for r in released if r[column] is not None), (column, value)
        # the rest are folded into one entry that says how many values and rows
        rest = sum(counts.values()) - sum(e["rows"] for e in named)
        assert sum(e["rows"] for e in other) == rest
        if other:
            assert other[0]["value"].startswith("other (") and f"{rest:,} row" in other[0]["value"]
    con.close()


@pytest.mark.parametrize("seed", range(25))
def test_shown_before_never_names_a_value_without_released_rows(seed):
    """Oracle: random leaves, recodings and suppressed rows; a value shown has >= k input rows and
    at least one released row (counted row by row), and at level 0 every such value is shown."""
    rnd = random.Random(seed)
    leaves = rnd.randint(1, 30)
    labels = rnd.randint(1, leaves)
    codes = np.array([rnd.randrange(labels) for _ in range(leaves)] if rnd.random() < 0.7 else list(range(leaves)), dtype=np.int64)
    labels = int(codes.max()) + 1
    rows = [(rnd.randrange(leaves), rnd.random() < 0.3) for _ in range(rnd.randint(0, 200))]  # (leaf, suppressed)
    freq = np.bincount([leaf for leaf, _ in rows], minlength=leaves).astype(np.int64)
    kept = Counter(leaf for leaf, sup in rows if not sup)
    released = np.bincount([codes[leaf] for leaf, sup in rows if not sup], minlength=labels).astype(np.int64)
    k = rnd.choice([None, 1, 2, 3, 5])
    shown = shown_before(freq, codes, released, k)
    for leaf in range(leaves):
        if shown[leaf]:
            assert freq[leaf] >= (k or 1) and kept[leaf] >= 1
    if len(set(codes.tolist())) == leaves:  # level 0: exact
        assert shown.tolist() == [bool(freq[i] >= (k or 1) and kept[i] >= 1) for i in range(leaves)]


# -- paths -------------------------------------------------------------------------------------------


def _paths_shown(report: dict, html: str) -> list[str]:
    return [json.dumps({"input": report["input"], "hierarchies": report["hierarchies"]}), html]


def test_no_absolute_path_in_the_report_unless_asked(warehouse, tmp_path, monkeypatch):
    hierarchy = tmp_path / "sex.csv"
    hierarchy.write_text("m;*\nf;*\nzzq;*\n")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the data lies outside the working directory
    folder = str(tmp_path)
    report, _, html, _ = _anonymize(warehouse, str(tmp_path / "o"), sex=str(hierarchy))
    with open(html, encoding="utf-8") as fh:
        page = fh.read()
    for text in _paths_shown(report, page):
        assert folder not in text
    assert report["input"] == "wh.duckdb:people"
    assert any(h["origin"] == "sex.csv" for h in report["hierarchies"])
    assert "<code>wh.duckdb:people</code>" in page and "<code>out.parquet</code>" in page
    registry = str(tmp_path / "o" / "sqlanon_releases.duckdb")
    again = tmp_path / "again.html"
    assert invoke(["report", "--release", "1", "--database", registry, "-o", str(again)]).exit_code == 0
    assert folder not in again.read_text(encoding="utf-8")
    # asked for: the paths as given
    full = tmp_path / "full.html"
    assert invoke(["report", "--release", "1", "--database", registry, "-o", str(full), "--full-paths"]).exit_code == 0
    assert f"<code>{warehouse['db']}:people</code>" in full.read_text(encoding="utf-8")
    report, _, html, _ = _anonymize(warehouse, str(tmp_path / "o2"), "--full-paths")
    assert report["input"] == f"{warehouse['db']}:people"
    with open(html, encoding="utf-8") as fh:
        assert warehouse["db"] in fh.read()


def test_a_path_inside_the_working_directory_is_shown_relative_to_it(warehouse, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report, _, html, _ = _anonymize(warehouse, str(tmp_path / "sub"))
    assert report["input"] == "wh.duckdb:people"
    with open(html, encoding="utf-8") as fh:
        page = fh.read()
    assert str(tmp_path) not in page and "<code>sub/out.parquet</code>" in page


def test_the_python_api_hides_the_same(warehouse, tmp_path, monkeypatch):
    import sqlanon

    other = tmp_path / "cwd"
    other.mkdir()
    monkeypatch.chdir(other)
    release = sqlanon.anonymize(input=warehouse["db"], table="people", qi={"zip": "mask", "sex": "flat", "dob": "dates"}, k=3, max_suppression=0.05,
                                keep_columns=["income"], drop_columns=["seen"], output=str(tmp_path / "api.parquet"), keep_others=True)
    text = json.dumps(release.to_dict(), default=str)
    _assert_hidden(text, "Release.to_dict()")
    assert release.to_dict()["input"] == "wh.duckdb:people" and str(tmp_path) not in json.dumps(release.to_dict()["hierarchies"], default=str)
    full = sqlanon.anonymize(input=warehouse["db"], table="people", qi={"zip": "mask", "sex": "flat", "dob": "dates"}, k=3, max_suppression=0.05,
                             keep_columns=["income"], drop_columns=["seen"], full_paths=True, keep_others=True)
    assert full.to_dict()["input"] == f"{warehouse['db']}:people"


def test_a_cut_without_its_hidden_values_reads_back(warehouse, tmp_path):
    """The genetic search's cut lists a date only a suppressed row has; the report leaves it out,
    says how many, and ``sqlanon check --transformation`` still applies the reported cut (the
    value left out is released as the root, as its row was suppressed)."""
    # without the lattice seed, so the answer is a cut (with it, the seed's full-domain node may win)
    report, _, html, _ = _anonymize(warehouse, str(tmp_path / "o"), "--search", "genetic", "--option", "seed_lattice=false")
    _assert_hidden(json.dumps(report), "the --json report")
    with open(html, encoding="utf-8") as fh:
        _assert_hidden(fh.read(), "the HTML report")
    _assert_hidden(_registry_text(str(tmp_path / "o" / "sqlanon_releases.duckdb")), "the registry row")
    assert all(isinstance(v, list) for v in report["transformation"].values())
    assert sum((report.get("hidden_cut_values") or {}).values()) >= 1
    spec = tmp_path / "plan.json"
    spec.write_text(json.dumps(report))
    result = invoke(["check", "--input", warehouse["db"], "--table", "people", "--qi", "zip=mask", "--qi", "sex=flat", "--qi", "dob=dates",
                     "--transformation", str(spec), "--k", "3", "--max-suppression", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout.strip().splitlines()[-1])
    assert measured["suppressed_rows"] <= report["suppression_budget"]
