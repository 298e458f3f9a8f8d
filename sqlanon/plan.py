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
    def from_values(cls, values: list[list[str]]) -> Recoding:
        """Per QI, the released value of each leaf (in hierarchy row order)."""
        codes, labels = [], []
        for per_leaf in values:
            index: dict[str, int] = {}
            codes.append([index.setdefault(v, len(index)) for v in per_leaf])
            labels.append(list(index))
        return cls(codes, labels)

    @classmethod
    def from_node(cls, hierarchies, node) -> Recoding:
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
    #: local recoding: the rounds (:class:`sqlanon.search.lattice.local_recoding.Step`), the global optimum first
    local: list | None = None

    @classmethod
    def from_lattice_result(cls, search: str, stats, requirement, metric, result, bounds=None, **extra) -> Plan:
        """The plan of a full-domain node found by a lattice search (exact or heuristic);
        ``bounds`` (per-QI level bounds, given when the user bounded levels) are reported."""
        node = result.node
        if bounds is not None:
            extra["level_bounds"] = {q: list(b) for q, b in zip(stats.qis, bounds)}
        return cls(
            search=search,
            qis=stats.qis,
            recoding=Recoding.from_node(stats.hierarchies, node),
            transformation={q: int(level) for q, level in zip(stats.qis, node)},
            requirement=requirement,
            rows=stats.rows,
            suppressed_rows=result.node_stats.suppressed,
            metric_name=metric.name,
            metric_value=float(result.value),
            node=node,
            nodes_evaluated=result.nodes_evaluated,
            extra={"nodes_total": result.nodes_total, **extra},
        )
