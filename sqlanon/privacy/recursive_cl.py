"""Recursive (c,l)-diversity (Machanavajjhala, Kifer, Gehrke, Venkitasubramaniam, "l-Diversity:
Privacy Beyond k-Anonymity", TKDD 2007, Definition 4.3): in every class, with its sensitive
values' counts sorted ``r_1 >= r_2 >= ... >= r_m``, ``r_1 < c * (r_l + r_{l+1} + ... + r_m)``.
A class with fewer than l distinct values fails (its tail is empty). The same definition as
ARX's ``RecursiveCLDiversity``.

Monotone without suppression (merging classes that satisfy it keeps it), not with a budget:
``{x, y, z}`` passes c=2, l=2, merged with ``{x x x x x x}`` it fails.

Policy keys: ``l_diversity: recursive`` with ``c``, ``l`` and ``sensitive_column``.
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import as_double, col, if_, lit, sum_
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import L, SENSITIVE_COLUMN
from sqlanon.privacy.needs import Aggregate, ClassNeeds, Columns


def _recursive(needs: ClassNeeds) -> Columns:
    top = sum_(if_(exp.EQ(this=col("rn"), expression=lit(1)), col("cnt"), lit(0)))
    tail = sum_(if_(exp.GTE(this=col("rn"), expression=lit(int(needs.recursive_l))), col("cnt"), lit(0)))
    return [("top_s", top), ("tail_s", tail)]


#: ``top_s`` (r1) and ``tail_s`` (r_l + ... + r_m) of a class's values ranked by count
RECURSIVE = Aggregate("recursive_l", value=_recursive, ranked=True)


class RecursiveCLDiversity(PrivacyModel):
    name = "recursive-cl-diversity"
    monotone_with_suppression = False
    aggregates = (RECURSIVE,)
    policy_keys = (
        L,
        PolicyKey("l_diversity", str, "distinct", choices=("recursive",)),
        PolicyKey("c", float, help="c of recursive (c,l)-diversity (with --l-diversity recursive --l L)."),
        SENSITIVE_COLUMN,
    )
    asks = ("c",)
    example = {"l": 2, "c": 3.0, "l_diversity": "recursive"}
    label = "recursive (c,l)-diversity"

    @classmethod
    def validate_policy(cls, policy) -> None:
        recursive = policy.l_diversity == "recursive"
        if policy.c is not None and not recursive:
            raise ConfigError("c is the c of recursive (c,l)-diversity: give --l-diversity recursive with it")
        if recursive and (policy.c is None or policy.l is None):
            raise ConfigError("recursive (c,l)-diversity needs both --c and --l")

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.c, policy.l)] if policy.l_diversity == "recursive" else []

    def to_policy(self) -> dict:
        return {"l": self.l, "c": self.c, "l_diversity": "recursive"}

    def __init__(self, c: float, l: int) -> None:
        if isinstance(l, bool) or int(l) != l or l < 2:
            raise ConfigError(f"recursive (c,l)-diversity needs a whole l >= 2, got {l!r}")
        if not c > 0:
            raise ConfigError(f"recursive (c,l)-diversity needs c > 0, got {c!r}")
        self.c = float(c)
        self.l = int(l)
        self.needs = ClassNeeds(recursive_l=self.l)

    def predicate(self) -> exp.Expr:
        rhs = exp.Mul(this=lit(self.c), expression=as_double(col("tail_s")))
        return exp.LT(this=as_double(col("top_s")), expression=rhs)

    def class_ok(self, cls: dict) -> bool:
        r = sorted((n for n in cls["s_counts"].values() if n > 0), reverse=True)
        return len(r) >= self.l and r[0] < self.c * sum(r[self.l - 1 :])

    def describe(self) -> dict:
        return {"model": self.name, "c": self.c, "l": self.l}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        # the largest r_1 / (r_l + ... + r_m) over classes (NULL-free: an empty tail counts as 0)
        ratio = exp.Div(this=as_double(col("top_s")), expression=exp.Paren(this=exp.Add(this=as_double(col("tail_s")), expression=lit(1e-300))))
        return [("max_ratio", exp.Max(this=ratio)), ("empty_tail", exp.Sum(this=exp.Case().when(exp.EQ(this=col("tail_s"), expression=lit(0)), lit(1)).else_(lit(0))))]

    def describe_worst(self, v: dict) -> str:
        if v.get("empty_tail"):
            return f"{v['empty_tail']} class(es) have fewer than l={self.l} distinct sensitive values"
        r = v.get("max_ratio")
        return f"the worst class has r1 = {r:.4g} x (r_l + ... + r_m) (c={self.c:g}, l={self.l})" if r is not None else ""
