"""The embedded DuckDB engine (the default)."""

from __future__ import annotations

import contextlib
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from collections.abc import Iterator

import duckdb
import pyarrow as pa
from sqlglot import exp

from sqlanon.dialect import DUCKDB
from sqlanon.engine.arrow_columns import arrow_table
from sqlanon.engine.base import Engine, bare, engine_error
from sqlanon.errors import ConfigError, EngineError


#: run independent statements side by side on two connections of the engine's own in-memory
#: database (:meth:`DuckDBEngine.fetch_all_many`); off: one statement at a time, temporary tables
SIDE_BY_SIDE = True
#: how a temporary table's statement starts, and the plain table's that replaces it when shared
TEMP_PREFIX = "CREATE TEMPORARY TABLE "
PLAIN_PREFIX = "CREATE TABLE "
#: jemalloc's control call for every arena (``MALLCTL_ARENAS_ALL``): hand their unused pages back
PURGE = b"arena.4096.purge"


@functools.lru_cache(maxsize=1)
def _jemalloc_control():
    """jemalloc's ``mallctl``, which DuckDB's Linux builds link in and export
    (``duckdb_je_mallctl``), or None where DuckDB uses the system's allocator (macOS, Windows,
    musl) or the symbol is not there."""
    try:
        import ctypes

        import _duckdb

        control = ctypes.CDLL(_duckdb.__file__).duckdb_je_mallctl
    except (ImportError, OSError, AttributeError):
        return None
    control.restype = ctypes.c_int
    control.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return control


#: tables up to this many rows are loaded from bound lists (:meth:`DuckDBEngine.register_columns`)
LIST_ROWS = 100_000
#: the Arrow types loaded that way, and their DuckDB types
LIST_TYPES = {
    pa.string(): "VARCHAR",
    pa.large_string(): "VARCHAR",
    pa.int8(): "TINYINT",
    pa.int16(): "SMALLINT",
    pa.int32(): "INTEGER",
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.bool_(): "BOOLEAN",
}


def list_select(columns: dict[str, tuple[pa.DataType, list]]) -> exp.Select | None:
    """``SELECT UNNEST(CAST($1 AS type[])) AS "c1", ..``: the table of ``columns`` from one bound
    list each, for a small table of plain types (:data:`LIST_ROWS`, :data:`LIST_TYPES`); None
    otherwise.

    >>> DUCKDB.render(list_select({"code": (pa.int32(), [0, 1]), "v": (pa.string(), ["a", None])}))
    'SELECT UNNEST(CAST($1 AS INT[])) AS "code", UNNEST(CAST($2 AS TEXT[])) AS "v"'
    """
    if not columns or any(kind not in LIST_TYPES or len(values) > LIST_ROWS for kind, values in columns.values()):
        return None
    out = []
    for i, (name, (kind, _)) in enumerate(columns.items()):
        values = exp.Cast(this=exp.Placeholder(this=str(i + 1)), to=exp.DataType.build(f"{LIST_TYPES[kind]}[]", dialect="duckdb"))
        out.append(exp.alias_(exp.Anonymous(this="UNNEST", expressions=[values]), name, quoted=True))
    return exp.select(*out)


def is_duckdb_file(path: str) -> bool:
    """Does ``path`` hold a DuckDB database (its header carries ``DUCK`` at byte 8)?"""
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[8:12] == b"DUCK"


class DuckDBEngine(Engine):
    """DuckDB, in memory or on a ``.duckdb`` file. Results are always consumed fully."""

    dialect = DUCKDB

    def memory_bytes(self) -> int | None:
        """DuckDB's ``memory_limit`` in bytes (it reports e.g. ``953.6 MiB``)."""
        text = str(self.scalar(exp.select(exp.Anonymous(this="current_setting", expressions=[exp.Literal.string("memory_limit")]))) or "")
        return parse_bytes(text)

    def free_memory(self) -> bool:
        """Hand the memory DuckDB's statements let go back to the system: DuckDB's allocator
        (jemalloc) keeps freed pages for its next statements, and after the base scan's hash
        tables (hundreds of MiB at millions of tuples) they stayed in the process beside the
        in-process path's arrays, which come from another allocator and cannot reuse them (the
        run's peak: docs/measurements.md, ``bench/memory_5m.py``). A few ms; the whole process's
        DuckDB memory, whatever connection freed it. False where there is no jemalloc to ask."""
        control = _jemalloc_control()
        return control is not None and control(PURGE, None, None, None, 0) == 0

    def held_bytes(self) -> int | None:
        """The memory DuckDB's buffer manager holds now (``duckdb_memory()``, summed): DuckDB
        lives in this process, so the in-process path's budget leaves it room."""
        total = exp.select(exp.Sum(this=exp.column("memory_usage_bytes"))).from_(exp.Table(this=exp.Anonymous(this="duckdb_memory")))
        return int(self.scalar(total) or 0)

    def __init__(
        self,
        database: str = ":memory:",
        memory_limit: str | None = None,
        threads: int | None = None,
        read_only: bool = False,
        temp_directory: str | None = None,
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        super().__init__(memory_limit, threads, connection)
        self.threads = threads
        self.database = database
        self.memory_limit = memory_limit
        #: the engine's own in-memory database: its "temporary" tables are created as plain tables
        #: (nothing outlives the engine either way) so that a second connection to the same
        #: database sees them and statements can run side by side (:meth:`fetch_all_many`)
        self.shared_tables = SIDE_BY_SIDE and connection is None and database == ":memory:"
        self._cursors: list[Any] = []
        self._concurrency: int | None = None  # asked once (concurrency())
        self._pool: Any = None
        if self.borrowed:
            # someone else's connection (a dbt-duckdb model's ``session``): use it, never close it,
            # change no setting but the ones asked for, and drop our temp tables when done
            assert connection is not None  # borrowed
            self.con = connection
            if memory_limit:
                self.set_option("memory_limit", memory_limit)
            return
        if database != ":memory:" and read_only and not os.path.exists(database):
            raise ConfigError(f"database file not found: {database}")
        if database != ":memory:" and os.path.isfile(database) and os.path.getsize(database) > 0 and not is_duckdb_file(database):
            raise ConfigError(f"{database} is not a DuckDB database file")
        try:
            self.con = duckdb.connect(database, read_only=read_only)
        except duckdb.Error as err:
            raise engine_error(err, engine="DuckDB") from None
        try:
            if memory_limit:
                self.set_option("memory_limit", memory_limit)
            if threads is not None:
                self.set_option("threads", str(int(threads)))
            if temp_directory:
                self.set_option("temp_directory", temp_directory)
            # Sorting is not needed for any aggregate; keep insertion order off for less memory.
            self.set_option("preserve_insertion_order", "false")
            # DuckDB draws its progress bar on stdout for long queries: that would corrupt --json.
            self.set_option("enable_progress_bar", "false")
        except BaseException:
            self.con.close()  # a refused setting leaves no open connection behind
            raise

    def _run(self, sql: str, fetch: str, params: list | None = None) -> Any:
        if self.shared_tables and sql.startswith(TEMP_PREFIX):
            sql = PLAIN_PREFIX + sql[len(TEMP_PREFIX) :]
        return self._run_on(self.con, sql, fetch, params)

    def concurrency(self) -> int:
        """Statements :meth:`fetch_all_many` runs side by side: the engine's threads when its tables
        are shared with a second connection (:attr:`shared_tables`), else one."""
        if not self.shared_tables:
            return 1
        if self._concurrency is None:
            self._concurrency = self.scan_threads()
        return int(self._concurrency)

    def fetch_all_many(self, statements: list[tuple[exp.Expr | str, list | None]]) -> list[list[tuple]]:
        """Several read-only statements side by side, each on its own connection to this engine's
        database (this one and cursors of it), :meth:`concurrency` at a time. DuckDB runs a
        statement over a table of one row group (122,880 rows) on one thread whatever its
        ``threads``; two such statements at once keep two threads busy."""
        width = self.concurrency()
        if width <= 1 or len(statements) <= 1:
            return super().fetch_all_many(statements)
        texts = [(self._record(sql), params) for sql, params in statements]
        while len(self._cursors) < width - 1:
            self._cursors.append(self.con.cursor())
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="sqlanon-duckdb")
        out: list[list[tuple]] = []
        for start in range(0, len(texts), width):
            part = texts[start : start + width]
            futures = [self._pool.submit(self._run_on, con, text, "all", params or None) for con, (text, params) in zip([self.con, *self._cursors], part)]
            out.extend(f.result() for f in futures)
        return out

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for cur in self._cursors:
            with contextlib.suppress(Exception):
                cur.close()
        self._cursors.clear()
        super().close()

    def _run_on(self, con, sql: str, fetch: str, params: list | None = None) -> Any:
        try:
            if fetch == "arrow":  # the relation API hands Arrow over without an extra copy
                return con.sql(sql, params=params).to_arrow_table()
            cur = con.execute(sql, params) if params else con.execute(sql)
            if fetch == "all":
                return cur.fetchall()
            cur.fetchall()
            return None
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None
        except duckdb.OutOfMemoryException as err:
            limit = f"--memory-limit {self.memory_limit}" if self.memory_limit else "DuckDB's memory_limit"
            raise EngineError(f"out of memory under {limit}; give a larger --memory-limit ({bare(err)})") from None
        except duckdb.Error as err:
            raise engine_error(err, sql, "DuckDB") from None
        except RuntimeError as err:  # Ctrl-C during a statement: DuckDB raises RuntimeError("Query interrupted")
            if "interrupted" in str(err).lower():
                raise KeyboardInterrupt from None
            raise

    @contextlib.contextmanager
    def one_thread(self) -> Iterator[None]:
        """``SET threads = 1`` inside, the setting restored after, unless ``threads`` was given or
        the connection is someone else's. A search of many small statements (a wide table of
        30K rows) gains nothing from a second thread and loses much when another process holds a
        core (docs/measurements.md)."""
        before = 1 if self.threads is not None or self.borrowed else self.scan_threads()
        if before <= 1:
            yield
            return
        self.set_option("threads", "1")
        try:
            yield
        finally:
            self.set_option("threads", str(before))

    def scan_threads(self) -> int:
        """The ``threads`` setting: DuckDB scans a table one row group (122,880 rows) per task, so a
        smaller table is scanned by one thread whatever this is."""
        value = self.scalar(exp.select(exp.Anonymous(this="current_setting", expressions=[exp.Literal.string("threads")])))
        try:
            return max(int(value), 1)
        except (TypeError, ValueError):
            return 1

    def register_columns(self, name: str, columns: dict[str, tuple[pa.DataType, list]]) -> None:
        """A small table of integer and text columns is loaded from Arrow arrays built from their
        buffers (:func:`sqlanon.engine.arrow_columns.arrow_table`: no pandas import, and less CPU
        than bound lists: docs/measurements.md); other plain columns from one bound list per column
        (:func:`list_select`) without ``pa.array`` (which imports pandas: a cost of every process
        that builds hierarchies: docs/measurements.md); the rest through ``pa.array``."""
        table = arrow_table(columns)
        if table is not None:
            self.register_arrow(name, table)
            return
        listed = list_select(columns)
        if listed is None:
            super().register_columns(name, columns)
            return
        stmt = exp.Create(
            this=exp.Table(this=exp.to_identifier(name, quoted=True)),
            kind="TABLE",
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
            expression=listed,
        )
        self._go(stmt, "none", [values for _, values in columns.values()])

    def register_arrow(self, name: str, table: pa.Table) -> None:
        view = f"__sqlanon_arrow_{name}"
        self.con.register(view, table)
        try:
            stmt = exp.Create(
                this=exp.Table(this=exp.to_identifier(name, quoted=True)),
                kind="TABLE",
                properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
                expression=exp.select("*").from_(exp.Table(this=exp.to_identifier(view, quoted=True))),
            )
            self.execute(stmt)
        finally:
            self.con.unregister(view)

    def write_file(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> None:
        """``COPY (query) TO path``: DuckDB writes the file itself, rows never reach Python."""
        self.execute(self.dialect.copy_to(query, path, kind, delimiter))

    def in_transaction(self) -> bool:
        """Is an explicit transaction open? (Outside one, every statement gets a new id.)"""
        probe = exp.select(exp.Anonymous(this="txid_current"))
        return self.scalar(probe) == self.scalar(probe)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        if self.borrowed and self.in_transaction():
            yield  # the caller's transaction is open: our writes are part of it, theirs to commit
            return
        self.execute("BEGIN TRANSACTION")
        try:
            yield
        except BaseException:
            try:
                self.execute("ROLLBACK")
            except EngineError:
                pass
            raise
        else:
            self.execute("COMMIT")


_UNITS = {"": 1, "B": 1, "BYTES": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_bytes(text: str) -> int | None:
    """``'953.6 MiB'`` -> bytes; None for anything else.

    >>> parse_bytes("953.6 MiB"), parse_bytes("1GB"), parse_bytes("")
    (999922073, 1000000000, None)
    """
    import re

    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", text or "")
    if not m or m.group(2).upper() not in _UNITS:
        return None
    try:
        return int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    except ValueError:
        return None
