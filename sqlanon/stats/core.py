"""Statistics: the only code that turns a question into SQL and an answer back into Python values.

Everything a search asks is answered from **frequency sets**: the distinct tuples of integer-coded
quasi-identifier values with their counts (plus, when a model or metric needs them, the sensitive
value and the class value as extra keys). The source is scanned once to build the *base* frequency
set; a node's frequency set is rolled up from the smallest saved set it generalizes.

Generalizing a code is an inline lookup in a literal list, shaped by the dialect object
(:mod:`sqlanon.dialect`): DuckDB ``list_extract([..], code + 1)``, PostgreSQL
``(ARRAY[..])[code + 1]``, Spark ``ARRAY(..)[code]``. Statements are built for ``self.dialect``
and never read or change the engine; :meth:`Statistics.for_dialect` renders them for another.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.dialect import Dialect, get_dialect
from sqlanon.errors import ConfigError, HierarchyError, UnsatisfiableError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.hierarchy.keys import null_as_key, null_keyed
from sqlanon.hierarchy.model import NULL_KEY
from sqlanon.hierarchy import nulls as null_modes
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import Params, add_all, as_bigint, as_varchar, class_summary, col, cte_select, if_, lit, sum_, table_ref
from sqlanon.dialect import lookup
from sqlanon.privacy.needs import ClassNeeds, NodeStats
from sqlanon.stats.frequency import FrequencySet
from sqlanon.stats.memory import Memory
from sqlanon.stats.grouped_pass import GroupedPass
from sqlanon.stats.store import Node, SetStore
from sqlanon.stats.models import population_ctes, prepare_population, prepare_sensitive_hierarchy
from sqlanon.plan import Recoding
import sqlanon.stats.base_scan as base_scan
import sqlanon.stats.batch as batch
import sqlanon.stats.classes as classes
import sqlanon.stats.evaluate as evaluate
import sqlanon.stats.grouped_pass as grouped_pass
import sqlanon.stats.local as local
import sqlanon.stats.store as store

#: a node's extra aggregates, by name: given, or built once the roll-up's parameters are bound
Aggregates = Iterable[tuple[str, exp.Expr]] | Callable[[Params | None], Iterable[tuple[str, exp.Expr]]]

# ---------------------------------------------------------------------------------------------
# the requirement: privacy models + suppression budget, expressed as per-class predicates

QI_PREFIX = "q"
#: column types whose values hash as the text of their hierarchy's leaves (Statistics.hash_by_groups)
TEXT_TYPES = base_scan.TEXT_TYPES
#: with more QIs than this, the base scan and the release code each hierarchy of at most
#: :data:`INLINE_LEAVES` leaves inline instead of joining its table (:meth:`Statistics.inlined`):
#: DuckDB plans a statement of hundreds of joins in tens of seconds. Up to it the joins stay
#: (the shape measured on Adult at 10M rows)
INLINE_QIS = 12
INLINE_LEAVES = 64

#: every attribute a :class:`Statistics` holds (set in ``__init__``; tests/stats/test_stats_memory.py
#: fails on any other): a cache is a field of :attr:`Statistics.memory`, not a new attribute
FIELDS = (
    "engine", "source", "dialect", "source_item", "input_item", "qis", "hierarchies", "null_modes", "null_rows",
    "sensitive", "class_column", "needs", "keep_sets", "materialize_rows", "sets", "rows", "column_freqs",
    "sensitive_domain", "_map_names", "_pending_maps", "domain_table", "nodes_evaluated", "nodes_local", "local_rows",
    "_sql_cache", "memory", "_base_name_v", "_withheld_rows", "row_hash", "input_hash",
    "population", "pop_base", "pop_rows", "sensitive_hierarchy", "s_hier_table", "withheld", "grouped",
)  # fmt: skip


class Statistics:
    """Frequency sets of one source under one set of hierarchies, answered by SQL."""

    def __init__(
        self,
        engine,
        source: Source,
        qis: Sequence[str],
        hierarchies: Sequence[Hierarchy],
        sensitive: str | None = None,
        class_column: str | None = None,
        needs: ClassNeeds | None = None,
        keep_sets: int = 12,
        materialize_rows: int = 100_000,
        row_hash: bool = False,
        population: Source | None = None,
        sensitive_hierarchy: Hierarchy | None = None,
        dialect: Dialect | str | None = None,
        nulls: Mapping[str, str] | str | None = None,
        grouped: GroupedPass | None = None,
    ) -> None:
        if len(qis) != len(hierarchies):
            raise ConfigError("one hierarchy per quasi-identifier is required")
        if len(set(qis)) != len(qis):
            raise ConfigError(f"a quasi-identifier is listed twice: {list(qis)}")
        self.engine = engine
        self.source = source
        #: the dialect statements are built for (the engine's unless rendering for another)
        self.dialect: Dialect = get_dialect(dialect) if dialect is not None else engine.dialect
        #: the source's FROM item (named once by the engine: reading files is the engine's job)
        self.source_item: exp.Expr = engine.source_from(source)
        self.qis = list(qis)
        self.hierarchies = list(hierarchies)
        #: per QI how NULL is treated (:mod:`sqlanon.hierarchy.nulls`): value, suppress or refuse
        self.null_modes = null_modes.modes(nulls, self.qis)
        #: per QI the rows holding NULL there (counted by :meth:`prepare`)
        self.null_rows: list[int] = [0] * len(self.qis)
        self.sensitive = sensitive
        self.class_column = class_column
        self.needs = needs or ClassNeeds()
        self.keep_sets = keep_sets
        self.materialize_rows = materialize_rows
        #: the saved frequency sets (:mod:`sqlanon.stats.store`)
        self.sets = SetStore()
        self.rows = 0
        self.column_freqs: list[list[int]] = []
        self.sensitive_domain: list[tuple[str, int]] = []
        #: the QIs' leaf-code tables' names (:attr:`map_tables` registers the pending ones)
        self._map_names: list[str] = []
        self._pending_maps: set[int] = set()
        self.domain_table: str | None = None
        self.nodes_evaluated = 0
        #: of those, the nodes answered in-process over the fetched base set (:mod:`sqlanon.stats.local`)
        self.nodes_local = 0
        #: a base set of at most this many rows is fetched once and its full-domain nodes grouped
        #: in-process (:mod:`sqlanon.stats.local`); 0: every node by SQL
        self.local_rows = local.LOCAL_ROWS
        self._sql_cache: dict = {}
        #: every cache of the statistics, its modules' and the metrics' (:mod:`sqlanon.stats.memory`)
        self.memory = Memory()
        self._base_name_v: str | None = None
        #: per suppressing QI, its withheld rows (:meth:`_count_withheld`)
        self._withheld_rows: dict[int, int] = {}
        # with row_hash, the base scan also XORs a hash of every input row per group, so the
        # release can tie itself to its input without scanning the source again
        self.row_hash = row_hash
        self.input_hash: str | None = None
        # k-map / delta-presence: the population table, coded like the source (its own base set)
        self.population = population
        self.pop_base: FrequencySet | None = None
        self.pop_rows = 0
        # hierarchical t-closeness: the sensitive column's hierarchy, stored as (s, lvl, child, parent)
        self.sensitive_hierarchy = sensitive_hierarchy
        self.s_hier_table: str | None = None
        #: rows withheld from the search and suppressed in the release: NULL in a ``suppress`` QI
        #: (:meth:`prepare` counts them; the statistics read the other rows only)
        self.withheld = 0
        #: every input row (the FROM item of the withheld rows); ``source_item`` the rows kept
        self.input_item: exp.Expr = self.source_item
        self.source_item = self.kept_rows(self.source_item)
        if self.suppressing_nulls:  # the input hash is over every input row: the release takes it
            self.row_hash = False
        #: the source's rows grouped already (:mod:`sqlanon.stats.grouped_pass`), read by the base
        #: scan instead of the source when they serve it; None after the base scan
        self.grouped: GroupedPass | None = None
        if grouped is not None and grouped_pass.serves(grouped, self):
            self.grouped = grouped

    def for_dialect(self, dialect: Dialect | str) -> Statistics:
        """A copy that builds statements for ``dialect`` (``sqlanon sql --dialect``): same state,
        the source named as that dialect names it. The engine is neither read nor changed."""
        other = copy.copy(self)
        other.dialect = get_dialect(dialect)
        other.input_item = other.dialect.source_from(self.source)
        other.source_item = other.kept_rows(other.input_item)
        other._sql_cache = {}
        other.memory = self.memory.copy()
        other.grouped = None  # a script reads the source itself
        return other

    def qcol(self, i: int) -> str:
        return f"{QI_PREFIX}{i}"

    @property
    def qnames(self) -> list[str]:
        return [self.qcol(i) for i in range(len(self.qis))]

    @property
    def base(self) -> FrequencySet:
        """The base frequency set, saved by :meth:`prepare`."""
        assert self.sets.base is not None, "Statistics.prepare() has not run"
        return self.sets.base

    @base.setter
    def base(self, value: FrequencySet) -> None:
        self.sets.base = value

    def _create_base(self) -> None:
        """The base set's statement (built first: a kernel load holds the GIL), the memory it let go
        handed back, then the kernels load (``local.AFTER_SCAN``; with the scan if uncompiled)."""
        statement, load = self.base_query_create(), bool(self.qis) and not self.needs.any and int(self.local_rows or 0) > 0
        after = load and local.AFTER_SCAN and local.compiled()
        timer = local.warm_up_during() if load and not after else None
        try:
            self.engine.execute(statement)
        finally:
            if timer is not None:
                timer.cancel()
        self.engine.free_memory()  # the scan's hash tables: before the kernels and the fetched set
        if after:
            local.warm_up()

    @property
    def prepared(self) -> bool:
        """Whether :meth:`prepare` has saved the base frequency set."""
        return self.sets.base is not None

    @property
    def population_set(self) -> FrequencySet:
        """The population's base frequency set (k-map, delta-presence), saved when prepared."""
        assert self.pop_base is not None, "the population table has not been prepared"
        return self.pop_base

    @property
    def has_s(self) -> bool:
        return self.needs.sensitive and self.sensitive is not None

    @property
    def has_y(self) -> bool:
        return self.needs.majority_y and self.class_column is not None

    # -----------------------------------------------------------------------------------------
    # preparation: one scan of the source

    def prepare(self) -> None:
        self._check_columns()
        self._register_code_tables()
        try:
            self._count_withheld()
            self._create_base()
            self._read_base()
        finally:  # the grouped pass's groups are read by the base scan alone
            grouped, self.grouped = self.grouped, None
            grouped_pass.drop(self.engine, grouped)
        self.column_freqs = self._column_freqs()
        if self.has_s:
            self._prepare_sensitive_domain()
            if self.needs.emd_hierarchical:
                prepare_sensitive_hierarchy(self)
        if self.needs.population:
            prepare_population(self)

    def _check_columns(self) -> None:
        """The QIs, the sensitive and the class column are in the source; what the models and
        the metric read is given."""
        src_cols = self.source.column_names(self.engine)
        for name in self.qis:
            if name not in src_cols:
                raise ConfigError(
                    f"unknown quasi-identifier column {name!r} in {self.source.describe()}; "
                    f"columns are: {', '.join(src_cols)}"
                )
        for role, column in (("sensitive column", self.sensitive), ("class column", self.class_column)):
            if column is not None and column not in src_cols:
                raise ConfigError(f"unknown {role} {column!r} in {self.source.describe()}")
        if self.needs.sensitive and self.sensitive is None:
            raise ConfigError("this privacy model needs --sensitive-column")
        if self.needs.majority_y and self.class_column is None:
            raise ConfigError("this metric needs --class-column")

    def _register_code_tables(self) -> None:
        """Each QI's leaf-code table (a short one among many QIs only when asked for: :meth:`inlined`)."""
        for i, h in enumerate(self.hierarchies):
            name = self.engine.temp_name(f"h{i}")
            self._map_names.append(name)
            if self.inlined(i):  # the base scan codes it inline: its table only when asked for
                self._pending_maps.add(i)
            else:
                self.engine.register_columns(name, h.mapping_columns())

    def _read_base(self) -> None:
        """The base set's totals, its validation (NULLs, unmapped values) and the input hash, in
        one statement (on Spark each is a job)."""
        base_name = self._base_name
        totals = [sum_(col("cnt")), exp.Count(this=exp.Star())]
        params = Params() if self.dialect.binds_lists else None  # the leaf labels bound, not spelled out
        if self.row_hash:
            totals.append(exp.Anonymous(this="bit_xor", expressions=[self._group_hash(params) if self.hash_by_groups else col("h")]))
        row = self.engine.fetch_one(exp.select(*totals, *self._validation_sums()).from_(table_ref(base_name)), params or None)
        self._validate_base(row[len(totals):])
        self._add_null_leaves()
        self.rows, n_base = int(row[0] or 0), int(row[1] or 0)
        if self.row_hash:
            self.input_hash = format_input_hash(self.rows, row[2])
        self.sets.base = FrequencySet(base_name, tuple(0 for _ in self.qis), n_base)
        if self.rows == 0 and self.withheld:
            raise UnsatisfiableError(f"every row of {self.source.describe()} has NULL in a quasi-identifier whose NULLs are suppressed (nulls: suppress)")
        if self.rows == 0:
            raise ConfigError(f"input {self.source.describe()} has no rows")

    @property
    def hash_by_groups(self) -> bool:
        """Whether the input hash is taken over the base set's groups, not per row: every source
        column is a text QI, so a row's hash is its group's (the hash of its leaf labels), and
        ``cnt`` equal rows XOR to it when ``cnt`` is odd, to 0 when even: the same value as the
        per-row XOR (:func:`sqlanon.release.write.input_hash`) without hashing every row (what
        the per-row hash costs the base scan: docs/measurements.md)."""
        if not self.row_hash:
            return False
        return base_scan.hash_by_groups(self.source.columns(self.engine), self.qis)

    def _group_hash(self, params: Params | None = None) -> exp.Expr:
        """A base-set group's part of the input hash (:attr:`hash_by_groups`): the row hash of
        its leaf labels, in the source's column order, when its row count is odd. ``params``
        binds the label lists (DuckDB): spelled out, wide hierarchies took seconds to build and
        parse (docs/measurements.md)."""
        where = {name: i for i, name in enumerate(self.qis)}
        labels = [lookup(self.hierarchies[where[name]].leaves, col(self.qcol(where[name])), self.dialect, params) for name in self.source.column_names(self.engine)]
        odd = exp.EQ(this=exp.Mod(this=col("cnt"), expression=lit(2)), expression=lit(1))
        return exp.Case().when(odd, self.dialect.hash_of(labels))

    @property
    def _base_name(self) -> str:
        if self._base_name_v is None:
            self._base_name_v = self.engine.temp_name("fs0")
        return self._base_name_v

    @property
    def suppressing_nulls(self) -> bool:
        """Whether a QI suppresses its NULLs' rows (``nulls: suppress``)."""
        return "suppress" in self.null_modes

    def withheld_condition(self, alias: str = "src") -> exp.Expr | None:
        """A row is withheld (NULL in a ``suppress`` QI), or None when no QI suppresses NULLs."""
        parts = [exp.Is(this=col(name, alias), expression=exp.Null()) for name, mode in zip(self.qis, self.null_modes) if mode == "suppress"]
        return exp.or_(*parts) if parts else None

    def kept_rows(self, item: exp.Expr) -> exp.Expr:
        """The source's FROM item, without the withheld rows (:meth:`withheld_condition`)."""
        withheld = self.withheld_condition()
        if withheld is None:
            return item
        src = exp.alias_(item.copy(), "src", table=True, quoted=True)
        return exp.Subquery(this=exp.select(exp.Star()).from_(src).where(exp.Not(this=exp.Paren(this=withheld))))

    def _count_withheld(self) -> None:
        """Count the withheld rows (only when a QI suppresses its NULLs): one more scan of the
        source, or a sum over the grouped pass's groups (:mod:`sqlanon.stats.grouped_pass`)."""
        withheld = self.withheld_condition()
        if withheld is None:
            return
        which = [i for i, mode in enumerate(self.null_modes) if mode == "suppress"]
        row = self.engine.fetch_one(base_scan.withheld_query(self, which, withheld))
        self.withheld = int(row[0] or 0)
        self._withheld_rows = {i: int(n or 0) for i, n in zip(which, row[1:])}

    def null_code(self, i: int) -> int:
        """The code a NULL of QI ``i`` takes: its NULL leaf's (``value``; a hierarchy without one
        gets it last, so its code is the number of leaves: :meth:`_add_null_leaves`), else -2."""
        h = self.hierarchies[i]
        if self.null_modes[i] != "value":
            return -2
        code = h.null_code
        return len(h.rows) if code is None else code

    def encoded_select(self, source: Source | None = None, rows: exp.Expr | None = None) -> exp.Select:
        """The source joined to the leaf-code tables: ``q0..qn`` codes (-1 unmapped; NULL the
        NULL leaf's code, :meth:`null_code`, or -2).
        With ``source`` (the population table), the codes only. ``rows``: the FROM item coded
        instead of the source's rows (alias ``src``, the source's column names: the base scan's
        groups, :func:`sqlanon.stats.base_scan.grouped_rows`), which carries its own hash."""
        codes_only = source is not None
        if rows is not None:
            src = rows
        else:
            src = self.engine.source_from(source) if codes_only else self.source_item.copy()
            src = exp.alias_(src, "src", table=True, quoted=True) if not isinstance(src, exp.Alias) else src
        select = exp.select().from_(src)
        for i, (name, table) in enumerate(zip(self.qis, self._map_names)):
            if self.inlined(i):
                found = self.dialect.position(self.hierarchies[i].leaves, as_varchar(col(name, "src")))
            else:
                alias = f"h{i}"
                cond = exp.EQ(this=col("level_0", alias), expression=as_varchar(col(name, "src")))
                select = select.join(table_ref(table, alias=alias), on=cond, join_type="left", copy=False)
                found = col("code", alias)
            code = if_(
                exp.Is(this=col(name, "src"), expression=exp.Null()),
                lit(self.null_code(i)),
                exp.Coalesce(this=found, expressions=[lit(-1)]),
            )
            select = select.select(exp.alias_(code, self.qcol(i), quoted=True), copy=False)
        if codes_only:
            return select
        if self.has_s:
            assert self.sensitive is not None  # has_s says so
            select = select.select(exp.alias_(null_as_key(col(self.sensitive, "src")), "s", quoted=True))
        if self.has_y:
            assert self.class_column is not None  # has_y says so
            select = select.select(exp.alias_(null_as_key(col(self.class_column, "src")), "y", quoted=True))
        if self.row_hash and not self.hash_by_groups and rows is None:
            select = select.select(exp.alias_(self.dialect.row_hash(self.source.column_names(self.engine), "src"), "rh", quoted=True))
        return select

    @property
    def map_tables(self) -> list[str]:
        """The QIs' leaf-code tables (``code``, ``level_0`` .. ``level_h``), registered on the
        engine; a table the base scan did not need (:meth:`inlined`) is registered when first
        asked for (the top-down search joins them; an unmapped value's message reads them)."""
        for i in sorted(self._pending_maps):
            self.engine.register_columns(self._map_names[i], self.hierarchies[i].mapping_columns())
        self._pending_maps.clear()
        return self._map_names

    def inlined(self, i: int) -> bool:
        """Whether the base scan codes QI ``i``'s leaves inline (:meth:`Dialect.position`)
        rather than by joining its code table: with more than :data:`INLINE_QIS` QIs, for a
        hierarchy of at most :data:`INLINE_LEAVES` leaves (hundreds of joins took DuckDB tens of
        seconds to plan: docs/measurements.md)."""
        return len(self.qis) > INLINE_QIS and len(self.hierarchies[i].leaves) <= INLINE_LEAVES

    def base_query(self) -> exp.Select:
        """The base frequency set's select (:mod:`sqlanon.stats.base_scan`)."""
        return base_scan.base_query(self)

    def base_query_create(self) -> exp.Expr:
        return self.dialect.create_temp(self._base_name, self.dialect.clustered(self.base_query(), self.cluster_keys()))

    def cluster_keys(self) -> list[exp.Expr]:
        """A saved set's codes in the order its rows are stored in where the engine sorts them
        (:meth:`Dialect.clustered`): QIs by their number of leaves, the widest last (nodes
        generalize the wide QIs most, so rows that differ only there share a class)."""
        order = sorted(range(len(self.qis)), key=lambda i: (len(self.hierarchies[i].labels(0)), i))
        return [col(self.qcol(i)) for i in order]

    def _validation_sums(self) -> list[exp.Expr]:
        """Per QI the rows coded as NULL (:meth:`null_code`) and -1 (not in its hierarchy); rows whose sensitive or
        class value is NULL: sums over the base set, read with its totals (:meth:`prepare`)."""
        parts = []
        for i in range(len(self.qis)):
            q = col(self.qcol(i))
            parts.append(sum_(if_(exp.EQ(this=q, expression=lit(self.null_code(i))), col("cnt"), lit(0))))
            parts.append(sum_(if_(exp.EQ(this=q, expression=lit(-1)), col("cnt"), lit(0))))
        if self.has_s:
            parts.append(sum_(if_(exp.EQ(this=col("s"), expression=lit(NULL_KEY)), col("cnt"), lit(0))))
        return parts

    def _validate_base(self, row) -> None:
        """Refuse NULL or unmapped QI values and NULL sensitive/class values (``row``: the
        answers of :meth:`_validation_sums`)."""
        if not self.qis or row[0] is None:
            return  # no QIs, or an empty input (reported by prepare())
        withheld = self._withheld_rows
        self.null_rows = [withheld.get(i, int(row[2 * i] or 0)) for i in range(len(self.qis))]
        self._refuse_nulls()
        self._refuse_unmapped(row)
        k = 2 * len(self.qis)
        ordered = self.needs.emd_ordered or self.needs.emd_hierarchical
        if self.has_s and ordered and int(row[k] or 0):
            raise ConfigError(
                f"sensitive column {self.sensitive!r} has {int(row[k])} NULL value(s), which have no place in the order or hierarchy "
                "of ordered/hierarchical t-closeness; fill or filter them, or use t_distance equal (NULL is then a sensitive value of its own)"
            )

    def _refuse_nulls(self) -> None:
        """Refuse the NULLs of a QI whose NULLs are refused (``nulls: refuse``)."""
        refused = [f"{name!r} ({n:,} row{'s' if n > 1 else ''})" for name, n, mode in zip(self.qis, self.null_rows, self.null_modes) if n and mode == "refuse"]
        if refused:
            several = len(refused) > 1
            raise HierarchyError(
                f"quasi-identifier column{'s' if several else ''} {', '.join(refused)} {'have' if several else 'has'} NULL values (nulls: refuse); "
                "fill or filter them, or let NULL be a value (nulls: value) or suppress its rows (nulls: suppress)"
            )

    def _refuse_unmapped(self, row) -> None:
        """Refuse a QI value missing from its hierarchy (``row``: :meth:`_validation_sums`' answers)."""
        for i, name in enumerate(self.qis):
            unmapped = int(row[2 * i + 1] or 0)
            if unmapped:
                examples = self.unmapped_examples(i)
                n_distinct = self.unmapped_count(i)
                raise HierarchyError(
                    f"column {name!r}: {n_distinct} distinct value(s) in {unmapped} row(s) are missing from "
                    f"its hierarchy ({self.hierarchies[i].origin}), e.g. "
                    + ", ".join(repr(e) for e in examples)
                )

    def _add_null_leaves(self) -> None:
        """Give the NULL leaf (:meth:`Hierarchy.with_null_leaf`) to every ``value`` QI holding
        NULLs whose hierarchy has none: its rows are already coded as it (:meth:`null_code`).
        The hierarchy object changes in place (the searches' context holds the same object),
        and its mapping table is registered again."""
        for i, h in enumerate(self.hierarchies):
            if self.null_modes[i] == "value" and self.null_rows[i] and not h.has_null:
                self.add_null_leaf(i)

    def add_null_leaf(self, i: int) -> None:
        """Give QI ``i``'s hierarchy its NULL leaf (in place) and register its mapping table
        again; leaf frequencies counted already get the new leaf's (0 rows in the input)."""
        h = self.hierarchies[i]
        h.rows = h.with_null_leaf().rows
        name = self.engine.temp_name(f"h{i}")
        self.engine.register_columns(name, h.mapping_columns())
        self.map_tables[i] = name
        if len(self.column_freqs) > i:
            self.column_freqs = [f + [0] if j == i else f for j, f in enumerate(self.column_freqs)]

    def _unmapped_select(self, i: int) -> exp.Select:
        return base_scan.unmapped_select(self, i)

    def unmapped_examples(self, i: int, limit: int = 5) -> list[str]:
        q = self._unmapped_select(i).order_by(col("v")).limit(limit)
        return [r[0] for r in self.engine.fetch_all(q)]

    def unmapped_count(self, i: int) -> int:
        q = exp.select(exp.Count(this=exp.Star())).from_(exp.alias_(exp.Subquery(this=self._unmapped_select(i)), "u", table=True))
        return int(self.engine.scalar(q))

    def _column_freqs(self) -> list[list[int]]:
        """Rows per leaf code of every QI, in one statement over the base frequency set
        (:meth:`Dialect.grouped_sums`: a UNION ALL of one ``GROUP BY`` per QI, on Spark one
        ``GROUPING SETS``): on engines where each statement costs a job (Spark), one instead of
        one per QI."""
        if not self.qis:
            return []
        query = self.dialect.grouped_sums(self.base.table, [[self.qcol(i)] for i in range(len(self.qis))], ["code"], "i")
        freqs = [[0] * len(h.rows) for h in self.hierarchies]
        for i, code, n in self.engine.fetch_all(query):
            freqs[int(i)][int(code)] = int(n)
        return freqs

    def _prepare_sensitive_domain(self) -> None:
        q = exp.select(col("s"), sum_(col("cnt"))).from_(table_ref(self.base.table)).group_by(col("s"))
        domain = [(str(v), int(n)) for v, n in self.engine.fetch_all(q)]
        try:
            domain.sort(key=lambda vn: float(vn[0]))
        except ValueError:
            domain.sort(key=lambda vn: vn[0])
        self.sensitive_domain = domain
        name = self.engine.temp_name("sdom")
        self.engine.register_arrow(
            name,
            pa.table(
                {
                    "s": pa.array([v for v, _ in domain], pa.string()),
                    "rnk": pa.array(range(1, len(domain) + 1), pa.int32()),
                    "q": pa.array([n / self.rows for _, n in domain], pa.float64()),
                }
            ),
        )
        self.domain_table = name

    # -----------------------------------------------------------------------------------------
    # node frequency sets (the store: :mod:`sqlanon.stats.store`)

    @property
    def saved(self) -> list[FrequencySet]:
        """The saved frequency sets (the partial ones among them)."""
        return self.sets.saved

    @property
    def partials(self) -> set[str]:
        """The tables of the saved partial sets (:meth:`partial_levels`), never evicted."""
        return self.sets.partials

    def pick_set(self, node: Node) -> FrequencySet:
        """The smallest saved set ``node`` generalizes, saving a reused one (:func:`store.pick_set`)."""
        return store.pick_set(self, node)

    def has_room(self, rows: int) -> bool:
        """Whether a new saved set of ``rows`` rows fits the memory limit (:func:`store.has_room`)."""
        return store.has_room(self, rows)

    def keep_final(self, node: Node) -> None:
        """Save the released node's set when it is rolled up from a large one (:func:`store.keep_final`)."""
        store.keep_final(self, node)

    def save_set(self, node: tuple[int, ...], frm: FrequencySet) -> FrequencySet:
        """Roll ``frm`` up to ``node`` and save it (:func:`store.save_set`)."""
        return store.save_set(self, node, frm)

    def effective_values(self, i: int, level: int) -> float:
        """QI ``i``'s effective number of values at ``level`` (:func:`store.effective_values`)."""
        return store.effective_values(self, i, level)

    def partial_levels(self, node: tuple[int, ...], frm: FrequencySet) -> tuple[int, ...] | None:
        """The partial set's levels between ``frm`` and ``node``, or None (:func:`store.partial_levels`)."""
        return store.partial_levels(self, node, frm)

    def drop_all(self) -> None:
        """Drop every saved set (:func:`store.drop_all`)."""
        store.drop_all(self)

    def for_subset(self, base: FrequencySet, rows: int) -> Statistics:
        """A copy over a subset of the rows whose base set ``base`` (of ``rows`` rows) is saved
        already: the same engine, hierarchies and sensitive domain, its own store, statement
        cache and row-dependent memory (:meth:`Memory.for_subset`), its frequencies counted."""
        sub = copy.copy(self)
        sub.memory = self.memory.for_subset()
        sub.sets = SetStore(base)
        sub.rows = rows
        sub._sql_cache = {}
        sub.nodes_evaluated = 0
        sub.column_freqs = sub._column_freqs() if rows else [[0] * len(h.rows) for h in self.hierarchies]
        return sub

    def maps(self, node, frm: FrequencySet) -> list[list[int]]:
        """Per QI, the code map from ``frm``'s levels to the node's (or the recoding's codes)."""
        if isinstance(node, Recoding):
            return node.codes
        cache = self.memory.core.maps
        out = []
        for i, (h, lo, hi) in enumerate(zip(self.hierarchies, frm.levels, node)):
            key = (i, lo, hi)
            if key not in cache:
                cache[key] = h.level_to_level(lo, hi) if lo != hi else list(range(len(h.labels(lo))))
            out.append(cache[key])
        return out

    def generalized_select(self, node, frm: FrequencySet | None = None, params: Params | None = None) -> exp.Select:
        """The node's frequency set: ``SELECT g0.., [s], [y], SUM(cnt) FROM (recoded set) GROUP BY ..``.

        ``node`` is a tuple of levels or a :class:`sqlanon.plan.Recoding` (always from the base).
        """
        if isinstance(node, Recoding):
            frm = self.base
        else:
            frm = frm or self.pick_set(node)
        extras = [col("s")] * self.has_s + [col("y")] * self.has_y
        if not isinstance(node, Recoding) and tuple(int(v) for v in node) == tuple(frm.levels):
            # the set is the node's own: one row per class already (a saved set is grouped by its
            # codes and s, y), nothing to roll up: the input's risk reads the base set so, and a
            # saved optimum serves the figures of its release (at 10M Adult-like rows, a GROUP BY
            # of 1.6M rows into as many). On the bound-list path the text is cached with this
            # case apart (:meth:`evaluate`)
            return exp.select(*[col(n) for n in self.qnames], *extras, col("cnt"), copy=False).from_(table_ref(frm.table), copy=False)
        maps = self.maps(node, frm)
        gens = [exp.alias_(lookup(m, col(self.qcol(i)), self.dialect, params), self.qcol(i), quoted=True) for i, m in enumerate(maps)]
        inner = exp.select(*gens, *extras, col("cnt"), copy=False).from_(table_ref(frm.table), copy=False)
        keys = [col(n) for n in self.qnames] + [col("s")] * self.has_s + [col("y")] * self.has_y
        q = exp.select(*keys, exp.alias_(self.dialect.count_sum(col("cnt"), self.rows), "cnt", quoted=True), copy=False)
        q = q.from_(exp.alias_(exp.Subquery(this=inner), "r", table=True, quoted=True), copy=False)
        keys = [col(n) for n in self.qnames] + [col("s")] * self.has_s + [col("y")] * self.has_y
        return q.group_by(*keys, copy=False) if keys else q

    def class_ctes(self, node: Node, frm: FrequencySet | None = None, params: Params | None = None) -> tuple[list[tuple[str, exp.Expr]], str]:
        """CTEs ending in one row per equivalence class with the aggregates ``needs`` asks for
        (and, for k-map / delta-presence, ``pop_cnt``: the class's rows in the population)."""
        ctes, cls = classes.class_ctes(self, node, frm, params)
        if self.needs.population:
            more, cls = population_ctes(self, node, cls, params)
            ctes.extend(more)
        return ctes, cls

    def node_query(
        self,
        node: Node,
        ok: exp.Expr,
        aggregates: Aggregates = (),
        frm: FrequencySet | None = None,
        params: Params | None = None,
    ) -> exp.Select:
        """One statement: roll the node up and aggregate its classes (``ok`` = not suppressed).

        ``aggregates`` may be a callable ``f(params) -> [(name, expr)]`` so that its lookups are
        bound after the roll-up's (parameters are numbered in building order).
        """
        ctes, cls = self.class_ctes(node, frm, params)
        if callable(aggregates):
            aggregates = aggregates(params)
        flagged = exp.select(exp.Star(), exp.alias_(ok.copy(), "ok", quoted=True), copy=False).from_(table_ref(cls), copy=False)
        ctes.append(("flagged", flagged))
        final = exp.select(*class_summary(aggregates), copy=False).from_(table_ref("flagged"), copy=False)
        return cte_select(ctes, final)

    def evaluate(
        self,
        node: Node,
        ok: exp.Expr,
        aggregates: Aggregates = (),
        metric=None,
        extra_finals=(),
    ) -> NodeStats:
        """One node's statistics: ``aggregates`` by name in ``extra``. With ``metric`` (whose
        one-node aggregates ``aggregates`` then are, with ``extra_finals`` after them), the node
        may be answered in-process instead (:mod:`sqlanon.stats.local`), the same figures under
        the same names."""
        if not isinstance(node, Recoding):
            node = tuple(node)
            if (metric is not None or not aggregates) and local.applies(self, [node], ok, metric, extra_finals):
                return local.evaluate(self, [node], ok, metric, extra_finals)[0]
        frm = self.pick_set(node)
        if self.dialect.binds_lists:
            # hot path: every lookup is a bound parameter, so the text is cached per shape
            same = isinstance(node, tuple) and node == tuple(frm.levels)  # read as it is: no lookups
            params = Params(([] if same else self.maps(node, frm)) + (self.maps(node, self.population_set) if self.needs.population else []))
            built = aggregates(params) if callable(aggregates) else list(aggregates)
            key = (frm.table, same, ok.sql(), tuple((name, e.sql()) for name, e in built))
            sql = self._sql_cache.get(key)
            if sql is None:
                sql = self.dialect.render(self.node_query(node, ok, built, frm, Params()))
                self._sql_cache[key] = sql
            row = self.engine.fetch_one(sql, params)
        else:
            built = aggregates(None) if callable(aggregates) else list(aggregates)
            row = self.engine.fetch_one(self.node_query(node, ok, built, frm))
        self.nodes_evaluated += 1
        ns = self.node_stats(node, row, [name for name, _ in built])
        store.remember(self, [(node, frm, ns.classes)])
        return ns

    def evaluate_many(self, nodes: Sequence, ok: exp.Expr, aggregates=None, metric=None, extra_finals=()) -> list[NodeStats]:
        """Several nodes in one statement: the batch statement (node table joined to the set,
        :mod:`sqlanon.stats.batch`) when ``metric`` gives its batch parts and no sensitive or
        class aggregates are needed; else a ``UNION ALL`` of their roll-ups: the first route of
        :data:`sqlanon.stats.evaluate.ROUTES` that accepts them (in-process first).

        ``aggregates`` is ``None`` or a function ``node -> aggregates`` (as for :meth:`evaluate`);
        ``extra_finals`` are aggregates of every node that do not depend on it (they follow the
        metric's in the batch statement, :func:`sqlanon.stats.batch.build`, and are left to
        ``aggregates`` otherwise).
        """
        return evaluate.evaluate_many(self, nodes, ok, aggregates, metric, extra_finals)

    def node_stats(self, node, row, names) -> NodeStats:
        """A node's statistics from its statement's row (the summary, then ``names``' aggregates)."""
        extra = dict(zip(names, row[6:]))
        return NodeStats(node, int(row[0]), int(row[1] or 0), int(row[2] or 0), int(row[3] or 0), int(row[4] or 0), int(row[5] or 0), extra)

    def search_done(self) -> None:
        """The search is over: its in-process working memory goes (:func:`local.drop_search_memory`, the kept histogram sets)."""
        local.drop_search_memory(self)
        self.memory.histograms.drop_search()

    def class_histogram(self, node: Sequence[int]) -> list[tuple[int, int]]:
        """``(class size, number of classes)`` pairs for the node."""
        ctes, cls = self.class_ctes(node)
        final = exp.select(col("cnt"), exp.Count(this=exp.Star())).from_(table_ref(cls)).group_by(col("cnt")).order_by(col("cnt"))
        return [(int(a), int(b)) for a, b in self.engine.fetch_all(cte_select(ctes, final))]

    def _bad_classes_create(self, node, ok: exp.Expr, table: str, columns: list[exp.Expr], params: Params | None = None) -> exp.Expr:
        """A temp table of ``columns`` over the classes of ``node`` that ``ok`` does not release;
        ``params`` binds the code lists (run it with them)."""
        ctes, cls = self.class_ctes(node, params=params)
        ctes.append(("flagged", exp.select(exp.Star(), exp.alias_(ok, "ok", quoted=True)).from_(table_ref(cls))))
        final = exp.select(*columns).from_(table_ref("flagged")).where(exp.Not(this=col("ok")))
        return self.dialect.create_temp(table, cte_select(ctes, final))

    def bad_class_labels_create(self, node: Sequence[int], ok: exp.Expr, table: str, params: Params | None = None) -> exp.Expr:
        """A temp table of the suppressed classes, as generalized *labels* (for the release join);
        ``params`` binds the code and label lists (a statement whose text does not grow with the
        distinct values; spelled out, a large domain took seconds to build and parse:
        docs/measurements.md)."""
        names = node.labels if isinstance(node, Recoding) else [h.labels(lv) for h, lv in zip(self.hierarchies, node)]
        labels = [exp.alias_(null_keyed(names_i, lookup(names_i, col(self.qcol(i)), self.dialect, params)), self.qcol(i), quoted=True) for i, names_i in enumerate(names)]
        return self._bad_classes_create(node, ok, table, labels, params)

    def bad_class_keys_create(self, node: tuple[int, ...], ok: exp.Expr, table: str, params: Params | None = None) -> exp.Expr:
        """A temp table of the suppressed classes of a full-domain node as packed integer keys
        (``k0``.., :func:`sqlanon.stats.batch.words`: each QI's code at the node's level times
        its multiplier, summed per key word), for a release that joins them on one integer
        (:func:`sqlanon.release.write.release_select` with ``keys``) instead of every label."""
        mults = batch.multipliers(self)
        keys = []
        for w, word in enumerate(batch.words(self)):
            parts = [exp.Mul(this=as_bigint(col(self.qcol(i))), expression=lit(mults[i])) for i, _ in word]
            keys.append(exp.alias_(add_all(parts), f"k{w}", quoted=True))
        return self._bad_classes_create(node, ok, table, keys, params)

    def leaf_level_freq(self, i: int, level: int) -> list[int]:
        """Rows per level-``level`` code of QI ``i``: counted once per QI and level (numpy), not
        per call (the metrics' bounds ask per node: docs/measurements.md).
        Shared: do not change the list. Counted again when ``column_freqs`` is replaced (a subset)."""
        cache = self.memory.core.level_freqs
        if cache is None or cache[0] is not self.column_freqs:
            cache = self.memory.core.level_freqs = (self.column_freqs, {})
        out = cache[1].get((i, level))
        if out is None:
            h = self.hierarchies[i]
            codes = np.asarray(h.leaf_to_level(level), dtype=np.int64)
            rows = np.bincount(codes, weights=np.asarray(self.column_freqs[i], dtype=np.float64), minlength=len(h.labels(level)))
            out = cache[1][(i, level)] = rows.astype(np.int64).tolist()
        return out


def format_input_hash(rows: int, xor) -> str:
    """``rows:xor`` with the XOR as 16 hex digits (a signed 64-bit XOR, e.g. Spark's, is taken
    modulo 2**64 so every engine prints the same width)."""
    return f"{int(rows)}:{int(xor or 0) & 0xFFFFFFFFFFFFFFFF:016x}"


def distinct_values(engine, source: Source, column: str, limit: int | None = None) -> list[str]:
    """Distinct non-NULL values of a column, as strings (hierarchy builders; a small result)."""
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    v = as_varchar(col(column, "src"))
    q = exp.select(exp.alias_(v, "v", quoted=True)).distinct().from_(src).where(exp.Not(this=exp.Is(this=col(column, "src"), expression=exp.Null())))
    if limit:
        q = q.limit(limit)
    return [r[0] for r in engine.fetch_all(q)]


def count_rows(engine, source: Source) -> int:
    return int(engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(engine.source_from(source))))

