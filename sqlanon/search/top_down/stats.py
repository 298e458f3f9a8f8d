"""Lossy-join statistics for the top-down sequential-release search, in SQL (Wang & Fung 2006, §5.3-5.4, §7).

The join of the current release T1 with the previous releases T2..Tp is **never built**. Instead:

* T1's *base* frequency set ``base1`` is keyed by the leaf codes of its X and join attributes
  (plus the class, the Y value when distinct Y values must be counted, and one count column per
  sensitive value). It is rolled up from the run's shared base frequency set when that holds all
  of it (no Y values, no sensitive counts); otherwise T1 is scanned once more for it.
* each previous release Ti is scanned once into its partitions ``part_i`` keyed by its join values
  (as ids of taxonomy nodes) and its X values, with ``n = |Pi|``, ``a = a_Yi(Pi)`` and the
  per-sensitive-value counts ``|Pi[y]|``; and into ``key_i``, the same aggregated per join key.
* a candidate cut of T1 is evaluated by rolling ``base1`` up to T1's partitions ``P1`` (one inline
  integer lookup per attribute), matching partitions through small **match tables** (the
  consistency predicate, one per common attribute, rows ``(T1 node, T2 value, ...)``) and
  **inconsistency tables** (pairs that never match), and combining per-partition counts:
  ``a(x) = sum |P1|*|P2|*...``, ``a(x, y) = sum |P1[y]|*|P2|`` (or ``|P1|*|P2[y]|``), and the
  number of distinct Y values by the cases of Section 5.4:

  ==========  ============================================================  ===============================
  mode        when                                                          ``a_Y(x)``
  ==========  ============================================================  ===============================
  ``case1``   X holds every join attribute (one partition tuple per x)      ``a_Y1(P1) * a_Y2(P2) ...``
  ``case4``   Y holds a key of every release (Y is a key of the join)       ``sum |P1| * |P2| ...``
  ``case3``   only one release has Y attributes, and they are its key       ``sum over distinct Pi of |Pi|``
  ``distinct``  anything else (incl. the paper's Case 2, see docs)          ``COUNT(DISTINCT y)`` over the
                                                                            partitions' Y values
  ==========  ============================================================  ===============================

  In ``case1`` the whole computation factorizes through the join keys: ``A_Y(X) = min over P1 of
  a_Y1(P1) * (min over matching key tuples of prod_i min a_Yi)``, so no pair of partitions is ever
  enumerated (:meth:`LossyJoinStats.factorized_ctes`). The other modes group matching partition
  tuples by x (:meth:`LossyJoinStats.pairs_ctes`): the size of that is the number of distinct x
  values of the join, not the number of its rows.

Every statement is built with sqlglot; identifiers are quoted through :func:`sqlanon.engine.source.ident`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import as_double, as_varchar, cte_select, if_, lit, sum_
from sqlanon.dialect import get_dialect, lookup

SEP = "\x1f"


# ------------------------------------------------------------------------------------------------
# what the planner hands over


@dataclass
class SideY:
    """Y attributes held by one release and how their distinct values are counted."""

    columns: list[str] = field(default_factory=list)
    mode: str = "none"  # none | key | values


@dataclass
class T1Spec:
    qis: list[str]
    map_tables: list[str]
    used: list[int]            # QI indices keyed in base1 (X1 and J1)
    x_attrs: list[int]         # QI indices in X (generalized)
    join_attrs: list[int]      # QI indices in J1
    y: SideY
    class_column: str | None
    sens: list[tuple[int, str, str]]  # (global k, column, value) on T1
    null_codes: list[int] = field(default_factory=list)  # per QI the code of NULL (Statistics.null_code)


@dataclass
class PrevSpec:
    name: str
    source: object
    join_cols: list[str]       # columns joined on (values replaced by ids)
    join_labels: list[list[str]]  # per join column: id -> released value
    x_join: list[int]          # positions in join_cols that are in X
    x_cols: list[str]          # X columns that are not join columns
    y: SideY
    sens: list[tuple[int, str, str]]


@dataclass
class MatchTable:
    """Consistency of one common attribute: rows ``(T1 node, value id in release r, ...)``."""

    qi: int
    sides: list[tuple[int, int]]  # (release index r >= 1, position of the column in join_cols)
    rows: list[tuple[int, ...]]


@dataclass
class IncTable:
    """Declared inconsistency between T1's attribute ``qi`` and release ``r``'s join column ``pos``."""

    qi: int
    release: int
    pos: int
    rows: list[tuple[int, int]]


@dataclass
class Result:
    """Per group: min a_Y(x) (anonymity), sum a(x) (= join rows), max l_y(x) per sensitive value."""

    ay: float | None
    ax: int
    ly: list[float | None]


class LossyJoinStats:
    def __init__(self, engine, t1_source, t1: T1Spec, prevs: list[PrevSpec], n_sens: int, mode: str, shared=None, dialect=None) -> None:
        self.engine = engine
        #: statements are built for this dialect (the engine's by default)
        self.dialect = dialect if dialect is not None else engine.dialect
        self.t1_source = t1_source
        #: the run's :class:`sqlanon.stats.Statistics` (its base frequency set), if already prepared
        self.shared = shared
        self.t1 = t1
        self.prevs = prevs
        self.n_sens = n_sens
        self.mode = mode
        self.base1 = engine.temp_name("td_base")
        self.prel = [engine.temp_name(f"td_prel{r}") for r in range(len(prevs))]
        self.part = [engine.temp_name(f"td_part{r}") for r in range(len(prevs))]
        self.keys = [engine.temp_name(f"td_key{r}") for r in range(len(prevs))]
        #: per previous release and join column: the table of its released values' ids
        self.dicts = [[engine.temp_name(f"td_dict{r}c{c}") for c in range(len(p.join_cols))] for r, p in enumerate(prevs)]
        self.rows1 = 0
        self.rows_prev: list[int] = []
        #: a release's FROM item (naming files is the engine's job; see :meth:`for_dialect`)
        self.source_from = engine.source_from

    def for_dialect(self, dialect) -> LossyJoinStats:
        """A copy that builds statements for ``dialect`` (golden SQL): same state, sources named
        as that dialect names them; the engine is neither read nor changed."""
        other = copy.copy(self)
        other.dialect = get_dialect(dialect)
        other.source_from = other.dialect.source_from
        return other

    # --------------------------------------------------------------------------------------------
    # static tables (one scan of each release)

    def base1_select(self) -> exp.Select:
        t1 = self.t1
        src = exp.alias_(self.source_from(self.t1_source), "src", table=True, quoted=True)
        sel = exp.select().from_(src)
        keys: list[exp.Expr] = []
        for i in t1.used:
            alias = f"h{i}"
            cond = exp.EQ(this=col("level_0", alias), expression=as_varchar(col(t1.qis[i], "src")))
            sel = sel.join(table_ref(t1.map_tables[i], alias=alias), on=cond, join_type="left")
            code: exp.Expr = exp.Coalesce(this=col("code", alias), expressions=[lit(-1)])
            if t1.null_codes:  # NULL is its NULL leaf's code (or -2), as in the shared base set
                code = if_(exp.Is(this=col(t1.qis[i], "src"), expression=exp.Null()), lit(t1.null_codes[i]), code)
            keys.append(exp.alias_(code, f"q{i}", quoted=True))
        if t1.y.mode == "values":
            keys.append(exp.alias_(_yv([as_varchar(col(c, "src")) for c in t1.y.columns]), "yv", quoted=True))
        if t1.class_column:
            keys.append(exp.alias_(as_varchar(col(t1.class_column, "src")), "cls", quoted=True))
        return _counted(sel, keys, t1.sens)

    def base1_from_shared(self) -> exp.Select | None:
        """``base1`` rolled up from the shared base frequency set (same leaf codes, the class as
        ``y``), when that set holds everything ``base1`` needs: no Y values and no sensitive counts
        of T1. ``None`` otherwise (then :meth:`base1_select` scans T1)."""
        t1, stats = self.t1, self.shared
        if stats is None or stats.base is None or t1.y.mode == "values" or t1.sens:
            return None
        if t1.class_column and not (stats.has_y and stats.class_column == t1.class_column):
            return None
        if list(stats.map_tables) != list(t1.map_tables):
            return None
        keys: list[exp.Expr] = [exp.alias_(col(stats.qcol(i)), f"q{i}", quoted=True) for i in t1.used]
        if t1.class_column:
            keys.append(exp.alias_(col("y"), "cls", quoted=True))
        sel = exp.select(*keys, exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref(stats.base.table))
        return sel.group_by(*[lit(j + 1) for j in range(len(keys))]) if keys else sel

    def prel_select(self, r: int) -> exp.Select:
        p = self.prevs[r]
        src = exp.alias_(self.source_from(p.source), "src", table=True, quoted=True)
        sel = exp.select().from_(src)
        keys: list[exp.Expr] = []
        for c, name in enumerate(p.join_cols):
            alias = f"d{c}"
            cond = exp.EQ(this=col("label", alias), expression=as_varchar(col(name, "src")))
            sel = sel.join(table_ref(self._dict_name(r, c), alias=alias), on=cond, join_type="left")
            keys.append(exp.alias_(exp.Coalesce(this=col("id", alias), expressions=[lit(-1)]), f"j{c}", quoted=True))
        for c, name in enumerate(p.x_cols):
            keys.append(exp.alias_(as_varchar(col(name, "src")), f"x{c}", quoted=True))
        if p.y.mode == "values":
            keys.append(exp.alias_(_yv([as_varchar(col(c, "src")) for c in p.y.columns]), "yv", quoted=True))
        return _counted(sel, keys, p.sens)

    def _dict_name(self, r: int, c: int) -> str:
        return self.dicts[r][c]

    def part_select(self, r: int) -> exp.Select:
        p = self.prevs[r]
        keys = [f"j{c}" for c in range(len(p.join_cols))] + [f"x{c}" for c in range(len(p.x_cols))]
        aggs = [exp.alias_(sum_(col("cnt")), "n", quoted=True), exp.alias_(_a_expr(p.y.mode), "a", quoted=True)]
        aggs += [exp.alias_(sum_(col(f"s{k}")), f"s{k}", quoted=True) for k, _, _ in p.sens]
        q = exp.select(*map(col, keys), *aggs).from_(table_ref(self.prel[r]))
        return q.group_by(*map(col, keys)) if keys else q

    def key_select(self, r: int) -> exp.Select:
        p = self.prevs[r]
        keys = [f"j{c}" for c in range(len(p.join_cols))]
        aggs = [
            exp.alias_(sum_(col("n")), "n", quoted=True),
            exp.alias_(exp.Min(this=col("a")), "amin", quoted=True),
        ]
        for k, _, _ in p.sens:
            aggs.append(exp.alias_(exp.Max(this=exp.Div(this=as_double(col(f"s{k}")), expression=as_double(col("n")))), f"sr{k}", quoted=True))
        q = exp.select(*map(col, keys), *aggs).from_(table_ref(self.part[r]))
        return q.group_by(*map(col, keys)) if keys else q

    def prepare(self) -> None:
        eng = self.engine
        eng.execute(self.dialect.create_temp(self.base1, self.base1_from_shared() or self.base1_select()))
        self.rows1 = int(eng.scalar(exp.select(sum_(col("cnt"))).from_(table_ref(self.base1))) or 0)
        for r, p in enumerate(self.prevs):
            for c, labels in enumerate(p.join_labels):
                eng.register_arrow(self._dict_name(r, c), pa.table({"label": pa.array(labels, pa.string()), "id": pa.array(range(len(labels)), pa.int32())}))
            eng.execute(self.dialect.create_temp(self.prel[r], self.prel_select(r)))
            for c, name in enumerate(p.join_cols):
                bad = eng.fetch_one(
                    exp.select(sum_(col("cnt"))).from_(table_ref(self.prel[r])).where(exp.EQ(this=col(f"j{c}"), expression=lit(-1)))
                )
                if bad and bad[0]:
                    raise HierarchyError(f"previous release {p.name}: column {name!r} has {int(bad[0])} row(s) whose value is not in its hierarchy (or NULL)")
            eng.execute(self.dialect.create_temp(self.part[r], self.part_select(r)))
            eng.execute(self.dialect.create_temp(self.keys[r], self.key_select(r)))
            self.rows_prev.append(int(eng.scalar(exp.select(sum_(col("n"))).from_(table_ref(self.keys[r]))) or 0))

    def class_histograms(self, qi: int) -> list[tuple[int, str | None, int]]:
        """``(leaf code, class, rows)`` of one attribute of T1 (InfoGain; a small result)."""
        keys = [col(f"q{qi}")] + ([col("cls")] if self.t1.class_column else [])
        q = exp.select(*keys, sum_(col("cnt"))).from_(table_ref(self.base1)).group_by(*keys)
        return [(int(r[0]), (r[1] if self.t1.class_column else None), int(r[-1])) for r in self.engine.fetch_all(q)]

    def drop(self) -> None:
        for name in [self.base1, *self.prel, *self.part, *self.keys, *[d for ds in self.dicts for d in ds]]:
            self.engine.execute(self.dialect.drop_temp(name))

    # --------------------------------------------------------------------------------------------
    # a state of T1: its partitions

    def p1_ctes(self, cuts: dict[int, Sequence[int]], par: tuple[int, Sequence[int]] | None) -> list[tuple[str, exp.Expr]]:
        """``p1``: T1's partitions under ``cuts`` (QI index -> leaf code -> node id), with ``par``
        (the current node of the attribute being specialized) when evaluating a specialization."""
        t1 = self.t1
        gens = []
        for i in t1.used:
            m = cuts.get(i)
            e = col(f"q{i}") if m is None else lookup(list(m), col(f"q{i}"), self.dialect)
            gens.append(exp.alias_(e, f"g{i}", quoted=True))
        keys = [f"g{i}" for i in t1.used]
        if par is not None:
            gens.append(exp.alias_(lookup(list(par[1]), col(f"q{par[0]}"), self.dialect), "par", quoted=True))
            keys.append("par")
        sens = [f"s{k}" for k, _, _ in t1.sens]
        ctes: list[tuple[str, exp.Expr]] = []
        frm: exp.Expr
        a: exp.Expr
        if t1.y.mode == "values":
            inner = exp.select(*gens, col("yv"), col("cnt"), *map(col, sens)).from_(table_ref(self.base1))
            p1y = exp.select(*map(col, keys), col("yv"), exp.alias_(sum_(col("cnt")), "cnt", quoted=True), *[exp.alias_(sum_(col(s)), s, quoted=True) for s in sens])
            p1y = p1y.from_(exp.alias_(exp.Subquery(this=inner), "b", table=True, quoted=True)).group_by(*map(col, keys), col("yv"))
            ctes.append(("p1y", p1y))
            frm, a = table_ref("p1y"), exp.Count(this=exp.Star())
        else:
            inner = exp.select(*gens, col("cnt"), *map(col, sens)).from_(table_ref(self.base1))
            frm = exp.alias_(exp.Subquery(this=inner), "b", table=True, quoted=True)
            a = _a_expr(t1.y.mode)
        p1 = exp.select(*map(col, keys), exp.alias_(sum_(col("cnt")), "n", quoted=True), exp.alias_(a, "a", quoted=True), *[exp.alias_(sum_(col(s)), s, quoted=True) for s in sens])
        p1 = p1.from_(frm)
        if keys:
            p1 = p1.group_by(*map(col, keys))
        ctes.append(("p1", p1))
        return ctes

    def match_ctes(self, matches: list[MatchTable], incs: list[IncTable]) -> list[tuple[str, exp.Expr]]:
        ctes: list[tuple[str, exp.Expr]] = []
        for t, m in enumerate(matches):
            names = ["c1"] + [f"v{r}" for r, _ in m.sides]
            rows: Sequence[tuple[int, ...]] = m.rows or [tuple([-9] * len(names))]
            ctes.append((f"m{t}", exp.select(*map(col, names)).from_(exp.values(rows, alias="v", columns=names))))
        for u, inc in enumerate(incs):
            irows: Sequence[tuple[int, ...]] = inc.rows or [(-9, -9)]
            ctes.append((f"i{u}", exp.select(col("c1"), col("w")).from_(exp.values(irows, alias="v", columns=["c1", "w"]))))
        return ctes

    def _join_conditions(self, left: str, matches, incs, prev_alias) -> tuple[list, list[exp.Expr | None], list[exp.Expr]]:
        """Joins from T1 (alias ``left``, columns ``g{i}``) through the match tables to every
        previous release (alias ``prev_alias(r)``, columns ``j{c}``); returns (match joins,
        per-release ON conditions, NOT EXISTS filters)."""
        mjoins = []
        on: list[list[exp.Expr]] = [[] for _ in self.prevs]
        for t, m in enumerate(matches):
            mjoins.append((table_ref(f"m{t}"), exp.EQ(this=col("c1", f"m{t}"), expression=col(f"g{m.qi}", left))))
            for r, pos in m.sides:
                on[r - 1].append(exp.EQ(this=col(f"j{pos}", prev_alias(r)), expression=col(f"v{r}", f"m{t}")))
        filters: list[exp.Expr] = []
        for u, inc in enumerate(incs):
            sub = exp.select(lit(1)).from_(table_ref(f"i{u}")).where(
                exp.and_(
                    exp.EQ(this=col("c1", f"i{u}"), expression=col(f"g{inc.qi}", left)),
                    exp.EQ(this=col("w", f"i{u}"), expression=col(f"j{inc.pos}", prev_alias(inc.release))),
                )
            )
            filters.append(exp.Not(this=exp.Exists(this=sub)))
        return mjoins, [_and(c) for c in on], filters

    # --------------------------------------------------------------------------------------------
    # Case 1: factorized through join keys

    def factorized_ctes(self, cuts, par, matches, incs) -> tuple[list, str]:
        t1 = self.t1
        ctes = self.p1_ctes(cuts, par) + self.match_ctes(matches, incs)
        jcols = [f"g{i}" for i in t1.join_attrs]
        hist = self._join_key_hist(ctes, jcols, matches, incs) if self.prevs else None
        ctes.append(("xr", self._factorized_xr(par, hist, jcols)))
        return ctes, "xr"

    def _join_key_hist(self, ctes: list, jcols: list[str], matches, incs) -> str:
        """``hist``: per join key of T1 (``jk``, its distinct join values), the previous
        releases' matching key counts multiplied out: min a (``amin``), sum n (``nsum``), and the
        largest linkability of each of their sensitive values. Appends to ``ctes``."""
        n_prev = len(self.prevs)
        sens_prev = [(r, k) for r, p in enumerate(self.prevs, start=1) for k, _, _ in p.sens]
        if jcols:
            ctes.append(("jk", exp.select(*map(col, jcols)).distinct().from_(table_ref("p1"))))
        mjoins, on, filters = self._join_conditions("jk", matches, incs, lambda r: f"r{r}")
        q = exp.select(*[col(c, "jk") for c in jcols]) if jcols else exp.select()
        amin = _prod([col("amin", f"r{r}") for r in range(1, n_prev + 1)])
        nsum = _prod([col("n", f"r{r}") for r in range(1, n_prev + 1)])
        q = q.select(exp.alias_(exp.Min(this=amin), "amin", quoted=True), exp.alias_(sum_(nsum), "nsum", quoted=True))
        for r, k in sens_prev:
            q = q.select(exp.alias_(exp.Max(this=col(f"sr{k}", f"r{r}")), f"sr{k}", quoted=True))
        first = True
        if jcols:
            q = q.from_(table_ref("jk"))
            first = False
        for tbl, cond in mjoins:
            q = q.join(tbl, on=cond, join_type="inner")
        for r in range(1, n_prev + 1):
            ref = table_ref(self.keys[r - 1], alias=f"r{r}")
            if first:
                q = q.from_(ref)
                first = False
            elif on[r - 1] is None:
                q = q.join(ref, join_type="cross")
            else:
                q = q.join(ref, on=on[r - 1], join_type="inner")
        if filters:
            q = q.where(_and(filters))
        if jcols:
            q = q.group_by(*[col(c, "jk") for c in jcols])
        ctes.append(("hist", q))
        return "hist"

    def _factorized_xr(self, par, hist: str | None, jcols: list[str]) -> exp.Select:
        """``xr``: per T1 group, a_Y and a(x) times its join key's ``hist`` figures, and each
        sensitive value's linkability (T1's own, or the previous releases' from ``hist``)."""
        sens_t1 = {k for k, _, _ in self.t1.sens}
        ay: exp.Expr
        ax: exp.Expr
        if hist:
            ay = exp.Mul(this=col("a", "p"), expression=col("amin", "h"))
            ax = exp.Mul(this=col("n", "p"), expression=col("nsum", "h"))
        else:
            ay, ax = col("a", "p"), col("n", "p")
        xr = exp.select(*[col(c, "p") for c in self._p1_cols(par)], exp.alias_(ay, "ay", quoted=True), exp.alias_(ax, "ax", quoted=True))
        for k in range(self.n_sens):
            e: exp.Expr
            if k in sens_t1:
                e = exp.Div(this=as_double(col(f"s{k}", "p")), expression=as_double(col("n", "p")))
            else:
                e = col(f"sr{k}", "h")
            xr = xr.select(exp.alias_(e, f"l{k}", quoted=True))
        xr = xr.from_(table_ref("p1", alias="p"))
        if hist:
            if jcols:
                xr = xr.join(table_ref("hist", alias="h"), on=_and([exp.EQ(this=col(c, "p"), expression=col(c, "h")) for c in jcols]), join_type="inner")
            else:
                xr = xr.join(table_ref("hist", alias="h"), join_type="cross")
        return xr

    def _p1_cols(self, par) -> list[str]:
        return [f"g{i}" for i in self.t1.used] + (["par"] if par is not None else [])

    # --------------------------------------------------------------------------------------------
    # Cases 3, 4 and distinct: matching partition tuples grouped by x

    def xcols(self) -> list[str]:
        out = [f"g{i}" for i in self.t1.x_attrs]
        for r, p in enumerate(self.prevs, start=1):
            out += [f"r{r}_j{c}" for c in p.x_join] + [f"r{r}_x{c}" for c in range(len(p.x_cols))]
        return out

    def pairs_ctes(self, cuts, par, matches, incs) -> tuple[list, str]:
        ctes = self.p1_ctes(cuts, par) + self.match_ctes(matches, incs)
        ctes.append(("t", self._pair_tuples(par, matches, incs)))
        xk = self.xcols() + (["par"] if par is not None else [])
        ctes.append(("xl0", self._x_sums(xk)))
        if self.mode in ("case1", "case4"):
            final_src = "xl0"
        else:
            ctes.extend(self._distinct_ctes(xk))
            on_x = _and([exp.NullSafeEQ(this=col(c, "xl0"), expression=col(c, "yd")) for c in xk])
            sel = exp.select(*[col(c, "xl0") for c in xk], col("ax", "xl0"), *[col(f"axy{k}", "xl0") for k in range(self.n_sens)], col("ay", "yd"))
            sel = sel.from_(table_ref("xl0"))
            sel = sel.join(table_ref("yd"), on=on_x, join_type="inner") if on_x is not None else sel.join(table_ref("yd"), join_type="cross")
            ctes.append(("xl", sel))
            final_src = "xl"
        # per x: the linkabilities
        xr = exp.select(*map(col, xk), col("ay"), col("ax"), *[exp.alias_(exp.Div(this=as_double(col(f"axy{k}")), expression=as_double(col("ax"))), f"l{k}", quoted=True) for k in range(self.n_sens)])
        ctes.append(("xr", xr.from_(table_ref(final_src))))
        return ctes, "xr"

    def _pair_tuples(self, par, matches, incs) -> exp.Select:
        """``t``: every matching tuple of T1's partitions and the previous releases' partitions,
        with each side's x values, counts and sensitive counts."""
        mjoins, on, filters = self._join_conditions("p", matches, incs, lambda r: f"r{r}")
        cols = [exp.alias_(col(c, "p"), c, quoted=True) for c in self._p1_cols(par)]
        cols += [exp.alias_(col("n", "p"), "n0", quoted=True), exp.alias_(col("a", "p"), "a0", quoted=True)]
        cols += [exp.alias_(col(f"s{k}", "p"), f"s{k}", quoted=True) for k, _, _ in self.t1.sens]
        for r, p in enumerate(self.prevs, start=1):
            cols += [exp.alias_(col(f"j{c}", f"r{r}"), f"r{r}_j{c}", quoted=True) for c in range(len(p.join_cols))]
            cols += [exp.alias_(col(f"x{c}", f"r{r}"), f"r{r}_x{c}", quoted=True) for c in range(len(p.x_cols))]
            cols += [exp.alias_(col("n", f"r{r}"), f"n{r}", quoted=True), exp.alias_(col("a", f"r{r}"), f"a{r}", quoted=True)]
            cols += [exp.alias_(col(f"s{k}", f"r{r}"), f"s{k}", quoted=True) for k, _, _ in p.sens]
        q = exp.select(*cols).from_(table_ref("p1", alias="p"))
        for tbl, cond in mjoins:
            q = q.join(tbl, on=cond, join_type="inner")
        for r in range(1, len(self.prevs) + 1):
            ref = table_ref(self.part[r - 1], alias=f"r{r}")
            q = q.join(ref, on=on[r - 1], join_type="inner") if on[r - 1] is not None else q.join(ref, join_type="cross")
        if filters:
            q = q.where(_and(filters))
        return q

    def _x_sums(self, xk: list[str]) -> exp.Select:
        """``xl0``: per x, a(x) (the join rows), a(x, y) per sensitive value, and in cases 1 and
        4 a_Y(x) (the product of the sides' a or n)."""
        sides = range(len(self.prevs) + 1)
        side_of = {k: 0 for k, _, _ in self.t1.sens}
        for r, p in enumerate(self.prevs, start=1):
            side_of.update({k: r for k, _, _ in p.sens})
        xl = exp.select(*map(col, xk), exp.alias_(sum_(_prod([col(f"n{s}") for s in sides])), "ax", quoted=True))
        for k in range(self.n_sens):
            s = side_of[k]
            xl = xl.select(exp.alias_(sum_(_prod([col(f"s{k}")] + [col(f"n{o}") for o in sides if o != s])), f"axy{k}", quoted=True))
        if self.mode in ("case1", "case4"):
            leaf = "a" if self.mode == "case1" else "n"
            xl = xl.select(exp.alias_(sum_(_prod([col(f"{leaf}{s}") for s in sides])), "ay", quoted=True))
        xl = xl.from_(table_ref("t"))
        if xk:
            xl = xl.group_by(*map(col, xk))
        return xl

    def _distinct_ctes(self, xk: list[str]) -> list[tuple[str, exp.Expr]]:
        """``yd``: a_Y(x) by Case 3 (sum over distinct partitions) or COUNT(DISTINCT y)."""
        with_y = [s for s in range(len(self.prevs) + 1) if self._side_y(s).mode != "none"]
        if self.mode == "case3":
            (s,) = with_y
            keys = self._part_keys(s)
            d = exp.select(*map(col, xk), *map(col, keys), col(f"n{s}")).distinct().from_(table_ref("t"))
            q = exp.select(*map(col, xk), exp.alias_(sum_(col(f"n{s}")), "ay", quoted=True)).from_(exp.alias_(exp.Subquery(this=d), "d", table=True, quoted=True))
            return [("yd", q.group_by(*map(col, xk)) if xk else q)]
        keys_all = [k for s in with_y for k in self._part_keys(s)]
        d = exp.select(*map(col, xk), *map(col, keys_all)).distinct().from_(table_ref("t"))
        ctes: list[tuple[str, exp.Expr]] = [("d", d)]
        q = exp.select(*[col(c, "d") for c in xk]).from_(table_ref("d"))
        yvs = []
        for s in with_y:
            alias = f"y{s}"
            if s == 0:
                ref = table_ref("p1y", alias=alias)
                cond = _and([exp.EQ(this=col(f"g{i}", "d"), expression=col(f"g{i}", alias)) for i in self.t1.used])
            else:
                p = self.prevs[s - 1]
                ref = table_ref(self.prel[s - 1], alias=alias)
                conds: list[exp.Expr] = [exp.EQ(this=col(f"r{s}_j{c}", "d"), expression=col(f"j{c}", alias)) for c in range(len(p.join_cols))]
                conds += [exp.NullSafeEQ(this=col(f"r{s}_x{c}", "d"), expression=col(f"x{c}", alias)) for c in range(len(p.x_cols))]
                cond = _and(conds)
            q = q.join(ref, on=cond, join_type="inner") if cond is not None else q.join(ref, join_type="cross")
            yvs.append(col("yv", alias))
        y = yvs[0] if len(yvs) == 1 else _yv(yvs)
        q = q.select(exp.alias_(exp.Count(this=exp.Distinct(expressions=[y])), "ay", quoted=True))
        if xk:
            q = q.group_by(*[col(c, "d") for c in xk])
        ctes.append(("yd", q))
        return ctes

    def _side_y(self, s: int) -> SideY:
        return self.t1.y if s == 0 else self.prevs[s - 1].y

    def _part_keys(self, s: int) -> list[str]:
        if s == 0:
            return [f"g{i}" for i in self.t1.used]
        p = self.prevs[s - 1]
        return [f"r{s}_j{c}" for c in range(len(p.join_cols))] + [f"r{s}_x{c}" for c in range(len(p.x_cols))]

    # --------------------------------------------------------------------------------------------
    # the questions

    def _ctes(self, cuts, par, matches, incs, factorized: bool | None = None):
        if factorized is None:
            factorized = self.mode == "case1"
        return self.factorized_ctes(cuts, par, matches, incs) if factorized else self.pairs_ctes(cuts, par, matches, incs)

    def _aggs(self) -> list[exp.Expr]:
        out = [exp.alias_(exp.Min(this=col("ay")), "ay", quoted=True), exp.alias_(sum_(col("ax")), "ax", quoted=True)]
        out += [exp.alias_(exp.Max(this=col(f"l{k}")), f"l{k}", quoted=True) for k in range(self.n_sens)]
        return out

    def _result(self, row) -> Result:
        return Result(None if row[0] is None else float(row[0]), int(row[1] or 0), [None if v is None else float(v) for v in row[2:]])

    def specialization_query(self, cuts, par, matches, incs, factorized=None) -> exp.Select:
        ctes, xr = self._ctes(cuts, par, matches, incs, factorized)
        final = exp.select(col("par"), *self._aggs()).from_(table_ref(xr)).group_by(col("par"))
        return cte_select(ctes, final)

    def evaluate_specializations(self, cuts, par, matches, incs, factorized=None) -> dict[int, Result]:
        """Per current node of the attribute ``par[0]``: the stats over the x values under it once
        the attribute's candidates are specialized (``cuts[par[0]]`` holds the children)."""
        rows = self.engine.fetch_all(self.specialization_query(cuts, par, matches, incs, factorized))
        return {int(r[0]): self._result(r[1:]) for r in rows}

    def state_query(self, cuts, matches, incs, attrs: Sequence[int], factorized=None) -> exp.Select:
        ctes, xr = self._ctes(cuts, None, matches, incs, factorized)
        parts = [exp.select(exp.alias_(lit(-1), "attr", quoted=True), exp.alias_(lit(-1), "code", quoted=True), *self._aggs()).from_(table_ref(xr))]
        for i in attrs:
            parts.append(
                exp.select(exp.alias_(lit(i), "attr", quoted=True), exp.alias_(col(f"g{i}"), "code", quoted=True), *self._aggs())
                .from_(table_ref(xr))
                .group_by(col(f"g{i}"))
            )
        union: exp.Query = parts[0]
        for p in parts[1:]:
            union = exp.union(union, p, distinct=False)
        final = exp.select(exp.Star()).from_(exp.alias_(exp.Subquery(this=union), "u", table=True, quoted=True))
        return cte_select(ctes, final)

    def evaluate_state(self, cuts, matches, incs, attrs: Sequence[int], factorized=None) -> tuple[Result, dict[int, dict[int, Result]]]:
        """The whole state (over all x) and per attribute, per current node, over the x under it."""
        rows = self.engine.fetch_all(self.state_query(cuts, matches, incs, attrs, factorized))
        total = Result(None, 0, [None] * self.n_sens)
        per: dict[int, dict[int, Result]] = {i: {} for i in attrs}
        for r in rows:
            res = self._result(r[2:])
            if int(r[0]) == -1:
                total = res
            else:
                per[int(r[0])][int(r[1])] = res
        return total, per

    def worst_x_query(self, cuts, matches, incs, order: str, k: int | None = None) -> exp.Select:
        ctes, xr = self.pairs_ctes(cuts, None, matches, incs)
        xk = self.xcols()
        key = col("ay") if order == "ay" else col(f"l{k}")
        final = exp.select(*map(col, xk), col("ay"), col("ax"), *[col(f"l{j}") for j in range(self.n_sens)]).from_(table_ref(xr))
        final = final.order_by(exp.Ordered(this=key, desc=order != "ay")).limit(1)
        return cte_select(ctes, final)

    def worst_x(self, cuts, matches, incs, order: str, k: int | None = None) -> dict | None:
        """The x value at fault (for the error of Corollary 4.2): smallest a_Y(x) or largest l_y(x)."""
        xk = self.xcols()
        row = self.engine.fetch_one(self.worst_x_query(cuts, matches, incs, order, k))
        if row is None:
            return None
        return {"x": dict(zip(xk, row[: len(xk)])), "ay": row[len(xk)], "ax": row[len(xk) + 1], "l": list(row[len(xk) + 2:])}


def _counted(sel: exp.Select, keys: Sequence[exp.Expr], sens) -> exp.Select:
    """A release's scan grouped by ``keys``: rows (``cnt``) and one count per sensitive value."""
    aggs = [exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True)]
    for k, column, value in sens:
        ind = if_(exp.EQ(this=as_varchar(col(column, "src")), expression=lit(value)), lit(1), lit(0))
        aggs.append(exp.alias_(sum_(ind), f"s{k}", quoted=True))
    sel = sel.select(*keys, *aggs)
    return sel.group_by(*[lit(j + 1) for j in range(len(keys))]) if keys else sel


def is_key(engine, source, columns: list[str]) -> bool:
    """Is ``columns`` a key of ``source`` (as many distinct values as rows)? One scan."""
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    distinct = exp.Count(this=exp.Distinct(expressions=[_yv([as_varchar(col(c, "src")) for c in columns])]))
    row = engine.fetch_one(exp.select(exp.Count(this=exp.Star()), distinct).from_(src))
    return bool(row) and int(row[0]) == int(row[1])


def _yv(parts: Sequence[exp.Expr]) -> exp.Expr:
    if len(parts) == 1:
        return parts[0]
    return exp.ConcatWs(expressions=[lit(SEP), *[exp.Coalesce(this=p, expressions=[lit("")]) for p in parts]])


def _a_expr(mode: str) -> exp.Expr:
    if mode == "none":
        return exp.Max(this=lit(1))
    if mode == "key":
        return sum_(col("cnt"))
    return exp.Count(this=exp.Star())


def _prod(parts: Sequence[exp.Expr]) -> exp.Expr:
    out = parts[0]
    for p in parts[1:]:
        out = exp.Mul(this=out, expression=p)
    return out


def _and(parts: Sequence[exp.Expr]) -> exp.Expr | None:
    if not parts:
        return None
    return exp.and_(*parts) if len(parts) > 1 else parts[0]


__all__ = ["LossyJoinStats", "T1Spec", "PrevSpec", "SideY", "MatchTable", "IncTable", "Result", "ConfigError"]
