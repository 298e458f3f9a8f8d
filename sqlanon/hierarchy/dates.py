"""Dates and times as quasi-identifiers: calendar levels, age at a reference date, birth years.

Three builders over DATE, TIMESTAMP and TIMESTAMPTZ columns (or text of ISO dates), each from
the distinct non-NULL values as the engine spells them (``1984-03-05``, ``1984-03-05 13:45:00``,
``1984-03-05 13:45:00+01``; a TIMESTAMPTZ is read in the session's time zone, as the engine
prints it):

* ``dates:LEVEL,...``: calendar levels, finest first, from ``hour`` (``1984-03-05 13:00``),
  ``day`` (``1984-03-05``), ``month`` (``1984-03``), ``quarter`` (``1984-Q1``), ``year``
  (``1984``), ``Ny`` spans of N years aligned on multiples of N (``5y``: ``[1980, 1985[``) and
  ``decade`` (``1980s``), then ``*``. ``dates`` is ``dates:month,year``; ``dates:decade`` (as
  before) ``dates:month,year,decade``.
* ``age:REFERENCE,W1,W2,...``: the age in whole years at the reference date (a date or ``today``,
  resolved when the hierarchy is built and written into its origin so the release can be made
  again), then age bands of widths W1, W2, .. (``[30, 35[``), then ``*``. ``age`` is
  ``age:today,5,10,20``. The age is exact: one year less while the birthday of the reference
  year is not reached (a 29 February birthday is reached on 1 March in other years).
* ``birth_year:W1,W2,...``: the year (``1984``), then spans of W1, W2, .. years (``[1980,
  1985[``), then ``*``; ``birth_year`` is ``birth_year:5,10``.

>>> parse_levels("month,quarter,year,5y,decade", "d")
['month', 'quarter', 'year', '5y', 'decade']
>>> exact_age(dt.date(1990, 6, 15), dt.date(2026, 6, 14)), exact_age(dt.date(1990, 6, 15), dt.date(2026, 6, 15))
(35, 36)
>>> date_levels(["2024-02-29 23:59:00"], ["hour", "day", "quarter", "5y"], "t").rows
[['2024-02-29 23:59:00', '2024-02-29 23:00', '2024-02-29', '2024-Q1', '[2020, 2025[', '*']]
"""

from __future__ import annotations

import datetime as dt
import re
from operator import itemgetter

from sqlanon.errors import ConfigError, HierarchyError
import sqlanon.hierarchy.exact as exact
from sqlanon.hierarchy.model import Hierarchy

#: calendar levels below the year spans, finest first
CALENDAR = ("hour", "day", "month", "quarter", "year")
_SPAN = re.compile(r"^([1-9][0-9]*)y$")
DEFAULT_LEVELS = ["month", "year"]
DEFAULT_AGE_WIDTHS = [5, 10, 20]
DEFAULT_YEAR_WIDTHS = [5, 10]
_HINT = "write e.g. dates:month,quarter,year,5y,decade"


def _rank(level: str, attribute: str) -> tuple[int, int]:
    """Where ``level`` stands (calendar levels, then spans of N years by N); refuses others."""
    if level in CALENDAR:
        return CALENDAR.index(level), 0
    if level == "decade":
        return len(CALENDAR), 10
    m = _SPAN.match(level)
    if m and int(m.group(1)) >= 2:
        return len(CALENDAR), int(m.group(1))
    raise ConfigError(f"bad dates level {level!r} for {attribute!r} (levels: {', '.join(CALENDAR)}, Ny such as 5y, decade); {_HINT}")


def parse_levels(arg: str, attribute: str) -> list[str]:
    """The levels of a ``dates:`` spec, checked: each coarser than the one before and nested in
    the next (a span of N years inside one of M years needs M a multiple of N)."""
    names = [x.strip() for x in arg.split(",")] if arg.strip() else []
    if names == ["decade"]:  # dates:decade, as it always read
        return [*DEFAULT_LEVELS, "decade"]
    if not names:
        return list(DEFAULT_LEVELS)
    if "" in names:
        raise ConfigError(f"empty level in dates spec {arg!r} for {attribute!r}; {_HINT}")
    ranks = [_rank(n, attribute) for n in names]
    for (a, b), (ra, rb) in zip(zip(names, names[1:]), zip(ranks, ranks[1:])):
        if rb <= ra or (ra[1] and rb[1] % ra[1]):
            raise ConfigError(f"dates levels for {attribute!r} must go from fine to coarse, each inside the next: {b!r} cannot follow {a!r}; {_HINT}")
    return names


def _day(value: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _hour(value: str) -> int | None:
    text = str(value)
    if len(text) >= 13 and text[10] in " T" and text[11:13].isdigit():
        return int(text[11:13])
    return None


def _days(values: list[str], attribute: str) -> list[dt.date]:
    """Each value's calendar day; the smallest value that is no ISO date is named."""
    out = [_day(v) for v in values]
    if any(d is None for d in out):
        culprit = min(str(v) for v, d in zip(values, out) if d is None)
        raise HierarchyError(f"column {attribute!r} has {culprit!r}, which is not an ISO date (YYYY-MM-DD)")
    return [d for d in out if d is not None]


def span_label(year: int, years: int) -> str:
    """The span of ``years`` years (aligned on multiples of it) holding ``year``."""
    lo = year - year % years  # floors: whole multiples of ``years``
    return exact.label(str(lo), str(lo + years))


def level_label(level: str, day: dt.date, hour: int | None) -> str:
    if level == "hour":
        return f"{day.isoformat()} {hour:02d}:00"
    if level == "day":
        return day.isoformat()
    if level == "month":
        return f"{day.year:04d}-{day.month:02d}"
    if level == "quarter":
        return f"{day.year:04d}-Q{(day.month - 1) // 3 + 1}"
    if level == "year":
        return f"{day.year:04d}"
    if level == "decade":
        return f"{day.year // 10 * 10:04d}s"
    return span_label(day.year, int(level[:-1]))


def _check_leaf_levels(values: list[str], levels: list[str], attribute: str) -> list[int | None]:
    """Hours where asked (every value must have a time); ``day`` is refused over plain dates (it
    would be the values themselves)."""
    hours = [_hour(v) for v in values]
    if "hour" in levels and any(h is None for h in hours):
        raise ConfigError(f"dates level 'hour' for {attribute!r} needs times, and some of its values are dates without one; leave it out")
    if "day" in levels and all(h is None for h in hours):
        raise ConfigError(f"dates level 'day' for {attribute!r} is its values themselves (dates without a time); leave it out")
    return hours


def date_levels(values: list[str], levels: list[str], attribute: str, origin: str | None = None) -> Hierarchy:
    """``value -> label at each level -> *`` (see the module's docstring)."""
    days = _days(values, attribute)
    hours = _check_leaf_levels(values, levels, attribute)
    # the levels above the day are the month's: made once a month (a birth date's 29,200 days
    # are 960 months), the hour's and the day's labels per value
    coarse = [lv for lv in levels if lv not in ("hour", "day")]
    made: dict[tuple[int, int], list[str]] = {}
    by_hour, by_day = "hour" in levels, "day" in levels
    rows = []
    for v, d, h in zip(values, days, hours):
        up = made.get((d.year, d.month))
        if up is None:
            up = made[(d.year, d.month)] = [*(level_label(lv, d, None) for lv in coarse), "*"]
        row = [v]
        if by_hour:
            row.append(level_label("hour", d, h))
        if by_day:
            row.append(d.isoformat())
        rows.append(row + up)
    rows.sort(key=itemgetter(0))
    return Hierarchy(attribute=attribute, rows=rows, origin=origin or "dates:" + ",".join(levels))


def exact_age(born: dt.date, on: dt.date) -> int:
    """Whole years from ``born`` to ``on``: one less while the birthday is not reached."""
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _widths(texts: list[str], attribute: str, kind: str, example: str) -> list[int]:
    """Whole widths of at least 2 years, growing, each dividing the next."""
    if not all(re.fullmatch(r"[0-9]+", t) and int(t) >= 2 for t in texts):
        raise ConfigError(f"bad {kind} widths {','.join(texts)!r} for {attribute!r}: whole numbers of years, at least 2; write e.g. {example}")
    out = [int(t) for t in texts]
    for a, b in zip(out, out[1:]):
        if b <= a or b % a:
            raise ConfigError(f"{kind} widths for {attribute!r} must grow and each divide the next, got {','.join(texts)}; write e.g. {example}")
    return out


def parse_age(arg: str, attribute: str, today: dt.date | None = None) -> tuple[dt.date, list[int]]:
    """``REFERENCE[,W1,...]`` of an ``age:`` spec: the reference date (``today``: the UTC date
    now) and the band widths (default 5, 10, 20)."""
    parts = [x.strip() for x in arg.split(",")] if arg.strip() else ["today"]
    ref_text, widths = parts[0], parts[1:]
    if ref_text == "today":
        ref = today or dt.datetime.now(dt.UTC).date()
    else:
        try:
            ref = dt.date.fromisoformat(ref_text)
        except ValueError:
            raise ConfigError(f"bad reference date {ref_text!r} in age spec for {attribute!r}: a date YYYY-MM-DD or today; write e.g. age:2026-01-01,5,10,20") from None
    return ref, _widths(widths, attribute, "age", "age:today,5,10,20") if widths else list(DEFAULT_AGE_WIDTHS)


def age_bands(values: list[str], reference: dt.date, widths: list[int], attribute: str) -> Hierarchy:
    """birth date -> age in years at ``reference`` -> age bands -> ``*``."""
    ages = [exact_age(d, reference) for d in _days(values, attribute)]
    late = sum(1 for a in ages if a < 0)
    if late:
        raise HierarchyError(f"column {attribute!r} has {late} birth date(s) after the reference date {reference.isoformat()} of its age hierarchy")
    made: dict[int, list[str]] = {}
    rows = []
    for value, age in zip(values, ages):
        up = made.get(age)
        if up is None:
            up = made[age] = [str(age), *(exact.label(str(age - age % w), str(age - age % w + w)) for w in widths), "*"]
        rows.append([value, *up])
    rows.sort(key=lambda r: r[0])
    origin = "age:" + ",".join([reference.isoformat(), *map(str, widths)])
    return Hierarchy(attribute=attribute, rows=rows, origin=origin)


def year_widths(arg: str, attribute: str) -> list[int]:
    """The widths of a ``birth_year:`` spec (default 5, 10)."""
    texts = [x.strip() for x in arg.split(",")] if arg.strip() else []
    return _widths(texts, attribute, "birth_year", "birth_year:5,10") if texts else list(DEFAULT_YEAR_WIDTHS)


def birth_years(values: list[str], widths: list[int], attribute: str) -> Hierarchy:
    """birth date -> year -> spans of ``widths`` years -> ``*``."""
    levels = ["year", *(f"{w}y" for w in widths)]
    return date_levels(values, levels, attribute, origin="birth_year:" + ",".join(map(str, widths)))


def resolved_specs(qi: dict | None, hierarchies) -> dict | None:
    """The policy's ``qi`` specs with each ``age`` spec written as its hierarchy was built (the
    reference date ``today`` resolved: ``age:2026-12-01,5,10,20``), so a release recorded with it
    is made again by the same policy."""
    if not qi:
        return qi
    origins = {h.attribute: h.origin for h in hierarchies}
    return {c: origins[c] if isinstance(spec, str) and spec.strip().startswith("age") and str(origins.get(c, "")).startswith("age:") else spec for c, spec in qi.items()}
