"""What a search declares beside itself (``search/<name>/spec.py``): :class:`SearchSpec`.

A search is ``run(ctx: SearchContext) -> Plan`` (:mod:`sqlanon.search.context`); its spec names
that function and its preflight as ``"module:function"`` (imported when the search runs, so
reading the registry loads no planner and one broken planner cannot take the others down), its
options model, the metrics it optimizes and the class aggregates it can honour."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlanon.errors import ConfigError
from sqlanon.privacy.needs import DECLARED
from sqlanon.search.options import SearchOptions


@dataclass(frozen=True)
class SearchSpec:
    """One search of :data:`sqlanon.search.registry.SEARCHES`."""

    name: str
    #: ``"module:function"``: ``run(ctx) -> Plan`` (None: ``auto``, resolved to another search first)
    planner: str | None
    #: its options model (unknown keys refused by :func:`sqlanon.config.search_options.parse_search_options`)
    options: type[SearchOptions]
    #: the ``--metric`` names it can optimize, the first its default; None: any metric (the lattice family)
    metrics: tuple[str, ...] | None = None
    #: what it reports instead of a metric it cannot take (a search with a measure of its own)
    measure: str = ""
    #: the class aggregates it can honour (:meth:`sqlanon.privacy.needs.ClassNeeds.names`); None: every one
    honours: frozenset[str] | None = None
    #: ... and every aggregate a model declares with a per-value form (its statements assemble those
    #: from the declarations, :mod:`sqlanon.privacy.aggregates`, so a new model's need no edit here)
    per_value: bool = False
    #: ``"module:function"``: ``preflight(policy, levels)``, its refusals made before the scan
    #: (``levels``: per QI the ``(lowest, highest)`` level within the policy's bounds)
    preflight: str | None = None
    #: the limits (``time_limit``, ``step_limit``) it honours
    limits: tuple[str, ...] = ()
    #: ... and both limits on a lattice above this many nodes (optimal, searched bounded)
    limits_above: int | None = None
    #: a lattice search (computes the models over the lattice's class table)
    lattice: bool = False

    def run(self, ctx: Any) -> Any:
        if self.planner is None:
            raise ConfigError(f"search {self.name} is resolved to another search before it runs")
        return _load(self.planner, self.name)(ctx)

    def check(self, policy: Any, levels: list[tuple[int, int]]) -> None:
        """Its preflight, when it has one."""
        if self.preflight is not None:
            _load(self.preflight, self.name)(policy, levels)

    def honours_limit(self, key: str, nodes: int | None) -> bool:
        return key in self.limits or (self.limits_above is not None and nodes is not None and nodes > self.limits_above)

    def can_honour(self, names: frozenset[str]) -> bool:
        """Can it compute every aggregate named?"""
        if self.honours is None:
            return True
        return all(name in self.honours or self.per_value and _per_value(name) for name in names)


def _per_value(name: str) -> bool:
    """Is ``name`` an aggregate declared with a per-value form (assembled by any class statement)?"""
    declared = DECLARED.get(name)
    return declared is not None and declared.value is not None and not declared.ranked


def _load(target: str, search: str) -> Callable[..., Any]:
    module_name, _, func = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ConfigError(f"search {search!r} is not available in this build ({err})") from None
    return getattr(module, func)
