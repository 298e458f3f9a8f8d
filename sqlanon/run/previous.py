"""Top-down's previous releases (``--previous``), resolved by the run before the search: a
Parquet/CSV path, a table of the input database, or a release id of the registry (read on the
input's connection, or on a read-only one opened and closed here: the search opens none)."""

from __future__ import annotations

import os

from sqlanon.engine import connect, is_postgres_url
from sqlanon.engine.source import Source
from sqlanon.errors import ConfigError
from sqlanon.release import registry as reg_mod



def resolve_previous(ref: str, engine, registry: str | None = None, depth: int = 0) -> tuple[str, Source]:
    """A previous release: a Parquet/CSV path, a table of the input database, or a registry id."""
    ref = str(ref).strip()
    if not ref:
        raise ConfigError("empty --previous")
    if os.path.exists(ref) or any(ch in ref for ch in "*?["):
        if ref.lower().endswith((".duckdb", ".db")):
            raise ConfigError(f"--previous {ref}: name a table of the input database or a Parquet/CSV file, not a database file")
        return ref, Source.open(ref)
    if ref.isdigit() and depth == 0:
        return _from_registry(ref, engine, registry)
    src = Source(kind="table", table=ref, database=engine.database)
    try:
        src.columns(engine)
    except Exception:
        raise ConfigError(f"--previous {ref}: not a file, a release id, or a table of the input database") from None
    return ref, src



def _from_registry(ref: str, engine, registry: str | None) -> tuple[str, Source]:
    """Release id ``ref`` of the registry (``registry``, the input database, or the working
    directory's registry file): the source where that release was written."""
    db = engine.database or ""
    candidates = (registry, db, os.path.join(os.getcwd(), reg_mod.REGISTRY_FILE))
    places = [p for p in candidates if p and p != ":memory:" and (is_postgres_url(p) or os.path.exists(p))]
    for place in places:
        entry = _registry_entry(engine, place, db, int(ref))
        if entry:
            target = entry.get("target") or (entry.get("policy") or {}).get("output") or (entry.get("policy") or {}).get("output_table")
            if not target:
                raise ConfigError(f"release {ref} in {place} does not say where it was written")
            if isinstance(target, str) and target.startswith("table "):
                target = target[len("table "):]
            return f"release {ref} ({target})", resolve_previous(target, engine, registry, 1)[1]
    raise ConfigError(f"--previous {ref}: no such release in the registry ({', '.join(places) or 'no registry found'})")


def _registry_entry(engine, place: str, db: str, release_id: int):
    """The registry row of ``release_id`` in ``place`` (the input database's own connection
    when ``place`` is it, else a read-only one opened and closed here)."""
    if place == db or (not is_postgres_url(place) and not is_postgres_url(db) and os.path.abspath(place) == os.path.abspath(db)):
        return reg_mod.get_release(engine, release_id)
    other = connect(database=place, read_only=True)
    try:
        return reg_mod.get_release(other, release_id)
    finally:
        other.close()
