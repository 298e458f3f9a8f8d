"""Metrics, by name. Adding one is adding a module and a line here."""

from sqlanon.metrics.aecs import AECS
from sqlanon.metrics.base import Metric
from sqlanon.metrics.cm import CM
from sqlanon.metrics.discernibility import Discernibility
from sqlanon.metrics.entropy import Entropy
from sqlanon.metrics.height import Height
from sqlanon.metrics.lm import LM
from sqlanon.metrics.loss import Granularity, Loss, LossArithmetic
from sqlanon.metrics.precision import Precision

METRICS = {
    "precision": Precision,
    "height": Height,
    "lm": LM,
    "discernibility": Discernibility,
    "aecs": AECS,
    "cm": CM,
    "entropy": Entropy,
    "loss": Loss,
    "loss-arithmetic": LossArithmetic,
    "granularity": Granularity,
}

__all__ = ["METRICS", "Metric"]
