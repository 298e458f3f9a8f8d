"""Entropy l-diversity with the Grassberger estimator, as ARX's
``EntropyLDiversity(attribute, l, EntropyEstimator.GRASSBERGER)``: in every class, the entropy of
its sensitive values estimated by Grassberger ("Entropy Estimates from Insufficient Samplings",
2003/2008),

``H = ln N - (1/N) * sum_i n_i G(n_i)``,  ``G(n) = psi(n) + 1/2 (-1)^n (psi((n+1)/2) - psi(n/2))``

(``N`` the class's rows, ``n_i`` its rows with the i-th sensitive value, ``psi`` the digamma
function), is at least ``ln l``, and (as ARX checks first) the class holds at least ``ceil(l)``
distinct values: the estimate of a class of one row is ``-G(1) = 1.27`` nats, which alone would
pass l = 3. The plain (Shannon) estimate ``ln N - (1/N) sum n_i ln n_i`` is
biased low on small classes; Grassberger's corrects it.

``psi`` is computed the same way in SQL and in the Python twin, with the exact recurrence
``psi(x) = psi(x + 6) - sum_{j=0..5} 1/(x + j)`` and the asymptotic expansion
``psi(y) ~ ln y - 1/(2y) - 1/(12y^2) + 1/(120y^4) - 1/(252y^6)`` at ``y = x + 6 >= 6.5``
(about 1e-9 at x = 0.5, less above), so no engine needs a digamma function. Per class the aggregate is
``ngn_s = sum n_i G(n_i)`` over its per-value rows, beside ``distinct_s``.

Not monotone, even without suppression (the estimate is not concave under merging classes): the
lattice searches then check nodes without predictive tagging.

Policy keys: ``l_diversity: entropy`` with ``l_estimator: grassberger``, ``l`` and
``sensitive_column`` (CLI ``--l-diversity entropy --l-estimator grassberger``); it stands in for
the Shannon entropy l-diversity those keys would ask without the estimator.

>>> round(psi(1.0), 7), round(psi(0.5), 7)  # -gamma, -gamma - 2 ln 2 (to about 1e-9)
(-0.5772157, -1.96351)
>>> m = GrassbergerLDiversity(2)
>>> m.class_ok({"s_counts": {"a": 1, "b": 1}}), m.class_ok({"s_counts": {"a": 9, "b": 1}})
(True, False)
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import as_double, col, if_, lit, sum_
from sqlanon.privacy.base import PrivacyModel
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import DISTINCT_S, L, SENSITIVE_COLUMN, VARIANT
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns

EPS = 1e-9
#: the recurrence's steps before the asymptotic expansion
SHIFT = 6


def _asym(y: float) -> float:
    return math.log(y) - 1 / (2 * y) - 1 / (12 * y**2) + 1 / (120 * y**4) - 1 / (252 * y**6)


def psi(x: float) -> float:
    """The digamma function for ``x > 0``, as the SQL computes it."""
    return _asym(x + SHIFT) - sum(1 / (x + j) for j in range(SHIFT))


def grassberger_g(n: int) -> float:
    """``G(n) = psi(n) + 1/2 (-1)^n (psi((n+1)/2) - psi(n/2))``."""
    return psi(n) + 0.5 * (1 if n % 2 == 0 else -1) * (psi((n + 1) / 2) - psi(n / 2))


def _sql_psi(x: exp.Expr) -> exp.Expr:
    y = exp.Paren(this=exp.Add(this=x.copy(), expression=lit(float(SHIFT))))

    def inverse(c: float, power: int) -> exp.Expr:
        return exp.Div(this=lit(1.0), expression=exp.Paren(this=exp.Mul(this=lit(c), expression=exp.Pow(this=y.copy(), expression=lit(power)))))

    out: exp.Expr = exp.Sub(this=exp.Ln(this=y.copy()), expression=exp.Div(this=lit(1.0), expression=exp.Paren(this=exp.Mul(this=lit(2.0), expression=y.copy()))))
    out = exp.Sub(this=out, expression=inverse(12.0, 2))
    out = exp.Add(this=out, expression=inverse(120.0, 4))
    out = exp.Sub(this=out, expression=inverse(252.0, 6))
    for j in range(SHIFT):
        out = exp.Sub(this=out, expression=exp.Div(this=lit(1.0), expression=exp.Paren(this=exp.Add(this=x.copy(), expression=lit(float(j))))))
    return exp.Paren(this=out)


def _sql_g(n: exp.Expr) -> exp.Expr:
    sign = if_(exp.EQ(this=exp.Mod(this=col("cnt"), expression=lit(2)), expression=lit(0)), lit(1.0), lit(-1.0))
    half = exp.Div(this=exp.Paren(this=exp.Add(this=n.copy(), expression=lit(1.0))), expression=lit(2.0))
    diff = exp.Paren(this=exp.Sub(this=_sql_psi(half), expression=_sql_psi(exp.Div(this=n.copy(), expression=lit(2.0)))))
    return exp.Add(this=_sql_psi(n), expression=exp.Mul(this=exp.Mul(this=lit(0.5), expression=sign), expression=diff))


def _ngn(needs: ClassNeeds) -> Columns:
    n = as_double(col("cnt"))
    return [("ngn_s", sum_(exp.Mul(this=n, expression=exp.Paren(this=_sql_g(n)))))]


#: ``ngn_s``: ``sum n_s G(n_s)`` over a class's sensitive values (per-value rows: ``cnt`` >= 1),
#: and ``distinct_s``: a class with fewer than ``ceil(l)`` values fails (as in ARX)
GRASSBERGER_S = Aggregate("grassberger_s", value=_ngn, with_names=(DISTINCT_S.name,))


class GrassbergerLDiversity(PrivacyModel):
    name = "grassberger-l-diversity"
    aggregates = (GRASSBERGER_S,)
    needs = ClassNeeds(GRASSBERGER_S)
    monotone_with_suppression = False
    monotone_with_generalization = False
    policy_keys = (
        L,
        VARIANT,
        PolicyKey("l_estimator", str, help="Entropy l-diversity's estimator: shannon (default) | grassberger (ARX EntropyEstimator).", choices=("shannon", "grassberger")),
        SENSITIVE_COLUMN,
    )
    asks = ("l_estimator",)
    example = {"l": 1.6, "l_diversity": "entropy", "l_estimator": "grassberger"}
    replaces = ("entropy-l-diversity",)
    label = "Grassberger entropy l-diversity"

    def __init__(self, l: float, column: str | None = None) -> None:
        if isinstance(l, bool) or not l >= 1 or not math.isfinite(l):
            raise ConfigError(f"l must be >= 1, got {l!r}")
        self.l = float(l)
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)

    @classmethod
    def validate_policy(cls, policy) -> None:
        if policy.l_estimator is not None and policy.l_diversity != "entropy":
            raise ConfigError("l_estimator is the estimator of entropy l-diversity: give --l-diversity entropy with it")
        if policy.l_estimator == "grassberger" and policy.l is None:
            raise ConfigError("entropy l-diversity with the Grassberger estimator needs --l")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.l)] if policy.l is not None and policy.l_diversity == "entropy" and policy.l_estimator == "grassberger" else []

    def to_policy(self) -> dict:
        return {"l": self.l, "l_diversity": "entropy", "l_estimator": "grassberger", **({"sensitive_column": self.column} if self.column else {})}

    @staticmethod
    def entropy() -> exp.Expr:
        n = as_double(col("cnt"))
        return exp.Sub(this=exp.Ln(this=n), expression=exp.Div(this=col("ngn_s"), expression=n))

    def predicate(self) -> exp.Expr:
        return exp.and_(
            exp.GTE(this=col("distinct_s"), expression=lit(math.ceil(self.l))),
            exp.GTE(this=self.entropy(), expression=lit(math.log(self.l) - EPS)),
        )

    def class_ok(self, cls: dict) -> bool:
        counts = [c for c in cls["s_counts"].values() if c > 0]
        n = sum(counts)
        h = math.log(n) - sum(c * grassberger_g(c) for c in counts) / n
        return len(counts) >= math.ceil(self.l) and h >= math.log(self.l) - EPS

    def describe(self) -> dict:
        return {"model": self.name, "l": self.l, "estimator": "grassberger"}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_entropy", exp.Min(this=self.entropy()))]

    def describe_worst(self, v: dict) -> str:
        h = v["min_entropy"]
        return f"the least diverse class has Grassberger entropy {h:.4g} = log({math.exp(h):.3g}) (l={self.l:g})" if h is not None else ""
