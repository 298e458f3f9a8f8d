"""``sqlanon generate``: anonymization by data generation (KRIMP code table + generator).

Registered on the main typer app by ``sqlanon.cli.app`` (``register(app)``). Data (the JSON result)
on stdout, progress on stderr; errors are one line ``error: ...`` and the error's exit code.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from sqlanon.cli.conventions import INPUT, LIMITS, OUTPUT, PRIVACY, REPORT, SEARCH, option
from sqlanon.cli.common import EXIT_HELP, _progress, _run, _split
from sqlanon.errors import ConfigError
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.files.paths import check_report_path, refuse_existing
from sqlanon.risk import validate_options
from sqlanon.report import write_html


def generate_command(
    input: str = option(..., "--input", panel=INPUT, help="Source: CSV, Parquet file/glob, .duckdb file or postgresql:// URL (both with --table)."),
    format: Optional[str] = option(None, "--format", panel=INPUT, help="csv, parquet or duckdb (default: from the file name)."),
    delimiter: Optional[str] = option(None, "--delimiter", panel=INPUT, help="CSV delimiter (one character; \\t for tab)."),
    table: Optional[str] = option(None, "--table", panel=INPUT, help="Table of a .duckdb input."),
    columns: Optional[List[str]] = option(None, "--columns", panel=INPUT, help="Columns to model and generate (comma separated; default: all)."),
    min_sup: int = option(1, "--min-sup", panel=PRIVACY, help="Minimum support (rows) of KRIMP's candidate itemsets; acts like k."),
    laplace: float = option(0.001, "--laplace", panel=SEARCH, help="Laplace correction added to every code-table usage (> 0); larger = fewer generated rows copy an original row (NAS need not fall, see docs/generate.md)."),
    rows: Optional[int] = option(None, "--rows", panel=OUTPUT, help="Rows to generate (default: as many as the input)."),
    seed: Optional[int] = option(None, "--seed", panel=SEARCH, help="Random seed (reproducible output)."),
    candidates: str = option("all", "--candidates", panel=SEARCH, help="KRIMP candidates: all or closed frequent itemsets."),
    output: Optional[str] = option(None, "--output", panel=OUTPUT, help="Write the generated table to a Parquet (or .csv) file."),
    output_table: Optional[str] = option(None, "--output-table", panel=OUTPUT, help="Write to a new table of the .duckdb input."),
    in_place: bool = option(False, "--in-place", panel=OUTPUT, help="Replace the input table (one transaction)."),
    overwrite: bool = option(False, "--overwrite", panel=OUTPUT, help="Replace an existing output file/table."),
    dissimilarity: bool = option(True, "--dissimilarity", panel=REPORT, help="--no-dissimilarity: skip the code-table dissimilarity (it runs KRIMP on the output)."),
    memory_limit: Optional[str] = option(None, "--memory-limit", panel=LIMITS, help="DuckDB memory_limit, e.g. 1GB."),
    time_limit: Optional[float] = option(None, "--time-limit", panel=LIMITS, help="Seconds for the whole run: mining and KRIMP get half, less if the rows need more (then rows come from the best code table so far: code_table_complete false); the optional scores (patterns, dissimilarity) are skipped or cut to fit (scores_time_limited), NAS and risk always computed; if the limit passes while generating, scoring or measuring risk, nothing is written and the exit code is 1 (JSON: stopped_by, stopped_in, kept)."),
    report: Optional[str] = option(None, "--report", panel=REPORT, help="Also write an HTML report here (risk of input and generated table, NAS, itemset overlap)."),
    population_fraction: Optional[float] = option(None, "--population-fraction", panel=REPORT, help="Risk: the input is this fraction of its population; estimate population uniques."),
    as_json: bool = option(False, "--json", panel=OUTPUT, help="Print exactly one JSON object on stdout (the result; an error: {error, exit_code})."),
    quiet: bool = option(False, "--quiet", panel=OUTPUT, help="No progress on stderr."),
    weights: Optional[List[str]] = option(None, "--weights", panel=SEARCH, hidden=True, help="Refused: generation has no per-attribute loss to weigh."),
    min_level: Optional[List[str]] = option(None, "--min-level", panel=SEARCH, hidden=True, help="Refused: generation releases no hierarchy levels."),
    max_level: Optional[List[str]] = option(None, "--max-level", panel=SEARCH, hidden=True, help="Refused: generation releases no hierarchy levels."),
) -> None:
    result = _run(
        run_generate, weights=weights or None, min_level=min_level or None, max_level=max_level or None,
        input=input, format=format, delimiter=delimiter, table=table, columns=_split(columns) or None,
        min_sup=min_sup, laplace=laplace, rows=rows, seed=seed, candidates=candidates, output=output,
        output_table=output_table, in_place=in_place, overwrite=overwrite,
        dissimilarity=dissimilarity, memory_limit=memory_limit,
        progress=_progress(quiet, as_json), time_limit=time_limit,
        report=report, population_fraction=population_fraction,
        json_out=as_json,
    )
    stopped = result.get("written") is False and result.get("stopped_in") in HARD_STOPS
    if stopped:
        typer.echo(f"error: --time-limit {time_limit:g} s reached in the {result['stopped_in']} phase: {result['kept']}", err=True)
        result = {**result, "error": f"time limit reached in the {result['stopped_in']} phase", "exit_code": 1}
    if as_json:
        typer.echo(json.dumps(result, default=str))
        if stopped:
            raise typer.Exit(1)
        return
    for key in ("rows", "code_table_size", "compression_ratio", "stopped_by", "stopped_in", "nas", "pct_equal_itemsets", "avg_support_diff_pct", "avg_support_new_pct", "dissimilarity", "output", "release_id", "seconds"):
        if key in result:
            value = result[key]
            typer.echo(f"{key:<22}{value:.4f}" if isinstance(value, float) else f"{key:<22}{value}")
    if stopped:
        raise typer.Exit(1)


#: phases a time limit stops the run in with nothing written (see :func:`sqlanon.generation.pipeline.run`)
HARD_STOPS = ("generate", "scores", "risk")


def run_generate(
    input: str,
    format: str | None = None,
    delimiter: str | None = None,
    table: str | None = None,
    columns: list[str] | None = None,
    min_sup: int = 1,
    laplace: float = 0.001,
    rows: int | None = None,
    seed: int | None = None,
    candidates: str = "all",
    output: str | None = None,
    output_table: str | None = None,
    in_place: bool = False,
    overwrite: bool = False,
    dissimilarity: bool = True,
    memory_limit: str | None = None,
    progress=None,
    report: str | None = None,
    population_fraction: float | None = None,
    time_limit: float | None = None,
    weights=None,
    min_level=None,
    max_level=None,
) -> dict:
    """The command as a function (used by the CLI and tests).

    Attribute weights and level bounds do not apply: generation models exact values (no
    hierarchy, so no levels) and has no per-attribute loss for a weight to multiply; they are
    refused, never ignored."""
    from sqlanon.generation.pipeline import check_options, run
    from sqlanon.release.write import Target, check_registry, check_target

    for flag, given in (("--weights", weights), ("--min-level", min_level), ("--max-level", max_level)):
        if given:
            raise ConfigError(
                f"{flag} does not apply to generate: it models exact values with a KRIMP code table "
                "(no hierarchy levels, no per-attribute generalization loss to weigh); use it with anonymize"
            )

    check_options(min_sup, laplace, rows, candidates, time_limit)
    validate_options(None, population_fraction)
    check_report_path(report)
    refuse_existing(report, "report file", overwrite)
    source = Source.open(input, format, table, delimiter)
    if (output_table or in_place) and source.kind != "table":
        raise ConfigError("--output-table/--in-place need a .duckdb input (--format duckdb --table T)")
    target = Target.from_options(output=output, output_table=output_table, in_place=in_place, source=source, overwrite=overwrite)
    if overwrite and target.kind in ("none", "in_place") and not report:
        raise ConfigError("--overwrite replaces an existing --output or --output-table; there is none here")
    engine = connect(database=source.database or ":memory:", memory_limit=memory_limit)
    try:
        check_target(engine, target, source)  # before the code table is mined
        check_registry(engine, target, source, None)
        result = run(
            engine, source, columns, min_sup=min_sup, laplace=laplace, rows=rows, seed=seed,
            candidates=candidates, target=target, dissimilarity=dissimilarity, progress=progress,
            population_fraction=population_fraction, time_limit=time_limit,
        )
        if report and result.get("stopped_in") not in HARD_STOPS:  # a stopped run writes nothing
            write_html({**result, "search": "generate", "input": source.describe()}, report)
        return result
    finally:
        engine.close()


def register(app: typer.Typer) -> None:
    """Add ``generate`` to the main app."""
    app.command(
        name="generate",
        help="Anonymize by data generation: a KRIMP code table of the input and rows generated from it "
        "(Vreeken, van Leeuwen, Siebes 2007); reports NAS, frequent-pattern similarity and dissimilarity. " + EXIT_HELP,
    )(generate_command)
