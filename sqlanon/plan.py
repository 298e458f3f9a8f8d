"""Node / Plan: what a search decides.

* a lattice **node** is a tuple of levels, one per QI (full-domain generalization);
* a :class:`Recoding` is any per-QI map ``leaf -> released value`` (a flexible cut of the tree,
  numeric intervals, a node rendered as such): ``codes[i][leaf_code]`` is the released value's code
  and ``labels[i][code]`` its text;
* a :class:`Plan` is a recoding plus what is suppressed and what it achieves: the release writer
  needs nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Recoding:
    codes: list[list[int]]
    labels: list[list[str]]

    @classmethod
    def from_values(cls, values: list[list[str]]) -> "Recoding":
        """Per QI, the released value of each leaf (in hierarchy row order)."""
        codes, labels = [], []
        for per_leaf in values:
            index: dict[str, int] = {}
            codes.append([index.setdefault(v, len(index)) for v in per_leaf])
            labels.append(list(index))
        return cls(codes, labels)

    @classmethod
    def from_node(cls, hierarchies, node) -> "Recoding":
        return cls(
            [list(h.leaf_to_level(level)) for h, level in zip(hierarchies, node)],
            [list(h.labels(level)) for h, level in zip(hierarchies, node)],
        )

    def values(self, i: int) -> list[str]:
        return [self.labels[i][c] for c in self.codes[i]]


@dataclass
class Plan:
    """A final decision, ready to be written."""

    search: str
    qis: list[str]
    recoding: Recoding
    transformation: dict[str, Any]
    requirement: Any
    rows: int
    suppressed_rows: int
    metric_name: str
    metric_value: float
    node: tuple[int, ...] | None = None
    nodes_evaluated: int = 0
    extra: dict = field(default_factory=dict)
    #: local recoding: the rounds (:class:`sqlanon.local_recoding.Step`), the global optimum first
    local: list | None = None
