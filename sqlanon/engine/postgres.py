"""PostgreSQL through psycopg 3: the same statements as DuckDB, rendered by sqlglot for ``postgres``.

What differs from the embedded engine, and where it is handled:

* the source is a table of the database (``--input postgresql://... --table NAME``); files are
  DuckDB's to read (:meth:`PostgresEngine.source_from` refuses them with a clear error);
* small Arrow tables (hierarchy code tables) are loaded into temporary tables with ``COPY``;
* node queries generalize codes by indexing a literal array, ``(ARRAY[...])[code + 1]`` (1-based
  like DuckDB's lists, which are bound as parameters there; :mod:`sqlanon.dialect.postgres`);
* the input hash is ``hashtextextended`` of the row's text form (DuckDB uses ``hash``), so hashes
  are comparable between runs on the same engine only.

Statements run in autocommit mode; :meth:`PostgresEngine.transaction` opens one explicit
transaction (the in-place release). ``psycopg`` is an optional dependency (``pip install
'sqlanon[postgres]'``).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any
from collections.abc import Iterator

import pyarrow as pa
from sqlglot import exp

from sqlanon.dialect import POSTGRES
from sqlanon.engine.base import Engine, bare, engine_error
from sqlanon.errors import ConfigError, EngineError, EngineInputError
from sqlanon.engine.urls import is_postgres_url, redact  # noqa: F401  (re-exported)
from sqlanon.expr.templates import template

PARQUET_BATCH = 50_000
#: PostgreSQL's integer type OIDs (smallint, integer, bigint) and their Arrow types
_PG_INTS = {21: pa.int16(), 23: pa.int32(), 20: pa.int64()}

_ARROW_TO_PG = {
    pa.int8(): "SMALLINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float32(): "REAL",
    pa.float64(): "DOUBLE PRECISION",
    pa.bool_(): "BOOLEAN",
    pa.string(): "TEXT",
    pa.large_string(): "TEXT",
    pa.list_(pa.int64()): "BIGINT[]",
    pa.list_(pa.float64()): "DOUBLE PRECISION[]",
}


class PostgresEngine(Engine):
    """A PostgreSQL database named by a ``postgresql://`` URL."""

    dialect = POSTGRES
    #: the lattice's marginals from the base set's codes fetched as texts (:meth:`fetch_arrow`)
    #: at every size they are read at (pairs: up to 500,000 rows), not by the ``GROUPING SETS``
    #: statement, several times the fetch's cost on the server (docs/measurements.md, "All in
    #: SQL on PostgreSQL")
    marginal_fetch_rows = 2_000_000

    def __init__(self, database: str | None = None, memory_limit: str | None = None, threads: int | None = None, connection=None, **_: Any) -> None:
        super().__init__(memory_limit, threads, connection)
        try:
            import psycopg
        except ImportError:  # pragma: no cover - depends on the installation
            raise ConfigError("a postgresql:// input needs psycopg: pip install 'sqlanon[postgres]'") from None
        self._psycopg = psycopg
        if self.borrowed:
            # the caller's open psycopg connection: never closed; our temp tables are dropped when
            # done; if the caller has a transaction open, our writes join it (a savepoint) and are
            # theirs to commit
            self.con = connection
            self.database = None
            if memory_limit:
                self.set_option("work_mem", _pg_memory(memory_limit))
            return
        if database is None:
            raise ConfigError("a PostgreSQL engine needs a postgresql:// URL or an open connection")
        self.database = database
        try:
            self.con = psycopg.connect(database, autocommit=True)
        except psycopg.Error as err:
            raise connect_error(err, database) from None
        if memory_limit:
            # the closest PostgreSQL knob: memory per sort/hash before spilling to disk
            self.set_option("work_mem", _pg_memory(memory_limit))

    def _statement(self):
        """Where one statement runs. On a borrowed connection outside autocommit, each statement
        gets its own ``transaction()`` block: a savepoint inside the caller's open transaction (a
        failing statement then leaves the caller's transaction usable), else a transaction of its
        own."""
        if self.borrowed and not self.con.autocommit:
            return self.con.transaction()
        return contextlib.nullcontext()

    def _run(self, sql: str, fetch: str, params: list | None = None) -> Any:
        try:
            with self._statement(), self.con.cursor() as cur:
                cur.execute(sql, params) if params else cur.execute(sql)
                if fetch == "none":
                    return None
                rows = cur.fetchall() if cur.description is not None else []
                if fetch == "all":
                    return rows
                names = [d.name for d in cur.description or []]
                return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)}) if names else pa.table({})
        except self._psycopg.Error as err:
            raise _dependents_error(err) or session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None

    def fetch_arrow(self, expression: exp.Expr | str) -> pa.Table:
        """A query whose columns are all integers (a frequency set's codes and counts: the
        in-process path's one fetch) comes back as one row, each column's values one text
        (``string_agg``, a line each, NULL as ``N``) parsed by Arrow's CSV reader, after a
        ``LIMIT 0`` probe of its column types; anything else comes row by row through the driver
        (:meth:`_run`). Row by row, the driver builds a Python object per value (and its COPY a
        read per row), several times the server's own time for a set of hundreds of thousands
        of rows."""
        if not isinstance(expression, exp.Query):
            return super().fetch_arrow(expression)
        inner = exp.alias_(exp.Subquery(this=expression.copy()), "q", table=True, quoted=True)
        columns = self._probe_types(exp.select("*").from_(inner.copy()).limit(0))
        if not columns or any(oid not in _PG_INTS for _, oid in columns):
            return super().fetch_arrow(expression)
        newline = exp.Anonymous(this="CHR", expressions=[exp.Literal.number(10)])
        texts = [exp.alias_(exp.Anonymous(this="STRING_AGG", expressions=[
            exp.Coalesce(this=exp.cast(exp.column(n, "q", quoted=True), "TEXT"), expressions=[exp.Literal.string("N")]), newline.copy()]), f"c{j}", quoted=True)
            for j, (n, _) in enumerate(columns)]
        row = self._go(exp.select(*texts).from_(inner), "all")[0]
        schema = pa.schema([pa.field(n, _PG_INTS[oid]) for n, oid in columns])
        if row[0] is None:
            return schema.empty_table()
        return pa.table([_int_lines(text, field) for text, field in zip(row, schema)], schema=schema)

    def _probe_types(self, probe: exp.Expr) -> list[tuple[str, int]]:
        """``(name, type OID)`` of the columns ``probe`` (a ``LIMIT 0`` query) returns."""
        sql = self.sql_text(probe)
        self.queries += 1
        try:
            with self._statement(), self.con.cursor() as cur:
                cur.execute(sql)
                cur.fetchall()
                return [(d.name, int(d.type_code)) for d in cur.description or []]
        except self._psycopg.Error as err:
            raise _dependents_error(err) or session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None

    def dependents(self, table: exp.Table) -> list[str]:
        """The views and foreign keys of other tables that depend on ``table`` (a DROP would
        fail on them): named before ``--in-place`` searches (``sql/pg_dependents.sql``)."""
        return [r[0] for r in self.fetch_all(template("pg_dependents", tbl=table.sql(dialect="postgres")))]

    def register_arrow(self, name: str, table: pa.Table) -> None:
        columns = []
        for field in table.schema:
            pg_type = _ARROW_TO_PG.get(field.type)
            if pg_type is None:
                raise EngineError(f"cannot load Arrow type {field.type} into PostgreSQL (column {field.name!r})")
            columns.append(exp.ColumnDef(this=exp.to_identifier(field.name, quoted=True), kind=exp.DataType.build(pg_type, dialect="postgres")))
        create = exp.Create(
            this=exp.Schema(this=exp.Table(this=exp.to_identifier(name, quoted=True)), expressions=columns),
            kind="TABLE",
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
        )
        copy_target = exp.Schema(this=exp.Table(this=exp.to_identifier(name, quoted=True)), expressions=[exp.to_identifier(f.name, quoted=True) for f in table.schema])
        copy_sql = exp.Copy(this=copy_target, kind=True, files=[exp.var("STDIN")]).sql(dialect="postgres")
        self.queries += 2
        try:
            with self._statement(), self.con.cursor() as cur:
                cur.execute(self.sql_text(create))
                with cur.copy(copy_sql) as copy:
                    for row in zip(*[table.column(i).to_pylist() for i in range(table.num_columns)]):
                        copy.write_row(row)
        except self._psycopg.Error as err:
            raise session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None

    def describe_columns(self, query: exp.Expr) -> list[tuple[str, str]]:
        """PostgreSQL has no ``DESCRIBE``: run the (``LIMIT 0``) query and read its description."""
        sql = self.sql_text(query)
        self.queries += 1
        try:
            with self._statement(), self.con.cursor() as cur:
                cur.execute(sql)
                cur.fetchall()
                types = self.con.adapters.types
                return [(d.name, getattr(types.get(d.type_code), "name", str(d.type_code)).upper()) for d in cur.description]
        except self._psycopg.Error as err:
            raise session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None

    def write_file(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> None:
        """A client-side file (``COPY ... TO`` would write on the server): CSV streams through
        ``COPY (query) TO STDOUT`` as bytes; Parquet reads a server-side cursor in batches of
        ``PARQUET_BATCH`` rows. Memory stays bounded by one batch either way."""
        sql = self.sql_text(query)
        self.queries += 1
        try:
            if kind == "csv":
                params = [
                    exp.CopyParameter(this=exp.var("FORMAT"), expression=exp.var("CSV")),
                    exp.CopyParameter(this=exp.var("HEADER")),
                    exp.CopyParameter(this=exp.var("DELIMITER"), expression=exp.Literal.string(delimiter)),
                ]
                copy_sql = exp.Copy(this=exp.Subquery(this=query), kind=False, files=[exp.var("STDOUT")], params=params).sql(dialect="postgres")
                with open(path, "wb") as fh, self._statement(), self.con.cursor() as cur, cur.copy(copy_sql) as copy:
                    for block in copy:
                        fh.write(block)
                return
            import pyarrow.parquet as pq

            writer = None
            with self.con.transaction(), self.con.cursor(name=self.temp_name("cursor")) as cur:
                cur.execute(sql)
                names = None
                while True:
                    rows = cur.fetchmany(PARQUET_BATCH)
                    if names is None:
                        names = [d.name for d in cur.description]
                    if not rows and writer is not None:
                        break
                    batch = pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})
                    if writer is None:  # a column with no value in the first batch is text
                        schema = pa.schema([pa.field(f.name, pa.string() if pa.types.is_null(f.type) else f.type) for f in batch.schema])
                        writer = pq.ParquetWriter(path, schema)
                    writer.write_table(batch.cast(writer.schema))
                    if not rows:
                        break
            if writer is not None:
                writer.close()
        except self._psycopg.Error as err:
            raise session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None

    def source_from(self, source) -> exp.Expr:
        if source.kind != "table":
            raise ConfigError(f"the postgres engine reads tables of its database, not {source.kind} files ({source.describe()})")
        return source.table_expression()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with self.con.transaction():
                yield
        except self._psycopg.Error as err:
            raise session_error(err, self.database) or engine_error(err, engine="PostgreSQL") from None


#: SQLSTATEs of a session another one or the server ended: (what happened, what to do)
_SESSION_STATES = {
    "40P01": ("deadlock with another session", "another session writes the same table; run again when it is done"),
    "40001": ("a concurrent write conflicts with this run (serialization failure)", "run again"),
    "57P01": ("the server ended the connection (terminating connection due to administrator command: pg_terminate_backend or a shutdown)", "run again"),
    "57P02": ("the server crashed and ended the connection", "run again once it is back"),
    "57P03": ("the server does not take connections now (starting up or shutting down)", "run again later"),
    "57014": ("a statement was cancelled by the server (statement_timeout or pg_cancel_backend)", "raise statement_timeout or run again"),
}
_RELATION = re.compile(r'relation "((?:[^"]|"")*)"')


def session_error(err, database: str | None) -> EngineError | None:
    """A run cut short by the server or another session (a deadlock, ``pg_terminate_backend``, a
    restart, a lost connection) as one line naming the database and, when the server says, the
    table; its transaction was rolled back by the server. None for any other error.

    >>> class Diag: sqlstate, context = "40P01", 'while updating tuple (0,1) in relation "people"'
    >>> class Err(Exception): diag = Diag()
    >>> str(session_error(Err("deadlock detected"), "postgresql://u:pw@h/db"))
    'PostgreSQL postgresql://u@h/db, table people: deadlock with another session (the server rolled back the open transaction); another session writes the same table; run again when it is done'
    """
    diag = getattr(err, "diag", None)
    state = getattr(diag, "sqlstate", None)
    where = f"PostgreSQL {redact(database)}" if database else "PostgreSQL"
    if state in _SESSION_STATES:
        what, todo = _SESSION_STATES[state]
        relation = _RELATION.search(str(getattr(diag, "context", "") or ""))
        table = f", table {relation.group(1)}" if relation else ""
        return EngineError(f"{where}{table}: {what} (the server rolled back the open transaction); {todo}")
    text = str(err)
    if state is None and ("server closed the connection" in text or "connection is closed" in text or "consuming input failed" in text):
        return EngineError(f"{where}: the connection to the server was lost ({bare(err)}); run again")
    return None


def connect_error(err, database: str) -> EngineError:
    """A connection refused, as one line: the server's reason (``FATAL:  database "nodb" does not
    exist``) without the driver's wrapping; a database or role that does not exist is the URL's
    fault (exit 2).

    >>> str(connect_error(Exception('connection failed: connection to server on socket "/s" failed: FATAL:  database "nodb" does not exist'), "postgresql://u:pw@h/nodb"))
    "cannot connect to postgresql://u@h/nodb: database 'nodb' does not exist on that server (check the URL's database name)"
    """
    text = " ".join(str(err).split())
    reason = text.rsplit("FATAL:", 1)[1].strip() if "FATAL:" in text else bare(err)
    missing = re.match(r'(database|role) "((?:[^"]|"")*)" does not exist', reason)
    if missing:
        return EngineInputError(f"cannot connect to {redact(database)}: {missing.group(1)} {missing.group(2)!r} does not exist on that server (check the URL's {missing.group(1)} name)")
    return EngineError(f"cannot connect to {redact(database)}: {reason}")


def _dependents_error(err) -> EngineError | None:
    """A DROP refused because other objects depend on the table (SQLSTATE 2BP01), with the
    objects named (the server's DETAIL), as one line; None for any other error."""
    diag = getattr(err, "diag", None)
    if getattr(diag, "sqlstate", None) != "2BP01":
        return None
    detail = "; ".join(line.strip() for line in str(getattr(diag, "message_detail", "") or "").splitlines() if line.strip())
    return EngineError(f"{bare(err)}: {detail or 'other objects depend on it'}; --in-place recreates the table: drop them first, or write the release with --output-table")


def _int_lines(text: str, field: pa.Field) -> pa.Array:
    """One integer column from its values a line each (``N``: NULL).

    >>> _int_lines(chr(10).join(["3", "N", "-5", "N"]), pa.field("a", pa.int32())).to_pylist()
    [3, None, -5, None]
    """
    import io

    import pyarrow.csv as pacsv

    got = pacsv.read_csv(io.BytesIO(text.encode("ascii")), read_options=pacsv.ReadOptions(column_names=["v"], use_threads=False),
                         convert_options=pacsv.ConvertOptions(column_types={"v": field.type}, null_values=["N"]))
    return got.column("v").combine_chunks()


def _pg_memory(limit: str) -> str:
    """DuckDB-style ``1GB``/``500MB`` to PostgreSQL's ``1GB``/``500MB`` units (kB, MB, GB, TB)."""
    text = limit.strip().upper().replace(" ", "").replace("IB", "B")
    for unit in ("KB", "MB", "GB", "TB"):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return text[: -len(unit)] + ("kB" if unit == "KB" else unit)
    raise ConfigError(f"bad --memory-limit {limit!r}: write e.g. 500MB or 2GB")
