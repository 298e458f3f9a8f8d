"""delta-disclosure privacy (Brickell & Shmatikov, "The Cost of Privacy: Destruction of
Data-Mining Utility in Anonymized Data Publishing", KDD 2008), as ARX's ``DDisclosurePrivacy``:
for every class and every sensitive value ``s`` of the table, with ``p`` its share of the table and
``q`` its share of the class, ``|log2(q / p)| < delta``. As in ARX the logarithm is base 2.

A class that lacks a value of the table fails (``q = 0``: the log is infinite), as the paper's
definition reads ("for all s"). ARX's implementation checks only the values a class holds; that
variant is not monotone even without suppression (two passing classes with different values can
merge into a failing one), this one is: a merged class's ``q / p`` lies between its parts'.

Per class the aggregates are ``distinct_s`` and ``dd_max = max |ln(q / p)| / ln 2`` over the values
it holds; the predicate is ``distinct_s >= m`` (m: the table's distinct values, read at
:meth:`DeltaDisclosure.bind`) and ``dd_max < delta`` with a hair of margin (a ratio exactly
``2^delta`` fails, as in ARX). Not monotone with a budget.

Policy keys: ``delta_disclosure: D`` (D > 0) with ``sensitive_column`` (CLI ``--delta-disclosure D``).

>>> m = DeltaDisclosure(1.0)
>>> m.global_dist = {"a": 0.5, "b": 0.5}
>>> m.class_ok({"s_counts": {"a": 3, "b": 1}}), m.class_ok({"s_counts": {"a": 4}}), m.class_ok({"s_counts": {"a": 5, "b": 4}})
(False, False, True)
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, if_, lit, sum_
from sqlanon.privacy.base import PrivacyModel, sensitive_distribution
from sqlanon.privacy.forms import share
from sqlanon.privacy.figure import TwinFigure, released
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import DISTINCT_S, SENSITIVE_COLUMN
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns

EPS = 1e-9
LN2 = math.log(2.0)


def _delta_disclosure(needs: ClassNeeds) -> Columns:
    ratio = exp.Div(this=share(), expression=col("q"))
    return [("dd_max", exp.Div(this=exp.Max(this=exp.Abs(this=exp.Ln(this=ratio))), expression=lit(LN2)))]


#: ``dd_max``: the largest ``|log2(p/q)|`` of a class's values (and ``distinct_s``: a class missing a value fails)
DELTA_DISCLOSURE = Aggregate("delta_disclosure", value=_delta_disclosure, shares=True, with_names=(DISTINCT_S.name,))


class _DeltaFigure(TwinFigure):
    """The largest ``|log2(q/p)|`` of a released class (none when a class lacks a value: it is
    infinite there), and the classes lacking one."""

    def needs(self, opts: dict) -> ClassNeeds:
        return ClassNeeds(DELTA_DISCLOSURE)

    def aggregates(self, stats, not_star: exp.Expr, opts: dict) -> list[tuple[str, exp.Expr]]:
        lacking = if_(exp.LT(this=col("distinct_s"), expression=lit(len(stats.sensitive_domain))), lit(1), lit(0))
        return [("delta_max", exp.Max(this=released(not_star, col("dd_max")))), ("delta_lacking", sum_(released(not_star, lacking)))]

    def twin(self, opts: dict) -> PrivacyModel:
        return DeltaDisclosure(opts["delta_disclosure"])

    def write(self, out: dict, e: dict, stats, opts: dict, ok: bool | None) -> None:
        lacking = int(e["delta_lacking"] or 0)
        out["delta_disclosure"] = None if lacking else e["delta_max"]
        out["delta_disclosure_classes_lacking_values"] = lacking
        out["delta_disclosure_ok"] = ok


class DeltaDisclosure(PrivacyModel):
    name = "delta-disclosure"
    aggregates = (DELTA_DISCLOSURE,)
    needs = ClassNeeds(DELTA_DISCLOSURE)
    monotone_with_suppression = False
    policy_keys = (PolicyKey("delta_disclosure", float, help="delta of delta-disclosure privacy on --sensitive-column (ARX DDisclosurePrivacy, log base 2)."), SENSITIVE_COLUMN)
    asks = ("delta_disclosure",)
    example = {"delta_disclosure": 2.0}
    figure = _DeltaFigure(("delta_disclosure", "sensitive_column"), "delta", "delta_disclosure",
                          flag_help={"delta_disclosure": "Report the largest |log2(q/p)| and whether delta-disclosure privacy holds."})
    replaces_k = True
    global_dist: dict | None = None

    def __init__(self, delta: float, column: str | None = None) -> None:
        if isinstance(delta, bool) or not delta > 0 or not math.isfinite(delta):
            raise ConfigError(f"delta-disclosure privacy needs a finite delta > 0, got {delta!r}")
        self.delta = float(delta)
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)
        self.values = 0  # distinct sensitive values of the table (bind)

    @classmethod
    def validate_policy(cls, policy) -> None:
        cls.require_sensitive_column(policy, "delta_disclosure", "delta-disclosure privacy")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.delta_disclosure)] if policy.delta_disclosure is not None else []

    def to_policy(self) -> dict:
        return {"delta_disclosure": self.delta, **({"sensitive_column": self.column} if self.column else {})}

    def bind(self, stats) -> None:
        self.global_dist = sensitive_distribution(stats)
        self.values = len(stats.sensitive_domain)

    def predicate(self) -> exp.Expr:
        return exp.and_(
            exp.GTE(this=col("distinct_s"), expression=lit(self.values)),
            exp.LT(this=col("dd_max"), expression=lit(self.delta - EPS)),
        )

    def class_ok(self, cls: dict) -> bool:
        assert self.global_dist is not None, "bind() the model to the table first"
        n = sum(cls["s_counts"].values())
        held = {v: c for v, c in cls["s_counts"].items() if c > 0}
        if len(held) < len(self.global_dist):
            return False
        worst = max(abs(math.log(c / n / self.global_dist[v])) for v, c in held.items()) / math.log(2.0)
        return worst < self.delta - EPS

    def describe(self) -> dict:
        return {"model": self.name, "delta": self.delta}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        missing = exp.Sum(this=exp.Case().when(exp.LT(this=col("distinct_s"), expression=lit(self.values)), lit(1)).else_(lit(0)))
        return [("max_log_ratio", exp.Max(this=col("dd_max"))), ("missing_values", missing)]

    def describe_worst(self, v: dict) -> str:
        if v.get("missing_values"):
            return f"{v['missing_values']} class(es) lack a sensitive value of the table (delta-disclosure delta={self.delta:g})"
        r = v.get("max_log_ratio")
        return f"the worst class has |log2(q/p)| = {r:.4g} (delta={self.delta:g})" if r is not None else ""
