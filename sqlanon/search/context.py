"""What a search is handed, and the contract every search follows.

A search is ``run(ctx: SearchContext) -> Plan``, named by its spec in
:data:`sqlanon.search.registry.SEARCHES`. It talks to the data only through ``ctx.stats`` (a
prepared :class:`sqlanon.stats.Statistics`: base frequency set built, hierarchies registered as
mapping tables) or through its own statistics module that builds sqlglot SQL and has the
statistics' engine run it. It never opens a connection and never reads source rows into Python.

* ``ctx.requirement`` is the per-class privacy requirement (k-anonymity & co.) with the
  suppression budget in rows (:meth:`sqlanon.privacy.base.Requirement.fits`): the one carrier of
  k and the budget; rows of classes failing it are suppressed by the release writer.
* ``ctx.options`` holds the search's own options, validated by its options model (from CLI flags
  or the policy's ``search_options``, :func:`sqlanon.config.search_options.parse_search_options`).
* ``ctx.levels``: per QI the ``(lowest, highest)`` level the lattice spans (the level bounds, or
  every level); ``ctx.bounds``: the same when the user bounded levels (``--min-level``/``--max-level``),
  else None; ``ctx.bounded``: the QIs named by a bound. A planner honours them or refuses
  (:mod:`sqlanon.search.bounds`). ``ctx.weights``: the attribute weights, normalized as ARX does
  (each over the largest), or None.
* ``ctx.progress(message)`` reports progress (stderr in the CLI); ``ctx.trace(dict)`` records a
  step for ``--trace``; ``ctx.phase`` is the progress bar's phase (lattice searches tick it).
* ``ctx.previous``: top-down's previous releases, resolved by the caller (``(name, source)``),
  and ``ctx.xy_k`` its (X,Y) threshold.
* ``Plan.extra`` is merged into the ``--json`` object (e.g. ``steps``, ``lm``, ``evaluations``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlanon.plan import Plan

if TYPE_CHECKING:
    from sqlanon.engine.source import Source
    from sqlanon.metrics.base import Metric
    from sqlanon.privacy.base import Requirement
    from sqlanon.privacy.safepub import Params
    from sqlanon.stats import Statistics


def _silent(message: str) -> None:
    """The default progress: nothing."""


@dataclass
class SearchContext:
    """One search's inputs (see the module's docstring)."""

    stats: Statistics
    requirement: Requirement
    metric: Metric | None
    options: dict[str, Any] = field(default_factory=dict)
    levels: list[tuple[int, int]] = field(default_factory=list)
    progress: Callable[[str], None] = _silent
    steps: list[dict] = field(default_factory=list)
    weights: list[float] | None = None
    bounds: list[tuple[int, int]] | None = None
    bounded: list[str] = field(default_factory=list)
    #: the name the plan reports (``auto`` resolved), and auto's report fields
    search: str = ""
    chosen: dict[str, Any] = field(default_factory=dict)
    phase: Any = None
    previous: list[tuple[str, Source]] = field(default_factory=list)
    #: top-down's (X,Y) threshold (``--k``: a count for xy-anonymity, a confidence for
    #: xy-linkability); its requirement is built by the planner, not a class-size k
    xy_k: float | None = None
    #: SafePub's parameters (``--epsilon``), or None
    safepub: Params | None = None
    #: local recoding's rounds (``--local-recoding``), or None without it
    local_iterations: int | None = None
    #: the genetic search's lattice seed: what it found, and its lattice result
    genetic_seed: dict | None = None
    genetic_seed_result: Any = None

    @property
    def engine(self) -> Any:
        return self.stats.engine

    @property
    def source(self) -> Any:
        return self.stats.source

    @property
    def qis(self) -> list[str]:
        return self.stats.qis

    @property
    def hierarchies(self) -> list[Any]:
        return self.stats.hierarchies

    def trace(self, step: dict) -> None:
        self.steps.append(step)


def heuristic_plan(ctx: SearchContext, run: Callable[..., Any]) -> Plan:
    """The plan of a lattice search that never builds the lattice (lightning, bounded optimal):
    ``run(stats, requirement, metric, levels, options, progress) -> LatticeResult``."""
    result = run(ctx.stats, ctx.requirement, ctx.metric, ctx.levels, ctx.options, ctx.progress)
    info = result.extra.get("heuristic", {})
    ctx.progress(
        f"{ctx.search}: {info.get('evaluations')} nodes evaluated of {result.nodes_total:,} in {info.get('seconds')} s, "
        f"stopped by {info.get('stopped_by')}" + (" (optimum proven)" if info.get("optimal") else "")
    )
    return Plan.from_lattice_result(ctx.search, ctx.stats, ctx.requirement, ctx.metric, result, ctx.bounds, **ctx.chosen, **result.extra)
