"""Release: apply a final plan and write it (Parquet, CSV, a new table, or the same table in place).

The release query is the **mapping-table join** shape: the source joined to one small
``leaf -> released value`` table per QI; rows of suppressed classes are found by a LEFT JOIN to the
(small) table of suppressed classes and masked to ``*`` (or dropped with an anti join). Nothing is
written before the plan is final, files appear atomically (written beside, then renamed), and table
writes happen in one transaction together with the registry entry.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from sqlanon.release import registry
from sqlanon.errors import ConfigError, SqlanonError
from sqlanon.expr.atoms import Params, add_all, as_bigint, col, table_ref
from sqlanon.expr.atoms import lit
from sqlanon.engine.table_name import BASE_TABLE, VIEW, TableName, lookup, same_table, schema_exists
from sqlanon.files.paths import output_kind, refuse_existing
from sqlanon.stats import batch, format_input_hash
from sqlanon.hierarchy.keys import leaf_key, leaf_keys, null_keyed
from sqlanon.release.withheld import with_withheld
from sqlanon.release.rounds import round_maps, rounds_select
from sqlanon.release.linked import linked_select
from sqlanon.release.leftovers import clean_stale_temp_files, temp_path
from sqlanon.engine.source import Source
from sqlanon.engine import connect

SUPPRESSED = "*"
#: a written release is rebuilt from the base frequency set where that gives the same rows
#: (:func:`from_base_set`); False: always read from the source (to compare)
FROM_BASE = True


@dataclass(frozen=True)
class InlineMap:
    """A QI's mapping spelled inline in the release query instead of a joined table
    (:meth:`Statistics.inlined`: a short hierarchy among many QIs): its columns as lists over
    the hierarchy's leaves, and the type of its labels when it has one (:func:`mapping_tables`)."""

    columns: dict
    kind: exp.DataType | None = None


def mapped(stats, maps: Sequence, i: int, column: str, from_base: bool = False) -> exp.Expr:
    """QI ``i``'s mapping column ``column`` (``value``, ``label``, ``masked``, ``code``) for the
    release row: the joined table's column (alias ``m{i}``), or, for an :class:`InlineMap`, its
    list indexed by the row's leaf code (the base set's code, or the source value's position
    among the leaves)."""
    m = maps[i]
    if not isinstance(m, InlineMap):
        return col(column, f"m{i}")
    if column == "masked":
        return exp.cast(lit(SUPPRESSED), m.kind) if m.kind is not None else lit(SUPPRESSED)
    leaves = m.columns["leaf"][1]
    leaf = col(stats.qcol(i), "g") if from_base else stats.dialect.position(leaves, leaf_key(stats.hierarchies[i], col(stats.qis[i], "src")))
    value = stats.dialect.lookup(m.columns["value"][1], leaf)
    if column == "label":  # a file release's labels: of their type where the dialect has one
        return exp.cast(value, m.kind) if m.kind is not None else value
    return stats.dialect.lookup(m.columns[column][1], leaf)


@dataclass
class Target:
    """Where a release goes: ``parquet``/``csv`` file, ``table`` (in the engine's database) or
    ``in_place`` (replace the source table)."""

    kind: str
    path: str | None = None
    table: str | None = None
    delimiter: str = ","
    overwrite: bool = False

    @property
    def file(self) -> str:
        """The file written: a parquet or csv target has a path."""
        assert self.path is not None, f"a {self.kind} target without a path"
        return self.path

    @property
    def table_name(self) -> str:
        """The table written: a table target names one."""
        assert self.table is not None, f"a {self.kind} target without a table"
        return self.table

    def describe(self) -> str:
        return self.file if self.kind in ("parquet", "csv") else f"table {self.table}"

    @classmethod
    def from_options(cls, output=None, output_table=None, in_place=False, source=None, overwrite=False, delimiter=",", directories=False):
        """``directories``: the engine writes a directory of part files (Spark), so an existing
        directory is an existing output, not a mistake."""
        chosen = [bool(output), bool(output_table), bool(in_place)]
        if sum(chosen) > 1:
            raise ConfigError("give only one of --output, --output-table, --in-place")
        if in_place:
            if source is None or source.kind != "table":
                raise ConfigError("--in-place needs a table input (--format duckdb --table T)")
            return cls(kind="in_place", table=source.table)
        if output_table:
            return cls(kind="table", table=output_table, overwrite=overwrite)
        if output:
            if directories:  # Spark: a directory of part files; CSV when named so, else Parquet
                kind = "csv" if str(output).lower().endswith((".csv", ".tsv", ".txt")) else "parquet"
            else:
                kind = output_kind(output)
            if os.path.isdir(output) and not directories:
                raise ConfigError(f"output {output} is a directory; name a file")
            refuse_input_file(output, source)
            refuse_existing(output, "output file", overwrite)
            return cls(kind=kind, path=output, overwrite=overwrite, delimiter=delimiter)
        return cls(kind="none")


def refuse_input_file(output: str, source) -> None:
    """Refuse an ``--output`` that is the input (or one of its files, a file its folder or glob
    would read): ``--overwrite`` would replace the source itself. Paths are compared resolved
    (relative paths, symlinks)."""
    if source is None or "://" in str(output):
        return
    real = os.path.realpath(output)
    if source.kind == "table":
        db = source.database
        if db and "://" not in db and os.path.exists(db) and os.path.realpath(db) == real:
            raise ConfigError(f"--output {output} is the input database; name another file (--in-place replaces an input table in one transaction)")
        return
    if not source.path or "://" in source.path:
        return
    inputs = {os.path.realpath(p) for p in source.paths()}
    folder = os.path.realpath(source.path) if os.path.isdir(source.path) else None
    pattern = source.path if any(ch in source.path for ch in "*?[") else None
    if (real in inputs or (folder and real.startswith(folder + os.sep))
            or (pattern and (fnmatch.fnmatch(real, os.path.realpath(pattern)) or fnmatch.fnmatch(os.path.abspath(output), os.path.abspath(pattern))))):
        raise ConfigError(f"--output {output} is the input {source.describe()} (or would be read as part of it); name another file: sqlanon never replaces its input file")


#: a column is checked exactly for uniqueness when its approximate distinct count is this share of the rows
NEAR_UNIQUE = 0.9
#: a column ``keep_others`` releases is refused when its distinct values are at least this share
#: of its non-NULL values (an ``ssn`` with 299 distinct values in 300 rows; see docs/policy.md)
NEARLY_UNIQUE = 0.9
#: ... checked exactly when its approximate distinct count (HyperLogLog, a few % off) is this share
NEARLY_UNIQUE_APPROX = 0.8
#: tables smaller than this are not checked: in a few rows any column may be unique by chance
MIN_ROWS = 100


def unique_columns(engine, source, columns: list[str], nearly=()) -> tuple[int, list[str]]:
    """``(rows, the columns among columns whose values are unique per row)``: one pass with an
    approximate distinct count per column (HyperLogLog), then an exact ``COUNT(DISTINCT)`` only of
    the near-unique ones (a second pass over those columns, when there are any). A column of
    ``nearly`` is returned when it is *nearly* unique: :data:`NEARLY_UNIQUE` of its non-NULL
    values distinct (and at least :data:`MIN_ROWS` of them)."""
    if not columns:
        return 0, []
    nearly = [c for c in columns if c in set(nearly)]
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    approx = exp.select(exp.Count(this=exp.Star()), *[engine.dialect.approx_distinct(col(c, "src")) for c in columns], *[exp.Count(this=col(c, "src")) for c in nearly]).from_(src)
    row = engine.fetch_one(approx)
    rows = int(row[0] or 0)
    counted = dict(zip(columns, row[1:1 + len(columns)]))
    nonnull = {c: int(n or 0) for c, n in zip(nearly, row[1 + len(columns):])}
    near = [c for c in columns if _near(int(counted[c] or 0), rows, nonnull.get(c))]
    if not near:
        return rows, []
    exact = exp.select(*[exp.Count(this=exp.Distinct(expressions=[col(c, "src")])) for c in near]).from_(src.copy())
    counts = engine.fetch_one(exact)
    return rows, [c for c, n in zip(near, counts) if _unique(int(n or 0), rows, nonnull.get(c))]


def _near(approx: int, rows: int, nonnull: int | None) -> bool:
    """Worth an exact count: near unique per row (or, ``nonnull`` given, near nearly unique)."""
    if nonnull is None:
        return rows >= MIN_ROWS and approx >= NEAR_UNIQUE * rows
    return nonnull >= MIN_ROWS and approx >= NEARLY_UNIQUE_APPROX * nonnull


def _unique(distinct: int, rows: int, nonnull: int | None) -> bool:
    return distinct == rows if nonnull is None else distinct >= NEARLY_UNIQUE * nonnull


def refuse_row_keys(engine, source, qis, drop_columns=(), keep_columns=(), microaggregate=None, kept_others=()) -> None:
    """Refuse, before the scan, a release that keeps a column unique per row (an id, a name):
    released as is, it joins every released row back to its input row. QIs, dropped and
    microaggregated columns, and ``--keep-column`` ones (kept knowingly) are not checked; those
    ``keep_others`` releases (``kept_others``) are refused already when nearly unique."""
    skip = set(qis) | set(drop_columns or ()) | set(keep_columns or ()) | set(microaggregate or {})
    checked = [c for c in source.column_names(engine) if c not in skip]
    rows, unique = unique_columns(engine, source, checked, kept_others)
    if not unique:
        return
    names = ", ".join(repr(c) for c in unique)
    flags = " ".join(f"--drop-column {c}" for c in unique)
    nearly = any(c in set(kept_others) for c in unique)
    raise ConfigError(
        f"column{'s' if len(unique) > 1 else ''} {names} {'are' if len(unique) > 1 else 'is'} {'(nearly) ' if nearly else ''}unique per row ({rows:,} rows): "
        f"released as is, every row joins back to its input row; leave it out ({flags}), make it a QI, or keep it knowingly (--keep-column)"
    )


def mapping_tables(engine, stats, recoding, labels: bool = False, node=None, leaf_codes: bool = False, unused=frozenset()) -> list:
    """Register ``leaf -> released value`` per QI (small: one row per hierarchy leaf); a QI the
    base scan codes inline gets an :class:`InlineMap` instead, spelled in the release query.

    With ``labels`` (a file release on an engine whose dialect has a :meth:`label_type`), each
    table also holds the value as that type (``label``) and the suppression mark ``*`` as that
    type (``masked``): the release selects those, and the writer stores them as text. With a
    full-domain ``node`` too, ``code`` is each leaf's code at the node's level times the QI's
    multiplier in the packed class key (the release finds suppressed rows by that key:
    :meth:`Statistics.bad_class_keys_create`). With ``leaf_codes``, ``leaf_code`` is each leaf's
    code (the base set's ``q`` columns: :func:`release_select` with ``from_base``). A QI of
    ``unused`` (one the release does not join: :func:`_unjoined`) gets None, no table."""
    names: list = []
    mults = None
    if node is not None:
        mults = batch.multipliers(stats)
        codes = stats.maps(node, stats.base)
    for i, h in enumerate(stats.hierarchies):
        if i in unused:
            names.append(None)
            continue
        name = engine.temp_name(f"map{i}")
        values = recoding.values(i)
        columns = {"leaf": (pa.string(), leaf_keys(h)), "value": (pa.string(), list(values))}
        if leaf_codes:
            columns["leaf_code"] = (pa.int32(), list(range(len(h.leaves))))
        if mults is not None:
            columns["code"] = (pa.int64(), [mults[i] * int(c) for c in codes[i]])
        kind = _label_type(engine, values) if labels else None
        if labels and kind is None:  # too many labels for the type: the release's labels are text
            columns["label"] = (pa.string(), list(values))
            columns["masked"] = (pa.string(), [SUPPRESSED] * len(values))
        if stats.inlined(i):
            names.append(InlineMap(columns, kind))
            continue
        if kind is None:
            engine.register_columns(name, columns)
        else:
            raw = engine.temp_name(f"map{i}_text")
            engine.register_columns(raw, columns)
            typed = exp.select(
                *[col(c) for c in columns],
                exp.alias_(exp.cast(col("value"), kind.copy()), "label", quoted=True),
                exp.alias_(exp.cast(lit(SUPPRESSED), kind), "masked", quoted=True),
            ).from_(table_ref(raw))
            engine.execute(engine.dialect.create_temp(name, typed))
        names.append(name)
    return names


def _label_type(engine, values, most: int | None = None) -> exp.DataType | None:
    """The type of a QI's released labels and the mark ``*`` (:meth:`Dialect.label_type`); None
    above ``most`` labels when given. A NULL label stays NULL (not one of the type's labels)."""
    labels = sorted({*values, SUPPRESSED} - {None})
    return None if most is not None and len(labels) > most else engine.dialect.label_type(labels)


#: a masked label is written as a typed constant (``CAST('*' AS ENUM(..))``) when its type has
#: at most this many labels; above, it is read from the mapping table's ``masked`` column. The
#: column went through every join of the release (slower: docs/measurements.md), the constant
#: spells the type once more
MASK_LITERAL_LABELS = 1024


def masked_labels(engine, stats, recoding) -> list[exp.Expr | None]:
    """Per QI, the masked label of a file release with labels (:func:`mapping_tables`): the
    typed constant when its type is small (:data:`MASK_LITERAL_LABELS`), else None (the mapping
    table's ``masked`` column)."""
    out: list[exp.Expr | None] = []
    for i in range(len(stats.hierarchies)):
        kind = _label_type(engine, recoding.values(i), MASK_LITERAL_LABELS)
        out.append(exp.cast(lit(SUPPRESSED), kind) if kind is not None else None)
    return out


def release_select(stats, maps: list[str], bad_table: str | None, suppression: str = "mask", drop_columns=(), ungeneralized=frozenset(), labels: bool = False, keys: bool = False, masks: Sequence[exp.Expr | None] = (), from_base: bool = False) -> exp.Select:
    """The release query over the source, column order kept, QIs replaced by released values.

    QIs in ``ungeneralized`` (indexes; left at level 0) keep the source column and its type,
    unless masked rows need the text ``*`` in them; generalized QIs are text (VARCHAR). With
    ``labels`` the mapping tables hold ``label``/``masked`` columns (:func:`mapping_tables`),
    which are released instead of ``value``/``'*'`` (a QI's masked label is ``masks[i]`` when
    given: :func:`masked_labels`). With ``keys`` the suppressed classes are
    packed keys (:meth:`Statistics.bad_class_keys_create`), matched against the sum of the
    mapping tables' ``code`` columns per key word: one integer per row instead of every label.

    ``from_base``: the same rows read from the base frequency set instead of the source
    (:func:`from_base_set` says when that is the same release): each base row's leaf codes
    joined to the mapping tables' ``leaf_code`` (a QI left as it is released through its
    mapping: the same text), and the row repeated ``cnt`` times (:meth:`Dialect.repeat_rows`)."""
    engine, source = stats.engine, stats.source
    q = _mapped_rows(stats, maps, from_base, _unjoined(ungeneralized, bad_table, from_base))
    is_bad: exp.Expr | None = None
    if bad_table:
        q, is_bad = _suppressed_classes_joined(stats, q, bad_table, keys, maps, from_base)
    masked = is_bad is not None and suppression == "mask"
    qi_index = {name: i for i, name in enumerate(stats.qis)}
    for name in source.column_names(engine):
        if name in drop_columns:
            continue
        i = qi_index.get(name)
        if i is None:
            if from_base:
                raise SqlanonError(f"column {name!r} is not a quasi-identifier: the release cannot come from the base set")
            q = q.select(col(name, "src"), copy=False)
        elif i in ungeneralized and not masked:
            q = q.select(exp.alias_(mapped(stats, maps, i, "value", from_base), name, quoted=True) if from_base else col(name, "src"), copy=False)
        else:
            value: exp.Expr = mapped(stats, maps, i, "label" if labels else "value", from_base)
            if masked:
                assert is_bad is not None  # masked says so
                value = exp.Case().when(is_bad.copy(), _masked_label(stats, maps, i, masks) if labels else lit(SUPPRESSED)).else_(value)
            q = q.select(exp.alias_(value, name, quoted=True), copy=False)
    if bad_table and suppression == "drop":
        q = q.where(exp.Is(this=col("k0" if keys else stats.qcol(0), "b"), expression=exp.Null()))
    return _repeated(engine, q) if from_base else q


def _unjoined(ungeneralized, bad_table: str | None, from_base: bool) -> set[int]:
    """The QIs whose mapping tables the release does not join: with no suppressed class to
    match, a QI left as it is (``ungeneralized``) is its source column."""
    return set() if bad_table or from_base else set(ungeneralized)


def _mapped_rows(stats, maps: list[str], from_base: bool, unjoined=frozenset()) -> exp.Select:
    """The release's rows joined to the QIs' mapping tables (aliases ``m0``..): the source's
    (``src``, on the leaf's text) or the base set's (``g``, on its leaf code); a QI of
    ``unjoined`` (released as its source column) is not joined. (Every row finds its leaf: the
    base scan refused unmapped values.)"""
    if from_base:
        q = exp.select().from_(table_ref(stats.base.table, alias="g"))
    else:
        q = exp.select().from_(exp.alias_(stats.source_item.copy(), "src", table=True, quoted=True))
    for i, name in enumerate(stats.qis):
        if isinstance(maps[i], InlineMap) or i in unjoined:
            continue
        alias = f"m{i}"
        cond: exp.Expr = exp.EQ(this=col("leaf_code", alias), expression=col(stats.qcol(i), "g")) if from_base else exp.EQ(this=col("leaf", alias), expression=leaf_key(stats.hierarchies[i], col(name, "src")))
        q = q.join(table_ref(maps[i], alias=alias), on=cond, join_type="inner", copy=False)
    return q


def _suppressed_classes_joined(stats, q: exp.Select, bad_table: str, keys: bool, maps: Sequence = (), from_base: bool = False) -> tuple[exp.Select, exp.Expr]:
    """``q`` left-joined to the suppressed classes (alias ``b``: packed keys with ``keys``, else
    released values) and the condition that a row's class is one of them."""
    maps = list(maps) or [f"m{i}" for i in range(len(stats.qis))]
    if keys:
        # each QI's part a BIGINT before they are summed (an inline map's code list that fits
        # INT32 types as INT32; the word's sum may not)
        conds = [exp.EQ(this=col(f"k{w}", "b"), expression=add_all([as_bigint(mapped(stats, maps, i, "code", from_base)) for i, _ in word])) for w, word in enumerate(batch.words(stats))]
        first = "k0"
    else:
        conds = [exp.EQ(this=col(stats.qcol(i), "b"), expression=null_keyed(stats.hierarchies[i].leaves, mapped(stats, maps, i, "value", from_base))) for i in range(len(stats.qis))]
        first = stats.qcol(0)
    q = q.join(table_ref(bad_table, alias="b"), on=exp.and_(*conds) if len(conds) > 1 else conds[0], join_type="left")
    return q, exp.Not(this=exp.Is(this=col(first, "b"), expression=exp.Null()))


def _masked_label(stats, maps: Sequence, i: int, masks: Sequence[exp.Expr | None]) -> exp.Expr:
    """QI ``i``'s masked label (:func:`masked_labels`): its typed constant, else its mapping
    table's ``masked`` column."""
    given = masks[i] if i < len(masks) else None
    return given.copy() if given is not None else mapped(stats, maps, i, "masked")


def _repeated(engine, q: exp.Select) -> exp.Select:
    """A release select over the base set with each row repeated ``cnt`` times
    (:meth:`Dialect.repeat_rows`), in three selects: the base rows' released values and ``cnt``,
    those repeated, and the repeat's own column left out. (Repeated in the select that computes
    the values, DuckDB computed them once per repeated row: a slower COPY,
    docs/measurements.md.)"""
    names = [e.alias_or_name for e in q.expressions]
    count, marker = "sqlanon_count", "sqlanon_repeat"
    while count in names or marker in names:
        count, marker = count + "_", marker + "_"
    repeat = engine.dialect.repeat_rows(col(count))
    if repeat is None:
        raise SqlanonError(f"dialect {engine.dialect.name} cannot repeat rows: the release cannot come from the base set")
    valued = exp.alias_(exp.Subquery(this=q.select(exp.alias_(col("cnt", "g"), count, quoted=True))), "v", table=True, quoted=True)
    repeated = exp.select(*[col(n) for n in names], exp.alias_(repeat, marker, quoted=True)).from_(valued)
    return exp.select(*[col(n) for n in names]).from_(exp.alias_(exp.Subquery(this=repeated), "r", table=True, quoted=True))


def from_base_set(stats, plan, drop_columns=(), microaggregate=None) -> bool:
    """Whether the release can be rebuilt from the base frequency set rather than read from the
    source: every released column is a text quasi-identifier (its released value a function of
    its leaf, and a leaf's text is the source's value), the plan is one full-domain node (no
    local recoding rounds, no microaggregated columns), and the dialect repeats rows
    (:meth:`Dialect.repeat_rows`). The release then has the same rows (in another order: a
    release keeps no row order), and its joins run once per base row instead of once per source
    row (a faster Parquet write: docs/measurements.md)."""
    if plan.node is None or plan.local or microaggregate or not stats.prepared or not stats.qis:
        return False
    if stats.engine.dialect.repeat_rows(col("cnt")) is None:
        return False
    columns = [(name, kind) for name, kind in stats.source.columns(stats.engine) if name not in drop_columns]
    return bool(columns) and all(name in stats.qis and _is_text(kind) for name, kind in columns)


def input_hash(engine, source) -> str:
    """Order-independent hash of every input row (to tie a release to its input)."""
    h = engine.dialect.row_hash(source.column_names(engine))
    q = exp.select(exp.Count(this=exp.Star()), exp.Anonymous(this="bit_xor", expressions=[h])).from_(engine.source_from(source))
    n, x = engine.fetch_one(q)
    return format_input_hash(n, x)


def ungeneralized(stats, recoding) -> set[int]:
    """Indexes of the QIs a recoding leaves as they are (every leaf released as itself)."""
    return {i for i, h in enumerate(stats.hierarchies) if recoding.values(i) == h.leaves}


def rounds_query(stats, plan, suppression: str = "mask", drop_columns=(), microaggregate=None, view=None):
    """The release of a plan with local recoding rounds and/or microaggregated columns
    (:mod:`sqlanon.release.rounds`); registers its small tables on the engine. ``view`` (a
    :meth:`Statistics.for_dialect` copy) builds the final select for another dialect."""
    steps = plan.local or []
    nodes = [s.node for s in steps] if steps else [plan.node]
    maps = round_maps(stats.engine, stats, nodes)
    ok = plan.requirement.predicate()
    bads: list = []

    for r, node in enumerate(nodes):
        round_stats = steps[r].stats if steps else stats
        failing = steps[r].suppressed if steps else plan.suppressed_rows
        if not failing:
            bads.append(None)
            continue
        name = stats.engine.temp_name(f"bad{r}")
        params = Params() if stats.engine.dialect.binds_lists else None
        create = round_stats.bad_class_labels_create(node, ok, name, params)
        stats.engine.execute(create, params) if params else stats.engine.execute(create)
        bads.append(name)
    return rounds_select(view or stats, maps, bads, suppression, drop_columns, microaggregate)


def release_query(stats, plan, suppression: str = "mask", drop_columns=(), microaggregate: dict | None = None, labels: bool = False, from_base: bool = False) -> exp.Query:
    """The release query of a final plan; registers its small tables (mappings, suppressed
    classes) as temp tables on the engine. ``labels``: released values as the dialect's
    :meth:`label_type` (a Parquet file release; see :func:`mapping_tables`), and text source
    columns a plan leaves as they are released through their mapping too (same text).
    ``from_base``: rebuilt from the base frequency set when :func:`from_base_set` allows it.

    Rows withheld for NULL in a ``nulls: suppress`` QI (:mod:`sqlanon.release.withheld`) are
    added masked: the other rows' QIs are then text (``*`` fits every QI column), read from
    the source."""
    if not stats.withheld:
        return _release_query(stats, plan, suppression, drop_columns, microaggregate, labels, from_base)
    query = _release_query(stats, plan, suppression, drop_columns, microaggregate, False, False, keep_types=suppression != "mask")
    return with_withheld(stats, query, suppression, drop_columns, microaggregate)


def _release_query(stats, plan, suppression: str, drop_columns, microaggregate: dict | None, labels: bool, from_base: bool, keep_types: bool = True) -> exp.Select:
    """:func:`release_query` of the rows the statistics read; ``keep_types``: a QI a plan leaves
    as it is keeps its source column (and type)."""
    engine = stats.engine
    if plan.local or microaggregate:
        return rounds_query(stats, plan, suppression, drop_columns, microaggregate)
    labels = labels and engine.dialect.label_type(["x"]) is not None
    # a full-domain node's suppressed rows are found by one packed integer key (labels: Parquet)
    keys = labels and plan.node is not None and bool(plan.suppressed_rows)
    from_base = from_base and from_base_set(stats, plan, drop_columns, microaggregate)
    kept = _kept(stats, plan, labels) if keep_types else set()
    unused = _unjoined(kept, "bad" if plan.suppressed_rows else None, from_base)
    maps = mapping_tables(engine, stats, plan.recoding, labels, tuple(plan.node) if keys else None, leaf_codes=from_base, unused=unused)
    bad = None
    if plan.suppressed_rows:
        bad = engine.temp_name("bad")
        node = plan.node if plan.node is not None else plan.recoding

        params = Params() if engine.dialect.binds_lists else None  # code lists bound, not spelled out
        if keys:
            create = stats.bad_class_keys_create(tuple(node), plan.requirement.predicate(), bad, params)
        else:
            create = stats.bad_class_labels_create(node, plan.requirement.predicate(), bad, params)
        engine.execute(create, params) if params else engine.execute(create)
    masks = masked_labels(engine, stats, plan.recoding) if labels and bad and suppression == "mask" else []
    return release_select(stats, maps, bad, suppression, drop_columns, kept, labels, keys, masks, from_base)


def _kept(stats, plan, labels: bool) -> set[int]:
    """The QIs a plan leaves as they are that keep their source column (and type). With
    ``labels``, a text one is released through its mapping as labels of their type when it has
    one (:func:`_label_type`), else it is its own text."""
    kept = ungeneralized(stats, plan.recoding)
    if not labels:
        return kept
    types = dict(stats.source.columns(stats.engine))
    return {i for i in kept if not _is_text(types.get(stats.qis[i])) or _label_type(stats.engine, plan.recoding.values(i)) is None}


def _is_text(type_name) -> bool:
    return str(type_name or "").upper() in ("VARCHAR", "TEXT", "STRING")


def write(stats, plan, target: Target, suppression: str = "mask", drop_columns=(), registry_path: str | None = None, entry: dict | None = None, fail_after_write: bool = False, microaggregate: dict | None = None, say=None, linked: dict | None = None) -> dict:
    """Write the plan's release; returns ``{"output": ..., "release_id": ...}``.

    ``fail_after_write`` is for tests: it raises after the data is written but before the
    transaction commits, to prove nothing is left half-written.
    """
    engine = stats.engine
    if suppression not in ("mask", "drop"):
        raise ConfigError(f"--suppression must be mask or drop, got {suppression!r}")
    if target.kind == "none":
        return {"output": None, "release_id": None}
    query = release_query(stats, plan, suppression, drop_columns, microaggregate, labels=target.kind == "parquet", from_base=FROM_BASE)
    query = linked_select(engine, query, linked or {})  # columns linked to a QI: no finer than its released value
    entry = dict(entry or {})
    if not entry.get("input_hash"):  # the base scan usually computed it already (row_hash)
        entry["input_hash"] = stats.input_hash or input_hash(engine, stats.source)
    entry["target"] = target.describe()
    if target.kind in ("parquet", "csv"):
        return _write_file(engine, query, target, entry, registry_path, fail_after_write, say)
    return _write_table(engine, query, target, stats.source, entry, fail_after_write)


def write_query(engine, query, target: Target, source, entry: dict, registry_path: str | None = None, say=None, also=None) -> dict:
    """Write any release query (e.g. generated rows) to a target, atomically, and record it.
    ``also(registry engine, release id)`` runs more statements in the registry row's transaction
    (an incremental release's lineage: :mod:`sqlanon.run.incremental`)."""
    entry = dict(entry)
    entry["target"] = target.describe()
    if target.kind == "none":
        return {"output": None, "release_id": None}
    if target.kind in ("parquet", "csv"):
        return _write_file(engine, query, target, entry, registry_path, False, say, also)
    return _write_table(engine, query, target, source, entry, False, also)


def _write_file(engine, query, target: Target, entry: dict, registry_path, fail_after_write, say=None, also=None) -> dict:
    final = target.file
    if hasattr(engine, "write_file_atomically"):  # Spark: its writer, its file system's rename
        return _write_engine_file(engine, query, target, entry, registry_path, fail_after_write)
    os.makedirs(os.path.dirname(os.path.abspath(final)), exist_ok=True)
    clean_stale_temp_files(final, say)
    tmp = temp_path(final)
    reg = registry_path or registry.default_registry_for(final)
    try:
        engine.write_file(query, tmp, target.kind, target.delimiter)
        if fail_after_write:
            raise SqlanonError("simulated failure after writing (test hook)")
        pause_for_test("write")
        with _registry_row(reg, entry, final, also) as result:
            os.replace(tmp, final)  # inside the registry transaction: it commits once the file is there
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    return {"output": final, "release_id": result["release_id"], "registry": reg}


def pause_for_test(point: str) -> None:
    """Test hook: with ``SQLANON_TEST_PAUSE=<point>``, say ``paused at <point>`` on stderr and
    wait (a signal's handler runs meanwhile), so a test can signal a run at a known point."""
    if os.environ.get("SQLANON_TEST_PAUSE") != point:
        return
    import sys
    import time

    print(f"paused at {point}", file=sys.stderr, flush=True)
    for _ in range(600):
        time.sleep(0.1)


def check_target(engine, target: Target, source) -> TableName | None:
    """Refuse a table target that cannot be written, before anything is scanned: an existing
    output table without ``--overwrite``, a view in the way, a missing schema, ``--in-place`` on
    a view. Returns the existing table (as the catalog spells it), if any. (Spark's catalog
    has no information schema: an existing output table and an in-place table without an atomic
    replace are refused here through its catalog API, and checked again when written.)"""
    if hasattr(engine, "replace_table"):
        _check_catalog_target(engine, target, source)
        return None
    if target.kind == "in_place":
        return _check_in_place(engine, source)
    if target.kind != "table":
        return None
    return _check_output_table(engine, target, source)


def _check_catalog_target(engine, target: Target, source) -> None:
    """:func:`check_target` on an engine with a catalog API and no information schema (Spark)."""
    if target.kind == "in_place":
        engine.check_replaceable(source.table_expression())
    elif target.kind == "table" and source is not None and source.kind == "table" and _same_catalog_table(engine, target.table_name, source):
        raise ConfigError(f"--output-table {target.table} is the input table; use --in-place to replace it")
    elif target.kind == "table" and not target.overwrite and engine.table_exists(Source(kind="table", table=target.table).table_expression()):
        raise ConfigError(f"output table {target.table!r} already exists (use --overwrite)")


def _check_in_place(engine, source) -> TableName:
    """``--in-place``: the input is a base table nothing depends on (a view or a foreign key)."""
    name = source.table_name(engine.dialect)
    kind = name.kind or (lookup(engine, name) or name).kind
    if kind is not None and kind != BASE_TABLE:
        raise ConfigError(f"--in-place rewrites a table; {source.table!r} is a {kind.lower()} (write the release with --output-table instead)")
    dependents = engine.dependents(name.expression()) if hasattr(engine, "dependents") else []
    if dependents:
        raise ConfigError(f"--in-place recreates table {source.table!r}, and {', '.join(dependents)} depend{'s' if len(dependents) == 1 else ''} on it (a view or a foreign key): drop {'it' if len(dependents) == 1 else 'them'} first, or write the release with --output-table")
    return name


def _check_output_table(engine, target: Target, source) -> TableName | None:
    """``--output-table``: not the input, its schema exists, and an existing table (not a view)
    only with ``--overwrite``. Returns the existing table, if any."""
    name = TableName.parse(target.table_name, engine.dialect)
    existing = lookup(engine, name)
    if existing is not None and source is not None and source.kind == "table" and same_table(engine, name, source.table_name(engine.dialect)):
        raise ConfigError(f"--output-table {target.table} is the input table; use --in-place to replace it (in one transaction)")
    if existing is None:
        if not schema_exists(engine, name):
            raise ConfigError(f"schema {name.schema!r} of output table {target.table!r} not found (create it first)")
        return None
    if existing.kind == VIEW:
        raise ConfigError(f"output table {target.table!r} is a view; name another table")
    if not target.overwrite:
        raise ConfigError(f"output table {target.table!r} already exists (use --overwrite)")
    return existing


def check_registry(engine, target: Target, source, registry_path: str | None, lazy: bool = False) -> None:
    """Before the search: the registry the release will be recorded in can take its row (the
    target database's ``sqlanon_releases`` for a table release, or ``lazy``: a release relation
    on the caller's connection; the registry database of a file release). ``--registry`` names
    the registry of a file release only."""
    if target.kind in ("table", "in_place") or (target.kind == "none" and lazy):
        if registry_path:
            raise ConfigError(f"--registry {registry_path} is where file releases are recorded; a table release is recorded in its own database (sqlanon_releases)")
        registry.check(engine, engine.database or "of the connection")
        return
    if target.kind not in ("parquet", "csv"):
        return
    reg = registry_path or (registry.default_registry_for(target.file) if "://" not in target.file else None)
    if reg:
        registry.check_file(reg, source.database if source is not None and source.kind == "table" else None)


def _write_engine_file(engine, query, target: Target, entry: dict, registry_path, fail_after_write) -> dict:
    """An engine that writes (and renames) files itself: a temporary sibling, then one rename. A
    local path is made absolute here: a JVM's working folder need not be this process's."""
    final = target.file if "://" in target.file else os.path.abspath(target.file)

    def hook():
        if fail_after_write:
            raise SqlanonError("simulated failure after writing (test hook)")

    reg = registry_path or (registry.default_registry_for(final) if "://" not in final else None)
    if reg and "://" not in reg:  # the registry beside an output whose folder Spark has not made yet
        os.makedirs(os.path.dirname(os.path.abspath(reg)), exist_ok=True)
    with _registry_row(reg, entry, final) as result:
        engine.write_file_atomically(query, final, target.kind, target.delimiter, overwrite=target.overwrite, before_rename=hook)
    return {"output": final, "release_id": result["release_id"], "registry": reg}


@contextlib.contextmanager
def _registry_row(reg, entry: dict, final: str | None = None, also=None):
    """Both or neither: the registry row of a file release is inserted in a transaction of the
    registry database, the block puts the file in place, and the transaction commits after it.
    A row that cannot be written fails the block before the file is renamed; a failed commit
    removes the file (``final``, when it is a local path). Yields ``{"release_id": ...}``."""
    result: dict = {"release_id": None}
    if not reg:
        yield result
        return

    created = "://" not in reg and not os.path.exists(reg)  # a registry made by this run goes if it fails
    reg_engine = connect(database=reg)
    placed = False
    try:
        with reg_engine.transaction():
            result["release_id"] = registry.record(reg_engine, entry)
            if also is not None:
                also(reg_engine, result["release_id"])
            yield result
            placed = True
    except BaseException:
        reg_engine.close()
        for path in ([final] if placed and final and "://" not in final else []) + ([reg, reg + ".wal"] if created else []):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        raise
    finally:
        reg_engine.close()


def _write_catalog_table(engine, query, target: Target, source, entry: dict, fail_after_write) -> dict:
    """Spark (no transactions). A new table is written under a temporary name and renamed when
    complete (a failure drops it; an existing table is dropped only once the new one exists);
    ``--in-place`` is one ``CREATE OR REPLACE TABLE`` where the catalog replaces atomically."""
    table = Source(kind="table", table=target.table).table_expression()
    if target.kind == "in_place":
        if fail_after_write:
            raise SqlanonError("simulated failure before replacing (test hook)")
        engine.replace_table(source.table_expression(), query)
    else:
        exists = engine.table_exists(table)
        if exists and not target.overwrite:
            raise ConfigError(f"output table {target.table!r} already exists (use --overwrite)")
        tmp = table.copy()
        tmp.set("this", exp.to_identifier(f"{table.name}__sqlanon_new_{uuid.uuid4().hex[:8]}", quoted=True))
        engine.execute(engine.dialect.create_table(tmp, query))
        try:
            if fail_after_write:
                raise SqlanonError("simulated failure after writing (test hook)")
            if exists:
                engine.execute(engine.dialect.drop_table(table))
            engine.execute(exp.Alter(this=tmp, kind="TABLE", actions=[exp.AlterRename(this=table)]))
        except BaseException:
            with contextlib.suppress(Exception):
                engine.execute(engine.dialect.drop_table(tmp, if_exists=True))
            raise
    release_id = registry.record(engine, entry)
    return {"output": f"table {target.table}", "release_id": release_id, "registry": "spark catalog"}


def _write_table(engine, query, target: Target, source, entry: dict, fail_after_write, also=None) -> dict:
    name = target.table
    if hasattr(engine, "replace_table"):
        return _write_catalog_table(engine, query, target, source, entry, fail_after_write)
    with engine.transaction():
        if target.kind == "table":
            existing = check_target(engine, target, source)
            if existing is not None:  # replaced under the name the catalog has for it
                engine.execute(engine.dialect.drop_table(existing.expression()))
            created = existing or TableName.parse(target.table_name, engine.dialect)
            engine.execute(engine.dialect.create_table(created.expression(), query))
        else:
            check_target(engine, target, source)
            original = source.table_name(engine.dialect)
            tmp = original.sibling(f"{original.name}__sqlanon_new")
            engine.execute(engine.dialect.create_table(tmp.expression(), query))
            engine.execute(engine.dialect.drop_table(original.expression()))
            engine.execute(exp.Alter(this=tmp.expression(), kind="TABLE", actions=[exp.AlterRename(this=table_ref(original.name))]))
        release_id = registry.record(engine, entry)
        if also is not None:
            also(engine, release_id)
        if fail_after_write:
            raise SqlanonError("simulated failure after writing (test hook)")
        pause_for_test("in-transaction")
        if os.environ.get("SQLANON_TEST_CRASH") == "in-transaction":
            os._exit(9)  # test hook: the process dies with the transaction open
    return {"output": f"table {name}", "release_id": release_id, "registry": engine.database}


def _same_catalog_table(engine, output_table: str, source) -> bool:
    """Whether ``--output-table`` names the input table in an engine that resolves names through
    its own catalog API (Spark)."""
    out = engine.resolved_table(Source(kind="table", table=output_table).table_expression())
    return out is not None and out == engine.resolved_table(source.table_expression())
