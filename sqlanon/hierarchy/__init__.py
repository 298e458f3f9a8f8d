"""Hierarchies: mapping tables ``leaf -> level1 -> ... -> root``.

A hierarchy *spec* (``--qi COLUMN=SPEC`` or the policy's ``hierarchy:``) is one of

* a path to an ARX-style CSV (``;`` or ``,``, no header, leaf first) — ``--hierarchy-delimiter``;
* a path to a ``.yaml``/``.yml``/``.json`` tree;
* ``bands:W1,W2,...`` numeric bands of growing widths (``[lo, hi[``), then ``*``;
* ``dates``: day -> month -> year -> ``*`` (``dates:decade``: a decade level before ``*``;
  ``dates:month,quarter,year,5y,decade``: any calendar levels, :mod:`sqlanon.hierarchy.dates`);
* ``age:REFERENCE,W1,..``: birth date -> age in years at the reference date -> age bands -> ``*``;
* ``birth_year:W1,..``: birth date -> year -> spans of W1, .. years -> ``*``;
* ``mask`` (or ``mask:#``): hide one more trailing character per level (zip codes);
* ``numeric``: distinct values under ``*`` (for interval cuts of the genetic search);
* ``flat``: distinct values under ``*`` (a categorical attribute with no taxonomy);
* ``table:NAME``: a mapping table in the input's own database (``sqlanon hierarchy import``).
"""

from __future__ import annotations

import os

from sqlanon.errors import ConfigError, EngineError, HierarchyError
from sqlanon.hierarchy import builders, dates, exact
from sqlanon.hierarchy.io import read_csv_hierarchy, read_tree_hierarchy, tree_to_hierarchy, write_csv_hierarchy
from sqlanon.hierarchy.model import Hierarchy, Hierarchy as H
from sqlanon.expr.atoms import as_varchar, col, if_
from sqlanon.engine.source import Source

__all__ = ["Hierarchy", "load_hierarchy", "read_csv_hierarchy", "read_tree_hierarchy", "tree_to_hierarchy", "write_csv_hierarchy", "BUILDERS"]

BUILDERS = ("bands", "dates", "age", "birth_year", "mask", "numeric", "flat")
#: longest value (characters) a hierarchy built from the data takes (``--max-value-length``)
MAX_VALUE_LENGTH = 4096


def is_builder_spec(spec) -> bool:
    """A spec naming a builder (``mask``, ``bands:5,10``, ...) rather than a file or a table."""
    return isinstance(spec, str) and spec.strip().partition(":")[0] in BUILDERS and not os.path.exists(spec.strip())


def require_bound_used(specs, bound: int) -> None:
    """A flag given is a flag used: a ``max_value_length`` other than the default with no
    hierarchy built from the data (it bounds nothing else) is refused."""
    if bound != MAX_VALUE_LENGTH and not any(is_builder_spec(s) for s in specs):
        raise ConfigError(f"--max-value-length {bound} bounds hierarchies built from the data ({', '.join(BUILDERS)}); no column here has one")


#: engine types (DuckDB's, PostgreSQL's, Spark's names) whose text is one to one with the value:
#: their distinct values are taken first and only those are cast to text (:func:`builder_values`)
TYPED_FIRST = frozenset({
    "TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
    "INT1", "INT2", "INT4", "INT8", "LONG", "SHORT", "BYTE", "DATE", "BOOLEAN", "BOOL",
})


def distinct_first(sql_type: str) -> bool:
    """A column of an integer, DATE or BOOLEAN type: its distinct values are the distinct texts
    (not so for a DOUBLE: ``0.0`` and ``-0.0`` are one value of two texts).

    >>> distinct_first("BIGINT"), distinct_first("date"), distinct_first("DOUBLE"), distinct_first("VARCHAR")
    (True, True, False, False)
    """
    return sql_type.strip().upper() in TYPED_FIRST


def builder_values(engine, source, column: str, kind: str, bound: int, sql_type: str = "", rows=None) -> list[str]:
    """The distinct non-NULL values of ``column`` (as text) for a hierarchy builder, refusing
    values longer than ``bound`` characters before any is fetched (a mask of a 100,000-character
    value was 100,000 levels of 100,000 characters: docs/measurements.md). One scan as before: a
    longer value comes back as one NULL, and only then a ``COUNT``/``MAX`` says how many. A
    column of an integer, DATE or BOOLEAN ``sql_type`` (:func:`distinct_first`) is made distinct
    on its values first, and only the distinct values are cast to text and measured. ``rows``: a
    FROM item read instead of the source (alias ``src``, the source's column names: the grouped
    pass's groups, :mod:`sqlanon.stats.grouped_pass`, the same distinct values in fewer rows);
    a value too long is then counted in the source's rows, as without it."""
    from sqlglot import exp

    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    read = rows if rows is not None else src
    not_null = exp.Not(this=exp.Is(this=col(column, "src"), expression=exp.Null()))
    v = as_varchar(col(column, "src"))
    length = exp.Length(this=v.copy())
    too_long = exp.GT(this=length, expression=exp.Literal.number(bound))
    if distinct_first(sql_type):
        typed = exp.select(exp.alias_(col(column, "src"), "d", quoted=True)).distinct().from_(read.copy()).where(not_null.copy())
        text = as_varchar(col("d", "t"))
        long = exp.GT(this=exp.Length(this=text.copy()), expression=exp.Literal.number(bound))
        q = exp.select(exp.alias_(if_(long, exp.Null(), text), "v", quoted=True)).from_(exp.alias_(exp.Subquery(this=typed), "t", table=True, quoted=True))
    else:
        q = exp.select(exp.alias_(if_(too_long, exp.Null(), v), "v", quoted=True)).distinct().from_(read.copy()).where(not_null)
    values = [r[0] for r in engine.fetch_all(q)]
    if any(x is None for x in values):
        count = exp.select(exp.Count(this=exp.Star()), exp.Max(this=length.copy())).from_(src.copy()).where(too_long.copy())
        rows, longest = engine.fetch_one(count) or (0, 0)
        raise HierarchyError(
            f"column {column!r}: {int(rows):,} row(s) hold values longer than {bound:,} characters (the longest {int(longest or 0):,}), "
            f"too long for a {kind!r} hierarchy built from the data; raise --max-value-length (policy max_value_length) or give a hierarchy file"
        )
    return values


#: with more columns than this to build hierarchies for, their distinct values come from one
#: scan (:func:`builder_values_many`) rather than one per column
MANY_COLUMNS = 12


def builder_values_many(engine, source, columns: list[str], bound: int, rows=None) -> dict[str, list[str]]:
    """:func:`builder_values` of several columns in one scan: the source (or ``rows``, as there)
    crossed with the columns' numbers, each row's value of that column (as text), distinct. A
    column with a value longer than ``bound`` is read again alone, so its error is
    :func:`builder_values`'s."""
    from sqlglot import exp

    src = rows.copy() if rows is not None else exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    pick = exp.Case(this=col("i", "k"))
    for j, column in enumerate(columns):
        pick = pick.when(exp.Literal.number(j), as_varchar(col(column, "src")), copy=False)
    numbers = exp.values([(j,) for j in range(len(columns))], alias="k", columns=["i"])
    crossed = exp.select(exp.alias_(col("i", "k"), "i", quoted=True), exp.alias_(pick, "v", quoted=True)).from_(src).join(numbers, join_type="cross")
    length = exp.Length(this=col("v"))
    q = (
        exp.select(col("i"), if_(exp.GT(this=length, expression=exp.Literal.number(bound)), exp.Null(), col("v")))
        .distinct()
        .from_(exp.alias_(exp.Subquery(this=crossed), "c", table=True, quoted=True))
        .where(exp.Not(this=exp.Is(this=col("v"), expression=exp.Null())))
    )
    out: dict[str, list[str]] = {c: [] for c in columns}
    long = set()
    for j, v in engine.fetch_all(q):
        if v is None:
            long.add(columns[int(j)])
        else:
            out[columns[int(j)]].append(v)
    for column in long:
        builder_values(engine, source, column, "built", bound)  # raises, naming the column
    return out


def read_stored_hierarchy(name: str, column: str, engine) -> Hierarchy:
    """A mapping table stored by ``sqlanon hierarchy import`` (``level_0`` = leaf, ...,
    ``level_h`` = root; other columns ignored), read from the input's own database."""
    from sqlglot import exp

    if engine is None:
        raise ConfigError(f"hierarchy table {name!r} for {column!r} needs the input's database")
    ref = Source(kind="table", table=name).table_expression()
    try:
        names = [c for c, _ in engine.describe_columns(exp.select("*").from_(ref).limit(0))]
    except EngineError:
        raise ConfigError(f"hierarchy table {name!r} for {column!r} not found in the input's database") from None
    levels = sorted((int(c[len("level_"):]), c) for c in names if c.startswith("level_") and c[len("level_"):].isdigit())
    if not levels or [n for n, _ in levels] != list(range(len(levels))):
        raise HierarchyError(f"hierarchy table {name!r} for {column!r} has no level_0 .. level_N columns (columns: {', '.join(names)})")
    q = exp.select(*[exp.cast(exp.column(c, quoted=True), "VARCHAR") for _, c in levels]).from_(ref)
    rows = [_stored_row(r) for r in engine.fetch_all(q)]
    return H(attribute=column, rows=rows, origin=f"table {name}")


def _stored_row(row) -> list:
    """A stored mapping table's row as text; its NULL leaf (``level_0`` NULL) keeps its NULLs."""
    if row[0] is None:
        return list(row[:-1]) + [None if row[-1] is None else str(row[-1])]
    return ["" if v is None else str(v) for v in row]


def _column_type(engine, source, column: str) -> str:
    return dict(source.columns(engine)).get(column, "")


#: engine types whose values are binary floating point (their bands are checked as such)
_FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL")


def _builder(kind: str, arg: str, column: str):
    """A numeric or date builder's spec read and checked (before any value is fetched): a
    function ``(values, sql_type) -> Hierarchy`` (``sql_type``: the column's engine type)."""
    if kind == "bands":
        widths = exact.widths_of([w.strip() for w in arg.split(",") if w.strip()], column)
        return lambda values, sql_type: builders.numeric_bands(values, widths, column, double=any(t in sql_type.upper() for t in _FLOAT_TYPES))
    if kind == "dates":
        levels = dates.parse_levels(arg, column)
        origin = {"": "dates", "decade": "dates:decade"}.get(arg.strip())  # as they always read
        return lambda values, sql_type: dates.date_levels(values, levels, column, origin=origin)
    if kind == "age":
        reference, ages = dates.parse_age(arg, column)
        return lambda values, sql_type: dates.age_bands(values, reference, ages, column)
    years = dates.year_widths(arg, column)
    return lambda values, sql_type: dates.birth_years(values, years, column)


def load_hierarchy(spec: str, column: str, engine=None, source=None, delimiter: str | None = None, max_value_length: int = MAX_VALUE_LENGTH, values: list[str] | None = None, rows=None) -> Hierarchy:
    """Turn a spec into a validated :class:`Hierarchy` (builders read distinct values by SQL, of
    ``rows`` when given (:func:`builder_values`), after refusing values longer than
    ``max_value_length``, unless ``values`` holds them already: :func:`builder_values_many`); a :class:`Hierarchy` object (Python API) is used as
    it is, for ``column``."""
    if isinstance(spec, Hierarchy):  # a copy: a run may give it a NULL leaf (Statistics.prepare)
        import dataclasses

        return dataclasses.replace(spec, attribute=column)
    spec = str(spec).strip()
    kind, _, arg = spec.partition(":")
    if kind == "table" and arg and not os.path.exists(spec):
        return read_stored_hierarchy(arg, column, engine)
    if kind in BUILDERS and not os.path.exists(spec):
        if engine is None or source is None:
            raise ConfigError(f"hierarchy builder {kind!r} for {column!r} needs the source")
        build = _builder(kind, arg, column) if kind in ("bands", "dates", "age", "birth_year") else None
        sql_type = None
        if values is None:
            source.require_columns(engine, [column], "quasi-identifier column")
            sql_type = _column_type(engine, source, column)
            values = builder_values(engine, source, column, kind, max_value_length, sql_type, rows)
        if build is not None:
            return build(values, _column_type(engine, source, column) if sql_type is None else sql_type)
        if kind == "mask":
            return builders.masking(values, column, char=arg or "*")
        if kind == "numeric":
            return builders.flat_numeric(values, column)

        return H(attribute=column, rows=[[v, "*"] for v in sorted(values)], origin="flat")
    low = spec.lower()
    if low.endswith((".yaml", ".yml", ".json")):
        return read_tree_hierarchy(spec, column)
    if not os.path.isfile(spec):
        raise ConfigError(f"hierarchy file not found for {column!r}: {spec}")
    return read_csv_hierarchy(spec, column, delimiter)
