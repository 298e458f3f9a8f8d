"""sqlanon in dbt: where the ``sqlanon_dbt`` package is, and the dbt-duckdb Python model that
anonymizes by the model's config.

The dbt package (generic tests ``k_anonymous``, ``l_diverse``, ``not_unique_per_row``) ships
inside the wheel as ``sqlanon/dbt/sqlanon_dbt`` (in the source tree: ``dbt/sqlanon_dbt``);
:func:`package_path` (``sqlanon dbt path``) prints it for a ``packages.yml`` ``local:`` entry.

A dbt-duckdb model is three lines; the policy is the model's ``meta: sqlanon:`` config (policy
keys, as in a policy file, and/or ``policy: path/to/policy.yml`` relative to the project)::

    def model(dbt, session):
        from sqlanon.dbt import anonymize_model
        return anonymize_model(dbt, session, dbt.ref("patients"), dbt.config.get("meta"))

The registry row (``sqlanon_releases`` in the dbt database) carries the model's unique id and
the run's invocation id; an unchanged model run again is a re-run of the same release
(``rerun_of``), not a new one (:mod:`sqlanon.release.runs`).

A model materialized ``incremental`` with ``meta: sqlanon: incremental: {on_break: .., partition_column: ..}``
anonymizes fully on its first run and releases only the new rows on later runs, like the first
release (:mod:`sqlanon.dbt.incremental`).
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from sqlanon.config.policy import Policy, _entries
from sqlanon.dbt.incremental import IncrementalConfig, release_model
from sqlanon.errors import ConfigError
from sqlanon.release import runs
from sqlanon.run.api import anonymize

_HERE = os.path.dirname(os.path.abspath(__file__))
#: the wheel's copy, then the source tree's ``dbt/sqlanon_dbt``
_PACKAGE_DIRS = (os.path.join(_HERE, "sqlanon_dbt"), os.path.join(os.path.dirname(os.path.dirname(_HERE)), "dbt", "sqlanon_dbt"))

#: the ``meta:`` key holding sqlanon's config
META_KEY = "sqlanon"
#: keys a dbt model cannot take: dbt names the input (``dbt.ref``) and writes the output itself
_NOT_IN_A_MODEL = ("input", "table", "format", "delimiter", "output", "output_table", "in_place", "overwrite", "output_delimiter")


def package_path() -> str:
    """The folder of the ``sqlanon_dbt`` dbt package (for ``packages.yml``: ``- local: <it>``)."""
    for folder in _PACKAGE_DIRS:
        if os.path.isfile(os.path.join(folder, "dbt_project.yml")):
            return folder
    raise ConfigError(f"the sqlanon_dbt dbt package is not in this installation (looked in {', '.join(_PACKAGE_DIRS)})")


def anonymize_model(dbt, session, relation, meta: dict | None = None, **options: Any):
    """In a dbt-duckdb Python model: anonymize ``relation`` (``dbt.ref(..)``) on dbt's connection
    ``session`` by the model's ``meta: sqlanon:`` config (``meta``: ``dbt.config.get("meta")``;
    keyword ``options`` override it, as in :func:`sqlanon.anonymize`), record the release with
    the model's unique id and the invocation id, and return the release relation for dbt to
    materialize."""
    config = dict((meta or {}).get(META_KEY) or {})
    incremental = IncrementalConfig.from_meta(config.pop("incremental", None))
    policy = model_policy({META_KEY: config}, options, project_dir())
    if incremental is not None:
        return release_model(dbt, session, relation, policy, incremental, unique_id(dbt), invocation_id())
    if getattr(dbt, "is_incremental", False):
        raise ConfigError(f"the model is materialized incremental and its table {dbt.this} exists, but meta.{META_KEY} has no incremental: key; "
                          f"give incremental: {{on_break: suppress}} (its new rows are released like its first release) or materialize it as a table")
    with runs.tagged(unique_id(dbt), invocation_id(), target=str(dbt.this)):
        release = anonymize(policy, input=relation, connection=session)
    return release.relation()


def model_policy(meta: dict | None, options: dict, base: str):
    """The Policy of a model: ``meta[sqlanon]`` (its ``policy:`` file first, then its keys), then
    ``options``. Paths in the keys are relative to ``base`` (the dbt project)."""
    config = dict((meta or {}).get(META_KEY) or {})
    if not config and not options:
        raise ConfigError(f"the model has no sqlanon policy: give meta: {{{META_KEY}: {{k: .., qi: {{..}}}}}} in its config, or a policy file (meta: {{{META_KEY}: {{policy: policy.yml}}}})")
    path = config.pop("policy", None)
    given = _given(config)
    refused = [key for key in (*given, *options) if key in _NOT_IN_A_MODEL]
    if refused:
        raise ConfigError(f"meta.{META_KEY}.{refused[0]} does not apply to a dbt model: dbt gives the input (dbt.ref) and materializes the release")
    inline = Policy.from_dict(config, where=f"meta.{META_KEY}")
    inline._resolve_paths(base)
    if path is None:
        policy = inline
    else:
        policy = Policy.from_file(path if os.path.isabs(path) else os.path.join(base, path))
        for key in given:  # the model's keys over its policy file's
            policy.set(key, inline.get(key))
        out = policy.release
        if out.output or out.output_table or out.in_place:
            raise ConfigError(f"policy {path}: output, output_table and in_place do not apply to a dbt model (dbt materializes the release)")
    if options:
        policy.update(options, "arguments")
    return policy


def _given(config: dict) -> list[str]:
    """The flat policy keys a ``meta`` mapping sets (flat or under their sections)."""
    return [key for key, _ in _entries(config, f"meta.{META_KEY}", coerce=False)]


def unique_id(dbt) -> str:
    """The running model's unique id (``model.<package>.<name>``): from dbt-duckdb's job, else
    from the project's name and the model's relation."""
    for frame in inspect.stack(context=0):
        parsed = frame.frame.f_locals.get("parsed_model")
        if isinstance(parsed, dict) and parsed.get("unique_id"):
            return str(parsed["unique_id"])
    return f"model.{_project_name()}.{dbt.this.identifier}"


def invocation_id() -> str | None:
    """The dbt invocation id of the running ``dbt run``/``dbt build`` (None outside dbt)."""
    try:
        from dbt_common.invocation import get_invocation_id
    except ImportError:
        return None
    return get_invocation_id()


def project_dir() -> str:
    """The dbt project folder of the running invocation (``--project-dir``), else the current one."""
    try:
        from dbt.flags import get_flags

        folder = getattr(get_flags(), "PROJECT_DIR", None)
    except Exception:  # outside a dbt invocation
        folder = None
    return os.path.abspath(str(folder)) if folder else os.getcwd()


def _project_name() -> str:
    import yaml

    path = os.path.join(project_dir(), "dbt_project.yml")
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            return str((yaml.safe_load(fh) or {}).get("name") or "unknown")
    return "unknown"
