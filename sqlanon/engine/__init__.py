"""Engines execute SQL they are handed; they never build it (see ``sqlanon.stats``).

``ENGINES`` maps a name to the class, so adding an engine is adding a file and a line.
"""

from sqlanon.engine.base import Engine
from sqlanon.engine.duckdb import DuckDBEngine
from sqlanon.engine.postgres import PostgresEngine
from sqlanon.engine.urls import is_postgres_url
from sqlanon.errors import ConfigError

ENGINES: dict[str, type[Engine] | str] = {"duckdb": DuckDBEngine, "postgres": PostgresEngine, "spark": "sqlanon.engine.spark:SparkEngine"}


def connect(name: str | None = None, **kwargs) -> Engine:
    """An engine by name; without a name, by its ``database``: a ``postgresql://`` URL is
    PostgreSQL, anything else (a ``.duckdb`` path or ``:memory:``) DuckDB."""
    if name is None:
        name = "postgres" if is_postgres_url(kwargs.get("database")) else "duckdb"

    try:
        cls = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}") from None
    if isinstance(cls, str):  # imported on first use (pyspark is optional)
        import importlib

        module, _, attr = cls.partition(":")
        cls = getattr(importlib.import_module(module), attr)
    return cls(**kwargs)


__all__ = ["Engine", "DuckDBEngine", "PostgresEngine", "ENGINES", "connect", "is_postgres_url"]
