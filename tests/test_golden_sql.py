"""Golden SQL: each statistic's generated SQL, pretty-printed, is compared with a checked-in file
in tests/golden/ (one file per statistic). Regenerate with

    SQLANON_UPDATE_GOLDEN=1 pytest tests/test_golden_sql.py

Every golden query also transpiles to spark and postgres, and rendered for those dialects (the
engine's dialect set to them, the source a plain table, as ``sqlanon.api.plan_sql`` does) no
DuckDB-only lookup (``LIST_EXTRACT``) or file reader (``read_csv``) survives. The CASE-shaped node
queries are run on DuckDB too and must give the same answers as the list-lookup shape.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from sqlanon.engine import connect
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.metrics import METRICS
from sqlanon.plan import Recoding
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness
from sqlanon.release import release_select
from sqlanon.source import Source, table_ref
from sqlanon.stats import ClassNeeds, Statistics

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("SQLANON_UPDATE_GOLDEN") == "1"
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


def compare(name: str, expression: exp.Expression) -> str:
    text = normalize(expression.sql(dialect="duckdb", pretty=True))
    path = GOLDEN / f"{name}.sql"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run SQLANON_UPDATE_GOLDEN=1 pytest {__file__}"
    assert text == path.read_text(encoding="utf-8"), f"{name}: generated SQL differs from {path} (SQLANON_UPDATE_GOLDEN=1 to accept)"
    for dialect in OTHER_DIALECTS:
        out = sqlglot.transpile(path.read_text(encoding="utf-8"), read="duckdb", write=dialect, pretty=True)
        assert len(out) == 1 and out[0].strip()
    return text


def render_for(stats, dialect: str, build):
    """Render with the engine's dialect set to ``dialect`` and the source a plain table."""
    engine = stats.engine
    original_dialect, original_from = engine.dialect, engine.source_from
    engine.dialect = dialect
    engine.source_from = lambda source: table_ref("source")
    try:
        return build().sql(dialect=dialect, pretty=True)
    finally:
        engine.dialect = original_dialect
        engine.source_from = original_from


def assert_portable(text: str, dialect: str) -> None:
    upper = text.upper()
    assert "LIST_EXTRACT" not in upper, f"{dialect}: a DuckDB list lookup survived:\n{text}"
    assert "READ_CSV" not in upper and "READ_PARQUET" not in upper, f"{dialect}: a file reader survived:\n{text}"
    assert "GROUP BY ALL" not in upper and "EXCLUDE" not in upper
    sqlglot.parse_one(text, read=dialect)  # it parses back in its own dialect


def test_base_frequency_set():
    stats, _ = make_stats([KAnonymity(2)])
    try:
        text = compare("base_frequency_set", stats.base_query())
        assert "read_csv" in text.lower() and "GROUP BY" in text
        for dialect in OTHER_DIALECTS:
            assert_portable(render_for(stats, dialect, stats.base_query), dialect)
        # it answers: 10 rows, 8 distinct (age, zip) tuples
        rows = stats.engine.fetch_all(stats.base_query())
        assert sum(r[-1] for r in rows) == 10 and len(rows) == 8
    finally:
        stats.engine.close()


@pytest.mark.parametrize("name", list(NODE_CASES))
def test_node_query(name):
    models, sensitive, class_column, metric_name = NODE_CASES[name]
    metric = METRICS[metric_name]() if metric_name else None
    stats, req = make_stats(models, sensitive, class_column, metric)
    try:
        q = node_query(stats, req, metric)
        text = compare(name, q)
        assert "list_extract" in text.lower()  # the DuckDB shape: inline integer list lookups
        native = stats.engine.fetch_all(q)
        for dialect in OTHER_DIALECTS:
            other = render_for(stats, dialect, lambda: node_query(stats, req, metric))
            assert_portable(other, dialect)
            # PostgreSQL indexes a literal array (1-based, like DuckDB); Spark gets CASE lookups
            assert ("ARRAY[" in other) if dialect == "postgres" else ("CASE" in other and "ARRAY(" not in other)
            # either shape answers exactly like DuckDB's list lookups
            back = sqlglot.transpile(other, read=dialect, write="duckdb")[0]
            portable = stats.engine.fetch_all(back)
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
        text = compare("bad_class_labels", create)
        assert "TEMPORARY" in text.upper()
        for dialect in OTHER_DIALECTS:
            assert_portable(render_for(stats, dialect, lambda: stats.bad_class_labels_create(NODE, req.predicate(), "sqlanon_bad")), dialect)
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
        text = compare("release_select", q)
        assert "LEFT JOIN" in text.upper() and "OVER" not in text.upper()  # anti join shape, no window
        for dialect in OTHER_DIALECTS:
            assert_portable(render_for(stats, dialect, lambda: release_select(stats, maps, "sqlanon_bad", "mask", ())), dialect)
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


def test_every_golden_file_is_used():
    names = {"base_frequency_set", "bad_class_labels", "release_select", "node_batch", *NODE_CASES}
    on_disk = {p.stem for p in GOLDEN.glob("*.sql")}
    assert on_disk == names


BATCH_NODES = [(0, 0), (1, 1), (1, 2), (2, 1)]


def batch_query(stats, req, metric):
    from sqlanon.stats.batch import batch_query as build

    return build(stats, BATCH_NODES, req.predicate(), metric)


def test_node_batch():
    """The batch statement (node table joined to the set, grouped by node id): golden, portable,
    and every dialect's shape answers exactly like one statement per node."""
    metric = METRICS["lm"]()
    stats, req = make_stats([KAnonymity(2)], metric=metric)
    try:
        q = batch_query(stats, req, metric)
        text = compare("node_batch", q)
        assert "VALUES" in text.upper() and '"nid"' in text
        native = sorted(stats.engine.fetch_all(q), key=lambda r: r[-1])
        assert [r[-1] for r in native] == list(range(len(BATCH_NODES)))
        for node, row in zip(BATCH_NODES, native):
            one = stats.engine.fetch_all(stats.node_query(node, req.predicate(), aggregates_of_node(metric, stats, node), stats.base))[0]
            assert row[:-1] == pytest.approx(one)
        for dialect in OTHER_DIALECTS:
            other = render_for(stats, dialect, lambda: batch_query(stats, req, metric))
            assert_portable(other, dialect)
            back = sqlglot.transpile(other, read=dialect, write="duckdb")[0]
            portable = sorted(stats.engine.fetch_all(back), key=lambda r: r[-1])
            assert [float(v) for r in portable for v in r] == pytest.approx([float(v) for r in native for v in r])
    finally:
        stats.engine.close()


def aggregates_of_node(metric, stats, node):
    aggs = metric.aggregates(stats, node)
    return aggs(None) if callable(aggs) else aggs
