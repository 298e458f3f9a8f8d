"""Table names are parsed table expressions (schema-qualified, case as the database treats it),
never one quoted string; existence checks know schemas; --in-place keeps the schema, the name and
the types of QIs left at level 0. On DuckDB and on PostgreSQL."""

from __future__ import annotations

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon.cli.app
from conftest import local_postgres

runner = CliRunner()
ROWS = [("ann", "12345", 31, "2001-02-03"), ("bob", "12346", 31, "2001-02-03"), ("cid", "12355", 41, "1999-12-31"), ("dan", "12356", 41, "1999-12-31")]


def invoke(args):
    return runner.invoke(sqlanon.cli.app.app, args)


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def warehouse(tmp_path):
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE SCHEMA s1")
    for table in ("s1.patients", "main.patients"):
        con.execute(f"CREATE TABLE {table} (name VARCHAR, zip VARCHAR, age INTEGER, birth DATE)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?, ?, ?)", ROWS)
    con.execute("CREATE VIEW s1.patients_view AS SELECT zip, age FROM s1.patients")
    con.execute("CREATE VIEW patients_v AS SELECT * FROM patients")
    con.close()
    return db


def tables(db) -> list[tuple]:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_name NOT LIKE 'sqlanon%' ORDER BY ALL").fetchall()
    finally:
        con.close()


def fetch(db, sql):
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_parse():
    from sqlanon.engine.table_name import TableName

    assert TableName.parse("s1.patients") == TableName("patients", "s1")
    assert TableName.parse("cat.s1.patients") == TableName("patients", "s1", "cat")
    assert TableName.parse('"s1.patients"') == TableName("s1.patients")
    assert TableName.parse('s1."Pat ients"') == TableName("Pat ients", "s1")
    assert TableName.parse("PATIENTS") == TableName("PATIENTS")
    assert TableName.parse("PATIENTS", "postgres") == TableName("patients")
    assert TableName.parse('"PATIENTS"', "postgres") == TableName("PATIENTS")
    assert TableName.parse("out table") == TableName("out table")
    assert TableName.parse('we"ird') == TableName('we"ird')
    assert TableName.parse("s1.patients").expression().sql("duckdb") == '"s1"."patients"'


def test_in_place_on_a_schema_qualified_table_stays_in_its_schema(warehouse):
    before = tables(warehouse)
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "s1.patients", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 0, r.output
    assert tables(warehouse) == before  # no main."s1.patients", s1.patients still there
    assert sorted(fetch(warehouse, "SELECT zip FROM s1.patients")) == [("1234*",), ("1234*",), ("1235*",), ("1235*",)]
    assert sorted(fetch(warehouse, "SELECT zip FROM main.patients")) == sorted((r[1],) for r in ROWS)  # the other one untouched
    assert len(fetch(warehouse, "SELECT * FROM s1.patients_view")) == 4  # the view still binds


def test_in_place_with_another_case_keeps_the_catalog_name(warehouse):
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "PATIENTS", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 0, r.output
    names = [t[1] for t in tables(warehouse)]
    assert "patients" in names and "PATIENTS" not in names
    assert sorted(fetch(warehouse, 'SELECT zip FROM main."patients"'))[0] == ("1234*",)


def test_in_place_keeps_the_types_of_ungeneralized_qis(warehouse):
    """age and birth stay at level 0 (k=2 is met by zip alone): INTEGER and DATE, not VARCHAR."""
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "main.patients", "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--qi", "birth=dates", "--k", "2", "--metric", "height", "--in-place", "-q", "--json"])
    assert r.exit_code == 0, r.output
    import json

    transformation = json.loads(r.stdout)["transformation"]
    assert transformation == {"zip": 1, "age": 0, "birth": 0}
    types = dict((c, t) for c, t, *_ in fetch(warehouse, "DESCRIBE main.patients"))
    assert types == {"name": "VARCHAR", "zip": "VARCHAR", "age": "INTEGER", "birth": "DATE"}
    assert sorted(fetch(warehouse, "SELECT age, birth FROM main.patients")) == sorted((r[2], __import__("datetime").date.fromisoformat(r[3])) for r in ROWS)


def test_output_table_in_a_schema(warehouse):
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "main.patients", "--qi", "zip=mask", "--k", "2", "--output-table", "s1.released", "-q"])
    assert r.exit_code == 0, r.output
    assert ("s1", "released", "BASE TABLE") in tables(warehouse)
    assert len(fetch(warehouse, "SELECT * FROM s1.released")) == 4
    # exists now: refused without --overwrite, whatever the case; replaced with it
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "2", "--output-table", "S1.RELEASED", "-q"])
    assert r.exit_code == 2 and error_line(r) == "error: output table 'S1.RELEASED' already exists (use --overwrite)"
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "4", "--output-table", "S1.RELEASED", "--overwrite", "-q"])
    assert r.exit_code == 0, r.output
    assert fetch(warehouse, "SELECT DISTINCT zip FROM s1.released") == [("123**",)]
    assert [t for t in tables(warehouse) if t[1].lower() == "released"] == [("s1", "released", "BASE TABLE")]


def test_output_table_in_a_missing_schema(warehouse):
    before = tables(warehouse)
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "2", "--output-table", "s2.out", "-q"])
    assert r.exit_code == 2
    assert error_line(r) == "error: schema 's2' of output table 's2.out' not found (create it first)"
    assert tables(warehouse) == before


def test_missing_schema_of_the_input(warehouse):
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "s9.patients", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 2
    assert error_line(r) == f"error: schema 's9' of table 's9.patients' not found in {warehouse}"


@pytest.mark.parametrize("view", ["patients_v", "s1.patients_view"])
def test_in_place_on_a_view_is_refused(warehouse, view):
    before = tables(warehouse)
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", view, "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 2
    assert error_line(r) == f"error: --in-place rewrites a table; {view!r} is a view (write the release with --output-table instead)"
    assert tables(warehouse) == before
    # a view is a fine input otherwise
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", view, "--qi", "zip=mask", "--k", "2", "--output-table", "from_view", "-q"])
    assert r.exit_code == 0, r.output


def test_output_table_that_is_a_view_is_refused(warehouse):
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "2", "--output-table", "patients_v", "--overwrite", "-q"])
    assert r.exit_code == 2 and error_line(r) == "error: output table 'patients_v' is a view; name another table"
    assert len(fetch(warehouse, "SELECT * FROM patients_v")) == 4


# -- PostgreSQL -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg():
    with local_postgres() as uri:
        yield uri


@pytest.fixture
def pg_db(pg):
    import uuid

    import psycopg

    name = "t_" + uuid.uuid4().hex[:10]
    with psycopg.connect(pg, autocommit=True) as con:
        con.execute("CREATE DATABASE " + name)
    head, _, query = pg.partition("?")
    url = head.rsplit("/", 1)[0] + "/" + name + (f"?{query}" if query else "")
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE SCHEMA s1")
        for table in ("s1.patients", "public.patients"):
            con.execute(f"CREATE TABLE {table} (name TEXT, zip TEXT, age INTEGER, birth DATE)")
            with con.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s, %s)", ROWS)
        con.execute("CREATE VIEW patients_v AS SELECT * FROM public.patients")
    return url


def pg_fetch(url, sql):
    import psycopg

    with psycopg.connect(url) as con:
        return con.execute(sql).fetchall()


def pg_tables(url):
    return pg_fetch(url, "SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema IN ('public', 's1') AND table_name NOT LIKE 'sqlanon%' ORDER BY 1, 2")


@pytest.mark.postgres
def test_postgres_schema_qualified_and_case_variant_names(pg_db):
    before = pg_tables(pg_db)
    r = invoke(["anonymize", "--keep-others", "--input", pg_db, "--table", "S1.Patients", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 0, r.output
    assert pg_tables(pg_db) == before
    assert sorted(pg_fetch(pg_db, "SELECT zip FROM s1.patients")) == [("1234*",), ("1234*",), ("1235*",), ("1235*",)]
    assert sorted(pg_fetch(pg_db, "SELECT zip FROM public.patients")) == sorted((r[1],) for r in ROWS)
    r = invoke(["anonymize", "--keep-others", "--input", pg_db, "--table", "public.patients", "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "2", "--metric", "height", "--output-table", "s1.out", "-q"])
    assert r.exit_code == 0, r.output
    assert ("s1", "out", "BASE TABLE") in pg_tables(pg_db)
    types = dict(pg_fetch(pg_db, "SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 's1' AND table_name = 'out'"))
    assert types["age"] == "integer" and types["birth"] == "date"
    r = invoke(["anonymize", "--keep-others", "--input", pg_db, "--table", "patients", "--qi", "zip=mask", "--k", "2", "--output-table", "s2.out", "-q"])
    assert r.exit_code == 2 and error_line(r) == "error: schema 's2' of output table 's2.out' not found (create it first)"
    r = invoke(["anonymize", "--keep-others", "--input", pg_db, "--table", "patients_v", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"])
    assert r.exit_code == 2 and "'patients_v' is a view" in error_line(r)
    assert pg_tables(pg_db) == before + [("s1", "out", "BASE TABLE")] or sorted(pg_tables(pg_db)) == sorted(before + [("s1", "out", "BASE TABLE")])
