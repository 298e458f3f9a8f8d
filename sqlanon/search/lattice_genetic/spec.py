"""``--search lattice-genetic`` as the registry knows it: lightning's limits and the genetic
algorithm's shares; it honours every model (it evaluates nodes as the lattice does)."""

from __future__ import annotations

from pydantic import ConfigDict, Field

from sqlanon.search.lightning.spec import LightningOptions
from sqlanon.search.spec import SearchSpec


class LatticeGeneticOptions(LightningOptions):
    """``--search lattice-genetic``: Wan et al.'s genetic algorithm over full-domain nodes (ARX's GA)."""

    model_config = ConfigDict(title="lattice-genetic search options")
    population: int = Field(100, ge=1, description="Nodes per sub-population beyond one per QI (ARX's subpopulation size).")
    crossover: float = Field(0.4, ge=0, le=1, description="Share of a sub-population replaced by crossover children each iteration.")
    elite: float = Field(0.2, ge=0, le=1, description="Share of a sub-population kept unchanged each iteration.")
    production: float = Field(0.2, ge=0, le=1, description="Share of the best nodes that parents are drawn from.")
    mutation: float = Field(0.2, ge=0, le=1, description="At most this share of the QIs moved to random levels in a mutant.")
    immigration: float = Field(0.2, ge=0, le=1, description="Share of each sub-population's best moved to the other one.")
    immigration_interval: int = Field(10, ge=1, description="Iterations between two immigrations.")
    iterations: int | None = Field(None, ge=1, description="Stop after this many iterations (default: run to the time or step limit).")
    seed: int = Field(1, ge=0, description="Random seed (the same seed, the same answer under a step limit).")


LATTICE_GENETIC = SearchSpec("lattice-genetic", "sqlanon.search.lattice_genetic.planner:search", LatticeGeneticOptions, limits=("time_limit", "step_limit"), lattice=True)
