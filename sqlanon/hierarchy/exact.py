"""Exact band edges: a value's band ``[lo, hi[`` computed in the value's own arithmetic.

The values come from the engine as text (the shortest text of a DOUBLE, the digits of a DECIMAL
or an integer), and that text is read as an exact decimal: edges are whole multiples of the width
counted in integers, so a DECIMAL ``0.6`` lands in ``[0.6, 0.7[`` (not ``[0.5, 0.6[`` as by
floats), ``0.3`` under ``[0.2, 0.4[`` (never ``0.30000000000000004``), and a BIGINT near 2^63 in
a band of its own digits. For a DOUBLE column the edges are then read back as DOUBLEs and must
hold the value there too (``float(lo) <= x < float(hi)``); a width below the DOUBLE's precision at
a value (``0.1`` at ``1e20``) is refused rather than released as an empty band.

>>> edges(Decimal("0.6"), Decimal("0.1"))
('0.6', '0.7')
>>> edges(Decimal("9223372036854775807"), Decimal("100"))
('9223372036854775800', '9223372036854775900')
>>> label(*edges(Decimal("-0.05"), Decimal("0.1")))
'[-0.1, 0['
"""

from __future__ import annotations

from decimal import Context, Decimal, DivisionByZero, Inexact, InvalidOperation, Overflow, localcontext
from typing import NoReturn

from sqlanon.errors import ConfigError, HierarchyError


def number(text: str) -> Decimal | None:
    """The exact decimal a value's text spells (``1e+20``, ``1.0E20``, ``-0.5``); None when it
    spells no finite number."""
    try:
        out = Decimal(str(text).strip())
    except (InvalidOperation, ValueError):
        return None
    return out if out.is_finite() else None


def text(d: Decimal) -> str:
    """A decimal as plain digits, no exponent and no trailing zeros (``1E+2`` -> ``100``)."""
    out = format(d.normalize(), "f")
    return "0" if out in ("-0", "") else out


def edges(x: Decimal, width: Decimal) -> tuple[str, str]:
    """The band of width ``width`` holding ``x`` (edges at whole multiples of it), as text."""
    with _exact():
        _, lo, hi = _Width(width).band(*x.as_integer_ratio())
    return lo, hi


#: a decimal context wide enough for the edges' products to be exact (else it raises ``Inexact``)
_EXACT = Context(prec=100_000, Emax=10**6, Emin=-(10**6), traps=[Inexact, InvalidOperation, DivisionByZero, Overflow])


def _exact():
    return localcontext(_EXACT)


def label(lo: str, hi: str) -> str:
    return f"[{lo}, {hi}["


def widths_of(texts: list[str], attribute: str) -> list[Decimal]:
    """Band widths from the spec's text, exactly: positive, growing, each dividing the next."""
    if not texts:
        raise ConfigError(f"bands for {attribute!r} need at least one width, e.g. bands:5,10,20")
    widths = [number(t) for t in texts]
    if any(w is None for w in widths):
        raise ConfigError(f"bad band widths {','.join(map(str, texts))!r} for {attribute!r}; write e.g. bands:5,10,20")
    if any(w is not None and w <= 0 for w in widths):
        raise ConfigError(f"band widths for {attribute!r} must be positive numbers, got {','.join(map(str, texts))}")
    out = [w for w in widths if w is not None]
    for a, b in zip(out, out[1:]):
        if b <= a or b % a != 0:
            raise ConfigError(f"band widths for {attribute!r} must grow and each divide the next, got {','.join(text(w) for w in out)}")
    return out


def check_double(value: str, lo: str, hi: str, attribute: str, width: Decimal) -> None:
    """A DOUBLE value lies in its band read as DOUBLEs; else the width is below the DOUBLE's
    precision there (the band would be empty or miss the value)."""
    x, a, b = float(value), float(lo), float(hi)
    if not (a <= x < b):
        raise ConfigError(
            f"band width {text(width)} for {attribute!r} is below the precision of its DOUBLE values near {a:g}: "
            "the band could not hold them; use wider bands"
        )


class _Width:
    """One band width as an exact fraction, with the labels of its bands made so far (values
    share bands: each label is formatted once)."""

    def __init__(self, width: Decimal) -> None:
        self.width = width
        self.num, self.den = width.as_integer_ratio()
        self.labels: dict[int, tuple[str, str, str]] = {}
        self.edges: dict[int, str] = {}

    def edge(self, n: int) -> str:
        out = self.edges.get(n)
        if out is None:
            out = self.edges[n] = text(Decimal(n) * self.width)
        return out

    def band(self, p: int, q: int) -> tuple[str, str, str]:
        """``(label, lo, hi)`` of the band holding ``p / q``: ``n = floor(p/q / width)``."""
        n = (p * self.den) // (q * self.num)
        out = self.labels.get(n)
        if out is None:
            lo, hi = self.edge(n), self.edge(n + 1)
            out = self.labels[n] = (label(lo, hi), lo, hi)
        return out


def band_rows(values: list[str], widths: list[Decimal], attribute: str, double: bool = False) -> list[list[str]]:
    """``[value, band at each width..., *]`` per value, sorted by value (exactly): each value an
    exact fraction ``p / q`` (:meth:`Decimal.as_integer_ratio`), its band ``floor(p/q / w)`` in
    integers, the edges multiplied out in a context wide enough to be exact."""
    bands = [_Width(w) for w in widths]
    keyed: list[tuple[Decimal, list[str]]] = []
    with _exact():
        for value in values:
            x = number(value)
            if x is None:
                _refuse(values, attribute)
            p, q = x.as_integer_ratio()
            row = [value]
            for b in bands:
                name, lo, hi = b.band(p, q)
                if double:
                    check_double(value, lo, hi, attribute, b.width)
                row.append(name)
            row.append("*")
            keyed.append((x, row))
    keyed.sort(key=lambda pair: (pair[0], pair[1][0]))  # ties ("01" and "1"): by their text
    return [row for _, row in keyed]


def _refuse(values: list[str], attribute: str) -> NoReturn:
    bad = [str(v) for v in values if number(v) is None]
    nan = [v for v in bad if v.strip().lower() in ("nan", "-nan")]
    if nan and len(nan) == len(bad):
        raise HierarchyError(f"column {attribute!r} has NaN, which no band can hold")
    inf = [v for v in bad if v.strip().lower().lstrip("+-") in ("inf", "infinity")]
    if inf and len(inf) == len(bad):
        raise HierarchyError(f"column {attribute!r} has an infinite value, which no band can hold")
    culprit = min(v for v in bad if v not in nan and v not in inf)
    raise HierarchyError(f"column {attribute!r} has non-numeric value {culprit!r} for a numeric band hierarchy")
