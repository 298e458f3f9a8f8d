"""Privacy models, by name. Adding one is adding a module and a line here."""

from sqlanon.privacy.base import PrivacyModel, Requirement
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.privacy.l_diversity import DistinctLDiversity, EntropyLDiversity
from sqlanon.privacy.t_closeness import TCloseness

MODELS = {
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "t-closeness": TCloseness,
}

__all__ = ["MODELS", "PrivacyModel", "Requirement", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity", "TCloseness"]
