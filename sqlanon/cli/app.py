"""The ``sqlanon`` command line (typer). Data on stdout, progress on stderr.

Exit codes: 0 ok, 1 error (hierarchy, engine, data), 2 usage (bad flags, policy keys, unknown
columns, missing files), 3 unsatisfiable (no plan meets the privacy model within the budget).
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer
from typer.core import TyperGroup

from sqlanon.errors import ConfigError
from sqlanon.config.search_options import cli_search_options, given
from sqlanon.cli.generate import register as register_generate
from sqlanon.cli.common import EXIT_HELP, _err, _fail, _on_sigterm, _progress, _run, _split, _terminated  # noqa: F401  (_err, _terminated: the commands' helpers)
from sqlanon.progress import configure_logging_from_env
from sqlanon.config.policy import Policy, parse_qi_flags
from sqlanon.run.api import anonymize as api_anonymize, plan_sql
from sqlanon.run.check import check as api_check, check_plan
from sqlanon.risk import text_lines
from sqlanon.search.generate.scores import compare_tables
from sqlanon.engine import connect, is_postgres_url
from sqlanon.engine.source import Source
from sqlanon.release import registry
from sqlanon.report import for_release, write_html
from sqlanon.config.checks import check_report_path, refuse_existing
from sqlanon.config import schema as schema_mod
from sqlanon.hierarchy.store import store_hierarchy
from sqlanon.engine.urls import redact
from sqlanon.hierarchy import BUILDERS, MAX_VALUE_LENGTH, load_hierarchy

#: the flag parser's error base class (typer >= 0.22 vendors click: not ``click.ClickException``)
_PARSER_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _JsonUsageErrors(TyperGroup):
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


app = typer.Typer(
    cls=_JsonUsageErrors,
    name="sqlanon",
    help="Anonymize tables inside the database: k-anonymity, l-diversity, t-closeness by generated SQL. " + EXIT_HELP,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)
hierarchy_app = typer.Typer(help="Import and inspect generalization hierarchies. " + EXIT_HELP, no_args_is_help=True)
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
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Anonymize tables inside the database."""
    import os

    configure_logging_from_env(os.environ)


def _policy_from_flags(policy_path, flags: dict, search_options: dict):
    policy = Policy.from_file(policy_path) if policy_path else Policy()
    qi = flags.pop("qi")
    if qi:
        policy.qi = {**policy.qi, **parse_qi_flags(qi)}
    policy.update({k: v for k, v in flags.items() if given(v)}, "flags")
    merged = dict(policy.search_options)
    merged.update(search_options)  # already only the options given (0 is a value)
    policy.search_options = merged
    return policy


@app.command(help='Find the best generalization meeting the privacy model and write the release.' + " " + EXIT_HELP)
def anonymize(
    policy: Optional[str] = typer.Option(None, "--policy", help="YAML policy file; flags given here win over it."),
    input: Optional[str] = typer.Option(None, "--input", "-i", help="CSV file, Parquet file/folder/glob, .duckdb file, or postgresql:// URL (with --table)."),
    format: Optional[str] = typer.Option(None, "--format", help="csv | parquet | duckdb | postgres (guessed from the name or URL)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default ,)."),
    table: Optional[str] = typer.Option(None, "--table", help="Table to read from a .duckdb or postgresql:// input."),
    qi: Optional[List[str]] = typer.Option(None, "--qi", help="COLUMN=HIERARCHY (CSV path, YAML/JSON tree, bands:5,10,20, dates, mask, numeric, flat). Repeat."),
    hierarchy_delimiter: Optional[str] = typer.Option(None, "--hierarchy-delimiter", help="Delimiter of hierarchy CSVs (sniffed when absent)."),
    max_value_length: Optional[int] = typer.Option(None, "--max-value-length", help="Longest value (characters) a hierarchy built from the data (mask, flat, bands, dates, numeric) takes; longer ones are an error (default 4096)."),
    k: Optional[int] = typer.Option(None, "--k", help="k of k-anonymity."),
    l: Optional[float] = typer.Option(None, "--l", help="l of l-diversity on --sensitive-column."),
    l_diversity: Optional[str] = typer.Option(None, "--l-diversity", help="distinct | entropy."),
    t: Optional[float] = typer.Option(None, "--t", help="t of t-closeness on --sensitive-column."),
    t_distance: Optional[str] = typer.Option(None, "--t-distance", help="equal (categorical) | ordered (numeric)."),
    max_suppression: Optional[float] = typer.Option(None, "--max-suppression", help="Fraction of rows that may be suppressed (MaxSup)."),
    suppression: Optional[str] = typer.Option(None, "--suppression", help="mask (QIs set to *) | drop."),
    metric: Optional[str] = typer.Option(None, "--metric", help="precision | height | lm | discernibility | aecs | cm | entropy | loss (ARX default) | loss-arithmetic | granularity (default: precision; genetic and bottom-up: lm; top-down takes none)."),
    search: Optional[str] = typer.Option(None, "--search", help="optimal | samarati | incognito | lightning (heuristic, wide tables) | auto | bottom-up | top-down | genetic."),
    sensitive_column: Optional[str] = typer.Option(None, "--sensitive-column"),
    class_column: Optional[str] = typer.Option(None, "--class-column"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write a Parquet (or .csv) file."),
    output_table: Optional[str] = typer.Option(None, "--output-table", help="Write a new table (into the input .duckdb, or --database)."),
    database: Optional[str] = typer.Option(None, "--database", help=".duckdb file for --output-table with a file input."),
    in_place: bool = typer.Option(False, "--in-place", help="Replace the input table, in one transaction."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output file or table."),
    drop_column: Optional[List[str]] = typer.Option(None, "--drop-column", help="Leave a column (e.g. a direct identifier) out of the release."),
    keep_column: Optional[List[str]] = typer.Option(None, "--keep-column", help="Release this column as is although its values are unique per row (otherwise refused). Repeat."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="DuckDB memory_limit, e.g. 1GB (default: half the RAM)."),
    threads: Optional[int] = typer.Option(None, "--threads"),
    registry: Optional[str] = typer.Option(None, "--registry", help="Registry database for file outputs (default: sqlanon_releases.duckdb beside the output)."),
    report: Optional[str] = typer.Option(None, "--report", help="Also write an HTML report here."),
    json_out: bool = typer.Option(False, "--json", help="Print exactly one JSON object on stdout."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan only: no release and no registry entry are written (a --report is, as a preview)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    trace: bool = typer.Option(False, "--trace", help="bottom-up/top-down/genetic: keep and print every step."),
    previous: Optional[List[str]] = typer.Option(None, "--previous", help="top-down: a previous release (registry id, table or file). Repeat."),
    x: Optional[List[str]] = typer.Option(None, "--x", help="top-down: X attributes (comma list)."),
    y: Optional[List[str]] = typer.Option(None, "--y", help="top-down: Y attributes (comma list)."),
    privacy: Optional[str] = typer.Option(None, "--privacy", help="top-down: xy-anonymity | xy-linkability."),
    sensitive_values: Optional[List[str]] = typer.Option(None, "--sensitive-values", help="top-down: sensitive Y values (comma list)."),
    inconsistent: Optional[List[str]] = typer.Option(None, "--inconsistent", help="top-down: inconsistency predicate. Repeat."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="genetic: iterations."),
    population: Optional[str] = typer.Option(None, "--population", help="k-map / delta-presence: the population TABLE (in the input's database) or file; genetic without them: the population size (with them: --option population=N)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="genetic: random seed."),
    mutation_rate: Optional[float] = typer.Option(None, "--mutation-rate", help="genetic: mutation rate."),
    numeric: Optional[List[str]] = typer.Option(None, "--numeric", help="genetic: a numeric QI (intervals). Repeat or comma list."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="lightning/auto (default 30), genetic and bottom-up: stop searching after this many seconds (the whole search; stopped_by says so)."),
    step_limit: Optional[int] = typer.Option(None, "--step-limit", help="lightning/auto: stop after this many node evaluations."),
    option: Optional[List[str]] = typer.Option(None, "--option", help="Any search option KEY=VALUE. Repeat."),
    weights: Optional[List[str]] = typer.Option(None, "--weights", help="Attribute weights COLUMN=W (comma list or repeat) for precision, lm, entropy, height."),
    min_level: Optional[List[str]] = typer.Option(None, "--min-level", help="Lowest level a lattice search may choose, COLUMN=LEVEL. Repeat."),
    max_level: Optional[List[str]] = typer.Option(None, "--max-level", help="Highest level a lattice search may choose, COLUMN=LEVEL. Repeat."),
    microaggregate: Optional[List[str]] = typer.Option(None, "--microaggregate", help="Release a numeric column as its class mean or median, COLUMN=mean|median. Repeat."),
    local_recoding: bool = typer.Option(False, "--local-recoding", help="Re-anonymize suppressed rows with more general transformations (ARX local recoding)."),
    local_iterations: Optional[int] = typer.Option(None, "--local-iterations", help="Local recoding: at most N further transformations (default 10)."),
    c: Optional[float] = typer.Option(None, "--c", help="c of recursive (c,l)-diversity (with --l-diversity recursive --l L)."),
    t_hierarchy: Optional[str] = typer.Option(None, "--t-hierarchy", help="Hierarchy of --sensitive-column for --t-distance hierarchical."),
    k_map: Optional[int] = typer.Option(None, "--k-map", help="k of k-map: every class matches >= k population records (--population TABLE or --population-size N)."),
    population_size: Optional[int] = typer.Option(None, "--population-size", help="k-map with an estimated population of N records."),
    k_map_estimator: Optional[str] = typer.Option(None, "--k-map-estimator", help="Estimated k-map: poisson (default) | zero-truncated-poisson."),
    k_map_significance: Optional[float] = typer.Option(None, "--k-map-significance", help="Estimated k-map: significance level (default 0.01)."),
    delta_min: Optional[float] = typer.Option(None, "--delta-min", help="delta-presence lower bound (with --population)."),
    delta_max: Optional[float] = typer.Option(None, "--delta-max", help="delta-presence upper bound (with --population)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="SafePub (epsilon, delta)-differential privacy: total epsilon."),
    delta: Optional[float] = typer.Option(None, "--delta", help="SafePub: delta."),
    epsilon_search: Optional[float] = typer.Option(None, "--epsilon-search", help="SafePub: part of epsilon spent on choosing the generalization (default 10%)."),
    safepub_steps: Optional[int] = typer.Option(None, "--safepub-steps", help="SafePub: steps of the exponential-mechanism search (default 100)."),
    population_fraction: Optional[float] = typer.Option(None, "--population-fraction", help="Report: the input is this fraction of its population; estimate population uniques."),
    risk_threshold: Optional[float] = typer.Option(None, "--risk-threshold", help="Report: prosecutor risk threshold (default 0.2)."),
    engine: Optional[str] = typer.Option(None, "--engine", help="duckdb | postgres | spark (default: from the input)."),
    spark_master: Optional[str] = typer.Option(None, "--spark-master", help="Spark master URL (default local[*]); with --engine spark."),
    spark_conf: Optional[List[str]] = typer.Option(None, "--spark-conf", help="Spark setting KEY=VALUE. Repeat; with --engine spark."),
) -> None:
    def go():
        flags = dict(
            qi=qi, input=input, format=format, delimiter=delimiter, table=table, hierarchy_delimiter=hierarchy_delimiter,
            k=k, l=l, l_diversity=l_diversity, t=t, t_distance=t_distance, max_suppression=max_suppression,
            suppression=suppression, metric=metric, search=search, sensitive_column=sensitive_column,
            class_column=class_column, output=output, output_table=output_table, database=database,
            in_place=in_place, overwrite=overwrite, drop_columns=drop_column, keep_columns=keep_column, memory_limit=memory_limit,
            threads=threads, registry=registry, report=report, weights=weights, min_level=min_level,
            max_level=max_level, microaggregate=microaggregate, local_recoding=local_recoding,
            c=c, t_hierarchy=t_hierarchy, k_map=k_map, population_size=population_size,
            k_map_estimator=k_map_estimator, k_map_significance=k_map_significance,
            delta_min=delta_min, delta_max=delta_max, epsilon=epsilon, delta=delta,
            epsilon_search=epsilon_search, safepub_steps=safepub_steps,
            engine=engine, spark_master=spark_master, spark_conf=spark_conf,
        )

        search_options = cli_search_options(
            option, trace=trace, previous=previous, x=_split(x), y=_split(y), privacy=privacy,
            sensitive_values=_split(sensitive_values), inconsistent=inconsistent, iterations=iterations,
            seed=seed, mutation_rate=mutation_rate, numeric=_split(numeric),
        )
        pol = _policy_from_flags(policy, flags, search_options)
        _route_model_flags(pol, population, seed)
        for key, value in (("time_limit", time_limit), ("step_limit", step_limit)):
            if value is not None:  # 0 is a value (and refused by the search), not an absence
                pol.search_options[key] = value
        if local_iterations is not None:  # 0 is a value (and refused), not an absence
            pol.update({"local_iterations": local_iterations}, "flags")
        for key, value in (("population_fraction", population_fraction), ("risk_threshold", risk_threshold), ("max_value_length", max_value_length)):
            if value is not None:  # 0 is a value (and refused), not an absence
                pol.update({key: value}, "flags")
        return api_anonymize(pol, progress=_progress(quiet, json_out), dry_run=dry_run)

    result = _run(go, json_out=json_out)
    _print_report(result, json_out)


def _route_model_flags(pol, population, seed) -> None:
    """``--population``: the genetic search's population size (a number, with --search genetic),
    else the population table of k-map / delta-presence (also with --search genetic when k-map with
    a table or delta-presence is asked: the size is then ``--option population=N``). ``--seed``
    with SafePub seeds its sampling."""
    if population is not None:
        wants_table = (pol.k_map is not None and pol.population_size is None) or pol.delta_min is not None or pol.delta_max is not None
        if pol.search == "genetic" and not wants_table:
            try:
                pol.search_options["population"] = int(population)
            except ValueError:
                raise ConfigError(f"--population with the genetic search is its population size, got {population!r}") from None
        else:
            pol.update({"population": population}, "flags")
    if seed is not None and pol.epsilon is not None:
        pol.search_options.pop("seed", None)
        pol.update({"seed": seed}, "flags")


def _print_report(result: dict, json_out: bool) -> None:
    for warning in result.get("warnings") or []:  # on stderr whatever -q/--json say
        typer.echo(f"warning: {warning['message']}", err=True)
    if json_out:
        typer.echo(json.dumps(result, default=str))
        return
    trace = result.get("trace")
    if trace:
        for i, step in enumerate(trace, 1):
            typer.echo(f"step {i}: " + ", ".join(f"{k}={v}" for k, v in step.items()))
    typer.echo(f"search        {result['search']} (k={result['k']})")
    typer.echo("transformation " + ", ".join(f"{c}={v}" for c, v in result["transformation"].items()))
    typer.echo(f"metric        {result['metric']['name']} = {result['metric']['value']:.6g}")
    typer.echo(f"rows          {result['rows']:,} ({result['suppressed_rows']:,} suppressed, budget {result.get('suppression_budget', 0):,})")
    typer.echo(f"privacy       smallest released class {result['privacy'].get('min_class_size')}, {result['privacy'].get('classes')} classes")
    typer.echo(f"work          {result['nodes_evaluated']} nodes evaluated, {result['queries']} queries, {result['seconds']} s")
    dry = result.get("dry_run")
    if dry:
        typer.echo(f"output        (dry run: nothing written; would write {dry['would_write']})")
    else:
        typer.echo(f"output        {result['output'] or '(none: no output requested)'}")


@app.command(help='Measure k, l, t, suppression and metrics of any table without changing it.' + " " + EXIT_HELP)
def check(
    input: str = typer.Option(..., "--input", "-i", help="Table to measure (CSV, Parquet, .duckdb, or a postgresql:// URL with --table)."),
    qi: List[str] = typer.Option(..., "--qi", help="COLUMN or COLUMN=HIERARCHY (with a hierarchy, precision and LM are measured). Repeat."),
    format: Optional[str] = typer.Option(None, "--format"),
    delimiter: Optional[str] = typer.Option(None, "--delimiter"),
    table: Optional[str] = typer.Option(None, "--table"),
    hierarchy_delimiter: Optional[str] = typer.Option(None, "--hierarchy-delimiter"),
    k: Optional[int] = typer.Option(None, "--k", help="Report whether the table is k-anonymous."),
    max_suppression: Optional[float] = typer.Option(None, "--max-suppression", help="With --k: rows that may be suppressed (fraction)."),
    l: Optional[float] = typer.Option(None, "--l"),
    t: Optional[float] = typer.Option(None, "--t"),
    t_distance: Optional[str] = typer.Option(None, "--t-distance", help="With --t: equal | ordered (default equal)."),
    sensitive_column: Optional[str] = typer.Option(None, "--sensitive-column"),
    class_column: Optional[str] = typer.Option(None, "--class-column"),
    against: Optional[str] = typer.Option(None, "--against", help="An original table: compare (generated data: NAS, itemsets, dissimilarity)."),
    against_format: Optional[str] = typer.Option(None, "--against-format"),
    against_delimiter: Optional[str] = typer.Option(None, "--against-delimiter"),
    min_sup: Optional[int] = typer.Option(None, "--min-sup", help="With --against: min support of the compared itemsets (default 1)."),
    transformation: Optional[str] = typer.Option(None, "--transformation", help="A plan to measure on this table without writing: an anonymize --json report (file or text) or its transformation. --qi then needs hierarchies."),
    numeric: Optional[List[str]] = typer.Option(None, "--numeric", help="With --transformation: QIs cut into intervals."),
    risk: bool = typer.Option(False, "--risk", help="Re-identification risk: prosecutor, journalist, marketer, sample uniques (docs/risk.md)."),
    population_fraction: Optional[float] = typer.Option(None, "--population-fraction", help="With --risk: the table is this fraction of its population; estimate population uniques (Pitman, Zayatz, SNB, Dankar)."),
    risk_threshold: Optional[float] = typer.Option(None, "--risk-threshold", help="With --risk: prosecutor risk threshold for 'records above' (default 0.2)."),
    max_value_length: Optional[int] = typer.Option(None, "--max-value-length", help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    def go():
        specs = {}
        for item in qi:
            column, sep, spec = item.partition("=")
            specs[column] = spec if sep else None
        if (risk or population_fraction is not None or risk_threshold is not None) and (transformation or against):
            raise ConfigError("--risk measures the table itself; it cannot be combined with --transformation or --against")
        # a flag given is a flag used: refuse the ones the chosen kind of check does not read
        given = {"--k": k, "--max-suppression": max_suppression, "--l": l, "--t": t, "--t-distance": t_distance,
                 "--sensitive-column": sensitive_column, "--class-column": class_column, "--numeric": numeric or None,
                 "--against-format": against_format, "--against-delimiter": against_delimiter, "--min-sup": min_sup,
                 "--transformation": transformation, "--max-value-length": max_value_length}
        if against:
            reads, mode = {"--against-format", "--against-delimiter", "--min-sup"}, "--against"
        elif transformation:
            reads, mode = {"--k", "--max-suppression", "--class-column", "--numeric", "--transformation", "--max-value-length"}, "--transformation"
        else:
            reads, mode = {"--k", "--max-suppression", "--l", "--t", "--t-distance", "--sensitive-column", "--class-column", "--max-value-length"}, "this check"
        bound = {} if max_value_length is None else {"max_value_length": max_value_length}
        unused = [name for name, value in given.items() if value is not None and name not in reads]
        if unused:
            raise ConfigError(f"{', '.join(unused)} not used by {mode}" + ("" if mode != "this check" else " (--numeric needs --transformation; --against-format, --against-delimiter, --min-sup need --against)"))
        if max_suppression is not None and k is None and not transformation:
            raise ConfigError("--max-suppression needs --k (the suppression budget of a k-anonymity check)")
        if t_distance is not None and t is None:
            raise ConfigError("--t-distance needs --t")
        if transformation:
            if not all(specs.values()):
                raise ConfigError("--transformation needs a hierarchy for every --qi (COLUMN=HIERARCHY)")
            return check_plan(input, specs, transformation, format=format, delimiter=delimiter, table=table, k=1 if k is None else k, max_suppression=max_suppression or 0.0, class_column=class_column, numeric=_split(numeric), hierarchy_delimiter=hierarchy_delimiter, **bound)
        if against:
            return _against(input, format, delimiter, table, against, against_format, against_delimiter, list(specs), 1 if min_sup is None else min_sup)
        has_all = all(specs.values())
        return api_check(input, specs if has_all else list(specs), format=format, delimiter=delimiter, table=table, k=k, l=l, t=t, t_distance=t_distance or "equal", sensitive_column=sensitive_column, class_column=class_column, hierarchy_delimiter=hierarchy_delimiter, max_suppression=max_suppression or 0.0, risk=risk, population_fraction=population_fraction, risk_threshold=risk_threshold, **bound)

    result = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps(result, default=str))
    else:
        if "risk" in result:
            result = dict(result)
            lines = text_lines(result.pop("risk"))
        else:
            lines = []
        for key, value in result.items():
            typer.echo(f"{key:<16}{json.dumps(value, default=str) if isinstance(value, (dict, list)) else value}")
        for line in lines:
            typer.echo(line)
    if result.get("k_anonymous") is False or result.get("within_budget") is False:
        raise typer.Exit(3)  # the table (or plan) does not meet the k asked for


def _against(input, format, delimiter, table, against, against_format, against_delimiter, columns, min_sup):
    released = Source.open(input, format, table, delimiter)
    original = Source.open(against, against_format, None, against_delimiter)
    engine = connect(database=released.database or ":memory:", read_only=bool(released.database))
    try:
        return compare_tables(engine, released, original, columns, min_sup)
    finally:
        engine.close()


@app.command(help='Print the SQL a run executes (base frequency set, final node, release), for any dialect.' + " " + EXIT_HELP)
def sql(
    policy: Optional[str] = typer.Option(None, "--policy"),
    input: Optional[str] = typer.Option(None, "--input", "-i"),
    format: Optional[str] = typer.Option(None, "--format"),
    delimiter: Optional[str] = typer.Option(None, "--delimiter"),
    table: Optional[str] = typer.Option(None, "--table"),
    qi: Optional[List[str]] = typer.Option(None, "--qi"),
    hierarchy_delimiter: Optional[str] = typer.Option(None, "--hierarchy-delimiter"),
    k: Optional[int] = typer.Option(None, "--k"),
    max_suppression: Optional[float] = typer.Option(None, "--max-suppression"),
    metric: Optional[str] = typer.Option(None, "--metric"),
    search: Optional[str] = typer.Option(None, "--search"),
    sensitive_column: Optional[str] = typer.Option(None, "--sensitive-column"),
    class_column: Optional[str] = typer.Option(None, "--class-column"),
    l: Optional[float] = typer.Option(None, "--l"),
    t: Optional[float] = typer.Option(None, "--t"),
    drop_column: Optional[List[str]] = typer.Option(None, "--drop-column", help="Leave this column out of the release. Repeat."),
    weights: Optional[List[str]] = typer.Option(None, "--weights", help="Attribute weights COLUMN=W (comma list or repeat)."),
    min_level: Optional[List[str]] = typer.Option(None, "--min-level", help="Lowest level the search may choose, COLUMN=LEVEL. Repeat."),
    max_level: Optional[List[str]] = typer.Option(None, "--max-level", help="Highest level the search may choose, COLUMN=LEVEL. Repeat."),
    dialect: str = typer.Option("duckdb", "--dialect", help="Render for duckdb, postgres, spark, ... (sqlglot dialects)."),
) -> None:
    def go():
        import sqlglot

        try:
            if not dialect.strip():  # sqlglot reads "" as its own generic dialect
                raise ValueError
            sqlglot.Dialect.get_or_raise(dialect)
        except ValueError:
            raise ConfigError(f"unknown --dialect {dialect!r}") from None
        flags = dict(qi=qi, input=input, format=format, delimiter=delimiter, table=table, hierarchy_delimiter=hierarchy_delimiter, k=k, max_suppression=max_suppression, metric=metric, search=search, sensitive_column=sensitive_column, class_column=class_column, l=l, t=t, drop_columns=drop_column, weights=weights, min_level=min_level, max_level=max_level)
        pol = _policy_from_flags(policy, flags, {})
        return plan_sql(pol, dialect=dialect)

    for title, text in _run(go):
        typer.echo(f"-- {title}\n{text};\n")


@app.command(help='List the releases recorded in a registry.' + " " + EXIT_HELP)
def releases(
    database: str = typer.Option(..., "--database", "--registry", help="The .duckdb holding sqlanon_releases."),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    import os

    def go():
        if not is_postgres_url(database) and not os.path.isfile(database):
            raise ConfigError(f"registry database not found: {database}")
        engine = connect(database=database, read_only=True)
        try:
            return registry.list_releases(engine)
        finally:
            engine.close()

    rows = _run(go, json_out=json_out)
    if json_out:
        typer.echo(json.dumps(rows, default=str))
        return
    if not rows:
        typer.echo("no releases recorded")
    for r in rows:
        typer.echo(f"{r['id']:>4}  {r['created_at']}  {r['search']:<10} {r['source']} -> {r['target']}  rows={r['rows']} suppressed={r['suppressed_rows']}  {json.dumps(r['transformation'])}")


@app.command(help="Write the HTML report of a past release, from the report stored in its registry." + " " + EXIT_HELP)
def report(
    release: int = typer.Option(..., "--release", help="Release id (see `sqlanon releases`)."),
    database: str = typer.Option(..., "--database", "--registry", help="The .duckdb (or postgresql:// URL) holding sqlanon_releases."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="HTML file to write (default: sqlanon-release-ID.html)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing file."),
) -> None:
    def go():
        check_report_path(output)
        path = output or f"sqlanon-release-{release}.html"
        refuse_existing(path, "report file", overwrite)
        entry, stored = for_release(database, release)
        write_html(stored, path, release_id=entry["id"], created_at=entry.get("created_at"))
        return path

    typer.echo(_run(go))


@app.command("schema", help="Print the JSON Schema of the policy file or of the anonymize --json report. " + EXIT_HELP)
def schema_command(
    name: str = typer.Argument(..., help="policy | report"),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write it to this file instead of stdout."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing --output file."),
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


@hierarchy_app.command("show", help='Validate a hierarchy and print its shape and first rows.' + " " + EXIT_HELP)
def hierarchy_show(
    spec: str = typer.Argument(..., help="A hierarchy CSV/YAML/JSON, or a builder (bands:..., dates, mask) with --input."),
    column: str = typer.Option("value", "--column", help="Column the hierarchy is for."),
    input: Optional[str] = typer.Option(None, "--input", help="Source (for builders)."),
    format: Optional[str] = typer.Option(None, "--format"),
    delimiter: Optional[str] = typer.Option(None, "--delimiter"),
    table: Optional[str] = typer.Option(None, "--table"),
    hierarchy_delimiter: Optional[str] = typer.Option(None, "--hierarchy-delimiter"),
    rows: int = typer.Option(10, "--rows", help="Leaf rows to print."),
    max_value_length: Optional[int] = typer.Option(None, "--max-value-length", help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
    json_out: bool = typer.Option(False, "--json"),
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
        typer.echo("  " + " -> ".join(r))


@hierarchy_app.command("import", help='Store a validated hierarchy as a mapping table (leaf, level_1, ..., root) in a database.' + " " + EXIT_HELP)
def hierarchy_import(
    spec: str = typer.Argument(..., help="A hierarchy CSV/YAML/JSON, or a builder with --input."),
    column: str = typer.Option(..., "--column", help="Column the hierarchy is for."),
    database: str = typer.Option(..., "--database", help=".duckdb file to store the mapping table in."),
    table_name: Optional[str] = typer.Option(None, "--name", help="Mapping table name (default sqlanon_hierarchy_<column>)."),
    input: Optional[str] = typer.Option(None, "--input"),
    format: Optional[str] = typer.Option(None, "--format"),
    delimiter: Optional[str] = typer.Option(None, "--delimiter"),
    table: Optional[str] = typer.Option(None, "--table"),
    hierarchy_delimiter: Optional[str] = typer.Option(None, "--hierarchy-delimiter"),
    overwrite: bool = typer.Option(False, "--overwrite"),
    max_value_length: Optional[int] = typer.Option(None, "--max-value-length", help="Longest value (characters) a hierarchy built from the data takes (default 4096)."),
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


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)
    app()


if __name__ == "__main__":
    main()
