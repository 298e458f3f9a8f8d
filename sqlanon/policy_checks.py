"""Checks of a policy across its keys, made before anything is opened: refuse, never guess.

Each rule exists because the value used to be accepted and silently did something else
(``k: 0`` read as "no k", a sensitive column that is also generalized as a QI, a registry
named ``x.csv`` that DuckDB opened as a database file, ``--output x.json`` written as Parquet).

>>> from sqlanon.policy import Policy
>>> check_policy(Policy(input="a.csv", qi={"age": "bands:5"}, k=0))
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: k must be at least 1, got 0
"""

from __future__ import annotations

import os

from sqlanon.errors import ConfigError

#: file types ``--output`` writes (the suffix decides the format)
OUTPUT_SUFFIXES = {".parquet": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv"}
#: a registry is a DuckDB database file (or a PostgreSQL database)
REGISTRY_SUFFIXES = (".duckdb", ".db")


def output_kind(path: str) -> str:
    """``parquet`` or ``csv`` from the name of an output file; any other name is refused."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in OUTPUT_SUFFIXES:
        shown = f"'{suffix}'" if suffix else "no suffix"
        raise ConfigError(f"--output {path}: unknown file type ({shown}); name a .parquet or .csv file")
    return OUTPUT_SUFFIXES[suffix]


def check_registry_path(path: str | None) -> None:
    from sqlanon.engine.postgres import is_postgres_url

    if not path or is_postgres_url(path):
        return
    if not str(path).lower().endswith(REGISTRY_SUFFIXES):
        raise ConfigError(f"--registry {path}: a registry is a DuckDB database file; name it .duckdb")
    if os.path.isdir(path):
        raise ConfigError(f"--registry {path} is a directory; name a .duckdb file")


def check_report_path(path: str | None) -> None:
    """An HTML report is written to a ``.html`` (or ``.htm``) file, never under another name."""
    if not path:
        return
    if os.path.isdir(path):
        raise ConfigError(f"--report {path} is a directory; name a .html file")
    if not str(path).lower().endswith((".html", ".htm")):
        raise ConfigError(f"--report {path}: the report is an HTML page; name it .html")


def check_policy(policy) -> None:
    """Values that are each well-typed but wrong, alone or together."""
    if policy.k is not None and policy.k < 1:
        raise ConfigError(f"k must be at least 1, got {policy.k}")
    if policy.l is not None and policy.l < 1:
        raise ConfigError(f"l must be at least 1, got {policy.l:g}")
    if policy.threads is not None and policy.threads < 1:
        raise ConfigError(f"threads must be at least 1, got {policy.threads}")
    qis = list(policy.qi) + [c for c in (policy.search_options.get("numeric") or []) if c not in policy.qi]
    if policy.sensitive_column and policy.sensitive_column in qis:
        raise ConfigError(
            f"sensitive column {policy.sensitive_column!r} is also a quasi-identifier; "
            "a column is either generalized (--qi) or protected (--sensitive-column), not both"
        )
    if policy.output and policy.engine != "spark":  # Spark writes a directory of part files
        if os.path.isdir(policy.output):
            raise ConfigError(f"output {policy.output} is a directory; name a file")
        output_kind(policy.output)
    check_registry_path(policy.registry)
    check_report_path(policy.report)
    # a key given is a key used: refuse the ones this run would not read
    if policy.class_column and policy.metric != "cm" and policy.search not in ("bottom-up", "top-down", "genetic"):
        raise ConfigError(f"--class-column {policy.class_column!r} is read by the cm metric and the bottom-up, top-down and genetic searches; "
                          f"search {policy.search} with metric {policy.metric} would ignore it")
    if policy.output_delimiter != "," and not (policy.output and OUTPUT_SUFFIXES.get(os.path.splitext(str(policy.output).rstrip("/"))[1].lower()) == "csv"):
        raise ConfigError(f"output_delimiter {policy.output_delimiter!r} applies to a CSV --output only")
