"""k-anonymity: every released class holds at least k rows."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import col
from sqlanon.expr.atoms import lit


class KAnonymity(PrivacyModel):
    name = "k-anonymity"

    def __init__(self, k: int) -> None:
        if int(k) != k or k < 1:
            raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
        self.k = int(k)

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
