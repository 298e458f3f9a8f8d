"""The rules for the paths sqlanon writes and reads by suffix: the release file's format from its
name, the registry and report files' names, and the one rule for an existing file (replaced only
with ``--overwrite``), all checked before anything is scanned."""

from __future__ import annotations

import os

from sqlanon.errors import ConfigError

#: file types ``--output`` writes (the suffix decides the format)
OUTPUT_SUFFIXES = {".parquet": "parquet", ".csv": "csv", ".tsv": "csv", ".txt": "csv"}


def output_kind(path: str) -> str:
    """``parquet`` or ``csv`` from the name of an output file; any other name is refused."""
    suffix = os.path.splitext(str(path))[1].lower()
    if suffix not in OUTPUT_SUFFIXES:
        shown = f"'{suffix}'" if suffix else "no suffix"
        raise ConfigError(f"--output {path}: unknown file type ({shown}); name a .parquet or .csv file")
    return OUTPUT_SUFFIXES[suffix]


def check_report_path(path: str | None) -> None:
    """An HTML report is written to a ``.html`` (or ``.htm``) file, never under another name."""
    if not path:
        return
    if os.path.isdir(path):
        raise ConfigError(f"--report {path} is a directory; name a .html file")
    if not str(path).lower().endswith((".html", ".htm")):
        raise ConfigError(f"--report {path}: the report is an HTML page; name it .html")



def refuse_existing(path: str | None, what: str, overwrite: bool) -> None:
    """The one rule for every file sqlanon writes (release, report, schema, hierarchy CSV): an
    existing file is replaced only with ``--overwrite``; checked before anything is scanned.

    >>> refuse_existing(__file__, "report file", overwrite=True)
    >>> refuse_existing("/nonexistent/x.html", "report file", overwrite=False)
    """
    if path and os.path.lexists(path) and not overwrite:
        raise ConfigError(f"{what} already exists: {path} (use --overwrite)")
    if path:
        blocked = _file_on_the_way(path)
        if blocked is not None:
            raise ConfigError(f"cannot write {what} {path}: {blocked} is a file, not a folder")


def _file_on_the_way(path: str) -> str | None:
    """The nearest existing ancestor folder of ``path`` when it is a file (so no folder can be
    made there), else ``None``.

    >>> _file_on_the_way(os.path.join(__file__, "r.html")) == __file__
    True
    >>> _file_on_the_way(os.path.join(os.path.dirname(__file__), "new", "r.html")) is None
    True
    """
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder if not os.path.isdir(folder) else None
