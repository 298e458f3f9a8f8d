"""Engines execute SQL they are handed; they never build it (see ``sqlanon.stats``).

``ENGINES`` maps a name to the class's ``module:attribute``, so adding an engine is adding a file
and a line. A class is imported on first use, so naming or checking an engine (a policy's
``engine`` key, ``--help``) loads neither an engine's client nor pyarrow.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from sqlanon.engine.urls import is_postgres_url
from sqlanon.errors import ConfigError

if TYPE_CHECKING:
    from sqlanon.engine.base import Engine
    from sqlanon.engine.duckdb import DuckDBEngine
    from sqlanon.engine.postgres import PostgresEngine

ENGINES: dict[str, str] = {"duckdb": "sqlanon.engine.duckdb:DuckDBEngine", "postgres": "sqlanon.engine.postgres:PostgresEngine",
                           "spark": "sqlanon.engine.spark:SparkEngine"}
#: the package's names that are imported on first use (``from sqlanon.engine import DuckDBEngine``)
_LAZY = {"Engine": "sqlanon.engine.base:Engine", "DuckDBEngine": ENGINES["duckdb"], "PostgresEngine": ENGINES["postgres"]}


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def engine_class(name: str) -> type[Engine]:
    """The engine class of ``name`` (a key of :data:`ENGINES`), imported now."""
    try:
        target = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}") from None
    cls: type[Engine] = _load(target)
    return cls


def connect(name: str | None = None, **kwargs) -> Engine:
    """An engine by name; without a name, by its ``database``: a ``postgresql://`` URL is
    PostgreSQL, anything else (a ``.duckdb`` path or ``:memory:``) DuckDB."""
    if name is None:
        name = "postgres" if is_postgres_url(kwargs.get("database")) else "duckdb"
    return engine_class(name)(**kwargs)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = _load(_LAZY[name])
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Engine", "DuckDBEngine", "PostgresEngine", "ENGINES", "connect", "engine_class", "is_postgres_url"]
