"""The Spark engine (pyspark, local[2]): the same plans, metrics and releases as DuckDB.

One SparkSession for the whole run (tests/conftest.py: local[2], two shuffle partitions, no UI). Every run is also made
on DuckDB in the same test and the two are compared: node, metric value, suppressed rows and the
released multiset (read back from Spark's Parquet directory), re-checked by the independent
checker against a brute-force generalization of the input.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import Counter

import duckdb
import pyarrow.parquet as pq
import pytest
import yaml

pyspark = pytest.importorskip("pyspark")

import sqlanon  # noqa: E402
from checker import check_k, expected_release, read_arx_csv, read_hierarchy, released_multiset  # noqa: E402
from conftest import ADULT_COLUMNS  # noqa: E402
from test_arx_reference import PRECISION  # noqa: E402

from sqlanon.errors import ConfigError, SqlanonError  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def adult_parquet(adult, tmp_path_factory):
    """Adult as one Parquet file, every column a string (as the CSV reads)."""
    path = str(tmp_path_factory.mktemp("adult") / "adult.parquet")
    con = duckdb.connect()
    con.execute("COPY (SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)) TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)", [adult["csv"]])
    con.close()
    return path


@pytest.fixture(scope="module")
def original(adult):
    rows = read_arx_csv(adult["csv"])
    hier = {c: read_hierarchy(adult["qi"][c]) for c in ADULT_COLUMNS}
    return rows, hier


def read_release(path: str) -> list[dict]:
    """A release written by Spark (a directory of part files) or DuckDB (one file), as dicts."""
    return pq.read_table(path).to_pylist()


def comparable(report) -> tuple:
    return (report.transformation, round(report.metric.value, 12), report.suppressed_rows)


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """300 rows: zip, age, a sensitive disease, a class; as CSV and as Parquet."""
    import random

    d = tmp_path_factory.mktemp("people")
    rnd = random.Random(7)
    lines = ["id,zip,age,disease,buys"]
    for i in range(300):
        lines.append(f"{i},{rnd.choice(['12345', '12346', '12355', '12356', '13001', '13002'])},{rnd.randint(20, 59)},{rnd.choice(['flu', 'cold', 'hiv', 'cancer'])},{rnd.choice(['yes', 'no'])}")
    csv = d / "people.csv"
    csv.write_text("\n".join(lines) + "\n")
    parquet = str(d / "people.parquet")
    con = duckdb.connect()
    con.execute("COPY (SELECT * FROM read_csv(?, all_varchar=true)) TO '" + parquet.replace("'", "''") + "' (FORMAT PARQUET)", [str(csv)])
    con.close()
    return {"csv": str(csv), "parquet": parquet, "qi": {"zip": "mask", "age": "bands:5,10,20"}}


@contextlib.contextmanager
def no_scan():
    """Fails the run if the base frequency set is built (a refusal must come before the scan)."""
    from sqlanon.stats import Statistics

    def prepare(self):
        raise AssertionError("the source was scanned before the refusal")

    original = Statistics.prepare
    Statistics.prepare = prepare
    try:
        yield
    finally:
        Statistics.prepare = original


def multiset(rows, columns):
    return Counter(tuple(r[c] for c in columns) for r in rows)


def adult_statistics(engine, adult, adult_parquet, metric):
    """Statistics over Adult (the Parquet copy) on ``engine``, prepared (its base set built)."""
    from sqlanon.hierarchy import load_hierarchy
    from sqlanon.engine.source import Source
    from sqlanon.stats import Statistics

    source = Source.open(adult_parquet)
    hierarchies = [load_hierarchy(adult["qi"][c], c, engine, source) for c in ADULT_COLUMNS]
    stats = Statistics(engine, source, ADULT_COLUMNS, hierarchies, needs=metric.needs)
    stats.prepare()
    return stats


# ----------------------------------------------------------------------------------------------
# the ARX Adult optima: same node, metric and released multiset as DuckDB


def test_arx_optima_evaluate_alike_on_spark(spark, adult, adult_parquet):
    """ARX's optimum of every case, evaluated by Spark SQL and by DuckDB (one base scan each, one
    statement per node): the same classes, suppressed rows and precision, and ARX's published
    loss. (DuckDB's search finds these optima: tests/search/lattice/test_arx_reference.py.)"""
    from sqlanon.engine import connect
    from sqlanon.engine.spark import SparkEngine
    from sqlanon.metrics import METRICS
    from sqlanon.privacy import KAnonymity, Requirement

    metric = METRICS["precision"]()
    answers = {}
    for engine in (connect(threads=1), SparkEngine(connection=spark)):
        try:
            stats = adult_statistics(engine, adult, adult_parquet, metric)
            assert stats.rows == 30162
            for k, sup, arx_node, loss, arx_suppressed in PRECISION:
                node = tuple(arx_node)
                req = Requirement([KAnonymity(k)], budget=int(sup * stats.rows + 1e-9), max_suppression=sup)
                ns = stats.evaluate(node, req.predicate(), metric.aggregates(stats, node))
                value = metric.value(stats, node, ns)
                assert ns.suppressed == arx_suppressed and value == pytest.approx(loss, abs=5e-5), (engine.dialect, k, sup)
                answers.setdefault((k, sup), []).append((ns.classes, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes, round(value, 12)))
        finally:
            engine.close()
    for key, (duck, on_spark) in answers.items():
        assert on_spark == duck, key


@pytest.fixture(scope="module")
def duckdb_search(adult, adult_parquet, tmp_path_factory):
    """DuckDB's optimal search of an ARX case and its release (each case run once per module)."""
    done = {}

    def search(k, sup):
        if (k, sup) not in done:
            out = str(tmp_path_factory.mktemp("duck") / "release.parquet")
            report = sqlanon.anonymize(keep_others=True, input=adult_parquet, qi=adult["qi"], k=k, max_suppression=sup, metric="precision", search="optimal", output=out)
            done[(k, sup)] = (report, released_multiset(read_release(out), ADULT_COLUMNS))
        return done[(k, sup)]

    return search


# k=10 at 5 % in the default run; at 0 % (same code path, no suppression) under -m slow
@pytest.mark.parametrize("k,sup", [pytest.param(10, 0.0, marks=pytest.mark.slow), (10, 0.05)])
def test_arx_release_written_by_spark(spark, adult, adult_parquet, duckdb_search, original, tmp_path, k, sup):
    """The release of the optimum, written by Spark (a Parquet directory renamed into place), is
    the same multiset as DuckDB's and passes the independent checker. The lattice is bounded to
    the optimum (``min_level = max_level = node``), so Spark's search evaluates it and nothing else."""
    duck, _ = duckdb_search(k, sup)
    node = {c: duck.transformation[c] for c in ADULT_COLUMNS}
    out = str(tmp_path / "spark_out")
    rep = sqlanon.anonymize(keep_others=True, input=adult_parquet, qi=adult["qi"], k=k, max_suppression=sup, metric="precision", min_level=node, max_level=node, output=out, connection=spark)
    assert comparable(rep) == comparable(duck)
    assert os.path.isdir(out) and sorted(os.listdir(tmp_path)) == ["spark_out", "sqlanon_releases.duckdb"]  # renamed; nothing left beside
    released = read_release(out)
    rows, hier = original
    assert len(released) == len(rows)
    expected, suppressed = expected_release(rows, hier, node, k)
    assert released_multiset(released, ADULT_COLUMNS) == expected
    assert suppressed == rep.suppressed_rows
    verdict = check_k(released, ADULT_COLUMNS, k, sup)
    assert verdict["ok"], verdict["problems"]
    assert rep.release_id == 1  # recorded in the registry beside the output


@pytest.mark.slow  # the whole optimal search as Spark SQL: 40-120 s a case on 2 cores
@pytest.mark.parametrize("k,sup,arx_node,loss,arx_suppressed", PRECISION)
def test_arx_search_on_spark_finds_arx_optimum(spark, adult, adult_parquet, duckdb_search, original, tmp_path, k, sup, arx_node, loss, arx_suppressed):
    """The full optimal search on Adult run by Spark, for every ARX precision case (k = 2, 5, 10,
    100 at 0 % and 5 %): DuckDB's node, metric value and suppressed rows, ARX's metric value
    (and ARX's node and suppressed rows where DuckDB's search finds that node: ties of equal
    precision may be broken otherwise); Spark's release is DuckDB's multiset, the brute-force
    generalization of the input, and passes the checker."""
    duck, duck_release = duckdb_search(k, sup)
    out = str(tmp_path / "spark_out")
    rep = sqlanon.anonymize(keep_others=True, input=adult_parquet, qi=adult["qi"], k=k, max_suppression=sup, metric="precision", search="optimal", output=out, connection=spark)
    assert comparable(rep) == comparable(duck)
    assert rep.metric.value == pytest.approx(loss, abs=5e-5)
    node = [rep.transformation[c] for c in ADULT_COLUMNS]
    if node == arx_node:
        assert rep.suppressed_rows == arx_suppressed
    released = read_release(out)
    assert released_multiset(released, ADULT_COLUMNS) == duck_release
    rows, hier = original
    expected, suppressed = expected_release(rows, hier, dict(zip(ADULT_COLUMNS, node)), k)
    assert released_multiset(released, ADULT_COLUMNS) == expected and suppressed == rep.suppressed_rows
    verdict = check_k(released, ADULT_COLUMNS, k, sup)
    assert verdict["ok"], verdict["problems"]


# ----------------------------------------------------------------------------------------------
# searches on Spark give DuckDB's results


@pytest.mark.usefixtures("sql_only")  # the batch statements themselves, not nodes in-process
@pytest.mark.parametrize("metric", ["lm", "precision"])
def test_batch_branches_answer_like_duckdb(spark, people, monkeypatch, metric):
    """The batch statement of large sets (one branch per node, forced here: Spark takes the node
    table spread by node id instead) on Spark: the optimal search finds DuckDB's node, value and
    suppression, with the branches actually run."""
    from sqlanon.dialect.spark import SparkDialect
    from sqlanon.stats import batch

    monkeypatch.setattr(SparkDialect, "node_branches", True)

    monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)
    monkeypatch.setattr(batch, "BRANCH_ROWS", 0)
    monkeypatch.setattr(batch, "BRANCH_NODES", 10**9)
    built = []
    build_branches = batch.build_branches
    monkeypatch.setattr(batch, "build_branches", lambda *a, **k: built.append(1) or build_branches(*a, **k))
    opts = dict(input=people["parquet"], qi=people["qi"], k=5, max_suppression=0.02, metric=metric, search="optimal", dry_run=True)
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], **opts)
    n_duck = len(built)
    rep = sqlanon.anonymize(keep_others=True, keep_columns=["id"], connection=spark, **opts)
    assert n_duck and len(built) > n_duck
    assert comparable(rep) == comparable(duck)


def test_csv_input_and_catalog_table_output(spark, people, tmp_path):
    """A CSV input read by Spark's reader, released into a catalog table; --overwrite replaces it."""
    opts = dict(input=people["csv"], qi=people["qi"], k=4, max_suppression=0.05)
    duck = sqlanon.anonymize(keep_others=True, dry_run=True, **opts)
    spark.sql("DROP TABLE IF EXISTS sqlanon_test_out")
    try:
        rep = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output_table="sqlanon_test_out", connection=spark, **opts)
        assert comparable(rep) == comparable(duck)
        rows = [r.asDict() for r in spark.table("sqlanon_test_out").collect()]
        assert len(rows) == 300 and check_k(rows, ["zip", "age"], 4, 0.05)["ok"]
        with no_scan(), pytest.raises(ConfigError, match="already exists"):  # refused before the scan
            sqlanon.anonymize(keep_others=True, keep_columns=["id"], output_table="sqlanon_test_out", connection=spark, **opts)
        again = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output_table="sqlanon_test_out", overwrite=True, connection=spark, **{**opts, "k": 6})
        assert check_k([r.asDict() for r in spark.table("sqlanon_test_out").collect()], ["zip", "age"], 6, 0.05)["ok"]
        assert again.release_id == rep.release_id + 1  # the registry is a catalog table
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlanon_test_out")
        spark.sql("DROP TABLE IF EXISTS sqlanon_releases")


# ----------------------------------------------------------------------------------------------
# failures leave nothing behind


def test_output_in_a_folder_not_made_yet(spark, people, tmp_path):
    """``--output out/x`` where ``out/`` does not exist: Spark's writer makes it, and the registry
    beside the output is made there too (it failed: 'cannot open out/sqlanon_releases.duckdb')."""
    out = str(tmp_path / "out" / "people_k5")
    rep = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["parquet"], qi=people["qi"], k=5, output=out, connection=spark)
    assert os.path.isfile(tmp_path / "out" / "sqlanon_releases.duckdb") and rep.release_id == 1
    assert check_k(read_release(out), ["zip", "age"], 5, 0.0)["ok"]


def test_failed_file_write_leaves_no_partial_output(spark, people, tmp_path):
    out = str(tmp_path / "out")
    with pytest.raises(SqlanonError, match="simulated"):
        sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["parquet"], qi=people["qi"], k=5, output=out, connection=spark, _fail_after_write=True)
    assert os.listdir(tmp_path) == []  # neither the output nor the temporary directory


def test_failed_table_write_leaves_no_table(spark, people):
    spark.sql("DROP TABLE IF EXISTS sqlanon_test_fail")
    with pytest.raises(SqlanonError, match="simulated"):
        sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["parquet"], qi=people["qi"], k=5, output_table="sqlanon_test_fail", connection=spark, _fail_after_write=True)
    names = [t.name for t in spark.catalog.listTables()]
    assert not [n for n in names if n.startswith("sqlanon_test_fail")], names


def test_in_place_on_a_parquet_table_is_refused(spark, people):
    """A plain Parquet table of the session catalog has no atomic replace (Spark's INSERT OVERWRITE
    deletes its files before writing): refused before the scan, untouched."""
    spark.sql("DROP TABLE IF EXISTS sqlanon_test_people")
    spark.read.parquet(people["parquet"]).write.saveAsTable("sqlanon_test_people")
    try:
        with no_scan(), pytest.raises(ConfigError, match="atomically"):
            sqlanon.anonymize(keep_others=True, keep_columns=["id"], table="sqlanon_test_people", qi=people["qi"], k=5, in_place=True, connection=spark)
        assert spark.table("sqlanon_test_people").count() == 300
        assert spark.sql("SELECT COUNT(*) FROM sqlanon_test_people WHERE zip = '*'").collect()[0][0] == 0
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlanon_test_people")


def test_output_table_that_is_the_input_is_refused(spark, people):
    """--output-table naming the input table (another spelling of it too), even with --overwrite:
    refused before the scan, the input untouched (it was overwritten by its own release)."""
    spark.sql("DROP TABLE IF EXISTS sqlanon_test_same")
    spark.read.parquet(people["parquet"]).write.saveAsTable("sqlanon_test_same")
    try:
        for spelling in ("sqlanon_test_same", "default.SQLANON_TEST_SAME"):
            with no_scan(), pytest.raises(ConfigError, match="is the input table"):
                sqlanon.anonymize(keep_others=True, keep_columns=["id"], table="sqlanon_test_same", qi=people["qi"], k=5, output_table=spelling, overwrite=True, connection=spark)
        assert spark.sql("SELECT COUNT(*) FROM sqlanon_test_same WHERE zip = '*'").collect()[0][0] == 0
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlanon_test_same")


def test_in_place_on_a_delta_table_is_one_create_or_replace(spark, people, monkeypatch, tmp_path):
    """No Delta or Iceberg jars can be installed here (PyPI's delta-spark fetches them from Maven
    at run time), so the in-place path is checked up to Spark: with the table's provider reported
    as Delta, the release is one ``CREATE OR REPLACE TABLE t USING DELTA AS SELECT ..`` over the
    table itself. The statement is captured instead of run (Spark without Delta would refuse it);
    its SELECT, run on Spark, is DuckDB's release of the same table (checked k-anonymous); the
    table is untouched."""
    from sqlglot import exp

    from sqlanon.engine.spark import SparkEngine

    spark.sql("DROP TABLE IF EXISTS sqlanon_test_delta")
    spark.read.parquet(people["parquet"]).write.saveAsTable("sqlanon_test_delta")
    captured = {}
    execute = SparkEngine.execute

    def capture(engine, expression):
        if isinstance(expression, exp.Create) and expression.args.get("replace"):
            captured["sql"] = engine.sql_text(expression)
            captured["rows"] = [r.asDict() for r in spark.sql(engine.sql_text(expression.expression)).collect()]
            raise SqlanonError("captured")
        return execute(engine, expression)

    monkeypatch.setattr(SparkEngine, "table_provider", lambda engine, table: "delta")
    monkeypatch.setattr(SparkEngine, "execute", capture)
    try:
        with pytest.raises(SqlanonError, match="captured"):
            sqlanon.anonymize(keep_others=True, keep_columns=["id"], table="sqlanon_test_delta", qi=people["qi"], k=5, max_suppression=0.05, in_place=True, connection=spark)
        assert captured["sql"].startswith("CREATE OR REPLACE TABLE `sqlanon_test_delta` USING DELTA AS ")
        assert "FROM `sqlanon_test_delta`" in captured["sql"]  # the replacement reads the table it replaces
        rows = captured["rows"]
        duck = str(tmp_path / "duck.parquet")
        sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["parquet"], qi=people["qi"], k=5, max_suppression=0.05, output=duck)
        columns = ["id", "zip", "age", "disease", "buys"]
        assert len(rows) == 300 and multiset(rows, columns) == multiset(read_release(duck), columns)
        verdict = check_k(rows, ["zip", "age"], 5, 0.05)
        assert verdict["ok"], verdict["problems"]
        assert spark.table("sqlanon_test_delta").count() == 300
        assert spark.sql("SELECT COUNT(*) FROM sqlanon_test_delta WHERE zip LIKE '%*%'").collect()[0][0] == 0
    finally:
        spark.sql("DROP TABLE IF EXISTS sqlanon_test_delta")


# ----------------------------------------------------------------------------------------------
# sqlanon sql --dialect spark: a self-contained script, run on Spark


def test_spark_script_runs_and_answers_like_duckdb(spark, people, tmp_path):
    opts = dict(keep_others=True, input=people["parquet"], qi=people["qi"], k=5, max_suppression=0.05)
    script = sqlanon.run.api.plan_sql(dialect="spark", **opts)
    titles = [t for t, _ in script]
    assert titles[0].startswith("hierarchy codes") and "base frequency set" in titles and titles[-1] == "release"
    assert all("LIST_EXTRACT" not in text.upper() and "READ_PARQUET" not in text.upper() for _, text in script)
    answers = {}
    for title, text in script:
        rows = spark.sql(text).collect()
        answers[title] = rows
    duck = sqlanon.anonymize(keep_columns=["id"], output=str(tmp_path / "duck.parquet"), **opts)
    node = answers["final node"][0]
    assert (node["classes"] > 0, node["suppressed"]) == (True, duck.suppressed_rows)
    released = [r.asDict() for r in answers["release"]]
    columns = ["id", "zip", "age", "disease", "buys"]
    assert multiset(released, columns) == multiset(read_release(str(tmp_path / "duck.parquet")), columns)


def test_default_conf_of_a_session_we_build():
    """Local masters: one shuffle partition per core and no adaptive re-planning; other masters
    keep 8 partitions and Spark's adaptive default; the caller's --spark-conf wins (applied after)."""
    from sqlanon.engine.spark import default_conf

    assert default_conf("local[2]")["spark.sql.shuffle.partitions"] == "2"
    assert default_conf("local[3, 4]")["spark.sql.shuffle.partitions"] == "3"
    assert default_conf("local")["spark.sql.shuffle.partitions"] == "1"
    assert default_conf("local[*]")["spark.sql.shuffle.partitions"] == str(os.cpu_count() or 2)
    assert default_conf("local[2]")["spark.sql.adaptive.enabled"] == "false"
    yarn = default_conf("yarn")
    assert yarn["spark.sql.shuffle.partitions"] == "8" and "spark.sql.adaptive.enabled" not in yarn
    assert default_conf("local[2]")["spark.ui.enabled"] == "false"


def test_grouped_sums_on_spark(spark):
    """Spark's GROUPING SETS form of the column frequencies and QI-pair counts (one scan of the set,
    the grouping read from GROUPING_ID over the columns in order of first appearance) gives the
    rows of one plain GROUP BY per grouping, also when a grouping's columns are not in that order."""
    from sqlanon.dialect import get_dialect

    d = get_dialect("spark")
    spark.sql("SELECT id % 3 AS q0, id % 5 AS q1, (id * 7) % 4 AS q2, 1 + id % 2 AS cnt FROM range(60)").createOrReplaceTempView("sqlanon_test_gs")
    try:
        for groupings, names, tag in (([["q0", "q1"], ["q0", "q2"], ["q1", "q2"]], ["a", "b"], "p"), ([["q2", "q0"], ["q1", "q2"]], ["a", "b"], "p"), ([["q0"], ["q1"], ["q2"]], ["code"], "i")):
            got = sorted(tuple(r) for r in spark.sql(d.render(d.grouped_sums("sqlanon_test_gs", groupings, names, tag))).collect())
            expected = sorted(
                (g, *tuple(r)) for g, grouping in enumerate(groupings)
                for r in spark.sql("SELECT " + ", ".join(grouping) + ", SUM(cnt) FROM sqlanon_test_gs GROUP BY " + ", ".join(grouping)).collect()
            )
            assert got == expected, groupings
    finally:
        spark.catalog.dropTempView("sqlanon_test_gs")


def _plan_outside_caches(plan: str) -> list[str]:
    """The lines of a physical plan's text, without the plans of the cached tables it scans
    (an ``InMemoryRelation`` line's deeper-indented lines: how the cache was once built)."""
    out, skip = [], None
    for line in plan.splitlines():
        depth = len(line) - len(line.lstrip(" :+-"))
        if skip is not None and depth > skip:
            continue
        skip = depth if "InMemoryRelation" in line else None
        out.append(line)
    return out


def test_saved_sets_are_sorted_in_each_partition(spark, adult, adult_parquet):
    """On Spark the base set (and every saved set) is stored sorted by its codes in each
    partition, the widest QI last (:meth:`SparkDialect.clustered`): batch statements run their
    nodes over its rows in that order. Checked on the cached rows themselves, partition by
    partition, and the sets still hold the same classes as DuckDB's."""
    from sqlanon.engine import connect
    from sqlanon.engine.spark import SparkEngine
    from sqlanon.metrics import METRICS

    metric = METRICS["precision"]()
    duck = connect(threads=1)
    try:
        stats = adult_statistics(duck, adult, adult_parquet, metric)
        expected = sorted(map(tuple, duck.fetch_all(f"SELECT * FROM {stats.base.table}")))
    finally:
        duck.close()
    engine = SparkEngine(connection=spark)
    try:
        stats = adult_statistics(engine, adult, adult_parquet, metric)
        widths = [len(h.labels(0)) for h in stats.hierarchies]
        order = [int(k.name[1:]) for k in stats.cluster_keys()]
        assert sorted(order) == list(range(len(widths)))
        assert widths[order[-1]] == max(widths) and widths[order[0]] == min(widths)
        saved = stats.save_set((0, 1, 0, 0, 1, 0, 0, 0, 0), stats.base)
        for fs in (stats.base, saved):
            parts = spark.table(fs.table).rdd.glom().collect()
            assert len(parts) > 1 and all(parts), fs.table  # several partitions, none empty
            for part in parts:
                keys = [tuple(row[f"q{i}"] for i in order) for row in part]
                assert keys == sorted(keys), fs.table
        got = sorted(tuple(r) for part in spark.table(stats.base.table).rdd.glom().collect() for r in part)
        assert got == expected
    finally:
        engine.close()


@pytest.mark.parametrize("broadcast", [True, False])
def test_batch_statement_never_shuffles_the_classes(spark, adult, adult_parquet, monkeypatch, broadcast):
    """A batch statement on Spark broadcasts the code table and spreads the node table by node id
    (:meth:`SparkDialect.nodes_join`), so each task aggregates whole nodes: the only exchange
    left is the node table's, into one partition per node (no shuffle of the classes). Above ``broadcast_bytes`` the set is
    streamed and the classes shuffled. Either way every node answers as its one-node statement,
    and as DuckDB's batch statement."""
    from sqlanon.dialect.spark import SparkDialect
    from sqlanon.engine import connect
    from sqlanon.engine.spark import SparkEngine
    from sqlanon.metrics import METRICS
    from sqlanon.privacy import KAnonymity, Requirement
    from sqlanon.stats import batch as batch_stmt

    if not broadcast:
        monkeypatch.setattr(SparkDialect, "broadcast_bytes", 1000)
    metric = METRICS["precision"]()
    nodes = [(0, 1, 0, 1, 2, 1, 1, 0, 0), (1, 2, 1, 1, 1, 2, 1, 1, 1), (0, 3, 1, 2, 2, 1, 0, 1, 0), (1, 1, 0, 0, 0, 0, 0, 0, 0)]
    answers = {}
    for engine in (connect(threads=1), SparkEngine(connection=spark)):
        try:
            stats = adult_statistics(engine, adult, adult_parquet, metric)
            ok = Requirement([KAnonymity(5)], budget=1508, max_suppression=0.05).predicate()
            batch = [(ns.classes, ns.suppressed, ns.min_class, ns.max_class, ns.bad_classes) for ns in batch_stmt.evaluate_batch(stats, nodes, ok)]
            single = [(ns.classes, ns.suppressed, ns.min_class, ns.max_class, ns.bad_classes) for ns in (stats.evaluate(n, ok) for n in nodes)]
            assert batch == single, engine.dialect
            answers[str(engine.dialect)] = batch
            if engine.dialect == "spark":
                sql = stats.dialect.render(batch_stmt.batch_query(stats, nodes, ok))
                plan = _plan_outside_caches(spark.sql(sql)._jdf.queryExecution().executedPlan().toString())
                exchanges = [line for line in plan if "Exchange" in line]
                shuffles_classes = any("hashpartitioning(nid" in line and "k0" in line for line in exchanges)
                if broadcast:
                    # the node table's exchange, the code table's broadcast (under it: the meet's roll-up)
                    # ... spread over one partition per node: a task's hash table holds one node's classes
                    assert not shuffles_classes and any(re.search(rf"hashpartitioning\(nid#\d+, {len(nodes)}\), REPARTITION_BY_NUM", line) for line in exchanges), exchanges
                    assert any("BroadcastExchange" in line for line in exchanges), plan
                else:
                    assert "BROADCAST" not in sql and shuffles_classes, plan
        finally:
            engine.close()
    assert answers["spark"] == answers["duckdb"]


# ----------------------------------------------------------------------------------------------
# the profile on Spark: DuckDB's roles and hierarchies


def test_profile_of_a_catalog_table_and_its_policy(spark, tmp_path):
    """``sqlanon profile`` of a Spark catalog table gives what DuckDB gives (the profile of a
    Parquet file equals DuckDB's on every engine: tests/engines/test_profile_every_engine.py). The
    Spark policy names the engine and the input, and stops at the NULLs it warns of, under
    ``nulls: refuse``, with the error naming the column."""
    from test_profile import duckdb_typed_table, profile_signature, typed_rows

    duck_db = str(tmp_path / "w.duckdb")
    duckdb_typed_table(duck_db, typed_rows())
    parquet = str(tmp_path / "people.parquet")
    con = duckdb.connect(duck_db)
    con.execute("COPY people TO '" + parquet.replace("'", "''") + "' (FORMAT PARQUET)")
    con.close()
    duck = sqlanon.profile(duck_db, table="people", write_policy=str(tmp_path / "duck" / "policy.yaml"))
    expected = profile_signature(duck, str(tmp_path / "duck" / "policy.yaml"))
    policy = str(tmp_path / "spark" / "policy.yaml")
    sqlanon.profile(parquet, connection=spark, write_policy=policy)
    spark.read.parquet(parquet).createOrReplaceTempView("profiled_people")
    assert profile_signature(sqlanon.profile(table="profiled_people", connection=spark)) == {k: v for k, v in expected.items() if k not in ("policy", "files")}
    with open(policy, encoding="utf-8") as fh:
        written = yaml.safe_load(fh)
    assert written["engine"] == "spark" and written["input"] == "../people.parquet"
    # NULL is a value by default; under nulls: refuse the written policy stops at the NULLs it
    # warns of, before anything is written (the policy as written is run on DuckDB and PostgreSQL:
    # a whole search here would cost a minute)
    with pytest.raises(SqlanonError, match=r"column 'sex' \(\d+ rows?\) has NULL values \(nulls: refuse\)"):
        sqlanon.anonymize(policy, connection=spark, nulls="refuse")
    assert sorted(os.listdir(tmp_path / "spark")) == ["policy.country.csv", "policy.yaml"]


def test_spark_builds_every_hierarchy_from_one_scan_of_distinct_values(spark, people, monkeypatch):
    """On Spark the hierarchies built from the data (``mask``, ``bands``) take their distinct values
    from one statement for all columns, not one Spark job (and one read of the CSV) each, and the
    run finds what DuckDB finds."""
    import sqlanon.hierarchy
    import sqlanon.run.session

    args = dict(qi=people["qi"], k=5, max_suppression=0.05, dry_run=True, keep_others=True, keep_columns=["id"])
    duck = sqlanon.anonymize(input=people["csv"], **args)
    scans, singles = [], []
    many, one = sqlanon.run.session.builder_values_many, sqlanon.hierarchy.builder_values
    monkeypatch.setattr(sqlanon.run.session, "builder_values_many", lambda engine, source, columns, bound, rows=None: scans.append(list(columns)) or many(engine, source, columns, bound, rows))
    monkeypatch.setattr(sqlanon.hierarchy, "builder_values", lambda *a, **kw: singles.append(a[2]) or one(*a, **kw))
    got = sqlanon.anonymize(input=people["csv"], connection=spark, **args)
    assert scans == [list(people["qi"])] and singles == []
    assert got.transformation == duck.transformation and got.suppressed_rows == duck.suppressed_rows
    assert got.metric.value == pytest.approx(duck.metric.value, rel=1e-9)


@pytest.mark.local_eval
def test_the_driver_side_frequency_set_is_bounded_and_over_it_nodes_go_by_sql(spark, people, monkeypatch):
    """On Spark what the driver fetches is bounded: by ``spark.driver.maxResultSize`` of the
    session (Spark's default 1g here: the most a statement may collect to the driver) and the
    ``--memory-limit`` given, the smaller; within it the base set's nodes go in-process and the
    report's ``local_route`` names the budget; with a bound the set does not fit (faked: one
    byte) every node goes by SQL on the executors and the route says so. Both find what DuckDB
    finds on the same rows."""
    from sqlanon.engine.spark import SparkEngine
    from sqlanon.stats import local

    engine = SparkEngine(connection=spark)
    assert engine.result_size_bytes() == 2**30 and engine.client_memory_bytes() == 2**30
    engine.memory_limit_bytes = 2**20
    assert engine.client_memory_bytes() == 2**20  # the smaller of the two
    monkeypatch.setattr(SparkEngine, "result_size_bytes", lambda self: 0)
    assert engine.client_memory_bytes() == 2**20  # maxResultSize 0: unlimited
    engine.memory_limit_bytes = None
    assert engine.client_memory_bytes() is None
    engine.close()
    monkeypatch.undo()

    assert local.warm_up(wait=True)
    args = dict(keep_others=True, keep_columns=["id"], qi=people["qi"], k=10, max_suppression=0.05, metric="loss", dry_run=True)
    duck = sqlanon.anonymize(input=people["parquet"], **args)
    fits = sqlanon.anonymize(input=people["parquet"], connection=spark, **args)
    assert fits.local_route.startswith("in-process:") and fits.nodes_local > 0, fits.local_route
    monkeypatch.setattr(SparkEngine, "result_size_bytes", lambda self: 1)
    over = sqlanon.anonymize(input=people["parquet"], connection=spark, **args)
    assert over.local_route.startswith("sql:") and "over a 0.0 MiB budget" in over.local_route, over.local_route
    assert over.nodes_local is None and over.nodes_evaluated > 0
    for r in (fits, over):
        assert r.transformation == duck.transformation and r.suppressed_rows == duck.suppressed_rows
        assert r.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
