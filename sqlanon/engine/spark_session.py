"""Choosing Spark for a run without importing pyspark: is an object a SparkSession, and which
:class:`~sqlanon.engine.source.Source` does a policy name on Spark."""

from __future__ import annotations

import os

from sqlanon.errors import ConfigError
from sqlanon.engine.source import Source


def is_spark_session(obj) -> bool:
    return obj is not None and type(obj).__module__.startswith("pyspark.sql") and hasattr(obj, "sql") and hasattr(obj, "createDataFrame")


def _has_scheme(path: str) -> bool:
    head, sep, _ = path.partition("://")
    return bool(sep) and head.replace("+", "").isalnum()


def source_for_spark(policy) -> Source:
    """``--table db.t`` (a catalog table, no ``--input``), or a Parquet file/directory/glob or a
    CSV file. Local paths are checked here; URIs (``s3a://``, ``hdfs://``) are checked by Spark."""
    if policy.table:
        if policy.input and policy.input != policy.table:
            raise ConfigError("with --engine spark, --table names a table of the Spark catalog: give no --input")
        if policy.format not in (None, "table"):
            raise ConfigError(f"--format {policy.format} with --table: a catalog table has no file format")
        return Source(kind="table", table=policy.table, database=None)
    path = policy.input
    fmt = (policy.format or "").lower()
    if fmt in ("duckdb", "postgres") or str(path).lower().endswith((".duckdb", ".db")) or str(path).startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"--engine spark reads Parquet, CSV or catalog tables (--table db.t), not {path}")
    if _has_scheme(path):
        kind = fmt or ("csv" if path.lower().endswith((".csv", ".tsv", ".txt")) else "parquet")
        if kind not in ("csv", "parquet"):
            raise ConfigError(f"unknown --format {fmt!r} for Spark; choose parquet or csv")
        return Source(kind=kind, path=path, delimiter=policy.delimiter)
    src = Source.open(path, policy.format, None, policy.delimiter)
    if src.kind in ("parquet", "csv"):  # checked here as local: Spark must read that same file, whatever its JVM's folder
        src.path = os.path.abspath(path)
    return src
