"""Which per-class aggregates a node query must compute (:class:`ClassNeeds`: the union of the
aggregate names privacy models and metrics declare, and what every statement that builds classes
reads), how a model declares one (:class:`Aggregate`), and what a node query returns
(:class:`NodeStats`: the node's classes, rows and suppression, with the extra aggregates).

A model declares its aggregates in its own module (``DISTINCT_S = Aggregate("distinct_s", ...)``)
and asks for them by name (``needs = ClassNeeds(DISTINCT_S)``); the statements that build classes
assemble the asked ones (:mod:`sqlanon.privacy.aggregates`):

>>> needs = ClassNeeds(distinct_s=True).merge(ClassNeeds(majority_y=True))
>>> sorted(needs.names()), needs.distinct_s, needs.sensitive, needs.population
(['distinct_s', 'majority_y'], True, True, False)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlglot import exp

#: ``(column alias, aggregate expression)`` pairs: what an aggregate's forms build
Columns = list[tuple[str, exp.Expr]]


@dataclass(frozen=True)
class Aggregate:
    """A per-class aggregate, by name, as a model declares it.

    * ``value``: its aggregates over a class's **per-sensitive-value rows** (one row per class and
      sensitive value ``s`` with its ``cnt``; with ``shares`` also the class total ``tot`` and the
      value's share of the table ``q``; with ``ranked`` its rank ``rn`` in its class by count,
      largest first), given the run's needs;
    * ``histogram``: the same columns over a class's **histogram** (``h0 .. h{m-1}``: the class's
      rows with the j-th sensitive value of the table, beside ``cnt``), given the table's shares
      ``q`` of its values (small domains: :mod:`sqlanon.stats.batch`);
    * neither: built by the statement that joins it in (:mod:`sqlanon.stats.models`: ordered and
      hierarchical EMD, population counts; ``ranked``: a window over the class table).

    ``sensitive``: it reads the sensitive column; ``with_names``: the other aggregates it needs
    (delta-disclosure counts the values a class holds: ``distinct_s``); ``column``: False for a
    name that asks no column at all, only a search that honours it (estimated k-map's class-size
    floor, derived from the sample's size before the search)."""

    name: str
    value: Callable[[ClassNeeds], Columns] | None = None
    histogram: Callable[[ClassNeeds, list[float]], Columns] | None = None
    shares: bool = False
    ranked: bool = False
    sensitive: bool = True
    with_names: tuple[str, ...] = ()
    column: bool = True

    def __post_init__(self) -> None:
        DECLARED.setdefault(self.name, self)


#: every aggregate declared, by name, in declaration order (a model module declares its own at
#: import; importing this module imports the package :mod:`sqlanon.privacy` first, which imports
#: every registered model)
DECLARED: dict[str, Aggregate] = {}

#: a table-level model's predicate ranks the class table (a window: one node per statement)
RANKED = Aggregate("ranked", sensitive=False)


@dataclass(frozen=True, init=False)
class ClassNeeds:
    """The per-class aggregates a node query must compute: a set of declared aggregate names
    (and the l of recursive (c,l)-diversity, its ``rn >= l`` tail)."""

    asked: frozenset[str] = field(default_factory=frozenset)
    #: recursive (c,l)-diversity: ``top_s`` (r1) and ``tail_s`` (r_l + ... + r_m); the l (0 = not asked)
    recursive_l: int = 0

    def __init__(self, *aggregates: Aggregate | str, recursive_l: int = 0, **flags: bool) -> None:
        names = {a if isinstance(a, str) else a.name for a in aggregates} | {name for name, on in flags.items() if on}
        if recursive_l:
            names.add("recursive_l")
        for name in list(names):
            declared = DECLARED.get(name)
            names.update(declared.with_names if declared is not None else ())
        object.__setattr__(self, "asked", frozenset(names))
        object.__setattr__(self, "recursive_l", int(recursive_l))

    def names(self) -> frozenset[str]:
        """The aggregates asked, by name."""
        return self.asked

    def merge(self, other: ClassNeeds) -> ClassNeeds:
        return ClassNeeds(*self.asked, *other.asked, recursive_l=self.recursive_l or other.recursive_l)

    @property
    def any(self) -> bool:
        """Whether anything beyond the class count is asked."""
        return any(name not in DECLARED or DECLARED[name].column for name in self.asked)

    @property
    def sensitive(self) -> bool:
        """Whether an asked aggregate reads the sensitive column."""
        return any(name in DECLARED and DECLARED[name].sensitive for name in self.asked)

    # -- the names other rooms read (statements joining in what they build themselves) ----------

    @property
    def distinct_s(self) -> bool:
        return "distinct_s" in self.asked

    @property
    def entropy_s(self) -> bool:
        return "entropy_s" in self.asked

    @property
    def emd_equal(self) -> bool:
        return "emd_equal" in self.asked

    @property
    def emd_ordered(self) -> bool:
        return "emd_ordered" in self.asked

    @property
    def emd_hierarchical(self) -> bool:
        return "emd_hierarchical" in self.asked

    @property
    def majority_y(self) -> bool:
        return "majority_y" in self.asked

    @property
    def population(self) -> bool:
        return "population" in self.asked

    @property
    def ranked(self) -> bool:
        return "ranked" in self.asked


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
