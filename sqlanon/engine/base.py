"""The engine interface: run sqlglot expressions, count them, and keep a log of what ran."""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
from typing import Any
from collections.abc import Callable, Iterator

import pyarrow as pa
from sqlglot import exp

from sqlanon.dialect import DUCKDB, Dialect
from sqlanon.engine.resources import check_resources, memory_bytes as resource_bytes
from sqlanon.engine.statement_log import logged_text
from sqlanon.errors import ConfigError, EngineError, EngineInputError, shown_path


_sql_log = logging.getLogger("sqlanon.sql")

class Engine:
    """Runs SQL. Subclasses implement ``_run`` (execute and fully consume) and the few hooks below.

    ``dialect`` is the engine's :class:`sqlanon.dialect.Dialect`: statements are built for it
    by the SQL builders and rendered by it here; the engine never builds SQL shapes itself."""

    dialect: Dialect = DUCKDB
    #: a statement's fixed cost, in frequency-set rows x nodes worth reading instead (the optimal
    #: search fills a round with look-ahead nodes up to this; None: its default, for DuckDB's cost,
    #: :data:`sqlanon.search.lattice.optimal.SPECULATE_ROWS`)
    statement_rows: int | None = None
    #: rows (frequency-set rows x nodes) one batch statement may join before grouping (None: the
    #: default for DuckDB's memory limit, :data:`sqlanon.stats.batch.JOIN_ROWS`)
    join_rows: int | None = None
    #: base-set rows above which the optimal search's probe paths stop below the incumbent's value
    #: (None: DuckDB's default, :data:`sqlanon.search.lattice.optimal.TRUNCATE_ROWS`)
    truncate_rows: int | None = None
    #: with more columns than this whose hierarchies are built from the data, their distinct
    #: values come from one scan for all (``sqlanon.hierarchy.builder_values_many``) rather than
    #: one statement each; None: the default (``sqlanon.hierarchy.MANY_COLUMNS``)
    one_scan_columns: int | None = None
    #: a base set of at most this many rows is fetched (its codes and counts) for the lattice's
    #: pair and triple marginals, summed in numpy, rather than grouped by the engine's
    #: ``GROUPING SETS`` statement (None: the default, :data:`sqlanon.stats.marginals.LOCAL_ROWS`)
    marginal_fetch_rows: int | None = None
    #: the database it opened (a DuckDB file, a PostgreSQL URL); None: in memory, or a connection given
    database: str | None = None
    #: the threads the engine was given (None: its default; DuckDB keeps what it was given)
    threads: int | None = None

    def __init__(self, memory_limit: str | None = None, threads: int | None = None, connection: Any = None) -> None:
        """``memory_limit`` and ``threads`` are checked before a connection is opened or changed;
        ``connection`` is a caller's open connection, if any (the engine then borrows it)."""
        check_resources(memory_limit, threads)
        self.queries = 0
        self.log: list[str] = []
        self.keep_log = False
        self._names = itertools.count(1)
        self.borrowed = connection is not None  # a caller's connection: never closed, temp tables dropped
        #: the DB-API connection (None where there is none: Spark)
        self.con: Any = None
        #: DuckDB's progress of the running statement is tracked (:mod:`sqlanon.progress` turns it on once)
        self.progress_tracking = False
        self._temps: list[str] = []
        #: the user's memory limit in bytes (None: not given), :meth:`client_memory_bytes` on engines
        #: whose limit is the server's or the cluster's
        self.memory_limit_bytes = resource_bytes(memory_limit) if memory_limit else None

    # -- to implement -------------------------------------------------------------------------
    def _run(self, sql: str, fetch: str, params: list | None = None) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def register_arrow(self, name: str, table: pa.Table) -> None:  # pragma: no cover
        """Create a temporary table ``name`` holding a small Arrow table (hierarchies, codes)."""
        raise NotImplementedError

    def register_columns(self, name: str, columns: dict[str, tuple[pa.DataType, list]]) -> None:
        """Like :meth:`register_arrow`, for a small table given as ``{column: (Arrow type, Python
        values)}``: building Arrow arrays from Python lists imports pandas (a cost of its own per
        process: docs/measurements.md),
        which an engine that can load the lists itself (DuckDB) does without."""
        self.register_arrow(name, pa.table({n: pa.array(values, kind) for n, (kind, values) in columns.items()}))

    def source_from(self, source) -> exp.Expr:
        """A FROM item for a :class:`sqlanon.engine.source.Source`; reading files is the engine's job
        (by default the dialect's way of naming it)."""
        return self.dialect.source_from(source)

    def write_file(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> None:  # pragma: no cover
        """Write the rows of ``query`` to ``path`` as ``parquet`` or ``csv`` (with a header)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:  # pragma: no cover
        raise NotImplementedError

    def close(self) -> None:
        """Close the connection; a borrowed one stays open and only loses our temp tables."""
        if self.borrowed:
            self.drop_temps()
            return
        if self.con is not None:
            with contextlib.suppress(Exception):
                self.con.close()

    # -- shared ---------------------------------------------------------------------------------
    def sql_text(self, expression: exp.Expr | str) -> str:
        return self.dialect.render(expression)

    def _record(self, expression: exp.Expr | str) -> str:
        """The statement's text, counted and logged (logger ``sqlanon.sql``, :attr:`log`) as run."""
        sql = self.sql_text(expression)
        self.queries += 1
        if _sql_log.isEnabledFor(logging.DEBUG):  # logger "sqlanon.sql": every statement run, literals as ?
            _sql_log.debug("%s", logged_text(expression, self.dialect.name))
        if self.keep_log:
            self.log.append(sql)
        return sql

    def _go(self, expression, fetch: str, params=None):
        sql = self._record(expression)
        return self._run(sql, fetch, params) if params else self._run(sql, fetch)

    def execute(self, expression: exp.Expr | str, params: list | None = None) -> None:
        """Run a statement; ``params``: its bound lists (engines whose dialect binds them)."""
        self._go(expression, "none", params)

    def fetch_all(self, expression: exp.Expr | str, params: list | None = None) -> list[tuple]:
        return self._go(expression, "all", params)

    def fetch_one(self, expression: exp.Expr | str, params: list | None = None) -> tuple | None:
        rows = self._go(expression, "all", params)
        return rows[0] if rows else None

    def scalar(self, expression: exp.Expr | str) -> Any:
        row = self.fetch_one(expression)
        return None if row is None else row[0]

    def concurrency(self) -> int:
        """How many statements :meth:`fetch_all_many` runs side by side (here one at a time)."""
        return 1

    def fetch_all_many(self, statements: list[tuple[exp.Expr | str, list | None]]) -> list[list[tuple]]:
        """The rows of several independent read-only statements ``(statement, bound lists)``, in
        order; run one after another unless the engine runs them side by side (:meth:`concurrency`)."""
        return [self.fetch_all(sql, params) for sql, params in statements]

    def fetch_arrow(self, expression: exp.Expr | str) -> pa.Table:
        return self._go(expression, "arrow")

    def set_option(self, key: str, value: str) -> None:
        """``SET key = 'value'`` (an engine setting); a refused one is the user's error."""
        stmt = exp.Set(expressions=[exp.SetItem(this=exp.EQ(this=exp.to_identifier(key), expression=exp.Literal.string(value)))])
        try:
            self.execute(stmt)
        except EngineError as err:
            raise ConfigError(f"bad engine setting {key}={value!r}: {err}") from None

    @contextlib.contextmanager
    def one_thread(self) -> Iterator[None]:
        """Run the statements inside on one thread where the thread count is this engine's to set
        (DuckDB when ``threads`` was not given); elsewhere nothing changes."""
        yield

    def memory_bytes(self) -> int | None:
        """The engine's memory limit in bytes, when it has one this process lives under (DuckDB's
        ``memory_limit``); None elsewhere (a server or a cluster has its own)."""
        return None

    def client_memory_bytes(self) -> int | None:
        """What this process may hold of a search's data (the in-process path's fetched
        frequency set and its buffers: ``stats.local.sets.budget``): the engine's memory limit
        where the process lives under it (:meth:`memory_bytes`, DuckDB); on a server or a cluster
        (PostgreSQL, Spark) the ``--memory-limit`` the user gave, which also bounds what is fetched
        to this driver; None: no limit given (then a share of the memory available)."""
        limit = self.memory_bytes()
        return limit if limit else self.memory_limit_bytes

    def free_memory(self) -> bool:
        """Hand memory the engine let go back to the system, where it lives in this process and
        its allocator keeps freed pages (DuckDB); True when done. Elsewhere nothing to do."""
        return False

    def held_bytes(self) -> int | None:
        """What the engine holds now of this process's memory (its tables and buffers), None
        when its memory is not this process's (a server, a cluster): the in-process path's
        budget leaves it room (``stats.local.sets.plan_budget``)."""
        return None

    def scan_threads(self) -> int:
        """How many threads the engine scans one table with, when the table is large enough (1:
        the engine plans its own parallelism and nothing is to be split for it)."""
        return 1

    def describe_columns(self, query: exp.Expr) -> list[tuple[str, str]]:
        """``(name, type)`` of the columns ``query`` returns (``DESCRIBE``; engines may override)."""
        return [(r[0], r[1]) for r in self.fetch_all(exp.Describe(this=query))]

    def temp_name(self, prefix: str) -> str:
        name = f"sqlanon_{prefix}_{next(self._names)}"
        self._temps.append(name)
        return name

    def drop_temps(self) -> None:
        """Drop every table named by :meth:`temp_name` (on a borrowed connection, at close)."""
        for name in self._temps:
            with contextlib.suppress(EngineError):
                self.execute(self.dialect.drop_temp(name))
        self._temps.clear()


def one_line(err: BaseException | str) -> str:
    """The first line of a driver's error message (messages stay one line)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


# -- the engine boundary: a driver's exception becomes one sqlanon error, here and nowhere else ----

#: ``Binder Error: ``, ``Invalid Input Error: `` (DuckDB), ``[TABLE_OR_VIEW_NOT_FOUND] `` (Spark):
#: the driver's class of error, which says nothing to a user
_KIND = re.compile(r"^(?:[A-Z][A-Za-z]*(?: [A-Za-z]+){0,3} Error: |\[[A-Z_.]+\] )")


def _csv_error(m: re.Match, text: str, sql: str) -> EngineError:
    """A CSV parse error naming the file and the line, without the line's values (DuckDB's
    message quotes the offending row)."""
    path = re.search(r"read_csv\('((?:[^']|'')*)'", sql, re.IGNORECASE)
    where = path.group(1).replace("''", "'") if path else "the CSV input"
    counts = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if counts:
        return EngineError(f"{where}: line {m.group(1)} has {counts.group(2)} field(s), the header has {counts.group(1)} (a ragged CSV; check the delimiter and quoting)")
    reason = next((l.strip() for l in text.splitlines()[1:] if l.strip() and not l.startswith("Original Line")), "cannot be parsed")
    return EngineError(f"{where}: line {m.group(1)}: {reason}")


def _cannot_open(m: re.Match, text: str, sql: str) -> EngineError:
    path, reason = m.group(1), m.group(2).strip().rstrip(".")
    shown = shown_path(path)
    if shown != path or re.match(r"\s*COPY\b", sql, re.IGNORECASE):
        return EngineError(f"cannot write {shown}: {reason}")
    if not sql:  # opening a database file
        return EngineError(f"cannot open {path}: {reason}")
    return EngineInputError(f"cannot read {path}: {reason}")


_RULES: list[tuple[re.Pattern, Callable[[re.Match, str, str], EngineError]]] = [
    (re.compile(r"CSV Error on Line: (\d+)"), _csv_error),
    (re.compile(r'Duplicate named argument "((?:[^"]|"")*)" in function call to "struct_pack"'),
     lambda m, t, s: EngineInputError(f"the input names column {m.group(1)!r} twice (the engine's column names ignore case)")),
    (re.compile(r"No magic bytes found at end of file '((?:[^']|'')*)'"),
     lambda m, t, s: EngineInputError(f"{m.group(1)} is not a Parquet file (give --format csv for a CSV)")),
    (re.compile(r"File '((?:[^']|'')*)' too small to be a Parquet file"),
     lambda m, t, s: EngineInputError(f"{m.group(1)} is not a Parquet file ({'it is empty' if _size(m.group(1)) == 0 else 'give --format csv for a CSV'})")),
    (re.compile(r'Cannot open file "((?:[^"]|"")*)": ([^\n]+)'), _cannot_open),
    (re.compile(r'Could not (?:write|fsync|truncate)[^"\n]* file "((?:[^"]|"")*)"(?:: ([^\n]+))?'),  # a full disk
     lambda m, t, s: EngineError(f"cannot write {shown_path(m.group(1))}: {(m.group(2) or 'the write failed').strip().rstrip('.')}")),
    (re.compile(r'(?:Could not set lock on|Conflicting lock is held in) file "((?:[^"]|"")*)"'),
     lambda m, t, s: EngineError(f"{shown_path(m.group(1))} is locked by another process (a DuckDB file takes one writer at a time)")),
    (re.compile(r'Could not read enough bytes from file "((?:[^"]|"")*)"'),  # a file cut short
     lambda m, t, s: EngineInputError(f"{m.group(1)} is truncated or damaged (it ends before the data its header promises); restore it from a copy")),
    (re.compile(r'failed to cast column "((?:[^"]|"")*)" from type (\w+) to (\w+)'),
     lambda m, t, s: EngineInputError(f"column {m.group(1)!r} has a value that is no {m.group(3)} (the input's files or rows disagree on its type: {m.group(2)} and {m.group(3)})")),
]

#: DuckDB wraps some errors of its writers in JSON (``Async write failed for range ...:
#: {"exception_type":"IO","exception_message":"Could not write file ..."}``): the inner message
_WRAPPED = re.compile(r'\{"exception_type":.*\}')
#: a value quoted by a conversion error (``Could not convert string '54y' to INT64``): a value of
#: the input, which may be one the release suppresses; an error shows no value
_QUOTED_VALUE = re.compile(r"\b(string|value) '(?:[^']|'')*'")


def _unwrapped(text: str) -> str:
    r"""The message inside DuckDB's JSON wrapping, or ``text`` as it is.

    >>> _unwrapped('IO Error: Async write failed: {"exception_type":"IO","exception_message":"Could not write file \\"/d/o.csv\\": No space left on device","errno":"28"}')
    'Could not write file "/d/o.csv": No space left on device'
    """
    import json

    m = _WRAPPED.search(text)
    if not m:
        return text
    try:
        inner = json.loads(m.group(0))
    except ValueError:
        return text
    return str(inner.get("exception_message") or text) if isinstance(inner, dict) else text


def without_values(line: str) -> str:
    """``line`` without the input values a driver's message quotes (what the release hides, no
    error shows).

    >>> without_values("Could not convert string '54y' to INT64")
    'Could not convert a string to INT64'
    """
    return _QUOTED_VALUE.sub(lambda m: f"a {m.group(1)}", line)


def bare(err: BaseException) -> str:
    """The driver's first line without its class of error (``Out of Memory Error: ``)."""
    return _KIND.sub("", one_line(err))


def _size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def engine_error(err: BaseException, sql: str = "", engine: str = "") -> EngineError:
    """The sqlanon error for a driver's exception, as one line: a known shape is said in the
    user's terms (the file, the column; an :class:`EngineInputError` when it is the input's
    fault); any other keeps the driver's first line without its class of error, prefixed by the
    engine's name. Every engine's ``_run`` and driver call ends here.

    >>> str(engine_error(RuntimeError('Binder Error: Duplicate named argument "zip" in function call to "struct_pack"')))
    "the input names column 'zip' twice (the engine's column names ignore case)"
    >>> str(engine_error(RuntimeError('IO Error: Cannot open file "/ro/.out.parquet.42-0123abcd.tmp": Read-only file system')))
    'cannot write /ro/out.parquet: Read-only file system'
    >>> str(engine_error(RuntimeError('IO Error: Could not write file "/d/.o.csv.7-89abcdef.tmp": No space left on device')))
    'cannot write /d/o.csv: No space left on device'
    >>> str(engine_error(RuntimeError("Catalog Error: Table with name t does not exist!\\nDid you mean x?"), engine="DuckDB"))
    'DuckDB: Table with name t does not exist!'
    """
    text = _unwrapped(str(err).strip())
    for pattern, build in _RULES:
        m = pattern.search(text)
        if m:
            return build(m, text, sql)
    line = without_values(_KIND.sub("", one_line(text))) if text else bare(err)
    return EngineError(f"{engine}: {line}" if engine else line)
