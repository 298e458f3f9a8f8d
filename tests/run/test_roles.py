"""Every column has a role, and values that look like markers (issue 41).

* a release whose policy leaves columns without a role is refused before the scan, in one line
  naming every such column with the profile's verdict, and nothing is written; ``keep_others``
  (``--keep-others``) releases them as they are, unless one is nearly unique (checked against a
  pure-Python count on random columns);
* a profile's generated policy gives every column a role, and runs unedited;
* column names resolve as the engine resolves them (``--qi zip`` finds ``ZIP`` on DuckDB;
  PostgreSQL folds unquoted names), with near spellings in the error;
* a QI whose data holds the marker ``*`` is refused for a masked release; the check reads such
  rows as suppressed only with a marker (``--suppressed-marker none`` reads them as data).
"""

from __future__ import annotations

import datetime as dt
import decimal
import os
import random

import duckdb
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

import sqlanon
from sqlanon.cli.app import app
from sqlanon.engine import connect
from sqlanon.engine.column_names import near_matches, resolve
from sqlanon.engine.source import Source
from sqlanon.errors import ConfigError
from sqlanon.release import write as release_mod

runner = CliRunner()


def _people(path: str, n: int = 300, seed: int = 7, ssn_distinct: int | None = None) -> str:
    """A production-like table: a zip with leading zeros, skewed ages, a gender, a DATE of birth,
    an ssn (``ssn_distinct`` distinct values, else unique), a DECIMAL amount, a TIMESTAMP, a
    note with NULLs."""
    rnd = random.Random(seed)
    con = duckdb.connect(path)
    con.execute("CREATE TABLE people (zip VARCHAR, age INTEGER, gender VARCHAR, dob DATE, ssn VARCHAR, amount DECIMAL(10,2), seen TIMESTAMP, note VARCHAR)")
    rows = []
    for i in range(n):
        ssn = i if ssn_distinct is None else i % ssn_distinct
        rows.append((f"0{rnd.choice([1001, 1002, 1003, 1004])}", min(90, int(rnd.expovariate(1 / 15)) + 18), rnd.choice(["F", "M"]),
                     dt.date(1940, 1, 1) + dt.timedelta(days=rnd.randint(0, 20000)), f"{100000000 + ssn:09d}",
                     decimal.Decimal(rnd.randint(0, 500)) / 4, dt.datetime(2024, 1, 1) + dt.timedelta(minutes=rnd.randint(0, 10**6)),
                     rnd.choice(["ok", "call back", None])))
    con.executemany("INSERT INTO people VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    return path


@pytest.fixture
def db(tmp_path):
    return _people(str(tmp_path / "p.duckdb"))


QI = {"zip": "mask", "age": "bands:10,20,40"}


def _run(db, tmp_path, **options):
    out = str(tmp_path / "out.parquet")
    return sqlanon.anonymize(input=db, table="people", qi=QI, k=5, max_suppression=0.1, output=out, **options), out


def test_unassigned_columns_are_refused_before_the_scan_naming_each_with_the_profile(db, tmp_path):
    with pytest.raises(ConfigError) as err:
        _run(db, tmp_path)
    text = str(err.value)
    assert "\n" not in text
    for name, verdict in (("gender", "a quasi-identifier"), ("dob", "a quasi-identifier"), ("ssn", "an identifier, to drop"), ("amount", None), ("seen", None), ("note", None)):
        assert repr(name) in text
        if verdict:
            assert f"{name!r} (profile: {verdict}" in text
    assert "6 columns without a role" in text and "--keep-others" in text
    assert not os.path.exists(tmp_path / "out.parquet")


def test_cli_refusal_is_one_line_and_a_nonzero_exit(db, tmp_path):
    out = tmp_path / "out.parquet"
    r = runner.invoke(app, ["anonymize", "-i", db, "--table", "people", "--qi", "zip=mask", "--qi", "age=bands:10,20,40", "--k", "5", "-o", str(out)])
    assert r.exit_code != 0
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "without a role" in lines[0] and "'gender'" in lines[0], r.output
    assert "base frequency set" not in r.output  # refused before the scan
    assert not out.exists()


def test_every_column_given_a_role_runs_and_releases_kept_columns_as_they_are(db, tmp_path):
    report, out = _run(db, tmp_path, sensitive_column="note", keep_columns=["amount", "seen"], drop_columns=["ssn", "dob", "gender"])
    released = pq.read_table(out)
    assert released.column_names == ["zip", "age", "amount", "seen", "note"]
    con = duckdb.connect(db, read_only=True)
    source = con.sql("SELECT amount, seen, note FROM people").fetchall()
    con.close()
    rows = released.select(["amount", "seen", "note"]).to_pylist()
    assert sorted(map(str, [tuple(r.values()) for r in rows])) == sorted(map(str, source))  # no row changed: the kept ones are the source's
    assert report.to_dict()["suppressed_rows"] <= report.to_dict()["suppression_budget"]


def test_keep_others_releases_the_rest_but_refuses_a_nearly_unique_one(db, tmp_path):
    # the date of birth, the ssn and the timestamp each nearly tell the rows apart
    with pytest.raises(ConfigError, match=r"columns 'dob', 'ssn', 'seen' are \(nearly\) unique per row"):
        _run(db, tmp_path, keep_others=True)
    assert not os.path.exists(tmp_path / "out.parquet")
    report, out = _run(db, tmp_path, keep_others=True, drop_columns=["ssn", "dob", "seen"])
    assert pq.read_table(out).column_names == ["zip", "age", "gender", "amount", "note"]
    # a column kept by name (--keep-column) is kept knowingly, unique or not
    report, out = _run(db, tmp_path, keep_others=True, keep_columns=["ssn", "dob"], drop_columns=["seen"], overwrite=True)
    assert "ssn" in pq.read_table(out).column_names


def test_ssn_with_299_distinct_values_in_300_rows_is_refused(tmp_path):
    db = _people(str(tmp_path / "s.duckdb"), ssn_distinct=299)
    with pytest.raises(ConfigError, match=r"'ssn' is \(nearly\) unique per row"):
        _run(db, tmp_path, keep_others=True, drop_columns=["dob", "seen"])
    r = runner.invoke(app, ["anonymize", "-i", db, "--table", "people", "--qi", "zip=mask", "--qi", "age=bands:10,20,40", "--k", "5",
                            "--max-suppression", "0.1", "--keep-others", "--drop-column", "dob", "--drop-column", "seen", "-o", str(tmp_path / "o.parquet")])
    assert r.exit_code != 0 and "'ssn'" in r.output


def _nearly_unique(values: list) -> bool:
    """The rule, in Python: at least 100 non-NULL values, at least 90 % of them distinct."""
    present = [v for v in values if v is not None]
    return len(present) >= release_mod.MIN_ROWS and len(set(present)) >= release_mod.NEARLY_UNIQUE * len(present)


@pytest.mark.parametrize("seed", range(4))
def test_nearly_unique_refusal_equals_a_python_count(tmp_path, seed):
    rnd = random.Random(seed)
    n = rnd.choice([150, 400])
    con = duckdb.connect()
    columns = {}
    for j in range(8):  # shares of distinct values around the threshold, some NULLs
        share, nulls = rnd.choice([0.5, 0.85, 0.89, 0.91, 0.95, 1.0]), rnd.choice([0.0, 0.1, 0.6])
        pool = max(1, int(share * n))
        columns[f"c{j}"] = [None if rnd.random() < nulls else (i if i < pool else rnd.randrange(pool)) for i in range(n)]
    con.execute("CREATE TABLE t (" + ", ".join(f"{c} INTEGER" for c in columns) + ")")
    con.executemany("INSERT INTO t VALUES (" + ", ".join("?" for _ in columns) + ")", list(zip(*columns.values())))
    engine = connect(connection=con)
    source = Source(kind="table", table="t")
    _, found = release_mod.unique_columns(engine, source, list(columns), nearly=list(columns))
    assert found == [c for c, values in columns.items() if _nearly_unique(values)]


def test_in_place_rewrite_without_the_qi_lines_is_refused_and_leaves_the_table(db, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({"input": db, "table": "people", "qi": {"zip": "mask"}, "k": 5, "in_place": True}))
    con = duckdb.connect(db, read_only=True)
    before = con.sql("SELECT * FROM people ORDER BY ALL").fetchall()
    con.close()
    r = runner.invoke(app, ["anonymize", "--policy", str(policy)])
    assert r.exit_code != 0 and "'dob'" in r.output and "'gender'" in r.output
    con = duckdb.connect(db, read_only=True)
    assert con.sql("SELECT * FROM people ORDER BY ALL").fetchall() == before
    con.close()


def test_a_run_with_no_release_is_not_refused(db):
    report = sqlanon.anonymize(input=db, table="people", qi=QI, k=5, max_suppression=0.1)
    assert report.to_dict()["quasi_identifiers"] == ["zip", "age"]


def test_profile_policy_names_every_column_and_runs_unedited(db, tmp_path):
    path = tmp_path / "policy.yaml"
    sqlanon.profile(db, table="people", k=5, write_policy=str(path))
    policy = yaml.safe_load(path.read_text())
    named = set(policy.get("qi") or {}) | set(policy.get("drop_columns") or []) | set(policy.get("keep_columns") or [])
    assert named == {"zip", "age", "gender", "dob", "ssn", "amount", "seen", "note"}
    assert "keep_others" not in policy
    r = runner.invoke(app, ["anonymize", "--policy", str(path)])
    assert r.exit_code == 0, r.output


# -- names -------------------------------------------------------------------------------------


def test_names_resolve_as_the_engine_resolves_them():
    have = ["id", "ZIP", "Age"]
    assert resolve(have, "zip", "duckdb") == "ZIP" and resolve(have, "zip", "spark") == "ZIP"
    assert resolve(have, "zip", "postgres") is None  # "ZIP" needs its spelling on PostgreSQL
    assert resolve(["zip"], "ZIP", "postgres") == "zip"  # an unquoted name folds to lower case
    assert resolve(["zip", "Zip"], "ZIP", "duckdb") is None  # ambiguous: not guessed
    assert resolve(have, "ZIP", "postgres") == "ZIP"
    assert near_matches(have, "zipp") == ["ZIP"]


def test_qi_zip_finds_a_column_zip_in_capitals(tmp_path):
    path = str(tmp_path / "u.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE t AS SELECT lpad(CAST(i % 4 AS VARCHAR), 5, '0') AS \"ZIP\", 20 + i % 30 AS \"Age\", (i // 7) % 3 AS \"Visits\" FROM range(200) r(i)")
    con.close()
    out = str(tmp_path / "o.parquet")
    report = sqlanon.anonymize(input=path, table="t", qi={"zip": "mask", "age": "bands:10,20"}, k=5, keep_columns=["visits"], output=out)
    assert report.to_dict()["quasi_identifiers"] == ["ZIP", "Age"]
    assert pq.read_table(out).column_names == ["ZIP", "Age", "Visits"]
    r = runner.invoke(app, ["anonymize", "-i", path, "--table", "t", "--qi", "zipcode=mask", "--k", "5", "-o", str(tmp_path / "x.parquet")])
    assert r.exit_code != 0 and "did you mean 'ZIP'?" in r.output
    # the check resolves names the same way
    assert sqlanon.check(path, ["zip"], table="t")["quasi_identifiers"] == ["ZIP"]


# -- markers -----------------------------------------------------------------------------------


def _starred(tmp_path) -> str:
    """zip holds a real ``*`` in 30 rows (unknown zips written so at the source)."""
    path = str(tmp_path / "star.duckdb")
    con = duckdb.connect(path)
    con.execute("CREATE TABLE t AS SELECT CASE WHEN i < 30 THEN '*' ELSE lpad(CAST(i % 5 AS VARCHAR), 5, '0') END AS zip, 20 + i % 40 AS age FROM range(300) r(i)")
    con.close()
    return path


def test_a_qi_holding_the_marker_is_refused_for_a_masked_release(tmp_path):
    path = _starred(tmp_path)
    out = tmp_path / "o.parquet"
    with pytest.raises(ConfigError, match=r"'zip' holds the value '\*', the marker of suppressed rows"):
        sqlanon.anonymize(input=path, table="t", qi={"zip": "mask", "age": "bands:10,20"}, k=5, max_suppression=0.1, output=str(out))
    assert not out.exists()
    # dropped suppressed rows leave no marker to confuse: the release is made
    report = sqlanon.anonymize(input=path, table="t", qi={"zip": "mask", "age": "bands:10,20"}, k=5, max_suppression=0.1, suppression="drop", output=str(out))
    assert pq.read_table(out).num_rows == 300 - report.to_dict()["suppressed_rows"]


def test_the_check_reads_the_marker_only_when_told(tmp_path):
    path = _starred(tmp_path)
    as_release = sqlanon.check(path, ["zip"], table="t")
    assert as_release["suppressed_rows"] == 30 and as_release["suppressed_marker"] == "*"
    as_data = sqlanon.check(path, ["zip"], table="t", suppressed_marker=None)
    assert as_data["suppressed_rows"] == 0 and as_data["k"] == 30  # the 30 '*' rows are one class of data
    r = runner.invoke(app, ["check", "-i", path, "--table", "t", "--qi", "zip", "--suppressed-marker", "none", "--json"])
    assert r.exit_code == 0, r.output
    assert '"suppressed_rows": 0' in r.output


@pytest.mark.postgres
def test_postgres_folds_unquoted_names_to_lower_case(tmp_path):
    """On PostgreSQL ``--qi ZIP`` finds ``zip`` (an unquoted name folds to lower case), while a
    column created as ``"Visits"`` is named by its spelling: ``visits`` is refused, near spelling
    said."""
    psycopg = pytest.importorskip("psycopg")
    from conftest import local_postgres

    with local_postgres() as url:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute('CREATE TABLE people (zip TEXT, age INTEGER, "Visits" INTEGER)')
            con.execute("INSERT INTO people SELECT lpad((i % 4)::text, 5, '0'), 20 + i % 30, (i / 7) % 3 FROM generate_series(0, 199) i")
        out = str(tmp_path / "o.parquet")
        with pytest.raises(ConfigError, match=r"unknown --keep-column 'visits' .*did you mean 'Visits'\?"):
            sqlanon.anonymize(input=url, table="people", qi={"ZIP": "mask", "AGE": "bands:10,20"}, k=5, keep_columns=["visits"], output=out)
        report = sqlanon.anonymize(input=url, table="people", qi={"ZIP": "mask", "AGE": "bands:10,20"}, k=5, keep_columns=["Visits"], output=out)
        assert report.to_dict()["quasi_identifiers"] == ["zip", "age"]
        assert pq.read_table(out).column_names == ["zip", "age", "Visits"]
