"""t-closeness (Li, Li, Venkatasubramanian): the Earth Mover's Distance between a class's
sensitive distribution P and the table's Q is at most t.

* ``equal`` distance (categorical): ``EMD = 1/2 * sum |p_i - q_i|``;
* ``ordered`` distance (numeric, values sorted): ``EMD = 1/(m-1) * sum_i |sum_{j<=i} (p_j - q_j)|``.
"""

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.source import col
from sqlanon.stats import ClassNeeds, lit

EPS = 1e-9


def emd_equal(p: dict, q: dict) -> float:
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)


def emd_ordered(p: dict, q: dict, order: list) -> float:
    m = len(order)
    if m <= 1:
        return 0.0
    cum, total = 0.0, 0.0
    for v in order[:-1]:
        cum += p.get(v, 0.0) - q.get(v, 0.0)
        total += abs(cum)
    return total / (m - 1)


class TCloseness(PrivacyModel):
    name = "t-closeness"
    monotone_with_suppression = False  # a close class merged with a far one can be far

    def __init__(self, t: float, distance: str = "equal") -> None:
        if not 0 <= t <= 1:
            raise ConfigError(f"t must lie in [0, 1], got {t!r}")
        if distance not in ("equal", "ordered"):
            raise ConfigError(f"t-closeness distance must be equal or ordered, got {distance!r}")
        self.t = float(t)
        self.distance = distance
        self.needs = ClassNeeds(emd_equal=distance == "equal", emd_ordered=distance == "ordered")
        self.global_dist: dict | None = None
        self.order: list | None = None

    def predicate(self) -> exp.Expression:
        column = "emd_equal" if self.distance == "equal" else "emd_ordered"
        return exp.LTE(this=col(column), expression=lit(self.t + EPS))

    def class_ok(self, cls: dict) -> bool:
        n = sum(cls["s_counts"].values())
        p = {v: c / n for v, c in cls["s_counts"].items()}
        assert self.global_dist is not None, "set global_dist before checking in Python"
        if self.distance == "equal":
            return emd_equal(p, self.global_dist) <= self.t + EPS
        return emd_ordered(p, self.global_dist, self.order) <= self.t + EPS

    def describe(self) -> dict:
        return {"model": self.name, "t": self.t, "distance": self.distance}

    def worst(self) -> list[tuple[str, exp.Expression]]:
        return [("max_distance", exp.Max(this=col("emd_equal" if self.distance == "equal" else "emd_ordered")))]

    def describe_worst(self, v: dict) -> str:
        d = v["max_distance"]
        return f"the farthest class is at distance {d:.4g} (t={self.t:g})" if d is not None else ""
