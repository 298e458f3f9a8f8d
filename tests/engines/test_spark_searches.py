"""Spark's own cases of the searches (pyspark, local[2]): its cached-table chains, and KRIMP's
generator on Spark's writer against DuckDB's. The searches, the issue-14 models, local recoding
and SafePub run on every engine: tests/engines/test_searches_every_engine.py and
tests/engines/test_models_every_engine.py.
"""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

pytestmark = pytest.mark.spark

from engine_suite import released  # noqa: E402


# ----------------------------------------------------------------------------------------------
# searches


def test_cached_table_chains_are_cut_and_drops_wait_for_readers(spark):
    """A cached table built from one built from another is written to Parquet and cached from
    there (its plan no longer reads the chain); a dropped table stays until no cached table's text
    reads it; the scratch directory goes at close. Each table's rows are checked."""
    import sqlglot

    from sqlanon.engine.spark import SparkEngine

    engine = SparkEngine(connection=spark)
    d = engine.dialect

    def q(sql):
        return sqlglot.parse_one(sql, read="spark")

    try:
        a, b, c, e = (engine.temp_name(x) for x in "abce")
        engine.execute(d.create_temp(a, q("SELECT id, id % 3 AS g FROM range(12)")))
        engine.execute(d.create_temp(b, q(f"SELECT g, COUNT(*) AS n FROM {a} GROUP BY g")))  # reads a: kept as text
        engine.execute(d.create_temp(c, q(f"SELECT g, n * 10 AS n FROM {b} UNION ALL SELECT 7, COUNT(*) FROM {a}")))  # reads b, which reads a: cut
        scratch = engine._scratch
        assert scratch is not None and engine.path_exists(f"{scratch}/{c}")
        assert not engine.path_exists(f"{scratch}/{b}")
        engine.execute(d.create_temp(e, q(f"SELECT SUM(n) AS s FROM {c}")))  # c is a Parquet scan: e stays text
        engine.execute(d.drop_temp(a))
        assert spark.catalog.tableExists(a)  # b's text still reads it
        engine.execute(d.drop_temp(b))  # nothing reads b (c was materialized): b goes, then a
        assert not spark.catalog.tableExists(b) and not spark.catalog.tableExists(a)
        assert sorted(tuple(r) for r in spark.table(c).collect()) == [(0, 40), (1, 40), (2, 40), (7, 12)]
        engine.execute(d.drop_temp(c))  # e reads c: waits
        assert spark.catalog.tableExists(c) and engine.path_exists(f"{scratch}/{c}")
        assert spark.table(e).collect()[0][0] == 132
        engine.execute(d.drop_temp(e))  # e, then c and its files
        assert not spark.catalog.tableExists(e) and not spark.catalog.tableExists(c)
        assert not engine.path_exists(f"{scratch}/{c}") and engine.path_exists(scratch)
    finally:
        engine.close()
    assert not engine.path_exists(scratch)


def test_seeded_generate_same_as_duckdb(spark, engine_data, tmp_path):
    """KRIMP's code table and, with a seed, the generated rows: the same on Spark as on DuckDB
    (the Spark release is a Parquet directory written by Spark's writer)."""
    from sqlanon.engine import connect
    from sqlanon.engine.spark import SparkEngine
    from sqlanon.generation.pipeline import run
    from sqlanon.release.write import Target
    from sqlanon.engine.source import Source

    outs = {}
    for name, engine in (("duck", connect()), ("spark", SparkEngine(connection=spark))):
        out = str(tmp_path / (name + ".parquet"))  # Spark writes a directory of that name
        source = Source.open(engine_data["parquet"]["population"])
        try:
            result = run(engine, source, ["zip", "disease", "buys"], min_sup=5, seed=3, risk=False, dissimilarity=False,
                         target=Target.from_options(output=out, source=source))
        finally:
            engine.close()
        outs[name] = (result, sorted(tuple(r.values()) for r in released(out)))
    (duck, duck_rows), (on_spark, spark_rows) = outs["duck"], outs["spark"]
    for key in ("code_table_size", "candidate_count", "rows", "pct_equal_itemsets"):
        assert on_spark[key] == duck[key], key
    assert on_spark["total_bits"] == pytest.approx(duck["total_bits"]) and on_spark["nas"] == pytest.approx(duck["nas"])
    assert spark_rows == duck_rows and len(spark_rows) == 400
