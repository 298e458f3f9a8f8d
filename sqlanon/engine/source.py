"""Sources: a relation in the engine (a table of a ``.duckdb`` file, Parquet file(s) or glob, CSV).

A source is a SQL ``FROM`` item, never a DataFrame. The engine decides how files are read.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, drop_table, ident, table_ref  # noqa: F401  (re-exported for the engines)
from sqlanon.files.strict_load import binary_kind
from sqlanon.engine.table_name import TableName
from sqlanon.engine.parquet_schemas import check_agree
from sqlanon.engine.column_names import did_you_mean, resolve
from sqlanon.engine.urls import redact

FORMATS = ("csv", "parquet", "duckdb", "postgres")
#: bytes of a CSV read to find its header line (a longer first line is not a header)
_HEAD_BYTES = 1 << 20
_FORMAT_HINT = {"a Parquet file": "give --format parquet", "a DuckDB database": "give --format duckdb and --table"}


@dataclass
class Source:
    """Where the rows are. ``kind`` is ``table`` (in the engine's database), ``parquet`` or ``csv``."""

    kind: str
    path: str | None = None
    table: str | None = None
    delimiter: str | None = None
    all_varchar: bool = True
    database: str | None = None
    #: the table as the catalog spells it (:func:`sqlanon.engine.table_name.lookup`), once looked up
    resolved: object | None = field(default=None, repr=False)
    _columns: list[tuple[str, str]] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        path: str,
        format: str | None = None,
        table: str | None = None,
        delimiter: str | None = None,
    ) -> Source:
        """Describe an input given on the command line or in a policy."""
        fmt = (format or _guess_format(path)).lower()
        if fmt not in FORMATS:
            raise ConfigError(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")
        if fmt == "postgres":
            if not table:
                raise ConfigError("--table is required for a postgresql:// input")
            return cls(kind="table", table=table, database=path)
        if fmt == "duckdb":
            if not os.path.isfile(path):
                raise ConfigError(f"input file not found: {path}")
            if not table:
                raise ConfigError(f"--table is required for a .duckdb input ({path})")
            return cls(kind="table", table=table, database=path)
        if fmt == "parquet":
            src = cls(kind="parquet", path=path)
            check_agree(path, src.paths())  # raises when nothing matches, or files disagree
            return src
        if not os.path.isfile(path):
            raise ConfigError(f"input file not found: {path}")
        if delimiter is not None and len(delimiter.encode()) != 1 and delimiter != "\\t":
            raise ConfigError(f"--delimiter must be one character, got {delimiter!r}")
        return cls(kind="csv", path=path, delimiter="\t" if delimiter == "\\t" else delimiter)

    def csv_header(self) -> list[str]:
        """The column names in a CSV's first line (only that line is read)."""
        import csv

        assert self.path is not None
        with open(self.path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
        kind = binary_kind(head)
        if kind is not None:
            raise ConfigError(f"input {self.path} is not a CSV file ({kind}); {_FORMAT_HINT.get(kind, 'give the right --format')}")
        first = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0].decode("utf-8-sig", errors="replace")  # any line ending
        try:
            names = [n.strip() for n in next(csv.reader([first], delimiter=self.delimiter or ",", quotechar='"'), [])]
        except csv.Error as err:
            raise ConfigError(f"input {self.path}: the header line cannot be read as CSV ({err})") from None
        if not first.strip() or not names:
            raise ConfigError(f"input {self.path} has no header line (the first line names the columns)")
        seen: dict[str, str] = {}
        for i, name in enumerate(names, start=1):
            if not name.strip():
                raise ConfigError(f"input {self.path}: column {i} of the header has no name")
            if name in seen.values():
                raise ConfigError(f"input {self.path}: the header names column {name!r} twice")
            if name.lower() in seen:  # DuckDB's column names ignore case: "Zip" and "zip" are one
                raise ConfigError(f"input {self.path}: the header names columns {seen[name.lower()]!r} and {name!r}, one column to the engine (names ignore case); rename one")
            seen[name.lower()] = name
        return names

    def paths(self) -> list[str]:
        assert self.path is not None
        if os.path.isdir(self.path):
            found = sorted(glob.glob(os.path.join(self.path, "**", "*.parquet"), recursive=True))
        elif any(ch in self.path for ch in "*?["):
            found = sorted(glob.glob(self.path, recursive=True))
        else:
            found = [self.path] if os.path.isfile(self.path) else []
        if not found:
            raise ConfigError(f"input file not found: {self.path}")
        return found

    def table_name(self, dialect: str = "duckdb"):
        """The input table as a :class:`sqlanon.engine.table_name.TableName` (schema-qualified names
        parsed, never one quoted string)."""
        assert self.table is not None
        return self.resolved if self.resolved is not None else TableName.parse(self.table, dialect)

    def table_expression(self) -> exp.Table:
        return self.table_name().expression()

    def describe(self) -> str:
        if self.kind == "table":
            return f"{redact(self.database) if self.database else 'connection'}:{self.table}"
        return f"{self.kind}:{self.path}"

    def columns(self, engine) -> list[tuple[str, str]]:
        """Column names and types, from ``DESCRIBE`` of the FROM item (no rows read)."""
        if self._columns is None:
            query = exp.select("*").from_(engine.source_from(self)).limit(0)
            self._columns = engine.describe_columns(query)
        return self._columns

    def column_names(self, engine) -> list[str]:
        return [c for c, _ in self.columns(engine)]

    def require_columns(self, engine, names, role: str = "column") -> None:
        have = self.column_names(engine)
        for name in names:
            if name not in have:
                raise ConfigError(
                    f"unknown {role} {name!r} in {self.describe()}{did_you_mean(have, name)}; columns are: {', '.join(have)}{self._delimiter_hint(have)}"
                )

    def resolve_column(self, engine, name: str) -> str:
        """The source's column ``name`` names as the engine resolves names
        (:mod:`sqlanon.engine.column_names`); ``name`` itself when none is found (the caller's
        :meth:`require_columns` then says so, with the near spellings)."""
        found = resolve(self.column_names(engine), name, engine.dialect.name)
        return name if found is None else found

    def _delimiter_hint(self, have: list[str]) -> str:
        """`` (is the delimiter ';'? ..)`` when a CSV's header read as one column holds another
        usual delimiter."""
        if self.kind != "csv" or len(have) != 1:
            return ""
        found = next((d for d in (";", "\t", "|", ",") if d in have[0] and d != (self.delimiter or ",")), None)
        return "" if found is None else f" (one column: is the delimiter {found!r}? give --delimiter {found!r})"


def _guess_format(path: str) -> str:
    low = path.lower()
    if low.startswith(("postgresql://", "postgres://")):
        return "postgres"
    if low.endswith((".duckdb", ".db")):
        return "duckdb"
    if low.endswith(".parquet") or os.path.isdir(path) or "*" in path:
        return "parquet"
    return "csv"
