"""Spark SQL: 0-based arrays (sqlglot does not shift indexes, so lookups are built 0-based here),
``CACHE TABLE t AS SELECT`` for temporary tables (sqlglot renders ``CREATE TEMPORARY TABLE`` as a
lazy ``TEMPORARY VIEW``, which would rescan the source at every use), ``parquet.`path``` sources,
``xxhash64`` row hashes. Files are written by the engine through Spark's writer
(:class:`sqlanon.engine.spark.SparkEngine`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.dialect.base import Dialect
from sqlanon.expr.atoms import NODE_ID, col, literal
from sqlanon.expr.atoms import table_ref


class SparkDialect(Dialect):
    name = "spark"
    array_base = 0
    add_column_if_not_exists = False
    updatable_temps = False
    #: whole-stage code generation: the Java source of a plan is compiled (and then warmed up by
    #: the JVM) once per distinct source, and a batch statement narrowed to its nodes' levels is a
    #: new source at almost every round (whole searches and first runs slower with narrowed
    #: statements: docs/measurements.md). Lookups keep their array shape too (an identity map is not collapsed
    #: to the column), so a roll-up's code does not depend on the levels it maps between
    compiles_shapes = True

    def element_at(self, array: exp.Expr, code: exp.Expr) -> exp.Expr:
        """``array[code]``: Spark's subscript is 0-based, like our codes."""
        return exp.Bracket(this=array, expressions=[code])

    def create_temp(self, name: str, query: exp.Expr) -> exp.Expr:
        """``CACHE TABLE t AS SELECT ..``: a temporary view whose rows are computed and cached now."""
        return exp.Cache(this=table_ref(name), lazy=False, expression=query)

    def clustered(self, query: exp.Select, keys: Sequence[exp.Expr]) -> exp.Select:
        """``.. SORT BY keys``: each partition of the cached set sorted by its codes, the widest
        QI last (no exchange: the grouping's partitions, sorted where they are). A batch
        statement runs every node over the set's rows in this order, and rows side by side then
        fall into the same class of most nodes (those generalizing the QIs they differ in), so
        the class hash table is hit where it was just hit, in the CPU's cache, instead of at a
        random place (the set as the grouping leaves it is in hash order): the rounds and the whole
        search are faster sorted, and no slower when the set is streamed (docs/measurements.md)."""
        query.set("sort", exp.Sort(expressions=[exp.Ordered(this=k, nulls_first=True) for k in keys]))
        return query

    def values_table(self, name: str, table) -> exp.Expr:
        """``CREATE OR REPLACE TEMPORARY VIEW t AS SELECT .. FROM VALUES ..``: literal rows only,
        so a view costs nothing to re-read."""
        return exp.Create(
            this=table_ref(name), kind="VIEW", replace=True,
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
            expression=self._values_select(table),
        )

    def source_setup(self, source) -> list[exp.Expr]:
        """A CSV input becomes the view ``source`` through Spark's CSV reader (every column a string)."""
        if source.kind != "csv":
            return []
        options = [
            exp.Property(this=exp.Literal.string("path"), value=exp.Literal.string(source.path)),
            exp.Property(this=exp.Literal.string("header"), value=exp.Literal.string("true")),
            exp.Property(this=exp.Literal.string("sep"), value=exp.Literal.string(source.delimiter or ",")),
        ]
        props = exp.Properties(expressions=[exp.TemporaryProperty(), exp.FileFormatProperty(this=exp.var("CSV")), exp.OptionsProperty(expressions=options)])
        return [exp.Create(this=table_ref("source"), kind="VIEW", replace=True, properties=props)]

    def drop_temp(self, name: str) -> exp.Expr:
        """``DROP VIEW IF EXISTS t`` (dropping a cached temporary view also uncaches it)."""
        return exp.Drop(tables=[table_ref(name)], kind="VIEW", exists=True)

    def create_table(self, table: exp.Table, query: exp.Expr) -> exp.Expr:
        """``CREATE TABLE t USING parquet AS SELECT ..`` (a managed table of the catalog)."""
        props = exp.Properties(expressions=[exp.FileFormatProperty(this=exp.var("PARQUET"))])
        return exp.Create(this=table, kind="TABLE", expression=query, properties=props)

    def source_from(self, source) -> exp.Expr:
        """A catalog table as named; Parquet files (a file, directory or glob) as ``parquet.`path```."""
        if source.kind == "table":
            return source.table_expression()
        if source.kind == "parquet":
            return exp.Table(this=exp.to_identifier(source.path, quoted=True), db=exp.to_identifier("parquet"))
        return table_ref("source")

    def grouped_sums(self, table: str, groupings: Sequence[Sequence[str]], names: Sequence[str], tag: str, measure: str = "cnt") -> exp.Expr:
        """One ``GROUP BY GROUPING SETS (..)``: Spark reads the table once and expands each row
        into one row per grouping, where a ``UNION ALL`` of one ``GROUP BY`` per grouping is a
        scan, a shuffle and an aggregation per grouping (slow over many QI pairs:
        docs/measurements.md). The grouping of a row is read from
        ``GROUPING_ID(..)`` (over the grouping sets' columns, in order of first appearance: bit
        ``m - 1 - j`` set when column ``j`` is not grouped), the ``names`` columns by a ``CASE``
        on it."""
        columns: list[str] = list(dict.fromkeys(c for grouping in groupings for c in grouping))
        position = {c: j for j, c in enumerate(columns)}
        full = (1 << len(columns)) - 1
        masks = [full & ~sum(1 << (len(columns) - 1 - position[c]) for c in grouping) for grouping in groupings]
        gid = exp.Anonymous(this="GROUPING_ID", expressions=[col(c) for c in columns])

        def by_grouping(values) -> exp.Expr:
            case = exp.Case(this=gid.copy())
            for mask, value in zip(masks, values):
                case = case.when(literal(mask), value)
            return case

        select = exp.select(
            exp.alias_(by_grouping([literal(g) for g in range(len(groupings))]), tag, quoted=True),
            *[exp.alias_(by_grouping([col(grouping[j]) for grouping in groupings]), name, quoted=True) for j, name in enumerate(names)],
            exp.alias_(exp.Sum(this=col(measure)), "n", quoted=True), copy=False,
        ).from_(table_ref(table), copy=False)
        sets = exp.GroupingSets(expressions=[exp.Tuple(expressions=[col(c) for c in grouping]) for grouping in groupings])
        select.set("group", exp.Group(grouping_sets=[sets]))
        return select

    #: largest code table (estimated bytes) a batch statement broadcasts (:meth:`nodes_join`):
    #: the broadcast is collected on the driver at every statement, so it stays well inside a
    #: default driver's memory (the code tables' sizes it was set by: docs/measurements.md)
    broadcast_bytes = 128 << 20
    #: no branch per node: the node table spread by node id (:meth:`nodes_join`, when the code
    #: table is broadcast) already has each task aggregate whole nodes (measured there; the
    #: branches were not)
    node_branches = False

    def nodes_join(self, part: exp.Select, nodes: exp.Expr, set_bytes: int) -> exp.Select:
        """The code table ``r`` broadcast to every task (``/*+ BROADCAST(r) */``) and the node
        table spread over the tasks by node id (``/*+ REPARTITION(nid) */``): each task joins
        whole nodes to the whole set, so its aggregation by node and class is already final and
        the classes are never shuffled, where the plain cross join streams the set and shuffles
        every node's classes (faster searches and rounds: docs/measurements.md). A code table over
        :attr:`broadcast_bytes` stays streamed.

        The node table is spread over as many partitions as it has nodes: a task then aggregates
        one node (or a few, where their ids' hashes meet), so its hash table holds one node's
        classes, not a share of the batch's (2 tasks of 19 nodes at 371K rows each: ~2M classes,
        their table far beyond the CPU's caches), and the 2 cores take the next task as they get
        free instead of one finishing its half long after the other (faster rounds:
        docs/measurements.md)."""
        if set_bytes > self.broadcast_bytes:
            return super().nodes_join(part, nodes, set_bytes)
        part.set("hint", exp.Hint(expressions=[exp.JoinHint(this="BROADCAST", expressions=[table_ref("r")])]))
        spread = exp.select(exp.Star(), copy=False).from_(nodes, copy=False)
        count = [literal(len(nodes.expressions))] if isinstance(nodes, exp.Values) else []  # one partition per node
        spread.set("hint", exp.Hint(expressions=[exp.Anonymous(this="REPARTITION", expressions=[*count, exp.column(NODE_ID, quoted=True)])]))
        return part.join(exp.alias_(exp.Subquery(this=spread), "n", table=True, quoted=True), join_type="cross", copy=False)

    hash_signed = True

    def sample(self, table: exp.Expr, percent: float, seed: int = 0) -> exp.Expr:
        """``TABLESAMPLE (p PERCENT)``: Spark SQL's sample takes no seed."""
        out = table.copy()
        out.set("sample", exp.TableSample(percent=literal(float(percent))))
        return out

    def hash_of(self, expressions: Sequence[exp.Expr]) -> exp.Expr:
        """``xxhash64(a, b, ..)`` (a signed BIGINT)."""
        return exp.Anonymous(this="xxhash64", expressions=list(expressions))
