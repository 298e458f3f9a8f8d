"""The ``--json`` report of ``sqlanon anonymize`` (and ``Release.to_dict()``): its stable keys.

The model documents and checks the keys every run reports; searches, privacy models and the risk
report add keys of their own (``trace``, ``lm``, ``evaluations``, ``level_bounds``, ...), so
further keys are allowed. ``sqlanon schema report`` prints its JSON Schema
(``schemas/report.schema.json``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class MetricValue(_Open):
    name: str = Field(description="The metric optimized (precision, lm, ...).")
    value: float = Field(description="Its value for the released plan (lower is better).")


class PrivacySummary(_Open):
    models: list[dict[str, Any]] = Field(description="The privacy models required, with their parameters.")
    classes: int = Field(description="Equivalence classes released (suppressed ones not counted).")
    min_class_size: int | None = Field(description="Smallest released class (re-measured on the data).")
    suppressed_rows: int = Field(description="Rows suppressed (re-measured on the data).")
    min_distinct_sensitive: int | None = Field(None, description="Smallest number of distinct sensitive values in a released class.")


class HierarchySummary(_Open):
    attribute: str
    origin: str
    leaves: int
    levels: int
    distinct_per_level: list[int]


class ReportWarning(_Open):
    kind: str = Field(description="near_top: the release keeps nearly nothing (>= 90 % of rows suppressed or ARX's arithmetic Loss >= 0.9).")
    cause: str = Field(description="The limit the search stopped by (time_limit, step_limit), or requirement.")
    message: str


class Report(_Open):
    """One anonymization run: what was asked, what plan was chosen, what it achieves."""

    model_config = ConfigDict(title="sqlanon anonymize --json report")
    search: str = Field(description="The search that chose the plan.")
    k: int | None = Field(description="k of k-anonymity.")
    transformation: dict[str, int | list[str]] = Field(
        description="Per quasi-identifier: the hierarchy level (lattice searches) or the released values of a flexible cut."
    )
    metric: MetricValue
    suppressed_rows: int
    rows: int = Field(description="Rows of the input.")
    nodes_evaluated: int
    queries: int = Field(description="SQL statements executed.")
    nodes_local: int | None = Field(None, description="Of the nodes the statistics evaluated, those grouped in-process over the base frequency set's codes, fetched once (no statement each; search option local_rows). Absent when none.")
    local_route: str | None = Field(None, description="Which path the base frequency set's nodes took and why: 'in-process: N tuples need X MiB of a Y MiB budget', 'in-process (histograms): ...' (a sensitive-attribute model's per-class histograms) or 'sql: ...' (the budget is the engine's memory limit, on PostgreSQL and Spark the memory_limit given, else half the memory available). Absent when the in-process path was not asked (local_rows=0, a requirement needing more than class sizes that the histograms do not answer).")
    seconds: float | None = Field(description="Wall time of the run.")
    timings: dict[str, float] | None = Field(None, description="Seconds per phase: hierarchies (opening the input, loading and building hierarchies), base_scan, search, verify (the final plan re-measured), report (utility, risk, the SQL listing; the HTML page is written after), write (the release and its registry row). They add up to at most seconds.")
    cpu_timings: dict[str, float] | None = Field(None, description="The same phases in CPU seconds of the process, every thread's (the engine's included): over timings, about the threads a phase kept busy.")
    output: str | None = Field(description="Where the release was written (a path or 'table NAME'); null when nothing was written.")
    release_id: int | None = Field(None, description="Id of the release in the registry (when written).")
    max_suppression: float
    suppression_budget: int = Field(description="Rows that may be suppressed (MaxSup budget).")
    privacy: PrivacySummary
    quasi_identifiers: list[str]
    hierarchies: list[HierarchySummary]
    weights: dict[str, float] | None = Field(None, description="Attribute weights as the metric used them (normalized).")
    nulls: dict[str, dict[str, int | str]] | None = Field(None, description="Per quasi-identifier holding NULLs or not treating them as a value: mode (value | suppress | refuse, policy nulls) and rows (its rows holding NULL: for suppress, the input's; else among the rows not withheld by a suppress QI, which null_suppressed_rows counts once each). Absent when no QI holds NULL.")
    null_suppressed_rows: int | None = Field(None, description="Rows suppressed because a nulls: suppress quasi-identifier is NULL there (in suppressed_rows, counted against suppression_budget). Absent when none.")
    stopped_by: str | None = Field(None, description="Heuristic searches (lightning, genetic, bottom-up): why the search ended: time_limit, step_limit, or by itself (exhausted, iterations, done).")
    warnings: list[ReportWarning] | None = Field(None, description="Present when the release deserves a second look (also printed on stderr).")
    incremental: dict[str, Any] | None = Field(None, description="An incremental release (--like-release N, search like-release): the lineage (like_release, lineage_root), strategy, check, the batch's rows released, suppressed, held and unseen, and the lineage's smallest class (lineage_min_class, lineage_meets_k).")


def validate_report(report: dict) -> Report:
    """Check a report against the model (raises pydantic's ValidationError)."""
    return Report.model_validate(report)
