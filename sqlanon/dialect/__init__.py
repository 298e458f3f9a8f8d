"""Dialects: one object per SQL dialect owns the shapes that differ between engines.

``DIALECTS`` maps a name to the object; any other sqlglot dialect gets the portable
:class:`~sqlanon.dialect.base.Dialect` (``CASE`` lookups, ``CREATE TEMPORARY TABLE``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from sqlanon.dialect.base import Dialect
from sqlanon.dialect.duckdb import DuckDBDialect
from sqlanon.dialect.postgres import PostgresDialect
from sqlanon.dialect.spark import SparkDialect
from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import Params

DUCKDB = DuckDBDialect()
POSTGRES = PostgresDialect()
SPARK = SparkDialect()

DIALECTS: dict[str, Dialect] = {"duckdb": DUCKDB, "postgres": POSTGRES, "spark": SPARK}


def get_dialect(dialect: Dialect | str) -> Dialect:
    """The dialect object for a name (or the object itself). Unknown sqlglot names get the
    portable dialect; names sqlglot does not know raise ``ConfigError``."""
    if isinstance(dialect, Dialect):
        return dialect
    name = str(dialect).lower()
    if name in DIALECTS:
        return DIALECTS[name]
    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        raise ConfigError(f"unknown --dialect {dialect!r}") from None
    return Dialect(name)


def lookup(values: Sequence, code: exp.Expr, dialect: Dialect | str, params: Params | None = None) -> exp.Expr:
    """``values[code]`` (0-based) in ``dialect`` (see :meth:`sqlanon.dialect.Dialect.lookup`);
    ``params`` binds the list where the dialect can (DuckDB's hot path)."""
    d = get_dialect(dialect)
    return d.lookup(values, code, params if d.binds_lists else None)


def create_temp(name: str, query: exp.Expr, dialect: Dialect | str | None = None) -> exp.Expr:
    """A temporary table holding ``query``'s rows, in ``dialect``'s shape (Spark: ``CACHE TABLE``).

    ``dialect`` is required; it is a keyword with no usable default so a forgotten one fails
    loudly instead of giving Spark a lazy view."""
    if dialect is None:
        raise TypeError("create_temp needs the dialect (Spark caches, others CREATE TEMPORARY TABLE)")
    return get_dialect(dialect).create_temp(name, query)


def drop_temp(name: str, dialect: Dialect | str | None = None) -> exp.Expr:
    if dialect is None:
        raise TypeError("drop_temp needs the dialect")
    return get_dialect(dialect).drop_temp(name)


__all__ = ["Dialect", "DuckDBDialect", "PostgresDialect", "SparkDialect", "DUCKDB", "POSTGRES", "SPARK", "DIALECTS", "get_dialect", "lookup", "create_temp", "drop_temp"]
