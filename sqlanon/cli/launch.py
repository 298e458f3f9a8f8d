"""The ``sqlanon`` console script: ``sqlanon --version`` (``-V``) is answered from the installed
package's metadata before anything else is imported; every other command starts the typer app
(:func:`sqlanon.cli.app.main`)."""

from __future__ import annotations

import sys

VERSION_FLAGS = ("--version", "-V")


def main() -> None:
    """``sqlanon``: the version alone, or the app."""
    if len(sys.argv) == 2 and sys.argv[1] in VERSION_FLAGS:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"sqlanon {version('sqlanon')}")
        except PackageNotFoundError:  # pragma: no cover - running from a source tree
            print("sqlanon (not installed)")
        return
    from sqlanon.cli.app import main as app_main

    app_main()
