"""PostgreSQL: 1-based literal arrays ``(ARRAY[..])[code + 1]`` (faster than CASE there,
``bench/postgres_engine.py``, docs/measurements.md), ``hashtextextended`` row hashes, client-side
file writes."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.dialect.base import Dialect
from sqlanon.expr.atoms import literal


class PostgresDialect(Dialect):
    name = "postgres"
    array_base = 1

    hash_signed = True
    #: one branch per node over a set of 20,000 rows or more (the joined shape's nested loop
    #: picks every QI's code by a ``CASE`` on the node per joined row, which PostgreSQL
    #: evaluates row by row; what it saves: docs/measurements.md, "All in SQL on PostgreSQL")
    branch_rows = 20_000

    def approx_distinct(self, expression: exp.Expr) -> exp.Expr:
        """PostgreSQL has no approximate distinct count built in: the exact one."""
        return exp.Count(this=exp.Distinct(expressions=[expression]))

    def hash_of(self, expressions: Sequence[exp.Expr]) -> exp.Expr:
        """``hashtextextended(ROW(a, b, ..)::TEXT, 0)`` (a signed BIGINT)."""
        row_text = exp.cast(exp.Anonymous(this="ROW", expressions=list(expressions)), "TEXT")
        return exp.Anonymous(this="hashtextextended", expressions=[row_text, literal(0)])
