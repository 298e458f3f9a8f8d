"""The notebook-facing Python API: a pandas/polars DataFrame or an Arrow table as the input (read
by DuckDB, released to memory), ``Release`` as a real class (typed fields, ``to_pandas()``,
``_repr_html_``, the report page), and ``check`` by a release's own policy (CLI and API).

Every release is re-checked by tests/checker.py and compared with a brute-force pure-Python
generalization of the same rows (``checker.expected_release``)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import random
import re
import tracemalloc
import paths

import duckdb
import jsonschema
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import sqlanon
from checker import check_k, check_l_diversity, expected_release, released_multiset
from sqlanon.cli.app import app
from sqlanon.errors import ConfigError
from sqlanon.release.result import Metric, PrivacyOutcome, Release

ROOT = str(paths.ROOT)
QIS = ["zip", "age", "sex"]
runner = CliRunner()


def people(n: int = 400, seed: int = 3) -> list[dict]:
    """Production-looking rows: zip codes with leading zeros (skewed), ages, a sex, a sensitive
    disease, a DECIMAL income with NULLs, a DATE and a TIMESTAMP, an id."""
    rnd = random.Random(seed)
    zips = ["01234", "01235", "01240", "01241", "02100", "02101", "09999"]
    rows = []
    for i in range(n):
        age = rnd.choice([rnd.randint(20, 35), rnd.randint(20, 80)])
        rows.append({"id": i, "zip": rnd.choices(zips, weights=[30, 20, 15, 10, 10, 10, 5])[0], "age": age,
                     "sex": rnd.choice("MF"), "disease": rnd.choice(["flu", "cold", "asthma", "hiv"]),
                     "income": None if rnd.random() < 0.1 else decimal.Decimal(rnd.randint(100, 300)) * 25 / 100,
                     "visit": dt.date(2024, 1, 1) + dt.timedelta(days=rnd.randint(0, 300)),
                     "seen": dt.datetime(2024, 1, 1, 8) + dt.timedelta(hours=rnd.randint(0, 60))})
    return rows


def hierarchies(rows: list[dict]) -> dict[str, dict[str, list[str]]]:
    """Per QI, leaf -> [leaf, level 1, ..., *] (the checker's form)."""
    zips = {r["zip"]: [r["zip"], r["zip"][:4] + "*", r["zip"][:3] + "**", "*"] for r in rows}
    ages = {str(r["age"]): [str(r["age"]), f"{r['age'] // 10 * 10}-{r['age'] // 10 * 10 + 9}", "*"] for r in rows}
    sexes = {s: [s, "*"] for s in "MF"}
    return {"zip": zips, "age": ages, "sex": sexes}


@pytest.fixture
def case(tmp_path):
    rows = people()
    hier = hierarchies(rows)
    qi = {}
    for q, h in hier.items():
        path = tmp_path / f"{q}.csv"
        path.write_text("".join(";".join(v) + "\n" for v in h.values()))
        qi[q] = str(path)
    frame = pd.DataFrame(rows)
    frame["income"] = frame["income"].astype(object)
    return {"rows": rows, "hier": hier, "qi": qi, "frame": frame, "dir": tmp_path}


def _as_text(rows: list[dict]) -> list[dict]:
    return [{k: ("*" if v == "*" else str(v)) for k, v in r.items()} for r in rows]


def _recheck(release: Release, case, k: int, max_suppression: float) -> list[dict]:
    """The released rows pass the independent checker and are exactly the brute-force release."""
    rows = release.to_arrow().to_pylist()
    assert len(rows) == len(case["rows"])
    verdict = check_k(_as_text(rows), QIS, k, max_suppression)
    assert verdict["ok"], verdict["problems"]
    expected, suppressed = expected_release(case["rows"], case["hier"], release.transformation, k)
    assert released_multiset(_as_text(rows), QIS) == expected
    assert suppressed == release.suppressed_rows == release.privacy.suppressed_rows
    return rows


# --------------------------------------------------------------------------- DataFrame inputs


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow", "dataset"])
def test_frames_in_release_out_in_memory(case, kind, monkeypatch):
    """Each kind of frame is the input (first positional), the release lands in memory (no file
    is written anywhere), and it is the brute-force release of the same rows."""
    monkeypatch.chdir(case["dir"])
    before = sorted(os.listdir(case["dir"]))
    frame = {"pandas": lambda f: f, "polars": pl.from_pandas, "arrow": lambda f: pa.Table.from_pandas(f, preserve_index=False),
             "dataset": lambda f: pads.dataset(pa.Table.from_pandas(f, preserve_index=False))}[kind](case["frame"])
    release = sqlanon.anonymize(frame, qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    assert release.output == "memory (table sqlanon_release)" and release.release_id == 1
    rows = _recheck(release, case, 6, 0.05)
    assert {r["id"] for r in rows} == set(range(len(case["rows"])))
    # the kept columns come back with their types: DECIMAL, DATE, TIMESTAMP, NULLs and all
    by_id = {r["id"]: r for r in rows}
    for original in case["rows"][:50]:
        got = by_id[original["id"]]
        assert got["disease"] == original["disease"] and got["visit"] == original["visit"] and got["seen"] == original["seen"]
        assert (got["income"] is None) == (original["income"] is None)
        if original["income"] is not None:
            assert decimal.Decimal(str(got["income"])) == original["income"]
    assert sorted(os.listdir(case["dir"])) == before  # nothing written: no file, no registry
    assert release.input.startswith({"pandas": "pandas.DataFrame(", "polars": "polars.DataFrame(", "arrow": "pyarrow.Table(", "dataset": "pyarrow.dataset.Dataset("}[kind])
    assert "id, zip, age, sex" in release.input
    release.close()
    with pytest.raises(ConfigError, match="closed"):
        release.to_pandas()


def test_dataframe_release_equals_the_csv_release(case):
    """The same rows as a DataFrame and as a CSV file: the same plan, the same released rows."""
    path = str(case["dir"] / "people.csv")
    case["frame"].to_csv(path, index=False)
    from_frame = sqlanon.anonymize(case["frame"], qi=case["qi"], k=8, max_suppression=0.02, keep_columns=["id"], drop_columns=["seen"], keep_others=True)
    from_file = sqlanon.anonymize(input=path, qi=case["qi"], k=8, max_suppression=0.02, keep_columns=["id"], drop_columns=["seen"], output=str(case["dir"] / "o.parquet"), keep_others=True)
    assert from_frame.transformation == from_file.transformation and from_frame.metric == from_file.metric
    assert from_frame.suppressed_rows == from_file.suppressed_rows and from_frame.privacy == from_file.privacy
    a = released_multiset(_as_text(from_frame.to_arrow().to_pylist()), [*QIS, "id", "disease"])
    b = released_multiset(_as_text(pq.read_table(str(case["dir"] / "o.parquet")).to_pylist()), [*QIS, "id", "disease"])
    assert a == b


def test_the_frame_is_not_copied_into_python(case):
    """DuckDB reads the frame's buffers: the run allocates (in Python, numpy included) a small
    fraction of the frame's own size, and no pandas/pyarrow conversion of it happens."""
    big = pd.concat([case["frame"][["zip", "age", "sex", "disease"]]] * 250, ignore_index=True)  # 100,000 rows
    big["age"] = big["age"].astype("int64")
    size = int(big.memory_usage(deep=True).sum())
    sqlanon.anonymize(big, qi=case["qi"], k=10, dry_run=True, keep_others=True)  # the kernels and modules loaded once
    tracemalloc.start()
    try:
        release = sqlanon.anonymize(big, qi=case["qi"], k=10, keep_others=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert release.rows == len(big)
    assert peak < size / 4, (peak, size)


def test_the_release_does_not_follow_later_changes_to_the_frame(case):
    frame = case["frame"].copy()
    release = sqlanon.anonymize(frame, qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    first = release.to_pandas()
    frame.loc[:, "zip"] = "99999"  # a row nobody else shares, once per row: would break k if read again
    again = release.to_pandas()
    assert first.equals(again)
    verdict = check_k(_as_text(again.to_dict("records")), QIS, 6, 0.05)
    assert verdict["ok"], verdict["problems"]


def test_a_frame_on_your_connection_is_a_lazy_release(case):
    """With connection=, the frame is registered on it and, with no output, the release is the
    lazy relation (recorded in that connection's registry); close() unregisters the frame."""
    con = duckdb.connect()
    release = sqlanon.anonymize(case["frame"], connection=con, qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    assert release.output == "relation"
    _recheck(release, case, 6, 0.05)
    assert con.execute("SELECT target, source FROM sqlanon_releases").fetchall()[0][0] == "relation"
    assert con.execute("SELECT source FROM sqlanon_releases").fetchall()[0][0].startswith("pandas.DataFrame(id, zip")
    release.close()
    assert con.execute("SELECT COUNT(*) FROM duckdb_views() WHERE NOT internal AND temporary").fetchall()[0][0] == 0
    written = sqlanon.anonymize(case["frame"], connection=con, qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], output_table="people_k6", keep_others=True)
    assert written.output == "table people_k6"
    verdict = check_k(_as_text([dict(zip(["id", *QIS], r)) for r in con.execute("SELECT id, zip, age, sex FROM people_k6").fetchall()]), QIS, 6, 0.05)
    assert verdict["ok"]
    con.close()


def test_frame_refusals(case):
    lazy = pl.from_pandas(case["frame"]).lazy()
    with pytest.raises(ConfigError, match="LazyFrame is a query.*collect"):
        sqlanon.anonymize(lazy, qi=case["qi"], k=2, keep_others=True)
    reader = pa.Table.from_pandas(case["frame"]).to_reader()
    with pytest.raises(ConfigError, match="RecordBatchReader can be read once"):
        sqlanon.anonymize(reader, qi=case["qi"], k=2, keep_others=True)
    with pytest.raises(ConfigError, match="in_place needs a table input"):
        sqlanon.anonymize(case["frame"], qi=case["qi"], k=2, in_place=True, keep_others=True)
    with pytest.raises(ConfigError, match="table= does not apply"):
        sqlanon.anonymize(case["frame"], qi=case["qi"], k=2, table="people", keep_others=True)
    with pytest.raises(ConfigError, match="give the input relation once"):
        sqlanon.anonymize(case["frame"], input=case["frame"], qi=case["qi"], k=2, keep_others=True)
    with pytest.raises(ConfigError, match="DuckDB cannot read this pandas.DataFrame: .*at least one column"):
        sqlanon.anonymize(pd.DataFrame(), qi=case["qi"], k=2, keep_others=True)
    with pytest.raises(ConfigError, match="runs on a DuckDB connection"):
        sqlanon.anonymize(case["frame"], connection=object(), qi=case["qi"], k=2, keep_others=True)


def test_a_failed_run_on_a_frame_leaves_nothing_open(case):
    from sqlanon.errors import UnsatisfiableError

    with pytest.raises(UnsatisfiableError):
        sqlanon.anonymize(case["frame"], qi=case["qi"], k=len(case["rows"]) + 1, keep_columns=["id"], keep_others=True)
    dry = sqlanon.anonymize(case["frame"], qi=case["qi"], k=4, dry_run=True, keep_columns=["id"], keep_others=True)
    with pytest.raises(ConfigError, match="nothing was released"):
        dry.to_pandas()


def test_a_frame_with_a_file_output_and_an_html_report(case):
    out, html = str(case["dir"] / "o.parquet"), str(case["dir"] / "r.html")
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=5, keep_columns=["id"], output=out, report=html, keep_others=True)
    assert release.output == out and os.path.isfile(out) and os.path.isfile(html)
    assert check_k(_as_text(pq.read_table(out).to_pylist()), QIS, 5, 0.0)["ok"]


# --------------------------------------------------------------------------- Release, the class


def test_release_is_a_class_with_typed_fields(case):
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], l=2, sensitive_column="disease", keep_others=True)
    assert not isinstance(release, dict)
    for name in ("pop", "update", "clear", "keys", "items", "get", "__setitem__", "__iter__"):
        assert not hasattr(release, name), name
    with pytest.raises(TypeError, match=r"not a dict: read release.transformation, or release.to_dict\(\)\['transformation'\]"):
        release["transformation"]
    with pytest.raises(TypeError, match=r"read release.extra\['trace'\]"):
        release["trace"]
    with pytest.raises(AttributeError):
        release.k = 3
    assert isinstance(release.metric, Metric) and isinstance(release.privacy, PrivacyOutcome)
    data = release.to_dict()
    assert type(data) is dict and json.loads(release.to_json()) == data
    with open(os.path.join(ROOT, "schemas", "report.schema.json"), encoding="utf-8") as fh:
        jsonschema.validate(data, json.load(fh))
    assert (release.search, release.k, release.rows, release.suppressed_rows) == (data["search"], 6, len(case["rows"]), data["suppressed_rows"])
    assert release.metric == Metric(data["metric"]["name"], data["metric"]["value"])
    assert release.privacy.models == [{"model": "k-anonymity", "k": 6}, {"model": "distinct-l-diversity", "l": 2}]
    assert release.privacy.min_class_size >= 6 and release.privacy.min_distinct_sensitive >= 2
    assert release.quasi_identifiers == QIS and [h["attribute"] for h in release.hierarchies] == QIS
    assert release.suppression_budget == int(0.05 * len(case["rows"])) and release.max_suppression == 0.05
    assert set(release.loss) == {"loss", "loss_arithmetic", "granularity"} and release.risk["after"] and release.utility
    assert release.warnings == [] and release.dry_run is None and isinstance(release.timings, dict)
    fields = set(data) - {"arx_quality"}
    assert set(release.extra) == {k for k in fields if not hasattr(release, k)}
    # fields are copies: changing one changes nothing
    release.transformation["zip"] = 99
    assert release.transformation == data["transformation"]
    rows = release.to_pandas().to_dict("records")
    assert check_l_diversity(_as_text(rows), QIS, "disease", 2)
    assert re.fullmatch(r"Release\(search='optimal', k=6, rows=400, suppressed_rows=\d+, transformation=\{.*\}, metric=precision=[\d.]+, output='memory \(table sqlanon_release\)'\)", repr(release))


def test_release_to_pandas_polars_arrow(case):
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    frame, table, polars_frame = release.to_pandas(), release.to_arrow(), release.to_polars()
    assert isinstance(frame, pd.DataFrame) and isinstance(table, pa.Table) and isinstance(polars_frame, pl.DataFrame)
    assert list(frame.columns) == table.column_names == polars_frame.columns == list(case["frame"].columns)
    assert len(frame) == table.num_rows == polars_frame.height == len(case["rows"])
    assert sorted(frame["id"]) == sorted(polars_frame["id"].to_list())
    assert str(table.schema.field("visit").type) == "date32[day]" and str(table.schema.field("income").type).startswith("decimal")


def test_repr_html_is_the_summary(case):
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    page = release._repr_html_()
    assert page.startswith("<div") and "<script" not in page
    levels = {h["attribute"]: h["levels"] - 1 for h in release.hierarchies}
    for needle in ("k-anonymity (k=6)", f"smallest released class {release.privacy.min_class_size}", f"{len(case['rows']):,}",
                   f"{release.suppressed_rows:,} (", "precision = ", "loss (ARX)", f"loss {release.loss['loss']:.4g}",
                   "memory (table sqlanon_release) (release 1)"):
        assert needle in page, needle
    for q in QIS:
        assert f"<td style='text-align:left'>{q}</td><td style='text-align:left'>level {release.transformation[q]} of {levels[q]}</td>" in page
    # no released value of a suppressed row and no input value appears: only the plan's figures
    assert "01234" not in page and "hiv" not in page


def test_repr_html_escapes_and_shows_cuts():
    from sqlanon.release.summary import summary_html

    page = summary_html({"transformation": {"<b>x</b>": ["[0, 10[", "<i>", "a", "b", "c", "d", "e"]}, "metric": {"name": "lm", "value": 0.5},
                         "privacy": {"models": [{"model": "k-anonymity", "k": 3}]}, "rows": 0, "warnings": [{"message": "<keeps nearly nothing>"}]})
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and "&lt;i&gt;" in page
    assert "cut of 7 released values: [0, 10[, &lt;i&gt;, a, b, c, d, ..." in page and "&lt;keeps nearly nothing&gt;" in page


def test_report_html_and_save_report(case):
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    page = release.report_html()
    assert page.lstrip().lower().startswith("<!doctype html") and "Re-identification risk" in page and "base frequency set" in page
    path = str(case["dir"] / "report.html")
    assert release.save_report(path) == path
    assert "Re-identification risk" in open(path, encoding="utf-8").read()
    with pytest.raises(ConfigError, match="exists"):
        release.save_report(path)
    release.save_report(path, overwrite=True)
    with pytest.raises(ConfigError):
        release.save_report(str(case["dir"] / "report.txt"))


# --------------------------------------------------------------------------- check by the release's own policy


def _suppressing_release(case):
    """A Parquet release that suppresses rows within its budget (k=10, 10 %)."""
    path = str(case["dir"] / "people.csv")
    case["frame"].to_csv(path, index=False)
    out = str(case["dir"] / "out" / "people_k10.parquet")
    release = sqlanon.anonymize(input=path, qi=case["qi"], k=10, max_suppression=0.1, keep_columns=["id"], l=2, sensitive_column="disease", output=out, keep_others=True)
    assert release.suppressed_rows > 0, "the case must suppress rows"
    return release, out


def test_check_reads_the_release_policy(case):
    """`check --k 10` without --max-suppression on a release that suppressed rows within its
    budget passes (it used to fail: a budget of 0); --no-release-policy measures by the flags."""
    release, out = _suppressing_release(case)
    res = runner.invoke(app, ["check", "-i", out, "--qi", "zip", "--qi", "age", "--qi", "sex", "--k", "10", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["k_anonymous"] is True and data["release"]["id"] == release.release_id
    assert data["release"]["suppression_budget"] == release.suppression_budget
    # an independent recount of the file
    rows = _as_text(pq.read_table(out).to_pylist())
    verdict = check_k(rows, QIS, 10, 0.1)
    assert verdict["ok"] and data["suppressed_rows"] == verdict["suppressed"] == release.suppressed_rows and data["k"] == verdict["min_class"]
    plain = runner.invoke(app, ["check", "-i", out, "--qi", "zip", "--qi", "age", "--qi", "sex", "--k", "10", "--no-release-policy", "--json"])
    assert plain.exit_code == 3 and json.loads(plain.stdout)["k_anonymous"] is False and "release" not in json.loads(plain.stdout)


def test_check_with_no_flags_checks_every_model(case):
    release, out = _suppressing_release(case)
    res = runner.invoke(app, ["check", "-i", out, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["quasi_identifiers"] == QIS
    assert [(v["model"], v["ok"]) for v in data["verdicts"]] == [("k-anonymity", True), ("suppression", True), ("distinct-l-diversity", True)]
    assert data["l_distinct"] >= 2 and check_l_diversity(_as_text(pq.read_table(out).to_pylist()), QIS, "disease", 2)
    # by id, from anywhere: the file is found beside its registry
    registry = os.path.join(os.path.dirname(out), "sqlanon_releases.duckdb")
    by_id = runner.invoke(app, ["check", "--release", str(release.release_id), "--registry", registry, "--json"])
    assert by_id.exit_code == 0, by_id.output
    assert {k: v for k, v in json.loads(by_id.stdout).items() if k != "queries"} == {k: v for k, v in data.items() if k != "queries"}
    # flags win over the release: a k it does not meet, exit 3 and the verdict says NO
    strict = runner.invoke(app, ["check", "-i", out, "--k", "50"])
    assert strict.exit_code == 3
    assert re.search(r"^k-anonymity\s+k=50\s+\d+\s+NO$", strict.stdout, re.M), strict.stdout


def test_check_text_output_is_a_clean_table(case):
    release, out = _suppressing_release(case)
    res = runner.invoke(app, ["check", "-i", out, "--risk"])
    assert res.exit_code == 0, res.output
    assert "{" not in res.stdout and "[" not in res.stdout.split("prosecutor")[0].replace("[0", "")  # no raw JSON
    head = res.stdout.split("\n\n")[0].splitlines()
    starts = {len(line) - len(line.split(maxsplit=1)[1]) for line in head if not line.startswith("checked by") and not line.startswith("class sizes")}
    assert len(starts) == 1, head
    assert head[0].startswith("release  ") and f"{release.release_id} of " in head[0]
    assert any(line.startswith("metrics.discernibility") for line in head)
    assert re.search(r"^model\s+required\s+measured\s+ok$", res.stdout, re.M)
    assert re.search(r"^suppression\s+<= \d+ rows\s+\d+\s+yes$", res.stdout, re.M)
    assert "prosecutor risk" in res.stdout


def test_check_catches_a_tampered_release(case):
    """A release file changed after it was written (rows of small classes put back) fails its
    own policy's check, and says which model."""
    release, out = _suppressing_release(case)
    table = pq.read_table(out).to_pylist()
    table.append({**table[0], "zip": "01234", "age": "77", "sex": "M"})  # a class of one
    pq.write_table(pa.Table.from_pylist(table), out)
    res = runner.invoke(app, ["check", "-i", out, "--json"])
    assert res.exit_code == 3
    data = json.loads(res.stdout)
    assert data["k"] == 1 and data["k_anonymous"] is False
    assert [v["model"] for v in data["verdicts"] if not v["ok"]] == ["k-anonymity", "distinct-l-diversity"]  # one row, one disease


def test_check_a_table_release_by_the_database_registry(case, tmp_path):
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.register("frame", case["frame"])
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    release = sqlanon.anonymize(input=db, table="people", qi=case["qi"], k=7, max_suppression=0.08, keep_columns=["id"], output_table="people_k7", keep_others=True)
    got = sqlanon.check(db, table="people_k7")
    assert got["release"]["id"] == release.release_id and got["k_anonymous"] is True
    assert got["suppressed_rows"] == release.suppressed_rows and got["k"] >= 7
    assert [v["model"] for v in got["verdicts"]] == ["k-anonymity", "suppression"]
    by_id = sqlanon.check(release=release.release_id, registry=db)
    assert by_id["input"] == got["input"] and by_id["k"] == got["k"]
    # the source table is no release: measured by what is given only
    plain = sqlanon.check(db, ["zip"], table="people", k=2)
    assert "release" not in plain and "verdicts" not in plain
    with pytest.raises(ConfigError, match="give the quasi-identifier columns to check"):
        sqlanon.check(db, table="people")


def test_check_api_refusals(case, tmp_path):
    release, out = _suppressing_release(case)
    registry = os.path.join(os.path.dirname(out), "sqlanon_releases.duckdb")
    with pytest.raises(ConfigError, match="release 99 is not in the registry"):
        sqlanon.check(release=99, registry=registry)
    with pytest.raises(ConfigError, match="needs --registry"):
        sqlanon.check(release=1)
    with pytest.raises(ConfigError, match="registry database not found"):
        sqlanon.check(release=1, registry=str(tmp_path / "nope.duckdb"))
    with pytest.raises(ConfigError, match="check needs an input"):
        sqlanon.check()
    os.rename(out, out + ".moved")
    with pytest.raises(ConfigError, match="not there any more; give --input"):
        sqlanon.check(release=release.release_id, registry=registry)
    moved = sqlanon.check(out + ".moved", release=release.release_id, registry=registry, format="parquet")
    assert moved["k_anonymous"] is True
    res = runner.invoke(app, ["check", "--release", "1", "--no-release-policy", "--registry", registry])
    assert res.exit_code == 2 and "--no-release-policy" in res.output


def test_check_plan_takes_a_release(case):
    path = str(case["dir"] / "people.csv")
    case["frame"].to_csv(path, index=False)
    release = sqlanon.anonymize(case["frame"], qi=case["qi"], k=6, max_suppression=0.05, keep_columns=["id"], keep_others=True)
    measured = sqlanon.run.api.check_plan(path, case["qi"], release, k=6, max_suppression=0.05)
    assert measured["suppressed_rows"] == release.suppressed_rows and measured["within_budget"]


# --------------------------------------------------------------------------- the notebook in the docs


NOTEBOOK = re.compile(r"<!--\s*notebook\s*-->\s*\n```python\n(.*?)\n```", re.S)


def notebook_cells() -> list[str]:
    with open(os.path.join(ROOT, "docs", "python-api.md"), encoding="utf-8") as fh:
        return NOTEBOOK.findall(fh.read())


def test_the_notebook_in_the_docs_runs(tmp_path):
    """docs/python-api.md's notebook cells (each marked ``<!-- notebook -->``) run in order in one
    namespace, as a notebook does, in a copy of the examples: DataFrame in, Release out,
    to_pandas(), _repr_html_, the report saved. Then what they made is checked."""
    import shutil

    cells = notebook_cells()
    assert len(cells) >= 3, "the notebook cells are marked <!-- notebook -->"
    shutil.copytree(os.path.join(ROOT, "examples"), tmp_path / "examples", ignore=shutil.ignore_patterns("out", "target", "logs", "dbt_packages"))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    namespace: dict = {}
    try:
        for i, cell in enumerate(cells):
            exec(compile(cell, f"docs/python-api.md notebook cell {i + 1}", "exec"), namespace)
    finally:
        os.chdir(cwd)
    release = namespace["release"]
    assert isinstance(release, Release) and isinstance(namespace["df"], pd.DataFrame)
    released = namespace["released"]
    assert isinstance(released, pd.DataFrame) and len(released) == len(namespace["df"])
    qis = list(release.transformation)
    assert check_k(_as_text(released.to_dict("records")), qis, release.k, release.max_suppression)["ok"]
    assert "k-anonymity" in namespace["summary"]
    assert (tmp_path / "adult_report.html").is_file()
    assert namespace["checked"]["k_anonymous"] is True


def test_check_takes_a_written_release(case, tmp_path):
    release, out = _suppressing_release(case)
    got = sqlanon.check(release)
    assert got["release"]["id"] == release.release_id and got["k_anonymous"] is True
    assert [v["ok"] for v in got["verdicts"]] == [True, True, True]
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.register("frame", case["frame"])
    con.execute("CREATE TABLE people AS SELECT * FROM frame")
    con.close()
    in_table = sqlanon.anonymize(input=db, table="people", qi=case["qi"], k=5, keep_columns=["id"], output_table="people_k5", keep_others=True)
    assert sqlanon.check(in_table)["release"]["target"] == "table people_k5"
    con = duckdb.connect()
    on_connection = sqlanon.anonymize(case["frame"], connection=con, qi=case["qi"], k=5, keep_columns=["id"], output_table="people_k5", keep_others=True)
    with pytest.raises(ConfigError, match="table people_k5 of your connection"):
        sqlanon.check(on_connection)
    con.close()
    with pytest.raises(ConfigError, match="check reads a written release; this one is memory"):
        sqlanon.check(sqlanon.anonymize(case["frame"], qi=case["qi"], k=5, keep_columns=["id"], keep_others=True))


def test_check_of_a_release_without_its_sensitive_column(case):
    """A release that dropped its sensitive column is checked for what it still holds; the
    l-diversity it was written for is listed as not checked, with the reason."""
    path = str(case["dir"] / "people.csv")
    case["frame"].to_csv(path, index=False)
    out = str(case["dir"] / "o" / "p.parquet")
    sqlanon.anonymize(input=path, qi=case["qi"], k=6, l=2, sensitive_column="disease", drop_columns=["id", "disease"], output=out, keep_others=True)
    got = sqlanon.check(out)
    assert [v["model"] for v in got["verdicts"]] == ["k-anonymity", "suppression"] and got["k_anonymous"] is True
    assert got["not_checked"] == ["distinct-l-diversity (its sensitive column 'disease' is not in the release)"]
    with pytest.raises(ConfigError, match="unknown sensitive column 'disease'"):
        sqlanon.check(out, sensitive_column="disease")
