"""Statistics of the bottom-up search (Wang, Yu, Chakraborty 2004), as generated SQL.

The paper's TEA index becomes the **vid table**: one row per distinct virtual-identifier value
(*vid*) with its count ``a(vid)`` and its per-class counts, held in the database::

    q0 .. q{n-1}   current value of each VID attribute (a taxonomy node id; leaves = leaf codes)
    y0 .. y{m-1}   records of the vid with the j-th class value
    cnt            a(vid)

Every quantity the search needs is one statement over that table:

* :meth:`VidTable.count_histogram` -- the paper's ``O[i]``: how many vids have ``a(vid) = i``, i < K;
* :meth:`VidTable.info_loss` -- ``I(G)`` of ``{c} -> p`` from the class counts of the vids holding a
  child ``c`` (the vids always partition the records, so these are ``freq(Rc, cls)``);
* :meth:`VidTable.candidates` -- Step 1 of Section 5.2: for each attribute (a level of the TEA
  index, in VID order), whether every anonymity vid (``a(vid) = A(VID)``) is generalized by a
  segment of size > 1 of one and the same generalization (one scan for the smallest and largest
  value per level, then one statement for the levels left);
* :meth:`VidTable.probe` -- Step 2: merge the vids ``G`` generalizes (in the statement, not stored)
  and return the counts of old/new vids by ``a(vid)`` below K (so ``A^n_G``, and ``A^o_G`` from
  ``O[i]``);
* :meth:`VidTable.commit` -- Step 3: make a probe permanent (``INSERT`` the merged vids, ``DELETE``
  the generalized ones). Work is proportional to the vids generalized, not to all vids.

No SQL text is written by hand: everything is built with sqlglot and identifiers are quoted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Sequence

from sqlglot import exp

from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import add_all, and_all, as_bigint as _bigint, as_double as _double, if_, lit, sum_
from sqlanon.dialect import lookup

LN2 = math.log(2.0)


def _xlogx(e: exp.Expr) -> exp.Expr:
    """``x * ln(x)`` with ``0 ln 0 = 0``."""
    x = _double(e)
    return if_(exp.GT(this=e.copy(), expression=lit(0)), exp.Mul(this=x, expression=exp.Ln(this=x.copy())), lit(0.0))


def _in(column: exp.Expr, values: Sequence[int]) -> exp.Expr:
    return exp.In(this=column, expressions=[lit(int(v)) for v in values])


def _count_star() -> exp.Expr:
    return exp.Count(this=exp.Star())


@dataclass
class Probe:
    """A generalization measured on the vids it generalizes, not yet made permanent (Section 5.3)."""

    attr: int
    parent: int
    children: list[int]
    #: the smallest new a(vid) when below K, else K or more (AG(VID) is capped at K)
    min_new: int | None
    old_hist: dict[int, int] = field(default_factory=dict)
    new_hist: dict[int, int] = field(default_factory=dict)
    old_vids: int = 0
    new_vids: int = 0

    @property
    def rows_touched(self) -> int:
        """vid rows read and written by applying this generalization."""
        return self.old_vids + self.new_vids


class VidTable:
    """The vid table (TEA index) in the database, and every statement the search runs on it."""

    def __init__(self, engine, n_attrs: int, n_classes: int, dialect=None, node_loss: Sequence[Sequence[float]] | None = None,
                 n_leaves: Sequence[int] | None = None) -> None:
        """``node_loss`` (per attribute, per taxonomy node id; the first ``n_leaves`` ids are the
        leaf codes): each vid also carries ``lm``, the sum over attributes of its values' losses
        (:meth:`lm_released_query`)."""
        self.engine = engine
        self.node_loss = [list(x) for x in node_loss] if node_loss is not None else None
        self.n_leaves = list(n_leaves) if n_leaves is not None else [len(x) for x in self.node_loss or []]
        #: statements are built for this dialect (the engine's by default)
        self.dialect = dialect if dialect is not None else engine.dialect
        self.n = n_attrs
        self.m = max(1, n_classes)
        self.name = engine.temp_name("bu_vid")
        self._texts: dict[tuple, str] = {}

    def _text(self, statement: exp.Expr) -> str:
        """A statement built for one use, rendered without copying it first."""
        return self.dialect.render(statement, copy=False)

    def _cached(self, key: tuple, build) -> str:
        """The text of a statement that depends only on ``key`` and the vid table's name (the
        same text every step: built and rendered once)."""
        full = (self.name, *key)
        text = self._texts.get(full)
        if text is None:
            text = self._texts[full] = self._text(build())
        return text

    def qname(self, i: int) -> str:
        return f"q{i}"

    @property
    def qnames(self) -> list[str]:
        return [self.qname(i) for i in range(self.n)]

    @property
    def ynames(self) -> list[str]:
        return [f"y{j}" for j in range(self.m)]

    @property
    def columns(self) -> list[str]:
        return self.qnames + self.ynames + ["cnt"] + (["lm"] if self.node_loss is not None else [])

    # -- creation --------------------------------------------------------------------------------
    def create_query(self, base_table: str, classes: Sequence[str] | None, leaf_nodes: Sequence[Sequence[int]] | None = None) -> exp.Create:
        """The vid table from a base frequency set (``q0..``, optional ``y``, ``cnt``).

        ``classes`` lists the class values in the order of the ``y`` columns (``None``: no class
        column, one pseudo-class); ``leaf_nodes[i]`` maps leaf codes to node ids (identity by default).
        """
        keys = []
        for i in range(self.n):
            code: exp.Expr = col(f"q{i}")
            if leaf_nodes is not None:
                code = lookup(list(leaf_nodes[i]), code, self.dialect)
            keys.append(code)
        sel = [exp.alias_(k, self.qname(i), quoted=True) for i, k in enumerate(keys)]
        if classes:
            for j, value in enumerate(classes):
                hit = if_(exp.EQ(this=col("y"), expression=lit(str(value))), col("cnt"), lit(0))
                sel.append(exp.alias_(_bigint(sum_(hit)), f"y{j}", quoted=True))
        else:
            sel.append(exp.alias_(_bigint(sum_(col("cnt"))), "y0", quoted=True))
        sel.append(exp.alias_(_bigint(sum_(col("cnt"))), "cnt", quoted=True))
        if self.node_loss is not None:
            # a function of the grouping keys: its value per leaf code, summed over attributes
            per_leaf = [[losses[x] for x in (leaf_nodes[i] if leaf_nodes is not None else range(self.n_leaves[i]))] for i, losses in enumerate(self.node_loss)]
            terms = [lookup(values, col(f"q{i}"), self.dialect) for i, values in enumerate(per_leaf)]
            sel.append(exp.alias_(exp.Min(this=_double(add_all(terms))), "lm", quoted=True))
        q = exp.select(*sel).from_(table_ref(base_table))
        # a lookup folded to a constant (every leaf in one start node) is no grouping key: a
        # literal in GROUP BY would be read as a column position
        grouping = [k.copy() for k in keys if not isinstance(k, exp.Literal)]
        if grouping:
            q = q.group_by(*grouping)
        return self.dialect.create_temp(self.name, q)

    def create(self, base_table: str, classes: Sequence[str] | None, leaf_nodes=None) -> int:
        self.engine.execute(self.create_query(base_table, classes, leaf_nodes))
        return self.size()

    def size(self) -> int:
        return int(self.engine.scalar(exp.select(_count_star()).from_(table_ref(self.name))))

    def drop(self) -> None:
        self.engine.execute(self.dialect.drop_temp(self.name))
        self._texts.clear()

    # -- the paper's O[i] --------------------------------------------------------------------------
    def count_histogram_query(self, K: int) -> exp.Select:
        return (
            exp.select(col("cnt"), _count_star())
            .from_(table_ref(self.name))
            .where(exp.LT(this=col("cnt"), expression=lit(int(K))))
            .group_by(col("cnt"))
        )

    def count_histogram(self, K: int) -> dict[int, int]:
        """``{i: number of vids with a(vid) = i}`` for ``i < K``."""
        return {int(c): int(n) for c, n in self.engine.fetch_all(self.count_histogram_query(K))}

    def lm_released_query(self, K: int) -> exp.Select:
        """``SUM(cnt * lm)`` over the vids with ``a(vid) >= K``: the LM of the rows released (the
        vids are the classes of the current cut)."""
        cnt_lm = exp.Mul(this=col("cnt"), expression=col("lm"))
        return exp.select(sum_(cnt_lm)).from_(table_ref(self.name)).where(exp.GTE(this=col("cnt"), expression=lit(int(K))))

    def lm_released(self, K: int) -> float:
        return float(self.engine.scalar(self._cached(("lm", K), lambda: self.lm_released_query(K))) or 0.0)

    def min_count(self) -> int:
        """A(VID) when every vid has at least K records (the O[i] are all zero)."""
        return int(self.engine.scalar(exp.select(exp.Min(this=col("cnt"))).from_(table_ref(self.name))) or 0)

    # -- I(G) --------------------------------------------------------------------------------------
    def info_loss_query(self, gens: Sequence[tuple[int, int, Sequence[int]]]) -> exp.Expr:
        """``I(G)`` (bits) and ``|Rp|`` of each ``(attr, parent, children)``, one row per G.

        ``|Rp| * I(G) = [xlogx|Rp| - sum_cls xlogx f(Rp,cls)] - sum_c [xlogx|Rc| - sum_cls xlogx f(Rc,cls)]``
        with ``xlogx(x) = x ln x``; ``f(Rc, cls)`` are the summed class counts of the vids holding c.
        """
        branches = []
        for attr, parent, children in gens:
            q = col(self.qname(attr))
            per_child = (
                exp.select(
                    exp.alias_(q.copy(), "c", quoted=True),
                    *[exp.alias_(sum_(col(y)), y, quoted=True) for y in self.ynames],
                    exp.alias_(sum_(col("cnt")), "cnt", quoted=True),
                )
                .from_(table_ref(self.name))
                .where(_in(q.copy(), children))
                .group_by(q.copy())
            )
            rp = sum_(col("cnt"))
            parent_part = exp.Sub(
                this=_xlogx(rp),
                expression=_sum_all([_xlogx(sum_(col(y))) for y in self.ynames]),
            )
            child_part = exp.Sub(
                this=sum_(_xlogx(col("cnt"))),
                expression=_sum_all([sum_(_xlogx(col(y))) for y in self.ynames]),
            )
            loss = exp.Div(
                this=exp.Paren(this=exp.Sub(this=exp.Paren(this=parent_part), expression=exp.Paren(this=child_part))),
                expression=exp.Paren(this=exp.Mul(this=_double(sum_(col("cnt"))), expression=lit(LN2))),
            )
            branch = exp.select(
                exp.alias_(lit(int(attr)), "attr", quoted=True),
                exp.alias_(lit(int(parent)), "parent", quoted=True),
                exp.alias_(loss, "info_loss", quoted=True),
                exp.alias_(_bigint(sum_(col("cnt"))), "rp", quoted=True),
            ).from_(exp.alias_(exp.Subquery(this=per_child), "ch", table=True, quoted=True))
            branches.append(branch)
        return _union_all(branches)

    def info_loss(self, gens: Sequence[tuple[int, int, Sequence[int]]]) -> dict[tuple[int, int], tuple[float, int]]:
        """``{(attr, parent): (I(G), |Rp|)}``; a G whose children hold no record has I = 0, |Rp| = 0."""
        out = {(a, p): (0.0, 0) for a, p, _ in gens}
        if not gens:
            return out
        for attr, parent, info, rp in self.engine.fetch_all(self.info_loss_query(gens)):
            if rp is None or int(rp) == 0:
                continue
            out[(int(attr), int(parent))] = (max(0.0, float(info or 0.0)), int(rp))
        return out

    # -- Step 1: candidates (Theorem 1) -------------------------------------------------------------
    def anonymity_range_query(self, A: int) -> exp.Select:
        """Step 1, first pass: per TEA level, the smallest and largest value of the anonymity vids
        (``a(vid) = A``), in one scan and one row. Parents are looked up in Python, where the
        taxonomy lives: two values with different parents rule the level out; one value, or two
        with the same parent, leave a single candidate parent, which the second pass checks."""
        sel: list[exp.Expr] = []
        for q in self.qnames:
            sel += [exp.Min(this=col(q)), exp.Max(this=col(q))]
        return _select(sel, table_ref(self.name), exp.EQ(this=col("cnt"), expression=lit(int(A))))

    def segment_sizes_query(self, A: int, levels: Sequence[tuple[int, Sequence[int]]]) -> exp.Expr:
        """Step 1, second pass, only for the levels where the anonymity vids may all have the same
        parent ``p``: the anonymity vids whose value is not a child of ``p`` (``stray``: the level
        is ruled out unless 0), and the smallest size of the segments of ``{children} -> p``
        holding an anonymity vid.

        A segment at level ``i`` is the set of children of ``p`` among the vids sharing the anonymity
        vid's values on the levels above (``q0..q{i-1}``): a maximal set of siblings in the TEA index.
        """
        anon = exp.select(*[col(q) for q in self.qnames]).from_(table_ref(self.name)).where(
            exp.EQ(this=col("cnt"), expression=lit(int(A)))
        )
        ctes: list[tuple[str, exp.Expr]] = [("anon", anon)]
        finals = []
        for i, children in levels:
            prefix = self.qnames[:i]
            seg = exp.select(exp.alias_(exp.Count(this=exp.Distinct(expressions=[col(self.qname(i), "v")])), "k", quoted=True))
            seg = seg.from_(table_ref(self.name, alias="v")).where(_in(col(self.qname(i), "v"), children))
            if prefix:
                heads = exp.select(*[col(q) for q in prefix]).distinct().from_(table_ref("anon"))
                ctes.append((f"heads{i}", heads))
                cond = and_all([exp.EQ(this=col(q, "v"), expression=col(q, "h")) for q in prefix])
                seg = seg.join(table_ref(f"heads{i}", alias="h"), on=cond, join_type="inner")
                seg = seg.group_by(*[col(q, "h") for q in prefix])
            ctes.append((f"seg{i}", seg))
            stray = exp.select(exp.alias_(_count_star(), "n", quoted=True)).from_(table_ref("anon")).where(
                exp.Not(this=exp.Paren(this=_in(col(self.qname(i)), children)))
            )
            ctes.append((f"stray{i}", stray))
            finals.append(
                exp.select(
                    exp.alias_(lit(int(i)), "lvl", quoted=True),
                    exp.alias_(exp.Min(this=col("k", "s")), "min_k", quoted=True),
                    exp.alias_(_count_star(), "segments", quoted=True),
                    exp.alias_(exp.Max(this=col("n", "x")), "stray", quoted=True),
                ).from_(table_ref(f"seg{i}", alias="s")).join(table_ref(f"stray{i}", alias="x"), join_type="cross")
            )
        final = _union_all(finals)
        for name, body in ctes:
            final = final.with_(exp.to_identifier(name, quoted=True), as_=body, copy=False)
        return final

    def candidates(self, A: int, parents: Sequence[Sequence[int]], children: Sequence[Sequence[Sequence[int]]], valid=None) -> list[dict]:
        """Step 1 (Section 5.2): walk the anonymity vids up the TEA levels; at each level, either
        they are all generalized by the same (valid) G, each by a segment of size > 1, or no critical
        generalization exists at that level. One dict per level:
        ``lvl, parents, p, min_k, segments`` (``parents`` 1 when every anonymity vid has the parent
        ``p`` at that level, else 2: more than one; ``min_k`` 0 when the level was ruled out)."""
        row = self.engine.fetch_one(self._cached(("range", A), lambda: self.anonymity_range_query(A)))
        out, check = [], []
        for i in range(self.n):
            lo, hi = (None, None) if row is None else (row[2 * i], row[2 * i + 1])
            if lo is None or hi is None:
                out.append({"lvl": i, "parents": 0, "p": None, "min_k": 0, "segments": 0})
                continue
            p_lo, p_hi = int(parents[i][int(lo)]), int(parents[i][int(hi)])
            n_par, p = (1, p_lo) if p_lo == p_hi else (2, min(p_lo, p_hi))
            out.append({"lvl": i, "parents": n_par, "p": p, "min_k": 0, "segments": 0})
            if n_par == 1 and p >= 0 and (valid is None or (i, p) in valid):
                check.append((i, children[i][p]))
        if check:
            for lvl, min_k, segs, stray in self.engine.fetch_all(self.segment_sizes_query(A, check)):
                if stray:  # values between the smallest and the largest under another parent
                    out[int(lvl)]["parents"] = 2
                    continue
                out[int(lvl)]["min_k"] = int(min_k or 0)
                out[int(lvl)]["segments"] = int(segs)
        return out

    def anonymity_vids(self, A: int) -> list[tuple[int, ...]]:
        q = exp.select(*[col(c) for c in self.qnames]).from_(table_ref(self.name)).where(exp.EQ(this=col("cnt"), expression=lit(int(A))))
        return sorted(tuple(int(v) for v in r) for r in self.engine.fetch_all(q))

    # -- segments (Definition 5), for inspection and tests -------------------------------------------
    def segments_query(self, attr: int, children: Sequence[int]) -> exp.Select:
        prefix = self.qnames[:attr]
        q = exp.select(*[col(c) for c in prefix], col(self.qname(attr))).distinct().from_(table_ref(self.name))
        return q.where(_in(col(self.qname(attr)), children))

    def segments(self, attr: int, children: Sequence[int]) -> dict[tuple[int, ...], list[int]]:
        """``{prefix: sorted children of the segment}`` of ``{children} -> p`` at TEA level ``attr``."""
        out: dict[tuple[int, ...], list[int]] = {}
        for row in self.engine.fetch_all(self.segments_query(attr, children)):
            out.setdefault(tuple(int(v) for v in row[:-1]), []).append(int(row[-1]))
        return {k: sorted(v) for k, v in out.items()}

    # -- Step 2 / 3: apply a generalization ----------------------------------------------------------
    def merged_query(self, attr: int, parent: int, children: Sequence[int], counts_only: bool = False) -> exp.Select:
        """The new vids of ``{children} -> parent``: only the vids it generalizes are read
        (``counts_only``: their ``cnt`` alone, all a probe needs). Built without copies: it is
        built for every probe and every commit."""
        sel: list[exp.Expr] = []
        keys: list[exp.Expr] = []
        for i, q in enumerate(self.qnames):
            if i == attr:
                if not counts_only:
                    sel.append(exp.alias_(lit(int(parent)), q, quoted=True, copy=False))
            else:
                if not counts_only:
                    sel.append(col(q))
                keys.append(col(q))
        if not counts_only:
            sel += [exp.alias_(_bigint(sum_(col(y))), y, quoted=True, copy=False) for y in self.ynames]
        sel.append(exp.alias_(_bigint(sum_(col("cnt"))), "cnt", quoted=True, copy=False))
        if self.node_loss is not None and not counts_only:
            # the vids merged differ in this attribute only: drop their child's loss, add the parent's
            losses = self.node_loss[attr]
            lm: exp.Expr = col("lm")
            dropped = [c for c in children if losses[c]]
            if dropped:
                case = exp.Case(this=col(self.qname(attr)), ifs=[exp.If(this=lit(int(c)), true=lit(float(losses[c]))) for c in dropped], default=lit(0.0))
                lm = exp.Sub(this=lm, expression=case)
            sel.append(exp.alias_(exp.Add(this=exp.Min(this=lm), expression=lit(float(losses[parent]))), "lm", quoted=True, copy=False))
        return _select(sel, table_ref(self.name), _in(col(self.qname(attr)), children), keys)

    def probe_query(self, attr: int, parent: int, children: Sequence[int], K: int, inserted: bool = False) -> exp.Expr:
        """``kind, cnt, n`` rows: how many old (``o``, the vids G generalizes) and new (``n``, the
        merged vids) vids have each ``a(vid)`` below K, and how many have ``a(vid) >= K``
        (``cnt = K``): one statement, the merged vids computed once and not stored
        (``inserted``: read from the vid table, where :meth:`apply` has just put them; no vid
        holds the parent before).
        """

        def capped() -> exp.Expr:
            small = exp.LT(this=col("cnt"), expression=lit(int(K)))
            return exp.alias_(exp.Case(ifs=[exp.If(this=small, true=col("cnt"))], default=lit(int(K))), "cnt", quoted=True, copy=False)

        old = _select([exp.alias_(lit("o"), "kind", quoted=True, copy=False), capped()], table_ref(self.name), _in(col(self.qname(attr)), children))
        if inserted:
            new = _select([lit("n"), capped()], table_ref(self.name), exp.EQ(this=col(self.qname(attr)), expression=lit(int(parent))))
        else:
            merged = exp.alias_(exp.Subquery(this=self.merged_query(attr, parent, children, counts_only=True)), "m", table=True, quoted=True, copy=False)
            new = _select([lit("n"), capped()], merged)
        both = exp.alias_(exp.Subquery(this=exp.Union(this=old, expression=new, distinct=False)), "g", table=True, quoted=True, copy=False)
        return _select([col("kind"), col("cnt"), exp.alias_(_count_star(), "n", quoted=True, copy=False)], both, group=[col("kind"), col("cnt")])

    def probe(self, attr: int, parent: int, children: Sequence[int], K: int) -> Probe:
        """Measure G on the vids it generalizes (nothing is written: :meth:`commit` applies it)."""
        return self._measured(Probe(attr, parent, list(children), None), self.probe_query(attr, parent, children, K), K)

    def _measured(self, pr: Probe, query: exp.Expr, K: int) -> Probe:
        smallest = None
        for kind, cnt, n in self.engine.fetch_all(self._text(query)):
            cnt, n = int(cnt), int(n)
            if kind == "o":
                pr.old_vids += n
                if cnt < K:
                    pr.old_hist[cnt] = n
            else:
                pr.new_vids += n
                if cnt < K:
                    pr.new_hist[cnt] = n
                smallest = cnt if smallest is None else min(smallest, cnt)
        pr.min_new = smallest
        return pr

    def apply(self, attr: int, parent: int, children: Sequence[int], K: int) -> Probe:
        """Apply G without a probe first (the search chose it without its gain) and measure it as
        :meth:`probe` would: the merged vids are inserted, counted beside the vids they replace,
        and those are deleted; the merge is computed once. Where temporary tables take no
        INSERT/DELETE, :meth:`probe` then :meth:`commit`."""
        if not self.dialect.updatable_temps:
            pr = self.probe(attr, parent, children, K)
            self.commit(pr)
            return pr
        pr = Probe(attr, parent, list(children), None)
        self._insert_merged(pr)
        self._measured(pr, self.probe_query(attr, parent, children, K, inserted=True), K)
        self._delete_children(pr)
        return pr

    def _insert_merged(self, pr: Probe) -> None:
        self.engine.execute(self._text(
            exp.Insert(
                this=exp.Schema(this=table_ref(self.name), expressions=[exp.to_identifier(c, quoted=True) for c in self.columns]),
                expression=self.merged_query(pr.attr, pr.parent, pr.children),
            )
        ))

    def _delete_children(self, pr: Probe) -> None:
        self.engine.execute(self._text(
            exp.Delete(this=table_ref(self.name), where=exp.Where(this=_in(col(self.qname(pr.attr)), pr.children)))
        ))

    def commit(self, pr: Probe) -> None:
        """Make a probe permanent: the generalized vids are replaced by the merged ones (in place
        where temporary tables take INSERT/DELETE: the merged vids hold the parent, never a child,
        so they are inserted first; else a new temporary table replaces the old)."""
        if not self.dialect.updatable_temps:
            names = self.columns
            merged = self.merged_query(pr.attr, pr.parent, pr.children)
            kept = exp.select(*[col(c) for c in names]).from_(table_ref(self.name)).where(
                exp.Not(this=exp.Paren(this=_in(col(self.qname(pr.attr)), pr.children)))
            )
            new = self.engine.temp_name("bu_vid")
            self.engine.execute(self.dialect.create_temp(new, exp.union(kept, merged, distinct=False)))
            self.engine.execute(self.dialect.drop_temp(self.name))
            self.name = new
            self._texts.clear()
            return
        self._insert_merged(pr)
        self._delete_children(pr)

    # -- for tests and reports -------------------------------------------------------------------
    def rows(self) -> list[tuple]:
        """All vids (tests only: the vid table of a small example)."""
        q = exp.select(*[col(c) for c in self.columns]).from_(table_ref(self.name))
        return sorted(tuple(int(v) for v in r) for r in self.engine.fetch_all(q))


def class_values_query(base_table: str) -> exp.Select:
    """The class values of a base frequency set with a ``y`` key (a small result)."""
    return exp.select(col("y")).distinct().from_(table_ref(base_table)).order_by(col("y"))


def _select(expressions: Sequence[exp.Expr], frm: exp.Expr, where: exp.Expr | None = None, group: Sequence[exp.Expr] = ()) -> exp.Select:
    """``SELECT .. FROM .. [WHERE ..] [GROUP BY ..]`` from fresh nodes, without the builders' copies."""
    q = exp.Select(expressions=list(expressions))
    q.set("from_", exp.From(this=frm))
    if where is not None:
        q.set("where", exp.Where(this=where))
    if group:
        q.set("group", exp.Group(expressions=list(group)))
    return q


def _sum_all(parts: list[exp.Expr]) -> exp.Expr:
    return exp.Paren(this=add_all(parts))


def _union_all(selects: Sequence[exp.Query]) -> exp.Query:
    out: exp.Query = selects[0]
    for s in selects[1:]:
        out = exp.Union(this=out, expression=s, distinct=False)
    return out
