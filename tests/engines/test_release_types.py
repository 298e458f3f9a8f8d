"""Released columns keep their type where the label allows it (docs/outputs.md#column-types): a
QI released as it is (level 0) with no ``*`` in it (nothing suppressed, or ``suppression: drop``)
stays INTEGER, DATE, DECIMAL, TIMESTAMP; a linked column that needs no ``*`` and every kept column keep theirs;
a generalized QI, and a QI whose suppressed rows are masked, is text. The types are read back
from the release on DuckDB and PostgreSQL, as a new table and in place, and from a Parquet file."""

import duckdb
import pyarrow.parquet as pq
import pytest

import sqlanon
from engine_suite import on_engines

ROWS = 600


def rows_sql() -> str:
    """``ROWS`` rows; ``rare`` marks 3 rows whose age is unique (so k=2 suppresses them, or
    generalizes age)."""
    return (
        "SELECT CAST(CASE WHEN i IN (0, 12, 24) THEN 90 + i // 12 ELSE 20 + i % 6 END AS INTEGER) AS age, "
        "DATE '2001-01-01' + CAST(365 * (i % 4) AS INTEGER) AS d, "
        "CAST((i % 3) / 10.0 AS DECIMAL(4,1)) AS amount, "
        "CAST(2001 + i % 4 AS INTEGER) AS y, "
        "TIMESTAMP '2001-01-01 10:00:00' + to_days(CAST(i % 4 AS INTEGER)) AS ts, "  # the year of d: linked to it
        "CAST(i % 11 AS INTEGER) AS visits, "  # kept
        "CAST(i AS BIGINT) AS id "  # dropped
        f"FROM range({ROWS}) t(i)"
    )


PG_TYPES = {"integer": "INTEGER", "date": "DATE", "numeric": "DECIMAL", "text": "VARCHAR", "character varying": "VARCHAR", "bigint": "BIGINT", "timestamp without time zone": "TIMESTAMP"}


def duck_types(path, table):
    with duckdb.connect(path, read_only=True) as con:
        rows = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    return {c: ("DECIMAL" if t.startswith("DECIMAL") else t) for c, t in rows}


def pg_types(url, table):
    import psycopg

    with psycopg.connect(url) as con:
        rows = con.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position", [table]).fetchall()
    return {c: PG_TYPES[t] for c, t in rows}


#: (policy of the run, the types released): level 0 and nothing masked keeps every type
CASES = {
    # nothing suppressed: every QI at level 0 keeps its type, y follows d exactly (its type too)
    "level0": (dict(k=1), {"age": "INTEGER", "d": "DATE", "amount": "DECIMAL", "y": "INTEGER", "ts": "TIMESTAMP", "visits": "INTEGER"}),
    # 3 rows suppressed and dropped: nothing masked, the types stay
    "drop": (dict(k=2, suppression="drop", max_suppression=0.01), {"age": "INTEGER", "d": "DATE", "amount": "DECIMAL", "y": "INTEGER", "ts": "TIMESTAMP", "visits": "INTEGER"}),
    # 3 rows masked: '*' is no INTEGER nor DATE, the QIs are text; y needs '*' in those rows
    "mask": (dict(k=2, suppression="mask", max_suppression=0.01), {"age": "VARCHAR", "d": "VARCHAR", "amount": "VARCHAR", "y": "VARCHAR", "ts": "VARCHAR", "visits": "INTEGER"}),
    # d generalized to its year: a label; y is still determined by it (kept, typed); age banded
    "generalized": (dict(k=2, max_suppression=0.0, min_level={"d": 1, "age": 1}, max_level={"amount": 0, "ts": 0}),
                    {"age": "VARCHAR", "d": "VARCHAR", "amount": "DECIMAL", "y": "INTEGER", "ts": "TIMESTAMP", "visits": "INTEGER"}),
}


def run(case, **where):
    policy, expected = CASES[case]
    qi = {"age": "bands:10,20", "d": "dates:year", "amount": "bands:0.2,0.4", "ts": "dates:month,year"}
    release = sqlanon.anonymize(qi=qi, linked={"y": "d"}, keep_columns=["visits"], drop_columns=["id"], search="optimal", overwrite="in_place" not in where, **policy, **where)
    return release, expected


def check_plan(case, release):
    if case in ("level0", "drop", "mask"):
        assert set(release.transformation.values()) == {0}, release.transformation
        assert release.suppressed_rows == (0 if case == "level0" else 3)
    if case == "generalized":
        assert release.transformation == {"age": 1, "d": 1, "amount": 0, "ts": 0} and release.suppressed_rows == 0, release.transformation  # the 3 rare ages in one band


@pytest.fixture(scope="module")
def duck(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("types") / "t.duckdb")
    with duckdb.connect(path) as con:
        con.execute("CREATE TABLE t AS " + rows_sql())
    return path


@pytest.mark.parametrize("case", ["level0", "mask"])
def test_duckdb_in_place_keeps_types(tmp_path, case):
    path = str(tmp_path / "p.duckdb")
    with duckdb.connect(path) as con:
        con.execute("CREATE TABLE t AS " + rows_sql())
    release, expected = run(case, input=path, table="t", in_place=True)
    check_plan(case, release)
    assert duck_types(path, "t") == expected


@pytest.mark.parametrize("case", ["level0", "drop", "generalized"])
def test_parquet_release_keeps_types(duck, tmp_path, case):
    out = str(tmp_path / f"{case}.parquet")
    release, expected = run(case, input=duck, table="t", output=out)
    check_plan(case, release)
    schema = pq.read_schema(out)
    got = {f.name: str(f.type) for f in schema}
    arrow = {"INTEGER": "int32", "DATE": "date32[day]", "DECIMAL": "decimal128(4, 1)", "TIMESTAMP": "timestamp[us]"}
    for column, kind in expected.items():
        if kind in arrow:
            assert got[column] == arrow[kind], (column, got)
        else:  # a label: text (or DuckDB's ENUM of its labels, read back as a dictionary of strings)
            assert got[column] in ("string", "large_string") or got[column].startswith("dictionary<values=string"), (column, got)


@pytest.fixture(scope="module")
def postgres(duck):
    from conftest import local_postgres

    import psycopg

    with local_postgres() as url:
        with duckdb.connect(duck, read_only=True) as con:
            rows = con.execute("SELECT * FROM t").fetchall()
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute("CREATE TABLE t (age integer, d date, amount numeric(4,1), y integer, ts timestamp, visits integer, id bigint)")
            with pg.cursor() as cur, cur.copy("COPY t FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
        yield url


@pytest.fixture
def database(request, duck):
    """The typed table's database on the engine of the parameter, and how its types are read."""
    if request.param == "postgres":
        return request.getfixturevalue("postgres"), pg_types
    return duck, duck_types


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("database", on_engines("duckdb", "postgres"), indirect=True)
def test_table_release_keeps_types(database, case):
    url, types_of = database
    release, expected = run(case, input=url, table="t", output_table=f"out_{case}")
    check_plan(case, release)
    assert types_of(url, f"out_{case}") == expected


@pytest.mark.postgres
def test_postgres_in_place_keeps_types(postgres):
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as pg:
        pg.execute("CREATE TABLE t2 AS SELECT * FROM t")
    release, expected = run("drop", input=postgres, table="t2", in_place=True)
    check_plan("drop", release)
    assert pg_types(postgres, "t2") == expected
