"""The memory of one :class:`~sqlanon.stats.core.Statistics`: every cache its modules and the
metrics keep, one typed field each, in place of names set on the object.

``stats.memory`` is made once in ``Statistics.__init__``; a module reads and writes its own group
(``stats.memory.batch.sql``, ``stats.memory.local.meets``, ``stats.memory.metrics.loss``). A field
that is ``None`` has not been computed yet. :meth:`Memory.copy` is what a copy of the statistics
(another dialect, a subset of the rows) starts from: the containers computed so far are shared,
what either computes later is its own (as the names set on a shallow copy of an object were).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields, replace
from typing import Any, TypeVar


@dataclass
class CoreMemory:
    """:mod:`sqlanon.stats.core`'s caches."""

    #: ``(QI, from level, to level)`` -> the code map between them (:meth:`Statistics.maps`)
    maps: dict[tuple[int, int, int], list[int]] = field(default_factory=dict)
    #: ``(column_freqs it was counted from, {(QI, level): rows per code})`` (:meth:`Statistics.leaf_level_freq`)
    level_freqs: tuple[list[list[int]], dict[tuple[int, int], list[int]]] | None = None


@dataclass
class BatchMemory:
    """:mod:`sqlanon.stats.batch`'s caches: what a batch statement is built from, per metric."""

    #: metric key -> whether the metric gives batch terms (:func:`batch.supported`)
    supported: dict[Any, bool] = field(default_factory=dict)
    #: the packed key's words: per word ``(QI, multiplier)`` pairs (:func:`batch.words`)
    words: list[list[tuple[int, int]]] | None = None
    #: ``(source levels, used levels)`` -> the wide key parts (:func:`batch.wide_parts`)
    wide: dict[Any, Any] = field(default_factory=dict)
    #: the QI whose level splits a batch into groups (:func:`batch.group_key`)
    group_key: int | None = None
    #: metric key -> the name of its values table (:func:`batch.register_values`)
    values_tables: dict[Any, Any] = field(default_factory=dict)
    #: metric key -> the names of its batch finals (:func:`batch.final_names`)
    final_names: dict[Any, list[str]] = field(default_factory=dict)
    #: a batch statement's shape -> its text, lists bound (:func:`batch.statement`)
    sql: dict[Any, str] = field(default_factory=dict)


@dataclass
class DeltaMemory:
    """:mod:`sqlanon.stats.deltas`'s caches."""

    #: ``(QI, low, level)`` -> per code its part of the packed key (:func:`deltas.key_values`)
    key_values: dict[tuple[int, int, int], list[int]] = field(default_factory=dict)
    #: ``(QI, low, ref, level)`` -> per code its key's gain (:func:`deltas.delta_values`)
    delta_values: dict[tuple[int, int, int, int], list[int]] = field(default_factory=dict)
    #: metric key -> its split finals, or None (:func:`deltas.split_finals`)
    finals: dict[Any, Any] = field(default_factory=dict)
    #: the keyed sets' table names, the same every statement (:func:`deltas._tables`)
    tables: list[str] = field(default_factory=list)
    #: a statement's shape -> its text, lists bound (:func:`deltas._statement`)
    sql: dict[Any, str] = field(default_factory=dict)


@dataclass
class MarginalMemory:
    """:mod:`sqlanon.stats.marginals`' caches."""

    #: per QI, per level, the code at that level of every leaf code (:func:`marginals.level_maps`)
    level_maps: list[list[Any]] | None = None
    #: ``(k, triples)`` -> the rare subsets (:func:`marginals.subset_rare`)
    subset_rare: dict[Any, Any] = field(default_factory=dict)


#: the fields of :class:`LocalMemory` that are the search's: kept roll-ups, stepping stones, moved
#: key words and working buffers (:meth:`LocalMemory.drop_search`; the fetched set stays)
SEARCH_FIELDS = ("meets", "stones", "keyed", "scratch")


@dataclass
class LocalMemory:
    """The in-process path's state (:mod:`sqlanon.stats.local`)."""

    #: the bytes the in-process path may hold (:func:`sqlanon.stats.local.sets.budget`), None:
    #: not asked yet
    budget: int | None = None
    #: the figures it came from (:class:`sqlanon.stats.local.sets.Budget`), None: not asked yet
    budget_figures: Any = None
    #: ``(base set, row cap, whether it goes in-process, why)``: the last decision of
    #: :func:`sqlanon.stats.local.sets.enabled`
    route: tuple[Any, int, bool, str] | None = None
    #: ``(base set it was fetched from, the fetched set)``
    set: tuple[Any, Any] | None = None
    #: the key layout of the fetched set
    layout: Any = None
    #: ``(predicate, metric, finals)`` -> the compiled program (or None)
    programs: dict[Any, Any] = field(default_factory=dict)
    #: ``(fetched set, its leaf codes, counts and keys)``
    leaves: tuple[Any, Any] | None = None
    #: levels -> the kept roll-up (the search's; most recent last)
    meets: dict[Any, Any] = field(default_factory=dict)
    #: levels -> the kept stepping stone (the search's)
    stones: dict[Any, Any] = field(default_factory=dict)
    #: the kept moved key words (the search's)
    keyed: list[Any] = field(default_factory=list)
    #: the roll-ups' working buffers (the search's)
    scratch: Any = None

    def drop_search(self) -> None:
        """Let the search's roll-ups, stones, moved keys and buffers go (:data:`SEARCH_FIELDS`;
        new containers: a copy of the statistics holding the old ones keeps them)."""
        fresh = LocalMemory()
        for name in SEARCH_FIELDS:
            setattr(self, name, getattr(fresh, name))


@dataclass
class HistogramMemory:
    """The in-process model route's state (:mod:`sqlanon.stats.histograms`)."""

    #: ``(base set it was fetched from, (leaf codes, sensitive histograms) or None)``
    set: tuple[Any, Any] | None = None
    #: ``(predicate, metric, finals)`` -> ``(metric's row parts, finals)``, or None: not evaluable
    programs: dict[Any, Any] = field(default_factory=dict)
    #: levels -> a set rolled up to them (codes, histograms): evaluated nodes' classes and meets
    kept: dict[Any, Any] = field(default_factory=dict)
    #: the kept sets' rows, summed
    kept_rows: int = 0
    #: the kept sets' index (slots of levels, levels as a matrix, rows; histograms._index), None: to build
    index: Any = None
    #: every QI's code maps between its levels in one array ``(flat, offsets: QI x low x level,
    #: widths: QI x level)`` for the compiled roll-up, None: to build
    table: Any = None
    #: the sensitive hierarchy's levels as matrices (hierarchical t-closeness)
    hier: Any = None
    #: ``(QI, low, level)`` -> the code map between the levels
    maps: dict[Any, Any] = field(default_factory=dict)
    #: ``(metric part, QI, level)`` -> its values over the codes (the search's metric)
    parts: dict[Any, Any] = field(default_factory=dict)

    def drop_search(self) -> None:
        """Let the search's kept sets go (the fetched set stays)."""
        self.kept, self.kept_rows, self.index, self.parts = {}, 0, None, {}


@dataclass
class MetricMemory:
    """The metrics' data-free bound tables (:mod:`sqlanon.metrics`)."""

    #: ``(QI, level)`` -> the column's entropy (:mod:`sqlanon.metrics.entropy`)
    entropy: dict[Any, float] = field(default_factory=dict)
    #: ``(node, weights)`` -> the LM prior bound (:mod:`sqlanon.metrics.lm`)
    lm: dict[Any, float] = field(default_factory=dict)
    #: ``(node, g, aggregate, weights)`` -> the Loss prior bound (:mod:`sqlanon.metrics.loss`)
    loss: dict[Any, float] = field(default_factory=dict)
    #: ``(kind, QI, level)`` -> the Loss prior's per-QI term
    loss_prior_terms: dict[Any, float] = field(default_factory=dict)
    #: ``(metric, QI, level)`` -> the QI's released sum
    loss_sums: dict[Any, float] = field(default_factory=dict)


@dataclass
class Memory:
    """Every cache of one :class:`Statistics`, grouped by the module that keeps it."""

    core: CoreMemory = field(default_factory=CoreMemory)
    batch: BatchMemory = field(default_factory=BatchMemory)
    deltas: DeltaMemory = field(default_factory=DeltaMemory)
    marginals: MarginalMemory = field(default_factory=MarginalMemory)
    local: LocalMemory = field(default_factory=LocalMemory)
    metrics: MetricMemory = field(default_factory=MetricMemory)
    histograms: HistogramMemory = field(default_factory=HistogramMemory)

    def copy(self) -> Memory:
        """A copy for a copy of the statistics: each group copied, the containers filled so far
        shared, the empty ones new (what either fills later is its own)."""
        return Memory(_copied(self.core), _copied(self.batch), _copied(self.deltas), _copied(self.marginals), _copied(self.local), _copied(self.metrics), _copied(self.histograms))

    def for_subset(self) -> Memory:
        """:meth:`copy` for the statistics of a subset of the rows: the caches that depend on
        the rows (the metrics' bounds from the rows per value, the rare subsets) start empty."""
        out = self.copy()
        out.metrics = replace(out.metrics, entropy={}, lm={}, loss={})
        out.marginals.subset_rare = {}
        return out


_Group = TypeVar("_Group", CoreMemory, BatchMemory, DeltaMemory, MarginalMemory, LocalMemory, MetricMemory, HistogramMemory)


def _copied(group: _Group) -> _Group:
    """A shallow copy of ``group`` whose empty containers are new ones."""
    out = copy.copy(group)
    for f in fields(group):
        value = getattr(group, f.name)
        if isinstance(value, (dict, list, set)) and not value:
            setattr(out, f.name, type(value)())
    return out
