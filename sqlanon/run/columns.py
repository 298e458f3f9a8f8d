"""Every column has a role: the columns of a run, named as the engine names them, each a
quasi-identifier, sensitive, kept or dropped, and no QI value that a release would confuse with
suppression.

* :func:`resolve_policy_columns`: the policy's column names (``qi``, the sensitive and class
  columns, dropped, kept, microaggregated and weighted columns, level bounds) spelled as the
  source spells them, found as the engine finds names (:mod:`sqlanon.engine.column_names`:
  ``--qi zip`` finds ``ZIP`` on DuckDB and Spark);
* :func:`column_roles` / :func:`refuse_unassigned`: a release whose policy leaves a column
  without a role is refused before the scan, naming every such column with the profile's verdict
  for it (:func:`sqlanon.profiling.roles.assign`, measured by one aggregate statement over the
  unassigned columns, on a sample of large tables), unless ``keep_others`` releases them as they
  are (then a nearly unique one is still refused: :func:`kept_others`);
* :func:`refuse_marker_values`: a QI whose data holds the suppression marker ``*`` is refused
  (with ``suppression: mask``) once the base scan has counted its values: a masked row would be
  told from those rows by nothing.

>>> from sqlanon.config.policy import Policy
>>> p = Policy(qi={"zip": "mask"}, sensitive_column="dx", drop_columns=["name"], keep_columns=["note"])
>>> column_roles(p, {"zip": "mask"})
{'zip': 'quasi-identifier', 'dx': 'sensitive', 'name': 'dropped', 'note': 'kept'}
"""

from __future__ import annotations

from typing import Any

from sqlanon.errors import ConfigError
from sqlanon.profiling.roles import assign
from sqlanon.profiling.scan import count_rows, scan, source_item
from sqlanon.release.write import SUPPRESSED

#: rows the verdicts of a refusal are measured on (a sample of larger tables): the verdict is a
#: hint in an error, and on the full profile's million rows it cost several whole dry runs
#: (docs/measurements.md)
VERDICT_SAMPLE_ROWS = 100_000
#: what the profile's role of a column asks of the policy
_ADVICE = {"identifier": "an identifier, to drop", "qi": "a quasi-identifier", "sensitive": "sensitive", "insensitive": "insensitive, to keep"}


def _resolved(source, engine, name: Any) -> Any:
    return source.resolve_column(engine, name) if isinstance(name, str) else name


def resolve_policy_columns(policy, session) -> None:
    """Spell every column the policy names as the source does (unknown names are left as given:
    the checks that follow refuse them, with the near spellings)."""
    source, engine = session.source, session.engine

    def one(name: Any) -> Any:
        return _resolved(source, engine, name)

    def keys(mapping: dict) -> dict:
        return {one(c): v for c, v in mapping.items()}

    policy.qi = keys(policy.qi)
    privacy, quality, release, levels = policy.privacy, policy.quality, policy.release, policy.hierarchies
    privacy.sensitive_column = one(privacy.sensitive_column)
    quality.class_column = one(quality.class_column)
    quality.weights = keys(quality.weights)
    levels.min_level, levels.max_level = keys(levels.min_level), keys(levels.max_level)
    release.drop_columns = [one(c) for c in release.drop_columns]
    release.keep_columns = [one(c) for c in release.keep_columns]
    release.microaggregate = keys(release.microaggregate)
    release.linked = {one(c): one(q) for c, q in release.linked.items()}
    release.keep_linked = [one(c) for c in release.keep_linked]
    numeric = policy.strategy.search_options.get("numeric")
    if isinstance(numeric, list):
        policy.strategy.search_options["numeric"] = [one(c) for c in numeric]


def column_roles(policy, qis: dict) -> dict[str, str]:
    """The role the policy gives each column it names: ``quasi-identifier``, ``sensitive``
    (the sensitive column), ``kept`` (``keep_columns``, the class column: released as they are),
    ``microaggregated`` (released as its class's mean or median), ``linked`` (released no finer
    than the QI it follows, ``linked``), or ``dropped``. A QI keeps its
    role whatever else names it."""
    out: dict[str, str] = {c: "quasi-identifier" for c in qis}
    release = policy.release
    named = [
        ([policy.privacy.sensitive_column], "sensitive"),
        (list(release.microaggregate), "microaggregated"),
        (release.drop_columns, "dropped"),
        (list(release.linked), "linked"),
        ([*release.keep_columns, *release.keep_linked, policy.quality.class_column], "kept"),
    ]
    for columns, role in named:
        for c in columns:
            if c is not None:
                out.setdefault(c, role)
    return out


def unassigned(policy, session, qis: dict) -> list[str]:
    """The source's columns the policy gives no role, in the source's order."""
    roles = column_roles(policy, qis)
    return [c for c in session.source.column_names(session.engine) if c not in roles]


def verdicts(session, columns: list[str], sample_rows: int = VERDICT_SAMPLE_ROWS) -> dict[str, str]:
    """The profile's role of each of ``columns`` with its reason (``profile: a quasi-identifier;
    values: dates``),
    measured by one aggregate statement (over a sample of about ``sample_rows`` rows where the
    table is larger; the row count first)."""
    engine, source = session.engine, session.source
    types = dict(source.columns(engine))
    item, _ = source_item(engine, source, count_rows(engine, source), sample_rows)
    out = {}
    for stats in scan(engine, source, [(c, types[c]) for c in columns], item):
        role = assign(stats)
        out[stats.name] = f"profile: {_ADVICE[role.role]}; {role.reason}"
    return out


def refuse_unassigned(policy, session, qis: dict) -> None:
    """Refuse a release whose policy leaves columns without a role (unless ``keep_others``): one
    line naming every such column with the profile's verdict for it."""
    if policy.release.keep_others:
        return
    source, engine = session.source, session.engine
    source.require_columns(engine, list(qis), "quasi-identifier column")  # a misspelt QI is said first
    for column, role in ((policy.privacy.sensitive_column, "sensitive column"), (policy.quality.class_column, "class column")):
        source.require_columns(engine, [] if column is None else [column], role)
    missing = unassigned(policy, session, qis)
    if not missing:
        return
    said = verdicts(session, missing)
    listed = "; ".join(f"{c!r} ({said[c]})" for c in missing)
    raise ConfigError(
        f"{len(missing)} column{'s' if len(missing) > 1 else ''} without a role, released in clear otherwise: {listed}. "
        "Give each one a role (--qi COLUMN=HIERARCHY, --sensitive-column, --keep-column, --drop-column) "
        "or release the rest as they are with --keep-others (keep_others: true)"
    )


def kept_others(policy, session, qis: dict) -> list[str]:
    """The columns ``keep_others`` releases as they are (none without it)."""
    return unassigned(policy, session, qis) if policy.release.keep_others else []


def refuse_marker_values(stats, suppression: str) -> None:
    """Refuse, after the base scan and before the search, a masked release of a QI whose data
    holds the suppression marker: its rows and the suppressed ones would read the same (the
    check counts rows whose QIs are all the marker as suppressed). The rows per leaf come from
    the base scan (:attr:`Statistics.column_freqs`): no statement more."""
    if suppression != "mask":
        return
    holding = []
    for i, h in enumerate(stats.hierarchies):
        code = h.leaf_index.get(SUPPRESSED)
        if code is not None and stats.column_freqs and stats.column_freqs[i][code]:
            holding.append(repr(stats.qis[i]))  # no count: it may be one row's
    if holding:
        raise ConfigError(
            f"quasi-identifier{'s' if len(holding) > 1 else ''} {', '.join(holding)} hold{'s' if len(holding) == 1 else ''} the value {SUPPRESSED!r}, "
            "the marker of suppressed rows: a masked row could not be told from these; recode the value in the data, or drop suppressed rows (--suppression drop)"
        )
