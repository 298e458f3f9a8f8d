"""What every command of the CLI shares: progress on stderr, one line and an exit code per error,
SIGTERM handled like Ctrl-C, comma-separated flag values."""

from __future__ import annotations

import json
import os
import sys
from typing import List, Optional

import typer

from sqlanon.errors import SqlanonError, from_os_error
from sqlanon.progress import RichReporter

EXIT_HELP = "Exit codes: 0 ok, 1 error, 2 usage, 3 unsatisfiable."


def _err(message: str) -> None:
    typer.echo(f"error: {message}", err=True)


def _progress(quiet: bool, json_out: bool = False):
    """On a terminal (and not --json): rich progress, a live line per phase with the messages
    above it. Otherwise no bars: the messages as plain ``sqlanon: ...`` lines on stderr. --quiet:
    nothing (logging still works: SQLANON_LOG=INFO|DEBUG)."""
    if quiet:
        return None
    if json_out or not sys.stderr.isatty():
        return lambda message: typer.echo(f"sqlanon: {message}", err=True)

    return RichReporter()


def _fail(message: str, exit_code: int, json_out: bool) -> typer.Exit:
    """One line on stderr; under ``--json`` also one JSON object on stdout."""
    _err(message)
    if json_out:
        typer.echo(json.dumps({"error": message, "exit_code": exit_code}))
    return typer.Exit(exit_code)


def _run(fn, *args, json_out: bool = False, **kwargs):
    """Run an API call and map errors to one line and an exit code; nothing else leaks.
    ``SQLANON_DEBUG=1`` re-raises instead, with the traceback."""
    try:
        return fn(*args, **kwargs)
    except SqlanonError as err:
        if os.environ.get("SQLANON_DEBUG", "") not in ("", "0"):
            raise
        raise _terminated(json_out) or _fail(str(err), err.exit_code, json_out) from None
    except KeyboardInterrupt:
        if os.environ.get("SQLANON_DEBUG", "") not in ("", "0"):
            raise
        raise _terminated(json_out) or _fail("interrupted; nothing was written", 130, json_out) from None
    except OSError as err:  # a read-only or full disk, a folder that is a file: one line naming the path
        if os.environ.get("SQLANON_DEBUG", "") not in ("", "0"):
            raise
        mapped = from_os_error(err)
        raise _terminated(json_out) or _fail(str(mapped), mapped.exit_code, json_out) from None
    except Exception as err:  # an unexpected failure: still one line, no locals, no row values
        if os.environ.get("SQLANON_DEBUG", "") not in ("", "0"):
            raise
        raise _terminated(json_out) or _fail(f"internal error: {type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}", 1, json_out) from None


#: the signal that asked this process to stop (SIGTERM), once it came
_TERMINATED: list[int] = []


def _on_sigterm(signum, frame) -> None:
    """SIGTERM (what Airflow, Kubernetes and systemd send) is handled like Ctrl-C: the run stops
    where it is (DuckDB interrupts the statement), in-place writes roll back, temporary files are
    removed, and :func:`_run` says so and exits 143. A second SIGTERM does not cut the cleanup short."""
    if _TERMINATED:
        return
    _TERMINATED.append(signum)
    raise KeyboardInterrupt


def _terminated(json_out: bool) -> typer.Exit | None:
    """The exit of a run stopped by SIGTERM (128 + 15), or None when no SIGTERM came."""
    return _fail("terminated (SIGTERM); nothing was written", 143, json_out) if _TERMINATED else None


def _split(values: Optional[List[str]]) -> list[str]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out
