"""l-diversity of a sensitive column within each class (Machanavajjhala et al.).

* distinct: at least l distinct sensitive values;
* entropy: ``-sum p log p >= log l``, computed in SQL as ``ln(n) - sum(n_s ln n_s)/n``.

Policy keys: ``l`` with ``l_diversity: distinct`` (default) or ``entropy`` and ``sensitive_column``
(``recursive`` is :mod:`sqlanon.privacy.recursive_cl`).
"""

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import as_double, col, lit
from sqlanon.privacy.needs import ClassNeeds

EPS = 1e-9


def _check_l(l) -> float:
    if l < 1:
        raise ConfigError(f"l must be >= 1, got {l!r}")
    return l


def _sensitive(m) -> dict:
    return {"sensitive_column": m.column} if getattr(m, "column", None) else {}


class DistinctLDiversity(PrivacyModel):
    name = "distinct-l-diversity"
    needs = ClassNeeds(distinct_s=True)
    asks = ("l",)

    def __init__(self, l: int, column: str | None = None) -> None:
        self.l = int(_check_l(l))
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.l)] if policy.l is not None and policy.l_diversity == "distinct" else []

    def to_policy(self) -> dict:
        return {"l": self.l, "l_diversity": "distinct", **_sensitive(self)}

    def predicate(self) -> exp.Expr:
        return exp.GTE(this=col("distinct_s"), expression=lit(self.l))

    def class_ok(self, cls: dict) -> bool:
        return len([v for v, n in cls["s_counts"].items() if n > 0]) >= self.l

    def describe(self) -> dict:
        return {"model": self.name, "l": self.l}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_distinct", exp.Min(this=col("distinct_s")))]

    def describe_worst(self, v: dict) -> str:
        return f"the least diverse class has {v['min_distinct']} distinct sensitive values (l={self.l})"


class EntropyLDiversity(PrivacyModel):
    name = "entropy-l-diversity"
    needs = ClassNeeds(entropy_s=True)
    monotone_with_suppression = False  # {x, y} passes l=2, merged with {x x x x} it fails
    asks = ("l",)

    def __init__(self, l: float, column: str | None = None) -> None:
        self.l = float(_check_l(l))
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.l)] if policy.l is not None and policy.l_diversity == "entropy" else []

    def to_policy(self) -> dict:
        return {"l": self.l, "l_diversity": "entropy", **_sensitive(self)}

    @staticmethod
    def entropy() -> exp.Expr:
        n = as_double(col("cnt"))
        return exp.Sub(this=exp.Ln(this=n), expression=exp.Div(this=col("nlogn_s"), expression=n))

    def predicate(self) -> exp.Expr:
        return exp.GTE(this=self.entropy(), expression=lit(math.log(self.l) - EPS))

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_entropy", exp.Min(this=self.entropy()))]

    def describe_worst(self, v: dict) -> str:
        h = v["min_entropy"]
        return f"the least diverse class has entropy {h:.4g} = log({math.exp(h):.3g}) (l={self.l:g})" if h is not None else ""

    def class_ok(self, cls: dict) -> bool:
        n = sum(cls["s_counts"].values())
        h = -sum(c / n * math.log(c / n) for c in cls["s_counts"].values() if c)
        return h >= math.log(self.l) - EPS

    def describe(self) -> dict:
        return {"model": self.name, "l": self.l}
