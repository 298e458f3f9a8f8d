"""The search registry and its contract: every search declares its options, metrics, preflight and
the class aggregates it honours; a model a search cannot honour is refused before the scan, naming
the model and the search (the same searches refused for the same models as before the registry)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from sqlanon.config.search_options import SEARCH_OPTIONS
from sqlanon.errors import ConfigError
from sqlanon.privacy import Requirement
from sqlanon.privacy.needs import ClassNeeds
from sqlanon.search.choose import refuse_unhonoured
from sqlanon.search.registry import SEARCHES
from sqlanon.search.spec import SearchSpec

LATTICE = ("optimal", "samarati", "incognito", "lightning", "lattice-genetic", "auto")
#: model (its needs) -> the searches that honour it besides the lattice family
HONOURED_BY = {
    "ranked": (),  # average re-identification risk: a window over the class table
    "population": ("genetic",),  # k-map, delta-presence
    "recursive_l": ("genetic",),  # recursive (c,l)-diversity
    "emd_hierarchical": ("genetic",),  # hierarchical t-closeness
    "distinct_s": ("genetic", "bottom-up", "top-down"),
    "entropy_s": ("genetic", "bottom-up", "top-down"),
    "emd_equal": ("genetic", "bottom-up", "top-down"),
    "beta_likeness": ("genetic", "bottom-up", "top-down"),
    "delta_disclosure": ("genetic", "bottom-up", "top-down"),
}


def _requirement(name: str) -> Requirement:
    needs = ClassNeeds(recursive_l=2) if name == "recursive_l" else ClassNeeds(**{name: True})
    return Requirement([SimpleNamespace(needs=needs, label="", name=f"model-{name}")])


def test_every_search_is_a_spec_with_its_options():
    for name, spec in SEARCHES.items():
        assert isinstance(spec, SearchSpec) and spec.name == name
        assert SEARCH_OPTIONS[name] is spec.options
        assert (spec.planner is None) == (name == "auto")


@pytest.mark.parametrize("aggregate", sorted(HONOURED_BY))
def test_a_model_is_refused_by_the_searches_that_cannot_honour_it(aggregate):
    requirement = _requirement(aggregate)
    for search in SEARCHES:
        if search in LATTICE or search in HONOURED_BY[aggregate]:
            refuse_unhonoured(search, requirement)
            continue
        also = "".join(f" and the {s} search" for s in HONOURED_BY[aggregate] if s in ("bottom-up", "top-down", "genetic"))
        with pytest.raises(ConfigError, match=rf"model-{aggregate} is computed by the lattice searches \(optimal, samarati, incognito, lightning, lattice-genetic, auto\){also}; search {search} cannot honour it"):
            refuse_unhonoured(search, requirement)


def test_the_metrics_a_search_optimizes_are_declared_beside_it():
    assert SEARCHES["genetic"].metrics == ("lm", "cm", "loss", "loss-arithmetic", "granularity")
    assert SEARCHES["bottom-up"].metrics == ("lm",) and SEARCHES["top-down"].metrics == ()
    assert all(SEARCHES[name].metrics is None for name in LATTICE)
