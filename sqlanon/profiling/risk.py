"""The re-identification risk of the table as it is, with the proposed quasi-identifiers: the
class-size histogram of the whole table grouped by them (one statement), read by
:mod:`sqlanon.risk` into prosecutor risk and sample uniques."""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import col
from sqlanon.risk import DEFAULT_THRESHOLD, figures_from
from sqlanon.risk.measure import figures_row


def histogram_query(engine, source, qis: list[str]) -> exp.Select:
    """``size, classes``: how many classes of each size the QI values make, by size."""
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    classes = exp.select(exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True)).from_(src).group_by(*[col(q, "src") for q in qis])
    cnt = col("cnt")
    return (
        exp.select(cnt, exp.alias_(exp.Count(this=exp.Star()), "classes", quoted=True))
        .from_(exp.alias_(exp.Subquery(this=classes), "g", table=True, quoted=True))
        .group_by(cnt.copy())
        .order_by(cnt.copy())
    )


def risk_before(engine, source, qis: list[str], threshold: float = DEFAULT_THRESHOLD) -> dict | None:
    """The risk object of :func:`sqlanon.risk.measure` for the table as it is (None without QIs)."""
    if not qis:
        return None
    hist = [(int(s), int(c)) for s, c in engine.fetch_all(histogram_query(engine, source, qis))]
    return figures_from(figures_row(hist, threshold), hist, threshold, None)
