"""``sqlanon profile`` on every engine (tests/engines/engine_suite.py): over the same typed table
(tests/profiling/test_profile.py's), each engine's profile (its regular expressions as ``~`` on
PostgreSQL and RLIKE on Spark, its quartiles as each renders PERCENTILE_CONT) gives the same
roles, NULL counts, distinct counts, hierarchies, risk and written policy (its hierarchy files'
rows too) as DuckDB reading the table from its own database file. What only one engine does is in
its own module: the PostgreSQL policy run as it is (tests/engines/test_postgres.py), a Spark
catalog table and ``nulls: refuse`` (tests/engines/test_spark.py)."""

from __future__ import annotations

import duckdb
import pytest

import sqlanon
from engine_suite import on_engines
from test_profile import TYPED_EXPECTED, duckdb_typed_table, postgres_typed_table, profile_signature, roles_of, typed_rows


def _profile_on(engine, rows: list[tuple], duck_db: str, tmp_path, policy: str) -> dict:
    """The typed table profiled on ``engine``: PostgreSQL's table, Spark reading a Parquet copy,
    DuckDB reading that Parquet copy (not the database file the answer comes from)."""
    if engine.name == "postgres":
        return sqlanon.profile(postgres_typed_table(engine.url, rows), table="people", write_policy=policy)
    parquet = str(tmp_path / "people.parquet")
    con = duckdb.connect(duck_db)
    con.execute("COPY people TO '" + parquet.replace("'", "''") + "' (FORMAT PARQUET)")
    con.close()
    if engine.name == "spark":
        return sqlanon.profile(parquet, connection=engine.session, write_policy=policy)
    return sqlanon.profile(parquet, write_policy=policy)


@pytest.mark.parametrize("engine", on_engines(), indirect=True)
def test_profile_same_as_duckdb(engine, tmp_path):
    rows = typed_rows()
    duck_db = str(tmp_path / "w.duckdb")
    duckdb_typed_table(duck_db, rows)
    duck = sqlanon.profile(duck_db, table="people", write_policy=str(tmp_path / "duck" / "policy.yaml"))
    policy = str(tmp_path / engine.name / "policy.yaml")
    got = _profile_on(engine, rows, duck_db, tmp_path, policy)
    assert roles_of(got) == TYPED_EXPECTED
    assert profile_signature(got, policy) == profile_signature(duck, str(tmp_path / "duck" / "policy.yaml"))
