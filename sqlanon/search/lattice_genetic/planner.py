"""A genetic algorithm over the full-domain generalization lattice: Wan et al., "Expanding Access to
Large-Scale Genomic Data While Promoting Privacy: A Game Theoretic Approach" (AJHG 2017), the
algorithm ARX 3.9 runs as its "genetic algorithm" on wide tables.

Its individuals are **lattice nodes** (one level per QI, within the level bounds), not Iyengar's
flexible cuts (``--search genetic``): every answer is a full-domain node, checked by the same node
evaluations as lightning's (in-process over the fetched frequency set when it fits, else by SQL,
``batch`` nodes a statement), under the same limits, with the same incumbent (the best node that
releases) and the same report (``heuristic``). Where lightning walks greedily from both ends of the
lattice, the genetic algorithm recombines good nodes from anywhere in it, which on lattices of
10^8-10^14 nodes finds nodes lightning's walk does not reach (ARX's figures: docs/lattice_genetic.md).

* **Two sub-populations** of ``population + QIs`` nodes each. The first starts with a "triangle"
  that covers the lattice (node ``i`` at the top level for QIs ``0..i`` and at the bottom for the
  rest, one per QI), then random nodes; the second is random. A random level is uniform over the
  QI's bounds (rounded, as ARX draws it).
* **An iteration**, per sub-population, ordered best first (nodes that release before those that
  do not, then by the metric's value): the ``elite`` share is kept; ``crossover`` share children
  replace the worst, each QI's level taken from one of two parents at random (uniform crossover),
  the parents drawn from the best ``production`` share with probability proportional to their
  fitness (1 - the value's position between the best and the worst of them); the rest are mutants
  of random members of the previous population, each with 0..ceil(``mutation`` x QIs) QIs moved to
  random levels. The whole generation is one batch of node evaluations.
* **Immigration** every ``immigration_interval`` iterations: the ``immigration`` share of each
  sub-population's best replace the other's worst (ARX's code computes that count as
  ``(int) fraction * k``, which is 0 for any fraction below 1, so ARX's sub-populations never
  exchange; here they do, as the paper describes).
* The search runs until its time or step limit (``time_limit``, default
  :data:`~sqlanon.search.lightning.planner.DEFAULT_TIME_LIMIT`; ``step_limit``) or, with
  ``iterations``, after that many generations. ``seed`` makes it deterministic under a step limit.
"""

from __future__ import annotations

import math

import numpy as np

from sqlanon.errors import ConfigError
from sqlanon.search.context import SearchContext, heuristic_plan
from sqlanon.search.lattice.lattice import LatticeResult
from sqlanon.search.lightning import planner as lightning
from sqlanon.search.lightning.planner import Lightning
from sqlanon.search.options import given
from sqlanon.plan import Plan

#: the algorithm's own options and their defaults (shares of a sub-population)
DEFAULTS = {"population": 100, "crossover": 0.4, "elite": 0.2, "production": 0.2, "mutation": 0.2,
            "immigration": 0.2, "immigration_interval": 10, "iterations": None, "seed": 1}
SHARES = ("crossover", "elite", "production", "mutation", "immigration")


def parse_options(options: dict) -> dict:
    """Lightning's limits (``time_limit``, ``step_limit``, ``batch``) and the algorithm's own
    (:data:`DEFAULTS`)."""
    own = {k: v for k, v in options.items() if k in DEFAULTS}
    out = lightning.parse_options({k: v for k, v in options.items() if k not in DEFAULTS})
    out.update(DEFAULTS)
    for key, value in own.items():
        if not given(value):
            continue
        try:
            if key in SHARES:
                value = float(value)
                if not 0.0 <= value <= 1.0:
                    raise ValueError
            else:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError
                value = int(value)
                if value < (0 if key == "seed" else 1):
                    raise ValueError
        except (TypeError, ValueError):
            what = "a share between 0 and 1" if key in SHARES else ("a whole number >= 0" if key == "seed" else "a whole number >= 1")
            raise ConfigError(f"lattice-genetic option {key} must be {what}, got {value!r}") from None
        out[key] = value
    if out["elite"] + out["crossover"] > 1.0:
        raise ConfigError(f"lattice-genetic options elite + crossover must be at most 1, got {out['elite']} + {out['crossover']}")
    return out


class LatticeGenetic(Lightning):
    """The population's state; nodes are evaluated through :meth:`Lightning.evaluate` (the same
    limits, statements, incumbent and report as lightning's)."""

    label = "lattice-genetic"

    def __init__(self, stats, requirement, metric, bounds, opts: dict, progress=None) -> None:
        super().__init__(stats, requirement, metric, bounds, opts, progress)
        self.rng = np.random.default_rng(opts["seed"])
        self.generations = 0

    # -- individuals ------------------------------------------------------------------------------
    def random_node(self) -> tuple:
        return tuple(int(lo + round(self.rng.random() * (hi - lo))) for lo, hi in zip(self.mins, self.maxes))

    def triangle(self) -> list[tuple]:
        """Node ``i``: QIs ``0..i`` at their top level, the others at their bottom."""
        q = len(self.mins)
        return [tuple(self.maxes[j] if j <= i else self.mins[j] for j in range(q)) for i in range(q)]

    def rank(self, node: tuple) -> tuple:
        """Best first: nodes that release, then the metric's value, then the lower node."""
        _, ok, value = self.evaluated[node]
        return (not ok, value, sum(node), node)

    def mutant(self, node: tuple) -> tuple:
        q = len(node)
        most = math.ceil(self.opts["mutation"] * q)
        moved = self.rng.permutation(q)[: int(self.rng.integers(0, most + 1))]
        out = list(node)
        for i in moved:
            lo, hi = self.mins[i], self.maxes[i]
            out[i] = int(lo + round(self.rng.random() * (hi - lo)))
        return tuple(out)

    def parents(self, pop: list[tuple], count: int) -> list[tuple]:
        """``count`` nodes of the best ``production`` share, drawn with probability proportional
        to their fitness (1 - where the value lies between the best and the worst of them)."""
        best = pop[: max(1, math.ceil(self.opts["production"] * len(pop)))]
        values = np.array([self.evaluated[n][2] for n in best], dtype=np.float64)
        lo, hi = float(values.min()), float(values.max())
        fit = 1.0 - (values - lo) / (hi - lo) if hi > lo and math.isfinite(hi - lo) else np.ones(len(best))
        total = float(fit.sum())
        p = fit / total if total > 0 else np.full(len(best), 1.0 / len(best))
        return [best[i] for i in self.rng.choice(len(best), size=count, p=p)]

    # -- the algorithm --------------------------------------------------------------------------------
    def generation(self, pop: list[tuple]) -> list[tuple]:
        """One iteration of a sub-population (ordered best first): the elite kept, children of
        crossover in the worst places, mutants of the previous population between them."""
        k = len(pop)
        n_cross = math.ceil(self.opts["crossover"] * k)
        n_elite = math.ceil(self.opts["elite"] * k)
        a, b = self.parents(pop, n_cross), self.parents(pop, n_cross)
        q = len(self.mins)
        children = []
        for x, y in zip(a, b):
            pick = self.rng.random(q) < 0.5
            children.append(tuple(int(x[i] if pick[i] else y[i]) for i in range(q)))
        mutants = [self.mutant(pop[int(self.rng.integers(0, k))]) for _ in range(max(0, k - n_cross - n_elite))]
        self.evaluate(mutants + children)
        out = list(pop)
        for slot, node in zip(range(n_elite, k - n_cross), mutants):
            if node in self.evaluated:
                out[slot] = node
        for c, node in enumerate(children):
            if node in self.evaluated:
                out[k - c - 1] = node
        return sorted(out, key=self.rank)

    def immigrate(self, z1: list[tuple], z2: list[tuple]) -> tuple[list[tuple], list[tuple]]:
        """The ``immigration`` share of each sub-population's best replace the other's worst."""
        n = min(int(self.opts["immigration"] * len(z1)), len(z1), len(z2))
        if n <= 0:
            return z1, z2
        best1, best2 = z1[:n], z2[:n]
        z1 = sorted(z1[: len(z1) - n] + best2, key=self.rank)
        z2 = sorted(z2[: len(z2) - n] + best1, key=self.rank)
        return z1, z2

    def run(self) -> LatticeResult:
        size = len(self.mins) + self.opts["population"]
        tri = self.triangle()[:size]
        z1 = tri + [self.random_node() for _ in range(size - len(tri))]
        z2 = [self.random_node() for _ in range(size)]
        # the most general node first: an answer whatever the limits
        self.evaluate([tuple(self.maxes), *z1, *z2])
        z1 = sorted((n for n in z1 if n in self.evaluated), key=self.rank)
        z2 = sorted((n for n in z2 if n in self.evaluated), key=self.rank)
        iterations = self.opts["iterations"]
        while z1 and z2 and not self.must_stop() and (iterations is None or self.generations < iterations):
            if self.generations % self.opts["immigration_interval"] == 0:
                z1, z2 = self.immigrate(z1, z2)
            z1 = self.generation(z1)
            if not self.must_stop():
                z2 = self.generation(z2)
            self.generations += 1
        if self.stopped_by is None:
            self.stopped_by = "iterations"
        result = self.result()
        result.extra["heuristic"].update({"generations": self.generations, "population": size, "seed": self.opts["seed"], "optimal": False})
        return result


def run(stats, requirement, metric, bounds, options: dict | None = None, progress=None) -> LatticeResult:
    """Search the lattice within ``bounds`` (``[(lowest, highest)]`` per QI) with the options given."""
    return LatticeGenetic(stats, requirement, metric, list(bounds), parse_options(dict(options or {})), progress).run()


def search(ctx: SearchContext) -> Plan:
    """The search's contract: ``run(ctx) -> Plan``."""
    return heuristic_plan(ctx, run)
