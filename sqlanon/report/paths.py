"""Paths as a report shows them: no absolute path of the user's machine unless asked.

A report (the ``--json`` object's ``input`` and hierarchy origins, the HTML page, the report kept
in the registry) is often passed on; the folders of the machine that made it are not its
business. A path inside the working directory is shown relative to it, any other by its file name;
``reporting.full_paths`` (``--full-paths``) shows them as given. URLs (``postgresql://``) are
shown as they are (their passwords are redacted where they are recorded).

>>> import os
>>> shown_path(os.path.join(os.getcwd(), "data", "t.csv")), shown_path("/srv/x/people.parquet"), shown_path("t.csv")
('data/t.csv', 'people.parquet', 't.csv')
>>> shown_text("csv:/srv/x/people.csv"), shown_text("postgresql://u@h/db:people"), shown_text("mask")
('csv:people.csv', 'postgresql://u@h/db:people', 'mask')
"""

from __future__ import annotations

import os
import re

#: ``kind:/absolute/path`` (a source's description: ``csv:/data/t.csv``, ``parquet:/d/*.parquet``)
_KIND_PATH = re.compile(r"^([A-Za-z_][\w-]*):(/(?!/).*)$")


def shown_path(path: str, full: bool = False) -> str:
    """``path`` relative to the working directory when it is inside it, else its last part; as
    given when ``full`` or when it is relative already."""
    if full or not os.path.isabs(path):
        return path
    here = os.getcwd()
    norm = os.path.normpath(path)
    try:
        inside = os.path.commonpath([here, norm]) == here
    except ValueError:  # another drive (Windows)
        inside = False
    if inside and norm != here:
        return os.path.relpath(norm, here) + (os.sep if path.endswith(os.sep) else "")
    return (os.path.basename(norm) or norm) + (os.sep if path.endswith(os.sep) and norm != os.sep else "")


def shown_text(text: str, full: bool = False) -> str:
    """A string that may be a path (or ``kind:path``) as :func:`shown_path` shows it; others as they are."""
    if full or "://" in text:
        return text
    m = _KIND_PATH.match(text)
    if m:
        return f"{m.group(1)}:{shown_path(m.group(2))}"
    return shown_path(text) if text.startswith(os.sep) else text


def scrub(value, full: bool = False):
    """``value`` (a report, a policy: dicts, lists, strings) with every path in it shown by
    :func:`shown_text`; a new object, ``value`` is not changed."""
    if full:
        return value
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    if isinstance(value, str):
        return shown_text(value)
    return value


def report_paths(report: dict, full: bool = False) -> None:
    """The ``--json`` report's paths of the input, as shown (in place): ``input`` and the
    hierarchies' origins (a hierarchy file's path). ``output`` stays as the user gave it: it says
    where to find the release."""
    if full:
        return
    if isinstance(report.get("input"), str):
        report["input"] = shown_text(report["input"])
    for h in report.get("hierarchies") or []:
        if isinstance(h, dict) and isinstance(h.get("origin"), str):
            h["origin"] = shown_text(h["origin"])


#: a quoted absolute path in a statement (``READ_CSV('/data/t.csv', ...)``)
_QUOTED_PATH = re.compile(r"'(/(?:[^']|'')*)'")


def scrub_sql(text: str, full: bool = False) -> str:
    """A statement's text with the absolute paths it quotes shown by :func:`shown_path`.

    >>> scrub_sql("SELECT * FROM READ_CSV('/srv/x/t.csv', header := TRUE)")
    "SELECT * FROM READ_CSV('t.csv', header := TRUE)"
    """
    if full:
        return text
    return _QUOTED_PATH.sub(lambda m: "'" + shown_path(m.group(1).replace("''", "'")).replace("'", "''") + "'", text)


def page_report(report: dict, sql: list | None, full: bool = False) -> tuple[dict, list]:
    """The report and SQL listing the HTML page shows: every path as shown (the header's input
    and output, the policy, the hierarchies, the statements)."""
    listing = [(title, scrub_sql(text, full)) for title, text in (sql if sql is not None else report.get("sql") or [])]
    if full:
        return report, listing
    shown = dict(report)
    for key in ("input", "output", "policy", "hierarchies", "dry_run"):
        if shown.get(key) is not None:
            shown[key] = scrub(shown[key])
    return shown, listing
