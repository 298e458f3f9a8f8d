"""Batch evaluation: many lattice nodes in one statement.

A **node table** (``nid`` + one level per QI, a ``VALUES`` list) is joined to a saved frequency set;
each QI's code is generalized by one flat lookup indexed by ``(level - from_level) * width + code``
(the maps of every level, side by side), and the rows are grouped by ``nid`` and the generalized
codes. One row per node comes back: class count, rows, smallest and largest class, suppressed rows,
failing classes and the metric's parts, exactly the columns of the one-node statement
(:meth:`Statistics.node_query`), so the answers are the same :class:`NodeStats`.

Nodes are grouped by the level of the QI with the most distinct values: each group is first
rolled up to the *meet* of its nodes (their per-QI lowest levels) inside the statement, so the
join multiplies a smaller set. The batch size is chosen from the frequency set's size
(:func:`batch_size`): the join holds ``set rows x nodes`` rows before grouping.

>>> batch_size(19_502), batch_size(1_600_000), batch_size(40_000_000)
(64, 5, 1)
"""

from __future__ import annotations

from typing import Sequence

from sqlglot import exp

from sqlanon.source import col, ident, table_ref

#: rows of ``set x nodes`` one statement may hold before grouping (its hash table can hold as
#: many groups, ~70 bytes each): 4M keeps a statement near 0.3 GB, inside a 1 GB memory limit
JOIN_ROWS = 4_000_000
MAX_NODES = 64
NODE_ID = "nid"


def batch_size(set_rows: int, join_rows: int = JOIN_ROWS, max_nodes: int = MAX_NODES) -> int:
    """Nodes per statement for a frequency set of ``set_rows`` rows."""
    return max(1, min(max_nodes, join_rows // max(set_rows, 1)))


def supported(stats, metric) -> bool:
    """Whether the batch statement can answer this search (class aggregates over sensitive,
    class or population values are left to the per-node statements)."""
    needs = stats.needs
    if not stats.qis or any(getattr(needs, name) for name in needs.__dataclass_fields__):
        return False  # sensitive, class or population aggregates: the one-node statements have them
    return metric is None or metric.batch_parts(stats, stats.base, None) is not None


def level_col(i: int) -> str:
    return f"l{i}"


def width(stats, i: int) -> int:
    """Row length of QI ``i``'s flat lookups: its number of leaves (the widest level)."""
    return len(stats.hierarchies[i].rows)


def index_expr(stats, i: int) -> exp.Expression:
    """``l_i * width + q_i``: the flat lookup's index for QI ``i`` (independent of the set's
    levels, so one statement text serves every batch of the same shape)."""
    level = col(level_col(i), "n")
    return exp.Add(this=exp.Mul(this=level, expression=_lit(width(stats, i))), expression=col(stats.qcol(i), "r"))


def flat_lookup(stats, i: int, low: int, per_level, pad=0) -> list:
    """``per_level(level) -> list over the codes at level low`` for every level, side by side
    (levels below ``low`` are padding: no node of the group is there)."""
    w = width(stats, i)
    out: list = []
    for lv in range(stats.hierarchies[i].max_level + 1):
        row = list(per_level(lv)) if lv >= low else []
        out.extend(row + [pad] * (w - len(row)))
    return out


def gen_map(stats, i: int, low: int) -> list[int]:
    h = stats.hierarchies[i]
    return flat_lookup(stats, i, low, lambda lv: h.level_to_level(low, lv) if lv != low else range(len(h.labels(low))))


def _lit(v) -> exp.Expression:
    from sqlanon.stats.core import lit

    return lit(v)


def node_table(nodes: Sequence[Sequence[int]], ids: Sequence[int], n_qis: int, params=None) -> exp.Expression:
    """The node table ``n(nid, l0, .., ln)``: a ``VALUES`` list, or on DuckDB one bound list per
    column, unnested side by side (the statement text is then the same for every batch)."""
    columns = [ident(NODE_ID), *[ident(level_col(i)) for i in range(n_qis)]]
    if params is not None:
        lists = [list(map(int, ids))] + [[int(n[i]) for n in nodes] for i in range(n_qis)]
        sel = []
        for name, values in zip(columns, lists):
            params.append(values)
            sel.append(exp.alias_(exp.Anonymous(this="UNNEST", expressions=[exp.Placeholder(this=str(len(params)))]), name.copy()))
        return exp.alias_(exp.Subquery(this=exp.select(*sel)), "n", table=True)
    rows = [exp.Tuple(expressions=[_lit(int(j)), *[_lit(int(v)) for v in node]]) for j, node in zip(ids, nodes)]
    return exp.Values(expressions=rows, alias=exp.TableAlias(this=ident("n"), columns=columns))


def group_key(stats) -> int:
    """The QI whose level splits a batch into groups: the one with most distinct values."""
    cache = stats.__dict__.setdefault("_batch_group_key", [])
    if not cache:
        counts = [sum(1 for f in freqs if f) for freqs in stats.column_freqs] if stats.column_freqs else [len(h.rows) for h in stats.hierarchies]
        cache.append(max(range(len(counts)), key=lambda i: (counts[i], -i)) if counts else 0)
    return cache[0]


def layout(stats, nodes: Sequence[tuple[int, ...]]) -> list[tuple]:
    """The batch's groups: ``(member positions, member nodes, source set, meet or None)``."""
    from sqlanon.stats.core import FrequencySet

    n_qis = len(stats.qis)
    key = group_key(stats)
    groups: dict[int, list[int]] = {}
    for j, node in enumerate(nodes):
        groups.setdefault(int(node[key]), []).append(j)
    meets = []
    for members in groups.values():
        group_nodes = [nodes[j] for j in members]
        meet = tuple(min(n[i] for n in group_nodes) for i in range(n_qis))
        # an evaluated node's set much smaller than the smallest saved one the group generalizes
        # is saved now, on its second use (as for one-node statements: Statistics.pick_set)
        stats.pick_set(meet)
        meets.append((members, group_nodes, meet))
    out = []
    for g, (members, group_nodes, meet) in enumerate(meets):
        frm = stats._smallest_saved(meet)  # after every group's pick_set: only sets that still exist
        if len(group_nodes) > 1 and meet != frm.levels:
            # the group is rolled up to its meet first (inside the statement): a smaller join
            out.append((members, group_nodes, frm, FrequencySet(f"meet{g}", meet, 0)))
        else:
            out.append((members, group_nodes, frm, None))
    return out


def batch_params(stats, groups, metric) -> list:
    """The bound lists of a DuckDB batch statement, in the order :func:`build` numbers them."""
    from sqlanon.stats.core import Params

    params = Params()
    n_qis = len(stats.qis)
    for members, group_nodes, frm, meet in groups:
        if meet is not None:
            params.extend(stats.maps(meet.levels, frm))
        src = meet or frm
        params.append(list(map(int, members)))
        params.extend([[int(n[i]) for n in group_nodes] for i in range(n_qis)])
        params.extend(gen_map(stats, i, src.levels[i]) for i in range(n_qis))
        if metric is not None:
            metric.batch_parts(stats, src, params)
    return params


def build(stats, groups, ok: exp.Expression, metric=None, params=None) -> exp.Select:
    """The batch statement for ``groups`` (see :func:`layout`)."""
    from sqlanon.stats.core import cte_select, if_, lit, lookup, sum_

    dialect = stats.dialect
    n_qis = len(stats.qis)
    ctes: list[tuple[str, exp.Expression]] = []
    parts: list[exp.Select] = []
    row_names: list[str] = []
    for members, group_nodes, frm, meet in groups:
        if meet is not None:
            ctes.append((meet.table, stats.generalized_select(meet.levels, frm, params)))
        src = meet or frm
        values = node_table(group_nodes, members, n_qis, params)
        gens = [exp.alias_(lookup(gen_map(stats, i, src.levels[i]), index_expr(stats, i), dialect, params), stats.qcol(i), quoted=True) for i in range(n_qis)]
        rows = []
        if metric is not None:
            rows, _ = metric.batch_parts(stats, src, params)
            row_names = [name for name, _ in rows]
        part = exp.select(col(NODE_ID, "n"), *gens, *[exp.alias_(e, name, quoted=True) for name, e in rows], col("cnt", "r"), copy=False)
        part = part.from_(table_ref(src.table, alias="r"), copy=False).join(values, join_type="cross", copy=False)
        parts.append(part)
    gen = parts[0]
    for p in parts[1:]:
        gen = exp.union(gen, p, distinct=False, copy=False)
    ctes.append(("gen", gen))
    keys = [col(NODE_ID), *[col(stats.qcol(i)) for i in range(n_qis)]]
    cls = exp.select(*keys, exp.alias_(sum_(col("cnt")), "cnt", quoted=True), *[exp.alias_(sum_(col(n)), n, quoted=True) for n in row_names], copy=False)
    ctes.append(("cls", cls.from_(table_ref("gen"), copy=False).group_by(*keys, copy=False)))
    ctes.append(("flagged", exp.select(exp.Star(), exp.alias_(ok.copy(), "ok", quoted=True), copy=False).from_(table_ref("cls"), copy=False)))
    okc, cnt = col("ok"), col("cnt")
    finals = metric.batch_parts(stats, stats.base, None)[1] if metric is not None else []
    final = exp.select(
        exp.alias_(exp.Count(this=exp.Star()), "classes", quoted=True),
        exp.alias_(sum_(cnt), "rows", quoted=True),
        exp.alias_(exp.Min(this=cnt), "min_class", quoted=True),
        exp.alias_(exp.Max(this=cnt), "max_class", quoted=True),
        exp.alias_(sum_(if_(okc, lit(0), cnt)), "suppressed", quoted=True),
        exp.alias_(sum_(if_(okc, lit(0), lit(1))), "bad_classes", quoted=True),
        *[exp.alias_(e, name, quoted=True) for name, e in finals],
        col(NODE_ID),
        copy=False,
    ).from_(table_ref("flagged"), copy=False).group_by(col(NODE_ID), copy=False)
    return cte_select(ctes, final)


def batch_query(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expression, metric=None, params=None) -> exp.Select:
    """One statement evaluating ``nodes``: one row per node, ``nid`` = its position in ``nodes``.

    ``metric.batch_parts(stats, frm, params)`` gives the metric's per-row expressions (over the
    joined set ``r`` and node table ``n``, summed per class) and its final aggregates (over the
    flagged classes, per node)."""
    return build(stats, layout(stats, nodes), ok, metric, params)


def evaluate_batch(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expression, metric=None) -> list:
    """Evaluate ``nodes`` with one statement per :func:`batch_size` slice; NodeStats in order.

    On DuckDB every list (node table, lookups) is a bound parameter, so the statement text depends
    only on the batch's shape (its groups' source sets) and is built once per shape."""
    from sqlanon.stats.core import Params

    out: list = []
    step = batch_size(stats.base.rows)
    names = [name for name, _ in metric.batch_parts(stats, stats.base, None)[1]] if metric is not None else []
    cache = stats.__dict__.setdefault("_batch_sql", {})
    for start in range(0, len(nodes), step):
        chunk = [tuple(int(v) for v in n) for n in nodes[start : start + step]]
        groups = layout(stats, chunk)
        if stats.dialect.binds_lists:
            key = (tuple((frm.table, meet is not None) for _, _, frm, meet in groups), ok.sql(), metric.name if metric is not None else None, tuple(metric.weights) if metric is not None and metric.weights else None)
            sql = cache.get(key)
            if sql is None:
                sql = stats.dialect.render(build(stats, groups, ok, metric, Params()))
                cache[key] = sql
            params = batch_params(stats, groups, metric)
            rows = stats.engine.fetch_all(sql, params)
        else:
            rows = stats.engine.fetch_all(build(stats, groups, ok, metric))
        got: list = [None] * len(chunk)
        for row in rows:
            got[int(row[-1])] = stats._node_stats(chunk[int(row[-1])], row[:-1], names)
        out.extend(got)
        stats._maybe_materialize([(n, stats.base, ns.classes) for n, ns in zip(chunk, got)])
    stats.nodes_evaluated += len(nodes)
    return out
