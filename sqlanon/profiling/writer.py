"""The commented policy YAML a profile proposes, runnable as it is by ``sqlanon anonymize
--policy``. Nothing of the table's values is written into it: only column names, hierarchy specs
(band widths, ``mask``, ``dates``, ``flat``) and counts in the comments; a grouping by frequency
(which must name values) goes to a hierarchy file beside the policy.

>>> scalar("bands:5,10"), scalar(";"), key("native-country"), key("zip code")
('"bands:5,10"', '";"', 'native-country', '"zip code"')
"""

from __future__ import annotations

import json
import os
import re
import shlex
from dataclasses import dataclass, field

from sqlanon.files.paths import refuse_existing
from sqlanon.engine.urls import is_postgres_url, redact
from sqlanon.hierarchy.io import write_csv_hierarchy
from sqlanon.hierarchy.model import Hierarchy

#: hierarchy kinds written as a file beside the policy (they name values of the table)
FILE_KINDS = ("frequency", "linked")
#: suppression budget written into the policy (a share of the rows)
MAX_SUPPRESSION = 0.05
#: the metric written into the policy: ARX's Loss measures how much of its domain each released
#: value covers, so a QI at ``*`` costs its whole share whatever its number of levels; precision
#: (the default of ``anonymize``) counts levels, and makes the last step of a long hierarchy (zip ->
#: zip3 -> state -> region -> ``*``) as cheap as its first (docs/profile.md#the-metric)
METRIC = "loss"
#: what the profile says of NULLs in a quasi-identifier (its text output and the policy's comment)
NULLS_ADVICE = ("anonymize treats NULL as a value of its own (nulls: value, the default): released as NULL until the column is "
                "generalized to its root, and counted in its class like any value; nulls: suppress suppresses those rows instead, nulls: refuse stops")


@dataclass
class Where:
    """Where the profiled rows are, as the policy must name them."""

    input: str | None
    format: str | None = None
    delimiter: str | None = None
    table: str | None = None
    engine: str | None = None
    spark_master: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    kind: str = "csv"  # the source's kind: csv | parquet | table


def scalar(value) -> str:
    """A YAML scalar: text double-quoted (JSON's escapes are YAML's), numbers as they are."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return json.dumps(str(value), ensure_ascii=False)
    return repr(value)


def key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name) else json.dumps(name, ensure_ascii=False)


def _comment(text: str) -> str:
    return " ".join(str(text).split())


def hierarchy_file(policy_path: str, column: str) -> str:
    """The file name of a column's grouping by frequency, beside the policy."""
    stem = os.path.splitext(os.path.basename(policy_path))[0]
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", column).strip("._") or "column"
    return f"{stem}.{safe}.csv"


def _input_lines(where: Where, base: str) -> list[str]:
    lines: list[str] = []
    if where.engine:
        lines.append(f"engine: {scalar(where.engine)}")
    if where.spark_master:
        lines.append(f"spark_master: {scalar(where.spark_master)}")
    if where.spark_conf:
        lines.append("spark_conf:")
        lines += [f"  {key(k)}: {scalar(v)}" for k, v in where.spark_conf.items()]
    if where.input and is_postgres_url(where.input):
        shown = redact(where.input)
        note = "  # the password is left out: give it in PGPASSWORD or ~/.pgpass" if shown != where.input else ""
        lines.append(f"input: {scalar(shown)}{note}")
    elif where.input:
        path = os.path.abspath(where.input)
        try:
            path = os.path.relpath(path, base)
        except ValueError:  # another drive (Windows)
            pass
        lines.append(f"input: {scalar(path)}")
    else:
        lines.append("# input: the table of the connection that was profiled (pass connection= to sqlanon.anonymize)")
    for name in ("format", "delimiter", "table"):
        value = getattr(where, name)
        if value:
            lines.append(f"{name}: {scalar(value)}")
    return lines


def _wrapped(text: str, width: int = 98) -> list[str]:
    """``text`` as comment lines of at most ``width`` characters."""
    lines, line = [], "#"
    for word in text.split():
        if len(line) + 1 + len(word) > width and line != "#":
            lines.append(line)
            line = "#"
        line += " " + word
    return [*lines, line]


def _stem(where: Where) -> str:
    name = where.table or os.path.basename((where.input or "table").rstrip("/"))
    name = name.split(".")[-1] if where.table else os.path.splitext(name)[0]
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "table"


def files_to_write(result: dict, path: str) -> list[str]:
    """The hierarchy files a policy at ``path`` brings with it (checked before anything is written)."""
    base = os.path.dirname(path)
    return [os.path.join(base, hierarchy_file(path, c["name"])) for c in result["columns"] if c.get("hierarchy", {}).get("kind") in FILE_KINDS]


def _column_lines(result: dict, path: str) -> tuple[list[str], list[str], list[str], list[str]]:
    drops, qis, sensitive, plain = [], [], [], []
    for c in result["columns"]:
        name, role = c["name"], c["role"]
        if role == "identifier":
            drops.append(f"  - {key(name)}  # {_comment(c['reason'])}")
        elif role == "qi":
            h = c["hierarchy"]
            spec = hierarchy_file(path, name) if h["kind"] in FILE_KINDS else h["spec"]
            nulls = f"; {c['nulls']:,} NULLs: a value of their own (nulls)" if c["nulls"] else ""
            qis.append(f"  {key(name)}: {scalar(spec)}  # {_comment(c['reason'])}; {_comment(h['reason'])}{nulls}")
        elif role == "sensitive":
            sensitive.append(name)
        elif role == "linked":
            continue  # :func:`_linked_lines`
        else:
            plain.append(name)
    return drops, qis, sensitive, plain


def _kept_lines(sensitive: list[str], plain: list[str]) -> list[str]:
    """Every column has a role: the sensitive candidates and the insensitive columns are kept
    (released as they are), listed under ``keep_columns`` (a column no role names is refused)."""
    if not sensitive and not plain:
        return []
    lines = ["# Every column has a role: these are released as they are (a column no role names is refused).", "keep_columns:"]
    lines += [f"  - {key(name)}  # sensitive candidate" for name in sensitive]
    lines += [f"  - {key(name)}  # insensitive" for name in plain]
    lines.append("")
    if sensitive:
        lines += ["# To keep each class diverse in a sensitive one (l-diversity), take it out of keep_columns and uncomment:",
                  f"# sensitive_column: {scalar(sensitive[0])}", "# l: 2", ""]
    return lines


def run_command(path: str) -> str:
    """The command that runs the policy written to ``path``, naming it as it was given (the policy's
    comment and ``sqlanon profile``'s last line print the same).

    >>> run_command("out/policy.yaml"), run_command("my policies/p.yaml")
    ('sqlanon anonymize --policy out/policy.yaml', "sqlanon anonymize --policy 'my policies/p.yaml'")
    """
    return f"sqlanon anonymize --policy {shlex.quote(path)}"


def policy_text(result: dict, where: Where, path: str, k: int) -> str:
    """The policy file's text (see the module's docstring)."""
    base = os.path.dirname(os.path.abspath(path))
    drops, qis, sensitive, plain = _column_lines(result, path)
    sampled = result.get("sample")
    lines = [
        f"# A policy proposed by `sqlanon profile` for {_comment(result['input'])} ({result['rows']:,} rows"
        + (f"; measured on a sample of about {sampled['percent']:g} %" if sampled else "") + ").",
        "# Roles and hierarchies are guesses from the columns' names and values: review them before a release.",
        f"# Run it:  {run_command(path)}",
        "# Paths are relative to this file" + ("." if os.path.isabs(path) else "; the command above, to the directory `sqlanon profile` ran in."),
        *_input_lines(where, base),
        "",
    ]
    nulls = result.get("nulls_in_qis") or {}
    if nulls:
        counted = ", ".join(f"{name} ({n:,})" for name, n in nulls.items())
        lines += [f"# NULLs in quasi-identifiers: {counted}{' in the sample' if sampled else ''}.",
                  *_wrapped(f"A missing value can be linked like any other, and {NULLS_ADVICE}."),
                  "# nulls: suppress  # or: refuse, or per column: {zip: suppress}", ""]
    if drops:
        lines += ["# Direct identifiers, left out of the release:", "drop_columns:", *drops, ""]
    lines += ["# Quasi-identifiers, generalized along these hierarchies:", "qi:", *(qis or ["  {}"]), ""]
    lines += _linked_lines(result)
    lines += _kept_lines(sensitive, plain)
    lines += [
        f"k: {k}",
        f"max_suppression: {MAX_SUPPRESSION}",
        f"metric: {METRIC}  # what a released value covers of its domain, not how many levels it climbed",
        "search: auto  # the optimal search where the lattice is small, else a heuristic",
        *_release_lines(where, k),
        "",
    ]
    return "\n".join(lines)


def _linked_lines(result: dict) -> list[str]:
    """``linked:`` (columns that are functions of a QI) and the near ones, as comments."""
    lines: list[str] = []
    links = result.get("links") or {}
    distinct = {c["name"]: c["distinct"] for c in result["columns"]}
    if links:
        lines += ["# Functions of a quasi-identifier (found in the data), each released where its QI's released",
                  "# value determines it, else *: in clear they would undo the QI's generalization.", "linked:"]
        lines += [f"  {key(c)}: {scalar(q)}  # {distinct.get(c, 0):,} values, one per value of {_comment(q)}" for c, q in links.items()]
        lines.append("")
    for near in result.get("near_links") or []:
        lines += _wrapped(f"{near['column']} nearly follows {near['of']} ({100 * near['share']:.1f} % of its values have more than one): "
                          f"not linked; fix those rows and profile again, or keep it a QI or drop it.")
    return lines + ([""] if result.get("near_links") else [])


def _release_lines(where: Where, k: int) -> list[str]:
    """Where the release goes: a table profiled in a database is released as a new table of that
    database (its registry row there too); a file as a Parquet file beside the policy. The report
    is written beside the policy."""
    stem = f"{_stem(where)}_k{k}"
    if where.kind == "table":
        output = f"output_table: {scalar(stem)}  # a new table beside the input, recorded in the database's sqlanon_releases"
    else:
        output = f"output: {scalar(stem + '.parquet')}  # recorded in sqlanon_releases.duckdb beside it"
    return [output, f"report: {scalar(stem + '.html')}"]


def write_policy(result: dict, where: Where, path: str, k: int, overwrite: bool, proposals: dict) -> list[str]:
    """Write the policy and its hierarchy files (every one refused first if it exists, unless
    ``overwrite``); the files written, the policy first."""
    extra = files_to_write(result, path)
    for f in extra:
        refuse_existing(f, "hierarchy file", overwrite)
    refuse_existing(path, "policy file", overwrite)
    text = policy_text(result, where, path, k)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    written = []
    for f, column in zip(extra, [c["name"] for c in result["columns"] if c.get("hierarchy", {}).get("kind") in FILE_KINDS]):
        write_csv_hierarchy(Hierarchy(attribute=column, rows=proposals[column].rows, origin="profile"), f, overwrite=overwrite)
        written.append(f)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)
    return [path, *written]
