"""A run's session: the engine, the source and the hierarchies (shared by anonymize, check, sql)."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from typing import Any

from sqlanon.engine import DuckDBEngine, PostgresEngine, connect
from sqlanon.errors import ConfigError, EngineError
from sqlanon.hierarchy import MANY_COLUMNS, builder_values_many, is_builder_spec, load_hierarchy, require_bound_used
from sqlanon.config.policy import Policy
from sqlanon.engine.source import Source
from sqlanon.engine.urls import is_postgres_url, redact
from sqlanon.engine.resources import check_resources
from sqlanon.engine.spark_session import is_spark_session, source_for_spark
from sqlanon.engine.spark import SparkEngine
from sqlanon.engine.table_name import TableName, lookup, schema_exists


def _default_memory_limit() -> str:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return f"{max(1, int(total * 0.5 / 2**30))}GB"
    except (ValueError, OSError, AttributeError):
        return "4GB"


class Session:
    """An engine, a source and the hierarchies of one run (shared by anonymize/check/sql)."""

    engine: DuckDBEngine | PostgresEngine | SparkEngine | Any
    source: Source
    safepub: Any = None  # SafePub's sample and parameters, when the run asks for SafePub

    def __init__(self, policy: Policy, progress: Callable[[str], None] | None = None, connection=None, read_only: bool = False) -> None:
        self.policy = policy
        self.progress = progress or (lambda message: None)
        runtime = policy.runtime
        check_resources(runtime.memory_limit, runtime.threads)  # check/sql reach here without validate()
        if runtime.engine == "spark" or is_spark_session(connection):
            self._open_spark(policy, connection)
        elif connection is not None:
            self._open_connection(policy, connection)
        else:
            self._open_source(policy, read_only)

    def _open_connection(self, policy: Policy, connection) -> None:
        """A table of the caller's open connection: DuckDB (e.g. a dbt-duckdb model's session) or
        psycopg 3 (PostgreSQL)."""
        if policy.runtime.engine is not None:
            raise ConfigError(f"engine={policy.runtime.engine!r} with a connection: the connection decides the engine; leave engine out")
        name = policy.source.table or policy.source.input
        if not name:
            raise ConfigError("with connection=..., name the input table (table=...)")
        self.source = Source(kind="table", table=name, database=None)
        memory_limit = policy.runtime.memory_limit
        if type(connection).__module__.startswith("psycopg"):
            self.engine = PostgresEngine(connection=connection, memory_limit=memory_limit)
        else:
            self.engine = DuckDBEngine(connection=connection, memory_limit=memory_limit)
        _require_table(self.engine, self.source)

    def _open_source(self, policy: Policy, read_only: bool) -> None:
        """A file or a table of a database named by ``--input``, on the engine that reads it."""
        source = policy.source
        if not source.input:  # validate() says so for anonymize; check and sql require --input
            raise ConfigError("no input: give --input PATH (or input: in the policy)")
        self.source = Source.open(source.input, source.format, source.table, source.delimiter)
        database = _database_for(policy, self.source)
        _refuse_other_engine(policy, database)
        runtime = policy.runtime
        if is_postgres_url(database):  # the server's memory is its own: set work_mem only when asked
            self.engine = connect(database=database, memory_limit=runtime.memory_limit)
        else:
            # a .duckdb input that is only read (check, sql, --dry-run, --output to a file) is opened
            # read-only: it works on a read-only file and beside other readers of the warehouse
            out = policy.release
            only_read = self.source.kind == "table" and (read_only or not (out.output_table or out.in_place))
            self.engine = connect(database=database, memory_limit=runtime.memory_limit or _default_memory_limit(), threads=runtime.threads, read_only=only_read)
        if self.source.kind == "table":
            try:
                _require_table(self.engine, self.source)
            except BaseException:
                self.engine.close()  # a refused input leaves no connection (and no file lock) behind
                raise

    def _open_spark(self, policy: Policy, connection) -> None:
        """Spark: a catalog table (``--table db.t``, no ``--input``) or Parquet/CSV files, run on a
        session of ours (``--spark-master``, ``--spark-conf``) or the caller's SparkSession."""
        if policy.release.database:
            raise ConfigError("--database names a DuckDB file; with --engine spark, --output-table writes into the Spark catalog")
        self.source = source_for_spark(policy)  # checked before the JVM starts

        if connection is not None:
            if policy.runtime.memory_limit or policy.runtime.threads:
                raise ConfigError("--memory-limit/--threads with a SparkSession: set them when building the session")
            self.engine = SparkEngine(connection=connection)
        else:
            self.engine = SparkEngine(master=policy.runtime.spark_master, conf=policy.runtime.spark_conf, memory_limit=policy.runtime.memory_limit, threads=policy.runtime.threads)
        try:
            self.source.columns(self.engine)
        except Exception:
            self.engine.close()
            what = f"table {self.source.table!r} not found in the Spark catalog" if self.source.kind == "table" else f"cannot read input {self.source.path}"
            raise ConfigError(what) from None

    def hierarchies(self, qis: dict[str, str], rows=None) -> list:
        """Each QI's hierarchy; a built one from the distinct values of ``rows`` when given (a
        FROM item ``src`` with the source's column names: the grouped pass's groups,
        :mod:`sqlanon.stats.grouped_pass`), else of the source."""
        require_bound_used([*qis.values(), self.policy.privacy.t_hierarchy], self.policy.hierarchies.max_value_length)
        self.source.require_columns(self.engine, list(qis), "quasi-identifier column")
        bound = self.policy.hierarchies.max_value_length
        built = [column for column, spec in qis.items() if is_builder_spec(spec)]
        one_scan = MANY_COLUMNS if self.engine.one_scan_columns is None else self.engine.one_scan_columns
        values = builder_values_many(self.engine, self.source, built, bound, rows) if len(built) > one_scan else {}
        return [load_hierarchy(spec, column, self.engine, self.source, self.policy.hierarchies.hierarchy_delimiter, bound, values.get(column), rows) for column, spec in qis.items()]

    def hierarchy(self, spec, column: str):
        """One column's hierarchy (a model's own: the sensitive column's of hierarchical t-closeness)."""
        self.source.require_columns(self.engine, [column], "sensitive column")
        return load_hierarchy(spec, column, self.engine, self.source, self.policy.hierarchies.hierarchy_delimiter, self.policy.hierarchies.max_value_length)

    def population_source(self, spec: str) -> Source:
        """The population of k-map / delta-presence: a file (or glob), else a table of the input's database."""
        if os.path.isfile(spec) or os.path.isdir(spec) or glob.glob(spec) and any(ch in spec for ch in "*?["):
            return Source.open(spec)
        src = Source(kind="table", table=spec, database=self.source.database)
        try:
            src.columns(self.engine)
        except Exception:
            raise ConfigError(f"population table {spec!r} not found in the input's database") from None
        return src

    def close(self) -> None:
        self.engine.close()


def _database_for(policy: Policy, source: Source) -> str:
    """The database a run opens: the input's, ``--database`` for ``--output-table`` with a file
    input, else an in-memory DuckDB."""
    out = policy.release
    if source.kind == "table":
        database = source.database
        assert database is not None  # Source.open gives a table its database
        if out.output_table and out.database and not is_postgres_url(database) and os.path.abspath(out.database) != os.path.abspath(database):
            raise ConfigError("--output-table writes into the input database; --database must name the same file")
        return database
    if out.database and not out.output_table:
        raise ConfigError(f"--database {out.database} is where --output-table writes for a file input; without --output-table it is not used")
    if out.output_table:
        if not out.database:
            raise ConfigError("--output-table with a file input needs --database PATH.duckdb to write into")
        return out.database
    return ":memory:"


def _refuse_other_engine(policy: Policy, database: str) -> None:
    """A flag given is a flag used: never run on another engine than the one asked for."""
    runtime = policy.runtime
    chosen = "postgres" if is_postgres_url(database) else "duckdb"
    if runtime.engine is not None and runtime.engine != chosen:
        where = "a postgresql:// URL" if runtime.engine == "postgres" else "a .duckdb file, a Parquet or CSV path"
        raise ConfigError(f"--engine {runtime.engine} but the input is read by {chosen} ({database if chosen == 'postgres' else policy.source.input}); "
                          f"{runtime.engine} needs {where} as --input/--database")
    if chosen == "postgres" and runtime.threads is not None:
        raise ConfigError("--threads applies to DuckDB and Spark; a PostgreSQL server plans its own parallelism (max_parallel_workers_per_gather)")


def _require_table(engine, source) -> None:
    """Look the input table up in the catalog by its parsed parts (schema-aware, case as the
    database treats it); refuse a missing one naming the table (or its missing schema)."""
    where = redact(source.database) if source.database else "the connection"
    parsed = TableName.parse(source.table, engine.dialect)
    found = lookup(engine, parsed)
    if found is not None:
        source.resolved = found
        return
    try:  # not in the catalog under that spelling: a name only the database's search path finds
        source.columns(engine)
        return
    except EngineError:
        pass
    if not schema_exists(engine, parsed):
        raise ConfigError(f"schema {parsed.schema!r} of table {source.table!r} not found in {where}")
    raise ConfigError(f"table {source.table!r} not found in {where}")
