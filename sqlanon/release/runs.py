"""Run keys of a release: who asked for it (a dbt model's unique id), in which run (the
invocation id), and whether it repeats an earlier release.

An orchestrator (the dbt model of :mod:`sqlanon.dbt`) opens :func:`tagged` around
:func:`sqlanon.anonymize`; the registry row then gets four more columns, written in the
release's transaction:

* ``target``: the model's relation (instead of ``relation``, the lazy release dbt materializes);
* ``model_id``: the dbt model's unique id (``model.my_project.patients_k5``);
* ``invocation_id``: the dbt run's invocation id;
* ``release_key``: a hash of the model id, the source, the input rows' hash, the policy and the
  transformation: what makes a release the same release;
* ``rerun_of``: the id of the first release with the same key, when this run repeats it (an
  unchanged model run again), else NULL: a new release;
* ``watermark`` (a dbt incremental model with a partition column, :mod:`sqlanon.dbt.incremental`):
  the partition column and the highest value of it among the input rows the release covered
  (JSON ``{"column": .., "through": ..}``); the model's next run releases the rows above it.

>>> key = release_key({"source": "main.patients", "input_hash": "400:1f", "policy": {"k": 5, "input": "sqlanon_input_1"}, "transformation": {"zip": 2}}, "model.x.m")
>>> key == release_key({"source": "main.patients", "input_hash": "400:1f", "policy": {"k": 5, "input": "sqlanon_input_2"}, "transformation": {"zip": 2}}, "model.x.m")
True
>>> key == release_key({"source": "main.patients", "input_hash": "400:1f", "policy": {"k": 6}, "transformation": {"zip": 2}}, "model.x.m")
False
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
from collections.abc import Iterator

from sqlglot import exp

from sqlanon.expr.templates import template

#: the registry columns of the run keys, added to every registry by ``registry.ensure``
COLUMNS = (("model_id", "VARCHAR"), ("invocation_id", "VARCHAR"), ("release_key", "VARCHAR"), ("rerun_of", "INTEGER"))
#: the registry column of a dbt incremental model's partition watermark
WATERMARK = ("watermark", "VARCHAR")

#: policy keys that name the run's own plumbing (a relation input's temporary view), not the release
_NOT_THE_RELEASE = ("input", "table")

_TAGS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("sqlanon_release_tags", default=None)


@contextlib.contextmanager
def tagged(model_id: str, invocation_id: str | None = None, target: str | None = None, watermark: dict | None = None,
           rerun: dict | None = None) -> Iterator[None]:
    """Record the releases made inside the block with these run keys; ``target``, when given,
    is recorded as the release's target (a dbt model's relation, where dbt materializes it);
    ``watermark`` as its partition watermark; ``rerun`` (a listed release) makes the row a re-run
    of that release whatever its key (an incremental model's run that found no new rows)."""
    token = _TAGS.set({"model_id": model_id, "invocation_id": invocation_id, "target": target, "watermark": watermark, "rerun": rerun})
    try:
        yield
    finally:
        _TAGS.reset(token)


def current() -> dict | None:
    return _TAGS.get()


def add_column_statements() -> list[exp.Expr]:
    """``ALTER TABLE sqlanon_releases ADD COLUMN IF NOT EXISTS ..`` for each run-key column."""
    return [
        exp.Alter(this=exp.to_table("sqlanon_releases"), kind="TABLE",
                  actions=[exp.ColumnDef(this=exp.to_identifier(name), kind=exp.DataType.build(kind), exists=True)])
        for name, kind in (*COLUMNS, WATERMARK)
    ]


def release_key(entry: dict, model_id: str) -> str:
    """What makes a release the same release: the model, the source, the input rows, the policy
    and the transformation (hashed; the policy without the run's temporary input names)."""
    policy = {k: v for k, v in (entry.get("policy") or {}).items() if k not in _NOT_THE_RELEASE}
    what = {"model_id": model_id, "source": entry.get("source"), "input_hash": entry.get("input_hash"), "policy": policy,
            "transformation": entry.get("transformation"), "suppressed_rows": entry.get("suppressed_rows")}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:32]


def tag(engine, release_id: int, entry: dict) -> int | None:
    """Write the run keys of the release just recorded (when :func:`tagged` is open); returns the
    id of the release it re-runs, or None."""
    tags = current()
    if tags is None:
        return None
    rerun = tags.get("rerun")
    rerun_of: int | None
    if rerun is not None:  # the run repeats this release (whose own key and first release it takes)
        key, rerun_of = rerun["release_key"], int(rerun["rerun_of"] if rerun.get("rerun_of") is not None else rerun["id"])
    else:
        key = release_key(entry, tags["model_id"])
        found = engine.scalar(template("registry_rerun_of", release_key=key, id=int(release_id)))
        rerun_of = int(found) if found is not None else None
    engine.execute(template("registry_tag", model_id=tags["model_id"], invocation_id=tags.get("invocation_id"), release_key=key,
                            rerun_of=rerun_of, target=tags.get("target") or entry.get("target"), id=int(release_id)))
    if tags.get("watermark") is not None:
        engine.execute(template("registry_set_watermark", watermark=json.dumps(tags["watermark"], sort_keys=True, default=str), id=int(release_id)))
    return rerun_of


def merge_into(engine, releases: list[dict]) -> list[dict]:
    """Add the run keys to listed releases (``None`` in a registry made before they were stored)."""
    stored = {}
    if engine.scalar(template("registry_has_runs")):
        stored = {r[0]: r[1:] for r in engine.fetch_all(template("registry_list_runs"))}
    marks = {}
    if engine.scalar(template("registry_has_watermark")):
        marks = {r[0]: json.loads(r[1]) for r in engine.fetch_all(template("registry_list_watermarks"))}
    for release in releases:
        values = stored.get(release["id"], (None, None, None, None))
        release.update(zip(("model_id", "invocation_id", "release_key", "rerun_of"), values))
        release["watermark"] = marks.get(release["id"])
    return releases
