"""``sqlanon generate``: anonymization by data generation (KRIMP code table + generator).

Registered on the main typer app by ``sqlanon.cli.app`` (``register(app)``). Data (the JSON result)
on stdout, progress on stderr; errors are one line ``error: ...`` and the error's exit code.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer

from sqlanon.cli.common import EXIT_HELP, _progress, _run, _split
from sqlanon.errors import ConfigError
from sqlanon.engine import connect
from sqlanon.search.generate.pipeline import check_options, run
from sqlanon.release.write import Target, check_registry, check_target
from sqlanon.engine.source import Source
from sqlanon.config.checks import check_report_path, refuse_existing
from sqlanon.risk import validate_options
from sqlanon.report import write_html


def generate_command(
    input: str = typer.Option(..., "--input", "-i", help="Source: CSV, Parquet file/glob, .duckdb file or postgresql:// URL (both with --table)."),
    format: Optional[str] = typer.Option(None, "--format", help="csv, parquet or duckdb (default: from the file name)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (one character; \\t for tab)."),
    table: Optional[str] = typer.Option(None, "--table", help="Table of a .duckdb input."),
    columns: Optional[List[str]] = typer.Option(None, "--columns", help="Columns to model and generate (comma separated; default: all)."),
    min_sup: int = typer.Option(1, "--min-sup", help="Minimum support (rows) of KRIMP's candidate itemsets; acts like k."),
    laplace: float = typer.Option(0.001, "--laplace", help="Laplace correction added to every code-table usage (> 0); larger = fewer generated rows copy an original row (NAS need not fall, see docs/generate.md)."),
    rows: Optional[int] = typer.Option(None, "--rows", help="Rows to generate (default: as many as the input)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (reproducible output)."),
    candidates: str = typer.Option("all", "--candidates", help="KRIMP candidates: all or closed frequent itemsets."),
    output: Optional[str] = typer.Option(None, "--output", "-o", help="Write the generated table to a Parquet (or .csv) file."),
    output_table: Optional[str] = typer.Option(None, "--output-table", help="Write to a new table of the .duckdb input."),
    in_place: bool = typer.Option(False, "--in-place", help="Replace the input table (one transaction)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing output file/table."),
    no_dissimilarity: bool = typer.Option(False, "--no-dissimilarity", help="Skip the code-table dissimilarity (runs KRIMP on the output)."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="DuckDB memory_limit, e.g. 1GB."),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", help="Seconds for mining and KRIMP; when reached, rows are generated from the best code table so far (JSON: stopped_by, code_table_complete)."),
    report: Optional[str] = typer.Option(None, "--report", help="Also write an HTML report here (risk of input and generated table, NAS, itemset overlap)."),
    population_fraction: Optional[float] = typer.Option(None, "--population-fraction", help="Risk: the input is this fraction of its population; estimate population uniques."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object on stdout."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress on stderr."),
    weights: Optional[List[str]] = typer.Option(None, "--weights", hidden=True, help="Refused: generation has no per-attribute loss to weigh."),
    min_level: Optional[List[str]] = typer.Option(None, "--min-level", hidden=True, help="Refused: generation releases no hierarchy levels."),
    max_level: Optional[List[str]] = typer.Option(None, "--max-level", hidden=True, help="Refused: generation releases no hierarchy levels."),
) -> None:
    result = _run(
        run_generate, weights=weights or None, min_level=min_level or None, max_level=max_level or None,
        input=input, format=format, delimiter=delimiter, table=table, columns=_split(columns) or None,
        min_sup=min_sup, laplace=laplace, rows=rows, seed=seed, candidates=candidates, output=output,
        output_table=output_table, in_place=in_place, overwrite=overwrite,
        dissimilarity=not no_dissimilarity, memory_limit=memory_limit,
        progress=_progress(quiet, as_json), time_limit=time_limit,
        report=report, population_fraction=population_fraction,
        json_out=as_json,
    )
    if as_json:
        typer.echo(json.dumps(result, default=str))
        return
    for key in ("rows", "code_table_size", "compression_ratio", "stopped_by", "nas", "pct_equal_itemsets", "avg_support_diff_pct", "avg_support_new_pct", "dissimilarity", "output", "release_id", "seconds"):
        if key in result:
            value = result[key]
            typer.echo(f"{key:<22}{value:.4f}" if isinstance(value, float) else f"{key:<22}{value}")


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
        if report:
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
