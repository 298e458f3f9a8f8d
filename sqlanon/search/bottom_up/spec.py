"""``--search bottom-up`` as the registry knows it: options, metric, the aggregates it honours."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from sqlanon.search.options import SearchOptions
from sqlanon.search.spec import SearchSpec

#: the class aggregates the flexible planners (bottom-up, top-down) compute: not the population
#: (k-map, delta-presence), the ranked values (recursive (c,l)-diversity), the hierarchical EMD
#: or the class table's ranks (average risk)
FLEXIBLE_HONOURS = frozenset({"distinct_s", "entropy_s", "emd_equal", "emd_ordered", "majority_y", "beta_likeness", "delta_disclosure"})


class BottomUpOptions(SearchOptions):
    """``--search bottom-up`` (Wang, Yu, Chakraborty)."""

    model_config = ConfigDict(title="bottom-up search options")
    trace: bool = Field(False, description="Keep and print every generalization step.")
    numeric_fanout: int = Field(2, ge=2, description="Children per node of the interval tree built for a numeric QI.")
    pruning: bool = Field(True, description="Skip candidates that cannot win (false: evaluate all; for tests).")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds, the vids included (none: no limit); the cheapest state within the budget so far is returned.")


BOTTOM_UP = SearchSpec(
    "bottom-up", "sqlanon.search.bottom_up.planner:run", BottomUpOptions,
    metrics=("lm",),  # without --class-column; with it, information_loss (IP = I(G)/P(G))
    measure="information_loss (the class entropy of --class-column lost per row)",
    honours=FLEXIBLE_HONOURS, per_value=True, limits=("time_limit",),
)
