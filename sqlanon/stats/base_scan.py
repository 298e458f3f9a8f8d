"""The base scan's statement: the source grouped into the base frequency set.

The source's rows are grouped on their raw key columns first (the QIs, and the sensitive and
class columns the models read), the way a plain ``GROUP BY`` of those columns groups them, and
only the groups are joined to the leaf-code tables: a join per distinct tuple instead of one per
row (the row-by-row join cost the scan several GROUP BYs at few distinct tuples:
docs/measurements.md). The groups are the base set's rows as they are when the text a key
column is joined on is one-to-one with the values ``GROUP BY`` tells apart (:data:`ONE_TO_ONE`:
text, integers, dates, booleans); a key column of another type (a float, where ``-0.0`` and
``0.0`` are one group of two texts; a PostgreSQL ``numeric``, where ``1.0`` and ``1.00`` are)
keeps the row-by-row shape (:meth:`Statistics.encoded_select` over the source's rows).

The input hash (``h``, :attr:`Statistics.row_hash`) goes with the groups: when every source
column is a key, a group's rows are equal, so they XOR to their own hash when their count is
odd and to 0 when even; otherwise the group XORs its rows' hashes. Either is the per-row XOR
(:func:`sqlanon.release.write.input_hash`).
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import as_varchar, col, if_, lit, sum_, table_ref

#: column types (as the engines name them, parameters left off) whose text, the leaf a value is
#: joined on, tells apart exactly the values ``GROUP BY`` tells apart
ONE_TO_ONE = frozenset({
    "VARCHAR", "TEXT", "STRING",
    "TINYINT", "SMALLINT", "INTEGER", "INT", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
    "INT1", "INT2", "INT4", "INT8", "BYTE", "SHORT", "LONG",
    "DATE", "BOOLEAN", "BOOL",
    "TIMESTAMP", "DATETIME",  # a timestamp without a zone: one text per value, to the microsecond
})
#: column types whose values hash as the text of their hierarchy's leaves (:func:`hash_by_groups`)
TEXT_TYPES = frozenset({"VARCHAR", "TEXT", "STRING"})
#: the groups' own row count and hash, named apart from any source column
COUNT, HASH = "sqlanon_n", "sqlanon_h"


def key_columns(stats) -> list[str]:
    """The source columns the base set is grouped on: the QIs, then the sensitive and the class
    column when read, each once."""
    keys = list(stats.qis)
    if stats.has_s:
        keys.append(stats.sensitive)
    if stats.has_y:
        keys.append(stats.class_column)
    return list(dict.fromkeys(keys))


def _base_type(kind) -> str:
    return str(kind or "").split("(")[0].strip().upper()


def one_to_one(kind) -> bool:
    """Whether a column of engine type ``kind`` groups as its text is told apart (:data:`ONE_TO_ONE`).

    >>> one_to_one("VARCHAR"), one_to_one("DATE"), one_to_one("DOUBLE"), one_to_one("numeric(10,2)")
    (True, True, False, False)
    """
    return _base_type(kind) in ONE_TO_ONE


def hash_by_groups(columns, qis) -> bool:
    """Whether every source column (``(name, type)`` pairs) is a text QI: a row's hash is then its
    group's (:attr:`Statistics.hash_by_groups`), taken over the base set, not per row."""
    return sorted(name for name, _ in columns) == sorted(qis) and all(str(kind).upper() in TEXT_TYPES for _, kind in columns)


def groups_first(stats) -> bool:
    """Whether the base scan groups the source's rows before coding them (the module's
    docstring): every key column's type is one of :data:`ONE_TO_ONE`, and the names
    :data:`COUNT` and :data:`HASH` are free."""
    kinds = dict(stats.source.columns(stats.engine))
    keys = key_columns(stats)
    return bool(keys) and COUNT not in kinds and HASH not in kinds and all(one_to_one(kinds.get(k)) for k in keys)


def grouped_select(item: exp.Expr, keys: list[str], dialect, hash_columns: list[str] | None = None) -> exp.Select:
    """``item``'s rows (alias ``src``) grouped on ``keys``: each group's row count (:data:`COUNT`)
    and, given the source's ``hash_columns``, its part of the input hash (:data:`HASH`)."""
    src = exp.alias_(item.copy(), "src", table=True, quoted=True)
    q = exp.select(*[col(k, "src") for k in keys], exp.alias_(exp.Count(this=exp.Star()), COUNT, quoted=True)).from_(src)
    if hash_columns is not None:
        row = dialect.row_hash(hash_columns, "src")
        if set(hash_columns) <= set(keys):  # a group's rows are equal: their XOR is one hash or 0
            odd = exp.EQ(this=exp.Mod(this=exp.Count(this=exp.Star()), expression=lit(2)), expression=lit(1))
            part: exp.Expr = exp.Case().when(odd, row).else_(lit(0))
        else:
            part = exp.Anonymous(this="bit_xor", expressions=[row])
        q = q.select(exp.alias_(part, HASH, quoted=True))
    return q.group_by(*[col(k, "src") for k in keys])


def grouped_rows(stats) -> exp.Expr:
    """The source's rows grouped on :func:`key_columns` (alias ``src``, the source's own column
    names): each group's row count (:data:`COUNT`) and, with the input hash, its part of it
    (:data:`HASH`)."""
    hashed = stats.row_hash and not stats.hash_by_groups
    q = grouped_select(stats.source_item, key_columns(stats), stats.dialect, stats.source.column_names(stats.engine) if hashed else None)
    return exp.alias_(exp.Subquery(this=q), "src", table=True, quoted=True)


def _saved_groups(stats) -> exp.Expr:
    """The grouped pass's groups (:mod:`sqlanon.stats.grouped_pass`) the base set is made of, as
    the FROM item ``src``: the rows a ``nulls: suppress`` QI withholds left out."""
    item = stats.grouped.item()
    if stats.withheld_condition() is None:
        return item
    return exp.alias_(stats.kept_rows(table_ref(stats.grouped.table)), "src", table=True, quoted=True)


def _from_saved_groups(stats, hashed: bool) -> exp.Select:
    """The base set's select over the grouped pass's groups: coded as they are when they were
    grouped on the base set's keys, else coded and summed (a column the pass grouped on that
    the base set does not read: the groups it told apart are one class of the base set)."""
    coded = stats.encoded_select(rows=_saved_groups(stats))
    if stats.grouped.keys == key_columns(stats):  # one group, one base-set row
        coded = coded.select(exp.alias_(col(COUNT, "src"), "cnt", quoted=True), copy=False)
        return coded.select(exp.alias_(col(HASH, "src"), "h", quoted=True), copy=False) if hashed else coded
    keys = stats.qnames + (["s"] if stats.has_s else []) + (["y"] if stats.has_y else [])
    coded = coded.select(exp.alias_(col(COUNT, "src"), "n", quoted=True), copy=False)
    q = exp.select(*[col(k) for k in keys], exp.alias_(sum_(col("n")), "cnt", quoted=True))
    if hashed:
        coded = coded.select(exp.alias_(col(HASH, "src"), "hp", quoted=True), copy=False)
        q = q.select(exp.alias_(exp.Anonymous(this="bit_xor", expressions=[col("hp")]), "h", quoted=True))
    q = q.from_(exp.alias_(exp.Subquery(this=coded), "enc", table=True, quoted=True), copy=False)
    return q.group_by(*[col(k) for k in keys], copy=False)


def base_query(stats) -> exp.Select:
    """The base frequency set's select: codes (``q0``..), ``s``/``y`` when read, ``cnt``, and
    ``h`` with the input hash taken per row (:attr:`Statistics.row_hash`)."""
    keys = stats.qnames + (["s"] if stats.has_s else []) + (["y"] if stats.has_y else [])
    hashed = stats.row_hash and not stats.hash_by_groups
    if stats.grouped is not None:  # the source grouped already, by the grouped pass
        return _from_saved_groups(stats, hashed)
    if groups_first(stats):  # the groups are the base set's rows: coded, not grouped again
        q = stats.encoded_select(rows=grouped_rows(stats))
        q = q.select(exp.alias_(col(COUNT, "src"), "cnt", quoted=True), copy=False)
        return q.select(exp.alias_(col(HASH, "src"), "h", quoted=True), copy=False) if hashed else q
    inner = stats.encoded_select()
    q = exp.select(*[col(k) for k in keys], exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True))
    if hashed:
        q = q.select(exp.alias_(exp.Anonymous(this="bit_xor", expressions=[col("rh")]), "h", quoted=True))
    q = q.from_(exp.alias_(exp.Subquery(this=inner), "enc", table=True, quoted=True), copy=False)
    return q.group_by(*[col(k) for k in keys], copy=False)


def withheld_query(stats, which: list[int], withheld: exp.Expr) -> exp.Select:
    """The withheld rows (``withheld``: NULL in a ``nulls: suppress`` QI) counted, in all and per
    QI of ``which``: over the source's rows, or the grouped pass's groups' counts summed."""
    src: exp.Expr
    one: exp.Expr
    total: exp.Expr
    if stats.grouped is not None:
        src, one = stats.grouped.item(), col(COUNT, "src")
        total = sum_(one.copy())
    else:
        src, one = exp.alias_(stats.input_item.copy(), "src", table=True, quoted=True), lit(1)
        total = exp.Count(this=exp.Star())
    per_qi = [sum_(if_(exp.Is(this=col(stats.qis[i], "src"), expression=exp.Null()), one.copy(), lit(0))) for i in which]
    return exp.select(total, *per_qi).from_(src).where(withheld)


def unmapped_select(stats, i: int) -> exp.Select:
    """The distinct values of QI ``i`` missing from its hierarchy (non-NULL, as text): of the
    source's rows, or of the grouped pass's groups (the same distinct values)."""
    rows = stats.source_item if stats.grouped is None else stats.kept_rows(table_ref(stats.grouped.table))
    src = exp.alias_(rows.copy(), "src", table=True, quoted=True)
    name = stats.qis[i]
    cond = exp.EQ(this=col("level_0", "h"), expression=as_varchar(col(name, "src")))
    missing = exp.and_(exp.Is(this=col("code", "h"), expression=exp.Null()), exp.Not(this=exp.Is(this=col(name, "src"), expression=exp.Null())))
    q = exp.select(exp.alias_(as_varchar(col(name, "src")), "v", quoted=True)).distinct().from_(src)
    return q.join(table_ref(stats.map_tables[i], alias="h"), on=cond, join_type="left").where(missing)
