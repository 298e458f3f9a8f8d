"""Every search and the issue-14 models on Spark (pyspark, local[2]): DuckDB's results.

The same small table (400 rows) is read by both engines from one Parquet file; each test runs the
same options on DuckDB and on Spark (``connection=<SparkSession>``, the session shared by every
Spark module: tests/conftest.py) and compares the plan, the search's own figures and, where a
release is written, the released multiset (re-checked by tests/checker.py).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import duckdb
import pyarrow.parquet as pq
import pytest

pytest.importorskip("pyspark")

import sqlanon  # noqa: E402
from checker import check_delta_presence, check_k, check_k_map, check_recursive_cl, check_t_hierarchical  # noqa: E402

pytestmark = pytest.mark.spark

COLUMNS = ["id", "zip", "age", "disease", "buys"]
QI = {"zip": "mask", "age": "bands:5,10,20"}
DISEASE_TREE = [["flu", "respiratory", "*"], ["cold", "respiratory", "*"], ["hiv", "serious", "*"], ["cancer", "serious", "*"]]


def _parquet(con, rows, path):
    con.execute("CREATE OR REPLACE TABLE t (id INTEGER, zip VARCHAR, age INTEGER, disease VARCHAR, buys VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("COPY t TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A 400-row population and its research subset (two thirds), as Parquet files; a disease tree."""
    d = tmp_path_factory.mktemp("sparksearch")
    rnd = random.Random(11)
    rows = [(i, rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59), rnd.choice(["flu", "cold", "hiv", "cancer"]), rnd.choice(["yes", "no"])) for i in range(400)]
    research = [r for r in rows if r[0] % 3 != 0]
    con = duckdb.connect()
    files = {}
    for name, part in (("population", rows), ("research", research)):
        files[name] = str(d / f"{name}.parquet")
        _parquet(con, part, files[name])
    con.close()
    tree = d / "disease.csv"
    tree.write_text("\n".join(";".join(r) for r in DISEASE_TREE) + "\n")
    return {"dir": d, "files": files, "rows": rows, "research": research, "tree": str(tree)}


def released(path):
    return [{k: (None if v is None else str(v)) for k, v in r.items()} for r in pq.read_table(path).to_pylist()]


def multiset(rows):
    return Counter(tuple(r[c] for c in COLUMNS) for r in rows)


def same_release(duck_out, spark_out):
    a, b = released(duck_out), released(spark_out)
    assert multiset(a) == multiset(b)
    return b


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


@pytest.mark.slow  # ~100 s on Spark (120 statements, 0.4-0.6 s each on a loaded 2-core machine)
def test_bottom_up_same_as_duckdb(spark, data, tmp_path):
    opts = dict(input=data["files"]["population"], qi={**QI, "disease": "flat"}, k=6, search="bottom-up", class_column="buys")
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "duck.parquet"), **opts)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "spark"), connection=spark, **opts)
    assert on_spark.transformation == duck.transformation and on_spark.extra['steps'] == duck.extra['steps']
    assert on_spark.suppressed_rows == duck.suppressed_rows
    rows = same_release(str(tmp_path / "duck.parquet"), str(tmp_path / "spark"))
    assert check_k(rows, ["zip", "age", "disease"], 6, 1.0)["ok"]


def test_top_down_same_as_duckdb(spark, data, tmp_path):
    opts = dict(input=data["files"]["population"], qi={**QI, "disease": "flat"}, k=8, search="top-down", class_column="buys",
                search_options={"x": ["zip", "age", "disease"], "y": ["id"]})
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "duck.parquet"), **opts)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "spark"), connection=spark, **opts)
    assert on_spark.transformation == duck.transformation
    assert on_spark.suppressed_rows == duck.suppressed_rows
    rows = same_release(str(tmp_path / "duck.parquet"), str(tmp_path / "spark"))
    assert check_k(rows, ["zip", "age", "disease"], 8, 1.0)["ok"]


def test_seeded_genetic_same_as_duckdb(spark, data, tmp_path):
    """Through the public API only (the GA's SQL path may change): with a seed, every fitness is
    the same on both engines, so the whole run is (cut, LM, suppressed rows, evaluations)."""
    opts = dict(input=data["files"]["population"], qi={"zip": "mask", "age": "numeric", "disease": "flat"}, k=5, search="genetic", metric="lm",
                class_column="buys", search_options={"iterations": 12, "population": 8, "seed": 4, "numeric": ["age"]})
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "duck.parquet"), **opts)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "spark"), connection=spark, **opts)
    for key in ("transformation", "suppressed_rows", "evaluations"):
        assert on_spark.to_dict()[key] == duck.to_dict()[key], key
    assert on_spark.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
    rows = same_release(str(tmp_path / "duck.parquet"), str(tmp_path / "spark"))
    assert check_k(rows, ["zip", "age", "disease"], 5, 1.0)["ok"]


def test_seeded_generate_same_as_duckdb(spark, data, tmp_path):
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
        source = Source.open(data["files"]["population"])
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


# ----------------------------------------------------------------------------------------------
# the issue-14 models: recursive (c,l), hierarchical t-closeness, k-map, delta-presence


_POPULATION_TABLES = itertools.count()


@pytest.fixture(scope="module")
def population_table(spark, data):
    """The population as a table of the Spark catalog (a new name each time the fixture is set up:
    pytest may tear a module fixture down and set it up again when the scheduler interleaves
    modules, and a dropped table's folder need not be gone by then)."""
    name = f"sqlanon_population_{next(_POPULATION_TABLES)}"
    spark.read.parquet(data["files"]["population"]).write.saveAsTable(name)
    yield name
    spark.sql("DROP TABLE IF EXISTS " + name)


def as_dicts(rows):
    return [dict(zip(COLUMNS, map(str, r))) for r in rows]


@pytest.mark.parametrize(
    "name,options",
    [
        # k-map in the default run; the others take 30-45 s each on Spark (non-monotone models:
        # one statement per node) and run under -m slow
        pytest.param("recursive", dict(k=2, l_diversity="recursive", l=2, c=3.0, sensitive_column="disease", max_suppression=0.02), marks=pytest.mark.slow),
        pytest.param("hierarchical", dict(k=2, t=0.15, t_distance="hierarchical", sensitive_column="disease"), marks=pytest.mark.slow),
        ("k-map", dict(k_map=6, max_suppression=0.02)),
        pytest.param("delta", dict(delta_min=0.3, delta_max=0.8, max_suppression=0.05), marks=pytest.mark.slow),
    ],
)
def test_models_same_plan_as_duckdb(spark, data, population_table, tmp_path, name, options):
    options = dict(options)
    if name == "hierarchical":
        options["t_hierarchy"] = data["tree"]
    duck_opts, spark_opts = dict(options), dict(options)
    if name in ("k-map", "delta"):
        duck_opts["population"] = data["files"]["population"]
        spark_opts["population"] = population_table  # a catalog table
    duck_out, spark_out = str(tmp_path / "duck.parquet"), str(tmp_path / "spark")
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data["files"]["research"], qi=QI, output=duck_out, **duck_opts)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data["files"]["research"], qi=QI, output=spark_out, connection=spark, **spark_opts)
    assert on_spark.transformation == duck.transformation
    assert on_spark.suppressed_rows == duck.suppressed_rows
    assert on_spark.metric.value == pytest.approx(duck.metric.value, rel=1e-9, abs=1e-12)
    rows = same_release(duck_out, spark_out)
    assert len(rows) == len(data["research"])
    qis = list(QI)
    if name == "recursive":
        assert not check_recursive_cl(rows, qis, "disease", 3.0, 2)
    elif name == "hierarchical":
        assert not check_t_hierarchical(rows, qis, "disease", 0.15, DISEASE_TREE, as_dicts(data["research"]))
    else:  # the population generalized by the released labels (as in tests/test_models_postgres.py)
        by_id = {str(r[0]): r for r in data["research"]}
        maps = {q: {} for q in qis}
        for r in rows:
            if r["zip"] == "*" and r["age"] == "*":
                continue
            orig = by_id[r["id"]]
            maps["zip"][str(orig[1])] = r["zip"]
            maps["age"][str(orig[2])] = r["age"]
        population = [r for r in as_dicts(data["rows"]) if r["zip"] in maps["zip"] and r["age"] in maps["age"]]
        hier = {q: {v: [v, lab] for v, lab in maps[q].items()} for q in qis}
        levels = {q: 1 for q in qis}
        if name == "k-map":
            assert not check_k_map(rows, qis, population, hier, levels, 6)
        else:
            assert not check_delta_presence(rows, qis, population, hier, levels, 0.3, 0.8)


def test_safepub_on_spark_releases_a_k_anonymous_sample(spark, data, tmp_path):
    """SafePub on Spark: the sample comes from Spark's own hash (xxhash64), so it is not DuckDB's
    sample; what must hold is the guarantee's shape: k derived from epsilon and delta as on any
    engine, the release a subset of the input, k-anonymous after suppression, and a sampling rate
    near beta (400 rows: a wide binomial band; the sharp test of the rate is the one below)."""
    from sqlanon.search.lattice import safepub

    out = str(tmp_path / "spark")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data["files"]["population"], qi=QI, epsilon=1.0, delta=1e-3, seed=5, safepub_steps=10, output=out, connection=spark)
    sp = report.extra['safepub']
    k = safepub.derive_k(0.9, 1e-3)
    assert sp["k"] == k == report.k
    assert sp["input_rows"] == len(data["rows"])
    rows = released(out)
    assert len(rows) == sp["sample_rows"] == report.rows
    ids = Counter(r["id"] for r in rows)
    assert max(ids.values()) == 1 and set(ids) <= {str(r[0]) for r in data["rows"]}
    verdict = check_k(rows, list(QI), k, 1.0)
    assert verdict["ok"], verdict["problems"]
    assert verdict["suppressed"] == report.suppressed_rows
    n, b = len(data["rows"]), safepub.beta(0.9)
    assert abs(sp["sample_rows"] - b * n) <= 4 * (n * b * (1 - b)) ** 0.5


def test_sampling_uniform_is_uniform_on_spark(spark):
    """Spark's sampling number ((xxhash64 + 2^63) / 2^64) over 20,000 integers: in [0, 1), mean
    1/2, below b for about b of them. Without the parentheses around the sum it kept about half."""
    from unit_hash_check import assert_uniform, rates_query

    assert_uniform(spark.sql(rates_query("spark", "SELECT id FROM range(20000)")).collect()[0])


@pytest.mark.slow  # ~60 s on Spark (two lattice searches and the release); PostgreSQL runs it by default
def test_local_recoding_and_microaggregation_same_as_duckdb(spark, data, tmp_path):
    """Local recoding with a QI microaggregated by its median (Spark's MEDIAN) on Spark: DuckDB's two
    rounds, suppressed rows and released multiset (numbers compared to 6 decimals); the release
    re-checked (every class at least k, each class's age its median, suppressed rows hold no age)."""
    from checker import check_microaggregation

    options = dict(k=4, max_suppression=0.1, local_recoding=True, microaggregate={"age": "median"})
    duck_out, spark_out = str(tmp_path / "duck.parquet"), str(tmp_path / "spark")
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data["files"]["research"], qi=QI, output=duck_out, **options)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=data["files"]["research"], qi=QI, output=spark_out, connection=spark, **options)
    assert on_spark.suppressed_rows == duck.suppressed_rows
    assert on_spark.extra['local_recoding']["rounds"] == duck.extra['local_recoding']["rounds"]
    assert len(duck.extra['local_recoding']["rounds"]) == 2  # a second round releases rows the first suppressed

    def normalized(rows):
        def fmt(v):
            try:
                return None if v is None else f"{float(v):.6f}"
            except ValueError:
                return v
        return Counter(tuple(fmt(r[c]) for c in COLUMNS) for r in rows)

    rows = released(spark_out)
    assert normalized(rows) == normalized(released(duck_out)) and len(rows) == len(data["research"])
    verdict = check_microaggregation(as_dicts(data["research"]), rows, "id", list(QI), "age", "median")
    assert verdict["ok"] and verdict["classes"] > 1, verdict
    assert check_k(rows, list(QI), 4, 1.0)["ok"]


@pytest.mark.parametrize("search", [pytest.param("genetic", marks=pytest.mark.slow), "optimal"])  # genetic: ~35 s
def test_weights_and_level_bounds_same_as_duckdb(spark, data, tmp_path, search):
    """Attribute weights and per-QI level bounds on Spark: the same (seeded) run as on DuckDB, and
    every released value between its QI's bounds (zip masked 1-3 digits, age at most 10-year bands)."""
    opts = dict(input=data["files"]["population"], qi={**QI, "disease": "flat"}, k=5, metric="lm", max_suppression=0.05,
                weights={"zip": 3.0, "age": 1.0, "disease": 0.5}, min_level={"zip": 1}, max_level={"zip": 3, "age": 2})
    if search == "genetic":
        opts.update(search="genetic", class_column="buys", search_options={"iterations": 12, "population": 8, "seed": 4})
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "duck.parquet"), **opts)
    on_spark = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=str(tmp_path / "spark"), connection=spark, **opts)
    for key in ("transformation", "suppressed_rows"):
        assert on_spark.to_dict()[key] == duck.to_dict()[key], key
    assert on_spark.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
    rows = same_release(str(tmp_path / "duck.parquet"), str(tmp_path / "spark"))
    assert check_k(rows, ["zip", "age", "disease"], 5, 0.05)["ok"]
    for r in rows:
        if r["zip"] == "*" and r["age"] == "*":
            continue  # suppressed
        assert 1 <= r["zip"].count("*") <= 3, r
        if r["age"].startswith("["):  # a band "[lo, hi[": at most 10 years wide (level <= 2)
            lo, hi = (int(x) for x in r["age"].strip("[").split(","))
            assert 0 < hi - lo <= 10, r
        else:
            assert r["age"].isdigit(), r
