"""Average re-identification risk, as ARX's ``AverageReidentificationRisk``: the average
prosecutor risk of the release, ``released classes / released rows`` (one over the average class
size), is at most ``r``. A table-level model: no class passes or fails alone.

What ARX does with it (``RiskBasedCriterion.enforce`` over ``HashGroupifyDistribution``): the
class-level models first suppress their failing classes; the released classes are then sorted by
size (smallest first) and the fewest of them are suppressed, smallest first, until the rest meets
the threshold (suppressing the smallest class never lowers the average class size, so a binary
search over how many finds it); the transformation is then anonymous when every suppressed row fits
the suppression limit. Here the same, in one expression over the class table (:meth:`AverageRisk.wrap`,
window functions over the classes, :data:`~sqlanon.privacy.needs.ClassNeeds.ranked`): with ``C``
and ``R`` the classes and rows the class-level models release, and a released class the ``i``-th
smallest (``cn`` classes and ``cr`` rows up to and including it), it is released iff
``(C - cn + 1) / (R - cr + cnt) <= r``: the classes before it do not suffice. Ties of size are
broken by the class's codes (ARX breaks them by its first row, or by information loss).

Monotone with suppression when the class-level models are (as ARX declares it): merging classes
never raises the risk of the best suppression. A lattice-search model: the lattice batch statements
leave it to the one-node statement, and the genetic search refuses it.

Policy key: ``average_risk: R`` (0 < R <= 1; CLI ``--average-risk R``).

>>> m = AverageRisk(0.2)
>>> m.refine([{"cnt": 1}, {"cnt": 1}, {"cnt": 10}], [True, True, True])
[False, True, True]
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import as_double, col, if_, lit, sum_
from sqlanon.privacy.base import PrivacyModel
from sqlanon.privacy.figure import TwinFigure
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import RANKED, ClassNeeds

EPS = 1e-12


class _RiskFigure(TwinFigure):
    """Released classes over released rows (the average prosecutor risk)."""

    def validate(self, opts: dict) -> None:
        r = opts.get("average_risk")
        if r is not None and not 0 < r <= 1:
            raise ConfigError(f"--average-risk must lie in (0, 1], got {r}")

    def twin(self, opts: dict) -> PrivacyModel:
        return AverageRisk(opts["average_risk"])

    def write(self, out: dict, e: dict, stats, opts: dict, ok: bool | None) -> None:
        rows = stats.rows - out["suppressed_rows"]
        out["average_risk"] = out["classes"] / rows if rows else None
        out["average_risk_ok"] = out["average_risk"] is not None and bool(ok)


class AverageRisk(PrivacyModel):
    name = "average-risk"
    aggregates = (RANKED,)
    needs = ClassNeeds(RANKED)  # its window needs one node per statement (the genetic batch holds many)
    table_level = True
    policy_keys = (PolicyKey("average_risk", float, help="Highest average re-identification risk (released classes / released rows) of the release (ARX AverageReidentificationRisk)."),)
    asks = ("average_risk",)
    example = {"average_risk": 0.3}
    figure = _RiskFigure(("average_risk",), "r", "average_risk",
                         flag_help={"average_risk": "Report released classes / released rows and whether it is at most R."})
    replaces_k = True
    label = "average re-identification risk"

    def __init__(self, r: float) -> None:
        if isinstance(r, bool) or not 0 < r <= 1 or not math.isfinite(r):
            raise ConfigError(f"average_risk must lie in (0, 1], got {r!r}")
        self.r = float(r)
        self.keys: list[str] = []  # the class key columns, tie-breaking the order (bind)

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.average_risk)] if policy.average_risk is not None else []

    def to_policy(self) -> dict:
        return {"average_risk": self.r}

    def bind(self, stats) -> None:
        self.keys = list(stats.qnames)

    def wrap(self, ok: exp.Expr) -> exp.Expr:
        one = if_(ok.copy(), lit(1), lit(0))
        rows = if_(ok.copy(), col("cnt"), lit(0))
        order = exp.Order(expressions=[exp.Ordered(this=col("cnt")), *[exp.Ordered(this=col(k)) for k in self.keys]])
        upto = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW")

        def total(e: exp.Expr) -> exp.Expr:
            return exp.Window(this=sum_(e), partition_by=[])

        def running(e: exp.Expr) -> exp.Expr:
            return exp.Window(this=sum_(e), order=order.copy(), spec=upto.copy())

        classes_left = exp.Add(this=exp.Sub(this=total(one), expression=running(one.copy())), expression=lit(1))
        rows_left = exp.Add(this=exp.Sub(this=total(rows), expression=running(rows.copy())), expression=col("cnt"))
        risk = exp.Div(this=as_double(classes_left), expression=as_double(rows_left))
        return exp.and_(exp.Paren(this=ok), exp.LTE(this=risk, expression=lit(self.r + EPS)))

    def refine(self, classes: list[dict], ok: list[bool]) -> list[bool]:
        released = sorted((i for i, good in enumerate(ok) if good), key=lambda i: (classes[i]["cnt"], tuple(classes[i].get("key", ()))))
        n_classes, n_rows = len(released), sum(classes[i]["cnt"] for i in released)
        out = list(ok)
        for i in released:
            if n_classes / n_rows <= self.r + EPS:
                break
            out[i] = False
            n_classes, n_rows = n_classes - 1, n_rows - classes[i]["cnt"]
        return out

    def class_ok(self, cls: dict) -> bool:
        return True  # table-level: decided by refine()

    def describe(self) -> dict:
        return {"model": self.name, "r": self.r}
