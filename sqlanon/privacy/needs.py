"""Which per-class aggregates a node query must compute (:class:`ClassNeeds`: what privacy models
and metrics declare, and what every statement that builds classes reads), and what it returns
(:class:`NodeStats`: the node's classes, rows and suppression, with the extra aggregates)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ClassNeeds:
    """Which per-class aggregates a node query must compute."""

    distinct_s: bool = False
    entropy_s: bool = False
    emd_equal: bool = False
    emd_ordered: bool = False
    majority_y: bool = False
    #: recursive (c,l)-diversity: ``top_s`` (r1) and ``tail_s`` (r_l + ... + r_m); the l (0 = not asked)
    recursive_l: int = 0
    #: hierarchical t-closeness: ``emd_hier`` (ground distance from the sensitive hierarchy)
    emd_hierarchical: bool = False
    #: k-map / delta-presence: ``pop_cnt``, the class's rows in the population table
    population: bool = False
    #: enhanced beta-likeness: ``blike_max`` and ``blike_ln`` (the largest relative gain, and with ln q)
    beta_likeness: bool = False
    #: delta-disclosure privacy: ``dd_max`` (the largest |log2(p/q)|) and ``distinct_s``
    delta_disclosure: bool = False
    #: a table-level model whose predicate ranks the class table (average re-identification risk)
    ranked: bool = False

    @property
    def sensitive(self) -> bool:
        return (self.distinct_s or self.entropy_s or self.emd_equal or self.emd_ordered or bool(self.recursive_l) or self.emd_hierarchical
                or self.beta_likeness or self.delta_disclosure)

    @property
    def any(self) -> bool:
        """Whether anything beyond the class count is asked."""
        return any(getattr(self, name) for name in self.__dataclass_fields__)

    def names(self) -> frozenset[str]:
        return frozenset(n for n in self.__dataclass_fields__ if getattr(self, n))

    def merge(self, other: ClassNeeds) -> ClassNeeds:
        return ClassNeeds(**{k: getattr(self, k) or getattr(other, k) for k in self.__dataclass_fields__})


@dataclass
class NodeStats:
    node: tuple[int, ...]
    classes: int
    rows: int
    min_class: int
    max_class: int
    suppressed: int
    bad_classes: int
    extra: dict = field(default_factory=dict)

    def within(self, budget: int) -> bool:
        return self.suppressed <= budget
