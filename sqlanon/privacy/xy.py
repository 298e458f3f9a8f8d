"""(X,Y)-privacy over the (lossy) join of sequential releases (Wang & Fung 2006, Section 3.1).

These models are *not* per-class predicates (an x value of the join is not a class of T1), so they
are not registered in :data:`sqlanon.privacy.MODELS`; the top-down planner evaluates them with
:mod:`sqlanon.search.top_down.stats` and these classes only say what is asked and whether an answer is OK.

* **(X,Y)-anonymity** (Definition 3.1): ``a_Y(x)`` = number of distinct Y values co-occurring with
  x; ``A_Y(X) = min_x a_Y(x)``; satisfied when ``A_Y(X) >= k``.
* **(X,Y)-linkability** (Definition 3.2): ``l_y(x) = a(y, x) / a(x)``; ``L_Y(X) = max_y max_x
  l_y(x)`` over the chosen sensitive values y; satisfied when ``L_y(X) <= k_y`` for every y (a
  threshold per value is allowed).

``PrivLoss`` (Section 5.2) is ``A_Y(X) - A_Y(X_v)`` or ``L_Y(X_v) - L_Y(X)``.

The functions at the bottom measure the same quantities on a **materialized** join (a list of
dicts); they are the slow reference for tests and for re-checking a release.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from sqlanon.errors import ConfigError


@dataclass
class SensitiveValue:
    """A sensitive value y on one Y attribute, with its threshold (linkability)."""

    column: str
    value: str
    threshold: float
    release: int = 0  # 0 = the current release T1, i = the i-th previous release

    def describe(self) -> dict:
        return {"column": self.column, "value": self.value, "threshold": self.threshold}


@dataclass
class XYAnonymity:
    k: int
    x: list[str] = field(default_factory=list)
    y: list[str] = field(default_factory=list)
    name = "xy-anonymity"

    def ok(self, achieved) -> bool:
        return achieved is not None and achieved >= self.k

    def loss(self, before, after) -> float:
        return float(before - after)

    def describe(self) -> dict:
        return {"model": self.name, "k": self.k, "x": self.x, "y": self.y}


@dataclass
class XYLinkability:
    values: list[SensitiveValue]
    x: list[str] = field(default_factory=list)
    y: list[str] = field(default_factory=list)
    name = "xy-linkability"

    def ok_each(self, per_value: list[float | None]) -> bool:
        return all(l is None or l <= sv.threshold + 1e-12 for l, sv in zip(per_value, self.values))

    @staticmethod
    def overall(per_value: list[float | None]) -> float:
        return max([l for l in per_value if l is not None] or [0.0])

    def loss(self, before: list, after: list) -> float:
        return self.overall(after) - self.overall(before)

    def describe(self) -> dict:
        return {"model": self.name, "x": self.x, "y": self.y, "sensitive": [v.describe() for v in self.values]}


def parse_threshold(k) -> float:
    """``0.9``, ``90`` (percent, the CLI's integer ``--k``) or ``"90%"`` -> 0.9."""
    text = str(k).strip()
    try:
        v = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise ConfigError(f"bad linkability threshold {k!r}; give a confidence in (0, 1] or a percentage") from None
    if v > 1:
        v = v / 100
    if not 0 < v <= 1:
        raise ConfigError(f"linkability threshold must be in (0, 1] (or 1..100 percent), got {k!r}")
    return v


def parse_sensitive(specs: list[str], y_columns: list[str], default: float) -> list[tuple[str | None, str, float]]:
    """``VALUE``, ``VALUE:THRESHOLD``, ``COLUMN=VALUE`` or ``COLUMN=VALUE:THRESHOLD``."""
    out = []
    for spec in specs:
        text = str(spec)
        column = None
        if "=" in text:
            column, _, text = text.partition("=")
            column = column.strip()
            if column not in y_columns:
                raise ConfigError(f"sensitive value {spec!r} names column {column!r}, which is not in Y {y_columns}")
        thr: str | None
        value, sep, thr = text.rpartition(":")
        if not sep:
            value, thr = text, None
        threshold = parse_threshold(thr) if thr not in (None, "") else default
        out.append((column, value.strip(), threshold))
    return out


# ------------------------------------------------------------------------------------------------
# the slow reference: measure a materialized join


def anonymity_on_rows(rows: list[dict], x: list[str], y: list[str]) -> int | None:
    """``A_Y(X)`` on a materialized join: min over x of the number of distinct y values."""
    seen: dict[tuple, set] = defaultdict(set)
    for r in rows:
        seen[tuple(r[c] for c in x)].add(tuple(r[c] for c in y))
    return min((len(v) for v in seen.values()), default=None)


def linkability_on_rows(rows: list[dict], x: list[str], values: list[tuple[str, str]]) -> list[float | None]:
    """``L_y(X)`` per sensitive ``(column, value)`` on a materialized join."""
    ax: dict[tuple, int] = defaultdict(int)
    axy: list[dict[tuple, int]] = [defaultdict(int) for _ in values]
    for r in rows:
        key = tuple(r[c] for c in x)
        ax[key] += 1
        for i, (c, v) in enumerate(values):
            if str(r[c]) == v:
                axy[i][key] += 1
    out = []
    for i in range(len(values)):
        out.append(max((axy[i].get(key, 0) / n for key, n in ax.items()), default=None))
    return out
