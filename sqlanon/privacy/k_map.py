"""k-map (Sweeney 2002; El Emam & Dankar, "Protecting privacy using k-anonymity", JAMIA 2008):
every released class matches at least k records of the *population*, not of the sample.

* against a population table held in the database (``population: TABLE``): the class's
  population count ``pop_cnt`` (the population coded by the same hierarchies, rolled up per node)
  is at least k. The input must be a subset of the population (checked when the scan is built).
* with an estimated population (``population_size: N``, sampling fraction ``pi = rows / N``):
  the population count of a class is unknown, so, as in ARX's ``KMap`` with a cell size estimator,
  k-map is replaced by k'-anonymity on the sample, where k' is the smallest class size whose
  estimated population count reaches k with probability ``1 - significance``:
  ``poisson`` (Pannekoek's D3): population cell ~ Poisson(lambda = pi * k); ``zero-truncated-poisson``
  (D4). k' never exceeds k nor the table.

Policy keys: ``k_map`` with ``population`` (a table), or with ``population_size`` (and
``k_map_estimator``, ``k_map_significance``).
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import col, lit
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import Aggregate, ClassNeeds
from sqlanon.privacy.population import POPULATION, POPULATION_KEY, statistics_extras

ESTIMATORS = ("poisson", "zero-truncated-poisson")


def _poisson_pmf(j: int, lam: float) -> float:
    return math.exp(-lam + j * math.log(lam) - math.lgamma(j + 1)) if lam > 0 else float(j == 0)


def derived_k(k: int, sampling_fraction: float, significance: float, estimator: str = "poisson") -> tuple[int, float]:
    """``(k', type I error)`` as ARX's ``KMap.calculateKPoisson`` / ``calculateKZeroPoisson`` define
    them: lambda = sampling_fraction * k; Poisson: the first c with ``P(X <= c) >= 1 - significance``
    (c counted from 0), k' = c + 2; zero-truncated: the first c >= 1 with the truncated CDF at c
    reaching ``1 - significance``, k' = c + 1. Then ``min(k, k')``."""
    lam = sampling_fraction * k
    threshold = 1.0 - significance
    if estimator == "poisson":
        counter, value = 0, 0.0
        while value < threshold:
            value = sum(_poisson_pmf(j, lam) for j in range(counter + 1))
            counter += 1
        return min(k, counter + 1), 1.0 - value
    if estimator == "zero-truncated-poisson":
        v2 = 1.0 - _poisson_pmf(0, lam)
        counter, value = 1, 0.0
        while value < threshold:
            value += _poisson_pmf(counter, lam) / v2
            counter += 1
        return min(k, counter), 1.0 - value
    raise ConfigError(f"k-map estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")


#: estimated k-map's class-size floor k', derived from the sample's size when the table's rows are
#: known (:meth:`KMap.bind`): no column, but a search must honour it (the lattice family and genetic do; top-down's
#: refinement does not keep it)
DERIVED_K = Aggregate("derived_k", sensitive=False, column=False)

class KMap(PrivacyModel):
    name = "k-map"
    aggregates = (POPULATION, DERIVED_K)
    policy_keys = (
        PolicyKey("k_map", int, help="k of k-map: every class matches >= k population records (--population TABLE or --population-size N)."),
        POPULATION_KEY,
        PolicyKey("population_size", int, help="k-map with an estimated population of N records."),
        PolicyKey("k_map_estimator", str, help="Estimated k-map: poisson (default) | zero-truncated-poisson."),
        PolicyKey("k_map_significance", float, help="Estimated k-map: significance level (default 0.01)."),
    )
    asks = ("k_map",)
    example = {"k_map": 3, "population_size": 1000}
    replaces_k = True
    label = "k-map"

    @classmethod
    def validate_policy(cls, policy) -> None:
        if policy.population_size is not None:
            if policy.k_map is None:
                raise ConfigError("population_size is the estimated population of k-map: give --k-map with it")
            if policy.population is not None:
                raise ConfigError("k-map takes a population table (--population) or an estimated size (--population-size), not both")
        if policy.k_map is not None and policy.population is None and policy.population_size is None:
            raise ConfigError("k-map needs the population: --population TABLE or --population-size N (estimated)")
        for key in ("k_map_estimator", "k_map_significance"):
            if getattr(policy, key) is not None and policy.population_size is None:
                raise ConfigError(f"{key} applies to k-map with an estimated population (--population-size)")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        if policy.k_map is None:
            return []
        if policy.population_size is None:
            return [cls(policy.k_map)]
        significance = 0.01 if policy.k_map_significance is None else policy.k_map_significance
        return [cls(policy.k_map, policy.population_size, policy.k_map_estimator or "poisson", significance)]

    def statistics_extras(self, policy, session) -> dict:
        return statistics_extras(policy, session)

    def to_policy(self) -> dict:
        """k-map; without population_size, give population= (the population table) as a keyword."""
        out: dict = {"k_map": self.k_map}
        if self.population_size is not None:
            out.update(population_size=self.population_size, k_map_estimator=self.estimator, k_map_significance=self.significance)
        return out

    def __init__(self, k: int, population_size: int | None = None, estimator: str = "poisson", significance: float = 0.01) -> None:
        if isinstance(k, bool) or int(k) != k or k < 1:
            raise ConfigError(f"k-map k must be a whole number >= 1, got {k!r}")
        self.k_map = int(k)  # not ``k``: Requirement.k (a class-size lower bound) must not see it
        self.population_size = population_size
        self.estimator = estimator
        self.significance = float(significance)
        self.derived_k: int | None = None
        if population_size is None:
            self.needs = ClassNeeds(POPULATION)
        else:
            if estimator not in ESTIMATORS:
                raise ConfigError(f"k_map_estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
            if not 0 < self.significance < 1:
                raise ConfigError(f"k_map_significance must lie in (0, 1), got {significance!r}")
            self.needs = ClassNeeds(DERIVED_K)

    @property
    def estimated(self) -> bool:
        return self.population_size is not None

    def bind(self, stats) -> None:
        """With an estimated population: derive k' from the sample's size."""
        if not self.estimated:
            return
        rows = stats.rows
        if self.population_size < rows:
            raise ConfigError(f"population_size {self.population_size} is smaller than the input ({rows} rows)")
        k2, _type1_error = derived_k(self.k_map, rows / self.population_size, self.significance, self.estimator)
        self.derived_k = min(k2, rows)

    def predicate(self) -> exp.Expr:
        if self.estimated:
            assert self.derived_k is not None, "bind() the model to the table first"
            return exp.GTE(this=col("cnt"), expression=lit(self.derived_k))
        return exp.GTE(this=col("pop_cnt"), expression=lit(self.k_map))

    def class_ok(self, cls: dict) -> bool:
        if self.estimated:
            return cls["cnt"] >= self.derived_k
        return cls["pop_cnt"] >= self.k_map

    def describe(self) -> dict:
        d = {"model": self.name, "k": self.k_map}
        if self.estimated:
            d.update(population_size=self.population_size, estimator=self.estimator, significance=self.significance, derived_k=self.derived_k)
        return d

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_match", exp.Min(this=col("cnt" if self.estimated else "pop_cnt")))]

    def describe_worst(self, v: dict) -> str:
        if self.estimated:
            return f"the smallest class has {v['min_match']} rows (k-map k={self.k_map} estimated as k'={self.derived_k})"
        return f"the class with the fewest population matches has {v['min_match']} (k-map k={self.k_map})"
