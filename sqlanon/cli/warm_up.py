"""``sqlanon warm-up``: compile the kernels ahead into numba's cache (:mod:`sqlanon.run.warm_up`)."""

from __future__ import annotations

import json

import typer

from sqlanon.cli.common import EXIT_HELP, _run
from sqlanon.cli.conventions import OUTPUT, option

HELP = ("Compile the in-process kernels into numba's cache once, after installing (e.g. in a Dockerfile or a CI image), so the first run "
        "loads them as every later run does instead of compiling them; prints what it compiled, how long it took and where the cache is. ")


def warm_up(json_out: bool = option(False, "--json", panel=OUTPUT, help="Print what was done as one JSON object.")) -> None:
    from sqlanon.run.warm_up import warm_up as run_warm_up

    done = _run(run_warm_up, progress=None if json_out else (lambda job: typer.echo(f"warm-up: {job} ...", err=True)), json_out=json_out)
    if json_out:
        typer.echo(json.dumps(done.to_dict()))
    else:
        for line in done.lines():
            typer.echo(line)
    if done.error:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``warm-up`` to the main app."""
    app.command("warm-up", help=HELP + EXIT_HELP)(warm_up)
