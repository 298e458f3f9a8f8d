"""Store a hierarchy as a mapping table in a database (``sqlanon hierarchy import``)."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.engine import connect
from sqlanon.errors import ConfigError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.expr.atoms import table_ref
from sqlanon.engine.table_name import TableName, lookup, schema_exists


def store_hierarchy(database: str, hierarchy: Hierarchy, name: str | None = None, overwrite: bool = False) -> str:
    """Store ``hierarchy`` as table ``name`` (parsed: ``schema.table`` is a table in that schema,
    as ``--qi COLUMN=table:schema.table`` reads it), in one transaction."""
    text = name or f"sqlanon_hierarchy_{hierarchy.attribute}"
    engine = connect(database=database)
    try:
        parsed = TableName.parse(text, engine.dialect)
        if not schema_exists(engine, parsed):
            raise ConfigError(f"schema {parsed.schema!r} of table {text!r} not found in {database} (create it first)")
        with engine.transaction():
            existing = lookup(engine, parsed)
            if existing is not None and existing.kind is not None and existing.kind != "BASE TABLE":
                raise ConfigError(f"{text!r} in {database} is a {existing.kind.lower()}, not a table; name another")
            if existing is not None and not overwrite:
                raise ConfigError(f"table {text!r} already exists in {database} (use --overwrite)")
            if existing is not None:
                engine.execute(engine.dialect.drop_table(existing.expression()))
            tmp = engine.temp_name("hier")
            engine.register_arrow(tmp, hierarchy.mapping_table())
            engine.execute(engine.dialect.create_table(parsed.expression(), exp.select("*").from_(table_ref(tmp))))
        return text
    finally:
        engine.close()
