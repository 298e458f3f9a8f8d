"""Hierarchy builders: numeric bands, dates, masking. They take the distinct source values
(fetched by :mod:`sqlanon.stats`, a small result) and return a :class:`Hierarchy`."""

from __future__ import annotations

import datetime as dt
import math

from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy.model import Hierarchy


def _num(text: str) -> str:
    return str(int(float(text))) if float(text).is_integer() else repr(float(text))


def numeric_bands(values: list[str], widths: list[float], attribute: str, origin: float = 0.0) -> Hierarchy:
    """Bands of growing width, ``[lo, hi[``, each width a multiple of the one before; root ``*``."""
    if not widths:
        raise ConfigError(f"bands for {attribute!r} need at least one width, e.g. bands:5,10,20")
    bad = [w for w in widths if not (math.isfinite(w) and w > 0)]
    if bad:
        raise ConfigError(f"band widths for {attribute!r} must be positive numbers, got {widths}")
    for a, b in zip(widths, widths[1:]):
        if b <= a or abs(b / a - round(b / a)) > 1e-9:
            raise ConfigError(
                f"band widths for {attribute!r} must grow and each divide the next, got {widths}"
            )
    rows = []
    for value in values:
        try:
            x = float(value)
        except (TypeError, ValueError):
            culprit = min(str(v) for v in values if not is_number(v))
            raise HierarchyError(f"column {attribute!r} has non-numeric value {culprit!r} for a numeric band hierarchy") from None
        if math.isnan(x):
            raise HierarchyError(f"column {attribute!r} has NaN, which no band can hold")
        row = [value]
        for w in widths:
            lo = math.floor((x - origin) / w) * w + origin
            row.append(f"[{_num(str(lo))}, {_num(str(lo + w))}[")
        row.append("*")
        rows.append(row)
    rows.sort(key=lambda r: float(r[0]))
    return Hierarchy(attribute=attribute, rows=rows, origin=f"bands:{','.join(_num(str(w)) for w in widths)}", numeric=True)


def _is_iso_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value[:10])
    except ValueError:
        return False
    return True


def date_parts(values: list[str], attribute: str, decade: bool = False) -> Hierarchy:
    """day -> month (YYYY-MM) -> year (YYYY) -> ``*``; with ``decade`` (``dates:decade``) a
    decade level (``1970s``) between the year and ``*``. A value that is no date is named in the
    error, the smallest such value: the values come in the engine's order, which may vary."""
    rows = []
    for value in values:
        try:
            day = dt.date.fromisoformat(str(value)[:10])
        except ValueError:
            culprit = min(str(v) for v in values if not _is_iso_date(str(v)))
            raise HierarchyError(f"column {attribute!r} has {culprit!r}, which is not an ISO date (YYYY-MM-DD)") from None
        row = [value, f"{day.year:04d}-{day.month:02d}", f"{day.year:04d}"]
        if decade:
            row.append(f"{day.year // 10 * 10:04d}s")
        rows.append(row + ["*"])
    rows.sort(key=lambda r: r[0])
    return Hierarchy(attribute=attribute, rows=rows, origin="dates:decade" if decade else "dates")


#: levels a mask hierarchy has at most below its root: values longer than this hide several
#: characters per level (a level per character made a 100,000-character value 100,000 labels of
#: 100,000 characters, and a lattice no search can walk)
MASK_LEVELS = 32
#: characters all labels of a mask hierarchy may hold together (every level repeats every value)
MASK_CHARS = 2**30


def mask_step(width: int) -> int:
    """Characters one mask level hides for values up to ``width`` long (1 up to ``MASK_LEVELS``)."""
    return max(1, -(-width // MASK_LEVELS))


def masking(values: list[str], attribute: str, char: str = "*") -> Hierarchy:
    """Zip-code style: level i hides the last i characters (``i * step`` for values longer than
    :data:`MASK_LEVELS`); the last level is ``char``. Memory is linear in the values' length."""
    if not values:
        raise HierarchyError(f"column {attribute!r} has no values to build a masking hierarchy from")
    width = max(len(v) for v in values)
    step = mask_step(width)
    hidden = range(step, width, step)
    size = sum(len(v) for v in values) * (len(hidden) + 1)
    if size > MASK_CHARS:
        raise HierarchyError(
            f"column {attribute!r}: a mask hierarchy of its {len(values):,} distinct values would hold {size:,} characters "
            f"(at most {MASK_CHARS:,}); give a hierarchy file or use flat"
        )
    rows = []
    for value in values:
        row = [value]
        for i in hidden:
            keep = max(len(value) - i, 0)
            row.append(value[:keep] + char * (len(value) - keep))
        row.append(char)
        rows.append(row)
    rows.sort(key=lambda r: r[0])
    return Hierarchy(attribute=attribute, rows=rows, origin="mask" if step == 1 else f"mask ({step} characters per level)")


def flat_numeric(values: list[str], attribute: str) -> Hierarchy:
    """Distinct numeric values under one root: a numeric QI whose cut is made of intervals."""
    try:
        ordered = sorted(values, key=float)
    except ValueError:
        bad = min(str(v) for v in values if not is_number(v))
        raise HierarchyError(f"column {attribute!r} is marked numeric but has value {bad!r}") from None
    return Hierarchy(attribute=attribute, rows=[[v, "*"] for v in ordered], origin="numeric", numeric=True)


def is_number(v: str) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False
