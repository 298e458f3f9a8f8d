"""From policy keys to the privacy models of issue 14: recursive (c,l)-diversity, hierarchical
t-closeness, k-map, delta-presence (SafePub lives in :mod:`sqlanon.privacy.safepub`).

Every key is used or refused with an error naming it: a key of a model that is not asked for, or a
model without the keys it needs, is a :class:`ConfigError` before anything is scanned.
"""

from __future__ import annotations

import glob
import os

from sqlanon.errors import ConfigError
from sqlanon.privacy.delta_presence import DeltaPresence
from sqlanon.privacy.k_map import KMap
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity
from sqlanon.privacy.t_closeness import TCloseness
from sqlanon.engine.source import Source
from sqlanon.privacy import safepub
from sqlanon.search import LATTICE_SEARCHES
from sqlanon.hierarchy import load_hierarchy

LATTICE_ONLY = "is computed by the lattice searches (optimal, samarati, incognito, lightning, auto)"
#: models the genetic search computes as well (its batched class statistics carry them)
GENETIC_TOO = ("recursive (c,l)-diversity", "hierarchical t-closeness", "k-map", "delta-presence")


def validate(policy) -> None:
    """Key combinations, before any scan."""
    recursive = policy.l_diversity == "recursive"
    if policy.c is not None and not recursive:
        raise ConfigError("c is the c of recursive (c,l)-diversity: give --l-diversity recursive with it")
    if recursive and (policy.c is None or policy.l is None):
        raise ConfigError("recursive (c,l)-diversity needs both --c and --l")
    hierarchical = policy.t_distance == "hierarchical"
    if policy.t_hierarchy and not hierarchical:
        raise ConfigError("t_hierarchy is the sensitive hierarchy of hierarchical t-closeness: give --t-distance hierarchical with it")
    if hierarchical and (policy.t is None or not policy.t_hierarchy):
        raise ConfigError("hierarchical t-closeness needs --t and --t-hierarchy (a hierarchy of the sensitive column)")
    delta = policy.delta_min is not None or policy.delta_max is not None
    if policy.population is not None and policy.k_map is None and not delta:
        raise ConfigError("population is the population table of k-map and delta-presence: give --k-map or --delta-min/--delta-max with it")
    if delta and policy.population is None:
        raise ConfigError("delta-presence (--delta-min/--delta-max) needs --population TABLE, the population the input is a subset of")
    if policy.population_size is not None:
        if policy.k_map is None:
            raise ConfigError("population_size is the estimated population of k-map: give --k-map with it")
        if policy.population is not None:
            raise ConfigError("k-map takes a population table (--population) or an estimated size (--population-size), not both")
    if policy.k_map is not None and policy.population is None and policy.population_size is None:
        raise ConfigError("k-map needs the population: --population TABLE or --population-size N (estimated)")
    for key in ("k_map_estimator", "k_map_significance"):
        if getattr(policy, key) is not None and policy.population_size is None:
            raise ConfigError(f"{key} applies to k-map with an estimated population (--population-size)")
    if policy.epsilon is None:  # SafePub keys without --epsilon are refused there

        safepub.validate(policy)
    uses = [name for name, on in (("recursive (c,l)-diversity", recursive), ("hierarchical t-closeness", hierarchical), ("k-map", policy.k_map is not None), ("delta-presence", delta)) if on]
    if uses:
        # the genetic search's batched class statistics carry top_s/tail_s and emd_hier too
        refused = [u for u in uses if not (policy.search == "genetic" and u in GENETIC_TOO)]
        if policy.search not in LATTICE_SEARCHES and policy.search not in ("lightning", "auto") and refused:
            where = LATTICE_ONLY + (" and the genetic search" if refused[0] in GENETIC_TOO else "")
            raise ConfigError(f"{refused[0]} {where}; search {policy.search} cannot honour it")


def population_source(policy, session) -> Source:
    spec = policy.population
    if os.path.isfile(spec) or os.path.isdir(spec) or glob.glob(spec) and any(ch in spec for ch in "*?["):
        return Source.open(spec)
    src = Source(kind="table", table=spec, database=session.source.database)
    try:
        src.columns(session.engine)
    except Exception:
        raise ConfigError(f"population table {spec!r} not found in the input's database") from None
    return src


def add_models(policy, session, requirement) -> dict:
    """Append the asked models to ``requirement``; return the extra :class:`Statistics` keywords
    (``population``, ``sensitive_hierarchy``)."""
    validate(policy)
    extra: dict = {}
    models = []
    if policy.l_diversity == "recursive":
        models.append(RecursiveCLDiversity(policy.c, policy.l))
    if policy.t_distance == "hierarchical":
        if not policy.sensitive_column:
            raise ConfigError("hierarchical t-closeness needs --sensitive-column")
        session.source.require_columns(session.engine, [policy.sensitive_column], "sensitive column")
        h = load_hierarchy(policy.t_hierarchy, policy.sensitive_column, session.engine, session.source, policy.hierarchy_delimiter, policy.max_value_length)
        models.append(TCloseness(policy.t, "hierarchical", hierarchy=h))
        extra["sensitive_hierarchy"] = h
    if policy.k_map is not None:
        if policy.population_size is not None:
            models.append(KMap(policy.k_map, policy.population_size, policy.k_map_estimator or "poisson", 0.01 if policy.k_map_significance is None else policy.k_map_significance))
        else:
            models.append(KMap(policy.k_map))
    if policy.delta_min is not None or policy.delta_max is not None:
        models.append(DeltaPresence(0.0 if policy.delta_min is None else policy.delta_min, 1.0 if policy.delta_max is None else policy.delta_max))
    if policy.population is not None:
        extra["population"] = population_source(policy, session)
    for m in models:
        requirement.models.append(m)
        requirement.needs = requirement.needs.merge(m.needs)
    return extra


def bind(requirement, stats) -> None:
    """After the scan: models that depend on the table's size (estimated k-map)."""
    for m in requirement.models:
        if isinstance(m, KMap):
            m.bind(stats.rows)
