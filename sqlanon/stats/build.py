"""Small sqlglot builders shared by every statistics module (one definition each).

Dialect-dependent shapes (temporary tables, lookups) go through the dialect object
(:mod:`sqlanon.dialect`); everything here renders the same in every dialect.

>>> from sqlanon.dialect import SPARK, DUCKDB
>>> SPARK.render(create_temp("t", exp.select("1"), SPARK))
'CACHE TABLE `t` AS SELECT 1'
>>> DUCKDB.render(add_all([col("a"), col("b"), lit(1)]))
'"a" + "b" + 1'
"""

from __future__ import annotations

from typing import Sequence

from sqlglot import exp

from sqlanon.dialect import Dialect, get_dialect
from sqlanon.expr.atoms import literal
from sqlanon.expr.atoms import col

lit = literal


class Params(list):
    """Bound parameters collected while building a statement (DuckDB's ``$n``)."""


def sum_(e: exp.Expression) -> exp.Expression:
    return exp.Sum(this=e)


def if_(cond: exp.Expression, then: exp.Expression, other: exp.Expression) -> exp.Expression:
    return exp.Case().when(cond, then).else_(other)


def cast(e: exp.Expression, to: str) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build(to))


def as_double(e: exp.Expression) -> exp.Expression:
    return cast(e, "DOUBLE")


def as_varchar(e: exp.Expression) -> exp.Expression:
    return cast(e, "VARCHAR")


def as_bigint(e: exp.Expression) -> exp.Expression:
    return cast(e, "BIGINT")


def add_all(terms: Sequence[exp.Expression], empty: exp.Expression | None = None) -> exp.Expression:
    """``t0 + t1 + ..`` (``empty``, default 0, for no terms)."""
    if not terms:
        return empty if empty is not None else lit(0)
    total = terms[0]
    for t in terms[1:]:
        total = exp.Add(this=total, expression=t)
    return total


def and_all(parts: list[exp.Expression]) -> exp.Expression:
    if not parts:
        return exp.Boolean(this=True)
    return exp.and_(*parts) if len(parts) > 1 else parts[0]


def eq_all(left: str, right: str, names: list[str]) -> exp.Expression:
    return and_all([exp.EQ(this=col(n, left), expression=col(n, right)) for n in names])


def class_summary(aggregates: Sequence[tuple[str, exp.Expression]] = ()) -> list[exp.Expression]:
    """The per-node summary over its flagged classes (columns ``cnt`` and ``ok``): classes, rows,
    smallest and largest class, suppressed rows, failing classes, then ``aggregates`` by name."""
    okc, cnt = col("ok"), col("cnt")
    return [
        exp.alias_(exp.Count(this=exp.Star()), "classes", quoted=True),
        exp.alias_(sum_(cnt), "rows", quoted=True),
        exp.alias_(exp.Min(this=cnt), "min_class", quoted=True),
        exp.alias_(exp.Max(this=cnt.copy()), "max_class", quoted=True),
        exp.alias_(sum_(if_(okc, literal(0), cnt.copy())), "suppressed", quoted=True),
        exp.alias_(sum_(if_(okc.copy(), literal(0), literal(1))), "bad_classes", quoted=True),
        *[exp.alias_(e, name, quoted=True) for name, e in aggregates],
    ]


def union_all(selects: Sequence[exp.Expression]) -> exp.Expression:
    """``s1 UNION ALL s2 UNION ALL ..`` (left-deep)."""
    out = selects[0]
    for s in selects[1:]:
        out = exp.Union(this=out, expression=s, distinct=False)
    return out


def cte_select(ctes: list[tuple[str, exp.Expression]], final: exp.Select) -> exp.Select:
    from sqlanon.expr.atoms import ident

    for name, body in ctes:
        final = final.with_(ident(name), as_=body, copy=False)
    return final


def lookup(values: Sequence, code: exp.Expression, dialect: Dialect | str, params: Params | None = None) -> exp.Expression:
    """``values[code]`` (0-based) in ``dialect`` (see :meth:`sqlanon.dialect.Dialect.lookup`);
    ``params`` binds the list where the dialect can (DuckDB's hot path)."""
    d = get_dialect(dialect)
    return d.lookup(values, code, params if d.binds_lists else None)


def create_temp(name: str, query: exp.Expression, dialect: Dialect | str = None) -> exp.Expression:
    """A temporary table holding ``query``'s rows, in ``dialect``'s shape (Spark: ``CACHE TABLE``).

    ``dialect`` is required; it is a keyword with no usable default so a forgotten one fails
    loudly instead of giving Spark a lazy view."""
    if dialect is None:
        raise TypeError("create_temp needs the dialect (Spark caches, others CREATE TEMPORARY TABLE)")
    return get_dialect(dialect).create_temp(name, query)


def drop_temp(name: str, dialect: Dialect | str = None) -> exp.Expression:
    if dialect is None:
        raise TypeError("drop_temp needs the dialect")
    return get_dialect(dialect).drop_temp(name)


__all__ = ["Params", "lit", "sum_", "if_", "cast", "as_double", "as_varchar", "as_bigint", "add_all", "and_all", "eq_all", "cte_select", "lookup", "create_temp", "drop_temp"]
