"""Per-class statistics for the ARX privacy models beyond k, distinct/entropy l and t (issue 14).

Each is a few CTEs over a node's frequency set (``gen``/``gs``: one row per class and sensitive
value), joined into the class table by :meth:`sqlanon.stats.Statistics.class_ctes`:

* **hierarchical t-closeness** (Li, Li, Venkatasubramanian 2007, Sec. 4.3): ``emd_hier`` =
  ``sum over inner nodes N of height(N)/H * min(pos_extra(N), neg_extra(N))`` where ``extra(C)`` is
  the sum of ``p_i - q_i`` over the leaves under child C, from a small table ``(s, lvl, child,
  parent, w)`` of the sensitive hierarchy (``w = (lvl + 1) / H``);
* **k-map / delta-presence** (Sweeney 2002; Nergiz, Atzori, Clifton 2007): ``pop_cnt``, the rows of
  the population table in the class; the population is coded by the same hierarchies into its own
  base frequency set once, and rolled up per node like the source's.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
from sqlglot import exp

from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.privacy import aggregates
from sqlanon.expr.atoms import col, table_ref
from sqlanon.stats.frequency import FrequencySet
from sqlanon.expr.atoms import and_all, as_double, if_, lit, sum_
from sqlanon.dialect import lookup


def _g(stats) -> list[str]:
    return stats.qnames


def sensitive_parts(stats, ctes: list[tuple[str, exp.Expr]], src: str, keys: Sequence[str], prefix: str = "") -> list[tuple[str, list[str]]]:
    """The per-class sensitive aggregates of ``src`` (one row per class key ``keys`` and sensitive
    value ``s`` with its ``cnt``), appended to ``ctes``: ``cls_s`` over the class's per-value rows
    (:mod:`sqlanon.privacy.aggregates`; with ``tot`` and ``q`` joined in when a need asks for
    shares, ``rn`` when one asks for ranks), and the needs with CTEs of their own (ordered and
    hierarchical t-closeness). Returns the parts, ``(CTE name, its columns beyond keys and cnt)``,
    for the caller to join on ``keys``. ``prefix`` names a statement's second, third .. set of
    these CTEs (the batch statement's branches, one per node). Used by the one-node statement
    (:meth:`sqlanon.stats.Statistics.class_ctes`) and the batch statement
    (:mod:`sqlanon.stats.batch`), so both compute every model's columns by the same SQL."""
    g = list(keys)
    needs = stats.needs
    values = src
    if aggregates.needs_shares(needs):
        # each value's class total and its share q of the table, beside its count
        win = exp.Window(this=sum_(col("cnt")), partition_by=list(map(col, g)))
        assert stats.domain_table is not None  # prepared with the sensitive domain
        ctes.append((
            prefix + "gsq",
            exp.select(*map(col, g), col("s", "x"), col("cnt"), exp.alias_(win, "tot", quoted=True), col("q", "d"))
            .from_(table_ref(values, alias="x"))
            .join(table_ref(stats.domain_table, alias="d"), on=exp.EQ(this=col("s", "x"), expression=col("s", "d"))),
        ))
        values = prefix + "gsq"
    if aggregates.needs_rank(needs):
        # each value's rank in its class by count, largest first
        order = exp.Order(expressions=[exp.Ordered(this=col("cnt"), desc=True), exp.Ordered(this=col("s"))])
        rn = exp.Window(this=exp.RowNumber(), partition_by=list(map(col, g)), order=order)
        ctes.append((prefix + "gsr", exp.select(exp.Star(), exp.alias_(rn, "rn", quoted=True)).from_(table_ref(values))))
        values = prefix + "gsr"
    aggs = [exp.alias_(sum_(col("cnt")), "cnt", quoted=True), *aggregates.value_aggregates(needs)]
    ctes.append((prefix + "cls_s", exp.select(*map(col, g), *aggs).from_(table_ref(values)).group_by(*map(col, g)) if g else exp.select(*aggs).from_(table_ref(values))))
    parts = [(prefix + "cls_s", aggregates.value_columns(needs))]
    if needs.emd_ordered:
        ctes.extend(ordered_emd_ctes(stats, src, g, prefix))
        parts.append((prefix + "emd", ["emd_ordered"]))
    if needs.emd_hierarchical:
        ctes.extend(hierarchical_emd_ctes(stats, src, g, prefix))
        parts.append((prefix + "hemd", ["emd_hier"]))
    return parts


def _class_domain_grid(stats, src: str, g: list[str], keys_name: str, domain_column: str) -> tuple[exp.Expr, exp.Expr]:
    """The two first CTEs of an EMD over ``src`` (one row per class key ``g`` and sensitive value
    ``s`` with ``cnt``): the class totals (to be named ``keys_name``) and the grid of classes x
    sensitive domain with ``diff`` = the class's share of the value less its share ``q`` in the
    whole table (0 counts where the class lacks the value), keyed by the domain's ``domain_column``."""
    assert stats.domain_table is not None  # prepared with the sensitive domain
    tot = exp.select(*map(col, g), exp.alias_(sum_(col("cnt")), "tot", quoted=True)).from_(table_ref(src))
    tot = tot.group_by(*map(col, g)) if g else tot
    cond = and_all([exp.EQ(this=col(n, "x"), expression=col(n, "k")) for n in g] + [exp.EQ(this=col("s", "x"), expression=col("s", "d"))])
    p = exp.Div(this=as_double(exp.Coalesce(this=col("cnt", "x"), expressions=[lit(0)])), expression=as_double(col("tot", "k")))
    grid = (
        exp.select(*[col(n, "k") for n in g], col(domain_column, "d"), exp.alias_(exp.Sub(this=p, expression=col("q", "d")), "diff", quoted=True))
        .from_(table_ref(keys_name, alias="k"))
        .join(table_ref(stats.domain_table, alias="d"), join_type="cross")
        .join(table_ref(src, alias="x"), on=cond, join_type="left")
    )
    return tot, grid


def ordered_emd_ctes(stats, src: str, keys: Sequence[str], prefix: str = "") -> list[tuple[str, exp.Expr]]:
    """``emd``: ``emd_ordered = sum_{i < m} |sum_{j <= i} (p_j - q_j)| / (m - 1)`` per class of
    ``src`` over the sensitive values in rank order (absent values have p = 0): class totals,
    the grid of classes x domain left-joined to the class's counts, a running sum, its mean
    absolute value."""
    g = list(keys)
    m = len(stats.sensitive_domain)
    tot, grid = _class_domain_grid(stats, src, g, prefix + "keys", "rnk")
    win = exp.Window(
        this=sum_(col("diff")),
        partition_by=list(map(col, g)),
        order=exp.Order(expressions=[exp.Ordered(this=col("rnk"))]),
        spec=exp.WindowSpec(kind="ROWS", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"),
    )
    cum = exp.select(*map(col, g), col("rnk"), exp.alias_(win, "c", quoted=True)).from_(table_ref(prefix + "grid"))
    denom = lit(float(max(m - 1, 1)))
    # the last rank's cumulative difference is 0; a CASE (not WHERE) keeps a row per class when m = 1
    last = if_(exp.LT(this=col("rnk"), expression=lit(m)), exp.Abs(this=col("c")), lit(0.0))
    emd = exp.select(*map(col, g), exp.alias_(exp.Div(this=sum_(last), expression=denom), "emd_ordered", quoted=True))
    emd = emd.from_(table_ref(prefix + "cum"))
    emd = emd.group_by(*map(col, g)) if g else emd
    return [(prefix + "keys", tot), (prefix + "grid", grid), (prefix + "cum", cum), (prefix + "emd", emd)]


def hierarchical_emd_ctes(stats, src: str, keys: Sequence[str] | None = None, prefix: str = "") -> list[tuple[str, exp.Expr]]:
    """``hemd``: ``emd_hier`` per class of ``src`` (one row per class key and sensitive value
    ``s`` with ``cnt``); the class key is the QI columns, or ``keys`` (the genetic search's
    candidate class keys, the batch statement's node id and packed key); ``prefix`` as for
    :func:`sensitive_parts`."""
    g = _g(stats) if keys is None else list(keys)
    hkeys, grid = _class_domain_grid(stats, src, g, prefix + "hkeys", "s")
    by = [col(n, "gr") for n in g] + [col("lvl", "h"), col("parent", "h"), col("child", "h"), col("w", "h")]
    ext = (
        exp.select(*by, exp.alias_(sum_(col("diff", "gr")), "extra", quoted=True))
        .from_(table_ref(prefix + "hgrid", alias="gr"))
        .join(table_ref(stats.s_hier_table, alias="h"), on=exp.EQ(this=col("s", "gr"), expression=col("s", "h")))
        .group_by(*by)
    )
    pos = sum_(if_(exp.GT(this=col("extra"), expression=lit(0)), col("extra"), lit(0.0)))
    neg = sum_(if_(exp.LT(this=col("extra"), expression=lit(0)), exp.Neg(this=col("extra")), lit(0.0)))
    least = if_(exp.LT(this=pos, expression=neg), pos.copy(), neg.copy())
    cost_by = [col(n) for n in g] + [col("lvl"), col("parent"), col("w")]
    cost = exp.select(*cost_by, exp.alias_(exp.Mul(this=col("w"), expression=exp.Paren(this=least)), "c", quoted=True)).from_(table_ref(prefix + "hext")).group_by(*cost_by)
    emd = exp.select(*map(col, g), exp.alias_(sum_(col("c")), "emd_hier", quoted=True)).from_(table_ref(prefix + "hcost"))
    emd = emd.group_by(*map(col, g)) if g else emd
    return [(prefix + "hkeys", hkeys), (prefix + "hgrid", grid), (prefix + "hext", ext), (prefix + "hcost", cost), (prefix + "hemd", emd)]


def prepare_sensitive_hierarchy(stats) -> None:
    """Register ``(s, lvl, child, parent, w)`` for every sensitive value of the table."""
    h = stats.sensitive_hierarchy
    if h is None:
        raise ConfigError("hierarchical t-closeness needs a hierarchy for the sensitive column (t_hierarchy / --t-hierarchy)")
    if h.max_level < 1:
        raise HierarchyError(f"the hierarchy of sensitive column {stats.sensitive!r} ({h.origin}) has no level above its leaves")
    index = {leaf: i for i, leaf in enumerate(h.leaves)}
    missing = [v for v, _ in stats.sensitive_domain if v not in index]
    if missing:
        raise HierarchyError(
            f"sensitive column {stats.sensitive!r}: {len(missing)} value(s) are missing from its hierarchy ({h.origin}), e.g. "
            + ", ".join(repr(v) for v in missing[:5])
        )
    H = h.max_level
    levels = [h.leaf_to_level(lv) for lv in range(H + 1)]
    s, lvl, child, parent, w = [], [], [], [], []
    for v, _ in stats.sensitive_domain:
        i = index[v]
        for lv in range(H):
            s.append(v)
            lvl.append(lv)
            child.append(int(levels[lv][i]))
            parent.append(int(levels[lv + 1][i]))
            w.append((lv + 1) / H)
    name = stats.engine.temp_name("shier")
    stats.engine.register_arrow(
        name,
        pa.table({"s": pa.array(s, pa.string()), "lvl": pa.array(lvl, pa.int32()), "child": pa.array(child, pa.int32()), "parent": pa.array(parent, pa.int32()), "w": pa.array(w, pa.float64())}),
    )
    stats.s_hier_table = name


def prepare_population(stats) -> None:
    """Scan the population table once into its own base frequency set (QI codes only) and check
    that the input is a subset of it (every input QI tuple occurs at least as often there)."""
    pop = stats.population
    if pop is None:
        raise ConfigError("k-map and delta-presence with a population need population: TABLE (--population)")
    have = pop.column_names(stats.engine)
    for name in stats.qis:
        if name not in have:
            raise ConfigError(f"population {pop.describe()} has no quasi-identifier column {name!r}; columns are: {', '.join(have)}")
    g = stats.qnames
    inner = stats.encoded_select(pop)
    q = exp.select(*map(col, g), exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True))
    q = q.from_(exp.alias_(exp.Subquery(this=inner), "enc", table=True, quoted=True)).group_by(*map(col, g))
    name = stats.engine.temp_name("pfs0")
    stats.engine.execute(stats.dialect.create_temp(name, q))
    n_sets = _count_population(stats, name)
    stats.pop_base = FrequencySet(name, tuple(0 for _ in g), n_sets)
    _check_subset(stats, name)


def _count_population(stats, name: str) -> int:
    """The population set's rows (``stats.pop_rows``), its NULLs the input lacks (their leaf is
    added) and its values missing from a hierarchy (an error); returns the set's size."""
    g = stats.qnames
    pop = stats.population
    # a NULL the input lacks is coded as the NULL leaf to come (Statistics.null_code): counted below
    pending = {i: stats.null_code(i) for i, h in enumerate(stats.hierarchies) if stats.null_modes[i] == "value" and not h.has_null}
    parts = [exp.Count(this=exp.Star()), sum_(col("cnt"))]
    for n in g:
        parts.append(sum_(if_(exp.LT(this=col(n), expression=lit(0)), col("cnt"), lit(0))))
    parts += [sum_(if_(exp.EQ(this=col(g[i]), expression=lit(code)), col("cnt"), lit(0))) for i, code in pending.items()]
    row = stats.engine.fetch_one(exp.select(*parts).from_(table_ref(name)))
    n_sets, stats.pop_rows = int(row[0] or 0), int(row[1] or 0)
    for i, n in zip(pending, row[2 + len(g):]):
        if int(n or 0):  # NULL is a value of the population: its leaf, which no input row has
            stats.add_null_leaf(i)
    for i, qi in enumerate(stats.qis):
        if int(row[2 + i] or 0):
            raise HierarchyError(
                f"population {pop.describe()}: column {qi!r} has {int(row[2 + i])} row(s) missing from its hierarchy ({stats.hierarchies[i].origin}) or NULL (with nulls: {stats.null_modes[i]})"
            )
    return n_sets


def _check_subset(stats, name: str) -> None:
    """The input must lie inside the population (set ``name``): no input QI tuple more often than there."""
    g = stats.qnames
    src = exp.select(*map(col, g), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref(stats.base.table)).group_by(*map(col, g))
    cond = and_all([exp.EQ(this=col(n, "i"), expression=col(n, "p")) for n in g])
    pc = exp.Coalesce(this=col("cnt", "p"), expressions=[lit(0)])
    excess = sum_(if_(exp.GT(this=col("cnt", "i"), expression=pc), exp.Sub(this=col("cnt", "i"), expression=pc.copy()), lit(0)))
    check = (
        exp.select(excess)
        .from_(exp.alias_(exp.Subquery(this=src), "i", table=True, quoted=True))
        .join(table_ref(name, alias="p"), on=cond, join_type="left")
    )
    extra = int(stats.engine.scalar(check) or 0)
    if extra:
        raise ConfigError(
            f"the input is not a subset of population {stats.population.describe()}: {extra} input row(s) have quasi-identifier values that occur less often in the population"
        )


def population_select(stats, node, params=None) -> exp.Select:
    g = _g(stats)
    maps = stats.maps(node, stats.pop_base)
    gens = [exp.alias_(lookup(m, col(n), stats.dialect, params), n, quoted=True) for n, m in zip(g, maps)]
    inner = exp.select(*gens, col("cnt")).from_(table_ref(stats.pop_base.table))
    q = exp.select(*map(col, g), exp.alias_(sum_(col("cnt")), "cnt", quoted=True))
    return q.from_(exp.alias_(exp.Subquery(this=inner), "r", table=True, quoted=True)).group_by(*map(col, g))


def population_ctes(stats, node, cls: str, params=None) -> tuple[list[tuple[str, exp.Expr]], str]:
    g = _g(stats)
    cond = and_all([exp.EQ(this=col(n, "c"), expression=col(n, "p")) for n in g])
    clsp = (
        exp.select(exp.Column(this=exp.Star(), table=exp.to_identifier("c")), exp.alias_(exp.Coalesce(this=col("cnt", "p"), expressions=[lit(0)]), "pop_cnt", quoted=True))
        .from_(table_ref(cls, alias="c"))
        .join(table_ref("pgen", alias="p"), on=cond, join_type="left")
    )
    return [("pgen", population_select(stats, node, params)), ("clsp", clsp)], "clsp"
