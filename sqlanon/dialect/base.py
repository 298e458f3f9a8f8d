"""The SQL shapes that differ between engines, owned by one object per dialect.

A :class:`Dialect` renders sqlglot expressions for its engine and builds the few statements whose
*shape* (not just spelling) differs: a lookup of a value in a literal list, a temporary table, the
source's FROM item, a row hash, a file write. SQL builders (:mod:`sqlanon.stats`,
:mod:`sqlanon.release.write`) take a dialect object; they never read or change an engine.

>>> from sqlanon.dialect import get_dialect
>>> from sqlglot import exp
>>> get_dialect("spark").render(get_dialect("spark").lookup(["a", "b"], exp.column("q0")))
"ARRAY('a', 'b')[q0]"
>>> get_dialect("duckdb").render(get_dialect("duckdb").lookup(["a", "b"], exp.column("q0")))
"LIST_EXTRACT(['a', 'b'], q0 + 1)"
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.expr.atoms import col, literal, table_ref


class Dialect:
    """A portable SQL dialect: ``CASE`` lookups, ``CREATE TEMPORARY TABLE``, a plain source table.

    Subclasses override the shapes their engine does differently. ``name`` is the sqlglot dialect.
    A dialect compares equal to its name, so ``stats.dialect == "duckdb"`` reads naturally.
    """

    name = ""
    #: how literal arrays are indexed: 1 (DuckDB, PostgreSQL), 0 (Spark), None (no arrays: CASE)
    array_base: int | None = None
    #: lookup lists may be bound as statement parameters (DuckDB's ``$n``)
    binds_lists = False
    #: ``ALTER TABLE .. ADD COLUMN IF NOT EXISTS`` is understood (Spark SQL has no such clause)
    add_column_if_not_exists = True
    #: temporary tables take DELETE/INSERT (Spark's cached views cannot be changed: rebuilt instead)
    updatable_temps = True
    #: the engine compiles each statement to code cached by the statement's shape (Spark's
    #: whole-stage code generation): statements that differ only in literal values reuse warm
    #: compiled code, so a batch statement keeps one shape whatever its nodes' levels
    #: (:func:`sqlanon.stats.batch.used_levels`)
    compiles_shapes = False
    #: a batch statement over a large set may take one branch per node
    #: (:func:`sqlanon.stats.batch.branches`; measured on DuckDB)
    node_branches = True
    #: a batch statement over a set of at least this many rows takes one branch per node
    #: whatever the base set's size and the number of nodes (None: the rule measured on DuckDB,
    #: branches only over a large base set, :func:`sqlanon.stats.batch.branches`)
    branch_rows: int | None = None

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            self.name = name

    # -- identity -----------------------------------------------------------------------------
    def __eq__(self, other) -> bool:
        if isinstance(other, Dialect):
            return type(self) is type(other) and self.name == other.name
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    # -- rendering ----------------------------------------------------------------------------
    def render(self, expression: exp.Expr | str, pretty: bool = False, copy: bool = True) -> str:
        """The statement's text; ``copy=False`` lets the generator transform a tree that is not
        used again (a large statement renders faster)."""
        if isinstance(expression, str):
            return expression
        return expression.sql(dialect=self.name or None, pretty=pretty, copy=copy)

    # -- value lookups --------------------------------------------------------------------------
    def lookup(self, values: Sequence, code: exp.Expr, params: list | None = None) -> exp.Expr:
        """``values[code]`` for a 0-based integer ``code``. Identity lists collapse to ``code`` and
        constant lists to the constant (not where the engine compiles per statement shape,
        :attr:`compiles_shapes`: there a lookup keeps its shape whatever its values); otherwise
        an indexed literal array (:meth:`element_at`) or, without arrays, ``CASE code WHEN 0 THEN .. END``."""
        values = list(values)
        if not self.compiles_shapes:
            if all(isinstance(v, int) and not isinstance(v, bool) for v in values) and values == list(range(len(values))):
                return code
            if len(set(values)) == 1:
                return literal(values[0])
        if self.array_base is None:
            case = exp.Case(this=code)
            for i, v in enumerate(values):
                case = case.when(literal(i), literal(v))
            return case
        return self.element_at(exp.Array(expressions=[literal(v) for v in values]), code)

    def position(self, values: Sequence[str], value: exp.Expr) -> exp.Expr:
        """The 0-based position of ``value`` in the literal list ``values``, NULL when it is not
        there: ``CASE value WHEN 'a' THEN 0 .. END`` (portable). The base scan codes a short
        hierarchy's leaves so instead of joining its code table when there are many QIs
        (:data:`sqlanon.stats.core.INLINE_QIS`).

        >>> from sqlanon.dialect import get_dialect
        >>> get_dialect("postgres").render(get_dialect("postgres").position(["a", "b"], exp.column("x")))
        "CASE x WHEN 'a' THEN 0 WHEN 'b' THEN 1 END"
        """
        case = exp.Case(this=value)
        for i, v in enumerate(values):
            case = case.when(literal(v), literal(i), copy=False)
        return case

    def label_type(self, labels: Sequence[str]) -> exp.DataType | None:
        """A column type holding exactly ``labels`` that a file writer stores as text without
        hashing every value (DuckDB's ``ENUM``: its Parquet writer writes the dictionary as it
        is), or None (release labels stay text)."""
        return None

    def repeat_rows(self, count: exp.Expr) -> exp.Expr | None:
        """A select-list expression that repeats its row ``count`` times (a set-returning call;
        its values are not used), or None when the dialect has none here: a release is then
        read from the source, never rebuilt from its frequency set
        (:func:`sqlanon.release.write.base_release_select`)."""
        return None

    def element_at(self, array: exp.Expr, code: exp.Expr) -> exp.Expr:
        """The element at 0-based ``code`` of an array expression or column."""
        if self.array_base is None:
            raise NotImplementedError(f"dialect {self.name} has no arrays")
        index = code if self.array_base == 0 else exp.Add(this=code, expression=literal(self.array_base))
        if isinstance(array, exp.Array):
            array = exp.Paren(this=array)
        # ``offset``: the index is already in this dialect's base, so the generator shifts it no
        # further (sqlglot adds INDEX_OFFSET - offset to an index whose type it infers as an
        # integer: a CASE of integer literals, the inline release's leaf position, came out + 2)
        return exp.Bracket(this=array, expressions=[index], offset=self.array_base)

    # -- temporary tables -----------------------------------------------------------------------
    def clustered(self, query: exp.Select, keys: Sequence[exp.Expr]) -> exp.Select:
        """A saved frequency set's query as this engine should store it: here unchanged (its rows
        in whatever order the grouping leaves them)."""
        return query

    def create_temp(self, name: str, query: exp.Expr) -> exp.Expr:
        """A temporary table holding the rows of ``query`` now (materialized, never a lazy view)."""
        return exp.Create(
            this=table_ref(name),
            kind="TABLE",
            properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
            expression=query,
        )

    def values_table(self, name: str, table) -> exp.Expr:
        """A temporary table holding a small Arrow table's rows as ``VALUES`` (a script's mapping
        tables, so it runs with nothing registered beforehand)."""
        return self.create_temp(name, self._values_select(table))

    @staticmethod
    def _values_select(table) -> exp.Select:
        names = table.column_names
        rows = [exp.Tuple(expressions=[literal(v) for v in row]) for row in zip(*[table.column(i).to_pylist() for i in range(table.num_columns)])]
        alias = exp.TableAlias(this=exp.to_identifier("t"), columns=[exp.to_identifier(n, quoted=True) for n in names])
        return exp.select(*[exp.column(n, quoted=True) for n in names]).from_(exp.Values(expressions=rows, alias=alias))

    def source_setup(self, source) -> list[exp.Expr]:
        """Statements a script runs first so that :meth:`source_from` names something."""
        return []

    def drop_temp(self, name: str) -> exp.Expr:
        return exp.Drop(tables=[table_ref(name)], kind="TABLE", exists=True)

    def create_table(self, table: exp.Table, query: exp.Expr) -> exp.Expr:
        """A permanent table (an output table) holding the rows of ``query``."""
        return exp.Create(this=table, kind="TABLE", expression=query)

    def drop_table(self, table: exp.Table, if_exists: bool = False) -> exp.Expr:
        return exp.Drop(tables=[table], kind="TABLE", exists=if_exists)

    # -- sums of counts -------------------------------------------------------------------------
    def count_sum(self, count: exp.Expr, rows: int) -> exp.Expr:
        """``SUM(count)`` of a count column (``cnt``: a BIGINT) over a table of ``rows`` source
        rows, which bounds every count and every sum of them. Here the plain sum."""
        return exp.Sum(this=count)

    # -- sums over several groupings ------------------------------------------------------------
    def grouped_sums(self, table: str, groupings: Sequence[Sequence[str]], names: Sequence[str], tag: str, measure: str = "cnt") -> exp.Expr:
        """``SUM(measure)`` of ``table`` per group, for several groupings (column lists, each as
        long as ``names``) in one statement: one row per grouping and group, with the columns
        ``tag`` (the grouping's index), ``names`` (the group's values, in the grouping's column
        order) and ``n``. Here a ``UNION ALL`` of one ``GROUP BY`` per grouping (cheap where a
        statement's parts cost little: DuckDB, PostgreSQL)."""
        parts = []
        for g, columns in enumerate(groupings):
            part = exp.select(
                exp.alias_(literal(g), tag, quoted=True),
                *[exp.alias_(col(c), name, quoted=True) for c, name in zip(columns, names)],
                exp.alias_(exp.Sum(this=col(measure)), "n", quoted=True), copy=False,
            )
            parts.append(part.from_(table_ref(table), copy=False).group_by(*[col(c) for c in columns], copy=False))
        out: exp.Query = parts[0]
        for part in parts[1:]:
            out = exp.union(out, part, distinct=False, copy=False)
        return out

    # -- batch statements -----------------------------------------------------------------------
    def nodes_join(self, part: exp.Select, nodes: exp.Expr, set_bytes: int) -> exp.Select:
        """``part`` (a select from a code table ``r`` of about ``set_bytes`` bytes at most: rows
        times 8 bytes a column) cross-joined to a node table ``n`` (:mod:`sqlanon.stats.batch`):
        every row of the set once per node."""
        return part.join(nodes, join_type="cross", copy=False)

    # -- the source -----------------------------------------------------------------------------
    def source_from(self, source) -> exp.Expr:
        """The FROM item naming ``source`` in a rendered script. Tables are named as they are;
        files become a table ``source`` the reader defines (reading files is an engine's job)."""
        if source.kind == "table":
            return source.table_expression()
        return table_ref("source")

    def sample(self, table: exp.Expr, percent: float, seed: int = 0) -> exp.Expr:
        """``table`` read as a Bernoulli sample of about ``percent`` % of its rows, the same rows
        on every run (``TABLESAMPLE BERNOULLI (p) REPEATABLE (seed)``: DuckDB, PostgreSQL)."""
        out = table.copy()
        out.set("sample", exp.TableSample(method="BERNOULLI", percent=literal(float(percent)), seed=literal(seed)))
        return out

    # -- hashes -----------------------------------------------------------------------------------
    #: whether :meth:`hash_of` is a signed 64-bit integer (PostgreSQL, Spark) or unsigned (DuckDB)
    hash_signed = False

    def approx_distinct(self, expression: exp.Expr) -> exp.Expr:
        """About how many distinct values (a HyperLogLog sketch: one pass, small memory)."""
        return exp.ApproxDistinct(this=expression)

    def hash_of(self, expressions: Sequence[exp.Expr]) -> exp.Expr:
        """A 64-bit hash of a tuple of values: DuckDB's ``hash(a, b, ..)`` (UBIGINT)."""
        return exp.Anonymous(this="hash", expressions=list(expressions))

    def row_hash(self, columns: Sequence[str], table: str | None = None) -> exp.Expr:
        """A 64-bit hash of one row; XOR-ed over rows (``bit_xor``) it is order-independent."""
        return self.hash_of([col(c, table) for c in columns])

    def unit_hash(self, expressions: Sequence[exp.Expr]) -> exp.Expr:
        """A number in [0, 1) from the 64-bit hash of a tuple of values (a deterministic, seedable
        stand-in for a uniform random number): ``hash / 2^64``, shifted by ``2^63`` first where the
        hash is signed. Built with ``exp.Paren`` around the sum: sqlglot renders a tree as it is
        and does not add the parentheses that operator precedence needs."""
        h: exp.Expr = exp.cast(self.hash_of(expressions), "DOUBLE")
        if self.hash_signed:
            h = exp.Paren(this=exp.Add(this=h, expression=literal(9223372036854775808.0)))
        return exp.Div(this=h, expression=literal(18446744073709551616.0))

    # -- files ------------------------------------------------------------------------------------
    def copy_to(self, query: exp.Expr, path: str, kind: str, delimiter: str = ",") -> exp.Expr | None:
        """A statement writing ``query``'s rows to ``path`` on the engine's side, or ``None`` when
        the engine writes files from the client (PostgreSQL) or through its own API (Spark)."""
        return None
