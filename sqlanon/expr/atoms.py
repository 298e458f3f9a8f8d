"""The floor of the SQL builders: identifiers, column and table references, literals, names, and
the small expression builders every statistic shares (``sum_``, ``if_``, casts, ``and_all``, ...).

Everything here renders the same in every dialect and imports nothing of sqlanon, so
:mod:`sqlanon.dialect`, :mod:`sqlanon.privacy`, :mod:`sqlanon.metrics` and the statistics can all
build on it. Identifiers are always quoted: ``zip code`` or ``we"ird`` can never inject SQL.

>>> from sqlglot import exp
>>> col("zip code", "t").sql("duckdb")
'"t"."zip code"'
>>> literal(None).sql(), literal(2.5).sql(), literal("o'k").sql("duckdb")
('NULL', '2.5', "'o''k'")
>>> add_all([col("a"), col("b"), lit(1)]).sql("duckdb")
'"a" + "b" + 1'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TypeVar

from sqlglot import exp

#: a query type kept by :func:`cte_select` (a SELECT stays a SELECT, a UNION a UNION)
Q = TypeVar("Q", bound=exp.Query)

#: the column naming a lattice node in a batch statement (one row per node and class)
NODE_ID = "nid"


def ident(name: str) -> exp.Identifier:
    """Always-quoted identifier: ``zip code`` or ``we"ird`` can never inject SQL."""
    return exp.to_identifier(name, quoted=True)


def col(name: str, table: str | None = None) -> exp.Column:
    return exp.Column(this=ident(name), table=ident(table) if table else None)


def table_ref(name: str, schema: str | None = None, alias: str | None = None) -> exp.Table:
    t = exp.Table(this=ident(name), db=ident(schema) if schema else None)
    if alias:
        aliased = exp.alias_(t, alias, table=True, quoted=True)
        assert isinstance(aliased, exp.Table)  # a table alias is set on the table itself
        return aliased
    return t


def drop_table(table: exp.Table, if_exists: bool = False) -> exp.Drop:
    """``DROP TABLE [IF EXISTS] t`` (sqlglot 30 wants ``tables=[...]``; ``this=`` renders no name)."""
    return exp.Drop(tables=[table], kind="TABLE", exists=if_exists)


def literal(value) -> exp.Expr:
    """A Python scalar as a SQL literal (``None`` -> NULL; non-finite floats refused)."""
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("non-finite literal")
        return exp.Literal.number(repr(value) if isinstance(value, float) else value)
    return exp.Literal.string(str(value))


lit = literal


class Params(list):
    """Bound parameters collected while building a statement (DuckDB's ``$n``)."""


def sum_(e: exp.Expr) -> exp.Expr:
    return exp.Sum(this=e)


def if_(cond: exp.Expr, then: exp.Expr, other: exp.Expr) -> exp.Expr:
    return exp.Case().when(cond, then).else_(other)


def cast(e: exp.Expr, to: str) -> exp.Expr:
    return exp.Cast(this=e, to=exp.DataType.build(to))


def as_double(e: exp.Expr) -> exp.Expr:
    return cast(e, "DOUBLE")


def as_varchar(e: exp.Expr) -> exp.Expr:
    return cast(e, "VARCHAR")


def as_bigint(e: exp.Expr) -> exp.Expr:
    return cast(e, "BIGINT")


def add_all(terms: Sequence[exp.Expr], empty: exp.Expr | None = None) -> exp.Expr:
    """``t0 + t1 + ..`` (``empty``, default 0, for no terms)."""
    if not terms:
        return empty if empty is not None else lit(0)
    total = terms[0]
    for t in terms[1:]:
        total = exp.Add(this=total, expression=t)
    return total


def and_all(parts: Sequence[exp.Expr]) -> exp.Expr:
    if not parts:
        return exp.Boolean(this=True)
    return exp.and_(*parts) if len(parts) > 1 else parts[0]


def eq_all(left: str, right: str, names: list[str]) -> exp.Expr:
    return and_all([exp.EQ(this=col(n, left), expression=col(n, right)) for n in names])


def class_summary(aggregates: Iterable[tuple[str, exp.Expr]] = ()) -> list[exp.Expr]:
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


def union_all(selects: Sequence[exp.Query]) -> exp.Query:
    """``s1 UNION ALL s2 UNION ALL ..`` (left-deep)."""
    out: exp.Query = selects[0]
    for s in selects[1:]:
        out = exp.Union(this=out, expression=s, distinct=False)
    return out


def cte_select(ctes: Sequence[tuple[str, exp.Expr]], final: Q) -> Q:
    """``WITH name AS (body), .. final``: ``final`` with ``ctes`` attached in order."""
    for name, body in ctes:
        final = final.with_(ident(name), as_=body, copy=False)
    return final
