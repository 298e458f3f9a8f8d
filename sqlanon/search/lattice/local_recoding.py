"""Local recoding: ARX's iterative local generalization, over frequency sets.

After the global optimum (node 1), the rows it suppresses are anonymized again on their own: the
same search, with the same privacy models, over the part of the (bounded) lattice that generalizes
node 1, finds node 2 for that subset (its classes formed by the subset's rows only, its suppression budget the same fraction of
the subset); the rows node 2 still suppresses go to node 3, and so on, until no row is left, the
subset is smaller than k, no node releases a further row, or ``local_iterations`` rounds ran.

Each row is released under the first node whose class (within its round's subset) satisfies the
requirement; the rest stay suppressed. Every released class satisfies the requirement within its
round; classes of different rounds that happen to print the same values merge in the output, and
a merge of classes that each satisfy k-anonymity, distinct or entropy l-diversity or t-closeness
satisfies it too (sizes add; distinct values unite; entropy is concave; the earth mover's distance
to the table's distribution is convex). Other models are refused.

The combined metric is the per-row loss of every round plus the suppressed rows, over all rows;
so it is offered for the per-row metrics (precision, lm, cm).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness
from sqlanon.search.lattice.lattice import Lattice
from sqlanon.search.lattice.subset import failing_subset
from sqlanon.stats.core import Statistics

#: models whose classes stay valid when classes of several rounds merge in the output
UNION_SAFE = (KAnonymity, DistinctLDiversity, EntropyLDiversity, TCloseness)
#: metrics that are a sum of per-row losses (a suppressed row costing a fixed amount)
PER_ROW = ("precision", "lm", "cm")
DEFAULT_ITERATIONS = 10


@dataclass
class Step:
    """One round: the node chosen for the ``rows`` left by the previous round."""

    node: tuple[int, ...]
    stats: Statistics  # the frequency sets the round was searched on
    rows: int
    suppressed: int
    value: float  # the metric over this round's rows
    nodes_evaluated: int = 0

    @property
    def released(self) -> int:
        return self.rows - self.suppressed


def require_supported(requirement: Requirement, metric_name: str | None, search: str, lattice_searches) -> None:
    if search not in lattice_searches:
        raise ConfigError(f"--local-recoding works with the lattice searches ({', '.join(sorted(lattice_searches))}), not {search}")
    if metric_name not in PER_ROW:
        raise ConfigError(f"--local-recoding needs a per-row metric ({', '.join(PER_ROW)}); {metric_name} is not one")
    for model in requirement.models:
        if not isinstance(model, UNION_SAFE):
            raise ConfigError(f"--local-recoding cannot combine rounds under {type(model).__name__}: only k-anonymity, l-diversity and t-closeness survive merged classes")


def suppressed_row_cost(metric, n_qis: int) -> float:
    """What one suppressed row adds to ``metric * rows``."""
    if metric.name == "cm":
        return 1.0
    weights = metric.weights
    return sum(weights) / n_qis if weights else 1.0


def recode(first: Step, requirement: Requirement, metric, search, bounds, iterations: int, say=lambda m: None) -> list[Step]:
    """Rounds after ``first`` (the global optimum); returns every round, ``first`` included."""
    if iterations < 1:
        raise ConfigError(f"local_iterations must be at least 1, got {iterations}")
    steps = [first]
    ok = requirement.predicate()
    while len(steps) <= iterations and steps[-1].suppressed:
        last = steps[-1]
        sub = failing_subset(last.stats, last.node, ok)
        if sub.rows < requirement.k:
            break
        round_req = requirement.for_rows(sub.rows)
        # a further, more general transformation: every level at least the previous round's
        round_bounds = [(max(lo, lv), hi) for (lo, hi), lv in zip(bounds, last.node)]
        try:
            result = search(Lattice(sub, round_req, metric, bounds=round_bounds))
        except UnsatisfiableError:
            break
        suppressed = result.node_stats.suppressed
        if suppressed >= sub.rows:
            break
        steps.append(Step(tuple(result.node), sub, sub.rows, suppressed, float(result.value), result.nodes_evaluated))
        say(f"local recoding round {len(steps)}: {sub.rows - suppressed:,} of {sub.rows:,} suppressed rows released at {tuple(result.node)}")
    return steps


def combined_value(steps: list[Step], metric, n_qis: int, rows: int) -> float:
    """The metric over the whole release: each round's released rows' loss plus the rows still
    suppressed at the end, over all rows."""
    cost = suppressed_row_cost(metric, n_qis)
    total = sum(s.value * s.rows - s.suppressed * cost for s in steps) + steps[-1].suppressed * cost
    return total / rows


def describe(steps: list[Step], qis: list[str]) -> list[dict]:
    return [
        {"transformation": {q: int(lv) for q, lv in zip(qis, s.node)}, "rows": s.rows, "released": s.released, "suppressed": s.suppressed}
        for s in steps
    ]
