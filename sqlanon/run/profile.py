"""``sqlanon profile``: point sqlanon at a table and get a policy (the measures are :mod:`sqlanon.profiling`'s).

One aggregate statement over the table (over a Bernoulli sample of about ``sample_rows`` rows
where it is larger, and said so) measures every column: type, NULLs, distinct values, uniqueness,
lengths, numeric range and the shares of values that look like e-mail addresses, phone numbers,
national ids, numbers, dates or words (regular expressions run in SQL: no value leaves the
database). From that, each column gets a role with its reason (:mod:`sqlanon.profiling.roles`),
each quasi-identifier a hierarchy computed from the data (:mod:`sqlanon.profiling.proposals`), the
table its re-identification risk with those quasi-identifiers (:mod:`sqlanon.profiling.risk`), and,
when asked, a commented policy that ``sqlanon anonymize --policy`` runs as it is
(:mod:`sqlanon.profiling.writer`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from sqlanon.errors import ConfigError
from sqlanon.profiling.proposals import Proposal, propose, quartiles
from sqlanon.profiling.risk import risk_before
from sqlanon.profiling.roles import ROLES, Role, assign
from sqlanon.profiling.links import find_links, linked_proposal
from sqlanon.profiling.scan import (
    DEFAULT_SAMPLE_ROWS,
    ColumnStats,
    count_rows,
    scan,
    source_item,
)
from sqlanon.profiling.writer import Where, write_policy
from sqlanon.engine import ENGINES
from sqlanon.engine.source import _guess_format
from sqlanon.engine.spark_session import is_spark_session
from sqlanon.files.paths import refuse_existing
from sqlanon.config.policy import Policy
from sqlanon.run.session import Session

__all__ = ["DEFAULT_SAMPLE_ROWS", "profile"]

#: delimiters a CSV's header line is sniffed for when none is given
_DELIMITERS = (",", ";", "\t", "|")


def sniff_delimiter(path: str | None, format: str | None) -> str | None:
    """The delimiter a CSV's header line uses most (``,`` ``;`` tab ``|``), or None (not a CSV
    file, or no delimiter in its first line)."""
    if not path or not os.path.isfile(path) or (format or _guess_format(path)) != "csv":
        return None
    with open(path, "rb") as fh:
        first = fh.read(1 << 20).splitlines()[0:1]
    line = first[0].decode("utf-8", errors="replace") if first else ""
    counts = {d: line.count(d) for d in _DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else None


def _check_options(sample_rows: int, k: int) -> None:
    if isinstance(sample_rows, bool) or not isinstance(sample_rows, int) or sample_rows < 1:
        raise ConfigError(f"--sample-rows must be a whole number of rows, at least 1; got {sample_rows!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 2:
        raise ConfigError(f"--k of the written policy must be at least 2, got {k!r}")


def _column_entry(s: ColumnStats, role, proposal: Proposal | None, sampled: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": s.name, "type": s.type, "rows_read": s.rows, "nulls": s.nulls, "distinct": s.distinct,
        "distinct_in": "sample" if sampled else "table", "uniqueness": round(s.uniqueness, 6),
        "length": {"min": s.min_length, "max": s.max_length, "average": None if s.avg_length is None else round(s.avg_length, 2)},
        "shapes": {k: round(v, 4) for k, v in s.shares.items() if v},
        "role": role.role, "reason": role.reason,
    }
    if s.is_numeric:
        entry["min"], entry["max"] = s.minimum, s.maximum
    if proposal is not None:
        entry["hierarchy"] = {"kind": proposal.kind, "spec": proposal.spec, "levels": proposal.levels, "reason": proposal.reason}
    return entry


def _counted(engine, source) -> tuple[list, int]:
    """The input's columns and rows; an input without either is refused (nothing to profile)."""
    columns = source.columns(engine)
    if not columns:
        raise ConfigError(f"input {source.describe()} has no columns: nothing to profile")
    rows = count_rows(engine, source)
    if rows == 0:
        raise ConfigError(f"input {source.describe()} has no rows: nothing to profile")
    return columns, rows


def _propose_all(engine, source, item, qi_stats: list[ColumnStats], links: dict, rows: int, k: int) -> dict[str, Proposal]:
    """Each quasi-identifier's hierarchy computed from the data, coarse enough for its linked columns."""
    quarts = quartiles(engine, item, [s for s in qi_stats if s.is_numeric and not s.is_date])
    proposals = {s.name: propose(s, quarts, engine, source, rows, k) for s in qi_stats}
    for s in qi_stats:
        proposals[s.name] = linked_proposal(engine, source, s, proposals[s.name], [c for c, q in links.items() if q == s.name])
    return proposals


def _measure(session, sample_rows: int, k: int, progress: Callable[[str], None]) -> tuple[dict, dict[str, Proposal]]:
    engine, source = session.engine, session.source
    progress("counting rows")
    columns, rows = _counted(engine, source)
    item, percent = source_item(engine, source, rows, sample_rows)
    progress(f"measuring {len(columns)} columns" + (f" on a sample of about {percent:g} % of {rows:,} rows" if percent else f" of {rows:,} rows"))
    stats = scan(engine, source, columns, item)
    roles = {s.name: assign(s) for s in stats}
    progress("finding columns that follow a quasi-identifier")
    links, near = find_links(engine, item, stats, roles)
    for column, qi in links.items():
        roles[column] = Role("linked", f"a function of {qi}: released where {qi}'s released value determines it")
    qi_stats = [s for s in stats if roles[s.name].role == "qi"]
    progress(f"proposing hierarchies for {len(qi_stats)} quasi-identifiers")
    proposals = _propose_all(engine, source, item, qi_stats, links, rows, k)
    progress("measuring the risk before anonymization")
    risk = risk_before(engine, source, [s.name for s in qi_stats])
    result: dict[str, Any] = {
        "input": source.describe(),
        "rows": rows,
        "sample": {"percent": percent, "rows_read": stats[0].rows if stats else 0} if percent else None,
        "columns": [_column_entry(s, roles[s.name], proposals.get(s.name), percent is not None) for s in stats],
        "roles": {r: [s.name for s in stats if roles[s.name].role == r] for r in (*ROLES, "linked")},
        "risk": risk,
        "nulls_in_qis": {s.name: s.nulls for s in qi_stats if s.nulls},
        "links": links,
        "near_links": near,
    }
    return result, proposals


def profile(
    input: str | None = None,
    *,
    table: str | None = None,
    format: str | None = None,
    delimiter: str | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: dict[str, str] | list[str] | None = None,
    memory_limit: str | None = None,
    threads: int | None = None,
    connection=None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    k: int = 5,
    write_policy: str | None = None,
    overwrite: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Profile a table: per column its type, NULLs, distinct values, uniqueness and a role with
    the reason; per quasi-identifier a hierarchy; the risk before anonymization; with
    ``write_policy`` a commented policy (and hierarchy files beside it) that ``sqlanon anonymize
    --policy`` runs as it is, with ``k``. Returns one JSON-ready dict (``sqlanon profile --json``).

    ``input``/``table``/``format``/``delimiter``/``engine``/``spark_*``/``connection`` name the
    table as for :func:`sqlanon.anonymize`; a CSV's delimiter is sniffed from its header when not
    given. Tables above ``sample_rows`` rows are measured on a sample of about that many rows
    (hierarchies and the risk still read the whole table).
    """
    _check_options(sample_rows, k)
    refuse_existing(write_policy, "policy file", overwrite)
    say = progress or (lambda message: None)
    if delimiter is None and connection is None:
        delimiter = sniff_delimiter(input, format)
    policy = Policy.from_dict({"input": input, "table": table, "format": format, "delimiter": delimiter, "engine": engine,
                               "spark_master": spark_master, "spark_conf": spark_conf, "memory_limit": memory_limit, "threads": threads})
    if policy.engine is not None and policy.engine not in ENGINES:
        raise ConfigError(f"unknown engine {policy.engine!r}; choose one of {', '.join(ENGINES)}")
    if not input and connection is None and not (policy.engine == "spark" and table):
        raise ConfigError("no input: give --input PATH (a CSV, Parquet, .duckdb file or postgresql:// URL)")
    session = Session(policy, say, connection=connection, read_only=True)
    try:
        result, proposals = _measure(session, sample_rows, k, say)
        result["queries"] = session.engine.queries
        result["policy"] = None
        if write_policy:
            # a SparkSession reads the files or catalog table named (the policy names them and the
            # engine); another connection's table is the caller's (the policy cannot name it)
            spark = is_spark_session(connection)
            where = Where(input=input if connection is None or spark else None, format=format, delimiter=delimiter if delimiter not in (None, ",") else None,
                          table=table, engine=engine or ("spark" if spark else None), spark_master=spark_master, spark_conf=policy.spark_conf,
                          kind=session.source.kind)
            files = write_policy_files(result, where, write_policy, k, overwrite, proposals)
            result["policy"] = files[0]
            result["hierarchy_files"] = files[1:]
        return result
    finally:
        session.close()


write_policy_files = write_policy
