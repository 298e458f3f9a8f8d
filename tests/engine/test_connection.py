"""Running on a caller's open DuckDB connection (the dbt-duckdb Python-model case)."""

import duckdb
import pytest

import sqlanon
from checker import check_k


def _table(con, name):
    cols = [r[0] for r in con.execute(f'DESCRIBE "{name}"').fetchall()]
    return [dict(zip(cols, r)) for r in con.execute(f'SELECT * FROM "{name}"').fetchall()]


@pytest.fixture
def con(tmp_path):
    con = duckdb.connect(str(tmp_path / "dbt.duckdb"))
    con.execute("CREATE TABLE patients AS SELECT (12340 + i % 7)::VARCHAR AS zip, 20 + (i * 7) % 40 AS age, i AS id FROM range(200) t(i)")
    yield con
    con.close()


def test_anonymize_on_an_open_connection(con):
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="patients", qi={"zip": "mask", "age": "bands:5,10,20"}, k=6, output_table="patients_k6")
    assert report.release_id == 1
    released = _table(con, "patients_k6")
    assert len(released) == 200 and check_k(released, ["zip", "age"], 6, 0.0)["ok"]
    # the connection is still open and ours: no temp tables left behind, the registry is there
    leftovers = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
    assert leftovers == []
    assert con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] == 1


def test_joins_the_callers_transaction(con):
    con.execute("BEGIN TRANSACTION")
    sqlanon.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="patients", qi={"zip": "mask"}, k=10, in_place=True)
    assert check_k(_table(con, "patients"), ["zip"], 10, 0.0)["ok"]
    con.execute("ROLLBACK")  # the caller decides: the original table comes back
    assert sorted(r["zip"] for r in _table(con, "patients"))[:3] == ["12340", "12340", "12340"]
    assert con.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'sqlanon_releases'").fetchone()[0] == 0


def test_unknown_table_on_connection(con):
    with pytest.raises(sqlanon.ConfigError, match="table 'nope' not found"):
        sqlanon.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="nope", qi={"zip": "mask"}, k=2)
