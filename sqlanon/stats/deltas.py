"""Batch evaluation on wide sets: one branch per node, each adding to its source set's packed
class key only the QIs where the node differs from the set.

The joined batch statement (:func:`sqlanon.stats.batch.build`) groups every node's classes in one
hash table keyed by node and class. On a set with many distinct rows (24 QIs, 30K rows: nearly
one class per row near the bottom of the lattice) that table holds ``nodes x rows`` groups and
its keys are built per joined row from a ``CASE`` per QI: most of such a statement's time is
in the one large hash table (docs/measurements.md). Here each node is a branch (``UNION ALL``)
grouping the set by its own key, a small hash table each, and the key is the set's key (summed
once per row in a shared CTE, ``b0``..) plus, per QI the node generalizes further than the set,
one lookup of ``multiplier x (code at the node's level - code at the set's level)``: the
successors of one node (a lightning or bottom-up expansion, rolled up to their meet first) add
one lookup each.

A metric's per-class parts (:meth:`sqlanon.metrics.base.Metric.batch_terms`) are read back from
the class key only for the *released* classes (at most ``rows / k`` of them, where most of a
wide node's classes are suppressed singletons), in one place for all branches; so the shape
applies when every final aggregate over a part sums it over released classes
(``SUM(CASE WHEN ok THEN part ELSE 0 END)``, :func:`released_only`), the others (over ``cnt``
and ``ok``) are computed per branch. Every node's answer is the joined statement's and the one
node statement's (``tests/stats/test_batch.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.dialect import lookup
from sqlanon.expr.atoms import NODE_ID, Params, add_all, as_bigint, class_summary, col, cte_select, lit, table_ref, union_all
import sqlanon.stats.batch as batch

#: a group's source set (its meet, or the saved set it rolls up from) of at least this many rows
#: takes the branch shape: there a node's classes are many and one hash table per node pays
#: (docs/measurements.md)
DELTA_ROWS = 5_000
#: ... when its nodes differ from the source set in at most this many QIs on average (a branch
#: looks up each of them per row)
DELTA_DIFF = 4.0
#: ... on a table of at least this many QIs. Adult (8 QIs, 30K rows; lattice search, 26-103
#: nodes): no gain, and a keyed set made and dropped per statement (docs/measurements.md)
DELTA_QIS = 12


def moved(ref: Sequence[int], node: Sequence[int]) -> tuple[int, ...]:
    """The QIs where ``node``'s level differs from the reference levels ``ref``."""
    return tuple(i for i, (r, lv) in enumerate(zip(ref, node)) if lv != r)


def reference(src_levels: Sequence[int], nodes) -> tuple[int, ...]:
    """The levels the keyed set's key is taken at: per QI the level most of ``nodes`` have (the
    lowest of a tie), so that a node differs from it in few QIs (the successors of a node, or its
    predecessors: in one each)."""
    out = []
    for i in range(len(src_levels)):
        counts: dict[int, int] = {}
        for node in nodes:
            counts[int(node[i])] = counts.get(int(node[i]), 0) + 1
        out.append(max(sorted(counts), key=lambda lv: counts[lv]))
    return tuple(out)


def key_values(stats, i: int, low: int, level: int) -> list[int]:
    """Per code of QI ``i`` at ``low``: its part of the packed key at ``level``."""
    cache = stats.memory.deltas.key_values
    key = (i, low, level)
    out = cache.get(key)
    if out is None:
        m = batch.multipliers(stats)[i]
        out = cache[key] = [m * g for g in batch._level_map(stats, i, low, level)]
    return out


def delta_values(stats, i: int, low: int, ref: int, level: int) -> list[int]:
    """Per code of QI ``i`` at ``low``: what its part of the packed key gains from ``ref`` to ``level``."""
    cache = stats.memory.deltas.delta_values
    key = (i, low, ref, level)
    out = cache.get(key)
    if out is None:
        out = cache[key] = [a - b for a, b in zip(key_values(stats, i, low, level), key_values(stats, i, low, ref))]
    return out


def _references(e: exp.Expr, names: set[str]) -> bool:
    return any(c.name in names for c in e.find_all(exp.Column))


def released_only(final: exp.Expr, parts: set[str]) -> bool:
    """Whether ``final`` is ``SUM(CASE WHEN ok THEN <part> ELSE 0 END)``: a part summed over the
    released classes only (so it can be summed over those alone)."""
    if not isinstance(final, exp.Sum) or not isinstance(final.this, exp.Case):
        return False
    case = final.this
    ifs = case.args.get("ifs") or []
    default = case.args.get("default")
    if len(ifs) != 1 or case.this is not None or not isinstance(default, exp.Literal) or float(default.this) != 0.0:
        return False
    cond, then = ifs[0].this, ifs[0].args.get("true")
    return isinstance(cond, exp.Column) and cond.name == "ok" and cond.table == "" and then is not None and not _references(then, {"ok"}) and all(c.name in parts for c in then.find_all(exp.Column))


def split_finals(metric, stats) -> tuple[list, list, list, list] | None:
    """``(parts, per-branch finals, released-only finals, all finals)`` (built once per metric),
    or None when a final sums a part otherwise (the joined statement answers then)."""
    cache = stats.memory.deltas.finals
    key = batch.metric_key(metric)
    if key in cache:
        return cache[key]
    terms, finals = metric.batch_terms(stats) if metric is not None else ([], [])
    names = {name for name, _ in terms}
    plain, released = [], []
    for name, e in finals:
        if not _references(e, names):
            plain.append((name, e))
        elif released_only(e, names):
            released.append((name, e))
        else:
            cache[key] = None
            return None
    cache[key] = (terms, plain, released, finals)
    return cache[key]


def applies(stats, groups, metric) -> bool:
    """Whether the branch shape answers a statement of ``groups`` (see the module's doc)."""
    if stats.needs.any or not stats.dialect.node_branches or split_finals(metric, stats) is None:
        # sensitive aggregates per class: the joined statement has them
        return False
    n = sum(len(group_nodes) for _, group_nodes, _, _ in groups)
    if not n:
        return False
    rows = min(frm.rows for _, _, frm, _ in groups)
    diff = sum(len(moved(ref, node)) for (_, group_nodes, _, _), ref in zip(groups, _refs(groups)) for node in group_nodes) / n
    return rows >= DELTA_ROWS and diff <= DELTA_DIFF and len(stats.qis) >= DELTA_QIS


def _refs(groups) -> list[tuple[int, ...]]:
    return [reference((meet or frm).levels, group_nodes) for _, group_nodes, frm, meet in groups]


def _key_part(stats, i: int, low: int, ref: int, params: Params | None) -> exp.Expr:
    m = batch.multipliers(stats)[i]
    if ref != low:
        return as_bigint(lookup(key_values(stats, i, low, ref), col(stats.qcol(i)), stats.dialect, params))
    return exp.Mul(this=as_bigint(col(stats.qcol(i))), expression=lit(m)) if m != 1 else as_bigint(col(stats.qcol(i)))


def keyed_select(stats, src, frm, meet, ref: Sequence[int], used: Sequence[int], params: Params | None = None) -> exp.Select:
    """A group's source set with its packed key at the reference levels ``ref`` (``b0``..) and
    the codes of the QIs its nodes move: the set ``frm``, or its roll-up to the group's ``meet``."""
    body: exp.Expr = table_ref(frm.table)
    if meet is not None:
        body = exp.alias_(exp.Subquery(this=stats.generalized_select(meet.levels, frm, params)), "m", table=True, quoted=True, copy=False)
    keys = []
    for w, word in enumerate(batch.words(stats)):
        keys.append(exp.alias_(add_all([_key_part(stats, i, src.levels[i], ref[i], params) for i, _ in word]), f"b{w}", quoted=True, copy=False))
    return exp.select(*[col(stats.qcol(i)) for i in used], *keys, col("cnt"), copy=False).from_(body, copy=False)


def _used(groups, refs) -> list[list[int]]:
    """The QIs a group's keyed set carries the codes of: every QI, so that its text (cached)
    does not depend on which QIs the nodes move (w24: 49 of 59 texts built anew when only the
    moved ones were carried)."""
    n = len(refs[0]) if refs else 0
    return [list(range(n)) for _ in groups]


def keyed_params(stats, frm, meet, ref) -> list:
    """The bound lists of :func:`keyed_select`, in its order."""
    src = meet or frm
    out = list(stats.maps(meet.levels, frm)) if meet is not None else []
    for word in batch.words(stats):
        out.extend(key_values(stats, i, src.levels[i], ref[i]) for i, _ in word if ref[i] != src.levels[i])
    return out


def build(stats, groups, ok: exp.Expr, metric=None, params: Params | None = None, sources: Sequence[str] = ()) -> exp.Query:
    """The statement for ``groups`` (:func:`sqlanon.stats.batch.layout`) over their keyed sets
    saved as ``sources`` (:func:`keyed_select`, one per group): one row per node, the columns of
    :func:`sqlanon.stats.batch.build` (``nid`` last). Each branch reads its table on its own: a
    CTE read by every branch is streamed to all of them at once, their hash tables built side by
    side (slower a branch: docs/measurements.md)."""
    split = split_finals(metric, stats)
    assert split is not None  # applies() said so
    terms, plain, released, finals = split
    kcols = batch.key_cols(stats)
    words = batch.words(stats)
    ctes: list[tuple[str, exp.Expr]] = []
    branches: list[exp.Select] = []
    for g, ((members, group_nodes, frm, meet), ref) in enumerate(zip(groups, _refs(groups))):
        src = meet or frm
        for j, node in zip(members, group_nodes):
            diff = set(moved(ref, node))
            keys = []
            for w, word in enumerate(words):
                # BIGINT gains (a list that fits INT32 types as INT32): the sum never depends on
                # its order of evaluation to stay in BIGINT
                gains = [as_bigint(lookup(delta_values(stats, i, src.levels[i], ref[i], int(node[i])), col(stats.qcol(i)), stats.dialect, params)) for i, _ in word if i in diff]
                keys.append(exp.alias_(add_all([col(f"b{w}"), *gains]), kcols[w], quoted=True, copy=False))
            cls = exp.select(exp.alias_(lit(int(j)), NODE_ID, quoted=True, copy=False), *keys, exp.alias_(batch.count_sum(stats), "cnt", quoted=True, copy=False), copy=False).from_(table_ref(sources[g]), copy=False)
            branches.append(cls.group_by(*[col(k) for k in kcols], copy=False))
    ctes.append(("cls", union_all(branches)))
    ctes.append(("flagged", exp.select(exp.Star(), exp.alias_(ok.copy(), "ok", quoted=True), copy=False).from_(table_ref("cls"), copy=False)))
    summary = exp.select(*class_summary(plain), col(NODE_ID), copy=False).from_(table_ref("flagged"), copy=False).group_by(col(NODE_ID), copy=False)
    if not released:
        return cte_select(ctes, summary)
    ctes.append(("sm", summary))
    nodes, ids = batch.all_nodes(groups)
    values = batch.node_table(nodes, ids, len(stats.qis), params)
    vt = batch.values_table(stats, metric, params)
    cv = exp.select(col(NODE_ID, "c"), col("cnt", "c"), col("ok", "c"), *batch.class_terms(stats, terms, kcols, params, vt), copy=False)
    cv = cv.from_(table_ref("flagged", alias="c"), copy=False).join(values, on=exp.EQ(this=col(NODE_ID, "c"), expression=col(NODE_ID, "n")), copy=False)
    ctes.append(("cv", batch.values_join(cv, vt).where(col("ok", "c"), copy=False)))
    pv = exp.select(col(NODE_ID), *[exp.alias_(e.copy(), name, quoted=True, copy=False) for name, e in released], copy=False).from_(table_ref("cv"), copy=False).group_by(col(NODE_ID), copy=False)
    ctes.append(("pv", pv))
    names = {name for name, _ in released}
    head = [col(name, "sm") for name in ("classes", "rows", "min_class", "max_class", "suppressed", "bad_classes")]
    tail = [exp.alias_(exp.Coalesce(this=col(name, "pv"), expressions=[lit(0.0)]), name, quoted=True, copy=False) if name in names else col(name, "sm") for name, _ in finals]
    final = exp.select(*head, *tail, col(NODE_ID, "sm"), copy=False).from_(table_ref("sm"), copy=False)
    final = final.join(table_ref("pv"), on=exp.EQ(this=col(NODE_ID, "sm"), expression=col(NODE_ID, "pv")), join_type="left", copy=False)
    return cte_select(ctes, final)


def params_of(stats, groups, metric) -> Params:
    """The bound lists of a DuckDB statement of :func:`build`, in the order it numbers them."""
    params = Params()
    split = split_finals(metric, stats)
    assert split is not None
    terms, _, released, _ = split
    for (_, group_nodes, frm, meet), ref in zip(groups, _refs(groups)):
        src = meet or frm
        for node in group_nodes:
            diff = set(moved(ref, node))
            for word in batch.words(stats):
                params.extend(delta_values(stats, i, src.levels[i], ref[i], int(node[i])) for i, _ in word if i in diff)
    if released:
        nodes, ids = batch.all_nodes(groups)
        params.extend(batch.node_lists(nodes, ids, len(stats.qis)))
        if batch.values_table(stats, metric, params) is None:
            params.extend(batch.class_values(stats, i, per_level) for _, per_qi in terms for i, per_level in per_qi)
    return params


def shape(groups) -> tuple:
    """What the statement's text depends on (its bound lists and table names aside)."""
    return tuple((len(group_nodes), tuple(moved(ref, node) for node in group_nodes)) for (_, group_nodes, _, _), ref in zip(groups, _refs(groups)))


def canonical(groups) -> tuple[list, list[int]]:
    """The groups with their nodes in a canonical order (by the QIs they move) and numbered by
    position, so that batches of the same shape share one statement text; and per position the
    node's number in the batch."""
    out: list = []
    order: list[int] = []
    for members, group_nodes, frm, meet in groups:
        ref = reference((meet or frm).levels, group_nodes)
        pairs = sorted(zip(members, group_nodes), key=lambda p: (moved(ref, p[1]), p[0]))
        start = len(order)
        order.extend(j for j, _ in pairs)
        out.append((list(range(start, len(order))), [n for _, n in pairs], frm, meet))
    return out, order


def _tables(stats, n: int) -> list[str]:
    """``n`` names for the groups' keyed sets, the same every statement (so is its text)."""
    names = stats.memory.deltas.tables
    while len(names) < n:
        names.append(stats.engine.temp_name("keyed"))
    return names[:n]


def _render(stats, key, make) -> tuple[str, Params | None]:
    """A statement's text, cached per ``key`` on DuckDB (its lists bound), and its params."""
    if not stats.dialect.binds_lists:
        return stats.dialect.render(make(None), copy=False), None
    cache = stats.memory.deltas.sql
    sql = cache.get(key)
    if sql is None:
        if len(cache) > 2048:
            cache.clear()
        sql = cache[key] = stats.dialect.render(make(Params()), copy=False)
    return sql, None


def run(stats, groups, ok: exp.Expr, metric=None) -> list[tuple] | None:
    """The rows of one statement of ``groups`` in the branch shape, or None when it does not
    apply (:func:`applies`): each group's keyed set is saved first (:func:`keyed_select`), the
    branches read it, then it is dropped. On DuckDB every text is cached per shape."""
    if not applies(stats, groups, metric):
        return None
    groups, order = canonical(groups)
    names = _tables(stats, len(groups))
    engine, dialect = stats.engine, stats.dialect
    try:
        refs = _refs(groups)
        for (_, _, frm, meet), ref, used, name in zip(groups, refs, _used(groups, refs), names):
            src = meet or frm
            create = lambda params, frm=frm, meet=meet, ref=ref, used=used, name=name: dialect.create_temp(name, keyed_select(stats, meet or frm, frm, meet, ref, used, params))  # noqa: E731
            lifted = tuple(r != lo for r, lo in zip(ref, src.levels))
            sql, _ = _render(stats, ("keyed", name, frm.table, meet is not None, lifted, tuple(used)), create)
            engine.execute(sql, keyed_params(stats, frm, meet, ref) if dialect.binds_lists else None)
        statement = lambda params: build(stats, groups, ok, metric, params, names)  # noqa: E731
        sql, _ = _render(stats, ("branches", shape(groups), ok.sql(), batch.metric_key(metric)), statement)
        rows = engine.fetch_all(sql, params_of(stats, groups, metric) if dialect.binds_lists else None)
        return [(*row[:-1], order[int(row[-1])]) for row in rows]
    finally:
        for name in names:
            engine.execute(dialect.drop_temp(name))


def evaluate_batch(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list:
    """:func:`sqlanon.stats.batch.evaluate_batch`, each statement in the branch shape where it
    applies (not with ``extra_finals``)."""
    return batch.evaluate_batch(stats, nodes, ok, metric, extra_finals, runner=run)
