"""PostgreSQL: 1-based literal arrays ``(ARRAY[..])[code + 1]`` (faster than CASE there,
``bench/postgres_engine.py``, docs/measurements.md), ``hashtextextended`` row hashes, client-side
file writes."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.dialect.base import Dialect
from sqlanon.expr.atoms import cast, literal

#: the largest PostgreSQL ``INTEGER``
INT4_MAX = 2**31 - 1


class PostgresDialect(Dialect):
    name = "postgres"
    array_base = 1

    hash_signed = True
    #: one branch per node over a set of 20,000 rows or more (the joined shape's nested loop
    #: picks every QI's code by a ``CASE`` on the node per joined row, which PostgreSQL
    #: evaluates row by row; what it saves: docs/measurements.md, "All in SQL on PostgreSQL")
    branch_rows = 20_000

    def count_sum(self, count: exp.Expr, rows: int) -> exp.Expr:
        """``SUM(CAST(count AS INTEGER))`` when the source's ``rows`` (known, at most
        :data:`INT4_MAX`) bound every count below 2^31: PostgreSQL types a BIGINT's sum a
        ``NUMERIC`` and an INTEGER's a BIGINT, so the sums (and the sets saved from them) stay
        integers. It is not a speed-up: PostgreSQL 16 sums a BIGINT with a 128-bit state, and the
        server CPU measured the same either way (docs/measurements.md). Otherwise (``rows``
        unknown, 0, or 2^31 and more) the BIGINT's sum: a cast can never overflow.

        >>> from sqlanon.dialect import get_dialect
        >>> pg = get_dialect("postgres")
        >>> pg.render(pg.count_sum(exp.column("cnt"), 1_000_000)), pg.render(pg.count_sum(exp.column("cnt"), 2**31))
        ('SUM(CAST(cnt AS INT))', 'SUM(cnt)')
        """
        if 0 < rows <= INT4_MAX:
            return exp.Sum(this=cast(count, "INT"))
        return super().count_sum(count, rows)

    def approx_distinct(self, expression: exp.Expr) -> exp.Expr:
        """PostgreSQL has no approximate distinct count built in: the exact one."""
        return exp.Count(this=exp.Distinct(expressions=[expression]))

    def hash_of(self, expressions: Sequence[exp.Expr]) -> exp.Expr:
        """``hashtextextended(ROW(a, b, ..)::TEXT, 0)`` (a signed BIGINT)."""
        row_text = exp.cast(exp.Anonymous(this="ROW", expressions=list(expressions)), "TEXT")
        return exp.Anonymous(this="hashtextextended", expressions=[row_text, literal(0)])
