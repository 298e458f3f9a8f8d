"""The profile's pass over the table: one aggregate statement (over a sample where the table is
large) giving per column its NULLs, distinct values, value lengths, numeric range and the share of
values of each shape (:mod:`sqlanon.profiling.patterns`), all counted in SQL: no value leaves the
database.

>>> from sqlanon.dialect import get_dialect
>>> pick = column_aggregates("zip", "VARCHAR", get_dialect("postgres"), exp.column("zip"))
>>> [name for name, _ in pick][:4]
['nonnull', 'distinct', 'min_length', 'max_length']
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.expr.atoms import col, literal
from sqlanon.profiling.patterns import SHAPES, VALUE_PATTERNS

#: tables up to this many rows are read whole; larger ones as a sample of about this many rows
DEFAULT_SAMPLE_ROWS = 1_000_000

_NUMERIC_TYPE = re.compile(r"int|double|float|decimal|numeric|real|long|short|byte|number", re.IGNORECASE)
_DATE_TYPE = re.compile(r"date|timestamp", re.IGNORECASE)
_BOOL_TYPE = re.compile(r"bool", re.IGNORECASE)


def type_kind(sql_type: str) -> str:
    """``numeric``, ``date``, ``boolean`` or ``text`` for an engine's column type name.

    >>> type_kind("BIGINT"), type_kind("timestamp with time zone"), type_kind("string")
    ('numeric', 'date', 'text')
    """
    if _BOOL_TYPE.search(sql_type):
        return "boolean"
    if _DATE_TYPE.search(sql_type):
        return "date"
    if _NUMERIC_TYPE.search(sql_type) and "interval" not in sql_type.lower():
        return "numeric"
    return "text"


@dataclass
class ColumnStats:
    """What the pass measured of one column (over the rows it read: the table or its sample)."""

    name: str
    type: str
    kind: str  # numeric | date | boolean | text (from the engine's type)
    rows: int
    nonnull: int
    distinct: int
    min_length: int | None = None
    max_length: int | None = None
    avg_length: float | None = None
    minimum: float | None = None
    maximum: float | None = None
    #: dates and timestamps: the first and last calendar year of the values
    min_year: int | None = None
    max_year: int | None = None
    #: share of the non-NULL values matching each shape and identifier pattern
    shares: dict[str, float] = field(default_factory=dict)

    @property
    def nulls(self) -> int:
        return self.rows - self.nonnull

    @property
    def uniqueness(self) -> float:
        """Distinct values per row read (1.0: every row has its own value)."""
        return self.distinct / self.rows if self.rows else 0.0

    def share(self, shape: str) -> float:
        return self.shares.get(shape, 0.0)

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric" or (self.kind == "text" and self.nonnull > 0 and self.share("numeric") >= 0.99)

    @property
    def is_date(self) -> bool:
        return self.kind == "date" or (self.kind == "text" and self.nonnull > 0 and self.share("date") >= 0.99)


def as_text(e: exp.Expression) -> exp.Expression:
    return exp.cast(e, "VARCHAR")


def regexp(dialect, value: exp.Expression, pattern: str) -> exp.Expression:
    """``value`` matches ``pattern`` (rendered ``regexp_matches`` / ``~`` / ``RLIKE`` by the dialect)."""
    return exp.RegexpLike(this=value.copy(), expression=literal(pattern))


def _count_if(condition: exp.Expression) -> exp.Expression:
    return exp.Sum(this=exp.Case(ifs=[exp.If(this=condition, true=literal(1))], default=literal(0)))


def numeric_value(column: exp.Expression, kind: str, dialect) -> exp.Expression:
    """The column as a DOUBLE: cast as it is when numeric, else only where its text looks like a
    number (NULL elsewhere; the cast is guarded, so an ANSI engine never sees bad text)."""
    if kind == "numeric":
        return exp.cast(column.copy(), "DOUBLE")
    text = as_text(column)
    return exp.Case(ifs=[exp.If(this=regexp(dialect, text, SHAPES["numeric"]), true=exp.cast(text.copy(), "DOUBLE"))])


def column_aggregates(name: str, sql_type: str, dialect, column: exp.Expression) -> list[tuple[str, exp.Expression]]:
    """``(stat, aggregate)`` pairs measuring one column in the pass."""
    kind = type_kind(sql_type)
    text = as_text(column)
    length = exp.Length(this=text.copy())
    out: list[tuple[str, exp.Expression]] = [
        ("nonnull", exp.Count(this=column.copy())),
        ("distinct", exp.Count(this=exp.Distinct(expressions=[column.copy()]))),
        ("min_length", exp.Min(this=length.copy())),
        ("max_length", exp.Max(this=length.copy())),
        ("avg_length", exp.Avg(this=exp.cast(length.copy(), "DOUBLE"))),
    ]
    if kind == "text":
        for shape, pattern in {**SHAPES, **{k: p for k, (p, _) in VALUE_PATTERNS.items()}}.items():
            out.append((f"share:{shape}", _count_if(regexp(dialect, text, pattern))))
    if kind in ("numeric", "text"):
        value = numeric_value(column, kind, dialect)
        out += [("minimum", exp.Min(this=value)), ("maximum", exp.Max(this=value.copy()))]
    if kind == "date":
        year = exp.Extract(this=exp.var("YEAR"), expression=column.copy())
        out += [("min_year", exp.Min(this=year)), ("max_year", exp.Max(this=year.copy()))]
    return out


def source_item(engine, source, rows: int, sample_rows: int) -> tuple[exp.Expr, float | None]:
    """The FROM item the pass reads, aliased ``src``: the table, or where it has more than
    ``sample_rows`` rows a Bernoulli sample of about that many (its percentage returned)."""
    item = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    if rows <= sample_rows:
        return item, None
    percent = max(100.0 * sample_rows / rows, 0.0001)
    percent = float(f"{percent:.4g}")
    return engine.dialect.sample(item, percent), percent


def count_rows(engine, source) -> int:
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    return int(engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(src)) or 0)


def _number(value: Any) -> float | None:
    if value is None:
        return None
    out = float(value)
    return out if math.isfinite(out) else None


def scan(engine, source, columns: list[tuple[str, str]], item: exp.Expr) -> list[ColumnStats]:
    """The one aggregate statement over ``item``: a :class:`ColumnStats` per column."""
    layout: list[tuple[int, str]] = []
    selects: list[exp.Expression] = [exp.Count(this=exp.Star())]
    for i, (name, sql_type) in enumerate(columns):
        for stat, agg in column_aggregates(name, sql_type, engine.dialect, col(name, "src")):
            layout.append((i, stat))
            selects.append(agg)
    row = engine.fetch_one(exp.select(*selects).from_(item)) or ()
    rows = int(row[0] or 0) if row else 0
    out = [ColumnStats(name=n, type=t, kind=type_kind(t), rows=rows, nonnull=0, distinct=0) for n, t in columns]
    for (i, stat), value in zip(layout, row[1:]):
        _fill(out[i], stat, value)
    return out


def _fill(stats: ColumnStats, stat: str, value: Any) -> None:
    if stat.startswith("share:"):
        stats.shares[stat.split(":", 1)[1]] = int(value or 0) / stats.nonnull if stats.nonnull else 0.0
    elif stat in ("nonnull", "distinct", "min_length", "max_length", "min_year", "max_year"):
        setattr(stats, stat, None if value is None and stat not in ("nonnull", "distinct") else int(value or 0))
    else:
        setattr(stats, stat, _number(value))
