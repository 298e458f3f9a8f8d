"""Checks of a policy across its keys, made before anything is opened: refuse, never guess.

Each rule exists because the value used to be accepted and silently did something else
(``k: 0`` read as "no k", a sensitive column that is also generalized as a QI, a registry
named ``x.csv`` that DuckDB opened as a database file, ``--output x.json`` written as Parquet).

>>> from sqlanon.config.policy import Policy
>>> check_policy(Policy(input="a.csv", qi={"age": "bands:5"}, k=0))
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: k must be at least 1, got 0
"""

from __future__ import annotations

import os

from sqlanon.engine.resources import check_resources
from sqlanon.errors import ConfigError
from sqlanon.engine.urls import is_postgres_url
from sqlanon.files.paths import OUTPUT_SUFFIXES, check_report_path, output_kind, refuse_existing
from sqlanon.search.registry import SEARCHES

#: a registry is a DuckDB database file (or a PostgreSQL database)
REGISTRY_SUFFIXES = (".duckdb", ".db")


def check_registry_path(path: str | None) -> None:
    if not path or is_postgres_url(path):
        return
    if not str(path).lower().endswith(REGISTRY_SUFFIXES):
        raise ConfigError(f"--registry {path}: a registry is a DuckDB database file; name it .duckdb")
    if os.path.isdir(path):
        raise ConfigError(f"--registry {path} is a directory; name a .duckdb file")


def resolve_metric(search: str, metric: str | None, class_column: str | None, options: dict | None = None) -> str | None:
    """The metric a run optimizes: the one given when ``search`` can optimize it, else the
    search's default (``None`` when the search has its own measure and takes no ``--metric``).
    A metric the search cannot optimize is refused before anything is opened.

    >>> resolve_metric("optimal", None, None), resolve_metric("genetic", None, None)
    ('precision', 'lm')
    >>> resolve_metric("bottom-up", "loss", None)
    Traceback (most recent call last):
    ...
    sqlanon.errors.ConfigError: search bottom-up cannot optimize metric 'loss'; it optimizes lm (leave --metric out or give --metric lm)
    """
    spec = SEARCHES[search]
    if spec.metrics is None:  # the lattice family optimizes any metric
        return metric or "precision"
    allowed = spec.metrics
    if search == "bottom-up" and class_column:
        allowed = ()
    objective = (options or {}).get("objective") if search == "genetic" else None
    if metric is None:
        return allowed[0] if allowed else None
    if objective and objective != metric:
        raise ConfigError(f"--metric {metric} and --option objective={objective}: the genetic search optimizes one; give one of the two")
    if metric in allowed:
        return metric
    if allowed:
        raise ConfigError(f"search {search} cannot optimize metric {metric!r}; it optimizes {' or '.join(allowed)} "
                          f"(leave --metric out or give --metric {allowed[0]})")
    why = " with --class-column" if search == "bottom-up" else ""
    raise ConfigError(f"search {search}{why} cannot optimize metric {metric!r}; it optimizes {spec.measure}: leave --metric out")


def _class_readers() -> str:
    """The searches that read a class column (the flexible ones, not the lattice family)."""
    readers = [name for name, spec in SEARCHES.items() if not spec.lattice]
    return f"{', '.join(readers[:-1])} and {readers[-1]}"


def check_policy(policy) -> None:
    """Values that are each well-typed but wrong, alone or together."""
    privacy, release, quality, search = policy.privacy, policy.release, policy.quality, policy.strategy.search
    if privacy.k is not None and privacy.k < 1:
        raise ConfigError(f"k must be at least 1, got {privacy.k}")
    if privacy.l is not None and privacy.l < 1:
        raise ConfigError(f"l must be at least 1, got {privacy.l:g}")
    check_resources(policy.runtime.memory_limit, policy.runtime.threads)
    qis = list(policy.qi) + [c for c in (policy.strategy.search_options.get("numeric") or []) if c not in policy.qi]
    if privacy.sensitive_column and privacy.sensitive_column in qis:
        raise ConfigError(
            f"sensitive column {privacy.sensitive_column!r} is also a quasi-identifier; "
            "a column is either generalized (--qi) or protected (--sensitive-column), not both"
        )
    if release.output and policy.runtime.engine != "spark":  # Spark writes a directory of part files
        if os.path.isdir(release.output):
            raise ConfigError(f"output {release.output} is a directory; name a file")
        output_kind(release.output)
    check_registry_path(release.registry)
    check_report_path(policy.reporting.report)
    refuse_existing(policy.reporting.report, "report file", release.overwrite)
    if quality.class_column and quality.metric != "cm" and SEARCHES[search].lattice:
        raise ConfigError(f"--class-column {quality.class_column!r} is read by the cm metric and the {_class_readers()} searches; "
                          f"search {search} with metric {quality.metric} would ignore it")
    if release.output_delimiter != "," and not (release.output and OUTPUT_SUFFIXES.get(os.path.splitext(str(release.output).rstrip("/"))[1].lower()) == "csv"):
        raise ConfigError(f"output_delimiter {release.output_delimiter!r} applies to a CSV --output only")
