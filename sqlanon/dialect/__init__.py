"""Dialects: one object per SQL dialect owns the shapes that differ between engines.

``DIALECTS`` maps a name to the object; any other sqlglot dialect gets the portable
:class:`~sqlanon.dialect.base.Dialect` (``CASE`` lookups, ``CREATE TEMPORARY TABLE``).
"""

from __future__ import annotations

from sqlanon.dialect.base import Dialect
from sqlanon.expr.atoms import literal
from sqlanon.dialect.duckdb import DuckDBDialect
from sqlanon.dialect.postgres import PostgresDialect
from sqlanon.dialect.spark import SparkDialect

DUCKDB = DuckDBDialect()
POSTGRES = PostgresDialect()
SPARK = SparkDialect()

DIALECTS: dict[str, Dialect] = {"duckdb": DUCKDB, "postgres": POSTGRES, "spark": SPARK}


def get_dialect(dialect: "Dialect | str") -> Dialect:
    """The dialect object for a name (or the object itself). Unknown sqlglot names get the
    portable dialect; names sqlglot does not know raise ``ConfigError``."""
    if isinstance(dialect, Dialect):
        return dialect
    name = str(dialect).lower()
    if name in DIALECTS:
        return DIALECTS[name]
    import sqlglot

    try:
        sqlglot.Dialect.get_or_raise(name)
    except ValueError:
        from sqlanon.errors import ConfigError

        raise ConfigError(f"unknown --dialect {dialect!r}") from None
    return Dialect(name)


__all__ = ["Dialect", "DuckDBDialect", "PostgresDialect", "SparkDialect", "DUCKDB", "POSTGRES", "SPARK", "DIALECTS", "get_dialect", "literal"]
