"""Re-identification risk of a table (or of a plan applied to it) measured by SQL on its frequency
set: one small aggregate statement over the equivalence classes (the class-size histogram, from
which every figure below is computed), never rows.

Only *released* classes count: suppressed records carry no quasi-identifier values to link (ARX
likewise leaves suppressed records out of its risk analysis). ``n`` below is the number of
released records, ``f_j`` the size of released class ``j``.

* prosecutor risk of a record = ``1 / f_j`` (the attacker knows the target is in the table):
  highest = ``1 / min f_j``, average = ``#classes / n``, share of records whose risk exceeds a
  threshold ``t`` = ``sum(f_j : 1/f_j > t) / n``;
* journalist risk (the target may not be in the table) = ``1 / min F_j`` with ``F_j >= f_j`` the
  class size in the population; without a population table it is bounded by the prosecutor figure
  and reported as that bound (as ARX's "estimated journalist risk");
* marketer risk (share of records re-identified when all are matched) = ``(1/n) sum f_j / F_j``,
  bounded likewise by ``#classes / n``;
* sample uniques = records in classes of size 1; population uniques: :mod:`sqlanon.risk.population`.
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import Params, cte_select
from sqlanon.risk.population import population_uniqueness
from sqlanon.errors import ConfigError
from sqlanon.hierarchy import load_hierarchy

DEFAULT_THRESHOLD = 0.2


def class_histogram_query(stats, node, ok: exp.Expr, params: Params | None = None) -> exp.Select:
    """The class-size histogram of the released classes (``size, classes``, by size): the one
    statement every figure comes from (:func:`figures_row`; on Spark each statement is a job).
    ``params`` (DuckDB) collects the node's code lists as bound parameters: a statement whose
    text does not grow with the columns' distinct values (:func:`histogram`)."""
    ctes, cls = stats.class_ctes(node, params=params)
    ctes.append(("flagged", exp.select(col("cnt"), exp.alias_(ok.copy(), "ok", quoted=True)).from_(table_ref(cls))))
    ctes.append(("released", exp.select(col("cnt")).from_(table_ref("flagged")).where(col("ok"))))
    cnt = col("cnt")
    histogram = exp.select(cnt, exp.alias_(exp.Count(this=exp.Star()), "classes", quoted=True)).from_(table_ref("released")).group_by(cnt).order_by(cnt)
    return cte_select(ctes, histogram)


def figures_row(hist: list[tuple[int, int]], threshold: float) -> tuple:
    """The prosecutor figures of the released classes from their size histogram: ``(classes,
    records, highest risk, lowest risk, records above the threshold, sample uniques)``, a class's
    risk being ``1 / size`` (as a double; ``None`` for the sums and risks of an empty histogram,
    as SQL's aggregates over no rows)."""
    if not hist:
        return (0, None, None, None, None, None)
    t = float(threshold)
    sizes = [int(s) for s, _ in hist]
    return (
        sum(int(c) for _, c in hist),
        sum(int(s) * int(c) for s, c in hist),
        1.0 / float(min(sizes)),
        1.0 / float(max(sizes)),
        sum(int(s) * int(c) for s, c in hist if 1.0 / float(s) > t),
        sum(int(c) for s, c in hist if int(s) == 1),
    )


def measure(stats, node, ok: exp.Expr | None = None, *, threshold: float = DEFAULT_THRESHOLD, population_fraction: float | None = None) -> dict:
    """Risk figures of ``node`` (a level tuple or a Recoding) over ``stats``' source; ``ok`` marks
    released classes (default: every class)."""
    ok = ok if ok is not None else exp.Boolean(this=True)
    hist = histogram(stats, node, ok)
    return figures_from(figures_row(hist, threshold), hist, threshold, population_fraction)


def histogram(stats, node, ok: exp.Expr) -> list[tuple[int, int]]:
    """The released classes' size histogram (:func:`class_histogram_query`), its lists bound
    where the dialect binds them."""
    params = Params() if stats.dialect.binds_lists else None
    query = class_histogram_query(stats, node, ok, params)
    return [(int(s), int(c)) for s, c in stats.engine.fetch_all(query, params or None)]


def figures_from(row, hist: list[tuple[int, int]], threshold: float, population_fraction: float | None) -> dict:
    """Assemble the risk object from the figures (:func:`figures_row`) and the histogram."""
    classes, records = int(row[0] or 0), int(row[1] or 0)
    highest = float(row[2]) if row[2] is not None else 0.0
    average = classes / records if records else 0.0
    uniques = int(row[5] or 0)
    at_highest = hist[0][0] * hist[0][1] if hist else 0
    out = {
        "records": records,
        "classes": classes,
        "prosecutor": {
            "highest": highest,
            "average": average,
            "lowest": float(row[3]) if row[3] is not None else 0.0,
            "records_at_highest": at_highest / records if records else 0.0,
            "threshold": threshold,
            "records_above_threshold": (int(row[4] or 0) / records) if records else 0.0,
        },
        "journalist": {"highest": highest, "bound": "prosecutor (population class sizes unknown)"},
        "marketer": {"average": average, "bound": "prosecutor average (population class sizes unknown)"},
        "sample_uniques": {"records": uniques, "share": uniques / records if records else 0.0},
        "class_sizes": compact_histogram([[s, c] for s, c in hist]),
    }
    if population_fraction is not None:
        out["population_uniques"] = population_uniqueness(dict(hist), population_fraction)
    return out


def validate_options(threshold: float | None, population_fraction: float | None) -> None:
    if threshold is not None and not 0.0 < threshold <= 1.0:
        raise ConfigError(f"--risk-threshold must lie in (0, 1], got {threshold}")
    if population_fraction is not None and not 0.0 < population_fraction <= 1.0:
        raise ConfigError(f"--population-fraction must lie in (0, 1], got {population_fraction}")


#: edges of the ranges a compacted histogram's tail is summed into (1-2-5 steps: every bucket of
#: the report's chart is a union of these ranges)
EDGES = tuple(sorted({m * 10**e for e in range(0, 13) for m in (1, 2, 5)} | {3, 4}))


def compact_histogram(hist: list, limit: int = 100) -> list:
    """At most about ``limit`` ``[size, classes]`` pairs: the smallest sizes exactly, larger ones
    summed per 1-2-5 range as ``["lo-hi", classes, records]`` so the report stays small."""
    if len(hist) <= limit:
        return hist
    head, tail = hist[: limit - 20], hist[limit - 20 :]
    out = list(head)
    groups: dict = {}
    for size, classes in tail:
        lo = max(e for e in EDGES if e <= size)
        hi = min(e for e in EDGES if e > size) - 1
        key = (max(lo, tail[0][0]), hi)
        c, r = groups.get(key, (0, 0))
        groups[key] = (c + classes, r + size * classes)
    for (lo, hi), (c, r) in sorted(groups.items()):
        out.append([f"{lo}-{hi}", c, r])
    return out


def measure_counts(counts, *, threshold: float = DEFAULT_THRESHOLD, population_fraction: float | None = None) -> dict:
    """:func:`measure_table`'s figures from a frequency set already at hand: ``counts`` the
    number of rows of each distinct row (each a class when every column is a quasi-identifier),
    as an integer array; the class-size histogram is one ``numpy.unique`` of them, no scan."""
    import numpy as np  # here: the CLI's start loads sqlanon.risk, not numpy

    sizes, classes = np.unique(np.asarray(counts, dtype=np.int64), return_counts=True)
    hist = [(int(s), int(c)) for s, c in zip(sizes.tolist(), classes.tolist()) if s > 0]
    return figures_from(figures_row(hist, threshold), hist, threshold, population_fraction)


def measure_table(engine, source, columns: list[str], *, threshold: float = DEFAULT_THRESHOLD, population_fraction: float | None = None) -> dict:
    """Risk of a table as it is, every column in ``columns`` a quasi-identifier (generated data:
    ``sqlanon generate``). Builds the table's frequency set with flat hierarchies, then measures."""
    from sqlanon.stats import Statistics

    flats = [load_hierarchy("flat", c, engine, source) for c in columns]
    stats = Statistics(engine, source, columns, flats)
    stats.prepare()
    try:
        return measure(stats, tuple(0 for _ in columns), threshold=threshold, population_fraction=population_fraction)
    finally:
        stats.drop_all()
