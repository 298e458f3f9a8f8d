"""The privacy models, by name: a plain dict (like sqlglot's optimizer ``RULES``). Adding a model
is adding its module, a line here and its page ``docs/models/<name>.md``; the policy (its privacy
section and the CLI flags, from :data:`POLICY_KEYS`), the API's model objects, the class
aggregates (:mod:`sqlanon.privacy.aggregates`) and the checker all read this dict.

>>> sorted(MODELS)[:3]
['average-risk', 'delta-disclosure', 'delta-presence']
>>> list(POLICY_KEYS)[:4]
['k', 'l', 'l_diversity', 'sensitive_column']
"""

from __future__ import annotations

from sqlanon.errors import ConfigError
from sqlanon.privacy.safepub import KEYS as SAFEPUB_KEYS
from sqlanon.privacy.base import MAX_SUPPRESSION, PrivacyModel, Requirement
from sqlanon.privacy.average_risk import AverageRisk
from sqlanon.privacy.beta_likeness import EnhancedBetaLikeness
from sqlanon.privacy.delta_disclosure import DeltaDisclosure
from sqlanon.privacy.delta_presence import DeltaPresence
from sqlanon.privacy.grassberger_l_diversity import GrassbergerLDiversity
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.privacy.k_map import KMap
from sqlanon.privacy.figure import Figure
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.l_diversity import DistinctLDiversity, EntropyLDiversity
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity
from sqlanon.privacy.sample_uniqueness import SampleUniqueness
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
    "sample-uniqueness": SampleUniqueness,
    "grassberger-l-diversity": GrassbergerLDiversity,
}


def _policy_keys() -> dict[str, PolicyKey]:
    keys: dict[str, PolicyKey] = {}
    for key in [k for model in MODELS.values() for k in model.policy_keys] + [MAX_SUPPRESSION, *SAFEPUB_KEYS]:
        keys[key.name] = keys[key.name].merged(key) if key.name in keys else key
    return keys


#: the privacy section of the policy, key by key: every model's declared keys (in registry order;
#: a key two models declare once, with the choices of both), the suppression budget, SafePub's
POLICY_KEYS: dict[str, PolicyKey] = _policy_keys()


def figures() -> dict[str, Figure]:
    """The models' measured figures in ``sqlanon check``, by model name, in registry order (read
    at the call: a model registered later is checked too)."""
    return {name: model.figure for name, model in MODELS.items() if model.figure is not None}


def check_keys() -> dict[str, PolicyKey]:
    """The check's model options: every key a figure reads, once, in registry order, with its
    policy declaration (its type and help; the budget's is the requirement's)."""
    declared = {key.name: key for model in MODELS.values() for key in model.policy_keys} | {MAX_SUPPRESSION.name: MAX_SUPPRESSION}
    return {key: declared[key] for figure in figures().values() for key in figure.keys}


def check_choices(privacy) -> None:
    """A text key of the privacy section outside its declared choices is a ConfigError naming them."""
    for key in POLICY_KEYS.values():
        value = getattr(privacy, key.name)
        if key.choices and value is not None and value not in key.choices:
            raise ConfigError(f"{key.name} must be {', '.join(key.choices[:-1])} or {key.choices[-1]}, got {value!r}")


def validate(policy) -> None:
    """Key combinations of every model, before any scan (a key of a model that is not asked for,
    or a model without the keys it needs, is a ConfigError naming it; a text key outside its
    choices too)."""
    check_choices(policy.privacy)
    for model in MODELS.values():
        model.validate_policy(policy)


def requirement_from_policy(policy, session=None) -> tuple[Requirement, dict]:
    """The policy's requirement (every asked model, in registry order, but those an asked model
    stands in for; the budget is set by :meth:`Requirement.bind` once the table's rows are known)
    and the extra :class:`Statistics` keywords its models need (``population``,
    ``sensitive_hierarchy``)."""
    validate(policy)
    asked = [m for model in MODELS.values() for m in model.from_policy(policy, session)]
    replaced = {name for m in asked for name in m.replaces}
    requirement = Requirement([], max_suppression=policy.privacy.max_suppression)
    extras: dict = {}
    for m in asked:
        if m.name in replaced:
            continue
        requirement.add(m)
        for key, value in m.statistics_extras(policy, session).items():
            extras.setdefault(key, value)
    return requirement, extras


def stands_in_for_k(policy) -> bool:
    """Whether a model that needs no k-anonymity is asked (then --k may be left out: k is 1)."""
    return any(model.replaces_k and model.asked(policy) for model in MODELS.values())


def asking_keys(policy, but=(KAnonymity,)) -> list[str]:
    """The policy keys given that ask for a model (other than those in ``but``)."""
    return [key for model in MODELS.values() if model not in but for key in model.asks if getattr(policy.privacy, key) is not None]


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
