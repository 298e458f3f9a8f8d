"""``check`` by a release's own policy: k, the suppression budget and the privacy models read
from its registry row, so a release sqlanon wrote is checked as it was written.

A release is found by id (``check --release N``, in ``--registry`` or the registry its input
implies) or by its target: ``check --input out.parquet`` looks in the registry beside the file
(``sqlanon_releases.duckdb``), ``check --input w.duckdb --table people_k5`` in the database
itself; the newest release written there is the one. What is given explicitly (``--qi``,
``--k``, ``--max-suppression``, ``--l``, ...) wins over the row; the rest comes from it, and the
result says which release it read (``release``) and each model's verdict (``verdicts``).

>>> sensitive_keys()  # the options of the figures reading the sensitive column
['l', 'sensitive_column', 't', 't_distance', 'beta_likeness', 'delta_disclosure']
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
from sqlanon.privacy.registry import MODELS, check_keys, figures
from sqlanon.release import registry



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
    read = figures()
    for m in models:  # each stored model's figure reads its options back (k, l, t, beta, ...)
        figure = read.get(str(m.get("model")))
        if figure is not None:
            out.update(figure.from_release(m))
    return out


def sensitive_keys() -> list[str]:
    """The model options of the figures whose model reads the sensitive column (and the column)."""
    return list(dict.fromkeys(key for name, figure in figures().items() if any(a.sensitive for a in MODELS[name].aggregates) for key in figure.keys))


def options(found: Found, given: dict[str, Any]) -> dict[str, Any]:
    """The check's model options: each one given, else the release's."""
    out = {key: given.get(key) if given.get(key) is not None else found.settings.get(key) for key in check_keys()}
    asking = [figure.asks for name, figure in figures().items() if any(a.sensitive for a in MODELS[name].aggregates)]
    if given.get("sensitive_column") is None and not any(out.get(key) is not None for key in asking):
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


def verdicts(out: dict, opts: dict, rows_budget: int, models: list[dict]) -> tuple[list[dict], list[str]]:
    """Each model of the release (or given) checked on its measured figure, in registry order
    (figures sharing the key that asks them, as the two l-diversities share ``l``: the release's
    model's, else the first); the models without a figure (k-map, delta-presence, recursive
    (c,l), hierarchical t, ...) listed apart."""
    found: list[dict] = []
    names = {m.get("model") for m in models}
    chosen: dict[str, str] = {}
    for name, figure in figures().items():
        if opts.get(figure.asks) is not None and (figure.asks not in chosen or name in names and chosen[figure.asks] not in names):
            chosen[figure.asks] = name
    read = figures()
    for name in read:
        if name in chosen.values():
            found += read[name].verdicts(name, out, opts, rows_budget)
    checked = {v["model"] for v in found}
    missing = [str(m.get("model")) for m in models if m.get("model") not in checked]
    return found, missing
