"""Hierarchy builders: numeric bands, dates, masking. They take the distinct source values
(fetched by :mod:`sqlanon.stats`, a small result) and return a :class:`Hierarchy`."""

from __future__ import annotations

import operator

from sqlanon.errors import HierarchyError
import sqlanon.hierarchy.dates as dates
import sqlanon.hierarchy.exact as exact
from sqlanon.hierarchy.model import Hierarchy


def _width_text(w) -> str:
    """A width as the decimal it means: text as given, a float by its shortest text."""
    if isinstance(w, str):
        return w
    return str(int(w)) if float(w).is_integer() else repr(float(w))


def numeric_bands(values: list[str], widths: list, attribute: str, double: bool = False) -> Hierarchy:
    """Bands of growing width, ``[lo, hi[``, each width a multiple of the one before; root ``*``.
    Edges are exact (:mod:`sqlanon.hierarchy.exact`): the widths are read as decimals (give text,
    ``"0.1"``, or numbers), the values as the decimals their text spells; ``double``: the column
    is a DOUBLE, and every band must hold its values read as DOUBLEs too.

    >>> numeric_bands(["0.6", "0.3", "7"], ["0.1", "0.2"], "x").rows
    [['0.3', '[0.3, 0.4[', '[0.2, 0.4[', '*'], ['0.6', '[0.6, 0.7[', '[0.6, 0.8[', '*'], ['7', '[7, 7.1[', '[7, 7.2[', '*']]
    """
    exact_widths = exact.widths_of([_width_text(w) for w in widths], attribute)
    rows = exact.band_rows(values, exact_widths, attribute, double)
    return Hierarchy(attribute=attribute, rows=rows, origin=f"bands:{','.join(exact.text(w) for w in exact_widths)}", numeric=True)


def date_parts(values: list[str], attribute: str, decade: bool = False) -> Hierarchy:
    """day -> month (YYYY-MM) -> year (YYYY) -> ``*``; with ``decade`` (``dates:decade``) a
    decade level (``1970s``) between the year and ``*`` (:mod:`sqlanon.hierarchy.dates` builds
    any levels). A value that is no date is named in the error, the smallest such value: the
    values come in the engine's order, which may vary."""
    levels = ["month", "year", "decade"] if decade else ["month", "year"]
    return dates.date_levels(values, levels, attribute, origin="dates:decade" if decade else "dates")


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
    by_length: dict[int, list[str]] = {}
    for value in values:
        by_length.setdefault(len(value), []).append(value)
    rows: list[list[str]] = []
    for length, same in by_length.items():  # a level's labels per length, a column at a time
        levels = [same]
        for i in hidden:
            keep = max(length - i, 0)
            pad = char * (length - keep)
            levels.append([v[:keep] + pad for v in same])
        levels.append([char] * len(same))
        rows.extend(map(list, zip(*levels)))
    rows.sort(key=operator.itemgetter(0))
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
