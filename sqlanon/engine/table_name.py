"""Table names given by users (``--table``, ``--output-table``, ``--in-place``), parsed once into
sqlglot table expressions and looked up in the catalog by their parts.

A name is never one quoted string: ``s1.patients`` is table ``patients`` of schema ``s1`` (not a
table called ``"s1.patients"`` in the default schema), and ``PATIENTS`` is the table the database
knows as ``patients`` when the database folds or ignores case (DuckDB: case-insensitive;
PostgreSQL: unquoted names fold to lower case). What cannot be parsed as a (dotted) name, such
as ``we"ird``, is one identifier exactly as written.

>>> TableName.parse("s1.patients").expression().sql()
'"s1"."patients"'
>>> TableName.parse('"a.b"').expression().sql()
'"a.b"'
>>> TableName.parse('s.We"ird')
TableName(name='We"ird', schema='s', catalog=None, kind=None)
>>> str(TableName.parse("analytics.Patients", dialect="postgres"))
'analytics.patients'
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError

from sqlanon.dialect.base import Dialect
from sqlanon.errors import ConfigError

BASE_TABLE = "BASE TABLE"
VIEW = "VIEW"


@dataclass(frozen=True)
class TableName:
    """``catalog.schema.name``; ``schema``/``catalog`` are ``None`` when not given."""

    name: str
    schema: str | None = None
    catalog: str | None = None
    kind: str | None = None  # BASE TABLE / VIEW / LOCAL TEMPORARY once looked up in the catalog

    @classmethod
    def parse(cls, text: str, dialect: str | Dialect = "duckdb") -> TableName:
        dialect = str(dialect)  # a sqlanon.dialect object or its name
        text = str(text).strip()
        if not text:
            raise ConfigError("empty table name")
        try:
            table = exp.to_table(text, dialect=dialect)
        except SqlglotError:
            table = None
        if isinstance(table, exp.Table) and not table.args.get("alias") and _malformed(table):
            raise ConfigError(f"bad table name {text!r}: write TABLE, SCHEMA.TABLE or CATALOG.SCHEMA.TABLE (quote a part that holds a dot)")
        if not isinstance(table, exp.Table) or table.args.get("alias") or not all(isinstance(p, exp.Identifier) for p in table.parts):
            # not SQL (e.g. s.We"ird): SCHEMA.NAME split at the first dot, else one name as written
            if "." in text and not text.startswith('"'):
                schema, _, name = text.partition(".")
                if schema and name:
                    return cls(name=name, schema=schema)
            return cls(name=text)

        def part(key: str) -> str | None:
            ident = table.args.get(key)
            if ident is None:
                return None
            # PostgreSQL folds unquoted names to lower case; DuckDB keeps the case it is given
            return ident.name.lower() if dialect == "postgres" and not ident.quoted else ident.name

        this = part("this")
        assert this is not None  # a parsed table always names itself
        return cls(name=this, schema=part("db"), catalog=part("catalog"))

    def expression(self, alias: str | None = None) -> exp.Table:
        """Every part quoted, so no name can inject SQL."""
        quoted = lambda v: exp.to_identifier(v, quoted=True) if v is not None else None  # noqa: E731
        table = exp.Table(this=quoted(self.name), db=quoted(self.schema), catalog=quoted(self.catalog))
        if alias:
            aliased = exp.alias_(table, alias, table=True, quoted=True)
            assert isinstance(aliased, exp.Table)  # a table alias is set on the table itself
            return aliased
        return table

    def sibling(self, name: str) -> TableName:
        """Another table in the same schema (the in-place rewrite's new table)."""
        return TableName(name=name, schema=self.schema, catalog=self.catalog)

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.schema, self.name) if p is not None)


def _catalog_rows(engine, name: TableName) -> list[tuple]:
    """``(catalog, schema, name, type, is_default)`` rows of ``information_schema.tables`` whose
    parts match ``name`` ignoring case (the caller decides how strictly)."""
    t = exp.to_table("information_schema.tables")
    lower = lambda e: exp.Lower(this=e)  # noqa: E731
    conds = [exp.EQ(this=lower(exp.column("table_name")), expression=lower(exp.Literal.string(name.name)))]
    if name.schema is not None:
        conds.append(exp.EQ(this=lower(exp.column("table_schema")), expression=lower(exp.Literal.string(name.schema))))
    if name.catalog is not None:
        conds.append(exp.EQ(this=lower(exp.column("table_catalog")), expression=lower(exp.Literal.string(name.catalog))))
    default = exp.and_(
        exp.EQ(this=exp.column("table_schema"), expression=exp.Anonymous(this="current_schema")),
        exp.EQ(this=exp.column("table_catalog"), expression=exp.Anonymous(this="current_database")),
    )
    q = exp.select("table_catalog", "table_schema", "table_name", "table_type", exp.Case().when(default, exp.true()).else_(exp.false())).from_(t).where(exp.and_(*conds))
    return [tuple(r) for r in engine.fetch_all(q)]


def lookup(engine, name: TableName) -> TableName | None:
    """The table as the catalog spells it (with its schema, catalog and kind), or ``None``.

    Exact spelling wins; otherwise a case-insensitive match when it is the only one. A name
    without a schema is looked up in the current schema of the current database (and, on DuckDB,
    among temporary tables)."""
    row = _chosen(engine, name)
    if row is None:
        return None
    catalog, schema, table, kind, _ = row
    return TableName(name=table, schema=schema if name.schema is not None or name.catalog is not None else None, catalog=catalog if name.catalog is not None else None, kind=kind)


def _chosen(engine, name: TableName) -> tuple | None:
    """The catalog row :func:`lookup` resolves ``name`` to (exact spelling first)."""
    rows = _catalog_rows(engine, name)
    if name.schema is None:
        rows = [r for r in rows if r[4] or r[3] == "LOCAL TEMPORARY"]

    def spelled(r) -> bool:
        return r[2] == name.name and (name.schema is None or r[1] == name.schema) and (name.catalog is None or r[0] == name.catalog)

    exact = [r for r in rows if spelled(r)]
    chosen = exact if exact else rows
    if len(chosen) != 1:
        if len(chosen) > 1:
            spellings = ", ".join(sorted(f"{r[1]}.{r[2]}" for r in chosen))
            raise ConfigError(f"table name {str(name)!r} is ambiguous: {spellings}; quote it exactly")
        return None
    return tuple(chosen[0])


def same_table(engine, a: TableName, b: TableName) -> bool:
    """Whether two names resolve to one table of the catalog (schema and catalog defaults and
    the engine's case rules applied by :func:`lookup`'s resolution)."""
    ra, rb = _chosen(engine, a), _chosen(engine, b)
    return ra is not None and rb is not None and ra[:3] == rb[:3]


def schema_exists(engine, name: TableName) -> bool:
    if name.schema is None:
        return True
    t = exp.to_table("information_schema.schemata")
    lower = lambda e: exp.Lower(this=e)  # noqa: E731
    conds = [exp.EQ(this=lower(exp.column("schema_name")), expression=lower(exp.Literal.string(name.schema)))]
    if name.catalog is not None:
        conds.append(exp.EQ(this=lower(exp.column("catalog_name")), expression=lower(exp.Literal.string(name.catalog))))
    return bool(engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(t).where(exp.and_(*conds))))


def _malformed(table: exp.Table) -> bool:
    """``t..x`` (an empty part) or ``a.b.c.d`` (more parts than catalog.schema.table)."""
    parts = [table.args.get(k) for k in ("this", "db", "catalog")]
    return len(table.parts) > 3 or any(p is not None and not (isinstance(p, exp.Identifier) and p.name) for p in parts)
