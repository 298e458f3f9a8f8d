"""k-anonymity: every released class holds at least k rows."""

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import col, lit
from sqlanon.privacy.keys import PolicyKey


class KAnonymity(PrivacyModel):
    name = "k-anonymity"
    policy_keys = (PolicyKey("k", int, help="k of k-anonymity.", schema={"minimum": 1}),)
    asks = ("k",)
    example = {"k": 2}

    def __init__(self, k: int) -> None:
        if int(k) != k or k < 1:
            raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
        self.k = int(k)

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        # top-down's (X,Y)-privacy lives on the join of releases: no k-anonymity of T1 on top;
        # another model alone (k-map, ...) leaves k at 1, which every class meets
        return [] if policy.search == "top-down" or policy.k is None else [cls(policy.k)]

    def to_policy(self) -> dict:
        return {"k": self.k}

    def predicate(self) -> exp.Expr:
        return exp.GTE(this=col("cnt"), expression=lit(self.k))

    def class_ok(self, cls: dict) -> bool:
        return cls["cnt"] >= self.k

    def describe(self) -> dict:
        return {"model": self.name, "k": self.k}

    def worst(self) -> list[tuple[str, exp.Expr]]:
        return [("min_class", exp.Min(this=col("cnt")))]

    def describe_worst(self, v: dict) -> str:
        return f"the smallest class has {v['min_class']} rows (k={self.k})"
