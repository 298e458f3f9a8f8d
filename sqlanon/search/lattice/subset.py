"""Frequency sets of the rows a node suppresses (local recoding's next round).

The rows a node suppresses are exactly the base tuples whose class at that node fails the
requirement. Their base frequency set is one statement over the parent's base set, so the next
round's search needs no scan of the source:

    SELECT b.q0, .., b.cnt FROM base AS b
    JOIN (classes of the node that fail) AS bad ON gen(b.q0) = bad.q0 AND ..

The subset's :class:`Statistics` shares the parent's engine, hierarchies (mapping tables) and the
sensitive domain (so t-closeness still measures against the whole table's distribution).
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import and_all, cte_select
from sqlanon.dialect import lookup
from sqlanon.stats.core import Statistics
from sqlanon.stats.frequency import FrequencySet


def failing_rows_select(stats: Statistics, node, ok: exp.Expr) -> exp.Select:
    """The base tuples of ``stats`` whose class at ``node`` fails ``ok``, with their counts."""
    ctes, cls = stats.class_ctes(node, stats.base)
    bad = exp.select(*[col(n) for n in stats.qnames]).from_(table_ref(cls)).where(exp.Not(this=exp.Paren(this=ok.copy())))
    ctes.append(("bad", bad))
    maps = stats.maps(node, stats.base)
    on = and_all([exp.EQ(this=lookup(m, col(stats.qcol(i), "b"), stats.dialect), expression=col(stats.qcol(i), "x")) for i, m in enumerate(maps)])
    keys = stats.qnames + ["s"] * stats.has_s + ["y"] * stats.has_y + ["cnt"] + ["h"] * (stats.row_hash and not stats.hash_by_groups)
    final = exp.select(*[col(k, "b") for k in keys]).from_(table_ref(stats.base.table, alias="b")).join(table_ref("bad", alias="x"), on=on, join_type="inner")
    return cte_select(ctes, final)


def failing_subset(stats: Statistics, node, ok: exp.Expr) -> Statistics:
    """A prepared :class:`Statistics` over the rows ``node`` suppresses (``rows`` may be 0)."""
    name = stats.engine.temp_name("sub")
    stats.engine.execute(stats.dialect.create_temp(name, failing_rows_select(stats, node, ok)))
    row = stats.engine.fetch_one(exp.select(exp.Sum(this=col("cnt")), exp.Count(this=exp.Star())).from_(table_ref(name)))
    # its own store and per-source memory (the map cache holds for any set): the subset's rows are
    # others (its rare value pairs were the parent's: a round's lattice tagged nodes failing on
    # the parent's rows)
    sub = stats.for_subset(FrequencySet(name, tuple(0 for _ in stats.qis), int(row[1] or 0)), int(row[0] or 0))
    return sub
