"""Attribute weights and per-QI level bounds for the flexible planners (bottom-up, top-down, genetic).

The lattice searches restrict the lattice (:func:`sqlanon.search.lattice.lattice.level_bounds`). A flexible
cut has no single level per QI; it honours bounds ``(lo, hi)`` node by node:

* every released value of a QI with a hierarchy lies between levels ``lo`` and ``hi``: a leaf is
  released at least at its level-``lo`` ancestor, and no released node sits above level ``hi``;
* a taxonomy node that stands for a chain of levels (a value with a single child: the same set of
  leaves at several levels) is allowed when one of its levels is in ``[lo, hi]``, and is then
  released under the label of its lowest level that is ``>= lo``.

A QI without levels (a flat ``numeric`` hierarchy, cut into intervals) cannot honour a bound: the
planner refuses with :func:`refuse_levelless`.

Weights are normalized as ARX does (each over the largest; all 1 when every weight is 0) and each
planner multiplies its per-attribute loss term by them (see the planners' docstrings).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlanon.errors import ConfigError
from sqlanon.metrics.base import normalize_weights
from sqlanon.search.lattice.lattice import level_bounds


def planner_inputs(policy, qis: Sequence[str], hierarchies) -> tuple[list[float] | None, list[tuple[int, int]] | None, list[str]]:
    """``(weights, bounds, bounded)`` for a :class:`SearchContext` from the policy (None when not given)."""
    qis = list(qis)
    weights = None
    if policy.weights:
        for name in policy.weights:
            if name not in qis:
                raise ConfigError(f"weights names {name!r}, which is not a quasi-identifier ({', '.join(qis)})")
        weights = normalize_weights([policy.weights.get(q, 1.0) for q in qis])
    bounds, bounded = None, []
    if policy.min_level or policy.max_level:
        bounds = level_bounds(hierarchies, qis, policy.min_level, policy.max_level)
        bounded = [q for q in qis if q in policy.min_level or q in policy.max_level]
    return weights, bounds, bounded


def has_levels(hierarchy) -> bool:
    """False for a flat numeric hierarchy (value -> ``*``), which the planners cut into intervals."""
    return not (hierarchy.numeric and hierarchy.max_level == 1)


def refuse_levelless(ctx, search: str, levelless: Sequence[int]) -> None:
    """A bound on a QI the search cuts into intervals (no levels): one line naming the QI."""
    for i in levelless:
        q = ctx.qis[i]
        if q in ctx.bounded:
            raise ConfigError(
                f"--min-level/--max-level {q}: search {search} cuts {q!r} into intervals, which have no "
                f"hierarchy levels; give it a hierarchy with levels (e.g. --qi {q}=bands:5,10,20) or drop the bound"
            )
