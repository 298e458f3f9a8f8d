"""The Python API: ``anonymize`` (plan + release), ``check`` (measure any table), ``plan_sql``.

>>> import sqlanon
>>> release = sqlanon.anonymize(input="adult.csv", delimiter=";", qi={"age": "age.csv"}, k=5,
...                             output="out.parquet")         # doctest: +SKIP
>>> release.transformation, release.metric.value              # doctest: +SKIP
>>> sqlanon.anonymize(df, qi={"age": "age.csv"}, k=5).to_pandas()   # a DataFrame in and out  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import importlib
import time
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

from sqlglot import exp

from sqlanon.release import microaggregation, write as release_mod
from sqlanon.errors import ConfigError, SqlanonError, UnsatisfiableError, from_os_error
from sqlanon.metrics import METRICS, loss as arx_loss
from sqlanon.plan import Plan
from sqlanon.config.policy import Policy
from sqlanon.privacy import Requirement, requirement_from_policy
from sqlanon.search.registry import SEARCHES
from sqlanon.search.context import SearchContext
from sqlanon.search.lattice.lattice import level_bounds
from sqlanon.expr.atoms import Params, col
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.stats import Statistics
import sqlanon.stats.grouped_pass as grouped_pass
from sqlanon.stats.local.sets import route as local_route
from sqlanon.expr.atoms import if_
from sqlanon.run.session import Session
from sqlanon.search.lattice import local_recoding
from sqlanon.config.frontdoor import normalize
from sqlanon.release.result import Release, lazy_release
from sqlanon.release.linked import check_links
from sqlanon.run.refusals import refuse_in_one_pass, sketched_columns
from sqlanon.release import in_memory
from sqlanon.engine.spark_session import is_spark_session
from sqlanon.progress import as_reporter
from sqlanon.search.choose import choose_search, preflight, refuse_limits
from sqlanon.search.lattice.spec import BUILT, lattice_size
from sqlanon.run.previous import resolve_previous
from sqlanon.release.searched import as_ran, search_label
from sqlanon.search import limits
from sqlanon.search.limits import near_top_warning
from sqlanon.report import utility, write_html
from sqlanon.report.paths import report_paths
from sqlanon.search.bounds import planner_inputs
from sqlanon.search.lattice import safepub
from sqlanon.metrics.loss import target
from sqlanon.metrics.base import normalize_weights
from sqlanon import risk
from sqlanon.release.registry import _without_passwords
from sqlanon.hierarchy import Hierarchy
from sqlanon.hierarchy.dates import resolved_specs
from sqlanon.run.script import sections
from sqlanon.run import columns as roles
from sqlanon.run import incremental


def build_requirement(policy: Policy, session: Session | None = None) -> tuple[Requirement, dict]:
    """The policy's privacy models (:data:`sqlanon.privacy.MODELS`, each read by its own
    ``from_policy``) and the extra :class:`Statistics` keywords they need."""
    requirement, extras = requirement_from_policy(policy, session)
    if policy.privacy.epsilon is None:  # SafePub's keys without --epsilon are refused there
        safepub.validate(policy)
    return requirement, extras


def make_metric(policy: Policy, qis: list[str]):
    """The policy's metric, with its attribute weights (``weights:``; unlisted QIs weigh 1)."""
    name = policy.quality.metric or "precision"  # a search with its own measure (top-down, bottom-up with a class) reads none
    if not policy.quality.weights:
        return METRICS[name]()
    for column in policy.quality.weights:
        if column not in qis:
            raise ConfigError(f"weights names {column!r}, which is not a quasi-identifier ({', '.join(qis)})")
    return METRICS[name](weights=[policy.quality.weights.get(q, 1.0) for q in qis])


def check_transforms(policy: Policy, session: Session, requirement: Requirement, qis: list[str]) -> None:
    """Local recoding and microaggregation options, refused before the scan when they cannot work."""
    if policy.strategy.local_iterations is not None and not policy.strategy.local_recoding:
        raise ConfigError("--local-iterations needs --local-recoding")
    if policy.strategy.local_recoding:
        local_recoding.require_supported(requirement, policy.quality.metric, policy.strategy.search, BUILT)
        if policy.strategy.local_iterations is not None and policy.strategy.local_iterations < 1:
            raise ConfigError(f"local_iterations must be at least 1, got {policy.strategy.local_iterations}")
    if policy.release.microaggregate:
        microaggregation.validate(policy.release.microaggregate, session.source.columns(session.engine), qis, policy, session.engine, session.source)


def qi_specs(policy: Policy) -> dict[str, str]:
    qis = dict(policy.qi)
    for column in policy.strategy.search_options.get("numeric", []) or []:
        spec = qis.setdefault(column, "numeric")
        if spec not in ("numeric", None) and not (isinstance(spec, str) and spec.strip() == "numeric"):
            raise ConfigError(f"{column!r} has a hierarchy (--qi {column}={spec}) and is declared --numeric; give one of the two")
    return qis


def anonymize(policy=None, *, progress: Callable[[str], None] | None = None, dry_run: bool = False, connection=None, _fail_after_write: bool = False,
              _append_to: str | None = None, **options: Any):
    """Find the plan and write the release; returns a :class:`sqlanon.release.result.Release` (typed
    fields, ``.to_dict()`` the CLI's ``--json`` object, ``.relation()``, ``.to_arrow()``, ``.to_pandas()``).

    ``policy`` may be a :class:`Policy`, a dict of policy keys, a YAML path, a **DuckDB
    relation** (the input), or a **pandas/polars DataFrame or Arrow table** (the input, read by
    DuckDB where it is, :mod:`sqlanon.config.frames`; with no output and no ``connection``, the
    release is an in-memory table, :mod:`sqlanon.release.in_memory`); keyword options override it (same names as the policy keys / CLI
    flags; ``qi`` values may be builder calls or Hierarchy objects, ``privacy`` a list of privacy
    model objects, see :mod:`sqlanon.config.frontdoor`). ``connection`` runs on an open DuckDB (or psycopg
    3 PostgreSQL) connection instead (``table=`` names the input; outputs go to its database; the
    connection is not closed, and an open transaction of the caller's is joined rather than
    committed). On a DuckDB connection with no output, the release is the lazy ``.relation()``.
    (``_append_to``: a batch's rows are appended to this existing table of the connection, in the
    transaction of its registry row; the dbt incremental model's, :mod:`sqlanon.dbt.incremental`.)
    """
    policy, options, rel_input, connection = normalize(policy, options, connection)
    owned = rel_input.owned if rel_input is not None else None  # a DataFrame's in-memory connection, sqlanon's own
    try:
        release = _anonymize(policy, progress=progress, dry_run=dry_run, connection=connection, _fail_after_write=_fail_after_write, rel_input=rel_input,
                             _append_to=_append_to, **options)
    except BaseException:
        if owned is not None:
            rel_input.close()
        raise
    finally:
        if rel_input is not None:
            rel_input.release()
    if owned is not None:
        in_memory.adopt(release, rel_input)
    return release


def _anonymize(policy, *, progress, dry_run, connection, _fail_after_write, rel_input=None, _append_to=None, **options):
    """One run, phase by phase: the policy, the session, the release target, the set-up (hierarchies,
    requirement, metric: every refusal before the scan), the base scan, the search and its report,
    the release, the report's last figures."""
    started = time.perf_counter()
    clock = PhaseClock()
    batch = _like_release(policy, options, connection, progress, dry_run, rel_input, _append_to)
    if batch is not None:  # an incremental release (sqlanon.run.incremental)
        return batch
    policy = _prepared_policy(policy, options, connection)
    in_memory.default_output(policy, rel_input, dry_run)
    reporter = as_reporter(progress)
    session = Session(policy, reporter.message, connection, read_only=dry_run)
    try:
        run = _Run(policy, session, reporter, clock, dry_run, connection, rel_input)
        run.target = _release_target(run)
        stats, requirement, metric = _set_up(run)
        _base_scan(run, stats, requirement)
        plan, report, sql_listing = _search_and_report(run, stats, requirement, metric)
        state, registry_used = _release(run, stats, plan, report, sql_listing, _fail_after_write)
        _finish_report(run, report, sql_listing, registry_used, started)
        return Release(report, **state, sql_listing=sql_listing, policy=redact_policy(as_ran(_policy_dict(policy), report)))
    finally:
        session.close()


def _like_release(policy, options: dict, connection, progress, dry_run: bool, rel_input=None, append_to: str | None = None):
    """``like_release=N``: the batch released with release N's transformation
    (:func:`sqlanon.run.incremental.anonymize_batch`); else None (and its options refused)."""
    policy = _as_policy(policy, options) if not isinstance(policy, Policy) or options else policy
    if policy.release.like_release is None:
        incremental.refuse_unused(policy)
        if append_to is not None:
            raise ConfigError("appending to a table is for incremental releases (like_release=N)")
        return None
    if connection is not None and not policy.source.input:
        policy.source.input = policy.source.table
    described = rel_input.describe() if rel_input is not None else None  # a relation: what it is, not its temporary view
    return incremental.anonymize_batch(policy, progress=as_reporter(progress).message, dry_run=dry_run, connection=connection, described=described, append_to=append_to)


@dataclass
class _Run:
    """What the phases of one :func:`anonymize` run share."""

    policy: Policy
    session: Session
    reporter: Any
    clock: PhaseClock
    dry_run: bool
    connection: Any
    rel_input: Any
    target: Any = None

    def say(self, message: str) -> None:
        self.reporter.message(message)

    @property
    def releases(self) -> bool:
        """A release is made (or, dry, would be): an output, or a connection's relation."""
        return self.target.kind != "none" or self.connection is not None

    @property
    def writes(self) -> bool:
        return not self.dry_run and self.releases


def _prepared_policy(policy, options: dict, connection) -> Policy:
    """The run's policy (a Policy, dict or path, with the keyword options over it), validated."""
    policy = _as_policy(policy, options)
    if connection is not None and not policy.source.input:
        policy.source.input = policy.source.table
    if is_spark_session(connection) and policy.runtime.engine is None:
        policy.runtime.engine = "spark"
    policy.validate()
    return policy


def _release_target(run: _Run) -> release_mod.Target:
    """Where the release goes, checked (and the registry) before anything is read."""
    policy, session, out = run.policy, run.session, run.policy.release
    target = release_mod.Target.from_options(out.output, out.output_table, out.in_place, session.source, out.overwrite, out.output_delimiter, directories=session.engine.dialect == "spark")
    release_mod.check_target(session.engine, target, session.source)
    release_mod.check_registry(session.engine, target, session.source, out.registry, lazy=run.connection is not None and not run.dry_run)
    if out.overwrite and target.kind in ("none", "in_place") and not policy.reporting.report:
        raise ConfigError("--overwrite replaces an existing --output or --output-table; there is none here" + (" (--in-place always replaces the input)" if target.kind == "in_place" else ""))
    return target


def _check_columns(run: _Run, qis: dict) -> None:
    """``--drop-column`` and ``--keep-column`` name columns of the input, and a kept one is neither
    a quasi-identifier nor dropped."""
    session, out = run.session, run.policy.release
    session.source.require_columns(session.engine, out.drop_columns, "--drop-column")
    session.source.require_columns(session.engine, out.keep_columns, "--keep-column")
    for name in out.keep_columns:
        if name in qis or name in out.drop_columns:
            raise ConfigError(f"--keep-column {name!r} is {'a quasi-identifier' if name in qis else 'also dropped (--drop-column)'}; it keeps a released column as is")
    check_links(out.linked, out.keep_linked, qis, session.source.column_names(session.engine), out.drop_columns, run.policy.privacy.sensitive_column, out.microaggregate)


def _set_up(run: _Run) -> tuple[Statistics, Requirement, Any]:
    """Hierarchies, the requirement (privacy models), the metric and the statistics to build:
    every refusal that depends only on the inputs' shape comes here, before the scan."""
    policy, session = run.policy, run.session
    roles.resolve_policy_columns(policy, session)  # ``--qi zip`` names a column ``ZIP`` on DuckDB
    qis = qi_specs(policy)
    _check_columns(run, qis)
    def refuse(groups=None) -> None:  # a release (or, dry, the one it would be): the refusals of one pass come before the hierarchies
        refuse_in_one_pass(session.engine, session.source, list(qis), policy.release, roles.kept_others(policy, session, qis), policy.privacy.sensitive_column,
                           first=lambda: roles.refuse_unassigned(policy, session, qis), groups=groups)

    # the sketches read the grouped pass's groups when those hold every column they read; else
    # they read the source first, so a refused run stops after one pass either way
    sketched = sketched_columns(session.source.column_names(session.engine), list(qis), policy.release, policy.privacy.sensitive_column) if run.releases else []
    alone = bool(sketched) and not set(sketched) <= set(grouped_pass.key_columns(list(qis), policy.privacy.sensitive_column, policy.quality.class_column))
    if run.releases and alone:
        refuse()
    grouped = _grouped_pass(run, list(qis))
    try:
        if run.releases and not alone:
            refuse(grouped)
        with run.reporter.phase("hierarchies"):
            hierarchies = session.hierarchies(qis, grouped.item() if grouped is not None else None)
        stats, requirement, metric = _set_up_rest(run, qis, hierarchies, grouped)
    except BaseException:
        grouped_pass.drop(session.engine, grouped)
        raise
    if grouped is not None and stats.grouped is None:  # the groups do not serve this base scan
        grouped_pass.drop(session.engine, grouped)
    run.clock.lap("hierarchies")
    return stats, requirement, metric


def _grouped_pass(run: _Run, qis: list[str]) -> grouped_pass.GroupedPass | None:
    """The source grouped once on its raw key columns (:mod:`sqlanon.stats.grouped_pass`), the
    set-up's and the base scan's one read of it; None where it does not apply (SafePub, whose
    statistics read a sample; a key column whose values group otherwise than their text)."""
    policy, session = run.policy, run.session
    if policy.privacy.epsilon is not None:
        return None
    try:
        hashed = grouped_pass.hashed(session.engine, session.source, qis, run.writes, policy.hierarchies.nulls)
    except ConfigError:  # nulls naming no QI: refused where it always was (Statistics)
        return None
    keys = grouped_pass.key_columns(qis, policy.privacy.sensitive_column, policy.quality.class_column)
    run.clock.lap("hierarchies")
    engine = session.engine
    keep_log, engine.keep_log = engine.keep_log, True  # the report shows the statement as it ran
    try:
        with run.reporter.phase("grouped pass", engine=engine):
            grouped = grouped_pass.create(engine, session.source, keys, hashed)
    finally:
        engine.keep_log = keep_log
    run.clock.lap("base_scan")  # the base scan's grouping, made first
    return grouped


def _set_up_rest(run: _Run, qis: dict, hierarchies: list, grouped) -> tuple[Statistics, Requirement, Any]:
    """The set-up after the hierarchies: the requirement, the metric, the refusals before the
    scan and the statistics (reading ``grouped``'s groups when they serve the base scan)."""
    policy, session = run.policy, run.session
    requirement, model_extras = build_requirement(policy, session)
    if policy.privacy.epsilon is not None:  # SafePub: sample by SQL, k derived from epsilon and delta
        session.safepub = safepub.prepare(policy, session, requirement)
    metric = make_metric(policy, list(qis))
    preflight(policy, hierarchies, list(qis), requirement)  # level bounds, lattice size, limits: errors before the scan
    check_transforms(policy, session, requirement, list(qis))
    needs = requirement.needs.merge(metric.needs)
    class_column = policy.quality.class_column
    if class_column and not SEARCHES[policy.strategy.search].lattice:
        # the flexible planners use the class: keep it in the shared base frequency set so
        # they roll up from it instead of scanning the source again
        needs = needs.merge(ClassNeeds(majority_y=True))
    if run.releases:
        roles.refuse_unassigned(policy, session, qis)  # every released column has a role (or keep_others keeps the rest)
    stats = Statistics(session.engine, session.source, list(qis), hierarchies, policy.privacy.sensitive_column, class_column, needs, row_hash=run.writes, nulls=policy.hierarchies.nulls,
                       grouped=grouped, **model_extras)
    return stats, requirement, metric


def _base_scan(run: _Run, stats: Statistics, requirement: Requirement) -> None:
    """Scan the source once into the base frequency set; the requirement learns the row count
    (its suppression budget) and what the models read from the whole table."""
    policy, engine = run.policy, run.session.engine
    t0 = time.perf_counter()
    with run.reporter.phase("base scan", engine=engine):
        keep_log, engine.keep_log = engine.keep_log, True  # the report shows the base set's SQL as it ran
        try:
            stats.prepare()
        finally:
            engine.keep_log = keep_log
    if run.releases:  # no QI value reads as the suppression marker (counted by the scan)
        roles.refuse_marker_values(stats, policy.release.suppression)
    requirement.bind(stats)  # the budget from the table's rows; what each model reads of the table
    run.say(f"base frequency set: {stats.base.rows:,} QI tuples from {stats.rows:,} rows ({time.perf_counter() - t0:.2f} s)")
    run.clock.lap("base_scan")
    privacy = policy.privacy
    linkability = policy.strategy.search == "top-down" and str(policy.strategy.search_options.get("privacy", "")).endswith("linkability")
    # the one refusal of a k above the table's rows (a linkability threshold may be a percent)
    if privacy.k is not None and privacy.k > stats.rows and not linkability and privacy.epsilon is None:
        raise UnsatisfiableError(f"k={privacy.k} is larger than the table ({stats.rows} rows)")


#: searches of many small statements to run on one thread when the base set is small
#: (:func:`serial_search`); none by default: one thread won little alone and lost beside a busy
#: process (two threads win a larger share of a contended machine: docs/measurements.md)
SERIAL_SEARCHES: tuple[str, ...] = ()
#: ... at most this many rows (its statements then take milliseconds)
SERIAL_ROWS = 200_000


def serial_search(stats: Statistics, search: str):
    """One engine thread for a search of :data:`SERIAL_SEARCHES` (none by default) over a base set of at most
    :data:`SERIAL_ROWS` rows (:meth:`sqlanon.engine.base.Engine.one_thread`); else nothing."""
    if search in SERIAL_SEARCHES and stats.prepared and stats.base.rows <= SERIAL_ROWS:
        return stats.engine.one_thread()
    return contextlib.nullcontext()


def _search_and_report(run: _Run, stats: Statistics, requirement: Requirement, metric) -> tuple[Plan, dict, list | None]:
    """Run the search, verify its plan (one statement) and build the report."""
    policy, search = run.policy, run.policy.strategy.search
    with run.reporter.phase(f"search {search}") as phase, serial_search(stats, search):
        charged = charged_time_limit(policy, run.clock.limit_started)
        plan = run_search(charged, run.session, stats, requirement, metric, run.say, phase)
    if charged is not policy:
        _report_time_limit(plan, policy.strategy.search_options.get("time_limit"), charged.strategy.search_options.get("time_limit"))
    stats.search_done()
    run.clock.lap("search")
    if not plan.local:
        stats.keep_final(target(plan))  # read by the verification, the report and the release
    # ARX's Loss and granularity of any plan (for comparing searches), read with the verification
    verified, final = verify_plan(stats, plan, None if plan.local else arx_loss.aggregates(stats, plan))
    run.clock.lap("verify")
    route = local_route(stats)
    run.say(f"search {search}: {plan.nodes_evaluated} nodes evaluated" + (f" ({stats.nodes_local} in-process)" if stats.nodes_local else "") + f", {run.session.engine.queries} queries" + (f"; frequency set {route}" if route else ""))
    report = build_report(policy, stats, plan, verified)
    add_risk_and_utility(report, policy, stats, plan)
    if run.rel_input is not None:  # a relation or DataFrame input: what it is, not its temporary view
        report["input"] = run.rel_input.describe()
    sql_listing = report_sql(policy, stats, plan) if policy.reporting.report or run.writes else None
    if not plan.local:
        report["arx_quality"] = arx_loss.measure(stats, plan, final)
    run.clock.lap("report")
    warning = near_top_warning(report)
    if warning is not None:  # a plan that keeps nearly nothing never passes silently
        report.setdefault("warnings", []).append(warning)
    return plan, report, sql_listing


def _registry_entry(run: _Run, stats: Statistics, plan: Plan, report: dict, sql_listing) -> dict:
    """The registry row of the release (written with it: both or neither)."""
    return {
        "source": run.rel_input.describe() if run.rel_input is not None else run.session.source.describe(),
        "search": search_label(report),  # what ran: "optimal (auto)" when auto chose it
        "policy": as_ran(_recorded_policy(run.policy, stats), report),
        "transformation": report["transformation"],  # a cut without the values only suppressed rows have
        "privacy": report["privacy"],
        "metrics": {"name": plan.metric_name, "value": plan.metric_value},
        "rows": stats.rows + stats.withheld,
        "suppressed_rows": plan.suppressed_rows + stats.withheld,
        "input_hash": stats.input_hash,
        "report": {**report, "sql": sql_listing},
    }


def _release(run: _Run, stats: Statistics, plan: Plan, report: dict, sql_listing, fail_after_write: bool) -> tuple[dict, str | None]:
    """Write the release (or make the connection's release relation); a dry run says what it
    would write. Returns the Release's state and the registry used."""
    target, session, out = run.target, run.session, run.policy.release
    if run.dry_run:
        if target.kind != "none":
            report["dry_run"] = {"would_write": target.describe() if target.kind != "in_place" else f"table {target.table} (in place)", "registry": out.registry}
        return {}, None
    entry = _registry_entry(run, stats, plan, report, sql_listing)
    if target.kind == "none":
        state = lazy_release(session.engine, stats, plan, run.policy, entry, run.rel_input) if run.connection is not None else {}
        if state:
            report["output"], report["release_id"] = "relation", state["release_id"]
            run.say(f"release relation ready (release {state['release_id']}); nothing written")
        return state, None
    with run.reporter.phase("write", engine=session.engine):
        written = release_mod.write(stats, plan, target, out.suppression, out.drop_columns, out.registry, entry, fail_after_write=fail_after_write, microaggregate=out.microaggregate, say=run.say, linked=out.linked)
    report["output"] = written["output"]
    report["release_id"] = written["release_id"]
    run.say(f"wrote {written['output']} (release {written['release_id']})")
    state = {"kind": target.kind, "path": target.path, "delimiter": target.delimiter, "table": target.table,
             "database": session.engine.database, "postgres": session.engine.dialect == "postgres",
             "connection": run.connection if session.engine.dialect == "duckdb" else None}
    return state, written.get("registry")


def _finish_report(run: _Run, report: dict, sql_listing, registry_used: str | None, started: float) -> None:
    """The report's last figures (statements, timings) and its HTML page when asked."""
    report["queries"] = run.session.engine.queries
    run.clock.lap("write")
    report["timings"] = run.clock.seconds
    report["cpu_timings"] = run.clock.cpu
    report["seconds"] = round(time.perf_counter() - started, 3)
    path = run.policy.reporting.report
    if path:
        try:
            write_html({**report, "policy": redact_policy(as_ran(_policy_dict(run.policy), report))}, path, sql=sql_listing, full_paths=run.policy.reporting.full_paths)
        except OSError as err:
            raise _report_not_written(err, report, path, registry_used) from None


#: the least a search is given when the phases before it used up ``--time-limit`` (it still
#: sends its first statement: without an answer there is nothing to release)
LEAST_SEARCH_SECONDS = 0.001


def charged_time_limit(policy: Policy, started: float) -> Policy:
    """``--time-limit`` bounds the whole run, not only the search: the search gets the limit
    less what the run took before it (hierarchies, base scan; ``started``: a reading of the
    limits' clock, :func:`sqlanon.search.limits.now`), at least :data:`LEAST_SEARCH_SECONDS`.
    The policy as it is without a time limit, else a copy."""
    limit = policy.strategy.search_options.get("time_limit")
    if limit is None:
        return policy
    charged = policy.model_copy(deep=True)
    charged.strategy.search_options["time_limit"] = max(float(limit) - (limits.now() - started), LEAST_SEARCH_SECONDS)
    return charged


def _report_time_limit(plan: Plan, asked: float | None, given: float | None) -> None:
    """The plan's report of its limits says the limit the user gave (``time_limit``) and what
    the search was given of it (``search_time_limit``, :func:`charged_time_limit`)."""
    for part in [plan.extra, *plan.extra.values()]:
        if isinstance(part, dict) and "time_limit" in part:
            part["time_limit"] = asked
            part["search_time_limit"] = None if given is None else round(given, 3)


class PhaseClock:
    """Seconds per phase of a run, the report's ``timings``: each :meth:`lap` adds the time since
    the previous one to its phase (a phase may be timed in several laps); ``cpu`` the same in CPU
    seconds of the process (every thread's, the engine's included: ``cpu / seconds`` is about the
    threads a phase kept busy), the report's ``cpu_timings``.

    >>> c = PhaseClock(); c.lap("search"); sorted(c.seconds), sorted(c.cpu)
    (['search'], ['search'])
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.started = time.perf_counter()
        #: the run's start on the time limits' clock (sqlanon.search.limits: one clock for every
        #: limit, which tests replace by a fake one), for :func:`charged_time_limit`
        self.limit_started = limits.now()
        self._last = self.started
        self._last_cpu = time.process_time()

    def lap(self, phase: str) -> None:
        now, cpu = time.perf_counter(), time.process_time()
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + now - self._last, 3)
        self.cpu[phase] = round(self.cpu.get(phase, 0.0) + cpu - self._last_cpu, 3)
        self._last, self._last_cpu = now, cpu


def run_search(policy: Policy, session: Session, stats: Statistics, requirement: Requirement, metric, say, phase=None) -> Plan:
    """Resolve the search (``auto``), refuse limits it would ignore, and run it:
    ``SEARCHES[name].run(ctx)`` over the context built from the run."""
    search, chosen = choose_search(policy, stats, metric, requirement)
    levels = level_bounds(stats.hierarchies, stats.qis, policy.hierarchies.min_level, policy.hierarchies.max_level)
    refuse_limits(search, policy.strategy.search_options, lattice_size(levels))
    if policy.strategy.search_options.get("local_rows") is not None:
        # the in-process evaluation's cap (sqlanon.stats.local): 0 keeps every node in SQL
        stats.local_rows = int(policy.strategy.search_options["local_rows"])
    ctx = search_context(policy, session, stats, requirement, metric, say)
    ctx.search, ctx.chosen, ctx.levels, ctx.phase = search, chosen, levels, phase
    plan = SEARCHES[search].run(ctx)
    if ctx.steps and "trace" not in plan.extra and ctx.options.get("trace"):
        plan.extra["trace"] = ctx.steps
    return plan


def search_context(policy: Policy, session: Session, stats: Statistics, requirement: Requirement, metric, say) -> SearchContext:
    """What the search is handed: the statistics, the requirement (k and the budget), the metric,
    its options, the weights and level bounds, and what the run resolved for it (top-down's
    previous releases, SafePub's parameters, local recoding's rounds)."""
    options = dict(policy.strategy.search_options)
    weights, bounds, bounded = planner_inputs(policy, stats.qis, stats.hierarchies)
    strategy = policy.strategy
    local = None
    if strategy.local_recoding:
        local = strategy.local_iterations if strategy.local_iterations is not None else local_recoding.DEFAULT_ITERATIONS
    previous = [resolve_previous(ref, session.engine, policy.release.registry) for ref in options.get("previous") or []] if strategy.search == "top-down" else []
    return SearchContext(stats, requirement, metric, options, progress=say, weights=weights, bounds=bounds, bounded=bounded,
                         previous=previous, safepub=session.safepub, local_iterations=local, xy_k=policy.privacy.k if strategy.search == "top-down" else None)


def verify_plan(stats: Statistics, plan: Plan, more=None) -> tuple[dict, object]:
    """Re-evaluate the final plan (one query): suppressed rows and the smallest released class,
    and the node's statistics, which hold ``more`` aggregates too (``f(params) -> [(name, expr)]``,
    e.g. ARX's Loss sums: one statement instead of two; on Spark each is a job). Local recoding
    rounds are re-evaluated one by one (``more`` is not taken there: no statistics come back)."""
    ok = plan.requirement.predicate()
    min_released = exp.Min(this=if_(col("ok"), col("cnt"), exp.Null()))
    aggs = [("min_released", min_released)]
    if stats.has_s and stats.needs.distinct_s:
        aggs.append(("min_distinct_s", exp.Min(this=if_(col("ok"), col("distinct_s"), exp.Null()))))
    if plan.local:  # every round re-evaluated on its own rows
        out: dict = {"classes": 0, "min_class_size": None, "suppressed_rows": plan.suppressed_rows}
        for step in plan.local:
            ns = step.stats.evaluate(step.node, ok, aggs)
            if ns.suppressed != step.suppressed or ns.rows != step.rows:
                raise AssertionError(f"local recoding round at {step.node}: plan says {step.suppressed} of {step.rows} rows suppressed, the data says {ns.suppressed} of {ns.rows}")
            out["classes"] += ns.classes - ns.bad_classes
            for key, name in (("min_class_size", "min_released"), ("min_distinct_sensitive", "min_distinct_s")):
                v = ns.extra.get(name)
                if v is not None:
                    out[key] = v if out.get(key) is None else min(out[key], v)
        return out, None
    def with_more(params: Params | None = None) -> list[tuple[str, exp.Expr]]:
        assert more is not None
        return [*aggs, *more(params)]

    ns = stats.evaluate(target(plan), ok, aggs if more is None else with_more)
    if ns.suppressed != plan.suppressed_rows:
        raise AssertionError(f"plan says {plan.suppressed_rows} suppressed rows, the data says {ns.suppressed}")
    return ({"classes": ns.classes - ns.bad_classes, "min_class_size": _count(ns.extra.get("min_released")), "suppressed_rows": ns.suppressed, **({"min_distinct_sensitive": _count(ns.extra["min_distinct_s"])} if "min_distinct_s" in ns.extra else {})}, ns)


def _count(value) -> int | None:
    """A count as an int (PostgreSQL's ``MIN(SUM(..))`` is a ``numeric``: a Decimal, which the
    report's JSON would keep as a string)."""
    return None if value is None else int(value)


def build_report(policy: Policy, stats: Statistics, plan: Plan, verified: dict) -> dict:
    report = {
        "search": plan.search,
        "k": policy.privacy.k,
        "transformation": plan.transformation,
        "metric": {"name": plan.metric_name, "value": plan.metric_value},
        "suppressed_rows": plan.suppressed_rows + stats.withheld,
        "rows": stats.rows + stats.withheld,
        "nodes_evaluated": plan.nodes_evaluated,
        "queries": stats.engine.queries,
        "seconds": None,
        "output": None,
        "max_suppression": policy.privacy.max_suppression,
        "suppression_budget": plan.requirement.budget + stats.withheld,
        "privacy": {"models": plan.requirement.describe(), **verified},
        "quasi_identifiers": stats.qis,
        "hierarchies": [h.describe() for h in stats.hierarchies],
    }
    if stats.nodes_local:
        report["nodes_local"] = stats.nodes_local
    if local_route(stats):
        report["local_route"] = local_route(stats)
    report.update(null_summary(stats))
    if policy.quality.weights:  # as the metric used them: normalized by the largest

        report["weights"] = dict(zip(stats.qis, normalize_weights([policy.quality.weights.get(q, 1.0) for q in stats.qis])))
    for key, value in plan.extra.items():
        report.setdefault(key, value)
    return report


def null_summary(stats: Statistics) -> dict:
    """The report's ``nulls`` and ``null_suppressed_rows`` (none when no QI holds NULL)."""
    nulls = {q: {"mode": m, "rows": n} for q, m, n in zip(stats.qis, stats.null_modes, stats.null_rows) if n}
    out: dict = {"nulls": nulls} if nulls else {}
    if stats.withheld:
        out["null_suppressed_rows"] = stats.withheld
    return out


def add_risk_and_utility(report: dict, policy: Policy, stats: Statistics, plan: Plan) -> None:
    """``risk`` (before/after, :mod:`sqlanon.risk`), ``utility`` (per QI, :mod:`sqlanon.report.utility`)
    and the class-size histograms: a few aggregate statements over the frequency sets."""
    threshold = policy.reporting.risk_threshold or risk.DEFAULT_THRESHOLD
    report["input"] = stats.source.describe()
    report_paths(report, policy.reporting.full_paths)  # no absolute path of this machine unless asked
    if plan.local:  # rounds over different row sets: per-column figures of the first round only
        report["risk"] = risk.before_after(stats, plan, threshold=threshold, population_fraction=policy.reporting.population_fraction)
        report["utility"] = None
        return
    node = plan.node if plan.node is not None else plan.recoding
    ok = plan.requirement.predicate()
    # the released counts per QI and the release's class sizes: one statement (on Spark a job)
    released, histogram = utility.released_figures(stats, utility.recoding_of(stats, node), ok, None if plan.node is None else plan.node)
    report["risk"] = risk.before_after(stats, plan, threshold=threshold, population_fraction=policy.reporting.population_fraction, after_histogram=histogram)
    report["utility"] = utility.column_utility(stats, node, ok, plan.suppressed_rows, plan.transformation if plan.node is not None else None, released=released, k=policy.privacy.k)
    if plan.node is None:  # a cut names no value only suppressed rows have (DESIGN.md)
        report["transformation"], hidden = utility.released_transformation(plan.transformation, utility.recoding_of(stats, node), released, stats.qis)
        if hidden:
            report["hidden_cut_values"] = hidden


def redact_policy(policy: dict) -> dict:
    """The policy as the registry stores it (PostgreSQL passwords redacted)."""
    return _without_passwords(policy)


#: a hierarchy with more leaves than this has its code lists shown as parameters in the report's SQL
LISTED_VALUES = 1000


def report_sql(policy: Policy, stats: Statistics, plan: Plan) -> list[tuple[str, str]]:
    """The statements that produced the plan's figures (base frequency set, final node), pretty."""
    try:
        node = plan.node if plan.node is not None else plan.recoding
        aggs = make_metric(policy, stats.qis).aggregates(stats, node) if plan.node is not None else []
        import sqlglot

        created = [text for text in stats.engine.log if text.lstrip().upper().startswith("CREATE")]
        base_statement = [text for text in created if stats.base.table in text][:1]
        # a base set coded from the grouped pass's groups: the pass's statement first (:mod:`sqlanon.stats.grouped_pass`)
        from_groups = bool(base_statement) and grouped_pass.PREFIX in base_statement[0]
        groups_statement = [text for text in created if from_groups and grouped_pass.PREFIX in text and text != base_statement[0]][:1]
        ran = groups_statement + base_statement
        base = ";\n\n".join(sqlglot.transpile(text, read=stats.dialect.name, write=stats.dialect.name, pretty=True)[0] for text in ran) if ran else "(not recorded)"
        # long code lists are bound parameters here as when the statement ran: the listing (kept
        # in the report and the registry) does not grow with the columns' distinct values

        params = Params() if stats.dialect.binds_lists and max(len(h.rows) for h in stats.hierarchies) > LISTED_VALUES else None
        final = stats.node_query(node, plan.requirement.predicate(), aggs, stats.base, params).sql(dialect=stats.dialect.name, pretty=True)
        if params:
            final = f"-- $1 .. ${len(params)}: lists of codes bound as parameters ({sum(len(p) for p in params):,} values)\n{final}"
        return [("base frequency set", base), ("final node", final)]
    except Exception as err:  # the report never fails a finished run over its SQL listing
        return [("unavailable", f"{type(err).__name__}: {err}")]


def _as_policy(policy, options: dict) -> Policy:
    if isinstance(policy, Policy):
        result = policy
    elif isinstance(policy, str):
        result = Policy.from_file(policy)
    elif isinstance(policy, dict):
        result = Policy.from_dict(policy)
    elif policy is None:
        result = Policy()
    else:
        raise ConfigError(f"policy must be a Policy, dict or path, got {type(policy).__name__}")
    if options:
        result.update(options, "arguments")
    return result


def _recorded_policy(policy: Policy, stats: Statistics) -> dict:
    """The policy as the registry records it: an ``age`` spec's ``today`` as the date it was."""
    out = _policy_dict(policy)
    if out.get("qi"):
        out["qi"] = resolved_specs(out["qi"], stats.hierarchies)
    return out


def _policy_dict(policy: Policy) -> dict:
    out = {k: v for k, v in policy.flat().items() if v not in (None, [], {}, False) and k != "qi"}
    if policy.qi:  # a Hierarchy object is recorded by what it is, not by its rows
        out["qi"] = {c: (f"hierarchy object ({spec.origin}, {len(spec.rows)} leaves)" if isinstance(spec, Hierarchy) else spec) for c, spec in policy.qi.items()}
    return out


def plan_sql(policy: Policy | dict | str | None = None, dialect: str = "duckdb", **options) -> list[tuple[str, str]]:
    """The SQL a run executes, as a self-contained script for ``dialect`` (:mod:`sqlanon.run.script`):
    the source, the hierarchy code tables, the base frequency set, the final node's evaluation,
    the suppressed classes, the release mapping tables and the release query. The search itself
    runs on the input's engine to find the final node."""
    policy = _as_policy(policy, options)
    policy.validate()
    session = Session(policy)
    try:
        roles.resolve_policy_columns(policy, session)
        qis = qi_specs(policy)
        hierarchies = session.hierarchies(qis)
        requirement, model_extras = build_requirement(policy, session)
        if policy.privacy.epsilon is not None:
            raise ConfigError("plan_sql (sqlanon sql) does not render SafePub runs: their sample is random; use anonymize --dry-run")
        metric = make_metric(policy, list(qis))
        check_transforms(policy, session, requirement, list(qis))

        preflight(policy, hierarchies, list(qis), requirement)
        roles.refuse_unassigned(policy, session, qis)  # the script writes a release: every column has a role
        stats = Statistics(session.engine, session.source, list(qis), hierarchies, policy.privacy.sensitive_column, policy.quality.class_column, requirement.needs.merge(metric.needs), nulls=policy.hierarchies.nulls, **model_extras)
        stats.prepare()
        roles.refuse_marker_values(stats, policy.release.suppression)
        requirement.bind(stats)
        plan = run_search(policy, session, stats, requirement, metric, lambda m: None)

        # built by a copy of the statistics for ``dialect``: the engine is neither read nor changed
        return sections(stats, plan, requirement, metric, policy, dialect)
    finally:
        session.close()


def __getattr__(name: str):
    """``check``, ``check_plan`` and ``load_transformation`` live in :mod:`sqlanon.run.check`."""
    if name in ("check", "check_plan", "load_transformation"):
        return getattr(importlib.import_module("sqlanon.run.check"), name)
    raise AttributeError(f"module 'sqlanon.run.api' has no attribute {name!r}")


def _report_not_written(err: OSError, report: dict, path: str, registry: str | None) -> SqlanonError:
    """The HTML report failed after the release was written (a full disk, a folder gone): one line
    that says the release stands and how to render its report again from the registry."""
    cause = str(from_os_error(err))
    if report.get("release_id") is None:
        return SqlanonError(cause)
    again = f"sqlanon report --release {report['release_id']} --database {registry} -o {path}" if registry and registry != "spark catalog" else "sqlanon report --release " + str(report["release_id"])
    return SqlanonError(f"{cause}; release {report['release_id']} was written to {report.get('output')} and recorded: write its report again with {again}")
