"""Enhanced beta-likeness (Cao & Karras, "Publishing Microdata with a Robust Privacy Guarantee",
VLDB 2012), as ARX's ``EnhancedBLikeness``: for every class and every sensitive value ``s`` in it,
with ``p`` its share of the table and ``q`` its share of the class,
``(q - p) / p <= min(beta, -ln p)`` (a value the class holds more often than the table may gain at
most ``beta`` relative to ``p``, and less when ``p`` is large; values held less often pass). Above,
``a`` held by the whole class gains 1 <= beta but more than ``-ln 0.5 = 0.69``.

Per class, the aggregates (:mod:`sqlanon.privacy.aggregates`) are the largest relative gain
``blike_max = max (q - p) / p`` and ``blike_ln = max ((q - p) / p + ln p)``; the predicate is
``blike_max <= beta`` and ``blike_ln <= 0`` (the two halves of the ``min``), with a hair of
tolerance. Monotone without suppression (a merged class's share of s lies between its parts'),
not with a budget.

Policy keys: ``beta_likeness: B`` (B > 0) with ``sensitive_column`` (CLI ``--beta-likeness B``).

>>> m = EnhancedBetaLikeness(1.0)
>>> m.global_dist = {"a": 0.5, "b": 0.5}
>>> m.class_ok({"s_counts": {"a": 4}}), m.class_ok({"s_counts": {"a": 3, "b": 1}})
(False, True)
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, lit
from sqlanon.privacy.base import PrivacyModel, sensitive_distribution
from sqlanon.privacy.forms import gain
from sqlanon.privacy.figure import TwinFigure, released
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import SENSITIVE_COLUMN
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns

EPS = 1e-9


def _beta(needs: ClassNeeds) -> Columns:
    return [("blike_max", exp.Max(this=gain())), ("blike_ln", exp.Max(this=exp.Add(this=gain(), expression=exp.Ln(this=col("q")))))]


#: ``blike_max`` and ``blike_ln``: the largest relative gain of a value in a class, and with ln q
BETA_LIKENESS = Aggregate("beta_likeness", value=_beta, shares=True)


class _BetaFigure(TwinFigure):
    """The largest relative gain of a sensitive value in a released class."""

    def needs(self, opts: dict) -> ClassNeeds:
        return ClassNeeds(BETA_LIKENESS)

    def aggregates(self, stats, not_star: exp.Expr, opts: dict) -> list[tuple[str, exp.Expr]]:
        return [("beta_gain", exp.Max(this=released(not_star, col("blike_max")))), ("beta_gain_ln", exp.Max(this=released(not_star, col("blike_ln"))))]

    def twin(self, opts: dict) -> PrivacyModel:
        return EnhancedBetaLikeness(opts["beta_likeness"])

    def write(self, out: dict, e: dict, stats, opts: dict, ok: bool | None) -> None:
        out["beta_likeness"] = e["beta_gain"]
        out["beta_likeness_ok"] = ok


class EnhancedBetaLikeness(PrivacyModel):
    name = "enhanced-beta-likeness"
    aggregates = (BETA_LIKENESS,)
    needs = ClassNeeds(BETA_LIKENESS)
    monotone_with_suppression = False  # a like class merged with an unlike one can be unlike
    policy_keys = (PolicyKey("beta_likeness", float, help="beta of enhanced beta-likeness on --sensitive-column (ARX EnhancedBLikeness)."), SENSITIVE_COLUMN)
    asks = ("beta_likeness",)
    example = {"beta_likeness": 1.0}
    figure = _BetaFigure(("beta_likeness", "sensitive_column"), "beta", "beta_likeness",
                         flag_help={"beta_likeness": "Report the largest relative gain of a sensitive value and whether enhanced beta-likeness holds."})
    replaces_k = True
    global_dist: dict | None = None

    def __init__(self, beta: float, column: str | None = None) -> None:
        if isinstance(beta, bool) or not beta > 0 or not math.isfinite(beta):
            raise ConfigError(f"beta-likeness needs a finite beta > 0, got {beta!r}")
        self.beta = float(beta)
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)

    @classmethod
    def validate_policy(cls, policy) -> None:
        cls.require_sensitive_column(policy, "beta_likeness", "beta-likeness")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.beta_likeness)] if policy.beta_likeness is not None else []

    def to_policy(self) -> dict:
        return {"beta_likeness": self.beta, **({"sensitive_column": self.column} if self.column else {})}

    def bind(self, stats) -> None:
        self.global_dist = sensitive_distribution(stats)

    def predicate(self) -> exp.Expr:
        return exp.and_(
            exp.LTE(this=col("blike_max"), expression=lit(self.beta + EPS)),
            exp.LTE(this=col("blike_ln"), expression=lit(EPS)),
        )

    def class_ok(self, cls: dict) -> bool:
        assert self.global_dist is not None, "bind() the model to the table first"
        n = sum(cls["s_counts"].values())
        for v, c in cls["s_counts"].items():
            if c <= 0:
                continue
            p = self.global_dist[v]
            gain = (c / n - p) / p
            if gain > self.beta + EPS or gain + math.log(p) > EPS:
                return False
        return True

    def describe(self) -> dict:
        return {"model": self.name, "beta": self.beta}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("max_gain", exp.Max(this=col("blike_max"))), ("max_gain_ln", exp.Max(this=col("blike_ln")))]

    def describe_worst(self, v: dict) -> str:
        if v.get("max_gain") is None:
            return ""
        return f"the least like class has a relative gain of {v['max_gain']:.4g} (beta={self.beta:g}; at most -ln p too: excess {max(v['max_gain_ln'], 0.0):.4g})"
