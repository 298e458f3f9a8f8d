"""t-closeness (Li, Li, Venkatasubramanian): the Earth Mover's Distance between a class's
sensitive distribution P and the table's Q is at most t.

* ``equal`` distance (categorical): ``EMD = 1/2 * sum |p_i - q_i|``;
* ``ordered`` distance (numeric, values sorted): ``EMD = 1/(m-1) * sum_i |sum_{j<=i} (p_j - q_j)|``;
* ``hierarchical`` distance (categorical with a hierarchy of height H; Li et al. 2007, Sec. 4.3):
  ``EMD = sum over inner nodes N of height(N)/H * min(pos_extra(N), neg_extra(N))``, where
  ``extra(N)`` is the sum of ``p_i - q_i`` over the leaves under N and ``pos_extra``/``neg_extra``
  add the positive / (absolute) negative extras of N's children.

Policy keys: ``t``, ``t_distance`` (``equal`` default, ``ordered``, ``hierarchical`` with
``t_hierarchy``: a hierarchy of the sensitive column) and ``sensitive_column``.
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel, sensitive_distribution
from sqlanon.expr.atoms import as_double, col, lit, sum_
from sqlanon.privacy.forms import h, h_share, share, sum_all
from sqlanon.privacy.figure import Figure, released
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import SENSITIVE_COLUMN
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns

EPS = 1e-9


def _emd_equal(needs: ClassNeeds) -> Columns:
    # 0.5 * (sum over present s of (|p - q| - q) + 1): absent values contribute q each
    term = exp.Sub(this=exp.Abs(this=exp.Sub(this=share(), expression=col("q"))), expression=col("q"))
    return [("emd_equal", exp.Mul(this=lit(0.5), expression=exp.Paren(this=exp.Add(this=sum_(term), expression=lit(1)))))]


def _h_emd_equal(needs: ClassNeeds, q: list[float]) -> Columns:
    # 0.5 * sum over the domain of |p - q| (an absent value's p is 0)
    terms = [exp.Abs(this=exp.Sub(this=h_share(j), expression=lit(qj))) for j, qj in enumerate(q)]
    return [("emd_equal", exp.Mul(this=lit(0.5), expression=exp.Paren(this=sum_all(terms))))]


def _h_emd_ordered(needs: ClassNeeds, q: list[float]) -> Columns:
    # sum over ranks i < m of |sum_{j <= i} (p_j - q_j)| / (m - 1)
    m = len(q)
    terms, cum_q = [], 0.0
    for i in range(m - 1):
        cum_q += q[i]
        cum_p = exp.Div(this=exp.Paren(this=sum_all([h(j) for j in range(i + 1)])), expression=as_double(col("cnt")))
        terms.append(exp.Abs(this=exp.Sub(this=cum_p, expression=lit(cum_q))))
    return [("emd_ordered", exp.Div(this=exp.Paren(this=sum_all(terms)), expression=lit(float(max(m - 1, 1)))))]


#: ``emd_equal``: the equal-distance EMD of a class to the table
EMD_EQUAL = Aggregate("emd_equal", value=_emd_equal, histogram=_h_emd_equal, shares=True)
#: ``emd_ordered``: over per-value rows, CTEs of its own (:func:`sqlanon.stats.models.ordered_emd_ctes`)
EMD_ORDERED = Aggregate("emd_ordered", histogram=_h_emd_ordered)
#: ``emd_hier``: CTEs of its own with the sensitive hierarchy (:func:`sqlanon.stats.models.hierarchical_emd_ctes`)
EMD_HIERARCHICAL = Aggregate("emd_hierarchical")
#: the aggregate of each distance
DISTANCES = {"equal": EMD_EQUAL, "ordered": EMD_ORDERED, "hierarchical": EMD_HIERARCHICAL}


def emd_equal(p: dict, q: dict) -> float:
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)


def emd_hierarchical(p: dict, q: dict, rows: list[list[str]]) -> float:
    """``rows``: the sensitive hierarchy, ``[leaf, level1, ..., root]`` per leaf."""
    height = len(rows[0]) - 1
    if height < 1:
        return 0.0
    total = 0.0
    for level in range(height):
        extra: dict[tuple, float] = {}  # (parent, child) at this level -> extra(child)
        for r in rows:
            key = (r[level + 1], r[level])
            extra[key] = extra.get(key, 0.0) + p.get(r[0], 0.0) - q.get(r[0], 0.0)
        pos: dict[str, float] = {}
        neg: dict[str, float] = {}
        for (parent, _), e in extra.items():
            pos[parent] = pos.get(parent, 0.0) + max(e, 0.0)
            neg[parent] = neg.get(parent, 0.0) + max(-e, 0.0)
        total += (level + 1) / height * sum(min(pos[n], neg[n]) for n in pos)
    return total


def emd_ordered(p: dict, q: dict, order: list) -> float:
    m = len(order)
    if m <= 1:
        return 0.0
    cum, total = 0.0, 0.0
    for v in order[:-1]:
        cum += p.get(v, 0.0) - q.get(v, 0.0)
        total += abs(cum)
    return total / (m - 1)


class _TFigure(Figure):
    """The farthest released class from the table's sensitive distribution (equal or ordered
    distance; hierarchical t needs the sensitive hierarchy, and is not measured)."""

    def needs(self, opts: dict) -> ClassNeeds:
        return TCloseness(opts["t"], opts.get("t_distance") or "equal").needs

    def aggregates(self, stats, not_star: exp.Expr, opts: dict) -> list[tuple[str, exp.Expr]]:
        if not stats.has_s:
            return []
        return [(f"t_{d}", exp.Max(this=released(not_star, col(f"emd_{d}")))) for d, on in (("equal", stats.needs.emd_equal), ("ordered", stats.needs.emd_ordered)) if on]

    def write(self, out: dict, e: dict, stats, opts: dict, ok: bool | None) -> None:
        for key in ("t_equal", "t_ordered"):
            if key in e:
                out["t"] = e[key]

    def from_release(self, stored: dict) -> dict:
        return {"t": stored.get("t"), "t_distance": stored.get("distance")} if stored.get("distance") in ("equal", "ordered") else {}

    def required(self, opts: dict) -> str:
        return f"t={opts['t']} ({opts.get('t_distance') or 'equal'})"


class TCloseness(PrivacyModel):
    name = "t-closeness"
    monotone_with_suppression = False  # a close class merged with a far one can be far

    COLUMNS = {"equal": "emd_equal", "ordered": "emd_ordered", "hierarchical": "emd_hier"}
    #: the table's sensitive distribution and order (:meth:`bind`), for the Python twin
    global_dist: dict | None = None
    order: list | None = None
    aggregates = (EMD_EQUAL, EMD_ORDERED, EMD_HIERARCHICAL)
    policy_keys = (
        PolicyKey("t", float, help="t of t-closeness on --sensitive-column.", schema={"minimum": 0}),
        PolicyKey("t_distance", str, "equal", help="equal (categorical) | ordered (numeric) | hierarchical (with --t-hierarchy)."),
        PolicyKey("t_hierarchy", str, help="Hierarchy of --sensitive-column for --t-distance hierarchical."),
        SENSITIVE_COLUMN,
    )
    asks = ("t",)
    example = {"t": 0.4}
    figure = _TFigure(("t", "t_distance", "sensitive_column"), "t", "t", at_most=True, sensitive_figure=True,
                      flag_help={"t_distance": "With --t: equal | ordered (default equal)."})
    label = "hierarchical t-closeness"

    @classmethod
    def validate_policy(cls, policy) -> None:
        hierarchical = policy.t_distance == "hierarchical"
        if policy.t_hierarchy and not hierarchical:
            raise ConfigError("t_hierarchy is the sensitive hierarchy of hierarchical t-closeness: give --t-distance hierarchical with it")
        if hierarchical and (policy.t is None or not policy.t_hierarchy):
            raise ConfigError("hierarchical t-closeness needs --t and --t-hierarchy (a hierarchy of the sensitive column)")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        if policy.t is None:
            return []
        if policy.t_distance != "hierarchical":
            return [cls(policy.t, policy.t_distance)]
        if not policy.sensitive_column:
            raise ConfigError("hierarchical t-closeness needs --sensitive-column")
        return [cls(policy.t, "hierarchical", hierarchy=session.hierarchy(policy.t_hierarchy, policy.sensitive_column))]

    def statistics_extras(self, policy, session) -> dict:
        return {"sensitive_hierarchy": self.hierarchy} if self.distance == "hierarchical" else {}

    def to_policy(self) -> dict:
        out = {"t": self.t, "t_distance": self.distance, **({"sensitive_column": self.column} if self.column else {})}
        if self.hierarchy is not None:  # hierarchical: the sensitive column's hierarchy spec
            out["t_hierarchy"] = self.hierarchy
        return out

    def bind(self, stats) -> None:
        """The table's sensitive distribution (the Python twin's Q)."""
        self.global_dist = sensitive_distribution(stats)
        self.order = [v for v, _ in stats.sensitive_domain]

    def __init__(self, t: float, distance: str = "equal", hierarchy=None, column: str | None = None) -> None:
        self.column = column  # the sensitive column (API objects; the policy's sensitive_column)
        if not 0 <= t <= 1:
            raise ConfigError(f"t must lie in [0, 1], got {t!r}")
        if distance not in self.COLUMNS:
            raise ConfigError(f"t-closeness distance must be equal, ordered or hierarchical, got {distance!r}")
        if distance == "hierarchical" and hierarchy is None:
            raise ConfigError("t-closeness with the hierarchical distance needs a hierarchy of the sensitive column (t_hierarchy / --t-hierarchy)")
        self.t = float(t)
        self.distance = distance
        self.hierarchy = hierarchy  # hierarchical: the sensitive column's Hierarchy
        self.needs = ClassNeeds(DISTANCES[distance])
        self.global_dist = None
        self.order = None

    def predicate(self) -> exp.Expr:
        return exp.LTE(this=col(self.COLUMNS[self.distance]), expression=lit(self.t + EPS))

    def class_ok(self, cls: dict) -> bool:
        n = sum(cls["s_counts"].values())
        p = {v: c / n for v, c in cls["s_counts"].items()}
        assert self.global_dist is not None and self.order is not None, "bind the table's statistics before checking in Python"
        if self.distance == "equal":
            return emd_equal(p, self.global_dist) <= self.t + EPS
        if self.distance == "hierarchical":
            return emd_hierarchical(p, self.global_dist, self.hierarchy.rows) <= self.t + EPS
        return emd_ordered(p, self.global_dist, self.order) <= self.t + EPS

    def describe(self) -> dict:
        return {"model": self.name, "t": self.t, "distance": self.distance}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("max_distance", exp.Max(this=col(self.COLUMNS[self.distance])))]

    def describe_worst(self, v: dict) -> str:
        d = v["max_distance"]
        return f"the farthest class is at distance {d:.4g} (t={self.t:g})" if d is not None else ""
