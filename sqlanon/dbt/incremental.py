"""The dbt-duckdb **incremental** model: the first run (and every ``--full-refresh``) anonymizes
the model's input fully and starts a lineage; every later run (``dbt.is_incremental``) releases
only the new rows, with the lineage's recorded transformation (``anonymize --like-release``,
:mod:`sqlanon.run.incremental`), and returns them for dbt to append to the model's table.

Its config is ``meta: sqlanon: incremental:`` beside the policy keys::

    meta:
      sqlanon:
        policy: policies/visits_k5.yml
        incremental:
          on_break: suppress           # suppress | hold | refuse: rows whose class is under k
          partition_column: day        # optional: release the input's rows above the watermark
          lineage_check: cumulative    # cumulative | batch

With ``partition_column`` the model passes its whole input (``dbt.ref(..)``) and the new rows are
those whose partition value is above the **watermark**: the highest value among the input rows
the lineage covered, recorded with every release of the model (registry column ``watermark``).
Without it, the model passes the new rows itself (a filter on ``dbt.this``, as dbt users write).
A run that finds no new rows releases nothing and is recorded as a re-run of the lineage's latest
release.

>>> IncrementalConfig.from_meta({"on_break": "hold", "partition_column": "day"})
IncrementalConfig(on_break='hold', lineage_check='cumulative', partition_column='day')
>>> IncrementalConfig.from_meta(None) is None
True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from sqlanon.config.policy import Policy
from sqlanon.engine.duckdb import DuckDBEngine
from sqlanon.errors import ConfigError
from sqlanon.release import lineage, registry, runs
from sqlanon.run.api import _policy_dict, anonymize
from sqlanon.run.incremental import CHECKS, STRATEGIES

#: where the config lives, for messages
WHERE = "meta.sqlanon.incremental"
#: policy keys that name a run's plumbing (the input's temporary view), not the release
_PLUMBING = ("input", "table")


@dataclass(frozen=True)
class IncrementalConfig:
    """``meta: sqlanon: incremental:`` of a model (``true`` for the defaults)."""

    on_break: str = "suppress"
    lineage_check: str = "cumulative"
    partition_column: str | None = None

    @classmethod
    def from_meta(cls, value: Any) -> IncrementalConfig | None:
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if not isinstance(value, dict):
            raise ConfigError(f"{WHERE} must be a mapping (on_break, partition_column, lineage_check) or true, got {value!r}")
        unknown = sorted(set(value) - {"on_break", "partition_column", "lineage_check"})
        if unknown:
            raise ConfigError(f"{WHERE}.{unknown[0]} is not a key of an incremental model (on_break, partition_column, lineage_check)")
        config = cls(**{k: v for k, v in value.items() if v is not None})
        if config.on_break not in STRATEGIES:
            raise ConfigError(f"{WHERE}.on_break must be one of {', '.join(STRATEGIES)}, got {config.on_break!r}")
        if config.lineage_check not in CHECKS:
            raise ConfigError(f"{WHERE}.lineage_check must be one of {', '.join(CHECKS)}, got {config.lineage_check!r}")
        if config.partition_column is not None and (not isinstance(config.partition_column, str) or not config.partition_column):
            raise ConfigError(f"{WHERE}.partition_column must be a column name, got {config.partition_column!r}")
        return config


def release_model(dbt, session, relation, policy: Policy, config: IncrementalConfig, model_id: str, invocation: str | None):
    """The release relation of an incremental model's run: the full release on the first run
    (or ``--full-refresh``), else the new rows released like the lineage (or nothing new)."""
    target = str(dbt.this)
    column = config.partition_column
    if column is not None and column not in relation.columns:
        raise ConfigError(f"{WHERE}.partition_column {column!r} is not a column of the model's input ({', '.join(relation.columns)})")
    if not bool(getattr(dbt, "is_incremental", False)):
        with runs.tagged(model_id, invocation, target=target, watermark=watermark(relation, column)):
            return anonymize(policy, input=relation, connection=session).relation()
    latest, root = _latest_and_root(session, model_id, target)
    refuse_changed_policy(policy, root)
    batch, mark = _new_rows(relation, column, latest)
    nothing = session.sql(exp.select("*").from_(exp.to_table(target, dialect="duckdb")).limit(0).sql("duckdb"))
    if _is_empty(batch):
        _record_rerun(session, latest, int(root["id"]), target, model_id, invocation, mark, config)
        return nothing
    options: dict[str, Any] = {"like_release": int(latest["id"]), "on_break": config.on_break, "lineage_check": config.lineage_check,
                               "suppression": policy.release.suppression}
    options.update({key: policy.get(key) for key in ("memory_limit", "threads") if policy.get(key) is not None})
    with runs.tagged(model_id, invocation, target=target, watermark=mark):
        # appended to the model's table with the registry row, the ledger and the holding table,
        # in one transaction: dbt appends the empty relation returned (nothing, whatever it does next)
        anonymize(input=batch, connection=session, _append_to=target, **options)
    return nothing


def watermark(relation, column: str | None) -> dict | None:
    """``{"column": .., "through": ..}``: the highest value of the partition column among the
    relation's rows (None without a partition column, or with no value)."""
    if column is None:
        return None
    rows = relation.aggregate(exp.Max(this=exp.column(column, quoted=True)).sql("duckdb")).fetchall()
    value = rows[0][0] if rows else None
    return None if value is None else {"column": column, "through": str(value)}


def _new_rows(relation, column: str | None, latest: dict):
    """The batch (the input's rows above the latest release's watermark, or the input as the
    model filtered it) and the watermark to record with it."""
    if column is None:
        return relation, None
    previous = latest.get("watermark")
    if previous is None:
        raise ConfigError(f"{WHERE}.partition_column {column!r}: release {latest['id']} of the model recorded no watermark (it had no partition column): run it with --full-refresh to start a lineage with one")
    if previous.get("column") != column:
        raise ConfigError(f"{WHERE}.partition_column is {column!r}, the lineage's is {previous.get('column')!r} (release {latest['id']}): run it with --full-refresh to start a lineage by {column!r}")
    kind = exp.DataType.build(str(relation.types[relation.columns.index(column)]), dialect="duckdb")
    above = exp.GT(this=exp.column(column, quoted=True), expression=exp.cast(exp.Literal.string(previous["through"]), kind))
    batch = relation.filter(above.sql("duckdb"))
    return batch, watermark(batch, column) or previous


def _is_empty(relation) -> bool:
    rows = relation.aggregate(exp.Count(this=exp.Star()).sql("duckdb")).fetchall()
    return not rows or not rows[0][0]


def _latest_and_root(session, model_id: str, target: str) -> tuple[dict, dict]:
    """The model's latest release and the full release its lineage started from (the latest
    itself when it is one), as the registry lists them, with their policies."""
    engine = DuckDBEngine(connection=session)
    try:
        releases = {int(r["id"]): r for r in registry.list_releases(engine) if r.get("model_id") == model_id}
        if not releases:
            raise ConfigError(f"model {model_id} is incremental and its table {target} exists, but the dbt database's registry has no release of it: run it with --full-refresh to start a lineage")
        latest = releases[max(releases)]
        root_id = int(latest["lineage_root"] if latest.get("lineage_root") is not None else latest["id"])
        if root_id not in releases:
            raise ConfigError(f"release {latest['id']} names lineage root {root_id}, which is not a release of model {model_id}: run it with --full-refresh")
        for rid in {int(latest["id"]), root_id}:
            releases[rid]["policy"] = (registry.get_release(engine, rid) or {}).get("policy") or {}
        return latest, releases[root_id]
    finally:
        engine.close()


def refuse_changed_policy(policy: Policy, root: dict) -> None:
    """A batch is released by its lineage's policy; a model whose policy changed since (a flag
    given is a flag used) is refused, naming the keys, until a full refresh starts a new lineage."""
    recorded = policy.model_copy(deep=True)  # as a run records it: defaults filled in by validate()
    recorded.source.input = recorded.source.input or "relation"
    recorded.validate()
    now = json.loads(json.dumps({k: v for k, v in _policy_dict(recorded).items() if k not in _PLUMBING}, sort_keys=True, default=str))
    then = {k: v for k, v in (root.get("policy") or {}).items() if k not in _PLUMBING}
    if then.pop("search_auto", None) is not None:  # recorded as the search auto chose; asked as auto
        then["search"] = "auto"
    changed = sorted(key for key in set(now) | set(then) if not _same(key, now.get(key), then.get(key)))
    if changed:
        shown = "; ".join(f"{key}: {then.get(key)!r} -> {now.get(key)!r}" for key in changed[:3])
        raise ConfigError(f"the model's sqlanon policy changed since release {root['id']} started its lineage ({shown}); its new rows are released by the lineage's policy: run it with --full-refresh to start a new lineage")


def _same(key: str, now: Any, then: Any) -> bool:
    if key != "qi" or not isinstance(now, dict) or not isinstance(then, dict) or set(now) != set(then):
        return now == then
    # an age spec is recorded with its reference date resolved (``age:2026-12-01,5,10``)
    return all(now[c] == then[c] or (str(now[c]).startswith("age") and str(then[c]).startswith("age:")) for c in now)


def _record_rerun(session, latest: dict, root_id: int, target: str, model_id: str, invocation: str | None, mark: dict | None,
                  config: IncrementalConfig) -> None:
    """A run with no new rows: a registry row that re-runs ``latest`` (its key), released nothing,
    and stays in the lineage (so the next batch is released like it)."""
    engine = DuckDBEngine(connection=session)
    columns = [name for name, _ in engine.describe_columns(exp.select("*").from_(exp.to_table(target, dialect="duckdb")).limit(0))]
    entry = {key: latest.get(key) for key in ("source", "policy", "transformation", "privacy", "metrics")}
    entry.update(search="like-release", rows=0, suppressed_rows=0, input_hash=None)
    was = latest.get("lineage") or {}
    info = {"strategy": config.on_break, "check": config.lineage_check, "columns": columns, "batch_rows": 0, "released_rows": 0,
            "released_from_held": 0, "suppressed_rows": 0, "held_rows": 0, "unseen_rows": 0, "breaking_rows": 0,
            "lineage_min_class": was.get("lineage_min_class"), "lineage_classes": was.get("lineage_classes"), "lineage_meets_k": was.get("lineage_meets_k", True)}
    try:
        with engine.transaction(), runs.tagged(model_id, invocation, target=target, watermark=mark, rerun=latest):
            release_id = registry.record(engine, entry)
            lineage.set_lineage(engine, release_id, int(latest["id"]), root_id, "", info)
    finally:
        engine.close()
