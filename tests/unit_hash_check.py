"""The sampling uniform of every dialect (:meth:`sqlanon.dialect.Dialect.unit_hash`), measured in
its own database: over ``n`` integers it must lie in [0, 1), have mean about 1/2, and fall below
``b`` for about ``b * n`` of them at several ``b``. (Spark's and PostgreSQL's hashes are signed
and shifted by 2^63 first: on Spark that sum once lacked its parentheses, and the sample kept about
half the rows whatever ``b`` was.)"""

from __future__ import annotations

import math

import sqlglot
from sqlglot import exp

from sqlanon.dialect import get_dialect

RATES = (0.1, 0.5934303402594009, 0.9)


def rates_query(dialect: str, numbers_sql: str, seed: int = 5) -> str:
    """``numbers_sql``: a query of the dialect returning one integer column ``id``."""
    d = get_dialect(dialect)
    u = d.unit_hash([exp.column("id"), exp.Literal.number(1), exp.Literal.number(seed)])
    numbers = exp.alias_(exp.Subquery(this=sqlglot.parse_one(numbers_sql, read=dialect)), "g", table=True)
    inner = exp.select(exp.alias_(u, "u")).from_(numbers)
    picks = [exp.Sum(this=exp.If(this=exp.LT(this=exp.column("u"), expression=exp.Literal.number(b)), true=exp.Literal.number(1), false=exp.Literal.number(0))) for b in RATES]
    outer = exp.select(exp.Count(this=exp.Star()), exp.Min(this=exp.column("u")), exp.Max(this=exp.column("u")), exp.Avg(this=exp.column("u")), *picks).from_(exp.alias_(exp.Subquery(this=inner), "h", table=True))
    return d.render(outer)


def assert_uniform(row) -> None:
    n, lo, hi, mean, *kept = row
    n = int(n)
    assert 0.0 <= float(lo) and float(hi) < 1.0, (lo, hi)
    assert abs(float(mean) - 0.5) <= 4 * math.sqrt(1 / 12 / n), mean
    for b, k in zip(RATES, kept):
        assert abs(int(k) - b * n) <= 4 * math.sqrt(n * b * (1 - b)), (b, k, n)
