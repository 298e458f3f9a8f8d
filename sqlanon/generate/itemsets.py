"""Items, the frequency set, and frequent itemsets counted by SQL.

Each ``(column, value)`` of the source is an *item*; a row is the set of its items (one per column).

1. :func:`encode` asks two small questions by SQL: the distinct values per column with their
   counts (the item alphabet; items are numbered in *item order*: the value in natural order --
   digit runs compared as numbers -- then the column; for KRIMP-coded data ``i<id>`` this is the
   KRIMP item order), and the **frequency set**: the distinct full rows with their counts, one
   ``GROUP BY`` joined to the item table, kept in a temp table and fetched as integer codes. Its
   size is the number of distinct rows, not the number of rows (Adult: 19,502 of 30,162).
2. :func:`mine` counts itemsets **level-wise by generated SQL over the frequency set**: level k is
   one statement, a ``UNION ALL`` of one ``GROUP BY ... HAVING SUM(cnt) >= min_sup`` per k-column
   subset whose (k-1)-subsets all had a frequent itemset (Apriori over column sets; within a
   column set ``HAVING`` keeps exactly the frequent itemsets). Closed itemsets are decided in the
   same statement: X over columns S is closed iff every column outside S takes at least two
   values among the rows that contain X (``MIN(c) <> MAX(c)``), i.e. no superset has X's support.

Honest note: KRIMP needs *all* candidates, so with ``min_sup=1`` the itemsets themselves are many
(nursery: 307,559) and are held in Python as int arrays; only the counting is done in the database.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.generate.krimp import MAX_COLUMNS, WeightedDatabase
from sqlanon.source import Source, col, table_ref
from sqlanon.stats import as_varchar, lit, sum_
from sqlanon.stats.build import union_all

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


def raw_select(source_item: exp.Expression, columns: list[str]) -> exp.Select:
    """The raw frequency set: ``v0..`` (each column's value as text) and ``cnt``, from one scan."""
    src = exp.alias_(source_item.copy(), "src", table=True, quoted=True)
    vals = [exp.alias_(as_varchar(col(c, "src")), f"v{i}", quoted=True) for i, c in enumerate(columns)]
    q = exp.select(*vals, exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True)).from_(src)
    return q.group_by(*[as_varchar(col(c, "src")) for c in columns])


def alphabet_query(raw: str, n_columns: int) -> exp.Expression:
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


@dataclass
class Itemsets:
    """Frequent itemsets: ``items[k]`` (sorted item ids) with ``support[k]``."""

    items: list[tuple[int, ...]]
    support: np.ndarray

    def __len__(self) -> int:
        return len(self.items)

    def as_dict(self) -> dict[tuple[int, ...], int]:
        return dict(zip(self.items, self.support.tolist()))


def level_query(fs_table: str, m: int, subsets: list[tuple[int, ...]], min_sup: int, closed: bool) -> exp.Expression:
    """One statement counting every frequent itemset over each column subset of one level.

    ``GROUP BY GROUPING SETS`` (one set per column subset) over the frequency set. Output:
    ``c0..c{m-1}`` (item id, NULL where the column is not in the itemset), ``sup`` and, for closed
    candidates, ``d0..d{m-1}`` (column j takes two or more values among the rows containing X).
    """
    grouped = {j for S in subsets for j in S}
    null = exp.Cast(this=exp.Null(), to=exp.DataType.build("BIGINT"))
    outs: list[exp.Expression] = [col(_code(j)) if j in grouped else exp.alias_(null, _code(j), quoted=True) for j in range(m)]
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
) -> Itemsets:
    """Frequent (``all``) or closed frequent (``closed``) itemsets of length >= ``min_length``."""
    if candidates not in ("all", "closed"):
        raise ConfigError(f"--candidates must be all or closed, got {candidates!r}")
    if min_sup < 1:
        raise ConfigError(f"--min-sup must be at least 1, got {min_sup}")
    m = len(enc.columns)
    top = m if max_length is None else min(m, max_length)
    closed = candidates == "closed"
    items: list[tuple[int, ...]] = []
    sups: list[np.ndarray] = []
    alive: set[tuple[int, ...]] = set()
    # level 1: the frequent items (one statement for all columns)
    level1 = [(j,) for j in range(m)]
    for k in range(1, top + 1):
        if k == 1:
            subsets = level1
        else:
            subsets = [S for S in itertools.combinations(range(m), k) if all(T in alive for T in itertools.combinations(S, k - 1))]
        if not subsets:
            break
        got = _run_level(engine, enc.table, m, subsets, min_sup, closed)
        if got is None:
            break
        codes, sup, is_closed, present = got
        alive = set()
        for S, n in present.items():
            if n:
                alive.add(S)
        if k >= min_length and len(sup):
            keep = is_closed if closed else np.ones(len(sup), dtype=bool)
            codes = codes[keep]
            sup_k = sup[keep]
            srt = np.sort(np.where(codes < 0, np.iinfo(np.int64).max, codes), axis=1)[:, :k]
            items.extend(map(tuple, srt.tolist()))
            sups.append(sup_k)
        if not alive:
            break
    support = np.concatenate(sups) if sups else np.empty(0, dtype=np.int64)
    return Itemsets(items, support.astype(np.int64))


def _run_level(engine, table, m, subsets, min_sup, closed, batch: int = 512):
    codes_l, sup_l, closed_l = [], [], []
    present: dict[tuple[int, ...], int] = {}
    for b in range(0, len(subsets), batch):
        part = subsets[b : b + batch]
        arrow = engine.fetch_arrow(level_query(table, m, part, min_sup, closed))
        if arrow.num_rows == 0:
            continue
        codes = np.stack([arrow.column(_code(j)).fill_null(-1).to_numpy() for j in range(m)], axis=1).astype(np.int64)
        absent = codes < 0
        codes_l.append(codes)
        sup_l.append(arrow.column("sup").to_numpy().astype(np.int64))
        if closed:
            d = np.stack([arrow.column(f"d{j}").fill_null(False).to_numpy(zero_copy_only=False) for j in range(m)], axis=1).astype(bool)
            closed_l.append((d | ~absent).all(axis=1))
        else:
            closed_l.append(np.ones(len(codes), dtype=bool))
        # which column subsets produced at least one frequent itemset
        sig = (~absent) @ (np.int64(1) << np.arange(m, dtype=np.int64))
        for s in np.unique(sig).tolist():
            present[tuple(j for j in range(m) if (s >> j) & 1)] = 1
    if not codes_l:
        return np.empty((0, m), dtype=np.int64), np.empty(0, dtype=np.int64), np.empty(0, dtype=bool), present
    return np.concatenate(codes_l), np.concatenate(sup_l), np.concatenate(closed_l), present


def drop_table(name: str, dialect) -> exp.Expression:
    """Drop the temporary table ``name`` in ``dialect``'s shape (Spark: a cached view)."""
    return dialect.drop_temp(name)


def drop(engine, enc: Encoded) -> None:
    engine.execute(drop_table(enc.table, engine.dialect))
