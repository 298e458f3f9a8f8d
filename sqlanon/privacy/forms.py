"""The SQL atoms privacy models build their per-class aggregates from
(:class:`sqlanon.privacy.needs.Aggregate`): over a class's per-value rows (``cnt``, ``tot``,
``q``) and over its histogram (``h0 .. h{m-1}``, ``cnt``).

>>> from sqlanon.dialect import DUCKDB
>>> DUCKDB.render(share())
'CAST("cnt" AS DOUBLE) / CAST("tot" AS DOUBLE)'
>>> DUCKDB.render(sum_all([h(0), h(1)]))
'CAST("h0" AS DOUBLE) + CAST("h1" AS DOUBLE)'
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.expr.atoms import as_double, col, lit


def share() -> exp.Expr:
    """Per-value rows: the value's share of its class, ``cnt / tot``."""
    return exp.Div(this=as_double(col("cnt")), expression=as_double(col("tot")))


def gain() -> exp.Expr:
    """Per-value rows: ``(p - q) / q``, the relative gain of the value in its class over the table."""
    return exp.Div(this=exp.Paren(this=exp.Sub(this=share(), expression=col("q"))), expression=col("q"))


def h(j: int) -> exp.Expr:
    """A histogram: the class's rows with the j-th sensitive value, as a double."""
    return as_double(col(f"h{j}"))


def h_share(j: int) -> exp.Expr:
    """A histogram: the j-th value's share of the class."""
    return exp.Div(this=h(j), expression=as_double(col("cnt")))


def sum_all(terms: Sequence[exp.Expr]) -> exp.Expr:
    """``t0 + t1 + ...`` (0.0 for none)."""
    if not terms:
        return lit(0.0)
    out = terms[0]
    for t in terms[1:]:
        out = exp.Add(this=out, expression=t)
    return out
