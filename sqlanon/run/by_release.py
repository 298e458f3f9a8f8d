"""``check`` by a release's own policy: k, the suppression budget and the privacy models read
from its registry row, so a release sqlanon wrote is checked as it was written.

A release is found by id (``check --release N``, in ``--registry`` or the registry its input
implies) or by its target: ``check --input out.parquet`` looks in the registry beside the file
(``sqlanon_releases.duckdb``), ``check --input w.duckdb --table people_k5`` in the database
itself; the newest release written there is the one. What is given explicitly (``--qi``,
``--k``, ``--max-suppression``, ``--l``, ...) wins over the row; the rest comes from it, and the
result says which release it read (``release``) and each model's verdict (``verdicts``).

>>> verdict("k-anonymity", "k=5", 7, True)
{'model': 'k-anonymity', 'required': 'k=5', 'measured': 7, 'ok': True}
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from sqlanon.engine import connect
from sqlanon.engine.source import _guess_format
from sqlanon.engine.urls import is_postgres_url, redact
from sqlanon.errors import ConfigError
from sqlanon.privacy.base import budget_rows
from sqlanon.release import registry

#: the privacy-model options ``check`` takes, read from the release when not given
MODEL_OPTIONS = ("k", "max_suppression", "l", "t", "t_distance", "sensitive_column", "beta_likeness", "delta_disclosure", "average_risk")
#: numbers compared with this tolerance (entropies, distances)
EPS = 1e-9


@dataclass
class Found:
    """A release of a registry: its row, its stored report, where it was read and what to check."""

    entry: dict
    report: dict
    registry: str
    input: str
    table: str | None = None
    format: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict:
        return {"id": self.entry["id"], "registry": redact(self.registry), "target": self.entry.get("target"),
                "created_at": self.entry.get("created_at"), "models": self.settings.get("models", []),
                "suppression_budget": self.settings.get("budget")}


def release_location(release) -> tuple[str, str | None, str | None]:
    """(input, table, format) of a :class:`~sqlanon.release.result.Release` written to a file or a
    table; one that lives only in memory or as a lazy relation is refused (check its rows where
    they are written: give ``output=``)."""
    state = release._state
    kind = state.get("kind")
    if kind in ("parquet", "csv"):
        return state["path"], None, kind
    if kind in ("table", "in_place") and state.get("connection") is not None and state.get("owned") is None:
        raise ConfigError(f"this release is table {state['table']} of your connection: check it as sqlanon.check(<its database file>, table={state['table']!r})")
    if kind in ("table", "in_place") and state.get("database") and state.get("database") != ":memory:":
        return state["database"], state["table"], "postgres" if state.get("postgres") else "duckdb"
    raise ConfigError(f"check reads a written release; this one is {release.output or 'not written'} (give anonymize output= or output_table= with a database)")


def _registry_of(input: str | None, table: str | None, format: str | None) -> str | None:
    """The registry an input's release is recorded in: the database of a table, the file beside a file."""
    if not input:
        return None
    fmt = (format or _guess_format(input)).lower()
    if fmt in ("duckdb", "postgres") or is_postgres_url(input):
        return input if table else None
    return registry.default_registry_for(input)


def _open_registry(path: str):
    if not is_postgres_url(path) and not os.path.isfile(path):
        return None
    return connect(database=path, read_only=True)


def locate(input: str | None, table: str | None, format: str | None, release: int | None, registry_path: str | None) -> Found | None:
    """The release to check by: ``release`` (an id; then it must exist), or the newest one whose
    target is ``input`` (``table``), or None when the registry knows nothing of the input."""
    path = registry_path or _registry_of(input, table, format)
    if path is None:
        if release is not None:
            raise ConfigError(f"--release {release} needs --registry (the registry database), or --input of the release")
        return None
    engine = _open_registry(path)
    if engine is None:
        if release is not None or registry_path:
            raise ConfigError(f"registry database not found: {path}")
        return None
    try:
        entry = _entry(engine, path, release, input, table)
        if entry is None:
            return None
        stored = registry.get_report(engine, entry["id"]) or {}
    finally:
        engine.close()
    found = Found(entry, stored, path, *_target_input(entry, path, input, table, format))
    found.settings = settings(entry, stored)
    return found


def _entry(engine, path: str, release: int | None, input: str | None, table: str | None) -> dict | None:
    if release is not None:
        if isinstance(release, bool) or release < 1:
            raise ConfigError(f"--release must be a release id (1, 2, ...), got {release}")
        entry = registry.get_release(engine, release)
        if entry is None:
            raise ConfigError(f"release {release} is not in the registry {redact(path)}")
        return entry
    matches = [e for e in registry.list_releases(engine) if _is_target(e.get("target"), path, input, table)]
    return registry.get_release(engine, max(e["id"] for e in matches)) if matches else None  # the row with its policy


def _is_target(target: str | None, path: str, input: str | None, table: str | None) -> bool:
    if not target or not input:
        return False
    if table:
        return target.startswith("table ") and _table_key(target[len("table "):]) == _table_key(table)
    if target.startswith("table ") or target == "relation":
        return False
    return any(os.path.realpath(candidate) == os.path.realpath(input) for candidate in _target_paths(target, path))


def _table_key(name: str) -> str:
    from sqlglot import exp

    return exp.to_table(name, dialect="duckdb").name.lower()


def _target_paths(target: str, registry_path: str) -> list[str]:
    """Where a file target is now: as recorded (relative to where sqlanon ran), or beside its
    registry (which sits in the output's folder)."""
    return [target, os.path.join(os.path.dirname(os.path.abspath(registry_path)), os.path.basename(target.rstrip("/")))]


def _target_input(entry: dict, path: str, input: str | None, table: str | None, format: str | None) -> tuple:
    """(input, table, format) to measure: what the caller gave, or the release's target."""
    if input:
        return input, table, format
    target = entry.get("target") or ""
    if target == "relation":
        raise ConfigError(f"release {entry['id']} is a relation (nothing was written; its consumer, e.g. dbt, materialized it): check that table with --input and --table")
    if target.startswith("table "):
        return path, target[len("table "):], "postgres" if is_postgres_url(path) else "duckdb"
    for candidate in _target_paths(target, path):
        if os.path.exists(candidate):
            return candidate, None, None
    raise ConfigError(f"release {entry['id']} was written to {target}, which is not there any more; give --input")


def settings(entry: dict, stored: dict) -> dict[str, Any]:
    """What the release was written to meet: its models, k, budget, sensitive column, QIs."""
    privacy = entry.get("privacy") or stored.get("privacy") or {}
    models = list(privacy.get("models") or [])
    policy = entry.get("policy") or {}
    out: dict[str, Any] = {"models": models, "qi": list(stored.get("quasi_identifiers") or (policy.get("qi") or {}).keys()),
                           "max_suppression": stored.get("max_suppression", policy.get("max_suppression")),
                           "budget": stored.get("suppression_budget"), "sensitive_column": policy.get("sensitive_column")}
    for m in models:
        name = m.get("model")
        if name == "k-anonymity":
            out["k"] = m.get("k")
        elif name in ("distinct-l-diversity", "entropy-l-diversity"):
            out["l"] = m.get("l")
        elif name == "t-closeness" and m.get("distance") in ("equal", "ordered"):
            out["t"], out["t_distance"] = m.get("t"), m.get("distance")
        elif name == "enhanced-beta-likeness":
            out["beta_likeness"] = m.get("beta")
        elif name == "delta-disclosure":
            out["delta_disclosure"] = m.get("delta")
        elif name == "average-risk":
            out["average_risk"] = m.get("r")
    return out


def options(found: Found, given: dict[str, Any]) -> dict[str, Any]:
    """The check's model options: each one given, else the release's."""
    out = {key: given.get(key) if given.get(key) is not None else found.settings.get(key) for key in MODEL_OPTIONS}
    if given.get("sensitive_column") is None and not any(out.get(key) is not None for key in ("l", "t", "beta_likeness", "delta_disclosure")):
        out["sensitive_column"] = None  # the release's sensitive column is read only by a model that needs it
    if out.get("k") is None:
        out["max_suppression"] = None
    return out


def budget(found: Found, given: dict[str, Any], rows: int) -> int:
    """The suppression budget in rows: the release's (as its run computed it) unless
    ``max_suppression`` is given."""
    if given.get("max_suppression") is not None or found.settings.get("budget") is None:
        fraction = given.get("max_suppression") if given.get("max_suppression") is not None else found.settings.get("max_suppression")
        return budget_rows(float(fraction or 0.0), rows)
    return int(found.settings["budget"])


def verdict(model: str, required: str, measured, ok: bool) -> dict:
    return {"model": model, "required": required, "measured": measured, "ok": bool(ok)}


#: the models :func:`verdicts` reads a measured figure for (the others are left to their Python twin,
#: :func:`sqlanon.run.check.release_twins`, or listed as not checked)
FIGURED = ("k-anonymity", "distinct-l-diversity", "entropy-l-diversity", "t-closeness", "enhanced-beta-likeness", "delta-disclosure", "average-risk")


def verdicts(out: dict, opts: dict, rows_budget: int, models: list[dict]) -> tuple[list[dict], list[str]]:
    """Each model of the release (or given) checked on the measured figures; the models the
    check cannot measure (k-map, delta-presence, recursive (c,l), hierarchical t, ...) listed apart."""
    found: list[dict] = []
    if opts.get("k") is not None:
        found.append(verdict("k-anonymity", f"k={opts['k']}", out.get("k"), out.get("k") is not None and out["k"] >= opts["k"]))
        found.append(verdict("suppression", f"<= {rows_budget:,} rows", out.get("suppressed_rows"), out.get("suppressed_rows", 0) <= rows_budget))
    names = {m.get("model") for m in models}
    if opts.get("l") is not None:
        kind = "entropy-l-diversity" if "entropy-l-diversity" in names else "distinct-l-diversity"
        measured = out.get("l_entropy") if kind == "entropy-l-diversity" else out.get("l_distinct")
        found.append(verdict(kind, f"l={opts['l']}", measured, measured is not None and measured >= opts["l"] - EPS))
    if opts.get("t") is not None:
        found.append(verdict("t-closeness", f"t={opts['t']} ({opts.get('t_distance') or 'equal'})", out.get("t"), out.get("t") is not None and out["t"] <= opts["t"] + EPS))
    for key, name, param in (("beta_likeness", "enhanced-beta-likeness", "beta"), ("delta_disclosure", "delta-disclosure", "delta"), ("average_risk", "average-risk", "r")):
        if opts.get(key) is not None:
            found.append(verdict(name, f"{param}={opts[key]}", out.get(key), out.get(f"{key}_ok", False)))
    checked = {v["model"] for v in found}
    missing = [str(m.get("model")) for m in models if m.get("model") not in checked]
    return found, missing
