"""The refusals that need one pass over the source, made before the hierarchies are built.

A release that keeps a column unique per row (an id: :func:`sqlanon.release.write.refuse_row_keys`)
and one that keeps in clear a function of a QI (:func:`sqlanon.release.linked.refuse_linked_in_clear`)
both start from an approximate distinct count of the columns they check. Here those sketches
(HyperLogLog) are one statement over the union of the columns, before any hierarchy is built or
the base scan runs, so a refused run stops after one pass. Only what the sketches flag is counted
exactly, by the release's own refusals (their exact re-checks and their messages): the decision
and the message are theirs, unchanged, and no column is refused on an estimate.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sqlanon.expr.atoms import col, if_, lit, sum_
import sqlanon.stats.base_scan as base_scan
from sqlanon.release.linked import dependencies, linking, plausible_pairs, refuse_linked_in_clear
from sqlanon.release.write import MIN_ROWS, NEAR_UNIQUE, NEARLY_UNIQUE_APPROX, refuse_row_keys


def flagged(approx: int, rows: int, nonnull: int | None) -> bool:
    """Worth an exact count: the sketch says near unique per row (``nonnull`` given: near nearly
    unique among the non-NULL values), as :func:`sqlanon.release.write.unique_columns` decides.

    >>> flagged(95, 100, None), flagged(50, 100, None), flagged(85, 100, 100), flagged(95, 99, None)
    (True, False, True, False)
    """
    if nonnull is None:
        return rows >= MIN_ROWS and approx >= NEAR_UNIQUE * rows
    return nonnull >= MIN_ROWS and approx >= NEARLY_UNIQUE_APPROX * nonnull


def sketch(engine, source, columns: list[str], nearly: list[str], groups=None) -> tuple[int, dict[str, int], dict[str, int]]:
    """``(rows, approximate distinct values per column, non-NULL values per column of nearly)``:
    one statement, one pass over the source, or over ``groups`` (the grouped pass's groups,
    :mod:`sqlanon.stats.grouped_pass`, holding every column: a sketch of distinct values reads
    the same values there, and the rows are their counts summed)."""
    if groups is not None:
        src, n = groups.item(), col(base_scan.COUNT, "src")
        total: exp.Expr = sum_(n.copy())
        non_null = [sum_(if_(exp.Is(this=col(c, "src"), expression=exp.Null()), lit(0), n.copy())) for c in nearly]
    else:
        src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
        total, non_null = exp.Count(this=exp.Star()), [exp.Count(this=col(c, "src")) for c in nearly]
    q = exp.select(total, *[engine.dialect.approx_distinct(col(c, "src")) for c in columns], *non_null).from_(src)
    row = engine.fetch_one(q) or (0,)
    counts = {c: int(n or 0) for c, n in zip(columns, row[1:1 + len(columns)])}
    return int(row[0] or 0), counts, {c: int(n or 0) for c, n in zip(nearly, row[1 + len(columns):])}


def checked_columns(names: list[str], qis: list[str], release, sensitive: str | None) -> tuple[list[str], list[str]]:
    """``(the columns the row-key refusal checks, the columns the linked refusal checks)``: as
    :func:`~sqlanon.release.write.refuse_row_keys` and
    :func:`~sqlanon.release.linked.refuse_linked_in_clear` choose them."""
    dropped, micro = set(release.drop_columns or ()), set(release.microaggregate or {})
    keys = [c for c in names if c not in {*qis, *dropped, *(release.keep_columns or ()), *micro}]
    skip = {*qis, *release.linked, *(release.keep_linked or ()), *dropped, *micro, *([sensitive] if sensitive else [])}
    return keys, [c for c in names if c not in skip] if qis else []


def sketched_columns(names: list[str], qis: list[str], release, sensitive: str | None) -> list[str]:
    """The columns :func:`refuse_in_one_pass` sketches (none: no sketch is made): those the two
    refusals check, and the QIs with them when a column may be kept in clear."""
    keys, clear = checked_columns(names, qis, release, sensitive)
    return list(dict.fromkeys([*keys, *([*qis, *clear] if clear else [])]))


def refuse_in_one_pass(engine, source, qis: list[str], release, kept_others: list[str], sensitive: str | None, first: Callable[[], None] = lambda: None,
                       groups=None) -> None:
    """The row-key and linked-in-clear refusals of a release (its ``release`` section), from one
    pass of sketches; the exact checks only of what the sketches flag, each after ``first`` (the
    refusals that come before them: the columns without a role). ``groups``: the grouped pass's
    groups (:mod:`sqlanon.stats.grouped_pass`), sketched instead of the source when they hold
    every column sketched."""
    source.require_columns(engine, qis, "quasi-identifier column")  # a misspelt QI is said first
    keys, clear = checked_columns(source.column_names(engine), qis, release, sensitive)
    columns = sketched_columns(source.column_names(engine), qis, release, sensitive)
    if not columns:
        return
    nearly = [c for c in keys if c in set(kept_others)]
    rows, counts, nonnull = sketch(engine, source, columns, nearly, groups if groups is not None and set(columns) <= set(groups.keys) else None)
    near = {c for c in keys if flagged(counts[c], rows, nonnull.get(c))}
    dropped, micro = list(release.drop_columns or ()), list(release.microaggregate or {})
    if near:  # the release's own check of those columns alone: its exact count, its message
        first()
        refuse_row_keys(engine, source, qis, dropped, [*(release.keep_columns or ()), *(c for c in keys if c not in near)], micro, kept_others)
    if not clear:
        return
    item = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    if any(linking(d, rows) for d in dependencies(engine, item, plausible_pairs(rows, counts, list(qis), clear)).values()):
        first()
        refuse_linked_in_clear(engine, source, qis, release.linked, release.keep_linked, dropped, sensitive, micro)  # its message
