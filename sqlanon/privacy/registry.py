"""The privacy models, by name: a plain dict (like sqlglot's optimizer ``RULES``). Adding a model
is adding its module and a line here; the policy, the API's model objects, the searches and the
checker all read this dict.

>>> sorted(MODELS)[:3]
['average-risk', 'delta-disclosure', 'delta-presence']
"""

from __future__ import annotations

from sqlanon.errors import ConfigError
from sqlanon.privacy.base import PrivacyModel, Requirement
from sqlanon.privacy.average_risk import AverageRisk
from sqlanon.privacy.beta_likeness import EnhancedBetaLikeness
from sqlanon.privacy.delta_disclosure import DeltaDisclosure
from sqlanon.privacy.delta_presence import DeltaPresence
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.privacy.k_map import KMap
from sqlanon.privacy.l_diversity import DistinctLDiversity, EntropyLDiversity
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity
from sqlanon.privacy.t_closeness import TCloseness

MODELS: dict[str, type[PrivacyModel]] = {
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,  # equal, ordered or hierarchical distance
    "k-map": KMap,
    "delta-presence": DeltaPresence,
    "enhanced-beta-likeness": EnhancedBetaLikeness,
    "delta-disclosure": DeltaDisclosure,
    "average-risk": AverageRisk,
}


def validate(policy) -> None:
    """Key combinations of every model, before any scan (a key of a model that is not asked for,
    or a model without the keys it needs, is a ConfigError naming it)."""
    for model in MODELS.values():
        model.validate_policy(policy)


def requirement_from_policy(policy, session=None) -> tuple[Requirement, dict]:
    """The policy's requirement (every asked model, in registry order; the budget is set by
    :meth:`Requirement.bind` once the table's rows are known) and the extra :class:`Statistics`
    keywords its models need (``population``, ``sensitive_hierarchy``)."""
    validate(policy)
    requirement = Requirement([], max_suppression=policy.privacy.max_suppression)
    extras: dict = {}
    for model in MODELS.values():
        for m in model.from_policy(policy, session):
            requirement.add(m)
            for key, value in m.statistics_extras(policy, session).items():
                extras.setdefault(key, value)
    return requirement, extras


def stands_in_for_k(policy) -> bool:
    """Whether a model that needs no k-anonymity is asked (then --k may be left out: k is 1)."""
    return any(model.replaces_k and model.asked(policy) for model in MODELS.values())


def asking_keys(policy, but=(KAnonymity,)) -> list[str]:
    """The policy keys given that ask for a model (other than those in ``but``)."""
    return [key for model in MODELS.values() if model not in but for key in model.asks if getattr(policy.privacy, key, None) is not None]


def to_policy(models) -> dict:
    """Policy keys of a list of privacy model objects; two models setting one key differently
    (two l-diversities, two sensitive columns) are an error."""
    if isinstance(models, PrivacyModel):
        models = [models]
    out: dict = {}
    for m in models:
        if type(m) not in MODELS.values():
            raise ConfigError(f"privacy model {type(m).__name__} cannot be given as an object (yet); use its policy keys, or one of {', '.join(t.__name__ for t in MODELS.values())}")
        for key, value in m.to_policy().items():
            if key in out and out[key] != value:
                raise ConfigError(f"privacy models disagree on {key}: {out[key]!r} and {value!r}")
            out[key] = value
    return out
