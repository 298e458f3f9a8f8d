"""The rows a release suppresses because a ``nulls: suppress`` quasi-identifier is NULL there.

The statistics never see them (:meth:`sqlanon.stats.Statistics.kept_rows`); the release query
over the other rows is completed by ``UNION ALL`` of these rows, every QI masked ``*`` as in a
suppressed class (``--suppression drop`` leaves them out: the release query already does).
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import col, lit

SUPPRESSED = "*"


def withheld_select(stats, drop_columns=(), microaggregate=None) -> exp.Select:
    """The withheld rows as released: the source's columns in order, QIs ``*``, a
    microaggregated column NULL (as a suppressed row's), dropped columns left out."""
    condition = stats.withheld_condition()
    assert condition is not None, "no quasi-identifier suppresses its NULLs"
    src = exp.alias_(stats.input_item.copy(), "src", table=True, quoted=True)
    q = exp.select().from_(src).where(condition)
    micro = dict(microaggregate or {})
    for name in stats.source.column_names(stats.engine):
        if name in drop_columns:
            continue
        if name in stats.qis:
            q = q.select(exp.alias_(lit(SUPPRESSED), name, quoted=True))
        elif name in micro:
            q = q.select(exp.alias_(exp.Null(), name, quoted=True))
        else:
            q = q.select(col(name, "src"))
    return q


def with_withheld(stats, query: exp.Select, suppression: str, drop_columns=(), microaggregate=None) -> exp.Query:
    """``query`` (the release of the other rows) and, masked, the withheld rows."""
    if not stats.withheld or suppression != "mask":
        return query
    return exp.union(query, withheld_select(stats, drop_columns, microaggregate), distinct=False)
