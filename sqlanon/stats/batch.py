"""Batch evaluation: many lattice nodes in one statement.

The saved frequency set a group of nodes rolls up from (``r``: codes ``q0..`` at the set's levels)
is first widened, once per statement, into a **code table**: for every QI ``i`` and level ``l`` a
column ``g{i}_{l}`` holding the row's generalized code at ``l``, already multiplied by the QI's
place in a packed class key (mixed radix: QI ``i`` counts in units of the product of the widths
of the QIs before it in its key word). A **node table** (``nid`` + one level per QI, a ``VALUES``
list, or on DuckDB one bound list per column unnested side by side) is cross-joined to it, and each
node's class key is the sum, over its QIs, of the column its level picks
(``CASE n.l{i} WHEN 0 THEN g{i}_0 WHEN 1 THEN ..``): no lookup per joined row, and one BIGINT key
(rarely more) instead of one key column per QI. The rows are grouped by ``nid`` and key, then
one row per node comes back: class count, rows, smallest and largest class, suppressed rows,
failing classes and the metric's parts, exactly the columns of the one-node statement
(:meth:`Statistics.node_query`), so the answers are the same :class:`NodeStats`.

A metric's parts (LM's loss, Loss's domain shares; :meth:`sqlanon.metrics.base.Metric.batch_terms`)
are computed per *class*, after grouping: all rows of a class share its generalized codes, so a
part is ``cnt`` times the sum over its QIs of the value of the class's code at the node's level,
the code read back from the key (``key // multiplier % width``) and the level from the node table
joined by ``nid``. (Summing them per joined row made the class hash table hold one sum per part:
with Loss's one part per QI, a slower statement: docs/measurements.md.)

The nodes of a statement are first rolled up to their *meet* (their per-QI lowest levels) inside
the statement, so the join multiplies a smaller set (with ``SPLIT_GROUPS``, nodes are grouped by
the level of the QI with the most distinct values, each group with its own meet). The batch size is chosen from the frequency set's size
(:func:`batch_size`): the join holds ``set rows x nodes`` rows before grouping.

>>> batch_size(19_502), batch_size(1_600_000), batch_size(40_000_000)
(128, 2, 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from sqlglot import exp

from sqlanon.expr.atoms import Params, and_all, as_bigint, class_summary, col, cte_select, ident, if_, lit, sum_, table_ref, union_all
from sqlanon.expr.atoms import NODE_ID
from sqlanon.stats.frequency import FrequencySet
import sqlanon.stats.store as store
from sqlanon.dialect import lookup
from sqlanon.privacy import aggregates
from sqlanon.stats.models import sensitive_parts

#: rows of ``set x nodes`` one statement may hold before grouping (its hash table can hold as
#: many groups): 4M keeps a statement well inside a 1 GB memory limit (docs/measurements.md)
JOIN_ROWS = 4_000_000
MAX_NODES = 128
#: a packed key word holds QIs while the product of their widths stays below this
WORD = 1 << 62
#: at or below this many nodes per statement, a group's code table holds only its nodes' levels
NARROW_BATCH = 8
#: split a batch into groups by the level of its widest QI (each group rolled up to its own meet)
#: even for small sets? No: on Adult one group per statement cost less CPU (each group adds a
#: roll-up, a code table and a join to plan and run). Large sets (few nodes per statement) always
#: split: at 10M rows one meet of two unrelated nodes is a roll-up of the whole set
#: (docs/measurements.md)
SPLIT_GROUPS = False
#: on a large base set, a statement over a set of at least this many rows takes one branch per
#: node (:func:`branches`)
BRANCH_ROWS = 20_000
#: ... and at most this many nodes, or a set of at least BRANCH_ALWAYS_ROWS rows (there a
#: statement holds at most JOIN_ROWS / BRANCH_ALWAYS_ROWS = 8 nodes; docs/measurements.md)
BRANCH_NODES = 4
BRANCH_ALWAYS_ROWS = 500_000
#: one branch per node reads a group's meet (rolled up inside the statement) when the meet has at
#: most 1 / MEET_GAIN of the source set's rows (:func:`meet_bound`)
MEET_GAIN = 4
#: ... or when the group has at least this many nodes
MEET_NODES = 3


def batch_size(set_rows: int, join_rows: int = JOIN_ROWS, max_nodes: int = MAX_NODES) -> int:
    """Nodes per statement for a frequency set of ``set_rows`` rows."""
    return max(1, min(max_nodes, join_rows // max(set_rows, 1)))


def supported(stats, metric) -> bool:
    """Whether the batch statement can answer this search (sensitive aggregates are batched;
    class, population and ranked ones are left to the per-node statements)."""
    if not stats.qis or any(getattr(stats.needs, name) for name in ONE_NODE_NEEDS):
        return False  # class, population or ranked aggregates: the one-node statements have them
    if metric is None:
        return True
    # asked before every round: the metric's terms are built once per metric (docs/measurements.md)
    cache = stats.memory.batch.supported
    key = metric_key(metric)
    if key not in cache:
        cache[key] = metric.batch_terms(stats) is not None
    return cache[key]


#: needs the batch statement leaves to the one-node statements (every sensitive need is batched:
#: :func:`sensitive_classes`)
ONE_NODE_NEEDS = ("majority_y", "population", "ranked")


#: a sensitive domain of at most this many values is summed per class as a histogram (one column
#: per value, :func:`histogram`); a larger one per class and value (:func:`sensitive_classes`)
HISTOGRAM_VALUES = 16


def histogram(stats) -> tuple[list[tuple[str, exp.Expr]], list[exp.Expr]] | None:
    """The class histogram of a small sensitive domain: per set row, its rows under the column of
    its sensitive value (``h{j}``: the j-th value of the table's domain), summed per class like
    ``cnt``; and the models' columns computed from the sums
    (:func:`sqlanon.privacy.aggregates.histogram_aggregates`: distinct values, entropy, equal and
    ordered EMD). One grouping per class, as for k alone, where per-value rows need a second
    grouping, a window for the class totals and a join for the table's shares (several times
    slower: docs/measurements.md). None when the domain is larger than
    :data:`HISTOGRAM_VALUES` or a need has no histogram form."""
    if not stats.has_s or not 0 < len(stats.sensitive_domain) <= HISTOGRAM_VALUES:
        return None
    q = [n / stats.rows for _, n in stats.sensitive_domain]
    columns = aggregates.histogram_aggregates(stats.needs, q)
    if columns is None:
        return None
    sums = [(f"h{j}", if_(exp.EQ(this=col("s"), expression=lit(v)), col("cnt"), lit(0))) for j, (v, _) in enumerate(stats.sensitive_domain)]
    return sums, columns


def histogram_set(src: str, qnames: list[str], sums: list[tuple[str, exp.Expr]], keys: list[exp.Expr] | None = None, last: bool = True) -> exp.Select:
    """``src`` (a frequency set with ``s``) grouped by ``keys`` (default its codes ``qnames``) with
    the histogram ``sums`` and ``cnt``; the last value's sum is ``cnt`` less the others' (one sum
    fewer per group: on Adult's binary salary-class two sums, not three), or left out without
    ``last`` (a set the statement sums again: :func:`class_sums` derives it there)."""
    by = keys if keys is not None else [col(n) for n in qnames]
    sel = exp.select(*by, *[exp.alias_(sum_(e.copy()), name, quoted=True) for name, e in sums[:-1]], exp.alias_(sum_(col("cnt")), "cnt", quoted=True), copy=False)
    if last:
        sel = sel.select(_last_of(sums), copy=False)
    return sel.from_(table_ref(src), copy=False).group_by(*[col(b.alias) if isinstance(b, exp.Alias) else b.copy() for b in by], copy=False)


def _last_of(sums: list[tuple[str, exp.Expr]], summed: bool = False) -> exp.Expr:
    """The last histogram column: ``SUM(cnt)`` less the sums of the others (of their columns
    when ``summed``, else of their expressions)."""
    rest = [sum_(col(name) if summed else e.copy()) for name, e in sums[:-1]]
    total = sum_(col("cnt"))
    return exp.alias_(exp.Sub(this=total, expression=exp.Paren(this=_sum(rest))) if rest else total, sums[-1][0], quoted=True)


def class_sums(by: Sequence[exp.Expr], sums: list[tuple[str, exp.Expr]]) -> exp.Select:
    """The per-class sums of a joined histogram set (every value's column but the last, and
    ``cnt``; the last derived, :func:`_last_of`), selected with ``by``."""
    return exp.select(*by, *[exp.alias_(sum_(col(name)), name, quoted=True) for name, _ in sums[:-1]], exp.alias_(sum_(col("cnt")), "cnt", quoted=True), _last_of(sums, summed=True), copy=False)


def sensitive_classes(stats, ctes: list[tuple[str, exp.Expr]], src: str, keys: list[str], prefix: str = "") -> tuple[str, list[str]]:
    """A batch statement's class table with the sensitive aggregates the models need: ``src``
    (one row per joined set row: class ``keys``, ``s``, ``cnt``) grouped by class and sensitive
    value, then aggregated per class by the same SQL as the one-node statement
    (:func:`sqlanon.stats.models.sensitive_parts`: l-diversity's distinct values and entropy,
    t-closeness's EMD over the class's histogram, ..), the parts joined on the class key.
    Returns the class table's name and its columns beyond ``keys`` and ``cnt``."""
    by = [col(k) for k in keys]
    values = exp.select(*by, col("s"), exp.alias_(sum_(col("cnt")), "cnt", quoted=True), copy=False).from_(table_ref(src), copy=False)
    ctes.append((prefix + "gv", values.group_by(*[col(k) for k in keys], col("s"), copy=False)))
    parts = sensitive_parts(stats, ctes, prefix + "gv", keys, prefix)
    extra = [name for _, names in parts for name in names]
    if len(parts) == 1:
        return parts[0][0], extra
    first = parts[0][0]
    q = exp.select(*[col(k, first) for k in keys], col("cnt", first), copy=False).from_(table_ref(first), copy=False)
    for other, _ in parts[1:]:
        q = q.join(table_ref(other), on=and_all([exp.EQ(this=col(k, first), expression=col(k, other)) for k in keys]), copy=False)
    for part, names in parts:
        q = q.select(*[col(name, part) for name in names], copy=False)
    ctes.append((prefix + "cls", q))
    return prefix + "cls", extra


def level_col(i: int) -> str:
    return f"l{i}"


def code_col(i: int, level: int) -> str:
    return f"g{i}_{level}"


def width(stats, i: int) -> int:
    """QI ``i``'s radix in the packed key: its number of distinct codes at its lowest level."""
    h = stats.hierarchies[i]
    return max(1, max(len(h.labels(lv)) for lv in range(h.max_level + 1)))


def words(stats) -> list[list[tuple[int, int]]]:
    """The packed key's words: per word, ``(QI, multiplier)`` pairs (mixed radix, product < 2^62)."""
    memory = stats.memory.batch
    if memory.words is None:
        out: list[list[tuple[int, int]]] = [[]]
        mult = 1
        for i in range(len(stats.qis)):
            w = width(stats, i)
            if out[-1] and mult * w >= WORD:
                out.append([])
                mult = 1
            out[-1].append((i, mult))
            mult *= w
        memory.words = out
    return memory.words


def multipliers(stats) -> list[int]:
    out = [1] * len(stats.qis)
    for word in words(stats):
        for i, m in word:
            out[i] = m
    return out


def _level_map(stats, i: int, low: int, level: int) -> list[int]:
    h = stats.hierarchies[i]
    return h.level_to_level(low, level) if level != low else list(range(len(h.labels(low))))


def wide_lists(stats, src_levels: Sequence[int], used=None) -> list[tuple[str, int, list]]:
    """The code table's columns for a set at ``src_levels``, in order: ``(name, QI, values over
    the set's codes)``. Without ``used`` every level of every QI has its column (levels below the
    set's are zeros, never picked), so the statement's text does not depend on the levels (one
    text per batch shape); with ``used`` (per QI, the levels the group's nodes have) only those.
    (A metric's parts are not here: they are computed per class, :func:`class_terms`.)"""
    cache = stats.memory.batch.wide
    key = (tuple(src_levels), used)
    if key in cache:
        return cache[key]
    if len(cache) > 4096:
        cache.clear()
    mults = multipliers(stats)
    out: list[tuple[str, int, list]] = []
    for i, h in enumerate(stats.hierarchies):
        low = src_levels[i]
        n = len(h.labels(low))
        for lv in _levels(h, i, used):
            out.append((code_col(i, lv), i, [mults[i] * g for g in _level_map(stats, i, low, lv)] if lv >= low else [0] * n))
    cache[key] = out
    return out


def _levels(h, i: int, used) -> Sequence[int]:
    return range(h.max_level + 1) if used is None else used[i]


def used_levels(stats, group_nodes) -> tuple[tuple[int, ...], ...] | None:
    """Per QI, the levels a group's nodes have, when the statement is narrowed to them (large
    sets, few nodes per statement, or a dialect without bound lists: the text is then built per
    batch anyway); None for the level-independent text (cached per shape), and on a dialect
    whose engine compiles code per statement shape (:attr:`Dialect.compiles_shapes`) unless the
    set is large (there each statement's rows cost more than its compiled code)."""
    if batch_size(stats.base.rows) > NARROW_BATCH and (stats.dialect.binds_lists or stats.dialect.compiles_shapes):
        return None
    return tuple(tuple(sorted({int(n[i]) for n in group_nodes})) for i in range(len(stats.qis)))


def metric_key(metric) -> tuple | None:
    """What of the metric shapes the statement and its code table (its type, weights, parts)."""
    if metric is None:
        return None
    return (type(metric).__name__, metric.name, tuple(metric.weights) if metric.weights else None, tuple(sorted((k, repr(v)) for k, v in vars(metric).items())))


def _lit(v) -> exp.Expr:
    return lit(v)


def node_table(nodes: Sequence[Sequence[int]], ids: Sequence[int], n_qis: int, params=None) -> exp.Expr:
    """The node table ``n(nid, l0, .., ln)``: a ``VALUES`` list, or on DuckDB one bound list per
    column, unnested side by side (the statement text is then the same for every batch)."""
    columns = [ident(NODE_ID), *[ident(level_col(i)) for i in range(n_qis)]]
    if params is not None:
        sel = []
        for name, values in zip(columns, node_lists(nodes, ids, n_qis)):
            params.append(values)
            sel.append(exp.alias_(exp.Anonymous(this="UNNEST", expressions=[exp.Placeholder(this=str(len(params)))]), name.copy()))
        return exp.alias_(exp.Subquery(this=exp.select(*sel)), "n", table=True)
    rows = [exp.Tuple(expressions=[_lit(int(j)), *[_lit(int(v)) for v in node]]) for j, node in zip(ids, nodes)]
    return exp.Values(expressions=rows, alias=exp.TableAlias(this=ident("n"), columns=columns))


def node_lists(nodes, ids, n_qis: int) -> list[list[int]]:
    return [list(map(int, ids))] + [[int(n[i]) for n in nodes] for i in range(n_qis)]


def group_key(stats) -> int:
    """The QI whose level splits a batch into groups: the one with most distinct values."""
    memory = stats.memory.batch
    if memory.group_key is None:
        counts = [sum(1 for f in freqs if f) for freqs in stats.column_freqs] if stats.column_freqs else [len(h.rows) for h in stats.hierarchies]
        memory.group_key = max(range(len(counts)), key=lambda i: (counts[i], -i)) if counts else 0
    return memory.group_key


def groups_of(stats, nodes: Sequence[tuple[int, ...]]) -> list[tuple[list[int], list, tuple[int, ...]]]:
    """The batch's groups before their source sets are chosen: ``(member positions, member
    nodes, meet)``, one group, or one per level of the widest QI on large sets (``SPLIT_GROUPS``)."""
    n_qis = len(stats.qis)
    key = group_key(stats)
    split = SPLIT_GROUPS or batch_size(stats.base.rows) <= NARROW_BATCH
    groups: dict[int, list[int]] = {}
    for j, node in enumerate(nodes):
        groups.setdefault(int(node[key]) if split else 0, []).append(j)
    out = []
    for members in groups.values():
        group_nodes = [nodes[j] for j in members]
        out.append((members, group_nodes, tuple(min(int(n[i]) for n in group_nodes) for i in range(n_qis))))
    return out


def layout(stats, nodes: Sequence[tuple[int, ...]]) -> list[tuple]:
    """The batch's groups: ``(member positions, member nodes, source set, meet or None)``."""
    meets = groups_of(stats, nodes)
    for _, _, meet in meets:
        # an evaluated node's set much smaller than the smallest saved one the group generalizes
        # is saved now, on its second use (as for one-node statements: Statistics.pick_set)
        stats.pick_set(meet)
    # after every group's pick_set: only sets that still exist
    sources = [store.smallest_saved(stats, meet) for _, _, meet in meets]
    one_per_node = branches(stats, [(m, g, frm, None) for (m, g, _), frm in zip(meets, sources)])
    out: list[tuple] = []
    for g, ((members, group_nodes, meet), frm) in enumerate(zip(meets, sources)):
        if len(group_nodes) > 1 and meet != frm.levels and (not one_per_node or len(group_nodes) >= MEET_NODES or MEET_GAIN * meet_bound(stats, meet) <= frm.rows):
            # the group is rolled up to its meet first (inside the statement): a smaller join, or
            # smaller sets for the branches to group (for branches, when several nodes share it or
            # it is known to be much smaller: a meet near the set's size made them slower,
            # docs/measurements.md)
            out.append((members, group_nodes, frm, FrequencySet(f"meet{g}", meet, 0)))
        else:
            out.append((members, group_nodes, frm, None))
    return out


def save_meets(stats, nodes: Sequence[tuple[int, ...]], join_rows: int = JOIN_ROWS) -> None:
    """Save the meet of every group of ``nodes`` (see :func:`layout`) that more than one
    statement would roll up from a large set: each statement would otherwise roll the same meet
    up again inside it (at 10M rows, a batch from the 1.6M-row base set holds 2 nodes). The
    saved meet is then the smallest set its group generalizes, and stays for later rounds
    (:meth:`Statistics.pick_set`), while it fits the engine's memory (:meth:`Statistics.has_room`)."""
    if stats.keep_sets <= 0:
        return
    for _, group_nodes, meet in groups_of(stats, nodes):
        if len(group_nodes) < 2:
            continue
        frm = stats.pick_set(meet)
        used = store.smallest_saved(stats, meet, partial=False) if stats.partials else frm  # as without partial sets
        if frm.levels != meet and used.rows > stats.materialize_rows and len(group_nodes) > batch_size(used.rows, join_rows) and stats.has_room(used.rows):
            stats.save_set(meet, frm)


def batch_params(stats, groups, metric) -> list:
    """The bound lists of a DuckDB batch statement, in the order :func:`build` numbers them."""
    params = Params()
    n_qis = len(stats.qis)
    for members, group_nodes, frm, meet in groups:
        if meet is not None:
            params.extend(stats.maps(meet.levels, frm))
        src = meet or frm
        params.extend(values for _, _, values in wide_lists(stats, src.levels, used_levels(stats, group_nodes)))
        params.extend(node_lists(group_nodes, members, n_qis))
    terms = metric.batch_terms(stats)[0] if metric is not None else []
    if terms:
        nodes, ids = all_nodes(groups)
        params.extend(node_lists(nodes, ids, n_qis))
        if values_table(stats, metric, params) is None:
            params.extend(values for _, per_qi in terms for i, per_level in per_qi for values in [class_values(stats, i, per_level)])
    return params


def all_nodes(groups) -> tuple[list, list]:
    """Every node of the batch and its id (position), over the groups."""
    nodes, ids = [], []
    for members, group_nodes, _, _ in groups:
        nodes.extend(group_nodes)
        ids.extend(members)
    return nodes, ids


def class_values(stats, i: int, per_level) -> list[float]:
    """A metric part's values for QI ``i`` at every level, level ``lv``'s at ``lv * width + code``
    (padded to the key's radix ``width``): indexed by the node's level and the code read back
    from the class key."""
    w = width(stats, i)
    out: list[float] = []
    for lv in range(stats.hierarchies[i].max_level + 1):
        values = [float(v) for v in per_level(lv)]
        out.extend(values + [0.0] * (w - len(values)))
    return out


#: the alias of the table of a metric's value lists (:func:`register_values`) in a statement
VALUES_ALIAS = "vt"
#: save a metric's value lists in a table (off: bind them in every statement, as before)
VALUES_TABLE = True


def values_table(stats, metric, params) -> str | None:
    """The table holding ``metric``'s value lists (:func:`register_values`) when the statement
    binds its lists (``params``) and the table was saved; None otherwise."""
    if params is None or metric is None:
        return None
    return stats.memory.batch.values_tables.get(metric_key(metric))


def register_values(stats, metric) -> None:
    """Save ``metric``'s value lists (:func:`class_values`, one per part and QI) once, as one
    row of a table with a list column each, where the dialect binds lists: every statement then
    reads them from it (:func:`class_terms`) instead of having them bound again. 24 QIs of 20K
    leaves: 2.4M values bound per statement took seconds; on w24, 24 lists of 320."""
    if not VALUES_TABLE or not stats.dialect.binds_lists or metric is None:
        return
    cache = stats.memory.batch.values_tables
    key = metric_key(metric)
    if key in cache:
        return
    terms = metric.batch_terms(stats)
    if not terms or not terms[0]:
        return
    lists = [class_values(stats, i, per_level) for _, per_qi in terms[0] for i, per_level in per_qi]
    name = stats.engine.temp_name("vals")
    array = exp.DataType.build("DOUBLE[]", dialect="duckdb")
    select = exp.select(*[exp.alias_(exp.Cast(this=exp.Placeholder(this=str(j + 1)), to=array.copy()), f"v{j}", quoted=True) for j in range(len(lists))])
    stats.engine.execute(stats.dialect.create_temp(name, select), lists)
    cache[key] = name


def values_join(q: exp.Select, table: str | None) -> exp.Select:
    """``q`` cross-joined to the one-row table of value lists, when there is one."""
    return q if table is None else q.join(table_ref(table, alias=VALUES_ALIAS), join_type="cross", copy=False)


def class_terms(stats, terms, kcols: list[str], params=None, table: str | None = None) -> list[exp.Expr]:
    """A metric's parts per class, from the class key: all rows of a class share its generalized
    codes, so a part is ``cnt`` times the sum over its QIs of the value of the code at the node's
    level, the code read back from the key (``key // multiplier % width``), the level from the
    node table (``n``). With ``table`` (:func:`register_values`), the values are read from its
    list columns (the statement joins it as ``vt``: :func:`values_join`), not bound."""
    where = {i: (w, m) for w, word in enumerate(words(stats)) for i, m in word}
    out = []
    j = 0
    for name, per_qi in terms:
        picks = []
        for i, per_level in per_qi:
            w, m = where[i]
            wd = width(stats, i)
            key = col(kcols[w], "c")
            # integer division (PostgreSQL's DIV gives a numeric: cast back, or the index is no integer)
            code = exp.Mod(this=as_bigint(exp.IntDiv(this=key, expression=_lit(m))) if m != 1 else key, expression=_lit(wd))
            index = exp.Add(this=exp.Mul(this=col(level_col(i), "n"), expression=_lit(wd)), expression=code)
            if table is not None:
                picks.append(stats.dialect.element_at(col(f"v{j}", VALUES_ALIAS), index))
            else:
                picks.append(lookup(class_values(stats, i, per_level), index, stats.dialect, params))
            j += 1
        total = _sum(picks)
        out.append(exp.alias_(exp.Mul(this=col("cnt", "c"), expression=exp.Paren(this=total)), name, quoted=True, copy=False))
    return out


def _pick(stats, i: int, used=None) -> exp.Expr:
    """The code table's column of QI ``i``'s code at the node's level: a ``CASE`` on the level
    whose last level is its ``ELSE`` (a node's level is always one of them), so the key is never
    NULL (Spark: no null tracking per joined row and key; docs/measurements.md)."""
    levels = _levels(stats.hierarchies[i], i, used)
    if len(levels) == 1:
        return col(code_col(i, levels[0]), "r")
    ifs = [exp.If(this=_lit(lv), true=col(code_col(i, lv), "r")) for lv in levels[:-1]]
    return exp.Case(this=col(level_col(i), "n"), ifs=ifs, default=col(code_col(i, levels[-1]), "r"))


def count_sum(stats) -> exp.Expr:
    """``SUM(cnt)`` grouping a set's rows into classes, as the dialect sums counts bounded by
    the source's rows (PostgreSQL: as INTEGERs below 2^31 rows, :meth:`Dialect.count_sum`)."""
    return stats.dialect.count_sum(col("cnt"), stats.rows)


def _sum(terms: list[exp.Expr]) -> exp.Expr:
    total = terms[0]
    for t in terms[1:]:
        total = exp.Add(this=total, expression=t)
    return total


def key_cols(stats) -> list[str]:
    return [f"k{w}" for w in range(len(words(stats)))]


def large(stats) -> bool:
    """Whether the base set is so large that a statement holds few nodes (the code table is then
    narrowed to the nodes' levels, :func:`used_levels`, and a batch split into groups,
    :func:`groups_of`)."""
    return batch_size(stats.base.rows) <= NARROW_BATCH


def meet_bound(stats, levels) -> int:
    """At most this many classes at ``levels``: the product of the QIs' label counts there."""
    return math.prod(max(1, len(h.labels(lv))) for h, lv in zip(stats.hierarchies, levels))


def branches(stats, groups) -> bool:
    """Whether a statement of these groups (``(members, nodes, source set, ..)``) takes one branch
    per node (:func:`build_branches`): a dialect that takes them (not Spark), a large base set, and
    a source of :data:`BRANCH_ALWAYS_ROWS` rows or more, or of :data:`BRANCH_ROWS` rows or more
    with at most :data:`BRANCH_NODES` nodes: few nodes over a large set are faster as branches,
    many nodes faster joined (the code table is looked up once for all nodes, and every branch
    is a statement part to build and plan; docs/measurements.md). A dialect with a
    ``branch_rows`` (PostgreSQL) takes them over every source of that many rows or more,
    whatever the base set's size and the number of nodes."""
    if not stats.dialect.node_branches:
        return False
    rows = max(frm.rows for _, _, frm, _ in groups)
    if stats.dialect.branch_rows is not None:
        return rows >= stats.dialect.branch_rows
    if not large(stats):
        return False
    return rows >= BRANCH_ALWAYS_ROWS or (rows >= BRANCH_ROWS and sum(len(nodes) for _, nodes, _, _ in groups) <= BRANCH_NODES)


def key_term(stats, i: int, low: int, level: int, params=None) -> exp.Expr:
    """QI ``i``'s part of the packed class key for a node at ``level``, read from a set at
    ``low``: its code (looked up when the levels differ) as a BIGINT times its multiplier."""
    code: exp.Expr = col(stats.qcol(i))
    if level != low:
        code = lookup(_level_map(stats, i, low, level), code, stats.dialect, params)
    m = multipliers(stats)[i]
    return exp.Mul(this=as_bigint(code), expression=_lit(m)) if m != 1 else as_bigint(code)


def build_branches(stats, groups, ok: exp.Expr, metric=None, params=None, extra_finals=()) -> exp.Query:
    """The batch statement for ``groups`` on a large set: one branch per node, ``UNION ALL``. A
    branch groups its source set (the smallest saved set its group generalizes: a meet several
    statements share is saved first, :func:`save_meets`; or the group's meet, rolled up first
    inside the statement when it is much smaller, :data:`MEET_GAIN`) by the node's packed key, then
    aggregates the classes to the node's row, ``nid`` a constant. No node table is joined and the
    class key is one BIGINT per word without ``nid`` (faster than the joined shape on a large
    set: docs/measurements.md)."""
    n_qis = len(stats.qis)
    terms, finals = metric.batch_terms(stats) if metric is not None else ([], [])
    finals = [*finals, *extra_finals]
    kcols = key_cols(stats)
    hist = histogram(stats)
    ctes: list[tuple[str, exp.Expr]] = []
    parts: list[exp.Select] = []
    for members, group_nodes, frm, meet in groups:
        if meet is not None:
            ctes.append((meet.table, stats.generalized_select(meet.levels, frm, params)))
        src = meet or frm
        for j, node in zip(members, group_nodes):
            keys = [
                exp.alias_(_sum([key_term(stats, i, src.levels[i], int(node[i]), params) for i, _ in word]), kcols[w], quoted=True, copy=False)
                for w, word in enumerate(words(stats))
            ]
            extra: list[str] = []
            if hist is not None:
                # the class histogram, then the models' columns from it
                ctes.append((f"c{j}", histogram_set(src.table, stats.qnames, hist[0], keys)))
                ctes.append((f"a{j}", exp.select(*[col(k) for k in kcols], col("cnt"), *[e.copy() for e in hist[1]], copy=False).from_(table_ref(f"c{j}"), copy=False)))
                classes, extra = f"a{j}", [e.alias for e in hist[1]]
            elif stats.has_s:
                # one row per class and sensitive value, then the models' class aggregates
                cls = exp.select(*keys, col("s"), col("cnt"), copy=False).from_(table_ref(src.table), copy=False)
                ctes.append((f"r{j}", cls))
                classes, extra = sensitive_classes(stats, ctes, f"r{j}", kcols, f"n{j}_")
            else:
                cls = exp.select(*keys, exp.alias_(count_sum(stats), "cnt", quoted=True), copy=False).from_(table_ref(src.table), copy=False)
                ctes.append((f"c{j}", cls.group_by(*[col(k) for k in kcols], copy=False)))
                classes = f"c{j}"
            if terms:
                # the metric's parts per class, from the class key and the node's levels (a one-row node table)
                values = node_table([node], [j], n_qis, params)
                vt = values_table(stats, metric, params)
                cv = exp.select(*[col(n, "c") for n in [*kcols, "cnt", *extra]], *class_terms(stats, terms, kcols, params, vt), copy=False)
                ctes.append((f"v{j}", values_join(cv.from_(table_ref(classes, alias="c"), copy=False).join(values, join_type="cross", copy=False), vt)))
                classes = f"v{j}"
            ctes.append((f"f{j}", exp.select(exp.Star(), exp.alias_(ok.copy(), "ok", quoted=True), copy=False).from_(table_ref(classes), copy=False)))
            parts.append(exp.select(*class_summary(finals), exp.alias_(_lit(int(j)), NODE_ID, quoted=True), copy=False).from_(table_ref(f"f{j}"), copy=False))
    return cte_select(ctes, union_all(parts))


def _group_part(stats, ctes: list[tuple[str, exp.Expr]], g: int, group, hist, kcols: list[str], params) -> exp.Select:
    """:func:`build`'s part of group ``g`` (``(members, nodes, set, meet)``): its nodes joined to
    its set's rows with their packed keys (the CTEs it reads appended to ``ctes``)."""
    members, group_nodes, frm, meet = group
    dialect = stats.dialect
    if meet is not None:
        ctes.append((meet.table, stats.generalized_select(meet.levels, frm, params)))
    src = meet or frm
    used = used_levels(stats, group_nodes)
    table = src.table
    carried = [col("s")] if stats.has_s else []
    if hist is not None:
        # the set's rows per QI codes with their histogram (fewer rows to join: no s)
        table = f"p{g}"
        ctes.append((table, histogram_set(src.table, stats.qnames, hist[0], last=False)))
        carried = [col(name) for name, _ in hist[0][:-1]]
    # each column a BIGINT before the key sums them: a list of codes times multipliers that
    # fits INT32 binds (and a literal array types) as INT32, and two of them can sum past 2^31
    wide = [exp.alias_(as_bigint(lookup(values, col(stats.qcol(i)), dialect, params)), name, quoted=True, copy=False) for name, i, values in wide_lists(stats, src.levels, used)]
    ctes.append((f"w{g}", exp.select(*wide, *carried, col("cnt"), copy=False).from_(table_ref(table), copy=False)))
    values = node_table(group_nodes, members, len(stats.qis), params)
    keys = [exp.alias_(_sum([_pick(stats, i, used) for i, _ in word]), kcols[w], quoted=True, copy=False) for w, word in enumerate(words(stats))]
    part = exp.select(col(NODE_ID, "n"), *keys, *[col(c.name, "r") for c in carried], col("cnt", "r"), copy=False)
    return dialect.nodes_join(part.from_(table_ref(f"w{g}", alias="r"), copy=False), values, frm.rows * (len(wide) + 1) * 8)


def _batch_classes(stats, ctes: list[tuple[str, exp.Expr]], hist, kcols: list[str]) -> tuple[str, list[str]]:
    """:func:`build`'s class table over ``gen`` (its CTEs appended to ``ctes``): its name and the
    names of its extra columns (the histogram's or the sensitive aggregates')."""
    if hist is not None:
        by = [col(NODE_ID), *[col(k) for k in kcols]]
        cls = class_sums(by, hist[0])
        ctes.append(("cls", cls.from_(table_ref("gen"), copy=False).group_by(*[b.copy() for b in by], copy=False)))
        ctes.append(("clsh", exp.select(*[b.copy() for b in by], col("cnt"), *[e.copy() for e in hist[1]], copy=False).from_(table_ref("cls"), copy=False)))
        return "clsh", [e.alias for e in hist[1]]
    if stats.has_s:
        return sensitive_classes(stats, ctes, "gen", [NODE_ID, *kcols])
    keys = [col(NODE_ID), *[col(k) for k in kcols]]
    cls = exp.select(*keys, exp.alias_(count_sum(stats), "cnt", quoted=True), copy=False)
    ctes.append(("cls", cls.from_(table_ref("gen"), copy=False).group_by(*keys, copy=False)))
    return "cls", []


def build(stats, groups, ok: exp.Expr, metric=None, params=None, extra_finals=()) -> exp.Query:
    """The batch statement for ``groups`` (see :func:`layout`); on a large set one branch per
    node (:func:`build_branches`). ``extra_finals``: more ``(name, aggregate)`` per node over its
    flagged classes, after the metric's (the lattice's monotone part, say)."""
    if branches(stats, groups):
        return build_branches(stats, groups, ok, metric, params, extra_finals)
    n_qis = len(stats.qis)
    terms, finals = metric.batch_terms(stats) if metric is not None else ([], [])
    finals = [*finals, *extra_finals]
    hist = histogram(stats)
    row_names = [name for name, _ in terms]
    kcols = key_cols(stats)
    ctes: list[tuple[str, exp.Expr]] = []
    parts = [_group_part(stats, ctes, g, group, hist, kcols, params) for g, group in enumerate(groups)]
    ctes.append(("gen", union_all(parts)))
    classes, extra = _batch_classes(stats, ctes, hist, kcols)
    if row_names:
        # the metric's parts per class (not summed per row: a class's rows share its codes, and a
        # class hash table holding one sum per part and QI is what made wide statements slow)
        nodes, ids = all_nodes(groups)
        values = node_table(nodes, ids, n_qis, params)
        vt = values_table(stats, metric, params)
        cv = exp.select(*[col(n, "c") for n in [NODE_ID, *kcols, "cnt", *extra]], *class_terms(stats, terms, kcols, params, vt), copy=False)
        cv = cv.from_(table_ref(classes, alias="c"), copy=False).join(values, on=exp.EQ(this=col(NODE_ID, "c"), expression=col(NODE_ID, "n")), copy=False)
        ctes.append(("cv", values_join(cv, vt)))
        classes = "cv"
    ctes.append(("flagged", exp.select(exp.Star(), exp.alias_(ok.copy(), "ok", quoted=True), copy=False).from_(table_ref(classes), copy=False)))
    final = exp.select(*class_summary(finals), col(NODE_ID), copy=False).from_(table_ref("flagged"), copy=False).group_by(col(NODE_ID), copy=False)
    return cte_select(ctes, final)


def batch_query(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, params=None, extra_finals=()) -> exp.Query:
    """One statement evaluating ``nodes``: one row per node, ``nid`` = its position in ``nodes``.

    ``metric.batch_terms(stats)`` gives the metric's per-row parts (per QI, a value per code at
    each level, summed per class) and its final aggregates (over the flagged classes, per node)."""
    return build(stats, layout(stats, nodes), ok, metric, params, extra_finals)


def final_names(stats, metric) -> list[str]:
    """The names of the metric's final aggregates (built once per metric: a wide metric's terms
    are slow to build, docs/measurements.md)."""
    if metric is None:
        return []
    cache = stats.memory.batch.final_names
    key = metric_key(metric)
    if key not in cache:
        cache[key] = [name for name, _ in metric.batch_terms(stats)[1]]
    return cache[key]


def evaluate_batch(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=(), runner=None) -> list:
    """Evaluate ``nodes`` with one statement per :func:`batch_size` slice; NodeStats in order
    (``extra_finals``: see :func:`build`; their values land in :attr:`NodeStats.extra`).

    On DuckDB every list (node table, code table) is a bound parameter, so the statement text
    depends only on the batch's shape (its groups' source sets) and is built once per shape.
    ``runner(stats, groups, ok, metric)``, when given, answers a statement in another shape (the
    same rows) or returns None to leave it to this one (:func:`sqlanon.stats.deltas.run`)."""
    out: list = []
    join_rows = stats.engine.join_rows or JOIN_ROWS
    register_values(stats, metric)
    save_meets(stats, nodes, join_rows)
    step = batch_size(max(store.smallest_saved(stats, n).rows for n in nodes), join_rows)
    extra_finals = list(extra_finals)
    names = list(final_names(stats, metric))
    names += [name for name, _ in extra_finals]
    extra_key = tuple((name, e.sql()) for name, e in extra_finals)
    chunks = [[tuple(int(v) for v in n) for n in nodes[start : start + step]] for start in range(0, len(nodes), step)]
    width = side_by_side(stats, nodes, len(chunks))
    if width > 1:
        # statements over one row group run on one thread: the round in parts run side by side
        chunks = [part for chunk in chunks for part in split(chunk, width)]
    answered: dict[int, list] = {}
    pending: list[tuple[int, tuple]] = []  # (chunk, statement) to run side by side
    for i, chunk in enumerate(chunks):
        groups = layout(stats, chunk)
        rows = runner(stats, groups, ok, metric) if runner is not None and not extra_finals else None
        if rows is None:
            statement = batch_statement(stats, groups, ok, metric, extra_finals, extra_key)
            if width > 1:
                pending.append((i, statement))
                if len(pending) == width:
                    _run_side_by_side(stats, chunks, pending, answered, names)
                continue
            rows = stats.engine.fetch_all(*statement)
        answered[i] = _answers(stats, chunk, rows, names)
    _run_side_by_side(stats, chunks, pending, answered, names)
    for i in range(len(chunks)):
        out.extend(answered[i])
    stats.nodes_evaluated += len(nodes)
    return out


def _run_side_by_side(stats, chunks: list, pending: list, answered: dict, names: list[str]) -> None:
    """Run the ``pending`` statements side by side; their answers land in ``answered`` by chunk."""
    if pending:
        for (i, _), rows in zip(pending, stats.engine.fetch_all_many([statement for _, statement in pending])):
            answered[i] = _answers(stats, chunks[i], rows, names)
        pending.clear()


#: a round of the nodes over sets of at most this many rows (DuckDB scans a table one row group
#: per thread) is split into parts run side by side (:func:`side_by_side`) ...
SIDE_ROWS = 122_880
#: ... when the base set has at least this many rows (its own statements keep every thread busy;
#: a small base set's search, say Adult's, is left as it was)
SIDE_BASE_ROWS = 500_000


def side_by_side(stats, nodes, statements: int) -> int:
    """Into how many statements run side by side (:meth:`sqlanon.engine.base.Engine.fetch_all_many`)
    a round of ``nodes`` taking ``statements`` statements is split: the engine's
    :meth:`~sqlanon.engine.base.Engine.concurrency` when that is more than ``statements``, the base
    set has :data:`SIDE_BASE_ROWS` rows or more and every node's set at most :data:`SIDE_ROWS` (one
    row group: its statement keeps one thread busy), at most one per node; else 1 (as many
    statements as it takes, one at a time)."""
    if stats.base.rows < SIDE_BASE_ROWS:
        return 1
    width = min(stats.engine.concurrency(), len(nodes))
    if width <= statements or max(store.smallest_saved(stats, tuple(n)).rows for n in nodes) > SIDE_ROWS:
        return 1
    return width


def split(chunk: list, parts: int) -> list[list]:
    """``chunk`` in at most ``parts`` consecutive parts of (nearly) equal size.

    >>> split([1, 2, 3, 4, 5], 2), split([1], 2)
    ([[1, 2, 3], [4, 5]], [[1]])
    """
    size = -(-len(chunk) // max(1, parts))
    return [chunk[i : i + size] for i in range(0, len(chunk), size)]


def batch_statement(stats, groups, ok: exp.Expr, metric, extra_finals, extra_key) -> tuple:
    """The statement answering ``groups`` and its bound lists (None where the dialect binds none)."""
    if stats.dialect.binds_lists and branches(stats, groups):
        # the text depends on the nodes' levels (which codes are looked up): built per statement
        params = Params()
        return stats.dialect.render(build(stats, groups, ok, metric, params, extra_finals), copy=False), params
    if stats.dialect.binds_lists:
        cache = stats.memory.batch.sql
        key = (tuple((frm.table, meet is not None, used_levels(stats, nodes)) for _, nodes, frm, meet in groups), ok.sql(), metric_key(metric), extra_key)
        sql = cache.get(key)
        if sql is None:
            sql = stats.dialect.render(build(stats, groups, ok, metric, Params(), extra_finals), copy=False)
            cache[key] = sql
        return sql, batch_params(stats, groups, metric)
    return build(stats, groups, ok, metric, None, extra_finals), None


def _answers(stats, chunk: list, rows, names: list[str]) -> list:
    """The chunk's NodeStats from its statement's rows (one per node, ``nid`` last), remembered
    for saving (:func:`sqlanon.stats.store.remember`)."""
    got: list = [None] * len(chunk)
    for row in rows:
        got[int(row[-1])] = stats.node_stats(chunk[int(row[-1])], row[:-1], names)
    store.remember(stats, [(n, stats.base, ns.classes) for n, ns in zip(chunk, got)])
    return got
