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
from sqlanon.expr.atoms import as_double, col, if_, lit, sum_
from sqlanon.privacy.forms import h, sum_all
from sqlanon.privacy.figure import Figure, released
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns

EPS = 1e-9


def _distinct(needs: ClassNeeds) -> Columns:
    return [("distinct_s", exp.Count(this=exp.Star()))]


def _h_distinct(needs: ClassNeeds, q: list[float]) -> Columns:
    return [("distinct_s", sum_all([if_(exp.GT(this=col(f"h{j}"), expression=lit(0)), lit(1), lit(0)) for j in range(len(q))]))]


def _entropy(needs: ClassNeeds) -> Columns:
    return [("nlogn_s", sum_(exp.Mul(this=as_double(col("cnt")), expression=exp.Ln(this=as_double(col("cnt"))))))]


def _h_entropy(needs: ClassNeeds, q: list[float]) -> Columns:
    # h ln h, 0 for an absent value (ln of at least 1: no engine is asked for ln 0)
    at_least_1 = [if_(exp.GT(this=col(f"h{j}"), expression=lit(1)), h(j), lit(1.0)) for j in range(len(q))]
    return [("nlogn_s", sum_all([exp.Mul(this=h(j), expression=exp.Ln(this=a)) for j, a in enumerate(at_least_1)]))]


#: ``distinct_s``: the distinct sensitive values of a class
DISTINCT_S = Aggregate("distinct_s", value=_distinct, histogram=_h_distinct)
#: ``nlogn_s``: ``sum n_s ln n_s`` over a class's sensitive values (its entropy is ``ln n - nlogn_s / n``)
ENTROPY_S = Aggregate("entropy_s", value=_entropy, histogram=_h_entropy)

SENSITIVE_COLUMN = PolicyKey("sensitive_column", str, help="The sensitive attribute of l-diversity and t-closeness.")
L = PolicyKey("l", float, help="l of l-diversity on --sensitive-column.", schema={"exclusiveMinimum": 0})
VARIANT = PolicyKey("l_diversity", str, "distinct", choices=("distinct", "entropy"))


class _DistinctFigure(Figure):
    """The fewest distinct sensitive values of a released class."""

    def needs(self, opts: dict) -> ClassNeeds:
        return DistinctLDiversity(int(opts["l"])).needs

    def aggregates(self, stats, not_star: exp.Expr, opts: dict) -> list[tuple[str, exp.Expr]]:
        return [(self.out, exp.Min(this=released(not_star, col("distinct_s"))))] if stats.has_s and stats.needs.distinct_s else []


class _EntropyFigure(Figure):
    """The smallest ``exp`` of a released class's sensitive entropy (its entropy l)."""

    def needs(self, opts: dict) -> ClassNeeds:
        return EntropyLDiversity(1).needs

    def aggregates(self, stats, not_star: exp.Expr, opts: dict) -> list[tuple[str, exp.Expr]]:
        if not (stats.has_s and stats.needs.entropy_s):
            return []
        ent = exp.Exp(this=exp.Sub(this=exp.Ln(this=exp.Cast(this=col("cnt"), to=exp.DataType.build("DOUBLE"))), expression=exp.Div(this=col("nlogn_s"), expression=col("cnt"))))
        return [(self.out, exp.Min(this=released(not_star, ent)))]


def _check_l(l) -> float:
    if l < 1:
        raise ConfigError(f"l must be >= 1, got {l!r}")
    return l


def _sensitive(m) -> dict:
    return {"sensitive_column": m.column} if m.column else {}


class DistinctLDiversity(PrivacyModel):
    name = "distinct-l-diversity"
    aggregates = (DISTINCT_S,)
    needs = ClassNeeds(DISTINCT_S)
    policy_keys = (L, VARIANT, SENSITIVE_COLUMN)
    asks = ("l",)
    example = {"l": 2}
    figure = _DistinctFigure(("l", "sensitive_column"), "l", "l_distinct", sensitive_figure=True, on_sensitive=ClassNeeds(DISTINCT_S))

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
    aggregates = (ENTROPY_S,)
    needs = ClassNeeds(ENTROPY_S)
    monotone_with_suppression = False  # {x, y} passes l=2, merged with {x x x x} it fails
    policy_keys = (L, VARIANT, SENSITIVE_COLUMN)
    asks = ("l",)
    example = {"l": 1.5, "l_diversity": "entropy"}
    figure = _EntropyFigure(("l", "sensitive_column"), "l", "l_entropy", sensitive_figure=True, on_sensitive=ClassNeeds(ENTROPY_S))

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
