"""What a planner (a non-lattice search) is handed, and the contract it follows.

A planner is a module with ``run(ctx: SearchContext) -> Plan``. It talks to the data only through
``ctx.stats`` (a prepared :class:`sqlanon.stats.Statistics`: base frequency set built, hierarchies
registered as mapping tables) or through its own statistics module that builds sqlglot SQL and runs
it on ``ctx.engine``. It never reads source rows into Python.

* ``ctx.options`` holds the search's own options (from CLI flags or the policy's
  ``search_options``); ``ctx.options["k"]`` is the k asked for.
* ``ctx.requirement`` is the per-class privacy requirement (k-anonymity & co.) with the suppression
  budget in rows; rows of classes failing it are suppressed by the release writer.
* ``ctx.progress(message)`` reports progress (stderr in the CLI); ``ctx.trace(dict)`` records a
  step for ``--trace``.
* ``Plan.extra`` is merged into the ``--json`` object (e.g. ``steps``, ``lm``, ``evaluations``).
* ``ctx.weights``: the attribute weights (``--weights``/``weights:``), one per QI, normalized as
  ARX does (each over the largest), or None when none were given; ``ctx.bounds``: per QI the
  ``(lowest, highest)`` level (``--min-level``/``--max-level``), or None when none were given;
  ``ctx.bounded``: the QIs named by a bound. A planner honours both or refuses
  (:mod:`sqlanon.search.bounds`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable


@dataclass
class SearchContext:
    engine: Any
    source: Any
    qis: list[str]
    hierarchies: list[Any]
    stats: Any
    requirement: Any
    metric: Any
    options: dict = field(default_factory=dict)
    progress: Callable[[str], None] = lambda message: None
    steps: list[dict] = field(default_factory=list)
    weights: list[float] | None = None
    bounds: list[tuple[int, int]] | None = None
    bounded: list[str] = field(default_factory=list)

    def trace(self, step: dict) -> None:
        self.steps.append(step)
