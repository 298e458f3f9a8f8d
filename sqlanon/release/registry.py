"""The release registry: every release is recorded in ``sqlanon_releases`` in the target database
(for file outputs, in a registry database beside the output, ``sqlanon_releases.duckdb``)."""

from __future__ import annotations

import datetime as dt
import json
import os

from sqlanon.expr.templates import template
from sqlanon.engine.urls import is_postgres_url, redact
from sqlanon.version import __version__
from sqlanon.errors import ConfigError, SqlanonError
from sqlanon.engine.table_name import BASE_TABLE, TableName, lookup
from sqlanon.engine import connect
from sqlanon.release import lineage
from sqlanon.release import runs

REGISTRY_FILE = "sqlanon_releases.duckdb"
COLUMNS = ["id", "created_at", "source", "target", "search", "transformation", "privacy", "metrics", "rows", "suppressed_rows", "input_hash"]


def default_registry_for(path: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(path)), REGISTRY_FILE)


def _without_passwords(value):
    """The entry with every ``postgresql://user:password@...`` URL in it redacted."""
    if isinstance(value, dict):
        return {k: _without_passwords(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_passwords(v) for v in value]
    if isinstance(value, str) and is_postgres_url(value):
        return redact(value)
    return value


def ensure(engine) -> None:
    engine.execute(template("registry_create"))
    add_columns(engine, [template("registry_add_report")])
    add_columns(engine, runs.add_column_statements())  # model_id, invocation_id, release_key, rerun_of
    add_columns(engine, lineage.add_column_statements())  # parent_id, lineage_root, batch_fingerprint, lineage


def add_columns(engine, alters: list) -> None:
    """Run ``ALTER TABLE sqlanon_releases ADD COLUMN IF NOT EXISTS ..`` statements (older
    registries gain the columns; a no-op on newer ones)."""
    if engine.dialect.add_column_if_not_exists:
        for alter in alters:
            engine.execute(alter)
        return
    # Spark SQL has no ADD COLUMN IF NOT EXISTS: add a column only when the table lacks it
    from sqlglot import exp

    names = {name.lower() for name, _ in engine.describe_columns(exp.select("*").from_("sqlanon_releases").limit(0))}
    for alter in alters:
        actions = alter.args.get("actions") or []
        if all(action.name.lower() in names for action in actions):
            continue
        for action in actions:
            action.set("exists", False)
        engine.execute(alter)


def record(engine, entry: dict) -> int:
    """Insert a release (inside the caller's transaction when there is one); returns its id."""
    ensure(engine)
    entry = _without_passwords(entry)
    values = {
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "source": entry.get("source"),
        "target": entry.get("target"),
        "search": entry.get("search"),
        "policy": json.dumps(entry.get("policy", {}), sort_keys=True, default=str),
        "transformation": json.dumps(entry.get("transformation", {}), default=str),
        "privacy": json.dumps(entry.get("privacy", {}), default=str),
        "metrics": json.dumps(entry.get("metrics", {}), default=str),
        "rows": int(entry.get("rows", 0)),
        "suppressed_rows": int(entry.get("suppressed_rows", 0)),
        "input_hash": entry.get("input_hash"),
        "sqlanon_version": __version__,
        "report": json.dumps(entry["report"], default=str) if entry.get("report") is not None else None,
    }
    engine.execute(template("registry_insert", **values))
    release_id = int(engine.scalar(template("registry_last_id")))
    runs.tag(engine, release_id, entry)  # the run keys, when an orchestrator (dbt) asked for them
    return release_id


def list_releases(engine, where: str | None = None) -> list[dict]:
    """Every release, newest first. ``where`` names the registry in errors (a table
    ``sqlanon_releases`` that is not a registry, a column that is not JSON)."""
    if not _exists(engine):
        return []
    readable(engine, COLUMNS, where)
    rows = engine.fetch_all(template("registry_list"))
    out = [_decode(dict(zip(COLUMNS, r)), where) for r in rows]
    return runs.merge_into(engine, lineage.with_lineage(engine, out))


def run_keys_text(release: dict) -> str:
    """The run keys of a listed release for ``sqlanon releases`` ('' when it has none)."""
    parts = [f"model={release['model_id']}"] if release.get("model_id") else []
    if release.get("invocation_id"):
        parts.append(f"invocation={release['invocation_id']}")
    if release.get("rerun_of") is not None:
        parts.append(f"re-run of {release['rerun_of']}")
    return "  " + " ".join(parts) if parts else ""


#: the columns :func:`get_release` reads
GET_COLUMNS = ["id", "created_at", "source", "target", "search", "policy", "transformation", "privacy", "metrics", "rows", "suppressed_rows", "input_hash"]


def get_release(engine, release_id: int, where: str | None = None) -> dict | None:
    if not _exists(engine):
        return None
    readable(engine, GET_COLUMNS, where)
    row = engine.fetch_one(template("registry_get", id=int(release_id)))
    if row is None:
        return None
    return _decode(dict(zip(GET_COLUMNS, row)), where)


def _named(where: str | None) -> str:
    return f"registry {redact(where) if is_postgres_url(where) else where}" if where else "the registry"


def readable(engine, columns, where: str | None = None) -> None:
    """Refuse, as one line naming the registry, a ``sqlanon_releases`` that another program made
    (it lacks columns a registry has) before a statement reading them fails in the engine's words."""
    from sqlglot import exp

    found = None if hasattr(engine, "replace_table") else lookup(engine, TableName(name="sqlanon_releases"))  # Spark: its catalog's name
    table = found.expression() if found is not None else exp.to_table("sqlanon_releases")
    names = {name.lower() for name, _ in engine.describe_columns(exp.select("*").from_(table).limit(0))}
    missing = [c for c in columns if c not in names]
    if missing:
        raise ConfigError(f"{_named(where)}: table sqlanon_releases is not a sqlanon registry (no column {', '.join(missing)})")


def _exists(engine) -> bool:
    return bool(engine.scalar(template("registry_exists")))


def get_report(engine, release_id: int, where: str | None = None) -> dict | None:
    """The report stored with a release (aggregates only), or None (no such release, or a
    registry written before reports were stored)."""
    if not _exists(engine) or not engine.scalar(template("registry_has_report")):
        return None
    readable(engine, ["id", "report"], where)
    text = engine.scalar(template("registry_get_report", id=int(release_id)))
    if not text:
        return None
    report = _json(text, where, release_id, "report")
    if not isinstance(report, dict):
        raise ConfigError(f"{_named(where)}: release {release_id}: column report holds no report (not a JSON object)")
    return report


def _json(text, where: str | None, release_id, key: str):
    try:
        return json.loads(text)
    except ValueError:
        raise ConfigError(f"{_named(where)}: release {release_id}: column {key} is not JSON (the registry was changed by another program)") from None


def _decode(d: dict, where: str | None = None) -> dict:
    for key in ("policy", "transformation", "privacy", "metrics"):
        if isinstance(d.get(key), str):
            d[key] = _json(d[key], where, d.get("id"), key)
    return d


#: the columns a release row is written to (``report`` is added to older registries by :func:`ensure`)
REQUIRED = ("id", "created_at", "source", "target", "search", "policy", "transformation", "privacy", "metrics", "rows", "suppressed_rows", "input_hash", "sqlanon_version")


def check(engine, where: str) -> None:
    """Refuse, before the search, a registry that cannot take a release row: ``sqlanon_releases``
    in ``engine``'s database is a view, or a table that is not a sqlanon registry (columns
    missing). ``where`` names the registry in the message. Spark's catalog is checked when written."""
    if hasattr(engine, "replace_table"):
        return
    found = lookup(engine, TableName(name="sqlanon_releases"))
    if found is None:
        return
    if found.kind is not None and found.kind != BASE_TABLE:
        raise ConfigError(f"registry {where}: sqlanon_releases is a {found.kind.lower()}, not a sqlanon registry table; name another --registry")
    from sqlglot import exp

    names = {name.lower() for name, _ in engine.describe_columns(exp.select("*").from_(found.expression()).limit(0))}
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise ConfigError(f"registry {where}: table sqlanon_releases is not a sqlanon registry (no column {', '.join(missing)}); name another --registry")


def check_file(path: str, input_database: str | None = None) -> None:
    """Refuse, before the search, a registry database a file release could not be recorded in:
    the input ``.duckdb`` itself (open read-only by this run), a file that is not a DuckDB
    database, one without write permission, a ``sqlanon_releases`` that is not a registry
    (:func:`check`), or a missing file whose folder cannot be written. Nothing is created."""
    if is_postgres_url(path):
        engine = connect(database=path)
        try:
            check(engine, redact(path))
        finally:
            engine.close()
        return
    if input_database and not is_postgres_url(input_database) and os.path.exists(path) and os.path.samefile(path, input_database):
        raise ConfigError(f"--registry {path} is the input database; name another file (a table release, --output-table or --in-place, is recorded in the input database)")
    if not os.path.exists(path):
        folder = os.path.dirname(os.path.abspath(path))
        while not os.path.exists(folder):
            folder = os.path.dirname(folder)
        if not os.access(folder, os.W_OK):
            raise ConfigError(f"--registry {path}: cannot create it, folder {folder} is not writable")
        return
    if not os.access(path, os.W_OK):
        raise ConfigError(f"--registry {path} is not writable")
    try:
        engine = connect(database=path, read_only=True)
    except SqlanonError as err:
        message = str(err)
        raise type(err)(f"--registry {message}" if message.startswith(path) else f"--registry {path}: {message}") from None
    try:
        check(engine, path)
    finally:
        engine.close()


def for_release(database: str, release_id: int, full_paths: bool = False) -> tuple[dict, dict]:
    """``(registry entry, stored report)`` of a past release; ConfigError when it has none.
    ``full_paths``: the input and output as the registry row recorded them (the stored report
    shows them as its run chose, :mod:`sqlanon.report.paths`)."""
    if not is_postgres_url(database) and not os.path.isfile(database):
        raise ConfigError(f"registry database not found: {database}")
    engine = connect(database=database, read_only=True)
    try:
        entry = get_release(engine, release_id, where=database)
        if entry is None:
            raise ConfigError(f"release {release_id} is not in the registry {redact(database) if is_postgres_url(database) else database}")
        stored = get_report(engine, release_id, where=database)
    finally:
        engine.close()
    if not stored:
        raise ConfigError(f"release {release_id} in {database} was recorded without a report (made by an older sqlanon); re-run it to get one")
    stored.setdefault("output", entry.get("target"))
    stored.setdefault("input", entry.get("source"))
    if full_paths:
        stored.update({key: entry[column] for key, column in (("input", "source"), ("output", "target")) if entry.get(column)})
    stored["release_id"] = entry["id"]
    stored["policy"] = entry.get("policy")
    return entry, stored
