"""``--search genetic`` as the registry knows it: options, metrics, preflight, the aggregates it
honours (all but the class table's ranks: its batch holds many candidates in one statement)."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from sqlanon.search.bottom_up.spec import FLEXIBLE_HONOURS
from sqlanon.search.options import SearchOptions
from sqlanon.search.spec import SearchSpec

#: the genetic search's candidates are scored in-process up to this many base rows
#: (:data:`sqlanon.search.genetic.local.LOCAL_ROWS`; tests compare them)
GENETIC_LOCAL_ROWS = 250_000


class GeneticOptions(SearchOptions):
    """``--search genetic`` (Iyengar, GENITOR)."""

    model_config = ConfigDict(title="genetic search options")
    trace: bool = Field(False, description="Keep and print every improvement of the best solution.")
    iterations: int = Field(2000, ge=0, description="GENITOR iterations.")
    population: int = Field(100, ge=2, description="Population size.")
    seed: int | None = Field(None, description="Random seed (none: random). 0 is a seed.")
    mutation_rate: float = Field(0.002, ge=0.0, le=1.0, description="Per-bit mutation probability.")
    level_mutation: float = Field(0.0, ge=0.0, le=1.0, description="Probability that a child's QI, drawn at random, is set to one of its hierarchy levels (ARX's GA mutation; 0: off).")
    batch: int = Field(16, ge=1, description="Iterations whose children are scored by one statement.")
    selection_bias: float = Field(1.5, ge=1.0, le=2.0, description="Linear rank-selection bias.")
    crossover: Literal["two-point", "uniform"] = Field("two-point", description="Crossover operator.")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds (none: no limit).")
    step_limit: int | None = Field(None, ge=1, description="Stop after this many evaluations, the seed's node checks included (none: no limit).")
    max_endpoints: int = Field(128, ge=1, description="Numeric QIs with more distinct values are quantized to this many end points.")
    prune_unused: bool = Field(True, description="Leaves holding no row get no chromosome bit.")
    seed_lattice: bool = Field(True, description="Start from the full-domain lattice optimum under LM when cheap.")
    local_rows: int = Field(GENETIC_LOCAL_ROWS, ge=0, description="Score candidates in-process over the fetched frequency set when it has at most this many rows and the requirement is a class-size threshold (the lattice seed's nodes too); 0: every batch by SQL statements.")
    objective: Literal["lm", "cm", "cm-cost", "regression", "weighted"] | None = Field(None, description="What to optimize (default: the --metric, lm or cm).")
    cost_matrix: str | dict[str, dict[str, float]] | None = Field(None, description="cm-cost: {true class: {assigned class: cost}} as a mapping, JSON text or a .json path.")
    cost_suppressed: Literal["group"] | float = Field("group", description="cm-cost: cost of a suppressed row ('group' or a number).")
    regression_target: str | None = Field(None, description="regression: the numeric target column.")
    dispersion: Literal["variance", "mad"] = Field("variance", description="regression: variance or mean absolute deviation.")
    weights: str | None = Field(None, description="weighted: KIND[:COLUMN]=W,... with KIND in lm, cm, cm-cost, regression.")


GENETIC = SearchSpec(
    "genetic", "sqlanon.search.genetic.planner:run", GeneticOptions,
    # ARX's Loss, its arithmetic mean and granularity over the released values' domain shares
    # (sqlanon.search.genetic.objective.FlexShare); or --option objective=cm-cost|regression|weighted
    metrics=("lm", "cm", "loss", "loss-arithmetic", "granularity"),
    # the batch rolls the population up by its class keys and ranks each class's values
    honours=FLEXIBLE_HONOURS | {"population", "derived_k", "recursive_l", "emd_hierarchical"}, per_value=True,
    preflight="sqlanon.search.genetic.planner:preflight", limits=("time_limit", "step_limit"),
)

#: ``--search auto``'s genetic run stops by its limit, not by a count of iterations
AUTO_ITERATIONS = 10**9


def auto_runs(ctx) -> bool:
    """Whether ``--search auto`` chose lightning then the genetic search seeded from it
    (:func:`sqlanon.search.choose.choose_search`)."""
    return bool((ctx.chosen.get("search_auto") or {}).get("runs"))
