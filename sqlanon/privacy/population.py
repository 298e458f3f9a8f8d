"""The population table of k-map and delta-presence (``population: TABLE`` or a file): a source
the input is a subset of, coded by the same hierarchies (:func:`sqlanon.stats.models.prepare_population`),
opened by the run's session (:meth:`sqlanon.run.session.Session.population_source`)."""

from __future__ import annotations

from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.needs import Aggregate

#: ``pop_cnt``: the class's rows in the population table (CTEs of its own: :func:`sqlanon.stats.models.population_ctes`)
POPULATION = Aggregate("population", sensitive=False)
POPULATION_KEY = PolicyKey("population", str, help="k-map / delta-presence: the population TABLE (in the input's database) or file.")


def statistics_extras(policy, session) -> dict:
    return {"population": session.population_source(policy.population)} if policy.population is not None and session is not None else {}
