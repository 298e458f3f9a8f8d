"""Statistics for the genetic search: fitness of many flexible cuts per statement, by SQL.

The genetic search (:mod:`sqlanon.search.genetic.planner`) scores thousands of candidate solutions. Each
candidate is a :class:`sqlanon.plan.Recoding` (per QI: leaf code -> released code). Its classes are
a ``GROUP BY`` of the **frequency set**, never of the source:

1. :meth:`GeneticStats.prepare` scans the source once more into ``gbase``: one row per distinct
   tuple of leaf codes ``q0..qn`` with ``cnt`` and, per usage target, pivoted class counts
   (``t{t}_{j}`` = rows of class value ``j``) or sums (``r{t}_s1 = SUM(v)``, ``r{t}_s2 = SUM(v*v)``).
   For a median-based regression target a second set ``gbase_v{t}`` keeps ``v`` as a key.
2. :meth:`GeneticStats.evaluate` takes a *batch* of candidates. The QIs are split into **blocks**
   of consecutive QIs whose leaf domains multiply to at most ``BLOCK_CELLS`` (4096); ``gbase``
   holds each row's block index ``b{j}`` (its leaf codes in mixed radix, computed once). Per
   candidate and block, Python (numpy) turns the per-QI cuts into two short lists indexed by the
   block index: ``kb{j}`` = the block's share of the packed class key (released codes times the
   batch's strides, so one BIGINT ``key = kb0[b0] + kb1[b1] + ..`` names the class; several words
   ``key, key1, ..`` only when the batch's cuts need more than 62 bits) and ``lb{j}`` = the
   block's LM loss of the row. A row then costs one lookup per block instead of one per QI (24
   QIs -> 12 blocks), and the LM needs no per-class decoding. Every candidate's aggregates come
   from **one** statement::

       cand x gbase -> GROUP BY c, key (classes: cnt, per-target sums, LM) -> flag ok (the privacy
       predicate, e.g. cnt >= k) -> GROUP BY c (suppressed rows, metric terms)

The per-attribute parts (released code and LM loss per leaf, the LM column totals) depend on one
attribute's cut only and are cached per attribute by the caller (:mod:`sqlanon.search.genetic.objective`).

The list lookups index 1-based arrays (DuckDB lists, PostgreSQL arrays): ``k0[q0 + 1]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import cast

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import add_all, as_bigint, as_double, as_varchar, cte_select, if_, lit, sum_, union_all
from sqlanon.stats.core import distinct_values
from sqlanon.stats.models import hierarchical_emd_ctes
from sqlanon.privacy import aggregates
from sqlanon.search.genetic import local
from sqlanon.search.genetic.local import block_list
from sqlanon.search.genetic.parts import blocks_of, candidate_lists, scan_parts

MAX_CLASS_VALUES = 64
#: a key word holds released codes in mixed radix below this bound
WORD_LIMIT = 2**62
#: the candidate number is a digit of this base (or the next power of two above the batch size)
CANDIDATE_RADIX = 64
#: the LM read back from class keys when its cross join pairs at most this many (class,
#: candidate) per base row (:meth:`GeneticStats.decodes`)
DECODE_PAIRS = 8


@dataclass
class ClassTarget:
    """A class column for CM / cost-matrix CM: its values (pivoted into ``t{t}_{j}`` columns)."""

    column: str
    values: list[str] = field(default_factory=list)
    confusion: bool = False  # also count (true class, majority class) pairs, for cost matrices


@dataclass
class RegressionTarget:
    """A numeric dependent variable; ``dispersion`` is ``variance`` or ``mad``."""

    column: str
    dispersion: str = "variance"


class GeneticStats:
    """Frequency-set statistics for flexible recodings (one statement per batch of candidates)."""

    def __init__(self, stats, class_targets: Sequence[ClassTarget] = (), regression_targets: Sequence[RegressionTarget] = (),
                 ok: exp.Expr | None = None, needs=None) -> None:
        self.stats = stats
        self.engine = stats.engine
        #: statements are built for the run's dialect; candidate arrays are indexed its way
        self.dialect = stats.dialect
        if self.dialect.array_base is None:
            raise ConfigError(f"the genetic search indexes candidate arrays, which dialect {self.dialect} lacks")
        self.n = len(stats.qis)
        self.class_targets = list(class_targets)
        self.regression_targets = list(regression_targets)
        self.ok = ok if ok is not None else exp.Boolean(this=True)
        # sensitive models: the sensitive value stays a key of gbase and each class gets the
        # aggregates the lattice's class table has (sqlanon.privacy.aggregates)
        self.needs = needs
        self.sensitive = bool(needs is not None and needs.sensitive)
        if self.sensitive:
            if not stats.has_s:
                raise ConfigError("l-diversity / t-closeness need --sensitive-column")
        self.table: str | None = None
        self.pop_table: str | None = None  # k-map / delta-presence: the population's codes
        #: the base table split into parts scanned in parallel (empty: scan the table itself);
        #: ``split`` forces the number of parts (None: :func:`scan_parts` for the engine's threads)
        self.parts: list[str] = []
        self.split: int | None = None
        self.vtables: dict[int, str] = {}
        self.cand = self.engine.temp_name("ga_cand")
        self._sql: dict[tuple, str] = {}
        self.totals: dict = {}
        self.batches = 0
        self.evaluations = 0
        #: leaf-domain size per QI, QI blocks (one lookup list each) and each QI's radix in its block
        self.sizes = [max(len(h.rows), 1) for h in stats.hierarchies]
        self.blocks = blocks_of(self.sizes)
        self.block_mult: list[int] = [1] * self.n
        for block in self.blocks:
            m = 1
            for i in block:
                self.block_mult[i] = m
                m *= self.sizes[i]
        self.words = 1  # key words of the last batch (its cuts decide)
        self.base_rows = 0  # rows of the base table (distinct QI tuples), counted when made
        self._block_words: tuple[int, ...] = (0,) * len(self.blocks)
        #: score batches in-process over the fetched frequency set when the requirement allows
        #: (:mod:`sqlanon.search.genetic.local`; False: always by SQL); decided by :meth:`prepare`,
        #: which keeps the reason for SQL in ``local_reason`` (None: local)
        self.local = True
        self.local_reason: str | None = "not prepared"
        self._local: local.LocalFitness | None = None
        self.local_evaluations = 0

    # -----------------------------------------------------------------------------------------
    def prepare(self) -> None:
        """One scan of the source into ``gbase`` (and ``gbase_v`` for median targets)."""
        stats = self.stats
        self._check_targets()
        # The shared base frequency set already holds the class column as ``y`` when the run's
        # metric needs it: then roll up from it instead of scanning the source again.
        from_base = not self.regression_targets and all(
            t.column == stats.class_column and stats.has_y for t in self.class_targets
        )
        self._class_values(from_base)
        if from_base:
            self._base_from_set()
        else:
            self._base_from_source()
        self._totals()
        self._prepare_local()

    def _check_targets(self) -> None:
        """The targets' columns exist; the mad dispersion is not combined with sensitive models."""
        stats, src_cols = self.stats, self.stats.source.column_names(self.engine)
        if self.sensitive and any(t.dispersion == "mad" for t in self.regression_targets):
            raise ConfigError("the mad dispersion cannot be combined with l-diversity or t-closeness in the genetic search (use dispersion=variance)")
        targets: list[ClassTarget | RegressionTarget] = [*self.class_targets, *self.regression_targets]
        for t in targets:
            if t.column not in src_cols:
                raise ConfigError(f"unknown target column {t.column!r} in {stats.source.describe()}")

    def _class_values(self, from_base: bool) -> None:
        """Each class target's values (from the base set's ``y`` when it holds them), at most
        :data:`MAX_CLASS_VALUES`."""
        stats = self.stats
        for t in self.class_targets:
            if not t.values:
                if from_base:
                    found = self.engine.fetch_all(exp.select(col("y")).distinct().from_(table_ref(stats.base.table)).limit(MAX_CLASS_VALUES + 1))
                    t.values = sorted(str(r[0]) for r in found if r[0] is not None)
                else:
                    t.values = sorted(distinct_values(self.engine, stats.source, t.column, limit=MAX_CLASS_VALUES + 1))
            if len(t.values) > MAX_CLASS_VALUES:
                raise ConfigError(f"class column {t.column!r} has more than {MAX_CLASS_VALUES} values")

    def _base_from_set(self) -> None:
        """``gbase`` rolled up from the shared base frequency set (its ``y`` is the class)."""
        stats = self.stats
        weight = col("cnt")
        q = exp.select(*map(col, stats.qnames), exp.alias_(sum_(weight), "cnt", quoted=True))
        for ti, t in enumerate(self.class_targets):
            for j, v in enumerate(t.values):
                q = q.select(exp.alias_(sum_(if_(exp.EQ(this=col("y"), expression=lit(v)), col("cnt"), lit(0))), f"t{ti}_{j}", quoted=True))
            q = q.select(exp.alias_(sum_(if_(exp.Is(this=col("y"), expression=exp.Null()), col("cnt"), lit(0))), f"t{ti}_null", quoted=True))
        self._create_base(q.from_(table_ref(stats.base.table)))

    def _base_from_source(self) -> None:
        """``gbase`` from one scan of the source (class and regression targets), and the
        ``gbase_v`` tables of the mad targets."""
        stats = self.stats
        inner = stats.encoded_select()
        for ti, t in enumerate(self.class_targets):
            inner = inner.select(exp.alias_(as_varchar(col(t.column, "src")), f"y{ti}", quoted=True))
        for ti, rt in enumerate(self.regression_targets):
            inner = inner.select(exp.alias_(as_double(col(rt.column, "src")), f"v{ti}", quoted=True))
        enc = exp.alias_(exp.Subquery(this=inner), "enc", table=True, quoted=True)
        q = exp.select(*map(col, stats.qnames), exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True))
        for ti, t in enumerate(self.class_targets):
            for j, v in enumerate(t.values):
                hit = if_(exp.EQ(this=col(f"y{ti}"), expression=lit(v)), lit(1), lit(0))
                q = q.select(exp.alias_(sum_(hit), f"t{ti}_{j}", quoted=True))
            q = q.select(exp.alias_(sum_(if_(exp.Is(this=col(f"y{ti}"), expression=exp.Null()), lit(1), lit(0))), f"t{ti}_null", quoted=True))
        for ti, _ in enumerate(self.regression_targets):
            v_col = col(f"v{ti}")
            q = q.select(exp.alias_(sum_(v_col), f"r{ti}_s1", quoted=True))
            q = q.select(exp.alias_(sum_(exp.Mul(this=v_col, expression=col(f"v{ti}"))), f"r{ti}_s2", quoted=True))
            q = q.select(exp.alias_(sum_(if_(exp.Is(this=v_col.copy(), expression=exp.Null()), lit(1), lit(0))), f"r{ti}_null", quoted=True))
        self._create_base(q.from_(enc))
        for ti, rt in enumerate(self.regression_targets):
            if rt.dispersion == "mad":
                vq = exp.select(*map(col, stats.qnames), col(f"v{ti}"), exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True))
                vq = vq.from_(exp.alias_(exp.Subquery(this=inner.copy()), "enc", table=True, quoted=True))
                vq = vq.group_by(*map(col, stats.qnames), col(f"v{ti}"))
                name = self.engine.temp_name(f"ga_base_v{ti}")
                self.engine.execute(self.dialect.create_temp(name, vq))
                self.vtables[ti] = name

    def _prepare_local(self) -> None:
        """Fetch the frequency set's codes for the local path when it can answer the batches."""
        self.local_reason = local.why_not(self)
        self._local = local.LocalFitness.fetch(self) if self.local_reason is None else None
        if self._local is not None:
            local.stats_local.warm_up()  # start loading the kernels while the search sets up
        if self._local is None and self.local_reason is None:
            self.local_reason = "the frequency set was not fetched"

    def _create_base(self, q: exp.Select) -> None:
        """The run's base table: ``q`` with the block columns (and ``s``), grouped by the QIs."""
        q = q.select(*self._block_columns())
        if self.sensitive:
            q = q.select(col("s"))
        keys = [*map(col, self.stats.qnames), *([col("s")] if self.sensitive else [])]
        if keys:
            q = q.group_by(*keys)
        self.table = self.engine.temp_name("ga_base")
        self.engine.execute(self.dialect.create_temp(self.table, q))
        self._split_base()

    def _base_table(self) -> str:
        """The candidates' base table, made when prepared."""
        assert self.table is not None, "the genetic search's base table has not been made"
        return self.table

    def _split_base(self) -> None:
        """Copy the base table into parts (rows numbered once, part = number mod parts) when the
        engine would scan it with one thread while it has more (see :func:`scan_parts`)."""
        rows = int(self.engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(table_ref(self._base_table()))) or 0)
        self.base_rows = rows
        n = self.split if self.split is not None else scan_parts(rows, self.engine.scan_threads())
        if n <= 1 or rows < n:
            return
        names = [name for name, _ in self.engine.describe_columns(exp.select(exp.Star()).from_(table_ref(self._base_table())))]
        numbered = self.engine.temp_name("ga_base_numbered")
        number = exp.Mod(this=exp.Window(this=exp.RowNumber()), expression=lit(n))
        self.engine.execute(self.dialect.create_temp(numbered, exp.select(exp.Star(), exp.alias_(number, "part", quoted=True)).from_(table_ref(self._base_table()))))
        try:
            for i in range(n):
                name = self.engine.temp_name(f"ga_base_p{i}")
                part = exp.select(*map(col, names)).from_(table_ref(numbered)).where(exp.EQ(this=col("part"), expression=lit(i)))
                self.engine.execute(self.dialect.create_temp(name, part))
                self.parts.append(name)
        finally:
            self.engine.execute(self.dialect.drop_temp(numbered))

    def _base_source(self, alias: str) -> exp.Expr:
        """The base table as the batch statement reads it: the table, or its parts' ``UNION ALL``."""
        if not self.parts:
            return table_ref(self._base_table(), alias=alias)
        union = union_all([exp.select(exp.Star()).from_(table_ref(name)) for name in self.parts])
        return exp.alias_(exp.Subquery(this=union), alias, table=True, quoted=True)

    def _population_table(self) -> None:
        """k-map / delta-presence with a population table: its base frequency set (QI codes,
        ``cnt``) with the block columns, so a batch rolls it up by the candidates' class keys."""
        if self.needs is None or not self.needs.population or self.pop_table:
            return
        pop = self.stats.population_set
        q = exp.select(*map(col, self.stats.qnames), col("cnt"), *self._block_columns()).from_(table_ref(pop.table))
        self.pop_table = self.engine.temp_name("ga_pop")
        self.engine.execute(self.dialect.create_temp(self.pop_table, q))

    def _totals(self) -> None:
        """N, class counts, regression sums (and the single-group dispersion), and key strides."""
        self._population_table()
        aggs = [sum_(col("cnt"))]
        for ti, t in enumerate(self.class_targets):
            aggs += [sum_(col(f"t{ti}_{j}")) for j in range(len(t.values))] + [sum_(col(f"t{ti}_null"))]
        for ti, _ in enumerate(self.regression_targets):
            aggs += [sum_(col(f"r{ti}_s1")), sum_(col(f"r{ti}_s2")), sum_(col(f"r{ti}_null"))]
        row = list(self.engine.fetch_one(exp.select(*aggs).from_(table_ref(self._base_table()))))
        self.totals["rows"] = int(row.pop(0) or 0)
        self.totals["class"] = []
        for t in self.class_targets:
            counts = [int(row.pop(0) or 0) for _ in t.values]
            nulls = int(row.pop(0) or 0)
            if nulls:
                raise ConfigError(f"class column {t.column!r} has {nulls} NULL value(s)")
            self.totals["class"].append(counts)
        self.totals["regression"] = []
        for ti, rt in enumerate(self.regression_targets):
            s1, s2, nulls = float(row.pop(0) or 0), float(row.pop(0) or 0), int(row.pop(0) or 0)
            if nulls:
                raise ConfigError(f"regression target {rt.column!r} has {nulls} NULL or non-numeric value(s)")
            total = {"s1": s1, "s2": s2}
            if rt.dispersion == "mad":
                total["mad"] = self.single_group_mad(ti)
            self.totals["regression"].append(total)

    def _block_columns(self) -> list[exp.Expr]:
        """``b{j}``: the row's index into block ``j``'s lookup lists (its leaf codes in mixed radix)."""
        out = []
        for j, block in enumerate(self.blocks):
            terms = [col(self.stats.qcol(i)) if self.block_mult[i] == 1 else exp.Mul(this=col(self.stats.qcol(i)), expression=lit(self.block_mult[i])) for i in block]
            out.append(exp.alias_(add_all(terms), f"b{j}", quoted=True))
        return out

    def single_group_mad(self, ti: int) -> float:
        """Sum of |v - median| over all rows (the regression metric's normalizer)."""
        return float(cast(float, self._mad_rows(ti, grouped=False)))  # ungrouped: a number from the engine

    # -----------------------------------------------------------------------------------------
    # the batched fitness query

    def key_name(self, word: int) -> str:
        return "key" if word == 0 else f"key{word}"

    def _key_exprs(self, block_words: Sequence[int], per_qi: bool = False, fold: bool = False) -> list[tuple[str, exp.Expr]]:
        """The class key words: per word, the sum of its blocks' lookups ``kb{j}[b{j}]`` (or, with
        ``per_qi``, of its QIs' lookups ``k{i}[q{i}]``, for tables without block columns); with
        ``fold`` the candidate number ``c`` is the lowest digit of the first word."""
        first = [col("c", "cd")] if fold else []
        if not self.n:
            return [("key", add_all(first))]
        words = max(block_words) + 1
        out = []
        for w in range(words):
            if per_qi:
                terms = [self._list_at(f"k{i}", col(self.stats.qcol(i))) for j, block in enumerate(self.blocks) if block_words[j] == w for i in block]
            else:
                terms = [self._list_at(f"kb{j}", col(f"b{j}")) for j in range(len(self.blocks)) if block_words[j] == w]
            out.append((self.key_name(w), add_all((first if w == 0 else []) + terms)))
        return out

    def _list_at(self, list_col: str, code: exp.Expr) -> exp.Expr:
        """``list_col[code]`` for a 0-based code, in the dialect's array base."""
        return self.dialect.element_at(col(list_col), code)

    def batch_query(self, lm: bool, per_column: bool, block_words: Sequence[int] | None = None, radix: int = CANDIDATE_RADIX,
                    lm_within: int | None = None) -> exp.Select:
        """The statement for a batch whose key words are laid out as ``block_words`` (the word of
        each block; default: all in one word). The candidate number is the lowest digit (base
        ``radix``) of the first key word, so classes are grouped by the key words alone and
        ``c = key % radix``. With ``lm_within`` (and ``lm``, not ``per_column``) the LM of the
        suppressed rows is read back from the class keys of the candidates suppressing at most
        that many rows only (:meth:`_lm_within`)."""
        block_words = tuple(block_words) if block_words is not None else (0,) * len(self.blocks)
        decode = lm and not per_column and lm_within is not None
        keys = self._key_exprs(block_words, fold=True)
        r, sums = self._batch_rows(keys, lm and not decode, per_column)
        ctes, cls = self._batch_classes(r, keys, sums, radix)
        flagged = exp.select(exp.Star(), exp.alias_(self.ok.copy(), "ok", quoted=True)).from_(table_ref("cls"))
        if decode:
            return self._lm_within(ctes + [("cls", cls), ("flagged", flagged)], block_words)
        final = exp.select(*self._batch_outputs(lm, per_column)).from_(table_ref("flagged")).group_by(col("c")).order_by(col("c"))
        return cte_select([*ctes, ("cls", cls), ("flagged", flagged)], final)

    def _lm_within(self, ctes: list[tuple[str, exp.Expr]], block_words: Sequence[int]) -> exp.Select:
        """The batch's outputs with ``lm_sup`` (the LM loss of the suppressed rows) for the
        candidates suppressing at most ``w`` rows only (a column of the candidate table), NULL for
        the others: a search that
        only needs the metric of feasible candidates skips the per-row loss lookups (half of a
        wide table's per-row work). A row's loss is the same for every row of its class, so it
        is decoded from the class key, for the bad classes of those candidates only: QI ``i``'s
        released code is ``key // s{i} % m{i}`` (its stride and the batch's largest group count,
        columns of the candidate table) and ``g{i}`` lists the loss per released code."""
        outs = [o for o in self._batch_outputs(False, False)]
        names = [o.alias_or_name for o in outs]
        per0 = exp.select(*outs).from_(table_ref("flagged")).group_by(col("c"))
        # the bound is a column of the candidate table (the statement stays the same while it moves)
        bound = exp.select(exp.alias_(exp.Min(this=col("w")), "w", quoted=True)).from_(table_ref(self.cand))
        per = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("a", quoted=True)), col("w", "wb")).from_(table_ref("per0", alias="a"))
        per = per.join(exp.alias_(exp.Subquery(this=bound), "wb", table=True, quoted=True), join_type="cross")
        within = exp.LTE(this=col("suppressed", "p"), expression=col("w", "p"))
        bad = exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("f", quoted=True))).from_(table_ref("flagged", alias="f"))
        bad = bad.join(table_ref("per", alias="p"), on=exp.EQ(this=col("c", "f"), expression=col("c", "p")))
        bad = bad.where(exp.and_(exp.Not(this=col("ok", "f")), within.copy()))
        terms = []
        for j, block in enumerate(self.blocks):
            for i in block:
                key = col(self.key_name(block_words[j]), "f")
                code = exp.Mod(this=as_bigint(exp.IntDiv(this=key, expression=col(f"s{i}", "cd"))), expression=col(f"m{i}", "cd"))
                terms.append(self.dialect.element_at(col(f"g{i}", "cd"), code))
        loss = exp.Mul(this=col("cnt", "f"), expression=exp.Paren(this=add_all(terms, lit(0.0))))
        # a cross join filtered on an expression of both sides (not an equi-join): each bad class
        # meets its candidate's lists in place; a hash join would copy the lists per class
        same = exp.EQ(this=exp.Sub(this=col("c", "f"), expression=col("c", "cd")), expression=lit(0))
        lmq = exp.select(col("c", "f"), exp.alias_(sum_(loss), "lm_sup", quoted=True)).from_(table_ref("bad", alias="f"))
        lmq = lmq.join(table_ref(self.cand, alias="cd"), join_type="cross").where(same).group_by(col("c", "f"))
        lm_sup = if_(within, exp.Coalesce(this=col("lm_sup", "l"), expressions=[lit(0.0)]), exp.Null())
        sel = [col(n, "p") for n in names[:5]] + [exp.alias_(lm_sup, "lm_sup", quoted=True)] + [col(n, "p") for n in names[5:]]
        final = exp.select(*sel).from_(table_ref("per", alias="p"))
        final = final.join(table_ref("lm", alias="l"), on=exp.EQ(this=col("c", "p"), expression=col("c", "l")), join_type="left").order_by(col("c", "p"))
        return cte_select([*ctes, ("per0", per0), ("per", per), ("bad", bad), ("lm", lmq)], final)

    def _batch_rows(self, keys: list[tuple[str, exp.Expr]], lm: bool, per_column: bool) -> tuple[exp.Select, list[str]]:
        """``r``: every base row under every candidate (its class keys), with the sums a class
        needs; and the names of those sums."""
        rsel = [exp.alias_(e, name, quoted=True) for name, e in keys]
        sums = ["cnt"]
        for ti, t in enumerate(self.class_targets):
            sums += [f"t{ti}_{j}" for j in range(len(t.values))]
        for ti, _ in enumerate(self.regression_targets):
            sums += [f"r{ti}_s1", f"r{ti}_s2"]
        rsel += [col(s, "b") for s in sums]
        # the LM loss of a row: the released value's loss, per block (or per QI for per-column
        # figures) looked up like the key; summed per class as cnt * loss
        loss_terms: list[tuple[str, exp.Expr]] = []
        if lm and per_column:
            loss_terms = [(f"rl{i}", self._list_at(f"l{i}", col(self.stats.qcol(i), "b"))) for i in range(self.n)]
        elif lm:
            loss_terms = [("rl", add_all([self._list_at(f"lb{j}", col(f"b{j}", "b")) for j in range(len(self.blocks))], lit(0.0)))]
        for name, term in loss_terms:
            rsel.append(exp.alias_(exp.Mul(this=col("cnt", "b"), expression=exp.Paren(this=term)), name, quoted=True))
        sums += [name for name, _ in loss_terms]
        if self.sensitive:
            rsel.append(col("s", "b"))
        r = exp.select(*rsel).from_(self._base_source("b")).join(table_ref(self.cand, alias="cd"), join_type="cross")
        return r, sums

    def _batch_classes(self, r: exp.Select, keys: list[tuple[str, exp.Expr]], sums: list[str], radix: int) -> tuple[list[tuple[str, exp.Expr]], exp.Select]:
        """The CTEs before ``cls`` and ``cls`` itself: one row per (candidate, class) with its
        sums, sensitive aggregates, and what the models join in (EMDs, population counts)."""
        key_names = [name for name, _ in keys]
        cand_of = exp.alias_(exp.Mod(this=col("key"), expression=lit(radix)), "c", quoted=True)
        csel = [cand_of] + [col(k) for k in key_names] + [exp.alias_(sum_(col(s)), s, quoted=True) for s in sums]
        ctes: list[tuple[str, exp.Expr]] = [("r", r)]
        if self.sensitive:
            ctes += self._sensitive_ctes(key_names, sums)
            csel += self._sensitive_aggs()
            cls = exp.select(*csel).from_(table_ref("rs")).group_by(*[col(k) for k in key_names])
        else:
            cls = exp.select(*csel).from_(table_ref("r")).group_by(*[col(k) for k in key_names])
        if self.sensitive and self.needs.emd_ordered:
            # ordered t-closeness: the class's EMD over the ordered sensitive domain, joined in
            ctes += self._emd_ordered_ctes(key_names)
            cls = self._join_class_column(ctes, cls, "cls0", [n.alias_or_name for n in csel], key_names, "emd", col("emd_ordered", "e"))
        if self.pop_table:
            cls = self._join_population(ctes, cls, keys, self.pop_table)
        if self.sensitive and self.needs is not None and self.needs.emd_hierarchical:
            # hierarchical t-closeness: the class's EMD over the sensitive hierarchy, joined in

            ctes += hierarchical_emd_ctes(self.stats, "rs", key_names)
            cls = self._join_class_column(ctes, cls, "cls_h", [n.alias_or_name for n in cls.selects], key_names, "hemd", col("emd_hier", "e"))
        return ctes, cls

    @staticmethod
    def _join_class_column(ctes: list[tuple[str, exp.Expr]], cls: exp.Select, name: str, names: list[str], key_names: list[str],
                           table: str, column: exp.Expr) -> exp.Select:
        """``cls`` saved as CTE ``name`` (appended to ``ctes``), its columns ``names`` plus
        ``column`` of ``table`` (aliased ``e``) joined on the class keys."""
        ctes.append((name, cls))
        on = exp.and_(*[exp.EQ(this=col(k, "a"), expression=col(k, "e")) for k in key_names])
        out = exp.select(*[col(n, "a") for n in names], column).from_(table_ref(name, alias="a"))
        return out.join(table_ref(table, alias="e"), on=on)

    def _join_population(self, ctes: list[tuple[str, exp.Expr]], cls: exp.Select, keys: list[tuple[str, exp.Expr]], pop_table: str) -> exp.Select:
        """k-map / delta-presence: the population rolled up by the same class keys, joined in
        (``pop_cnt``, 0 for a class no population row falls in)."""
        key_names = [name for name, _ in keys]
        pr = exp.select(*[exp.alias_(e.copy(), name, quoted=True) for name, e in keys], col("cnt", "b"))
        pr = pr.from_(table_ref(pop_table, alias="b")).join(table_ref(self.cand, alias="cd"), join_type="cross")
        pcnt = exp.select(*map(col, key_names), exp.alias_(sum_(col("cnt")), "pop_cnt", quoted=True)).from_(table_ref("pr")).group_by(*map(col, key_names))
        names = [n.alias_or_name for n in cls.selects]
        ctes += [("pr", pr), ("pcnt", pcnt), ("cls_p", cls)]
        on = exp.and_(*[exp.EQ(this=col(k, "a"), expression=col(k, "e")) for k in key_names])
        out = exp.select(*[col(n, "a") for n in names], exp.alias_(exp.Coalesce(this=col("pop_cnt", "e"), expressions=[lit(0)]), "pop_cnt", quoted=True))
        return out.from_(table_ref("cls_p", alias="a")).join(table_ref("pcnt", alias="e"), on=on, join_type="left")

    def _batch_outputs(self, lm: bool, per_column: bool) -> list[exp.Expr]:
        """Per candidate ``c``: suppressed rows, classes, bad classes, the smallest class, and
        the LM, class-target and regression-target figures of what is kept and suppressed."""
        okc = col("ok")
        out: list[exp.Expr] = [
            col("c"),
            exp.alias_(sum_(if_(okc, lit(0), col("cnt"))), "suppressed", quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), "classes", quoted=True),
            exp.alias_(sum_(if_(okc.copy(), lit(0), lit(1))), "bad_classes", quoted=True),
            exp.alias_(exp.Min(this=col("cnt")), "min_class", quoted=True),
        ]
        if lm:
            if per_column:
                for i in range(self.n):
                    out.append(exp.alias_(sum_(if_(col("ok"), lit(0.0), col(f"rl{i}"))), f"lm_sup{i}", quoted=True))
            else:
                out.append(exp.alias_(sum_(if_(col("ok"), lit(0.0), col("rl"))), "lm_sup", quoted=True))
        for ti, t in enumerate(self.class_targets):
            out += self._class_target_outputs(ti, t)
        for ti, _ in enumerate(self.regression_targets):
            s1, s2 = col(f"r{ti}_s1"), col(f"r{ti}_s2")
            sse = exp.Sub(this=s2, expression=exp.Div(this=exp.Mul(this=col(f"r{ti}_s1"), expression=col(f"r{ti}_s1")), expression=as_double(col("cnt"))))
            out.append(exp.alias_(sum_(if_(col("ok"), sse, lit(0.0))), f"sse{ti}", quoted=True))
            out.append(exp.alias_(sum_(if_(col("ok"), lit(0.0), s1.copy())), f"sup_s1_{ti}", quoted=True))
            out.append(exp.alias_(sum_(if_(col("ok"), lit(0.0), s2.copy())), f"sup_s2_{ti}", quoted=True))
        return out

    @staticmethod
    def _class_target_outputs(ti: int, t) -> list[exp.Expr]:
        """Class target ``ti``: rows outside their class's majority, suppressed rows per value,
        and (with a confusion matrix) the kept rows of value j in classes whose majority is m."""
        ys = [col(f"t{ti}_{j}") for j in range(len(t.values))]
        most = ys[0] if len(ys) == 1 else exp.Greatest(this=ys[0], expressions=ys[1:])
        out: list[exp.Expr] = [exp.alias_(sum_(if_(col("ok"), exp.Sub(this=col("cnt"), expression=most), lit(0))), f"minority{ti}", quoted=True)]
        for j in range(len(t.values)):
            out.append(exp.alias_(sum_(if_(col("ok"), lit(0), col(f"t{ti}_{j}"))), f"sup{ti}_{j}", quoted=True))
        # the majority class of each released class (first on ties), for cost matrices
        maj: exp.Expr
        if len(ys) > 1:
            case = exp.Case()
            for j in range(len(ys) - 1):
                cond = exp.and_(*[exp.GTE(this=col(f"t{ti}_{j}"), expression=col(f"t{ti}_{o}")) for o in range(len(ys)) if o != j])
                case = case.when(cond, lit(j))
            maj = case.else_(lit(len(ys) - 1))
        else:
            maj = lit(0)
        for j in range(len(ys) if t.confusion else 0):
            for m in range(len(ys)):
                if j == m:
                    continue
                hit = exp.and_(col("ok"), exp.EQ(this=exp.Paren(this=maj.copy()), expression=lit(m)))
                out.append(exp.alias_(sum_(if_(hit, col(f"t{ti}_{j}"), lit(0))), f"conf{ti}_{j}_{m}", quoted=True))
        return out

    def _sensitive_ctes(self, key_names: list[str], sums: list[str]) -> list[tuple[str, exp.Expr]]:
        """``rs``: one row per (candidate, class, sensitive value) with its sums and, for
        t-closeness, the class total and the value's global share ``q``."""
        part = [*map(col, key_names)]
        rs = exp.select(*[p.copy() for p in part], col("s"), *[exp.alias_(sum_(col(n)), n, quoted=True) for n in sums])
        rs = rs.from_(table_ref("r")).group_by(*[p.copy() for p in part], col("s"))
        if not aggregates.needs_shares(self.needs):
            return self._ranked([("rs", rs)], key_names)
        tot = exp.Window(this=sum_(col("cnt")), partition_by=[p.copy() for p in part])
        with_tot = exp.select(exp.Star(), exp.alias_(tot, "tot", quoted=True)).from_(table_ref("rs0"))
        rq = exp.select(*[col(n, "x") for n in [*key_names, "s", *sums, "tot"]], col("q", "d"))
        rq = rq.from_(exp.alias_(exp.Subquery(this=with_tot), "x", table=True, quoted=True))
        rq = rq.join(table_ref(self.stats.domain_table, alias="d"), on=exp.EQ(this=col("s", "x"), expression=col("s", "d")))
        return self._ranked([("rs0", rs), ("rs", rq)], key_names)

    def _ranked(self, ctes: list[tuple[str, exp.Expr]], key_names: list[str]) -> list[tuple[str, exp.Expr]]:
        """Recursive (c,l)-diversity: each sensitive value's rank ``rn`` in its class by count
        (largest first), so that ``top_s`` = r1 and ``tail_s`` = r_l + .. + r_m."""
        if not aggregates.needs_rank(self.needs):
            return ctes
        *head, (_, last) = ctes
        order = exp.Order(expressions=[exp.Ordered(this=col("cnt"), desc=True), exp.Ordered(this=col("s"))])
        rn = exp.Window(this=exp.RowNumber(), partition_by=list(map(col, key_names)), order=order)
        ranked = exp.select(exp.Star(), exp.alias_(rn, "rn", quoted=True)).from_(table_ref("rs_r"))
        return [*head, ("rs_r", last), ("rs", ranked)]

    def _emd_ordered_ctes(self, key_names: list[str]) -> list[tuple[str, exp.Expr]]:
        """Per class, ``emd_ordered = sum_{i < m} |sum_{j <= i} (p_j - q_j)| / (m - 1)`` over the
        sensitive values in rank order (absent values have p = 0): class totals, the grid of
        classes x domain left-joined to the class's counts, a running sum, its mean absolute value."""
        m = len(self.stats.sensitive_domain)
        keys = exp.select(*map(col, key_names), exp.alias_(sum_(col("cnt")), "tot", quoted=True)).from_(table_ref("rs")).group_by(*map(col, key_names))
        cond = exp.and_(*[exp.EQ(this=col(n, "x"), expression=col(n, "k")) for n in key_names], exp.EQ(this=col("s", "x"), expression=col("s", "d")))
        p = exp.Div(this=as_double(exp.Coalesce(this=col("cnt", "x"), expressions=[lit(0)])), expression=as_double(col("tot", "k")))
        grid = (
            exp.select(*[col(n, "k") for n in key_names], col("rnk", "d"), exp.alias_(exp.Sub(this=p, expression=col("q", "d")), "diff", quoted=True))
            .from_(table_ref("ekeys", alias="k"))
            .join(table_ref(self.stats.domain_table, alias="d"), join_type="cross")
            .join(table_ref("rs", alias="x"), on=cond, join_type="left")
        )
        win = exp.Window(
            this=sum_(col("diff")),
            partition_by=list(map(col, key_names)),
            order=exp.Order(expressions=[exp.Ordered(this=col("rnk"))]),
            spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"),
        )
        cum = exp.select(*map(col, key_names), col("rnk"), exp.alias_(win, "cm", quoted=True)).from_(table_ref("egrid"))
        last = if_(exp.LT(this=col("rnk"), expression=lit(m)), exp.Abs(this=col("cm")), lit(0.0))
        emd = exp.select(*map(col, key_names), exp.alias_(exp.Div(this=sum_(last), expression=lit(float(max(m - 1, 1)))), "emd_ordered", quoted=True))
        emd = emd.from_(table_ref("ecum")).group_by(*map(col, key_names))
        return [("ekeys", keys), ("egrid", grid), ("ecum", cum), ("emd", emd)]

    def _sensitive_aggs(self) -> list[exp.Expr]:
        """The class's aggregates over its per-value rows ``rs`` (:mod:`sqlanon.privacy.aggregates`)."""
        return aggregates.value_aggregates(self.needs)

    def _mad_rows(self, ti: int, grouped: bool = True) -> object:
        """Sum of absolute deviations from the (lower) median: per candidate within its released
        classes, suppressed rows forming one more group (``grouped``); or over all rows."""
        v = f"v{ti}"
        if not grouped:
            base = exp.select(col(v), col("cnt")).from_(table_ref(self.vtables[ti]))
            part: list[exp.Expr] = []
            grp = exp.select(col(v), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref("x")).group_by(col(v))
            ctes = [("x", base), ("grp", grp)]
        else:
            keys = self._key_exprs(self._block_words, per_qi=True)
            key_names = [name for name, _ in keys]
            x = exp.select(col("c", "cd"), *[exp.alias_(e, n, quoted=True) for n, e in keys], col(v, "b"), col("cnt", "b"))
            x = x.from_(table_ref(self.vtables[ti], alias="b")).join(table_ref(self.cand, alias="cd"), join_type="cross")
            # class sizes decide which rows are suppressed
            sizes = exp.select(col("c"), *map(col, key_names), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref("x")).group_by(col("c"), *map(col, key_names))
            flagged = exp.select(exp.Star(), exp.alias_(self.ok.copy(), "ok", quoted=True)).from_(table_ref("sizes"))
            cond = exp.and_(*[exp.EQ(this=col(n, "x"), expression=col(n, "f")) for n in ["c", *key_names]])
            gid = [exp.alias_(if_(col("ok", "f"), col(n, "x"), lit(-1)), n, quoted=True) for n in key_names]
            y = exp.select(col("c", "x"), *gid, col(v, "x"), col("cnt", "x")).from_(table_ref("x", alias="x")).join(table_ref("flagged", alias="f"), on=cond)
            grp = exp.select(col("c"), *map(col, key_names), col(v), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref("y")).group_by(col("c"), *map(col, key_names), col(v))
            ctes = [("x", x), ("sizes", sizes), ("flagged", flagged), ("y", y), ("grp", grp)]
            part = [col("c"), *map(col, key_names)]
        tot = exp.Window(this=sum_(col("cnt")), partition_by=[p.copy() for p in part] or None)
        cum = exp.Window(
            this=sum_(col("cnt")),
            partition_by=[p.copy() for p in part] or None,
            order=exp.Order(expressions=[exp.Ordered(this=col(v))]),
            spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"),
        )
        ctes.append(("cum", exp.select(*[p.copy() for p in part], col(v), col("cnt"), exp.alias_(tot, "tot", quoted=True), exp.alias_(cum, "cum", quoted=True)).from_(table_ref("grp"))))
        med = exp.select(*[p.copy() for p in part], exp.alias_(exp.Min(this=col(v)), "med", quoted=True)).from_(table_ref("cum"))
        med = med.where(exp.GTE(this=exp.Mul(this=col("cum"), expression=lit(2)), expression=col("tot")))
        if part:
            med = med.group_by(*[p.copy() for p in part])
        ctes.append(("med", med))
        dev = exp.Mul(this=col("cnt", "g"), expression=exp.Abs(this=exp.Sub(this=col(v, "g"), expression=col("med", "m"))))
        names = [p.name for p in part]
        final = exp.select(*([col("c", "g")] if grouped else []), exp.alias_(sum_(dev), "mad", quoted=True))
        if names:
            join_on = exp.and_(*[exp.EQ(this=col(n, "g"), expression=col(n, "m")) for n in names])
            final = final.from_(table_ref("grp", alias="g")).join(table_ref("med", alias="m"), on=join_on)
        else:
            final = final.from_(table_ref("grp", alias="g")).join(table_ref("med", alias="m"), join_type="cross")
        if grouped:
            final = final.group_by(col("c", "g")).order_by(col("c", "g"))
            return cte_select(ctes, final)
        return self.engine.scalar(cte_select(ctes, final)) or 0.0

    def layout_keys(self, groups: Sequence[Sequence[int]], radix: int = 1) -> tuple[list[int], tuple[int, ...]]:
        """Strides per QI and the word of each block for a batch whose candidates release
        ``groups[c][i]`` values of QI ``i``: released codes in mixed radix over the batch's largest
        group counts, a block never split across words, a new word when 62 bits are used up; the
        first word starts above a digit of base ``radix`` (the candidate number)."""
        most = [max((g[i] for g in groups), default=1) or 1 for i in range(self.n)]
        strides = [1] * self.n
        block_words: list[int] = []
        word, stride = 0, radix
        for block in self.blocks:
            span = 1
            for i in block:
                span *= most[i]
            if stride * span >= WORD_LIMIT and stride > 1:
                word, stride = word + 1, 1
            for i in block:
                strides[i] = stride
                stride *= most[i]
            block_words.append(word)
        return strides, tuple(block_words)

    def evaluate(self, candidates: Sequence[dict], lm: bool, per_column: bool = False, lm_within: int | None = None) -> list[dict]:
        """One statement for a batch. ``candidates[c]`` has, per QI, ``codes`` (leaf -> released
        code 0..groups-1, an int array), ``groups`` (how many released values) and, when ``lm``,
        ``leaf_loss`` (leaf -> LM loss of its released value, a float array) and ``group_loss``
        (released code -> that loss). With ``lm_within``, ``lm_sup`` is computed only for the
        candidates suppressing at most that many rows (None for the others; :meth:`_lm_within`)."""
        if not candidates:
            return []
        if self._local is not None and self._local.ready():
            return self._evaluate_local(self._local, candidates, lm, per_column, lm_within)
        radix = max(CANDIDATE_RADIX, 1 << (len(candidates) - 1).bit_length())
        strides, block_words = self.layout_keys([cd["groups"] for cd in candidates], radix)
        self.words = max(block_words, default=0) + 1
        self._block_words = block_words
        decode = lm and not per_column and lm_within is not None and self.decodes(lm_within, len(candidates))
        cols = self._candidate_columns(candidates, strides, lm, per_column, lm_within if decode else None)
        self.engine.register_arrow(self.cand, pa.table(cols))
        try:
            sig: tuple = ("batch", lm, per_column, block_words, radix) + (("within",) if decode else ())
            if sig not in self._sql:
                self._sql[sig] = self.dialect.render(self.batch_query(lm, per_column, block_words, radix, lm_within if decode else None))
            with_names = self._result_names(lm, per_column)
            rows = self.engine.fetch_all(self._sql[sig])
            out = [dict(zip(with_names, r)) for r in rows]
            self._add_mads(out, block_words)
        finally:
            self.engine.execute(self.dialect.drop_temp(self.cand))
        self.batches += 1
        self.evaluations += len(candidates)
        return out

    def _evaluate_local(self, fitness, candidates: Sequence[dict], lm: bool, per_column: bool, lm_within: int | None) -> list[dict]:
        """A batch scored in-process (:mod:`sqlanon.search.genetic.local`)."""
        decode = lm and not per_column and lm_within is not None and self.decodes(lm_within, len(candidates))
        out = fitness.evaluate(candidates, lm, per_column, self._result_names(lm, per_column), lm_within if decode else None)
        self.batches += 1
        self.evaluations += len(candidates)
        self.local_evaluations += len(candidates)
        return out

    def _add_mads(self, out: list[dict], block_words) -> None:
        """Each median target's mean absolute deviation (``mad{ti}``): one statement per target."""
        for ti in self.vtables:
            sig = ("mad", ti, block_words)
            if sig not in self._sql:
                self._sql[sig] = self.dialect.render(self._mad_rows(ti))
            for row, (_c, mad) in zip(out, self.engine.fetch_all(self._sql[sig])):
                row[f"mad{ti}"] = float(mad or 0.0)

    def decodes(self, lm_within: int, candidates: int) -> bool:
        """Is reading the LM back from the class keys (:meth:`_lm_within`) cheaper than the per-row
        lookups? Its cross join pairs every candidate with the bad classes of the candidates
        within the bound (each at most ``lm_within`` of them): at most ``DECODE_PAIRS`` such
        pairs per base row, against a dozen lookups per base row and candidate the other way
        (w24, k=5, 5 %: 1,500 x 32 against 30,000 rows; 100 % suppression or a bound set by an
        infeasible population: the per-row lookups)."""
        return lm_within * candidates <= DECODE_PAIRS * max(self.base_rows, 1)

    def _candidate_columns(self, candidates: Sequence[dict], strides: Sequence[int], lm: bool, per_column: bool,
                           lm_within: int | None) -> dict[str, pa.Array]:
        """The candidate table's columns: ``c``, the block key lists ``kb{j}``; for the LM, per
        row (``lb{j}``, or ``l{i}`` per QI for per-column figures) or, with ``lm_within``, per
        released code (``g{i}``, with the key's strides ``s{i}``, moduli ``m{i}`` and the bound
        ``w``); the per-QI key lists ``k{i}`` when a median target needs them."""
        n = len(candidates)
        cols = {"c": pa.array(range(n), pa.int32())}
        for j, block in enumerate(self.blocks):
            cols[f"kb{j}"] = candidate_lists([block_list([cd["codes"][i] for i in block], [strides[i] for i in block]) for cd in candidates], pa.int64())
            if lm and not per_column and lm_within is None:
                cols[f"lb{j}"] = candidate_lists([block_list([cd["leaf_loss"][i] for i in block], [1.0] * len(block)) for cd in candidates], pa.float64())
        if lm_within is not None:
            cols.update(self._within_columns(candidates, strides, lm_within))
        if lm and per_column:
            for i in range(self.n):
                cols[f"l{i}"] = candidate_lists([np.asarray(cd["leaf_loss"][i], dtype=np.float64) for cd in candidates], pa.float64())
        if self.vtables:
            for i in range(self.n):
                cols[f"k{i}"] = candidate_lists([np.asarray(cd["codes"][i], dtype=np.int64) * strides[i] for cd in candidates], pa.int64())
        return cols

    def _within_columns(self, candidates: Sequence[dict], strides: Sequence[int], lm_within: int) -> dict[str, pa.Array]:
        """The LM per released code (``g{i}``) with the key's strides ``s{i}``, moduli ``m{i}``
        and the bound ``w`` (:meth:`_lm_within`)."""
        n = len(candidates)
        cols = {"w": pa.array([int(lm_within)] * n, pa.int64())}
        for i in range(self.n):
            cols[f"s{i}"] = pa.array([strides[i]] * n, pa.int64())
            cols[f"m{i}"] = pa.array([max(cd["groups"][i] for cd in candidates) or 1] * n, pa.int64())
            cols[f"g{i}"] = candidate_lists([np.asarray(cd["group_loss"][i], dtype=np.float64) for cd in candidates], pa.float64())
        return cols

    def _result_names(self, lm: bool, per_column: bool) -> list[str]:
        names = ["c", "suppressed", "classes", "bad_classes", "min_class"]
        if lm:
            names += [f"lm_sup{i}" for i in range(self.n)] if per_column else ["lm_sup"]
        for ti, t in enumerate(self.class_targets):
            names.append(f"minority{ti}")
            names += [f"sup{ti}_{j}" for j in range(len(t.values))]
            if t.confusion:
                names += [f"conf{ti}_{j}_{m}" for j in range(len(t.values)) for m in range(len(t.values)) if j != m]
        for ti, _ in enumerate(self.regression_targets):
            names += [f"sse{ti}", f"sup_s1_{ti}", f"sup_s2_{ti}"]
        return names

    def drop(self) -> None:
        for name in [self.table, self.pop_table, *self.parts, *self.vtables.values()]:
            if name:
                self.engine.execute(self.dialect.drop_temp(name))
