"""Apache Spark through pyspark: the same statements, rendered by the Spark dialect, run as Spark SQL.

What differs from the embedded engine, and where it is handled:

* the session: ``--spark-master`` (default ``local[*]``) and ``--spark-conf KEY=VALUE`` build one,
  or ``connection=<SparkSession>`` borrows the caller's (never stopped; our temp views dropped);
* temporary tables are cached views, ``CACHE TABLE t AS SELECT`` (:mod:`sqlanon.dialect.spark`):
  computed once, never a lazy view that would rescan the source; a table built from one built
  from another is written to Parquet in a scratch directory first, which cuts the chain of query
  texts Spark would re-analyze at every read (:meth:`SparkEngine._cache`);
* sources: Parquet files/directories/globs (``parquet.`path```), catalog tables (``db.t``) and CSV
  (read by Spark's CSV reader into a temporary view, every column a string);
* small Arrow tables (hierarchy code tables, candidate arrays) become temporary views;
* file outputs are written by Spark's writer into a temporary sibling directory, then renamed
  into place with the Hadoop FileSystem API (one rename: atomic on HDFS and local disks; on object
  stores a rename is a copy, so not atomic there). An output is a directory of part files;
* table outputs are ``CREATE TABLE .. USING parquet AS SELECT``; ``--in-place`` needs a catalog
  with an atomic replace (Delta or Iceberg: ``CREATE OR REPLACE TABLE .. AS SELECT``); a plain
  Parquet table of the session catalog cannot be replaced atomically and is refused.

Spark has no multi-statement transactions: :meth:`SparkEngine.transaction` only groups statements.
``pyspark`` is an optional dependency (``pip install 'sqlanon[spark]'``; Java 17 or newer).
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any
from collections.abc import Iterator

import pyarrow as pa
from sqlglot import exp

from sqlanon.dialect import SPARK
from sqlanon.engine.base import Engine, bare, engine_error
from sqlanon.errors import ConfigError, EngineError
from sqlanon.engine.spark_conf import parse_conf, spark_bytes
from sqlanon.engine.spark_session import is_spark_session
from sqlanon.expr.atoms import table_ref

#: settings for a session we create (a caller's ``--spark-conf`` wins): no UI, few shuffle
#: partitions (the frequency sets are small), Arrow transfers
DEFAULT_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.showConsoleProgress": "false",
}

ATOMIC_REPLACE_PROVIDERS = ("delta", "iceberg")


def default_conf(master: str) -> dict[str, str]:
    """The settings of a session sqlanon builds for ``master``. On a local master the shuffles
    get one partition per core (``local[N]``: N; ``local[*]``: the machine's cores) and adaptive
    execution is off: the statements of a search aggregate frequency sets already in memory, and
    re-planning each of their stages cost more than it saved (docs/measurements.md)."""
    import os
    import re

    conf = dict(DEFAULT_CONF)
    m = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master.strip())
    if m:
        cores = m.group(1)
        n = 1 if cores is None else (os.cpu_count() or 2) if cores == "*" else int(cores)
        conf["spark.sql.shuffle.partitions"] = str(max(1, n))
        conf["spark.sql.adaptive.enabled"] = "false"
    return conf


class SparkEngine(Engine):
    """A SparkSession: ours (``master``, ``conf``) or the caller's (``connection``)."""

    dialect = SPARK
    #: every statement is a Spark job (tens of times DuckDB's fixed cost: docs/measurements.md):
    #: rounds of the optimal search are filled with look-ahead nodes up to ~5M joined rows (1M
    #: Adult-like rows, 371K distinct QI tuples: 13 nodes a round instead of none)
    statement_rows = 5_000_000
    #: a batch statement's nodes are not cut into DuckDB's memory-sized chunks (4M joined rows:
    #: 10 nodes at 1M Adult-like rows, so a round of the optimal search cost 3-4 Spark jobs); Spark
    #: spills its aggregations, and a job's fixed cost (parse, analyze, plan, schedule) is paid
    #: once per round of up to 40M joined rows (1M rows, k=10, 5 %: the same 481 nodes in 30
    #: statements instead of 78, and faster: docs/measurements.md, bench/results/spark_engine.txt)
    join_rows = 40_000_000
    #: probe paths stop below the incumbent's value at every size: a node costs a share of a Spark
    #: job, and the nodes cut are statements saved (1M rows, k=10, 5 %: 481 nodes in 23 batch
    #: statements -> 212 in 14, the same optimum, and faster: docs/measurements.md)
    truncate_rows = 0
    #: the distinct values of every column whose hierarchy is built from the data come from one
    #: scan: each statement is a Spark job that reads the source again (a CSV is parsed anew)
    one_scan_columns = 1

    def __init__(self, master: str | None = None, conf=None, connection=None, memory_limit: str | None = None, threads: int | None = None, database: str | None = None, **_: Any) -> None:
        super().__init__(memory_limit, threads, connection)
        try:
            from pyspark.sql import SparkSession
        except ImportError:  # pragma: no cover - depends on the installation
            raise ConfigError("--engine spark needs pyspark (and Java 17+): pip install 'sqlanon[spark]'") from None
        self.database = database
        if self.borrowed:
            if not is_spark_session(connection):
                raise ConfigError(f"connection must be a SparkSession, got {type(connection).__name__}")
            self.spark = connection
            if memory_limit or threads:
                raise ConfigError("memory_limit/threads are settings of the SparkSession you pass: set them when building it")
        else:
            master = master or (f"local[{int(threads)}]" if threads else "local[*]")
            settings = default_conf(master)
            if memory_limit:
                settings["spark.driver.memory"] = _spark_memory(memory_limit)
            settings.update(parse_conf(conf))
            # a session already running in this process (spark-submit, a notebook) is reused by
            # getOrCreate: it is not ours to stop
            self.borrowed = SparkSession.getActiveSession() is not None
            builder = SparkSession.builder.master(master).appName("sqlanon")
            for key, value in settings.items():
                builder = builder.config(key, value)
            try:
                self.spark = builder.getOrCreate()
            except Exception as err:  # the JVM failed to start: Java missing, bad master, bad conf
                raise EngineError(f"cannot start Spark (master {master}): {bare(err)}") from None
            self.spark.sparkContext.setLogLevel("ERROR")
        self.con = None  # no DB-API connection; close() stops our own session only
        self._views: dict[str, str] = {}
        self._closing = False
        #: our cached tables: name -> the cached tables its text reads, its Parquet copy (or None)
        self._cached: dict[str, dict] = {}
        self._dropping: set[str] = set()
        self._scratch: str | None = None
        #: temp views live in the session: names unique per engine, so several runs (or a run
        #: whose engine was not closed) sharing one session never collide
        self._token = uuid.uuid4().hex[:6]

    # -- the driver's memory ---------------------------------------------------------------------
    def client_memory_bytes(self) -> int | None:
        """What the driver may hold of a search's data (the in-process path's fetched frequency
        set and its buffers, ``stats.local.sets.budget``): the ``--memory-limit`` given (the
        driver's memory, when the session is ours), at most the session's
        ``spark.driver.maxResultSize`` (the most a statement may collect to the driver: a set
        fetched past it would fail in the JVM), which the user sets on a session they pass.
        Beyond it the nodes go by SQL on the executors, and the report's ``local_route`` says
        which path ran and against what budget. None: neither bounds (a ``maxResultSize`` of 0)."""
        limits = [b for b in (self.memory_limit_bytes, self.result_size_bytes()) if b]
        return min(limits) if limits else None

    def result_size_bytes(self) -> int | None:
        """The session's ``spark.driver.maxResultSize`` in bytes (Spark's default ``1g`` when
        unset; 0: unlimited; None where it cannot be read)."""
        try:
            return spark_bytes(self.spark.conf.get("spark.driver.maxResultSize", "1g"))
        except self._errors():
            return None

    # -- running ----------------------------------------------------------------------------------
    def _errors(self):
        from pyspark.errors import PySparkException

        try:
            from py4j.protocol import Py4JError
        except ImportError:  # pragma: no cover
            Py4JError = PySparkException
        return (PySparkException, Py4JError)

    def _run(self, sql: str, fetch: str, params: list | None = None) -> Any:
        if params:
            raise EngineError("the spark engine takes no bound parameters (its dialect inlines lookups)")
        try:
            df = self.spark.sql(sql)
            if fetch == "arrow":
                return df.toArrow()
            rows = df.collect()
            return [tuple(r) for r in rows] if fetch == "all" else None
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None

    def temp_name(self, prefix: str) -> str:
        name = f"sqlanon_{prefix}_{self._token}_{next(self._names)}"
        self._temps.append(name)
        return name

    def execute(self, expression: exp.Expr | str, params: list | None = None) -> None:
        """Runs a statement; our ``CACHE TABLE`` statements go through :meth:`_cache` and drops of
        our temporary tables through :meth:`_drop` (both below)."""
        if not self._closing:
            if isinstance(expression, exp.Cache) and expression.expression is not None:
                return self._cache(expression)
            if isinstance(expression, exp.Drop) and str(expression.args.get("kind") or "").upper() == "VIEW":
                tables = list(expression.args.get("tables") or [])
                if tables and all(t.name in self._temps for t in tables):
                    return self._drop([t.name for t in tables])
        super().execute(expression, params)

    # -- cached tables ------------------------------------------------------------------------------
    # A ``CACHE TABLE t AS SELECT`` view keeps its query's *text*: every statement that reads ``t``
    # re-analyzes that text, and the texts of the cached tables it reads, and so on down the chain.
    # A table built from a table that was itself built from one (bottom-up's vid table: each
    # step's table reads the last one twice, once directly and once through the probe) made every
    # statement's planning grow step by step (docs/measurements.md). So a table whose query
    # reads a cached table that already reads another is
    # *materialized*: its rows are written as Parquet to a temporary directory and the cached view
    # reads those files (a plan of one scan: the chain is cut). A table built straight from the
    # base set (a frequency set rolled up from a saved one) stays one ``CACHE TABLE`` statement.
    #
    # A cached view breaks if a table its text reads is dropped (Spark re-resolves the name), so a
    # drop waits until no live cached table reads the dropped one; other temporary views of ours
    # (hierarchy codes, candidate arrays, CSV inputs) are dropped at close.

    def _cache(self, expression: exp.Cache) -> None:
        name = expression.this.name
        query = expression.expression
        reads = {t.name for t in query.find_all(exp.Table)}
        parents = {p for p in reads if p in self._cached}
        depth = 1 + max(self._cached[p]["depth"] for p in parents) if parents else 0
        if depth < 2:
            super().execute(expression)
            self._cached[name] = {"parents": parents, "path": None, "depth": depth}
            return
        path = self._scratch_path(name)
        sql = self.sql_text(query)
        self.queries += 1
        if self.keep_log:
            self.log.append(sql)
        try:
            self.spark.sql(sql).write.mode("overwrite").parquet(path)
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None
        self._cached[name] = {"parents": set(), "path": path, "depth": 0}
        files = exp.Table(this=exp.to_identifier(path, quoted=True), db=exp.to_identifier("parquet"))
        self._run(self.sql_text(exp.Cache(this=expression.this.copy(), lazy=False, expression=exp.select("*").from_(files))), "none")

    def _scratch_path(self, name: str) -> str:
        """``<scratch dir>/<name>``: the scratch directory is ``spark.sqlanon.scratchDir`` (a
        directory every executor can read: HDFS, an object store, a shared disk) or, on a local
        master, a new local temporary directory; it is removed at close."""
        if self._scratch is None:
            conf = self.spark.conf
            base = conf.get("spark.sqlanon.scratchDir", None)
            if base:
                self._scratch = base.rstrip("/") + f"/sqlanon-{self._token}-{uuid.uuid4().hex[:6]}"
            elif str(self.spark.sparkContext.master).startswith("local"):
                import tempfile

                self._scratch = tempfile.mkdtemp(prefix=f"sqlanon-spark-{self._token}-")
            else:
                raise ConfigError(
                    "this search materializes intermediate tables on Spark: set a directory every "
                    "executor can read, e.g. --spark-conf spark.sqlanon.scratchDir=hdfs:///tmp"
                )
        return f"{self._scratch}/{name}"

    def _drop(self, names: list[str]) -> None:
        """Drops cached tables no live cached table reads (now or as soon as their readers go);
        other temporary views of ours wait for :meth:`close`."""
        self._dropping.update(n for n in names if n in self._cached)
        changed = True
        while changed:
            changed = False
            for name in sorted(self._dropping):
                if any(name in c["parents"] for c in self._cached.values()):
                    continue
                entry = self._cached.pop(name)
                self._dropping.discard(name)
                super().execute(self.dialect.drop_temp(name))
                if entry["path"] is not None:
                    with contextlib.suppress(Exception):
                        self.remove_path(entry["path"])
                changed = True

    def sql_text(self, expression) -> str:
        if isinstance(expression, exp.Create) and expression.args.get("properties") is not None and any(
            isinstance(p, exp.TemporaryProperty) for p in expression.args["properties"].expressions
        ):
            # sqlglot renders CREATE TEMPORARY TABLE as a lazy TEMPORARY VIEW: refuse, never rescan
            raise EngineError("internal: a CREATE TEMPORARY TABLE reached Spark; build it with dialect.create_temp (CACHE TABLE)")
        return super().sql_text(expression)

    def register_arrow(self, name: str, table: pa.Table) -> None:
        """A small Arrow table as a temporary view (hierarchy codes, candidate arrays)."""
        try:
            df = self.spark.createDataFrame(table) if table.num_rows else self.spark.createDataFrame([], _spark_schema(table.schema))
            df.createOrReplaceTempView(name)
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None
        self.queries += 1

    def describe_columns(self, query: exp.Expr) -> list[tuple[str, str]]:
        """Column names and types from the analyzed plan (no rows read)."""
        sql = self.sql_text(query)
        self.queries += 1
        try:
            schema = self.spark.sql(sql).schema
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None
        return [(f.name, f.dataType.simpleString().upper()) for f in schema.fields]

    def source_from(self, source) -> exp.Expr:
        """Parquet as ``parquet.`path```, tables as named; CSV through Spark's reader (a view)."""
        if source.kind != "csv":
            return self.dialect.source_from(source)
        key = f"{source.path}\0{source.delimiter}"
        if key not in self._views:
            name = self.temp_name("csv")
            try:
                df = self.spark.read.options(header="true", sep=source.delimiter or ",", inferSchema="false").csv(source.path)
                df.createOrReplaceTempView(name)
            except self._errors() as err:
                raise EngineError(f"cannot read {source.path}: {bare(err)}") from None
            self._views[key] = name
        return table_ref(self._views[key])

    # -- writing ----------------------------------------------------------------------------------
    def _fs(self, path: str):
        jvm = self.spark._jvm
        hpath = jvm.org.apache.hadoop.fs.Path(path)
        return hpath.getFileSystem(self.spark._jsc.hadoopConfiguration()), hpath

    def path_exists(self, path: str) -> bool:
        fs, hpath = self._fs(path)
        return bool(fs.exists(hpath))

    def remove_path(self, path: str) -> None:
        fs, hpath = self._fs(path)
        if fs.exists(hpath):
            fs.delete(hpath, True)

    def rename_path(self, src: str, dst: str) -> None:
        fs, hsrc = self._fs(src)
        _, hdst = self._fs(dst)
        if not fs.rename(hsrc, hdst):
            raise EngineError(f"cannot rename {src} to {dst}")

    def write_file(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> None:
        """Spark's writer: a directory of part files at ``path`` (which must not exist)."""
        sql = self.sql_text(query)
        self.queries += 1
        try:
            writer = self.spark.sql(sql).write.mode("errorifexists")
            if kind == "parquet":
                writer.parquet(path)
            else:
                writer.options(header="true", sep=delimiter).csv(path)
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None

    def write_file_atomically(self, query: exp.Expr, final: str, kind: str, delimiter: str = ",", overwrite: bool = False, before_rename=None) -> None:
        """Write beside ``final`` (``.name.<id>.tmp``), then rename it into place. With
        ``overwrite`` an existing output is first renamed aside and removed after the new one is in
        place (two renames: a reader may briefly see no output, never a partial one)."""
        parent, _, base = final.rstrip("/").rpartition("/")
        tmp = f"{parent or '.'}/.{base}.{uuid.uuid4().hex[:8]}.tmp"
        old = None
        try:
            self.write_file(query, tmp, kind, delimiter)
            if before_rename is not None:
                before_rename()
            if self.path_exists(final):
                if not overwrite:
                    raise ConfigError(f"output already exists: {final} (use --overwrite)")
                old = f"{parent or '.'}/.{base}.{uuid.uuid4().hex[:8]}.old"
                self.rename_path(final, old)
            self.rename_path(tmp, final)
        finally:
            with contextlib.suppress(Exception):
                self.remove_path(tmp)
        if old is not None:
            with contextlib.suppress(Exception):
                self.remove_path(old)

    def table_provider(self, table: exp.Table) -> str | None:
        """The catalog's provider of ``table`` (``parquet``, ``delta``, ..), from DESCRIBE EXTENDED."""
        try:
            rows = self.spark.sql("DESCRIBE TABLE EXTENDED " + self.sql_text(table)).collect()
        except self._errors() as err:
            raise engine_error(err, engine="Spark") from None
        for r in rows:
            if str(r[0]).strip().lower() == "provider":
                return str(r[1]).strip().lower()
        return None

    def table_exists(self, table: exp.Table) -> bool:
        name = self.sql_text(table)
        try:
            return bool(self.spark.catalog.tableExists(name))
        except self._errors():
            return False

    def resolved_table(self, table: exp.Table) -> tuple[str, ...] | None:
        """The catalog's full name of ``table`` (catalog, namespace.., name), or ``None`` where the
        catalog has no such table: two spellings of one table resolve alike."""
        try:
            t = self.spark.catalog.getTable(self.sql_text(table))
        except self._errors():
            return None
        return (str(t.catalog or ""), *(str(n).lower() for n in (t.namespace or [])), str(t.name).lower())

    def check_replaceable(self, table: exp.Table) -> str:
        """The table's provider, if it replaces atomically (Delta, Iceberg); else a one-line
        error (checked before the scan, and again when replacing)."""
        provider = self.table_provider(table)
        if provider not in ATOMIC_REPLACE_PROVIDERS:
            raise ConfigError(
                f"--in-place on Spark needs a table whose catalog replaces it atomically "
                f"({', '.join(ATOMIC_REPLACE_PROVIDERS)}); {self.sql_text(table)} is a {provider or 'view or unknown'} table: "
                "write --output-table or --output instead"
            )
        return provider

    def replace_table(self, table: exp.Table, query: exp.Expr) -> None:
        """``CREATE OR REPLACE TABLE t USING <provider> AS SELECT ..`` in one statement, where the
        table's provider replaces atomically (Delta, Iceberg); any other provider is refused."""
        provider = self.check_replaceable(table)
        props = exp.Properties(expressions=[exp.FileFormatProperty(this=exp.var(provider.upper()))])
        self.execute(exp.Create(this=table, kind="TABLE", replace=True, expression=query, properties=props))

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Spark SQL has no multi-statement transactions: statements run as they come."""
        yield

    def close(self) -> None:
        """Drop our temporary views and uncache our tables; stop the session only if we started it."""
        self._closing = True
        self.drop_temps()
        if self._scratch is not None:
            with contextlib.suppress(Exception):
                self.remove_path(self._scratch)
        self._cached.clear()
        if not self.borrowed:
            with contextlib.suppress(Exception):
                self.spark.stop()


def _spark_schema(schema: pa.Schema):
    from pyspark.sql import types as T

    mapping = {pa.int32(): T.IntegerType(), pa.int64(): T.LongType(), pa.float64(): T.DoubleType(), pa.string(): T.StringType(), pa.bool_(): T.BooleanType()}
    fields = []
    for f in schema:
        t: T.DataType
        if pa.types.is_list(f.type):
            t = T.ArrayType(mapping.get(f.type.value_type, T.StringType()))
        else:
            t = mapping.get(f.type, T.StringType())
        fields.append(T.StructField(f.name, t, True))
    return T.StructType(fields)


def _spark_memory(limit: str) -> str:
    """DuckDB-style ``4GB``/``500MB`` as Spark's ``4g``/``500m``."""
    text = limit.strip().upper().replace(" ", "").replace("IB", "B")
    for unit, out in (("KB", "k"), ("MB", "m"), ("GB", "g"), ("TB", "t")):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return text[: -len(unit)] + out
    raise ConfigError(f"bad --memory-limit {limit!r}: write e.g. 500MB or 2GB")
