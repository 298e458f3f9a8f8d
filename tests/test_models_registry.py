"""The privacy model registry: one dict, read by the policy (its privacy section and flags), the
API's model objects, the class aggregates and the checker."""

from __future__ import annotations

import pytest

from sqlanon.config.policy import Policy
from sqlanon.errors import ConfigError
from sqlanon.privacy import MODELS, PrivacyModel, Requirement, requirement_from_policy
from sqlanon.privacy.base import budget_rows
from sqlanon.privacy.registry import to_policy


def test_every_model_is_a_privacy_model_with_policy_keys():
    for name, model in MODELS.items():
        assert issubclass(model, PrivacyModel), name
        assert model.asks, f"{name} names no policy key that asks for it"
        assert model.name == name


def test_budget_is_the_requirements():
    assert budget_rows(0.07, 100) == 7 and budget_rows(0.0, 100) == 0 and budget_rows(1.0, 3) == 3
    req = Requirement([], max_suppression=0.05)
    assert req.budget_for(1000) == 50
    assert req.for_rows(41).budget == 2


def _policy(**keys) -> Policy:
    p = Policy.from_dict({"input": "x.csv", "qi": {"a": "flat"}, **keys})
    p.validate()
    return p


def test_requirement_from_policy_in_registry_order_and_back_to_keys():
    req, extras = requirement_from_policy(_policy(k=3, l=2, sensitive_column="s", t=0.3, max_suppression=0.1))
    assert [m.name for m in req.models] == ["k-anonymity", "distinct-l-diversity", "t-closeness"]
    assert req.max_suppression == 0.1 and extras == {}
    assert to_policy(req.models) == {"k": 3, "l": 2, "l_diversity": "distinct", "t": 0.3, "t_distance": "equal"}


def test_key_of_a_model_not_asked_is_refused():
    with pytest.raises(ConfigError, match="c is the c of recursive"):
        requirement_from_policy(_policy(k=2, c=2.0))
