"""Sample uniqueness, as ARX's ``SampleUniqueness(threshold)``: the share of the table's records
that are unique in the release (alone in their class) is at most the threshold. A table-level
model: no class passes or fails alone.

What ARX does with it (``RiskBasedCriterion.enforce`` over ``HashGroupifyDistribution``): the
class-level models first suppress their failing classes; the released classes are then sorted by
size (smallest first) and suppressed, smallest first, until the rest meets the threshold. Only
classes of one record count, so that suppresses the fewest of them: with ``U`` the classes of one
record the class-level models release and ``N`` the table's records, ``U - floor(threshold * N)``
of them (none when that is not positive). Here the same, in one expression over the class table
(:meth:`SampleUniqueness.wrap`: window functions over the classes, the aggregate
:data:`~sqlanon.privacy.needs.RANKED`): a released class of one record, the ``i``-th in the order
of the class codes, stays released iff ``U - i < floor(threshold * N)`` (the ones after it do not
exceed the allowance). Ties are broken by the class's codes (ARX breaks them by its first row).
Unlike ARX's distribution, the suppressed records are not counted as one class of their own (a
single suppressed record is no unique of the release: it is masked).

Monotone with suppression when the class-level models are (merging classes never adds a class of
one record). Asked alone it needs no k. A lattice-search model: the lattice batch statements leave
it to the one-node statement.

Policy key: ``sample_uniqueness: S`` (0 <= S <= 1; CLI ``--sample-uniqueness S``).

>>> m = SampleUniqueness(0.1)
>>> m.rows = 12  # bound to a table of 12 records: one unique record allowed
>>> m.refine([{"cnt": 1, "key": (0,)}, {"cnt": 1, "key": (1,)}, {"cnt": 10, "key": (2,)}], [True, True, True])
[False, True, True]
"""

from __future__ import annotations

import math

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, if_, lit, sum_
from sqlanon.privacy.base import PrivacyModel
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import RANKED, ClassNeeds


class SampleUniqueness(PrivacyModel):
    name = "sample-uniqueness"
    aggregates = (RANKED,)
    needs = ClassNeeds(RANKED)  # its window needs one node per statement
    table_level = True
    policy_keys = (PolicyKey("sample_uniqueness", float, help="Highest share of the records that are unique in the release, alone in their class (ARX SampleUniqueness).", schema={"minimum": 0, "maximum": 1}),)
    asks = ("sample_uniqueness",)
    example = {"sample_uniqueness": 0.05}
    replaces_k = True
    label = "sample uniqueness"

    def __init__(self, threshold: float) -> None:
        if isinstance(threshold, bool) or not 0 <= threshold <= 1 or not math.isfinite(threshold):
            raise ConfigError(f"sample_uniqueness must lie in [0, 1], got {threshold!r}")
        self.threshold = float(threshold)
        self.keys: list[str] = []  # the class key columns, ordering the classes of one (bind)
        self.rows = 0  # the table's records (bind)

    @classmethod
    def from_policy(cls, policy, session=None) -> list[PrivacyModel]:
        return [cls(policy.sample_uniqueness)] if policy.sample_uniqueness is not None else []

    def to_policy(self) -> dict:
        return {"sample_uniqueness": self.threshold}

    def bind(self, stats) -> None:
        self.keys = list(stats.qnames)
        self.rows = stats.rows + stats.withheld

    @property
    def allowed(self) -> int:
        """The unique records the release may hold: ``floor(threshold * N)`` (a hair of tolerance)."""
        return math.floor(self.threshold * self.rows + 1e-9)

    def wrap(self, ok: exp.Expr) -> exp.Expr:
        unique = if_(exp.and_(exp.Paren(this=ok.copy()), exp.EQ(this=col("cnt"), expression=lit(1))), lit(1), lit(0))
        order = exp.Order(expressions=[exp.Ordered(this=col("cnt")), *[exp.Ordered(this=col(k)) for k in self.keys]])
        upto = exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW")
        total = exp.Window(this=sum_(unique), partition_by=[])
        running = exp.Window(this=sum_(unique.copy()), order=order, spec=upto)
        after = exp.Sub(this=total, expression=running)
        kept = exp.or_(exp.GT(this=col("cnt"), expression=lit(1)), exp.LT(this=after, expression=lit(self.allowed)))
        return exp.and_(exp.Paren(this=ok), exp.Paren(this=kept))

    def refine(self, classes: list[dict], ok: list[bool]) -> list[bool]:
        uniques = sorted((i for i, good in enumerate(ok) if good and classes[i]["cnt"] == 1), key=lambda i: tuple(classes[i].get("key", ())))
        out = list(ok)
        for i in uniques[: max(len(uniques) - self.allowed, 0)]:
            out[i] = False
        return out

    def class_ok(self, cls: dict) -> bool:
        return True  # table-level: decided by refine()

    def describe(self) -> dict:
        return {"model": self.name, "threshold": self.threshold}
