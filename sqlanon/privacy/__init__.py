"""Privacy models, by name. Adding one is adding a module and a line here."""

from sqlanon.privacy.base import PrivacyModel, Requirement
from sqlanon.privacy.k_anonymity import KAnonymity
from sqlanon.privacy.l_diversity import DistinctLDiversity, EntropyLDiversity
from sqlanon.privacy.t_closeness import TCloseness
from sqlanon.privacy.recursive_cl import RecursiveCLDiversity
from sqlanon.privacy.k_map import KMap
from sqlanon.privacy.delta_presence import DeltaPresence

MODELS = {
    "k-anonymity": KAnonymity,
    "distinct-l-diversity": DistinctLDiversity,
    "entropy-l-diversity": EntropyLDiversity,
    "recursive-cl-diversity": RecursiveCLDiversity,
    "t-closeness": TCloseness,  # equal, ordered or hierarchical distance
    "k-map": KMap,
    "delta-presence": DeltaPresence,
}

__all__ = ["MODELS", "PrivacyModel", "Requirement", "KAnonymity", "DistinctLDiversity", "EntropyLDiversity", "RecursiveCLDiversity", "TCloseness", "KMap", "DeltaPresence"]
