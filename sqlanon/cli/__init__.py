"""The command line: a typer app (:mod:`sqlanon.cli.app`) over the Python API, and the ``generate`` commands."""
