"""The release query of a plan with several rounds (local recoding) and/or microaggregated columns.

Shape (the mapping-table join of :mod:`sqlanon.release.write`, generalized):

* one small ``leaf -> v0, v1, ..`` table per QI: the released value of each leaf under each round's
  node;
* per round, a LEFT JOIN to that round's (small) table of failing classes, matched on the labels
  of that round's node; a row is released by the first round whose class does not fail:
  ``CASE WHEN b0.q0 IS NULL THEN m.v0 WHEN b1.q0 IS NULL THEN m.v1 .. ELSE '*' END``;
* microaggregation: the released rows grouped by their released QI values (``GROUP BY``, no window
  function) give each class's mean/median, joined back on those values.
"""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from sqlanon.release.microaggregation import aggregate
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import and_all, cte_select, lit
from sqlanon.hierarchy.keys import leaf_key, leaf_keys, null_keyed

SUPPRESSED = "*"
SUP = "__sqlanon_suppressed"


def round_maps(engine, stats, nodes) -> list[str]:
    """Per QI a table ``leaf, v0, v1, ..`` (the leaf's label under each round's node)."""
    names = []
    for i, h in enumerate(stats.hierarchies):
        data = {"leaf": pa.array(leaf_keys(h), pa.string())}
        for r, node in enumerate(nodes):
            labels = h.labels(node[i])
            data[f"v{r}"] = pa.array([labels[c] for c in h.leaf_to_level(node[i])], pa.string())
        name = engine.temp_name(f"rmap{i}")
        engine.register_arrow(name, pa.table(data))
        names.append(name)
    return names


def _joined_rounds(stats, maps: list[str], bads: list[str | None]) -> tuple[exp.Select, list[exp.Expr]]:
    """The source joined to every QI's map and, per round, left-joined to its failing classes;
    and per round the condition "this row's class at round r does not fail"."""
    n = len(stats.qis)
    src = exp.alias_(stats.source_item.copy(), "src", table=True, quoted=True)
    q = exp.select().from_(src)
    for i, name in enumerate(stats.qis):
        q = q.join(table_ref(maps[i], alias=f"m{i}"), on=exp.EQ(this=col("leaf", f"m{i}"), expression=leaf_key(stats.hierarchies[i], col(name, "src"))), join_type="inner")
    released_in: list[exp.Expr] = []
    for r, bad in enumerate(bads):
        if bad is None:
            released_in.append(exp.Boolean(this=True))
            continue
        alias = f"b{r}"
        on = and_all([exp.EQ(this=col(stats.qcol(i), alias), expression=null_keyed(stats.hierarchies[i].leaves, col(f"v{r}", f"m{i}"))) for i in range(n)])
        q = q.join(table_ref(bad, alias=alias), on=on, join_type="left")
        released_in.append(exp.Is(this=col(stats.qcol(0), alias), expression=exp.Null()))
    return q, released_in


def _pick(released_in: list[exp.Expr], i: int) -> exp.Expr:
    """QI ``i``'s released value: its label at the first round that releases the row, else '*'."""
    case = exp.Case()
    for r, cond in enumerate(released_in):
        case = case.when(cond.copy(), col(f"v{r}", f"m{i}"))
    return case.else_(lit(SUPPRESSED))


def _microaggregated(final: exp.Select, ctes: list, keys: list[str], micro: dict, hidden: dict[str, str], nullable: list[bool]) -> exp.Select:
    """Each class's aggregate of every microaggregated column (over its released rows),
    computed in CTE ``agg`` (appended to ``ctes``) and left-joined to ``final`` on the class keys
    (a key that may be NULL, ``nullable``, on both sides as :func:`null_keyed`)."""
    agg = exp.select(*[col(k) for k in keys])
    for name, fn in micro.items():
        agg = agg.select(exp.alias_(aggregate(fn, col(hidden[name])), hidden[name], quoted=True))
    agg = agg.from_(table_ref("rel")).where(exp.EQ(this=col(SUP), expression=lit(0))).group_by(*[col(k) for k in keys])
    ctes.append(("agg", agg))
    maybe = [[None] if n else [] for n in nullable]
    on = and_all([exp.EQ(this=null_keyed(m, col(k, "r")), expression=null_keyed(m, col(k, "a"))) for k, m in zip(keys, maybe)])
    return final.join(table_ref("agg", alias="a"), on=on, join_type="left")


def _released_columns(q: exp.Select, qis: list[str], columns: list[str], released_in: list, labels: list[str], hidden: dict[str, str]) -> exp.Select:
    """The released row's columns: each QI as the first round that releases it, the others as
    they are, a dropped QI under its label (it still forms the classes), the microaggregated
    columns' source values under their hidden names."""
    qi_index = {name: i for i, name in enumerate(qis)}
    for name in columns:
        if name in qi_index:
            q = q.select(exp.alias_(_pick(released_in, qi_index[name]), name, quoted=True))
        else:
            q = q.select(col(name, "src"))
    for i, name in enumerate(qis):
        if name not in columns:  # a dropped QI still forms the classes
            q = q.select(exp.alias_(_pick(released_in, i), labels[i], quoted=True))
    for name, alias in hidden.items():
        q = q.select(exp.alias_(col(name, "src"), alias, quoted=True))
    return q


def rounds_select(stats, maps: list[str], bads: list[str | None], suppression: str = "mask", drop_columns=(), micro: dict | None = None) -> exp.Select:
    """The release over the source; ``bads[r]`` is round r's table of failing class labels (None
    when that round fails no class)."""
    engine, source = stats.engine, stats.source
    micro = dict(micro or {})
    n = len(stats.qis)
    q, released_in = _joined_rounds(stats, maps, bads)
    suppressed = exp.Not(this=exp.Paren(this=exp.or_(*[c.copy() for c in released_in]) if len(released_in) > 1 else released_in[0].copy()))
    columns = [c for c in source.column_names(engine) if c not in drop_columns]
    hidden = {name: f"__sqlanon_m{j}" for j, name in enumerate(micro)}
    labels = [f"__sqlanon_g{i}" for i in range(n)]
    q = _released_columns(q, stats.qis, columns, released_in, labels, hidden)
    q = q.select(exp.alias_(exp.Case().when(suppressed, lit(1)).else_(lit(0)), SUP, quoted=True))
    keys = [stats.qis[i] if stats.qis[i] in columns else labels[i] for i in range(n)]
    ctes = [("rel", q)]
    final = exp.select().from_(table_ref("rel", alias="r"))
    if micro:
        final = _microaggregated(final, ctes, keys, micro, hidden, [h.has_null for h in stats.hierarchies])
    for name in columns:
        if name in micro:
            value = exp.Case().when(exp.EQ(this=col(SUP, "r"), expression=lit(1)), exp.Null()).else_(col(hidden[name], "a"))
            final = final.select(exp.alias_(value, name, quoted=True))
        else:
            final = final.select(col(name, "r"))  # a masked QI is already '*' when suppressed
    if suppression == "drop":
        final = final.where(exp.EQ(this=col(SUP, "r"), expression=lit(0)))
    return cte_select(ctes, final)
