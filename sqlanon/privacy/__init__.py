"""Privacy models, by name (:data:`sqlanon.privacy.registry.MODELS`). Adding one is adding a
module, a line there and its page ``docs/models/<name>.md``."""

from sqlanon.privacy.base import PrivacyModel, Requirement
from sqlanon.privacy.registry import MODELS, requirement_from_policy
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.privacy.l_diversity import DistinctLDiversity, EntropyLDiversity
from sqlanon.privacy.t_closeness import TCloseness
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity
from sqlanon.privacy.k_map import KMap
from sqlanon.privacy.delta_presence import DeltaPresence

# every registered model class by its class name (a new model needs no line here)
globals().update({model.__name__: model for model in MODELS.values()})

__all__ = ["MODELS", "PrivacyModel", "Requirement", "requirement_from_policy", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity", "TCloseness", "KMap", "DeltaPresence"]
__all__ += sorted({model.__name__ for model in MODELS.values()} - set(__all__))
