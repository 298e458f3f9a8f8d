"""Golden SQL: each statistic's generated SQL, pretty-printed, per dialect, is compared with a
checked-in case ``-- name: <statistic>`` of a file ``tests/golden/<dialect>/<family>.sql`` (one file
per statistic family: :mod:`golden_files`). Regenerate with

    SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py

The statements are built for each dialect by :meth:`Statistics.for_dialect` (the dialect object
owns the shapes; the engine is never touched): DuckDB reads the CSV with its reader and looks codes
up in ``list_extract`` lists; PostgreSQL indexes ``(ARRAY[..])[code + 1]``; Spark indexes its
0-based ``ARRAY(..)[code]`` and caches temp tables (``CACHE TABLE``). No DuckDB-only lookup or
file reader survives in another dialect, every rendering parses back in its own dialect, and the
PostgreSQL node queries (transpiled to DuckDB) answer exactly like DuckDB's. The Spark renderings
are run on Spark by ``tests/engines/test_spark.py``.
"""

from __future__ import annotations

import os
import random
import re
import paths

import pytest
import sqlglot
from sqlglot import exp

import golden_files
from precedence import assert_precedence_kept
from sqlanon.engine import connect
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.metrics import METRICS
from sqlanon.plan import Recoding
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness
from sqlanon.release.write import release_select
from sqlanon.engine.source import Source
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.stats import Statistics

GOLDEN = paths.GOLDEN
UPDATE = os.environ.get("SQLANON_UPDATE_GOLDEN") == "1"
DIALECTS = ("duckdb", "postgres", "spark")
OTHER_DIALECTS = ("spark", "postgres")
NODE = (1, 1)

AGE = [["25", "[20, 40[", "*"], ["32", "[20, 40[", "*"], ["47", "[40, 60[", "*"]]
ZIP = [["13053", "130**", "*"], ["13068", "130**", "*"], ["14850", "148**", "*"]]


def normalize(text: str) -> str:
    """Temp-table names carry a counter (``sqlanon_fs0_3``): compare them without it."""
    return re.sub(r"sqlanon_(\w+?)_\d+", r"sqlanon_\1_N", text).strip() + "\n"


def make_stats(models, sensitive=False, class_column=False, metric=None):
    req = Requirement(models)
    needs = req.needs.merge(metric.needs if metric else ClassNeeds())
    engine = connect(threads=1)
    stats = Statistics(
        engine,
        Source.open("fixtures/people.csv"),
        ["age", "zip"],
        [Hierarchy("age", [list(r) for r in AGE]), Hierarchy("zip", [list(r) for r in ZIP])],
        sensitive="disease" if sensitive else None,
        class_column="salary" if class_column else None,
        needs=needs,
    )
    stats.prepare()
    return stats, req


def aggregates_of(metric, stats):
    if metric is None:
        return []
    aggs = metric.aggregates(stats, NODE)
    return aggs(None) if callable(aggs) else aggs


def node_query(stats, req, metric=None):
    return stats.node_query(NODE, req.predicate(), aggregates_of(metric, stats), stats.base)


# name -> (models, needs sensitive, needs class column, metric name)
NODE_CASES = {
    "node_k_anonymity": ([KAnonymity(2)], False, False, None),
    "node_distinct_l_diversity": ([KAnonymity(2), DistinctLDiversity(2)], True, False, None),
    "node_entropy_l_diversity": ([EntropyLDiversity(1.5)], True, False, None),
    "node_t_closeness_equal": ([TCloseness(0.3, "equal")], True, False, None),
    "node_t_closeness_ordered": ([TCloseness(0.3, "ordered")], True, False, None),
    "node_cm": ([KAnonymity(2)], False, True, "cm"),
    "node_lm": ([KAnonymity(2)], False, False, "lm"),
}


@pytest.fixture(autouse=True)
def _in_golden_dir(monkeypatch):
    # the CSV path is part of the SQL text: keep it relative and fixed
    monkeypatch.chdir(GOLDEN)


def compare(name: str, build, stats) -> dict[str, str]:
    """Render ``build(stats_for_dialect)`` for every dialect and compare with its golden file;
    returns ``{dialect: text}``."""
    out = {}
    for dialect in DIALECTS:
        view = stats.for_dialect(dialect)
        tree = build(view)
        text = normalize(view.dialect.render(tree, pretty=True))
        assert_precedence_kept(tree, view.dialect.render, dialect)
        golden_files.check(dialect, name, text, UPDATE)
        if dialect != "duckdb":
            assert_portable(text, dialect)
        out[dialect] = text
    return out


def _duck_source(stats) -> str:
    """DuckDB's FROM item for the fixture (to run another dialect's statement, transpiled, here)."""
    return stats.source_item.sql(dialect="duckdb")


def assert_portable(text: str, dialect: str) -> None:
    upper = text.upper()
    assert "LIST_EXTRACT" not in upper, f"{dialect}: a DuckDB list lookup survived:\n{text}"
    assert "READ_CSV" not in upper and "READ_PARQUET" not in upper, f"{dialect}: a file reader survived:\n{text}"
    assert "GROUP BY ALL" not in upper and "EXCLUDE" not in upper
    if dialect == "spark":
        assert "TEMPORARY" not in upper, f"spark: a lazy temporary view instead of CACHE TABLE:\n{text}"
    sqlglot.parse_one(text, read=dialect)  # it parses back in its own dialect


def test_base_frequency_set():
    stats, _ = make_stats([KAnonymity(2)])
    try:
        texts = compare("base_frequency_set", lambda s: s.base_query(), stats)
        assert "read_csv" in texts["duckdb"].lower() and "GROUP BY" in texts["duckdb"]
        assert all('"source"' in texts[d] or "`source`" in texts[d] for d in OTHER_DIALECTS)
        # it answers: 10 rows, 8 distinct (age, zip) tuples
        rows = stats.engine.fetch_all(stats.base_query())
        assert sum(r[-1] for r in rows) == 10 and len(rows) == 8
    finally:
        stats.engine.close()


def test_grouped_pass():
    """The grouped pass (sqlanon/stats/grouped_pass.py): the source grouped on its raw key
    columns with each group's count and hash part, then the base set coded from those groups
    (a join per group, no GROUP BY more): golden per dialect; on DuckDB it answers like the base
    scan of the source."""
    import sqlanon.stats.base_scan as base_scan
    from sqlanon.dialect import get_dialect
    from sqlanon.stats.grouped_pass import GroupedPass

    stats, _ = make_stats([KAnonymity(2)])
    try:
        source = Source.open("fixtures/people.csv")
        for dialect in DIALECTS:
            d = get_dialect(dialect)
            create = d.create_temp("sqlanon_grouped_1", base_scan.grouped_select(d.source_from(source), ["age", "zip"], d))
            view = stats.for_dialect(dialect)
            view.grouped = GroupedPass("sqlanon_grouped_1", ["age", "zip"], False, create)
            base = view.base_query()
            text = normalize(d.render(create, pretty=True) + ";\n\n" + d.render(base, pretty=True))
            golden_files.check(dialect, "grouped_pass", text, UPDATE)
            if dialect != "duckdb":
                assert_portable(d.render(create, pretty=True), dialect) and assert_portable(d.render(base, pretty=True), dialect)
            else:
                assert 'FROM "sqlanon_grouped_N"' in text and text.count("GROUP BY") == 1  # the groups are coded, not grouped again
        stats.engine.execute(get_dialect("duckdb").create_temp("sqlanon_grouped_1", base_scan.grouped_select(stats.source_item, ["age", "zip"], stats.dialect)))
        view = stats.for_dialect("duckdb")
        view.grouped = GroupedPass("sqlanon_grouped_1", ["age", "zip"], False, None)
        assert sorted(stats.engine.fetch_all(view.base_query())) == sorted(stats.engine.fetch_all(stats.base_query()))
    finally:
        stats.engine.close()


@pytest.mark.parametrize("name", list(NODE_CASES))
def test_node_query(name):
    models, sensitive, class_column, metric_name = NODE_CASES[name]
    metric = METRICS[metric_name]() if metric_name else None
    stats, req = make_stats(models, sensitive, class_column, metric)
    try:
        texts = compare(name, lambda s: node_query(s, req, metric), stats)
        assert "list_extract" in texts["duckdb"].lower()  # the DuckDB shape: inline integer list lookups
        assert "ARRAY[" in texts["postgres"]  # PostgreSQL indexes a 1-based literal array
        # Spark indexes its 0-based arrays with the code itself: never ``code + 1``
        assert "ARRAY(" in texts["spark"] and not re.search(r"\)\[[^]]*\+ 1\]", texts["spark"])
        native = stats.engine.fetch_all(node_query(stats, req, metric))
        # PostgreSQL's shape answers exactly like DuckDB's list lookups
        pg = stats.for_dialect("postgres")
        back = sqlglot.transpile(pg.dialect.render(node_query(pg, req, metric)), read="postgres", write="duckdb")[0]
        portable = stats.engine.fetch_all(back.replace('"source"', _duck_source(stats)))
        assert len(native) == len(portable) == 1
        assert native[0] == pytest.approx(portable[0])
        classes, rows, min_class, max_class, suppressed, bad = native[0][:6]
        # classes at (1, 1): ([20, 40[, 130**) 5 rows, ([40, 60[, 148**) 2, ([20, 40[, 148**) 2, ([40, 60[, 130**) 1
        assert (classes, rows, min_class, max_class) == (4, 10, 1, 5)
        assert 0 <= suppressed <= rows and 0 <= bad <= classes
        if name in ("node_k_anonymity", "node_cm", "node_lm"):  # k=2: only the 1-row class fails
            assert (suppressed, bad) == (1, 1)
    finally:
        stats.engine.close()


def test_bad_class_labels():
    stats, req = make_stats([KAnonymity(3)])
    try:
        create = stats.bad_class_labels_create(NODE, req.predicate(), "sqlanon_bad")
        texts = compare("bad_class_labels", lambda s: s.bad_class_labels_create(NODE, req.predicate(), "sqlanon_bad"), stats)
        assert "TEMPORARY" in texts["duckdb"].upper() and "TEMPORARY" in texts["postgres"].upper()
        assert texts["spark"].startswith("CACHE TABLE")  # materialized now, never a lazy view
        stats.engine.execute(create)
        bad = sorted(stats.engine.fetch_all("SELECT * FROM sqlanon_bad"))
        # classes under k=3 at (1, 1): all but ([20, 40[, 130**) (5 rows)
        assert bad == [("[20, 40[", "148**"), ("[40, 60[", "130**"), ("[40, 60[", "148**")]
    finally:
        stats.engine.close()


def test_release_select():
    stats, req = make_stats([KAnonymity(3)])
    try:
        maps = ["sqlanon_map0", "sqlanon_map1"]
        q = release_select(stats, maps, "sqlanon_bad", "mask", ())
        texts = compare("release_select", lambda s: release_select(s, maps, "sqlanon_bad", "mask", ()), stats)
        for text in texts.values():
            assert "LEFT JOIN" in text.upper() and "OVER" not in text.upper()  # anti join shape, no window
        # run it: the mapping tables for the node, the suppressed classes, then the release
        import pyarrow as pa

        recoding = Recoding.from_node(stats.hierarchies, NODE)
        for i, h in enumerate(stats.hierarchies):
            stats.engine.register_arrow(maps[i], pa.table({"leaf": h.leaves, "value": recoding.values(i)}))
        stats.engine.execute(stats.bad_class_labels_create(NODE, req.predicate(), "sqlanon_bad"))
        rows = stats.engine.fetch_all(q)
        assert len(rows) == 10
        masked = [r for r in rows if r[1] == "*"]
        assert sorted(r[0] for r in masked) == ["10", "5", "6", "8", "9"] and all(r[2] == "*" for r in masked)
        released = sorted({(r[1], r[2]) for r in rows if r[1] != "*"})
        assert released == [("[20, 40[", "130**")]
        assert [r[3:] for r in sorted(rows, key=lambda r: int(r[0]))][:2] == [("M", "flu", "<=50K"), ("F", "cancer", "<=50K")]
    finally:
        stats.engine.close()


def test_release_select_nulls():
    """NULL is a value: zip has its NULL leaf (joined on the NULL key), age suppresses its NULLs'
    rows (read without them, then added masked); the suppressed classes' labels NULL-keyed."""
    from sqlglot import exp

    from sqlanon.release.withheld import withheld_select

    engine = connect(threads=1)
    stats = Statistics(engine, Source.open("fixtures/people.csv"), ["age", "zip"],
                       [Hierarchy("age", [list(r) for r in AGE]), Hierarchy("zip", [list(r) for r in ZIP]).with_null_leaf()],
                       nulls={"age": "suppress"})
    try:
        stats.prepare()
        maps = ["sqlanon_map0", "sqlanon_map1"]

        def build(s):
            return exp.union(release_select(s, maps, "sqlanon_bad", "mask", ()), withheld_select(s), distinct=False)

        texts = compare("release_select_nulls", build, stats)
        for text in texts.values():
            assert "sqlanon:NULL" in text and "UNION ALL" in text.upper()  # the NULL key, the withheld rows
            assert text.upper().count("IS NULL") >= 2  # kept rows: NOT (age IS NULL); withheld: age IS NULL
    finally:
        engine.close()


def test_release_select_from_base():
    """A release rebuilt from the base frequency set (every released column a text QI: the
    fixture's other columns dropped) is DuckDB's only (its ``UNNEST(RANGE(cnt))``: other dialects
    have no :meth:`Dialect.repeat_rows`) and has the source release's rows."""
    from collections import Counter

    import pyarrow as pa

    from sqlanon.dialect import DIALECTS as ALL
    from sqlanon.release.write import from_base_set
    from sqlanon.plan import Plan

    stats, req = make_stats([KAnonymity(3)])
    try:
        maps = ["sqlanon_map0", "sqlanon_map1"]
        dropped = ("id", "sex", "disease", "salary")
        q = release_select(stats, maps, "sqlanon_bad", "mask", dropped, from_base=True)
        text = normalize(stats.dialect.render(q, pretty=True))
        assert_precedence_kept(q, stats.dialect.render, "duckdb")
        golden_files.check("duckdb", "release_select_from_base", text, UPDATE)
        assert [d for d in ALL if ALL[d].repeat_rows(exp.column("cnt")) is not None] == ["duckdb"]
        recoding = Recoding.from_node(stats.hierarchies, NODE)
        for i, h in enumerate(stats.hierarchies):
            stats.engine.register_arrow(maps[i], pa.table({"leaf": h.leaves, "value": recoding.values(i), "leaf_code": pa.array(range(len(h.leaves)), pa.int32())}))
        stats.engine.execute(stats.bad_class_labels_create(NODE, req.predicate(), "sqlanon_bad"))
        rebuilt = stats.engine.fetch_all(q)
        read = stats.engine.fetch_all(release_select(stats, maps, "sqlanon_bad", "mask", dropped))
        assert len(rebuilt) == stats.rows == 10 and Counter(rebuilt) == Counter(read)
        assert sum(r == ("*", "*") for r in rebuilt) == 5
        plan = Plan(search="optimal", qis=stats.qis, recoding=recoding, transformation={}, requirement=req, rows=stats.rows,
                    suppressed_rows=5, metric_name="precision", metric_value=0.0, node=NODE)
        assert from_base_set(stats, plan, dropped) and not from_base_set(stats, plan, ("id",))  # sex, disease, salary: not QIs
        with pytest.raises(Exception, match="not a quasi-identifier"):
            release_select(stats, maps, "sqlanon_bad", "mask", (), from_base=True)
    finally:
        stats.engine.close()


def test_grouped_sums_answer_alike_in_every_dialect():
    """Sums over several groupings in one statement (column frequencies, released rows per QI): a UNION
    ALL of GROUP BYs, on Spark one GROUPING SETS whose grouping is read from GROUPING_ID. Golden per
    dialect; every dialect's statement, transpiled to DuckDB, gives the rows of a plain GROUP BY per
    grouping (three columns: the GROUPING_ID bit order and the CASE per column are exercised)."""
    import itertools

    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i % 3 AS q0, i % 5 AS q1, (i * 7) % 4 AS q2, 1 + i % 2 AS cnt FROM range(60) r(i)")
    cols = ["q0", "q1", "q2"]
    cases = [(["a", "b"], "p", [list(pair) for pair in itertools.combinations(cols, 2)]), (["code"], "i", [[c] for c in cols]), (["a", "b"], "p", [["q2", "q0"], ["q1", "q2"]])]
    texts = compare_statements("grouped_sums", lambda d: [d.grouped_sums("t", groupings, names, tag) for names, tag, groupings in cases])
    for (_names, _tag, groupings), *parts in zip(cases, *[texts[d].split(";\n\n") for d in DIALECTS]):
        expected = sorted(
            (g, *key, n) for g, grouping in enumerate(groupings)
            for *key, n in con.execute("SELECT " + ", ".join(grouping) + ", SUM(cnt) FROM t GROUP BY ALL").fetchall()
        )
        for dialect, text in zip(DIALECTS, parts):
            got = sorted(con.execute(sqlglot.transpile(text, read=dialect, write="duckdb")[0]).fetchall())
            assert got == expected, (dialect, groupings)
    con.close()


def test_every_golden_file_is_used():
    names = {"base_frequency_set", "grouped_pass", "bad_class_labels", "release_select", "release_select_nulls", "node_batch", "node_batch_branches", "node_batch_histogram", "node_batch_sensitive_values", "pair_counts", "grouped_sums", "safepub_sample", *NODE_CASES, *GENETIC_CASES, "genetic_batch_lm_within", *BOTTOM_UP_CASES,
             *TOP_DOWN_CASES, *ITEMSET_CASES}
    only = {"duckdb": {"release_select_from_base"}}  # statements a single dialect has
    for dialect in DIALECTS:
        assert set(golden_files.cases_in(dialect)) == names | only.get(dialect, set()), dialect
        for path in (GOLDEN / dialect).glob("*.sql"):
            in_file = golden_files.parse(path.read_text(encoding="utf-8"))
            assert in_file and {golden_files.family(name) for name in in_file} == {path.stem}, f"{path}: cases of another family"
    assert not list(GOLDEN.glob("*.sql")), "golden files live in one folder per dialect"


def test_building_never_touches_the_engine():
    """Rendering for another dialect neither reads nor changes the engine's dialect."""
    stats, req = make_stats([KAnonymity(2)])
    try:
        before = stats.engine.dialect
        for dialect in DIALECTS:
            stats.for_dialect(dialect).node_query(NODE, req.predicate(), [], stats.base)
        assert stats.engine.dialect is before and stats.dialect is before
    finally:
        stats.engine.close()


def test_pair_counts():
    """The QI-pair (and triple) marginals of the rare-value suppression bound (one grouping set per
    pair or triple over the base set): golden per dialect, and the counts are the pairs' row counts."""
    from sqlanon.stats.marginals import pair_counts_query

    stats, _ = make_stats([KAnonymity(2)])
    try:
        texts = compare("pair_counts", lambda s: pair_counts_query(s, [(0, 1)]), stats)
        assert "GROUP BY" in texts["duckdb"]
        rows = sorted(stats.engine.fetch_all(pair_counts_query(stats, [(0, 1)])))
        base = stats.engine.fetch_all(exp.select("q0", "q1", "cnt").from_(stats.base.table))
        assert sorted(base) == rows  # two QIs: the pairs are the base set
    finally:
        stats.engine.close()


BATCH_NODES = [(0, 0), (1, 1), (1, 2), (2, 1)]


def batch_query(stats, req, metric):
    from sqlanon.stats.batch import batch_query as build

    return build(stats, BATCH_NODES, req.predicate(), metric)


def assert_batch_answers(stats, req, metric):
    """DuckDB's batch statement answers exactly like one statement per node, and PostgreSQL's
    shape, transpiled and run on DuckDB, like DuckDB's."""
    native = sorted(stats.engine.fetch_all(batch_query(stats, req, metric)), key=lambda r: r[-1])
    assert [r[-1] for r in native] == list(range(len(BATCH_NODES)))
    for node, row in zip(BATCH_NODES, native):
        one = stats.engine.fetch_all(stats.node_query(node, req.predicate(), aggregates_of_node(metric, stats, node), stats.base))[0]
        assert row[:-1] == pytest.approx(one)
    pg = stats.for_dialect("postgres")
    back = sqlglot.transpile(pg.dialect.render(batch_query(pg, req, metric)), read="postgres", write="duckdb")[0]
    portable = sorted(stats.engine.fetch_all(back), key=lambda r: r[-1])
    assert [float(v) for r in portable for v in r] == pytest.approx([float(v) for r in native for v in r])


def test_node_batch():
    """The batch statement (node table joined to the set, grouped by node id): golden per dialect,
    and DuckDB's and PostgreSQL's shapes answer exactly like one statement per node."""
    metric = METRICS["lm"]()
    stats, req = make_stats([KAnonymity(2)], metric=metric)
    try:
        texts = compare("node_batch", lambda s: batch_query(s, req, metric), stats)
        assert "VALUES" in texts["duckdb"].upper() and '"nid"' in texts["duckdb"]
        assert_batch_answers(stats, req, metric)
    finally:
        stats.engine.close()


@pytest.mark.parametrize("name", ["node_batch_histogram", "node_batch_sensitive_values"])
def test_node_batch_with_sensitive_models(name, monkeypatch):
    """The batch statement with l-diversity and t-closeness (equal and ordered): the class
    histogram of a small sensitive domain (one sum per value, the models' columns from it), or
    per class and value rows (a larger domain, forced here); golden per dialect, and DuckDB's
    and PostgreSQL's shapes answer like one statement per node."""
    from sqlanon.stats import batch

    if name == "node_batch_sensitive_values":
        monkeypatch.setattr(batch, "HISTOGRAM_VALUES", 0)
    metric = METRICS["lm"]()
    models = [KAnonymity(2), DistinctLDiversity(2), EntropyLDiversity(1.5), TCloseness(0.4, "equal"), TCloseness(0.5, "ordered")]
    stats, req = make_stats(models, sensitive=True, metric=metric)
    try:
        assert (batch.histogram(stats) is None) == (name == "node_batch_sensitive_values")
        texts = compare(name, lambda s: batch_query(s, req, metric), stats)
        assert ('"h0"' in texts["duckdb"]) == (name == "node_batch_histogram")
        assert_batch_answers(stats, req, metric)
    finally:
        stats.engine.close()


def test_spark_batch_statements_keep_one_shape():
    """On Spark (whole-stage code generation: compiled code is cached by the statement's shape,
    :attr:`Dialect.compiles_shapes`) two batch statements of as many nodes at different levels
    differ only in their literal values, so the second reuses the first's warm compiled code; the
    identity and constant lookups keep their array shape. PostgreSQL's statements are narrowed
    to their nodes' levels: there the shapes differ."""
    from sqlanon.stats import batch

    def shape(view, nodes) -> str:
        tree = sqlglot.parse_one(view.dialect.render(batch.build(view, batch.layout(view, nodes), req.predicate())), read=view.dialect.name)
        return tree.transform(lambda e: exp.Placeholder() if isinstance(e, exp.Literal) else e).sql(view.dialect.name)

    stats, req = make_stats([KAnonymity(2)])
    try:
        one, two = [(0, 1), (1, 0)], [(0, 2), (2, 0)]  # both groups roll up from the base set
        spark = stats.for_dialect("spark")
        assert shape(spark, one) == shape(spark, two)
        assert spark.dialect.render(spark.dialect.lookup([0, 1, 2], exp.column("q0"))) == "ARRAY(0, 1, 2)[q0]"
        pg = stats.for_dialect("postgres")
        assert shape(pg, one) != shape(pg, two)
    finally:
        stats.engine.close()


def test_node_batch_branches(monkeypatch):
    """The batch statement on a large set (forced here): one branch per node grouping the set by
    the node's packed key, ``UNION ALL``, no node table joined but for the metric's parts: golden
    per dialect, and DuckDB's and PostgreSQL's shapes answer exactly like one statement per node."""
    from sqlanon.dialect.postgres import PostgresDialect
    from sqlanon.dialect.spark import SparkDialect
    from sqlanon.stats import batch

    monkeypatch.setattr(SparkDialect, "node_branches", True)  # Spark spreads the node table instead: the shape still renders
    monkeypatch.setattr(PostgresDialect, "branch_rows", 0)  # PostgreSQL's own rule: over sets of 20,000 rows
    monkeypatch.setattr(batch, "NARROW_BATCH", 10**9)
    monkeypatch.setattr(batch, "BRANCH_ROWS", 0)
    monkeypatch.setattr(batch, "BRANCH_NODES", 10**9)
    metric = METRICS["lm"]()
    stats, req = make_stats([KAnonymity(2)], metric=metric)
    try:
        assert batch.branches(stats, [(list(range(len(BATCH_NODES))), BATCH_NODES, stats.base, None)])
        texts = compare("node_batch_branches", lambda s: batch_query(s, req, metric), stats)
        assert "UNION ALL" in texts["duckdb"] and "VALUES" not in texts["postgres"].split('"v0"')[0]
        assert_batch_answers(stats, req, metric)
    finally:
        stats.engine.close()


def aggregates_of_node(metric, stats, node):
    aggs = metric.aggregates(stats, node)
    return aggs(None) if callable(aggs) else aggs


# the genetic search's fitness statement: name -> (models, needs the sensitive column)
GENETIC_CASES = {
    "genetic_batch_lm": ([KAnonymity(2)], False),
    "genetic_batch_t_closeness": ([KAnonymity(2), TCloseness(0.4, "equal")], True),
    "genetic_batch_t_closeness_ordered": ([KAnonymity(2), TCloseness(0.4, "ordered")], True),
}


@pytest.mark.parametrize("name", list(GENETIC_CASES))
def test_genetic_batch(name):
    """The genetic search's batch statement (candidate table crossed with the frequency set, block
    lookups, class key with the candidate number folded in): golden per dialect, and PostgreSQL's
    shape (transpiled back) answers exactly like DuckDB's on the same candidates."""
    from sqlanon.search.genetic.cut import Layout
    from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective
    from sqlanon.search.genetic.stats import CANDIDATE_RADIX, GeneticStats

    models, sensitive = GENETIC_CASES[name]
    stats, req = make_stats(models, sensitive)
    try:
        for m in models:
            if isinstance(m, TCloseness):
                m.global_dist = {v: n / stats.rows for v, n in stats.sensitive_domain}
                m.order = [v for v, _ in stats.sensitive_domain]
        layout = Layout.build(stats.qis, stats.hierarchies, stats.column_freqs)
        objective, costs = build_objective("lm", {}, None)
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, local=False)  # the SQL statement runs
        ev.prepare()
        words = (0,) * len(ev.gstats.blocks)

        def build(view):
            g = GeneticStats(view, ok=req.predicate(), needs=req.needs)
            g.table, g.cand = ev.gstats.table, ev.gstats.cand
            return g.batch_query(True, False, words, CANDIDATE_RADIX)

        texts = compare(name, build, stats)
        assert '"kb0"' in texts["duckdb"] and "% 64" in texts["duckdb"]
        chroms = [layout.repair([0] * layout.nbits), layout.repair([1] * layout.nbits)]
        chroms += [layout.repair([int(j == i) for j in range(layout.nbits)]) for i in range(layout.nbits)]
        native = ev.gstats.evaluate([_cand(ev, ch) for ch in chroms], lm=True)
        pg = stats.for_dialect("postgres")
        g = GeneticStats(pg, ok=req.predicate(), needs=req.needs)
        g.table, g.cand = ev.gstats.table, ev.gstats.cand
        back = sqlglot.transpile(pg.dialect.render(g.batch_query(True, False, words, CANDIDATE_RADIX)), read="postgres", write="duckdb")[0]
        ev.gstats._sql = {("batch", True, False, words, CANDIDATE_RADIX): back}  # run PostgreSQL's shape
        portable = ev.gstats.evaluate([_cand(ev, ch) for ch in chroms], lm=True)
        assert len(portable) == len(native) == len(chroms)
        for mine, theirs in zip(portable, native):
            assert mine.keys() == theirs.keys()
            assert [float(mine[k]) for k in mine] == pytest.approx([float(theirs[k]) for k in theirs])
        assert [r["suppressed"] for r in native][:2] == [stats.evaluate(layout.recoding(ch), req.predicate()).suppressed for ch in chroms[:2]]
        ev.drop()
    finally:
        stats.engine.close()


def _cand(ev, ch):
    parts = [ev.part(i, p) for i, p in enumerate(ev.layout.split(ch))]
    return {"codes": [p["codes"] for p in parts], "groups": [p["groups"] for p in parts], "leaf_loss": [p["loss"] for p in parts],
            "group_loss": [p["group_loss"] for p in parts]}


def test_genetic_batch_lm_within():
    """The batch statement that reads the LM of the suppressed rows back from the class keys, for
    the candidates suppressing at most ``w`` rows only: golden per dialect, the same ``lm_sup`` as
    the per-row statement within the bound (NULL beyond it), with the key split over two words, and
    PostgreSQL's shape (transpiled back) answers like DuckDB's."""
    from sqlanon.search.genetic.cut import Layout
    from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective
    from sqlanon.search.genetic.stats import CANDIDATE_RADIX, GeneticStats

    stats, req = make_stats([KAnonymity(2)], False)
    try:
        layout = Layout.build(stats.qis, stats.hierarchies, stats.column_freqs)
        objective, costs = build_objective("lm", {}, None)
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, local=False)

        def blocks(g):  # one block per QI, so that the key can be split over two words
            g.blocks, g.block_mult = [[0], [1]], [1, 1]
            return g

        blocks(ev.gstats).prepare()
        ev.rows = ev.gstats.totals["rows"]
        g0 = ev.gstats
        assert g0.decodes(1, 1) and not g0.decodes(g0.base_rows, 9)
        g0.decodes = lambda lm_within, candidates: True  # the shape under test, whatever the bound
        words = (0, 0)

        def build(view):
            g = blocks(GeneticStats(view, ok=req.predicate(), needs=req.needs))
            g.table, g.cand = g0.table, g0.cand
            return g.batch_query(True, False, words, CANDIDATE_RADIX, lm_within=0)

        texts = compare("genetic_batch_lm_within", build, stats)
        assert '"g0"' in texts["duckdb"] and '"lb0"' not in texts["duckdb"]
        rng = random.Random(3)
        chroms = [layout.repair([0] * layout.nbits), layout.repair([1] * layout.nbits)]
        chroms += [layout.repair([rng.random() < 0.5 for _ in range(layout.nbits)]) for _ in range(12)]
        cands = [_cand(ev, ch) for ch in chroms]
        full = g0.evaluate(cands, lm=True)
        sups = sorted(r["suppressed"] for r in full)
        bound = sups[len(sups) // 2]
        for limit in (bound, 0, 10**9):
            within = g0.evaluate(cands, lm=True, lm_within=limit)
            for mine, theirs in zip(within, full):
                assert [mine[k] for k in ("c", "suppressed", "classes", "bad_classes", "min_class")] == [theirs[k] for k in ("c", "suppressed", "classes", "bad_classes", "min_class")]
                if theirs["suppressed"] <= limit:
                    assert float(mine["lm_sup"]) == pytest.approx(float(theirs["lm_sup"]), abs=1e-9)
                else:
                    assert mine["lm_sup"] is None
        # the key over two words (wide tables need them): the first block in one, the rest in
        # another, the strides still one mixed radix; same answers
        layout_keys = g0.layout_keys
        g0.layout_keys = lambda groups, radix=1: (layout_keys(groups, radix)[0], (0, 1))
        split = g0.evaluate(cands, lm=True, lm_within=10**9)
        del g0.layout_keys
        for mine, theirs in zip(split, full):
            assert (mine["suppressed"], mine["classes"]) == (theirs["suppressed"], theirs["classes"])
            assert float(mine["lm_sup"]) == pytest.approx(float(theirs["lm_sup"]), abs=1e-9)
        pg = stats.for_dialect("postgres")
        g = blocks(GeneticStats(pg, ok=req.predicate(), needs=req.needs))
        g.table, g.cand = g0.table, g0.cand
        back = sqlglot.transpile(pg.dialect.render(g.batch_query(True, False, words, CANDIDATE_RADIX, lm_within=0)), read="postgres", write="duckdb")[0]
        g0._sql = {("batch", True, False, words, CANDIDATE_RADIX, "within"): back}  # run PostgreSQL's shape
        portable = g0.evaluate(cands, lm=True, lm_within=bound)
        for mine, theirs in zip(portable, full):
            assert mine["suppressed"] == theirs["suppressed"]
            assert (mine["lm_sup"] is None) == (theirs["suppressed"] > bound)
            if theirs["suppressed"] <= bound:
                assert float(mine["lm_sup"]) == pytest.approx(float(theirs["lm_sup"]), abs=1e-9)
        ev.drop()
    finally:
        stats.engine.close()


# the bottom-up search's statements on its vid table (TEA index): name -> builder(VidTable)
def _bottom_up_statements():
    return {
        "bottom_up_vid_table": lambda v: [v.create_query("sqlanon_fs0_1", ["<=50K", ">50K"], leaf_nodes=[[0, 0, 1], [0, 1, 1]])],
        "bottom_up_info_loss": lambda v: [v.info_loss_query([(0, 2, [0, 1]), (1, 3, [1, 2])])],
        "bottom_up_candidates": lambda v: [v.anonymity_range_query(1), v.segment_sizes_query(1, [(1, [1, 2])]), v.count_histogram_query(3)],
        "bottom_up_probe": lambda v: [v.merged_query(0, 2, [0, 1]), v.probe_query(0, 2, [0, 1], 3), v.probe_query(0, 2, [0, 1], 3, inserted=True)],
    }


BOTTOM_UP_CASES = list(_bottom_up_statements())


def compare_statements(name: str, build) -> dict[str, str]:
    """Like :func:`compare` for a statistic made of several statements (``build(dialect)`` -> list)."""
    from sqlanon.dialect import get_dialect

    out = {}
    for dialect in DIALECTS:
        d = get_dialect(dialect)
        trees = build(d)
        text = normalize(";\n\n".join(d.render(e, pretty=True) for e in trees))
        for tree in trees:
            assert_precedence_kept(tree, d.render, dialect)
        golden_files.check(dialect, name, text, UPDATE)
        for part in text.split(";\n\n"):
            if dialect != "duckdb":
                assert_portable(part, dialect)
        out[dialect] = text
    return out


@pytest.mark.parametrize("name", BOTTOM_UP_CASES)
def test_bottom_up_statements(name):
    """The bottom-up search's statements per dialect; DuckDB's answer on a small base set: the vid
    table's class counts and the probe's merged vids add up to the base set's rows."""
    from sqlanon.search.bottom_up.stats import VidTable

    engine = connect(threads=1)
    try:
        build = _bottom_up_statements()[name]
        texts = compare_statements(name, lambda d: build(VidTable(engine, 2, 2, dialect=d)))
        if name == "bottom_up_vid_table":
            assert texts["spark"].startswith("CACHE TABLE") and "ARRAY(0, 0, 1)[" in texts["spark"]
        # run DuckDB's statements on a base frequency set of 3 x 3 leaf codes and 2 classes
        engine.execute("CREATE TABLE sqlanon_fs0_1 AS SELECT a AS q0, b AS q1, y, (a + 1) * (b + 2) AS cnt "
                       "FROM range(3) r(a), range(3) s(b), (VALUES ('<=50K'), ('>50K')) c(y)")
        total = engine.scalar("SELECT SUM(cnt) FROM sqlanon_fs0_1")
        vids = VidTable(engine, 2, 2)
        vids.create("sqlanon_fs0_1", ["<=50K", ">50K"])
        assert engine.scalar(exp.select("SUM(y0 + y1)", "SUM(cnt)").from_(vids.name)) == total
        probe = vids.probe(0, 3, [0, 1], 100)
        merged = exp.select("SUM(cnt)").from_(exp.alias_(exp.Subquery(this=vids.merged_query(0, 3, [0, 1])), "m", table=True))
        assert engine.scalar(merged) == sum((a + 1) * (b + 2) * 2 for a in (0, 1) for b in range(3))
        assert (probe.old_vids, probe.new_vids) == (6, 3) and sum(probe.new_hist.values()) == 3
        vids.commit(probe)
        assert vids.size() == 6 and engine.scalar(exp.select("SUM(cnt)").from_(vids.name)) == total
        # applied without a probe: the same counts as a probe, the merge computed once
        applied = vids.apply(1, 4, [0, 1], 100)
        assert (applied.old_vids, applied.new_vids, sum(applied.new_hist.values())) == (4, 2, 2)
        assert vids.size() == 4 and engine.scalar(exp.select("SUM(cnt)").from_(vids.name)) == total
    finally:
        engine.close()


def test_safepub_sample():
    """SafePub's Bernoulli sample: DuckDB divides its unsigned hash by 2^64; PostgreSQL and Spark
    shift their signed hashes by 2^63 first, inside parentheses."""
    from sqlanon.search.lattice.safepub import sample_query

    texts = compare_statements("safepub_sample", lambda d: [sample_query(d, exp.to_table("people"), ["age", "zip"], 0.5934, 5)])
    texts = {d: re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", " ".join(t.split()))) for d, t in texts.items()}
    assert "HASH(" in texts["duckdb"] and "9.223372036854776e+18" not in texts["duckdb"]
    assert "(CAST(XXHASH64(" in texts["spark"] and "+ 9.223372036854776e+18)" in texts["spark"]
    assert "HASHTEXTEXTENDED(" in texts["postgres"] and "+ 9.223372036854776e+18)" in texts["postgres"]


def test_precedence_check_sees_missing_parentheses():
    """The check behind every golden: a sum divided, built without ``exp.Paren``, renders as
    ``a + 1 / 2`` in DuckDB and Spark, which is not the tree that was built (SafePub's sample on
    Spark once kept about half the rows this way); with ``exp.Paren`` it passes. (sqlglot's
    PostgreSQL renders a division's numerator inside a CAST, which happens to keep the meaning.)"""
    bare = exp.select(exp.Div(this=exp.Add(this=exp.column("a"), expression=exp.Literal.number(1)), expression=exp.Literal.number(2))).from_("t")
    for dialect in ("duckdb", "spark"):
        with pytest.raises(AssertionError, match="missing parentheses"):
            assert_precedence_kept(bare, lambda t: t.sql(dialect=dialect), dialect)
    wrapped = exp.select(exp.Div(this=exp.Paren(this=exp.Add(this=exp.column("a"), expression=exp.Literal.number(1))), expression=exp.Literal.number(2))).from_("t")
    for dialect in DIALECTS:
        assert_precedence_kept(wrapped, lambda t: t.sql(dialect=dialect), dialect)


# ----------------------------------------------------------------------------------------------
# the top-down search's lossy-join statistics (T1 = the fixture, one previous release = the
# fixture again, joined on zip; X = age (+ the release's sex), Y = disease)

ZIP_NODE = [0, 0, 1]   # zip leaf -> its level-1 node (130**, 148**)
AGE_NODE = [0, 0, 1]   # age leaf -> its level-1 node ([20, 40[, [40, 60[)
#: T1's zip node -> the previous release's zip value id (13053, 13068, 14850): consistent pairs
ZIP_MATCH = [(0, 0), (0, 1), (1, 2)]
#: declared inconsistent: T1's 130** never meets the release's 13053
ZIP_INC = [(0, 0)]


def _lossy_join(engine, stats, y_mode="values", sens=True):
    from sqlanon.search.top_down.stats import IncTable, LossyJoinStats, MatchTable, PrevSpec, SideY, T1Spec

    t1 = T1Spec(["age", "zip"], list(stats.map_tables), [0, 1], [0], [1], SideY(["id"] if y_mode != "none" else [], y_mode), "salary", [])
    prev = PrevSpec("t2", Source.open("fixtures/people.csv"), ["zip"], [["13053", "13068", "14850"]], [], ["sex"],
                    SideY(["disease"], "values"), [(0, "disease", "hiv")] if sens else [])
    mode = "distinct" if y_mode != "none" else "case4"
    lj = LossyJoinStats(engine, stats.source, t1, [prev], 1 if sens else 0, mode, shared=stats)
    matches = [MatchTable(1, [(1, 0)], ZIP_MATCH)]
    incs = [IncTable(1, 1, 0, ZIP_INC)]
    return lj, matches, incs


def _top_down_statements():
    cuts = {0: AGE_NODE, 1: ZIP_NODE}
    spec = ({0: [0, 1, 2], 1: ZIP_NODE}, (0, AGE_NODE))  # age's leaves as children of its nodes
    return {
        "top_down_base1": lambda lj, shared: [lj.dialect.create_temp(lj.base1, lj.base1_select()), shared.base1_from_shared()],
        "top_down_previous": lambda lj, shared: [lj.dialect.create_temp(lj.prel[0], lj.prel_select(0)), lj.dialect.create_temp(lj.part[0], lj.part_select(0)),
                                                 lj.dialect.create_temp(lj.keys[0], lj.key_select(0))],
        "top_down_factorized": lambda lj, shared: [shared.specialization_query(*spec, shared.m, shared.i, factorized=True),
                                                   shared.state_query(cuts, shared.m, shared.i, [0], factorized=True)],
        "top_down_pairs": lambda lj, shared: [lj.specialization_query(*spec, lj.m, lj.i, factorized=False),
                                              lj.state_query(cuts, lj.m, lj.i, [0], factorized=False), lj.worst_x_query(cuts, lj.m, lj.i, "l", 0)],
    }


TOP_DOWN_CASES = list(_top_down_statements())


def _people():
    import csv

    with open(GOLDEN / "fixtures" / "people.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("name", TOP_DOWN_CASES)
def test_top_down_statements(name):
    """The lossy-join statements per dialect (built by ``LossyJoinStats.for_dialect``: the engine
    is not read); DuckDB's answers against the join built in Python: the join's rows, the
    smallest number of distinct Y values (T1's id, the release's disease) per x and the largest
    share of 'hiv' per x."""
    stats, _ = make_stats([KAnonymity(2)], class_column=True)
    engine = stats.engine
    try:
        lj, m, i = _lossy_join(engine, stats)
        shared, sm, si = _lossy_join(engine, stats, y_mode="none", sens=False)
        lj.m, lj.i, shared.m, shared.i = m, i, sm, si
        build = _top_down_statements()[name]
        texts = compare_statements(name, lambda d: [e for e in build(lj.for_dialect(d), shared.for_dialect(d)) if e is not None])
        assert engine.dialect == "duckdb"
        if name == "top_down_previous":
            assert texts["spark"].count("CACHE TABLE") == 3 and "TEMPORARY" not in texts["spark"]
        # DuckDB's answers: T1 and the release joined in Python
        people = _people()
        age_leaf, zip_leaf = {"25": 0, "32": 1, "47": 2}, {"13053": 0, "13068": 1, "14850": 2}
        pairs = [(a, b) for a in people for b in people
                 if (ZIP_NODE[zip_leaf[a["zip"]]], zip_leaf[b["zip"]]) in ZIP_MATCH and (ZIP_NODE[zip_leaf[a["zip"]]], zip_leaf[b["zip"]]) not in ZIP_INC]
        by_x: dict = {}
        for a, b in pairs:
            by_x.setdefault((AGE_NODE[age_leaf[a["age"]]], b["sex"]), []).append((a["id"], b["disease"]))
        for one in (lj, shared):
            one.prepare()
        assert lj.rows1 == 10 and lj.rows_prev == [10]
        cuts = {0: AGE_NODE, 1: ZIP_NODE}
        total, per = lj.evaluate_state(cuts, m, i, [0], factorized=False)
        assert total.ax == len(pairs)
        assert total.ay == min(len(set(ys)) for ys in by_x.values())  # distinct Y = (id, disease) per x
        assert total.ly[0] == pytest.approx(max(sum(d == "hiv" for _, d in ys) / len(ys) for ys in by_x.values())) and total.ly[0] > 0
        assert sum(r.ax for r in per[0].values()) == len(pairs)
        ftotal, _ = shared.evaluate_state(cuts, sm, si, [0], factorized=True)
        assert ftotal.ax == len(pairs)
    finally:
        engine.close()


# ----------------------------------------------------------------------------------------------
# the itemset statistics of `generate` (KRIMP): encoding and the level-wise counts

ITEM_COLUMNS = ["sex", "disease", "salary"]


def _itemset_statements():
    from sqlanon.generation.itemsets import alphabet_query, coded_select, level_query, raw_select

    raw, items, fs = "sqlanon_gen_raw_1", "sqlanon_gen_items_2", "sqlanon_gen_fs_3"
    return {
        "itemsets_encode": lambda d: [d.create_temp(raw, raw_select(d.source_from(Source.open("fixtures/people.csv")), ITEM_COLUMNS)),
                                      alphabet_query(raw, 3), d.create_temp(fs, coded_select(raw, items, 3))],
        "itemsets_level": lambda d: [level_query(fs, 3, [(0, 1), (0, 2), (1, 2)], 2, closed=True), level_query(fs, 3, [(0,), (1,), (2,)], 2, closed=False)],
    }


ITEMSET_CASES = list(_itemset_statements())


@pytest.mark.parametrize("name", ITEMSET_CASES)
def test_itemset_statements(name):
    """The itemset statements per dialect; DuckDB's frequent (and closed) itemsets against
    counting the fixture's rows in Python."""
    from itertools import combinations

    from sqlanon.generation.itemsets import encode, mine

    texts = compare_statements(name, _itemset_statements()[name])
    if name == "itemsets_level":
        assert all("GROUPING SETS" in texts[d] for d in DIALECTS)
    engine = connect(threads=1)
    try:
        enc = encode(engine, Source.open("fixtures/people.csv"), ITEM_COLUMNS)
        label = {i: (ITEM_COLUMNS[int(c)], v) for i, (c, v) in enumerate(zip(enc.item_column, enc.item_labels))}
        people = _people()
        expected = {}
        for size in (2, 3):
            for cols in combinations(ITEM_COLUMNS, size):
                counts: dict = {}
                for r in people:
                    key = tuple((c, r[c]) for c in cols)
                    counts[key] = counts.get(key, 0) + 1
                expected.update({k: n for k, n in counts.items() if n >= 2})
        got = mine(engine, enc, 2)
        assert {tuple(sorted(label[i] for i in items)): n for items, n in got.as_dict().items()} == {tuple(sorted(k)): n for k, n in expected.items()}
        closed = mine(engine, enc, 2, candidates="closed")
        # closed: no frequent superset with the same support
        want = {k for k, n in expected.items() if not any(set(k) < set(o) and n == expected[o] for o in expected)}
        assert {tuple(sorted(label[i] for i in items)) for items in closed.as_dict()} == {tuple(sorted(k)) for k in want}
    finally:
        engine.close()
