"""A hierarchy proposal per quasi-identifier, computed from the data in SQL, written in the
policy's own hierarchy syntax (the builders of :mod:`sqlanon.hierarchy`):

* dates of birth (by name): ``age:TODAY,5,10,20`` (the age in years at the day of the profile,
  written as a date so the policy releases the same ages when run again, then 5, 10 and 20-year
  bands); other dates and timestamps (events): ``dates:month,quarter,year``, then the spans of
  5, 10 and 20 years (``5y``, ``decade``, ``20y``) that still keep two values or more of the
  years the column covers (:func:`year_spans`), so that a search has a level between the year and
  ``*``;
* fixed-length codes (postal codes): ``mask`` (one more trailing character hidden per level);
* numbers with many values: ``bands:W1,W2,..``, widths that divide each other, the first chosen
  from the interquartile range (a quarter of it, rounded to 1, 2 or 5 times a power of ten), then
  doubled until at most :data:`TOP_BANDS` bands cover the range;
* few values (at most :data:`FLAT_MAX`): ``flat`` (each value, then ``*``);
* many categories: a grouping by frequency, value -> itself where it is frequent (at least
  ``max(k, 1 %)`` of the rows), else ``other`` -> ``*``: a hierarchy file written beside the
  policy (the values stay out of the policy).

>>> band_widths(17, 90, 28, 47, integer=True)
[5.0, 10.0, 20.0, 40.0]
>>> nice(0.3), nice(4.75), nice(120)
(0.5, 5.0, 200.0)
>>> year_spans(2020, 2025), year_spans(1930, 2015), year_spans(2024, 2024)
(['5y'], ['5y', 'decade', '20y'], [])
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.config.frontdoor import bands
from sqlanon.expr.atoms import col, literal
from sqlanon.profiling.patterns import name_kind
from sqlanon.profiling.scan import ColumnStats, as_text, numeric_value

#: categorical columns with at most this many values get a flat hierarchy
FLAT_MAX = 20
#: bands stop growing once this many cover the column's range
TOP_BANDS = 3
#: band levels at most
MAX_BAND_LEVELS = 6
#: a grouping by frequency is written for at most this many values (else: masking)
MAX_FILE_VALUES = 100_000
#: the label of the infrequent values in a grouping by frequency
OTHER = "other"


@dataclass
class Proposal:
    kind: str  # dates | age | mask | bands | flat | frequency
    spec: str  # the hierarchy spec (for ``frequency``: the file name, set by the writer)
    reason: str
    levels: int  # levels from the leaf to the root ``*``, both counted
    #: ``frequency``: the hierarchy rows (leaf, group, ``*``) for the file beside the policy
    rows: list[list[str]] = field(default_factory=list, repr=False)


def nice(x: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten that is at least ``x``."""
    if not x > 0:
        return 1.0
    e = math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        w = m * 10.0**e
        if w >= x * (1 - 1e-12):
            return float(f"{w:.12g}")
    return 10.0 ** (e + 1)  # pragma: no cover


def _bands_over(lo: float, hi: float, width: float) -> int:
    return math.floor(hi / width) - math.floor(lo / width) + 1


def band_widths(lo: float, hi: float, q1: float | None, q3: float | None, integer: bool) -> list[float]:
    """Widths for ``bands:``: the first a quarter of the interquartile range (of the whole range
    when the quartiles coincide), rounded by :func:`nice` (at least 1 for whole numbers), each next
    one twice the last, until at most :data:`TOP_BANDS` bands cover ``[lo, hi]``."""
    spread = (q3 - q1) if q1 is not None and q3 is not None and q3 > q1 else (hi - lo)
    base = nice(spread / 4)
    if integer:
        base = max(base, 1.0)
    widths = [base]
    while _bands_over(lo, hi, widths[-1]) > TOP_BANDS and len(widths) < MAX_BAND_LEVELS:
        widths.append(widths[-1] * 2)
    return widths


def quartile(value: exp.Expression, q: float) -> exp.Expression:
    """``PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY value)`` (DuckDB's ``quantile_cont``, Spark's
    ``percentile_approx`` as sqlglot renders it)."""
    return exp.WithinGroup(this=exp.PercentileCont(this=literal(q)), expression=exp.Order(expressions=[exp.Ordered(this=value)]))


def quartiles(engine, item: exp.Expr, columns: list[ColumnStats]) -> dict[str, tuple[float | None, float | None]]:
    """The first and third quartiles of numeric columns, one statement over ``item``."""
    if not columns:
        return {}
    selects = []
    for s in columns:
        value = numeric_value(col(s.name, "src"), s.kind, engine.dialect)
        selects += [quartile(value, 0.25), quartile(value.copy(), 0.75)]
    row = engine.fetch_one(exp.select(*selects).from_(item.copy())) or ()
    out = {}
    for i, s in enumerate(columns):
        q1, q3 = row[2 * i], row[2 * i + 1]
        out[s.name] = (None if q1 is None else float(q1), None if q3 is None else float(q3))
    return out


def frequency_rows(engine, source, column: str, cut: int) -> list[list[str]]:
    """``[value, value or other, *]`` per distinct value, most frequent first, over the whole
    table (every value must be a leaf): the grouping is computed in SQL."""
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    value = as_text(col(column, "src"))
    count = exp.Count(this=exp.Star())
    group = exp.Case(ifs=[exp.If(this=exp.GTE(this=count.copy(), expression=literal(cut)), true=value.copy())], default=literal(OTHER))
    q = (
        exp.select(value.copy(), group, literal("*"))
        .from_(src)
        .where(exp.Not(this=exp.Is(this=col(column, "src"), expression=exp.Null())))
        .group_by(value.copy())
        .order_by(exp.Ordered(this=count.copy(), desc=True), exp.Ordered(this=value.copy()))
    )
    return [[str(v) for v in r] for r in engine.fetch_all(q)]


def _is_code(stats: ColumnStats) -> bool:
    """Codes of one length (postal codes, ids of a format): text, or numbers named as codes."""
    fixed = stats.min_length is not None and stats.min_length == stats.max_length and stats.min_length >= 3
    named = name_kind(stats.name) == "postal code"
    return named or (fixed and not stats.is_numeric)


#: the spans of years an event date may be generalized to after its year: (years, dates level)
YEAR_SPANS = ((5, "5y"), (10, "decade"), (20, "20y"))


def year_spans(first: int | None, last: int | None) -> list[str]:
    """The ``dates`` levels after ``year`` for values from year ``first`` to ``last``: each span of
    :data:`YEAR_SPANS` that keeps at least two values and fewer than the level before it (spans
    are aligned on multiples of their length, so each nests in the next)."""
    if first is None or last is None:
        return []
    out: list[str] = []
    before = last - first + 1
    for years, level in YEAR_SPANS:
        values = last // years - first // years + 1
        if values < 2:
            break
        if values < before:
            out.append(level)
            before = values
    return out


def date_proposal(stats: ColumnStats, today: dt.date | None = None) -> Proposal:
    """A date of birth as age bands at ``today`` (the UTC date now); any other date or
    timestamp as month, quarter, year and the spans of years that keep two values or more."""
    if name_kind(stats.name) == "date of birth":
        day = (today or dt.datetime.now(dt.UTC).date()).isoformat()
        return Proposal("age", f"age:{day},5,10,20", f"birth dates: age in years on {day} -> 5, 10, 20-year bands -> *", 6)
    spans = year_spans(stats.min_year, stats.max_year)
    words = {"5y": "5 years", "decade": "decade", "20y": "20 years"}
    reason = " -> ".join(["day", "month", "quarter", "year", *(words[s] for s in spans), "*"])
    return Proposal("dates", "dates:" + ",".join(["month", "quarter", "year", *spans]), reason, 5 + len(spans))


def propose(stats: ColumnStats, quarts: dict, engine, source, rows: int, k: int) -> Proposal:
    """The hierarchy proposal for one quasi-identifier (see the module's docstring)."""
    if stats.is_date:
        return date_proposal(stats)
    if stats.distinct > FLAT_MAX and _is_code(stats):
        width = stats.max_length or 1
        return Proposal("mask", "mask", f"codes of {width} characters: one more trailing character hidden per level", width + 1)
    if stats.is_numeric and stats.distinct > FLAT_MAX and stats.minimum is not None and stats.maximum is not None:
        q1, q3 = quarts.get(stats.name, (None, None))
        integer = float(stats.minimum).is_integer() and float(stats.maximum).is_integer() and (stats.kind == "text" or "int" in stats.type.lower())
        widths = band_widths(stats.minimum, stats.maximum, q1, q3, integer)
        spec = bands(*[int(w) if w.is_integer() else w for w in widths])
        return Proposal("bands", str(spec), f"bands of width {spec.split(':', 1)[1].replace(',', ', ')}, the first a quarter of the interquartile range", len(widths) + 2)
    if stats.distinct <= FLAT_MAX:
        return Proposal("flat", "flat", f"{stats.distinct} values, then *", 2)
    if stats.distinct > MAX_FILE_VALUES:
        return Proposal("mask", "mask", f"{stats.distinct:,} values, too many for a hierarchy file: trailing characters hidden", (stats.max_length or 1) + 1)
    cut = max(k, math.ceil(0.01 * rows))
    found = frequency_rows(engine, source, stats.name, cut)
    kept = sum(1 for r in found if r[1] != OTHER or r[0] == OTHER)
    return Proposal("frequency", "", f"{len(found)} values by frequency: {kept} with at least {cut:,} rows kept, the rest {OTHER!r}", 3, rows=found)
