"""PostgreSQL: 1-based literal arrays ``(ARRAY[..])[code + 1]`` (4x faster than CASE there,
``bench/postgres_engine.py``), ``hashtextextended`` row hashes, client-side file writes."""

from __future__ import annotations

from typing import Sequence

from sqlglot import exp

from sqlanon.dialect.base import Dialect, literal


class PostgresDialect(Dialect):
    name = "postgres"
    array_base = 1

    def row_hash(self, columns: Sequence[str], table: str | None = None) -> exp.Expression:
        """``hashtextextended(ROW(c1, c2, ..)::TEXT, 0)``."""
        from sqlanon.source import col

        row_text = exp.cast(exp.Anonymous(this="ROW", expressions=[col(c, table) for c in columns]), "TEXT")
        return exp.Anonymous(this="hashtextextended", expressions=[row_text, literal(0)])
