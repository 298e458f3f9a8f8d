"""k-anonymity: every released class holds at least k rows."""

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel
from sqlanon.expr.atoms import col, lit
from sqlanon.privacy.figure import Figure, verdict
from sqlanon.privacy.keys import PolicyKey


class KFigure(Figure):
    """The smallest released class against k, and the suppressed rows against the budget."""

    def validate(self, opts: dict) -> None:
        k = opts.get("k")  # 0 is a value, not an absence: a check against it would say every table passes
        if k is not None and (isinstance(k, bool) or k < 1):
            raise ConfigError(f"k must be at least 1, got {k}")

    def write(self, out: dict, e: dict, stats, opts: dict, ok: bool | None) -> None:
        if opts.get("k") is not None:
            out["k_anonymous"] = out["k"] is not None and out["k"] >= opts["k"] and out["suppressed_rows"] <= opts["budget_rows"]

    def holds(self, out: dict, opts: dict) -> bool:
        return out.get("k") is not None and out["k"] >= opts["k"]

    def verdicts(self, name: str, out: dict, opts: dict, rows_budget: int) -> list[dict]:
        return [verdict(name, self.required(opts), out.get("k"), self.holds(out, opts)),
                verdict("suppression", f"<= {rows_budget:,} rows", out.get("suppressed_rows"), out.get("suppressed_rows", 0) <= rows_budget)]


class KAnonymity(PrivacyModel):
    name = "k-anonymity"
    policy_keys = (PolicyKey("k", int, help="k of k-anonymity.", schema={"minimum": 1}),)
    asks = ("k",)
    example = {"k": 2}
    figure = KFigure(("k", "max_suppression"), "k", "k", flag_help={"k": "Report whether the table is k-anonymous.",
                                                                    "max_suppression": "With --k: rows that may be suppressed (fraction)."})

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
