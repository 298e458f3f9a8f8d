"""``sqlanon dbt ...``: the dbt package shipped with sqlanon (:mod:`sqlanon.dbt`)."""

from __future__ import annotations

import typer

from sqlanon.cli.conventions import App
from sqlanon.cli.common import EXIT_HELP, _run

dbt_app = App(help="The sqlanon_dbt dbt package: generic privacy tests and the dbt-duckdb model. " + EXIT_HELP, no_args_is_help=True)


@dbt_app.command("path", help="Print the folder of the sqlanon_dbt dbt package (for packages.yml: `- local: <it>`). " + EXIT_HELP)
def dbt_path() -> None:
    from sqlanon.dbt import package_path

    typer.echo(_run(package_path))


def register(app: typer.Typer) -> None:
    """Add ``dbt`` to the main app."""
    app.add_typer(dbt_app, name="dbt")
