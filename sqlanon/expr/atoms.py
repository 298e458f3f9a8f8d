"""The floor of the SQL builders: identifiers, column and table references, literals, names.

Everything here renders the same in every dialect and imports nothing of sqlanon, so
:mod:`sqlanon.dialect`, :mod:`sqlanon.privacy`, :mod:`sqlanon.metrics` and the statistics can all
build on it. Identifiers are always quoted: ``zip code`` or ``we"ird`` can never inject SQL.

>>> from sqlglot import exp
>>> col("zip code", "t").sql("duckdb")
'"t"."zip code"'
>>> literal(None).sql(), literal(2.5).sql(), literal("o'k").sql("duckdb")
('NULL', '2.5', "'o''k'")
"""

from __future__ import annotations

import math

from sqlglot import exp

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
        t = exp.alias_(t, alias, table=True, quoted=True)
    return t


def drop_table(table: exp.Table, if_exists: bool = False) -> exp.Drop:
    """``DROP TABLE [IF EXISTS] t`` (sqlglot 30 wants ``tables=[...]``; ``this=`` renders no name)."""
    return exp.Drop(tables=[table], kind="TABLE", exists=if_exists)


def literal(value) -> exp.Expression:
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
