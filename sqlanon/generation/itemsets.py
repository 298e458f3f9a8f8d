"""Items, the frequency set, and frequent itemsets counted by SQL.

Each ``(column, value)`` of the source is an *item*; a row is the set of its items (one per column).

1. :func:`encode` asks two small questions by SQL: the distinct values per column with their
   counts (the item alphabet; items are numbered in *item order*: the value in natural order --
   digit runs compared as numbers -- then the column; for KRIMP-coded data ``i<id>`` this is the
   KRIMP item order), and the **frequency set**: the distinct full rows with their counts, one
   ``GROUP BY`` joined to the item table, kept in a temp table and fetched as integer codes. Its
   size is the number of distinct rows, not the number of rows (Adult: 19,502 of 30,162).
2. :func:`mine` mines itemsets **in compiled code over that frequency set** (numba, see
   :mod:`sqlanon.generation.kernels`): a depth-first search over tid lists of distinct rows, each
   support the sum of the rows' counts; ``closed`` candidates by LCM's prefix-preserving closure
   extension, so only closed itemsets are ever visited (mushroom at min_sup 20: 109,304 closed
   itemsets in seconds, where listing every frequent itemset first never finishes). Why not by
   SQL: a search step depends on the one before, and at a round trip per step level-wise SQL took
   tens of minutes (docs/measurements.md). The itemsets stay in flat numpy arrays, never Python objects.
   :func:`level_query` is the same count as one SQL statement per level (``GROUPING SETS``); the
   golden tests check it against the miner's answer.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.search import limits as lim
from sqlanon.generation.krimp import MAX_COLUMNS, Candidates, WeightedDatabase
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import as_varchar, lit, sum_
from sqlanon.expr.atoms import union_all

_RUN = re.compile(r"(\d+)")


def natural_key(value: str | None) -> tuple:
    """Sort key: digit runs as numbers (``i2 < i10``); NULL first."""
    if value is None:
        return ((0, 0, ""),)
    parts = _RUN.split(value)
    return tuple((1, int(p), "") if i % 2 else (2, 0, p) for i, p in enumerate(parts) if p != "")


@dataclass
class Encoded:
    """The integer-coded frequency set of a source (a temp table) and the item alphabet."""

    db: WeightedDatabase
    table: str  # temp table: c0..c{m-1} item ids, cnt
    columns: list[str]
    item_column: np.ndarray
    item_labels: list[str | None]

    @property
    def n_rows(self) -> int:
        return self.db.n_rows

    def item_id(self, column: int, label: str | None) -> int | None:
        if not hasattr(self, "_lookup"):
            self._lookup = {(int(c), v): i for i, (c, v) in enumerate(zip(self.item_column, self.item_labels))}
        return self._lookup.get((column, label))


def _code(i: int) -> str:
    return f"c{i}"


def encode(engine, source: Source, columns: list[str]) -> Encoded:
    """Build the item table and the frequency set of ``columns`` in the database."""
    if not columns:
        raise ConfigError("at least one column is needed")
    if len(set(columns)) != len(columns):
        raise ConfigError(f"a column is listed twice: {columns}")
    if len(columns) > MAX_COLUMNS:
        raise ConfigError(f"at most {MAX_COLUMNS} columns can be generated, got {len(columns)}")
    source.require_columns(engine, columns)
    # 1. the raw frequency set (values as VARCHAR), kept in the database
    raw = engine.temp_name("gen_raw")
    engine.execute(engine.dialect.create_temp(raw, raw_select(engine.source_from(source), columns)))
    # 2. the item alphabet: distinct values per column with counts (small)
    alphabet = engine.fetch_all(alphabet_query(raw, len(columns)))
    if not alphabet:
        raise ConfigError(f"input {source.describe()} has no rows")
    alphabet.sort(key=lambda r: (natural_key(r[1]), int(r[0])))
    item_column = np.asarray([int(r[0]) for r in alphabet], dtype=np.int64)
    labels = [r[1] for r in alphabet]
    items = engine.temp_name("gen_items")
    engine.register_arrow(
        items,
        pa.table({
            "c": pa.array(item_column, pa.int64()),
            "v": pa.array(labels, pa.string()),
            "item": pa.array(np.arange(len(labels)), pa.int64()),
        }),
    )
    # 3. the coded frequency set
    fs = engine.temp_name("gen_fs")
    engine.execute(engine.dialect.create_temp(fs, coded_select(raw, items, len(columns))))
    engine.execute(drop_table(raw, engine.dialect))
    arrow = engine.fetch_arrow(exp.select(*[col(_code(i)) for i in range(len(columns))], col("cnt")).from_(table_ref(fs)))
    rows = np.stack([arrow.column(_code(i)).to_numpy() for i in range(len(columns))], axis=1).astype(np.int64)
    weights = arrow.column("cnt").to_numpy().astype(np.int64)
    db = WeightedDatabase(rows, weights, item_column, [str(v) for v in labels], list(columns))
    return Encoded(db, fs, list(columns), item_column, labels)


def raw_select(source_item: exp.Expr, columns: list[str]) -> exp.Select:
    """The raw frequency set: ``v0..`` (each column's value as text) and ``cnt``, from one scan."""
    src = exp.alias_(source_item.copy(), "src", table=True, quoted=True)
    vals = [exp.alias_(as_varchar(col(c, "src")), f"v{i}", quoted=True) for i, c in enumerate(columns)]
    q = exp.select(*vals, exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True)).from_(src)
    return q.group_by(*[as_varchar(col(c, "src")) for c in columns])


def alphabet_query(raw: str, n_columns: int) -> exp.Expr:
    """The item alphabet: ``c, v, n`` (column index, value, rows) for every column of ``raw``."""
    return union_all([
        exp.select(
            exp.alias_(lit(i), "c", quoted=True),
            exp.alias_(col(f"v{i}"), "v", quoted=True),
            exp.alias_(sum_(col("cnt")), "n", quoted=True),
        ).from_(table_ref(raw)).group_by(col(f"v{i}"))
        for i in range(n_columns)
    ])


def coded_select(raw: str, items: str, n_columns: int) -> exp.Select:
    """The coded frequency set: ``c0..`` (item ids, through the item table) and ``cnt``."""
    sel = exp.select(*[exp.alias_(col("item", f"t{i}"), _code(i), quoted=True) for i in range(n_columns)], col("cnt", "r"))
    sel = sel.from_(table_ref(raw, alias="r"))
    for i in range(n_columns):
        cond = exp.and_(
            exp.EQ(this=col("c", f"t{i}"), expression=lit(i)),
            exp.NullSafeEQ(this=col("v", f"t{i}"), expression=col(f"v{i}", "r")),
        )
        sel = sel.join(table_ref(items, alias=f"t{i}"), on=cond, join_type="inner")
    return sel


class Itemsets:
    """Frequent itemsets in compact arrays (:class:`~sqlanon.generation.krimp.Candidates`);
    ``items`` gives them as sorted item-id tuples (made on first use: tests and small tables)."""

    def __init__(self, candidates: Candidates, time_limited: bool = False) -> None:
        self.candidates = candidates
        self.time_limited = time_limited
        self.over_limit = False
        self._tuples: list[tuple[int, ...]] | None = None

    @property
    def support(self) -> np.ndarray:
        return self.candidates.support

    @property
    def items(self) -> list[tuple[int, ...]]:
        if self._tuples is None:
            self._tuples = self.candidates.tuples()
        return self._tuples

    def __len__(self) -> int:
        return len(self.candidates)

    def as_dict(self) -> dict[tuple[int, ...], int]:
        return dict(zip(self.items, self.support.tolist()))


def level_query(fs_table: str, m: int, subsets: list[tuple[int, ...]], min_sup: int, closed: bool) -> exp.Expr:
    """One statement counting every frequent itemset over each column subset of one level.

    ``GROUP BY GROUPING SETS`` (one set per column subset) over the frequency set. Output:
    ``c0..c{m-1}`` (item id, NULL where the column is not in the itemset), ``sup`` and, for closed
    candidates, ``d0..d{m-1}`` (column j takes two or more values among the rows containing X).
    """
    grouped = {j for S in subsets for j in S}
    null = exp.Cast(this=exp.Null(), to=exp.DataType.build("BIGINT"))
    outs: list[exp.Expr] = [col(_code(j)) if j in grouped else exp.alias_(null, _code(j), quoted=True) for j in range(m)]
    outs.append(exp.alias_(sum_(col("cnt")), "sup", quoted=True))
    if closed:
        for j in range(m):
            d = exp.NEQ(this=exp.Min(this=col(_code(j))), expression=exp.Max(this=col(_code(j))))
            outs.append(exp.alias_(d, f"d{j}", quoted=True))
    sets = exp.GroupingSets(expressions=[exp.Tuple(expressions=[col(_code(j)) for j in S]) for S in subsets])
    q = exp.select(*outs).from_(table_ref(fs_table))
    q.set("group", exp.Group(expressions=[sets]))
    return q.having(exp.GTE(this=sum_(col("cnt")), expression=lit(int(min_sup))))


def mine(
    engine,
    enc: Encoded,
    min_sup: int,
    candidates: str = "all",
    min_length: int = 2,
    max_length: int | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    deadline: float | None = None,
    limit: int | None = None,
) -> Itemsets:
    """Frequent (``all``) or closed frequent (``closed``) itemsets of length >= ``min_length``.

    Mined by the compiled depth-first search of :func:`sqlanon.generation.kernels.mine_slice`
    over the frequency set that :func:`encode` fetched (distinct rows with their counts), closed
    ones by LCM's closure extension (never all-then-filter). The search runs in slices of about a
    quarter second: ``progress(root branches done, root branches, itemsets so far)`` is called
    after each, and past ``deadline`` (:func:`sqlanon.search.limits.now`) the rest is skipped
    (``Itemsets.time_limited``). With ``limit``, mining stops once more than ``limit`` itemsets
    were found (``Itemsets.over_limit``; the caller decides what that means).
    """
    from sqlanon.generation import kernels

    if candidates not in ("all", "closed"):
        raise ConfigError(f"--candidates must be all or closed, got {candidates!r}")
    if min_sup < 1:
        raise ConfigError(f"--min-sup must be at least 1, got {min_sup}")
    db = enc.db
    rows = np.ascontiguousarray(db.rows, dtype=np.int32)
    wts = np.ascontiguousarray(db.weights, dtype=np.int64)
    icol = np.ascontiguousarray(db.item_column, dtype=np.int32)
    st = kernels.miner_state(rows.shape[0], rows.shape[1], db.n_items)
    parts = []
    n_found, budget = 0, 1 << 16
    limited = over = False
    while st["d"][0] != -1:
        if deadline is not None and lim.now() >= deadline:
            limited = True
            break
        t = time.perf_counter()
        room = 0 if limit is None else max(limit - n_found, 1)
        items, offsets, support, n = kernels.mine_slice(
            rows, wts, icol, int(min_sup), candidates == "closed", int(min_length), int(max_length or 0),
            st["tids"], st["nts"], st["pvs"], st["ext"], st["ext_n"], st["ext_pos"], st["plen"], st["d"],
            st["count"], st["touched"], budget, room)
        spent = time.perf_counter() - t
        budget = int(min(max(budget * 0.25 / spent, 1 << 12), 1 << 34)) if spent > 0 else budget * 4
        parts.append((items.copy(), offsets.copy(), support.copy()))  # not the slice's grown buffers
        n_found += int(n)
        if limit is not None and n_found > limit:
            over = True
            parts = []  # the caller only learns that there are too many
            break
        if progress is not None:
            progress(int(min(st["ext_pos"][0], st["ext_n"][0])) if st["d"][0] != -1 else int(st["ext_n"][0]), int(st["ext_n"][0]), n_found)
    out = Itemsets(_concat(parts), time_limited=limited)
    out.over_limit = over
    return out


def _concat(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> Candidates:
    if not parts:
        return Candidates(np.empty(0, np.int32), np.zeros(1, np.int64), np.empty(0, np.int64))
    items = np.concatenate([p[0] for p in parts]).astype(np.int32, copy=False)
    shift = np.cumsum([0] + [len(p[0]) for p in parts[:-1]])
    offsets = np.concatenate([np.zeros(1, np.int64)] + [p[1][1:] + s for p, s in zip(parts, shift)])
    support = np.concatenate([p[2] for p in parts]).astype(np.int64, copy=False)
    return Candidates(items, offsets, support)


def drop_table(name: str, dialect) -> exp.Expr:
    """Drop the temporary table ``name`` in ``dialect``'s shape (Spark: a cached view)."""
    return dialect.drop_temp(name)


def drop(engine, enc: Encoded) -> None:
    engine.execute(drop_table(enc.table, engine.dialect))


def distinct_rows(rows: np.ndarray, item_column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` (item ids, column ``j`` holding items of column ``j``) and
    the count of each. When the columns' value counts multiply to less than 2**62, each row is
    packed into one integer (mixed radix: the item's rank within its column), the keys counted by
    one sort and the distinct ones unpacked (docs/measurements.md); otherwise the
    rows are sorted as byte strings (several times slower)."""
    m = rows.shape[1]
    item_column = np.asarray(item_column, dtype=np.int64)
    radix = np.maximum(np.bincount(item_column, minlength=m), 1).astype(np.int64)
    if float(np.prod(radix.astype(np.float64))) >= 2.0**62:
        view = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * m))).ravel()
        _, first, counts = np.unique(view, return_index=True, return_counts=True)
        return np.asarray(rows[first], dtype=np.int64), counts
    by_column = [np.nonzero(item_column == j)[0] for j in range(m)]
    rank = np.zeros(len(item_column), dtype=np.int64)
    for ids in by_column:  # the rank of each item within its column
        rank[ids] = np.arange(len(ids))
    key = np.zeros(len(rows), dtype=np.int64)
    for j in range(m):
        key *= radix[j]
        key += rank[rows[:, j]]
    keys, counts = np.unique(key, return_counts=True)
    out = np.empty((len(keys), m), dtype=np.int64)
    for j in range(m - 1, -1, -1):
        out[:, j] = by_column[j][keys % radix[j]]
        keys //= radix[j]
    return out, counts


def encode_codes(engine, parent: Encoded, rows: np.ndarray) -> Encoded:
    """:func:`encode` of a table given as item ids of ``parent`` (generated rows), without a scan
    of its text: the items that occur, renumbered in :func:`encode`'s order (natural order of the
    value, then column), and the distinct rows with their counts (:func:`distinct_rows`). Equal to
    :func:`encode` of the same rows written as text, up to the order of the distinct rows."""
    rows = np.ascontiguousarray(rows)
    if not len(rows):
        raise ConfigError("the generated table has no rows")
    used = np.nonzero(np.bincount(rows.ravel(), minlength=len(parent.item_labels)))[0]  # the items that occur
    order = sorted(used.tolist(), key=lambda i: (natural_key(parent.item_labels[i]), int(parent.item_column[i])))
    new_id = np.full(len(parent.item_labels), -1, dtype=np.int64)
    new_id[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    distinct, counts = distinct_rows(rows, parent.item_column)
    coded = new_id[distinct]
    item_column = np.asarray(parent.item_column, dtype=np.int64)[order]
    labels = [parent.item_labels[i] for i in order]
    table = engine.temp_name("gen_fs")
    engine.register_arrow(table, pa.table({"cnt": pa.array(np.zeros(0, dtype=np.int64))}))  # a name for drop()
    db = WeightedDatabase(coded, counts.astype(np.int64), item_column, [str(v) for v in labels], list(parent.columns))
    return Encoded(db, table, list(parent.columns), item_column, labels)
