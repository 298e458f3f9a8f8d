"""A node's classes as CTEs: its frequency set rolled up, then per class the sensitive aggregates
the models need (:func:`sqlanon.stats.models.sensitive_parts`) and the count of its most frequent
class value, joined on the class key (:meth:`Statistics.class_ctes
<sqlanon.stats.core.Statistics.class_ctes>` adds the population's)."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import Params, col, eq_all, sum_, table_ref
from sqlanon.privacy import aggregates
from sqlanon.stats.frequency import FrequencySet
from sqlanon.stats.models import sensitive_parts
from sqlanon.stats.store import Node


def class_ctes(stats, node: Node, frm: FrequencySet | None = None, params: Params | None = None) -> tuple[list[tuple[str, exp.Expr]], str]:
    """``gen`` (the node's frequency set, :meth:`Statistics.generalized_select`) and, when the
    models or the metric need them, the per-class sensitive and class-value aggregates joined
    on the class key: the CTEs and the name of the one holding a row per class."""
    ctes: list[tuple[str, exp.Expr]] = [("gen", stats.generalized_select(node, frm, params))]
    if not (stats.has_s or stats.has_y):
        return ctes, "gen"
    parts: list[str] = []
    if stats.has_s:
        parts += sensitive_class_ctes(stats, ctes)
    if stats.has_y:
        parts.append(class_y_cte(stats, ctes))
    if len(parts) == 1:
        return ctes, parts[0]
    ctes.append(("cls", joined_parts(stats, parts)))
    return ctes, "cls"


def sensitive_class_ctes(stats, ctes: list[tuple[str, exp.Expr]]) -> list[str]:
    """The per-class sensitive aggregates (:func:`sqlanon.stats.models.sensitive_parts`) over
    ``gen`` (``gs`` without the class value when it is there); returns the parts."""
    g = stats.qnames
    src = "gen"
    if stats.has_y:
        ctes.append(("gs", exp.select(*map(col, g), col("s"), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref("gen")).group_by(*map(col, g), col("s"))))
        src = "gs"
    return [name for name, _ in sensitive_parts(stats, ctes, src, g)]


def class_y_cte(stats, ctes: list[tuple[str, exp.Expr]]) -> str:
    """``cls_y``: per class, the count of its most frequent class value (``maxy``)."""
    g = stats.qnames
    ctes.append(("gy", exp.select(*map(col, g), col("y"), exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref("gen")).group_by(*map(col, g), col("y"))))
    aggs = [exp.alias_(sum_(col("cnt")), "cnt", quoted=True), exp.alias_(exp.Max(this=col("cnt")), "maxy", quoted=True)]
    ctes.append(("cls_y", exp.select(*map(col, g), *aggs).from_(table_ref("gy")).group_by(*map(col, g)) if g else exp.select(*aggs).from_(table_ref("gy"))))
    return "cls_y"


def joined_parts(stats, parts: list[str]) -> exp.Select:
    """The class table: the parts joined on the class key, each part's columns once."""
    g = stats.qnames
    first = parts[0]
    q = exp.select(*[col(n, first) for n in g], col("cnt", first)).from_(table_ref(first))
    for other in parts[1:]:
        q = q.join(table_ref(other), on=eq_all(first, other, g) if g else exp.Boolean(this=True), join_type="inner" if g else "cross")
    columns = {"cls_s": aggregates.value_columns(stats.needs), "emd": ["emd_ordered"], "hemd": ["emd_hier"], "cls_y": ["maxy"]}
    for part in parts:
        q = q.select(*[col(name, part) for name in columns[part]])
    return q
