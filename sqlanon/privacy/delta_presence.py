"""delta-presence (Nergiz, Atzori, Clifton, "Hiding the presence of individuals from shared
databases", SIGMOD 2007): the input is a research subset of a population table held in the
database; for every released class, the probability that a population member of the class is in
the subset, ``delta = cnt / pop_cnt``, lies in ``[delta_min, delta_max]``. As in ARX's
``DPresence``, only classes holding subset rows are released and checked.

Monotone without suppression (a merged class's delta lies between its parts'), not with a budget.

Policy keys: ``delta_min`` and/or ``delta_max`` with ``population`` (a table).
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import as_double, col, lit
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.privacy.population import POPULATION, POPULATION_KEY, statistics_extras

EPS = 1e-12


class DeltaPresence(PrivacyModel):
    name = "delta-presence"
    aggregates = (POPULATION,)
    needs = ClassNeeds(POPULATION)
    monotone_with_suppression = False
    policy_keys = (
        POPULATION_KEY,
        PolicyKey("delta_min", float, help="delta-presence lower bound (with --population)."),
        PolicyKey("delta_max", float, help="delta-presence upper bound (with --population)."),
    )
    asks = ("delta_min", "delta_max")
    replaces_k = True
    label = "delta-presence"

    @classmethod
    def validate_policy(cls, policy) -> None:
        delta = cls.asked(policy)
        if policy.population is not None and policy.k_map is None and not delta:
            raise ConfigError("population is the population table of k-map and delta-presence: give --k-map or --delta-min/--delta-max with it")
        if delta and policy.population is None:
            raise ConfigError("delta-presence (--delta-min/--delta-max) needs --population TABLE, the population the input is a subset of")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        if not cls.asked(policy):
            return []
        return [cls(0.0 if policy.delta_min is None else policy.delta_min, 1.0 if policy.delta_max is None else policy.delta_max)]

    def statistics_extras(self, policy, session) -> dict:
        return statistics_extras(policy, session)

    def to_policy(self) -> dict:
        """delta-presence; give population= (the population table) as a keyword."""
        return {"delta_min": self.delta_min, "delta_max": self.delta_max}

    def __init__(self, delta_min: float = 0.0, delta_max: float = 1.0) -> None:
        if not 0.0 <= delta_min <= delta_max <= 1.0:
            raise ConfigError(f"delta-presence needs 0 <= delta_min <= delta_max <= 1, got delta_min={delta_min!r}, delta_max={delta_max!r}")
        self.delta_min = float(delta_min)
        self.delta_max = float(delta_max)

    @staticmethod
    def delta() -> exp.Expr:
        return exp.Div(this=as_double(col("cnt")), expression=as_double(col("pop_cnt")))

    def predicate(self) -> exp.Expr:
        d = self.delta()
        return exp.and_(exp.GTE(this=d, expression=lit(self.delta_min - EPS)), exp.LTE(this=d.copy(), expression=lit(self.delta_max + EPS)))

    def class_ok(self, cls: dict) -> bool:
        d = cls["cnt"] / cls["pop_cnt"]
        return self.delta_min - EPS <= d <= self.delta_max + EPS

    def describe(self) -> dict:
        return {"model": self.name, "delta_min": self.delta_min, "delta_max": self.delta_max}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_delta", exp.Min(this=self.delta())), ("max_delta", exp.Max(this=self.delta()))]

    def describe_worst(self, v: dict) -> str:
        if v.get("min_delta") is None:
            return ""
        return f"class deltas range over [{v['min_delta']:.4g}, {v['max_delta']:.4g}] (allowed [{self.delta_min:g}, {self.delta_max:g}])"
