"""The ``sqlanon`` command line (typer). Data on stdout, progress on stderr.

Exit codes: 0 ok, 1 error (hierarchy, engine, data), 2 usage (bad flags, policy keys, unknown
columns, missing files), 3 unsatisfiable (no plan meets the privacy model within the budget).
"""

from __future__ import annotations

import json
from typing import Any, List, Optional, cast

import typer

from sqlanon.errors import ConfigError
from sqlanon.cli.conventions import CHECK, ENGINE, HELP, INPUT, LIMITS, OUTPUT, PRIVACY, REPORT, App, Group, option
from sqlanon.cli.flags import CHECK_FLAGS, PRIVACY_FLAGS, SOURCE_FLAGS, given_flags, policy_from_flags, policy_flag, with_policy_flags
from sqlanon.cli.generate import register as register_generate
from sqlanon.privacy.registry import check_keys, figures
from sqlanon.cli.dbt import register as register_dbt
from sqlanon.cli.warm_up import register as register_warm_up
from sqlanon.cli.process_exit import leave
from sqlanon.cli.incremental import incremental_summary, lineage_line
from sqlanon.cli.lazy import after_import
from sqlanon.cli.common import EXIT_HELP, _err, _fail, _on_sigterm, _progress, _run, _split, _terminated  # noqa: F401  (_err, _terminated: the commands' helpers)
from sqlanon.progress import configure_logging_from_env
from sqlanon.cli.check_text import check_lines
from sqlanon.engine import connect, is_postgres_url
from sqlanon.engine.source import Source
from sqlanon.release import registry
from sqlanon.release.searched import search_label
from sqlanon.report import write_html
from sqlanon.release.registry import for_release
from sqlanon.files.paths import check_report_path, refuse_existing
from sqlanon.config import schema as schema_mod
from sqlanon.hierarchy.store import store_hierarchy
from sqlanon.engine.urls import redact
from sqlanon.hierarchy import BUILDERS, MAX_VALUE_LENGTH, load_hierarchy
from sqlanon.profiling.text import render

# Building the app and printing any --help load no engine client, numpy nor pyarrow: the commands
# import the run's modules inside their functions (tests/house/test_imports.py, LAZY).

#: the flag parser's error base class (typer >= 0.22 vendors click: not ``click.ClickException``);
#: typed as its subclass BadParameter, whose ``format_message`` and ``exit_code`` it declares
_PARSER_ERROR = cast("type[typer.BadParameter]", next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"))


class _JsonUsageErrors(Group):
    """Under ``--json``, a usage error of the flag parser (``--k 2.5``, an unknown flag, a missing
    required option) is one JSON object on stdout, ``{"error": .., "exit_code": 2}``, and one
    ``error: ..`` line on stderr, like every other error; the exit code is the parser's."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):  # type: ignore[override]
        import sys

        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(argv, prog_name, complete_var, False, **extra)
        except _PARSER_ERROR as err:
            _fail(err.format_message(), err.exit_code, True)
            sys.exit(err.exit_code)
        except typer.Abort:
            _fail("aborted", 1, True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


app = App(
    cls=_JsonUsageErrors,
    name="sqlanon",
    help="Anonymize tables inside the database: k-anonymity, l-diversity, t-closeness by generated SQL. " + EXIT_HELP,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=True,  # --install-completion, --show-completion SHELL (bash, zsh, fish, powershell)
)
hierarchy_app = App(help="Import and inspect generalization hierarchies. " + EXIT_HELP, no_args_is_help=True)
app.add_typer(hierarchy_app, name="hierarchy")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"sqlanon {version('sqlanon')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            typer.echo("sqlanon (not installed)")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, rich_help_panel=HELP, help="Print the version and exit."),
) -> None:
    """Anonymize tables inside the database."""
    import os

    configure_logging_from_env(os.environ)


@app.command(help='Find the best generalization meeting the privacy model and write the release.' + " " + EXIT_HELP)
@with_policy_flags(PRIVACY_FLAGS)
@with_policy_flags(SOURCE_FLAGS)
def anonymize(
    ctx: typer.Context,
    policy: Optional[str] = option(None, "--policy", panel=INPUT, help="YAML policy file; flags given here win over it (an output flag replaces its output)."),
    # every other flag but the last five is a policy key, declared with its path in the Policy model
    # (the source flags, SOURCE_FLAGS, and the privacy models' keys, PRIVACY_FLAGS, come here)
    max_value_length: Optional[int] = policy_flag("hierarchies.max_value_length"),
    suppression: Optional[str] = policy_flag("release.suppression"),
    metric: Optional[str] = policy_flag("quality.metric"),
    search: Optional[str] = policy_flag("strategy.search"),
    class_column: Optional[str] = policy_flag("quality.class_column"),
    output: Optional[str] = policy_flag("release.output"),
    output_table: Optional[str] = policy_flag("release.output_table"),
    database: Optional[str] = policy_flag("release.database"),
    in_place: Optional[bool] = policy_flag("release.in_place"),
    overwrite: Optional[bool] = policy_flag("release.overwrite"),
    drop_column: Optional[List[str]] = policy_flag("release.drop_columns", "--drop-column"),
    keep_column: Optional[List[str]] = policy_flag("release.keep_columns", "--keep-column"),
    linked: Optional[List[str]] = policy_flag("release.linked", "--linked"),
    keep_linked: Optional[List[str]] = policy_flag("release.keep_linked", "--keep-linked"),
    keep_others: Optional[bool] = policy_flag("release.keep_others"),
    memory_limit: Optional[str] = policy_flag("runtime.memory_limit"),
    threads: Optional[int] = policy_flag("runtime.threads"),
    registry: Optional[str] = policy_flag("release.registry"),
    report: Optional[str] = policy_flag("reporting.report"),
    trace: Optional[bool] = policy_flag("strategy.search_options.trace", help="bottom-up/top-down/genetic: keep and print every step."),
    previous: Optional[List[str]] = policy_flag("strategy.search_options.previous", help="top-down: a previous release (registry id, table or file). Repeat."),
    x: Optional[List[str]] = policy_flag("strategy.search_options.x", help="top-down: X attributes (comma list)."),
    y: Optional[List[str]] = policy_flag("strategy.search_options.y", help="top-down: Y attributes (comma list)."),
    privacy: Optional[str] = policy_flag("strategy.search_options.privacy", help="top-down: xy-anonymity | xy-linkability."),
    sensitive_values: Optional[List[str]] = policy_flag("strategy.search_options.sensitive_values", help="top-down: sensitive Y values (comma list)."),
    inconsistent: Optional[List[str]] = policy_flag("strategy.search_options.inconsistent", help="top-down: inconsistency predicate. Repeat."),
    iterations: Optional[int] = policy_flag("strategy.search_options.iterations", help="genetic: iterations."),
    population: Optional[str] = policy_flag("privacy.population", help="k-map / delta-presence: the population TABLE (in the input's database) or file; genetic without them: the population size (with them: --option population=N)."),
    seed: Optional[int] = policy_flag("strategy.search_options.seed", help="genetic: random seed; with --epsilon: the seed of SafePub's sampling."),
    mutation_rate: Optional[float] = policy_flag("strategy.search_options.mutation_rate", help="genetic: mutation rate."),
    numeric: Optional[List[str]] = policy_flag("strategy.search_options.numeric", help="genetic: a numeric QI (intervals). Repeat or comma list."),
    time_limit: Optional[float] = policy_flag("strategy.search_options.time_limit", help="lightning/auto (default 30), genetic and bottom-up: stop searching after this many seconds of the run (counted from its start: hierarchies and base scan included; stopped_by says so)."),
    step_limit: Optional[int] = policy_flag("strategy.search_options.step_limit", help="lightning/auto: stop after this many node evaluations."),
    option: Optional[List[str]] = policy_flag("strategy.search_options", "--option", help="Any search option KEY=VALUE. Repeat."),
    weights: Optional[List[str]] = policy_flag("quality.weights"),
    min_level: Optional[List[str]] = policy_flag("hierarchies.min_level"),
    max_level: Optional[List[str]] = policy_flag("hierarchies.max_level"),
    nulls: Optional[List[str]] = policy_flag("hierarchies.nulls"),
    microaggregate: Optional[List[str]] = policy_flag("release.microaggregate"),
    local_recoding: Optional[bool] = policy_flag("strategy.local_recoding"),
    local_iterations: Optional[int] = policy_flag("strategy.local_iterations"),
    population_fraction: Optional[float] = policy_flag("reporting.population_fraction"),
    risk_threshold: Optional[float] = policy_flag("reporting.risk_threshold"),
    full_paths: Optional[bool] = policy_flag("reporting.full_paths"),
    engine: Optional[str] = policy_flag("runtime.engine"),
    spark_master: Optional[str] = policy_flag("runtime.spark_master"),
    spark_conf: Optional[List[str]] = policy_flag("runtime.spark_conf"),
    like_release: Optional[int] = policy_flag("release.like_release"),
    on_break: Optional[str] = policy_flag("release.on_break"),
    lineage_check: Optional[str] = policy_flag("release.lineage_check"),
    # not policy: how this run talks
    json_out: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout (the report; an error: {error, exit_code})."),
    dry_run: bool = option(False, "--dry-run", panel=OUTPUT, help="Plan only: no release and no registry entry are written (a --report is, as a preview)."),
    quiet: bool = option(False, "--quiet", panel=OUTPUT, help="No progress on stderr."),
    **source: Any,
) -> None:
    def go():
        from sqlanon.run.api import anonymize as api_anonymize

        pol = policy_from_flags(policy, ctx.params, anonymize)
        return api_anonymize(pol, progress=_progress(quiet, json_out), dry_run=dry_run)

    result = _run(go, json_out=json_out)
    _print_report(result.to_dict(), json_out)


def _print_report(result: dict, json_out: bool) -> None:
    for warning in result.get("warnings") or []:  # on stderr whatever -q/--json say
        typer.echo(f"warning: {warning['message']}", err=True)
    if json_out:
        typer.echo(json.dumps(result, default=str))
        return
    if result.get("incremental"):  # a batch released like an earlier release
        typer.echo(incremental_summary(result))
        return
    trace = result.get("trace")
    if trace:
        for i, step in enumerate(trace, 1):
            typer.echo(f"step {i}: " + ", ".join(f"{k}={v}" for k, v in step.items()))
    typer.echo(f"search         {search_label(result)}, k={result['k']}")
    typer.echo("transformation " + ", ".join(f"{c}={v}" for c, v in result["transformation"].items()))
    typer.echo(f"metric         {result['metric']['name']} = {result['metric']['value']:.6g}")
    typer.echo(f"rows           {result['rows']:,} ({result['suppressed_rows']:,} suppressed, budget {result.get('suppression_budget', 0):,})")
    typer.echo(f"privacy        smallest released class {result['privacy'].get('min_class_size')}, {result['privacy'].get('classes')} classes")
    typer.echo(f"work           {result['nodes_evaluated']} nodes evaluated, {result['queries']} queries, {result['seconds']} s")
    dry = result.get("dry_run")
    if dry:
        typer.echo(f"output         (dry run: nothing written; would write {dry['would_write']})")
    else:
        typer.echo(f"output         {result['output'] or '(none: no output requested)'}")


@app.command(help='Measure k, l, t, suppression and metrics of any table without changing it; a release a registry knows (or --release N) is checked by its own policy (QIs, k, budget, models; flags win).' + " " + EXIT_HELP)
@with_policy_flags(CHECK_FLAGS, after="hierarchy_delimiter")
def check(
    ctx: typer.Context,
    input: Optional[str] = policy_flag("source.input", help="Table to measure (CSV, Parquet, .duckdb, or a postgresql:// URL with --table); with --release, default the release's output."),
    qi: Optional[List[str]] = policy_flag("qi", help="COLUMN or COLUMN=HIERARCHY (with a hierarchy, precision and LM are measured). Repeat. Default for a release a registry knows: its quasi-identifiers."),
    format: Optional[str] = policy_flag("source.format"),
    delimiter: Optional[str] = policy_flag("source.delimiter"),
    table: Optional[str] = policy_flag("source.table"),
    hierarchy_delimiter: Optional[str] = policy_flag("hierarchies.hierarchy_delimiter"),
    # the models' options (CHECK_FLAGS: --k, --l, --t, --beta-likeness, ...) come here, from their figures
    class_column: Optional[str] = policy_flag("quality.class_column"),
    numeric: Optional[List[str]] = policy_flag("strategy.search_options.numeric", help="With --transformation: QIs cut into intervals."),
    population_fraction: Optional[float] = policy_flag("reporting.population_fraction", help="With --risk: the table is this fraction of its population; estimate population uniques (Pitman, Zayatz, SNB, Dankar)."),
    risk_threshold: Optional[float] = policy_flag("reporting.risk_threshold", help="With --risk: prosecutor risk threshold for 'records above' (default 0.2)."),
    max_value_length: Optional[int] = policy_flag("hierarchies.max_value_length", help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
    # not policy: what kind of check, and how it talks
    against: Optional[str] = option(None, "--against", panel=CHECK, help="An original table: compare (generated data: NAS, itemsets, dissimilarity)."),
    against_format: Optional[str] = option(None, "--against-format", panel=CHECK, help="With --against: its format, csv | parquet | duckdb (default: from the name)."),
    against_delimiter: Optional[str] = option(None, "--against-delimiter", panel=CHECK, help="With --against: its CSV delimiter."),
    min_sup: Optional[int] = option(None, "--min-sup", panel=CHECK, help="With --against: min support of the compared itemsets (default 1)."),
    transformation: Optional[str] = option(None, "--transformation", panel=CHECK, help="A plan to measure on this table without writing: an anonymize --json report (file or text) or its transformation. --qi then needs hierarchies."),
    risk: bool = option(False, "--risk", panel=CHECK, help="Re-identification risk: prosecutor, journalist, marketer, sample uniques (docs/risk.md)."),
    suppressed_marker: Optional[str] = option(None, "--suppressed-marker", panel=CHECK, help="A row whose QIs all hold this counts as suppressed (default *, sqlanon's mask); none: every row is data (a table that is no release)."),
    release: Optional[int] = option(None, "--release", panel=CHECK, help="Check by this release's own policy (its QIs, k, suppression budget and models, from the registry); flags given win."),
    registry: Optional[str] = option(None, "--registry", panel=CHECK, help="The registry database of --release (default: beside the --input file, or the --input database)."),
    release_policy: bool = option(True, "--release-policy", panel=CHECK, help="--no-release-policy: measure by the flags only, even when a registry knows a release written to --input."),
    json_out: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout (the measurements and verdicts; an error: {error, exit_code})."),
    **models: Any,
) -> None:
    def go():
        pol = policy_from_flags(None, ctx.params, check, qi=_check_qi)
        given = given_flags(ctx.params, check)
        _refuse_unused_check_flags(given, against, transformation, risk)
        if (transformation or against) and not (pol.source.input and pol.qi):
            raise ConfigError(f"{'--transformation' if transformation else '--against'} needs --input and --qi")
        if transformation:
            return _check_plan(pol, transformation)
        if against:
            return _against(pol.source, against, against_format, against_delimiter, list(pol.qi), 1 if min_sup is None else min_sup)
        marker = "*" if suppressed_marker is None else None if suppressed_marker.lower() == "none" else suppressed_marker
        return _check_table(pol, risk, given, release, registry, release_policy, marker)

    result = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps(result, default=str))
    else:
        for line in check_lines(result):
            typer.echo(line)
    failed = ("k_anonymous", "within_budget", *(f"{figure.out}_ok" for figure in figures().values()))  # a twin's verdict: <figure>_ok
    if any(result.get(key) is False for key in failed) or not all(v["ok"] for v in result.get("verdicts") or []):
        raise typer.Exit(3)  # the table (or plan) does not meet the k asked for (or its release's models)


def _check_qi(items: list[str]) -> dict:
    """``check --qi``: COLUMN (class sizes only) or COLUMN=HIERARCHY."""
    specs = {}
    for item in items:
        column, sep, spec = item.partition("=")
        specs[column] = spec if sep else None
    return specs


#: check's flags read by every kind of check (the risk flags are refused apart)
_CHECK_ALWAYS = {"--input", "--qi", "--format", "--delimiter", "--table", "--hierarchy-delimiter", "--against", "--risk", "--population-fraction", "--risk-threshold", "--json"}


def _refuse_unused_check_flags(given: dict, against, transformation, risk: bool) -> None:
    """A flag given is a flag used: refuse the ones the chosen kind of check does not read."""
    if (risk or "--population-fraction" in given or "--risk-threshold" in given) and (transformation or against):
        raise ConfigError("--risk measures the table itself; it cannot be combined with --transformation or --against")
    if against:
        reads, mode = {"--against-format", "--against-delimiter", "--min-sup"}, "--against"
    elif transformation:
        reads, mode = {"--k", "--max-suppression", "--class-column", "--numeric", "--transformation", "--max-value-length"}, "--transformation"
    else:
        # every model option a figure of the registry reads (a new model's flag is read with no edit here)
        models = {"--" + key.replace("_", "-") for key in check_keys()}
        reads, mode = models | {"--class-column", "--max-value-length", "--release", "--registry", "--no-release-policy", "--suppressed-marker"}, "this check"
    unused = [name for name in given if name not in reads and name not in _CHECK_ALWAYS]
    if unused:
        raise ConfigError(f"{', '.join(unused)} not used by {mode}" + ("" if mode != "this check" else " (--numeric needs --transformation; --against-format, --against-delimiter, --min-sup need --against)"))
    if "--no-release-policy" in given and ("--release" in given or "--registry" in given):
        raise ConfigError("--no-release-policy measures by the flags only; it cannot be combined with --release or --registry")
    if "--t-distance" in given and "--t" not in given:
        raise ConfigError("--t-distance needs --t")


def _check_plan(pol, transformation: str) -> dict:
    from sqlanon.run.check import check_plan

    if not all(pol.qi.values()):
        raise ConfigError("--transformation needs a hierarchy for every --qi (COLUMN=HIERARCHY)")
    src, privacy = pol.source, pol.privacy
    return check_plan(src.input, pol.qi, transformation, format=src.format, delimiter=src.delimiter, table=src.table, k=1 if privacy.k is None else privacy.k,
                      max_suppression=privacy.max_suppression, class_column=pol.quality.class_column, numeric=_split(pol.strategy.search_options.get("numeric")),
                      hierarchy_delimiter=pol.hierarchies.hierarchy_delimiter, max_value_length=pol.hierarchies.max_value_length)


def _check_table(pol, risk: bool, given: dict, release: int | None = None, registry_path: str | None = None, release_policy: bool = True, suppressed_marker: str | None = "*") -> dict:
    from sqlanon.run.check import check as api_check

    src, privacy = pol.source, pol.privacy
    specs = (pol.qi if all(pol.qi.values()) else list(pol.qi)) or None
    # each model option as given (one not given is None: a policy default, t_distance's or the
    # budget's, asks no check)
    keys = [path.rsplit(".", 1)[-1] for path, *_ in CHECK_FLAGS]
    models = {key: getattr(privacy, key) if "--" + key.replace("_", "-") in given else None for key in keys}
    return api_check(src.input, specs, format=src.format, delimiter=src.delimiter, table=src.table, class_column=pol.quality.class_column,
                     hierarchy_delimiter=pol.hierarchies.hierarchy_delimiter, risk=risk, release=release, registry=registry_path, release_policy=release_policy,
                     population_fraction=pol.reporting.population_fraction, risk_threshold=pol.reporting.risk_threshold,
                     max_value_length=pol.hierarchies.max_value_length, suppressed_marker=suppressed_marker, **models)


def _against(source, against, against_format, against_delimiter, columns, min_sup):
    from sqlanon.generation.scores import compare_tables

    released = Source.open(source.input, source.format, source.table, source.delimiter)
    original = Source.open(against, against_format, None, against_delimiter)
    engine = connect(database=released.database or ":memory:", read_only=bool(released.database))
    try:
        return compare_tables(engine, released, original, columns, min_sup)
    finally:
        engine.close()


@app.command(help="Profile a table: per column its type, NULLs, distinct values, uniqueness and a role (direct identifier, quasi-identifier, sensitive, insensitive) with the reason; a hierarchy per quasi-identifier; the risk before anonymization; and (--write-policy) a policy that anonymize runs as it is. " + EXIT_HELP)
def profile(
    input: Optional[str] = option(None, "--input", panel=INPUT, help="CSV file, Parquet file/folder/glob, .duckdb file, or postgresql:// URL (with --table)."),
    table: Optional[str] = option(None, "--table", panel=INPUT, help="Table to read from a .duckdb, a postgresql:// input or the Spark catalog."),
    format: Optional[str] = option(None, "--format", panel=INPUT, help="csv | parquet | duckdb | postgres (guessed from the name or URL)."),
    delimiter: Optional[str] = option(None, "--delimiter", panel=INPUT, help="CSV delimiter (sniffed from the header line when absent)."),
    write_policy: Optional[str] = option(None, "--write-policy", panel=OUTPUT, help="Write the proposed policy (commented YAML) here, and hierarchy files beside it."),
    overwrite: bool = option(False, "--overwrite", panel=OUTPUT, help="Replace an existing policy or hierarchy file."),
    k: int = option(5, "--k", panel=PRIVACY, help="k of the written policy."),
    sample_rows: Optional[int] = option(None, "--sample-rows", panel=LIMITS, help="Measure tables larger than this on a sample of about this many rows (default 1,000,000)."),
    memory_limit: Optional[str] = option(None, "--memory-limit", panel=LIMITS, help="DuckDB memory_limit, e.g. 1GB (default: half the RAM)."),
    threads: Optional[int] = option(None, "--threads", panel=ENGINE, help="Threads of DuckDB or Spark (at most 4 per core)."),
    engine: Optional[str] = option(None, "--engine", panel=ENGINE, help="duckdb | postgres | spark (default: from the input)."),
    spark_master: Optional[str] = option(None, "--spark-master", panel=ENGINE, help="Spark master URL (default local[*]); with --engine spark."),
    spark_conf: Optional[List[str]] = option(None, "--spark-conf", panel=ENGINE, help="Spark setting KEY=VALUE. Repeat; with --engine spark."),
    json_out: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout (the profile; an error: {error, exit_code})."),
    quiet: bool = option(False, "--quiet", panel=OUTPUT, help="No progress on stderr."),
) -> None:
    from sqlanon.run.profile import DEFAULT_SAMPLE_ROWS, profile as api_profile

    def go():
        return api_profile(input, table=table, format=format, delimiter=delimiter, engine=engine, spark_master=spark_master,
                           spark_conf=spark_conf or None, memory_limit=memory_limit, threads=threads,
                           sample_rows=DEFAULT_SAMPLE_ROWS if sample_rows is None else sample_rows, k=k,
                           write_policy=write_policy, overwrite=overwrite, progress=_progress(quiet, True))

    result = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps(result, default=str))
        return
    import shutil
    import sys

    from rich.console import Console

    width = shutil.get_terminal_size((160, 24)).columns if sys.stdout.isatty() else 160
    render(result, Console(width=width, soft_wrap=False, highlight=False, markup=False, emoji=False))


@app.command(help='Print the SQL a run executes (base frequency set, final node, release), for any dialect.' + " " + EXIT_HELP)
@with_policy_flags(PRIVACY_FLAGS)
@with_policy_flags(SOURCE_FLAGS)
def sql(
    ctx: typer.Context,
    policy: Optional[str] = option(None, "--policy", panel=INPUT, help="YAML policy file; flags given here win over it (an output flag replaces its output)."),
    # the privacy models' keys come from their declarations (PRIVACY_FLAGS), as anonymize's
    metric: Optional[str] = policy_flag("quality.metric"),
    search: Optional[str] = policy_flag("strategy.search"),
    class_column: Optional[str] = policy_flag("quality.class_column"),
    drop_column: Optional[List[str]] = policy_flag("release.drop_columns", "--drop-column", help="Leave this column out of the release. Repeat."),
    linked: Optional[List[str]] = policy_flag("release.linked", "--linked"),
    keep_column: Optional[List[str]] = policy_flag("release.keep_columns", "--keep-column"),
    keep_others: Optional[bool] = policy_flag("release.keep_others"),
    weights: Optional[List[str]] = policy_flag("quality.weights"),
    min_level: Optional[List[str]] = policy_flag("hierarchies.min_level"),
    max_level: Optional[List[str]] = policy_flag("hierarchies.max_level"),
    nulls: Optional[List[str]] = policy_flag("hierarchies.nulls"),
    # not policy: the dialect the SQL is rendered for
    dialect: str = option("duckdb", "--dialect", panel=OUTPUT, help="Render for duckdb, postgres, spark, ... (sqlglot dialects)."),
    **source: Any,
) -> None:
    def go():
        import sqlglot

        try:
            if not dialect.strip():  # sqlglot reads "" as its own generic dialect
                raise ValueError
            sqlglot.Dialect.get_or_raise(dialect)
        except ValueError:
            raise ConfigError(f"unknown --dialect {dialect!r}") from None
        from sqlanon.run.api import plan_sql

        return plan_sql(policy_from_flags(policy, ctx.params, sql), dialect=dialect)

    for title, text in _run(go):
        typer.echo(f"-- {title}\n{text};\n")


@app.command(help='List the releases recorded in a registry.' + " " + EXIT_HELP)
def releases(
    database: str = option(..., "--database", "--registry", panel=INPUT, help="The .duckdb (or postgresql:// URL) holding sqlanon_releases."),
    json_out: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout: the list of releases, newest first (an error: {error, exit_code})."),
) -> None:
    import os

    def go():
        if not is_postgres_url(database) and not os.path.isfile(database):
            raise ConfigError(f"registry database not found: {database}")
        engine = connect(database=database, read_only=True)
        try:
            return registry.list_releases(engine, where=database)
        finally:
            engine.close()

    rows = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps(rows, default=str))
        return
    if not rows:
        typer.echo("no releases recorded")
    for r in rows:
        typer.echo(f"{r['id']:>4}  {r['created_at']}  {r['search']:<10} {r['source']} -> {r['target']}  rows={r['rows']} suppressed={r['suppressed_rows']}  {json.dumps(r['transformation'])}" + lineage_line(r) + registry.run_keys_text(r))


@app.command(help="Write the HTML report of a past release, from the report stored in its registry." + " " + EXIT_HELP)
def report(
    release: int = option(..., "--release", panel=INPUT, help="Release id (see `sqlanon releases`)."),
    database: str = option(..., "--database", "--registry", panel=INPUT, help="The .duckdb (or postgresql:// URL) holding sqlanon_releases."),
    output: Optional[str] = option(None, "--output", panel=OUTPUT, help="HTML file to write, this command's output (default: sqlanon-release-ID.html)."),
    overwrite: bool = option(False, "--overwrite", panel=OUTPUT, help="Replace an existing file."),
    full_paths: bool = option(False, "--full-paths", panel=REPORT, help="Show paths as recorded (absolute ones too); by default as the release's run chose."),
) -> None:
    def go():
        check_report_path(output)
        path = output or f"sqlanon-release-{release}.html"
        refuse_existing(path, "report file", overwrite)
        entry, stored = for_release(database, release, full_paths=full_paths)
        write_html(stored, path, release_id=entry["id"], created_at=entry.get("created_at"), full_paths=True if full_paths else None)
        return path

    typer.echo(_run(go))


@app.command("schema", help="Print the JSON Schema of the policy file or of the anonymize --json report. " + EXIT_HELP)
def schema_command(
    name: str = typer.Argument(..., help="policy | report"),
    output: Optional[str] = option(None, "--output", panel=OUTPUT, help="Write it to this file instead of stdout."),
    overwrite: bool = option(False, "--overwrite", panel=OUTPUT, help="Replace an existing --output file."),
) -> None:
    def go():
        refuse_existing(output, "output file", overwrite)
        text = schema_mod.dumps(schema_mod.schema(name))
        if output:  # inside _run: a file that cannot be written is one line, not a traceback
            with open(output, "w", encoding="utf-8") as fh:
                fh.write(text)
        return text

    text = _run(go)
    if not output:
        typer.echo(text, nl=False)


#: the --input and --format of the hierarchy commands (read by builders)
SOURCE_HELP = "Source of a builder's values: CSV, Parquet, .duckdb file or postgresql:// URL (with --table)."
FORMAT_HELP = "csv | parquet | duckdb | postgres (guessed from the name or URL)."


@hierarchy_app.command("show", help='Validate a hierarchy and print its shape and first rows.' + " " + EXIT_HELP)
def hierarchy_show(
    spec: str = typer.Argument(..., help="A hierarchy CSV/YAML/JSON, or a builder (bands:..., dates, mask) with --input."),
    column: str = option("value", "--column", panel=INPUT, help="Column the hierarchy is for."),
    input: Optional[str] = option(None, "--input", panel=INPUT, help=SOURCE_HELP),
    format: Optional[str] = option(None, "--format", panel=INPUT, help=FORMAT_HELP),
    delimiter: Optional[str] = option(None, "--delimiter", panel=INPUT, help="CSV delimiter of --input (sniffed when absent)."),
    table: Optional[str] = option(None, "--table", panel=INPUT, help="Table of a .duckdb or postgresql:// --input."),
    hierarchy_delimiter: Optional[str] = option(None, "--hierarchy-delimiter", panel=INPUT, help="Delimiter of a hierarchy CSV (sniffed when absent)."),
    rows: int = option(10, "--rows", panel=OUTPUT, help="Leaf rows to print."),
    max_value_length: Optional[int] = option(None, "--max-value-length", panel=LIMITS, help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
    json_out: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout: the hierarchy's shape (attribute, leaves, levels, distinct per level, origin) and its first --rows rows."),
) -> None:
    def go():
        h, _ = _load_for_cli(spec, column, input, format, delimiter, table, hierarchy_delimiter, max_value_length)
        return h

    h = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps({**h.describe(), "rows": h.rows[:rows]}))
        return
    d = h.describe()
    typer.echo(f"{d['attribute']}: {d['leaves']} leaves, {d['levels']} levels, distinct per level {d['distinct_per_level']} ({d['origin']})")
    for r in h.rows[:rows]:
        typer.echo("  " + " -> ".join("NULL" if c is None else c for c in r))  # the NULL leaf


@hierarchy_app.command("import", help='Store a validated hierarchy as a mapping table (leaf, level_1, ..., root) in a database.' + " " + EXIT_HELP)
def hierarchy_import(
    spec: str = typer.Argument(..., help="A hierarchy CSV/YAML/JSON, or a builder with --input."),
    column: str = option(..., "--column", panel=INPUT, help="Column the hierarchy is for."),
    database: str = option(..., "--database", panel=OUTPUT, help=".duckdb file to store the mapping table in."),
    table_name: Optional[str] = option(None, "--name", panel=OUTPUT, help="Mapping table name (default sqlanon_hierarchy_<column>)."),
    input: Optional[str] = option(None, "--input", panel=INPUT, help=SOURCE_HELP),
    format: Optional[str] = option(None, "--format", panel=INPUT, help=FORMAT_HELP),
    delimiter: Optional[str] = option(None, "--delimiter", panel=INPUT, help="CSV delimiter of --input (sniffed when absent)."),
    table: Optional[str] = option(None, "--table", panel=INPUT, help="Table of a .duckdb or postgresql:// --input."),
    hierarchy_delimiter: Optional[str] = option(None, "--hierarchy-delimiter", panel=INPUT, help="Delimiter of a hierarchy CSV (sniffed when absent)."),
    overwrite: bool = option(False, "--overwrite", panel=OUTPUT, help="Replace an existing mapping table."),
    max_value_length: Optional[int] = option(None, "--max-value-length", panel=LIMITS, help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
) -> None:
    def go():
        h, _ = _load_for_cli(spec, column, input, format, delimiter, table, hierarchy_delimiter, max_value_length)
        return store_hierarchy(database, h, table_name, overwrite)

    name = _run(go)

    typer.echo(f"stored hierarchy for {column!r} as table {name} in {redact(database)} (use it as --qi {column}=table:{name})")


def _load_for_cli(spec, column, input, format, delimiter, table, hierarchy_delimiter, max_value_length=None):
    bound = MAX_VALUE_LENGTH if max_value_length is None else max_value_length
    if bound < 1:
        raise ConfigError(f"--max-value-length must be at least 1 (characters), got {bound}")
    if max_value_length is not None and spec.split(":")[0] not in BUILDERS:
        raise ConfigError(f"--max-value-length bounds hierarchies built from the data ({', '.join(BUILDERS)}); {spec} is not one")
    if spec.split(":")[0] in BUILDERS:
        if not input:
            raise ConfigError(f"builder {spec!r} needs --input to read the column's values from")

        source = Source.open(input, format, table, delimiter)
        engine = connect(database=source.database or ":memory:", read_only=bool(source.database))
        try:
            return load_hierarchy(spec, column, engine, source, hierarchy_delimiter, bound), source
        finally:
            engine.close()
    return load_hierarchy(spec, column, None, None, hierarchy_delimiter), None


register_generate(app)
register_dbt(app)
register_warm_up(app)


def _kernels_for_the_cli(stats_local) -> None:
    """The CLI's settings of the in-process kernels (:func:`main`), set once they are imported."""
    stats_local.FREEZE_GC = True
    stats_local.HIDE_SCIPY_BLAS = True


def main() -> None:
    """The ``sqlanon`` command: the app, then the process leaves without the interpreter's
    teardown (:func:`~sqlanon.cli.process_exit.leave`). The process is sqlanon's own, so its
    modules' objects are frozen out of the cyclic garbage collector at the start, and the
    compiled kernels' once they load (:data:`sqlanon.stats.local.FREEZE_GC`): a full collection
    then scans only what the run made. The kernels also load without SciPy's linear algebra,
    which numba would import only to check for it (:data:`sqlanon.stats.local.HIDE_SCIPY_BLAS`)."""
    import gc
    import signal

    gc.freeze()
    after_import("sqlanon.stats.local", _kernels_for_the_cli)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        app(prog_name="sqlanon")  # also under python -m sqlanon: usage lines and the completion script name the command
    except SystemExit as done:
        leave(done.code)
    leave(0)


if __name__ == "__main__":
    main()
