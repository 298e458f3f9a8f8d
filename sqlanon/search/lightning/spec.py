"""``--search lightning`` as the registry knows it: its options (the limits) and that it honours
every model (it evaluates nodes as the lattice does)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from sqlanon.search.options import SearchOptions, local_rows_field
from sqlanon.search.spec import SearchSpec


class LightningOptions(SearchOptions):
    """``--search lightning``: the time/step-limited heuristic lattice search (wide tables)."""

    model_config = ConfigDict(title="lightning search options")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds (default 30).")
    step_limit: int | None = Field(None, ge=1, description="Stop after this many node evaluations (default: none).")
    batch: int = Field(64, ge=1, description="Nodes evaluated by one statement.")
    stall: float | None = Field(None, gt=0, description="Stop early once the best node has not improved for as long as it took to find it and for this share of the limit (none: run to the limit).")
    local_rows: int = local_rows_field()


LIGHTNING = SearchSpec("lightning", "sqlanon.search.lightning.planner:search", LightningOptions, limits=("time_limit", "step_limit"), lattice=True)
