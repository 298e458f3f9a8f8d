"""Sums of counts on PostgreSQL (:meth:`sqlanon.dialect.postgres.PostgresDialect.count_sum`): a
``SUM`` of a BIGINT is a NUMERIC there (slow), of an INTEGER a BIGINT, so the statements that
group a set's rows into classes sum ``CAST(cnt AS INT)``, but only when the source's row count,
which bounds every count, is known and below 2^31: at 2^31 rows and more (or before the base scan
has counted them) the sum stays over the BIGINT, and a cast can never overflow. DuckDB and Spark
sum the BIGINT whatever the rows. What a cast statement answers is checked against DuckDB's in
``test_golden_sql.py`` (``node_batch``, ``node_batch_branches``) and on a server in
``tests/engines/test_postgres.py``."""

from __future__ import annotations

import os

import paths
import pytest

from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.metrics import METRICS
from sqlanon.privacy import KAnonymity, Requirement
from sqlanon.stats import Statistics, batch

AGE = [["25", "[20, 40[", "*"], ["32", "[20, 40[", "*"], ["47", "[40, 60[", "*"]]
ZIP = [["13053", "130**", "*"], ["13068", "130**", "*"], ["14850", "148**", "*"]]
NODES = [(0, 0), (1, 1), (1, 2), (2, 1)]
CAST_SUM = 'SUM(CAST("cnt" AS INT))'
PLAIN_SUM = 'SUM("cnt")'


@pytest.fixture
def stats(monkeypatch):
    monkeypatch.chdir(paths.GOLDEN)
    engine = connect(threads=1)
    metric = METRICS["lm"]()
    s = Statistics(engine, Source.open(os.path.join("fixtures", "people.csv")), ["age", "zip"],
                   [Hierarchy("age", [list(r) for r in AGE]), Hierarchy("zip", [list(r) for r in ZIP])], needs=metric.needs)
    s.prepare()
    yield s
    engine.close()


def statements(view) -> list[str]:
    """The class-grouping statements of ``view``: a node query, the joined batch, the branches."""
    req = Requirement([KAnonymity(2)])
    metric = METRICS["lm"]()
    texts = [view.dialect.render(view.node_query((1, 1), req.predicate(), [], view.base))]
    texts.append(view.dialect.render(batch.batch_query(view, NODES, req.predicate(), metric)))
    return texts


def branch_statement(view, monkeypatch) -> str:
    from sqlanon.dialect.postgres import PostgresDialect

    monkeypatch.setattr(PostgresDialect, "branch_rows", 0)
    req = Requirement([KAnonymity(2)])
    try:
        assert batch.branches(view, [(list(range(len(NODES))), NODES, view.base, None)])
        return view.dialect.render(batch.batch_query(view, NODES, req.predicate(), METRICS["lm"]()))
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("rows, cast", [(1, True), (2**31 - 1, True), (2**31, False), (2**40, False), (0, False)])
def test_postgres_sums_counts_as_integers_below_2_31_rows(stats, monkeypatch, rows, cast):
    """At 2^31 - 1 rows every count fits an INTEGER: the class sums cast it; at 2^31 (the
    boundary) and above, or with the rows not counted (0), no statement casts a count."""
    stats.rows = rows
    pg = stats.for_dialect("postgres")
    texts = [*statements(pg), branch_statement(pg, monkeypatch)]
    for text in texts:
        assert (CAST_SUM in text) == cast, text
        assert ("AS INT)" in text) == cast, text  # no other count is narrowed
        if not cast:
            assert PLAIN_SUM in text


@pytest.mark.parametrize("dialect", ["duckdb", "spark"])
def test_other_dialects_sum_the_bigint(stats, dialect):
    """DuckDB and Spark sum BIGINT counts into a BIGINT or wider already: never a cast."""
    view = stats.for_dialect(dialect)
    for text in statements(view):
        text = text.replace("`", '"')  # Spark quotes so
        assert CAST_SUM not in text and "AS INT)" not in text and PLAIN_SUM in text
