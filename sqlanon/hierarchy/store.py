"""Store a hierarchy as a mapping table in a database (``sqlanon hierarchy import``)."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.engine import connect
from sqlanon.errors import ConfigError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.source import table_ref


def store_hierarchy(database: str, hierarchy: Hierarchy, name: str | None = None, overwrite: bool = False) -> str:
    name = name or f"sqlanon_hierarchy_{hierarchy.attribute}"
    engine = connect(database=database)
    try:
        with engine.transaction():
            exists = engine.scalar(
                exp.select(exp.Count(this=exp.Star()))
                .from_(table_ref("tables", "information_schema"))
                .where(exp.EQ(this=exp.column("table_name"), expression=exp.Literal.string(name)))
            )
            if exists and not overwrite:
                raise ConfigError(f"table {name!r} already exists in {database} (use --overwrite)")
            if exists:
                engine.execute(engine.dialect.drop_table(table_ref(name)))
            tmp = engine.temp_name("hier")
            engine.register_arrow(tmp, hierarchy.mapping_table())
            engine.execute(engine.dialect.create_table(table_ref(name), exp.select("*").from_(table_ref(tmp))))
        return name
    finally:
        engine.close()
