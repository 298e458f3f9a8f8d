"""Engines execute SQL they are handed; they never build it (see ``sqlanon.stats``).

``ENGINES`` maps a name to the class, so adding an engine is adding a file and a line.
"""

from sqlanon.engine.base import Engine
from sqlanon.engine.duckdb import DuckDBEngine

ENGINES = {"duckdb": DuckDBEngine}


def connect(name: str = "duckdb", **kwargs) -> Engine:
    from sqlanon.errors import ConfigError

    try:
        cls = ENGINES[name]
    except KeyError:
        raise ConfigError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}") from None
    return cls(**kwargs)


__all__ = ["Engine", "DuckDBEngine", "ENGINES", "connect"]
