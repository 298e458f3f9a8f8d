"""Utility of a release, per quasi-identifier: what each generalization level *means*, how much
information each column lost (LM, precision, non-uniform entropy), and the value distributions
before and after. Answered from the frequency sets: per-leaf counts (already known to
:class:`~sqlanon.stats.Statistics`) and one small ``GROUP BY`` per QI over the released classes.

>>> from sqlanon.hierarchy.model import Hierarchy
>>> h = Hierarchy("zip", [["13053", "1305*", "130**", "*"], ["13068", "1306*", "130**", "*"]], origin="mask")
>>> level_meaning(h, 2)
'2 characters masked'
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence

import numpy as np
from sqlglot import exp

from sqlanon.plan import Recoding
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import Params, cte_select

TOP_VALUES = 10
_MASK_STEP = re.compile(r"\((\d+) characters per level\)")
_RANGE = re.compile(r"^\s*[\[(]?\s*(-?\d+(?:\.\d+)?)\s*(?:-|,|\.\.)\s*(-?\d+(?:\.\d+)?)\s*[\])\[]?\s*$")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def level_meaning(h, level: int) -> str:
    """What level ``level`` of hierarchy ``h`` does to a value, in words (from its builder or, for a
    hierarchy file, from its labels)."""
    labels = h.labels(level)
    if level == 0:
        return "original values"
    if len(labels) == 1 and labels[0] in ("*", "any", "ANY"):
        return "fully generalized (*)"
    origin = str(h.origin)
    if origin.startswith("bands:"):
        bands = origin.split(":", 1)[1].split(",")
        if level <= len(bands):
            return f"bands of width {bands[level - 1]}"
    if origin in ("dates", "dates:decade"):
        return {1: "month (YYYY-MM)", 2: "year", 3: "decade"}.get(level, f"level {level}")
    named = _date_level_meaning(origin, level)
    if named:
        return named
    if origin.startswith("mask"):
        step = _MASK_STEP.search(origin)
        hidden = level * (int(step.group(1)) if step else 1)
        return f"{hidden} character{'s' if hidden > 1 else ''} masked"
    widths: set[float] = set()
    for label in labels:
        m = _RANGE.match(label)
        if not m:
            widths = set()
            break
        lo, hi = float(m.group(1)), float(m.group(2))
        widths.add(hi - lo + (1 if label.strip()[0].isdigit() or label.strip()[0] == "-" else 0))
    if len(widths) == 1:
        return f"ranges of width {_num(widths.pop())}"
    if len(widths) > 1:
        return f"ranges of width {_num(min(widths))}-{_num(max(widths))}"
    leaf = h.leaf_index  # a dict: a label's test is O(1), not a scan of the leaves
    example = next((lb for lb in labels if lb not in leaf), labels[0])
    return f"{len(labels)} groups (e.g. {example!r})"


def _date_level_meaning(origin: str, level: int) -> str | None:
    """The meaning of a level of a ``dates:``/``age:``/``birth_year:`` hierarchy (its origin
    names the levels)."""
    kind, _, arg = origin.partition(":")
    parts = arg.split(",")
    if kind == "dates" and level <= len(parts):
        name = parts[level - 1]
        return {"month": "month (YYYY-MM)", "quarter": "quarter (YYYY-Qn)", "hour": "hour"}.get(name, name if not name.endswith("y") else f"{name[:-1]} years")
    if kind == "age":
        if level == 1:
            return f"age in years on {parts[0]}"
        return f"age bands of {parts[level - 1]} years" if level <= len(parts) else None
    if kind == "birth_year":
        return "birth year" if level == 1 else (f"{parts[level - 2]} years" if level - 2 < len(parts) else None)
    return None


def recoding_of(stats, plan_node) -> Recoding:
    if isinstance(plan_node, Recoding):
        return plan_node
    return Recoding.from_node(stats.hierarchies, plan_node)


def released_counts(stats, recoding: Recoding, ok: exp.Expr, node=None) -> list[list[int]]:
    """Per QI, released rows per recoded value (:func:`released_figures`)."""
    return released_figures(stats, recoding, ok, node)[0]


def released_figures(stats, recoding: Recoding, ok: exp.Expr, node=None) -> tuple[list[list[int]], list[tuple[int, int]]]:
    """Per QI, released rows per recoded value, and the released classes' size histogram
    (``(size, classes)`` by size, as :func:`sqlanon.risk.measure.class_histogram_query` gives it):
    the released classes are kept in a temporary table (one row per class), then one statement
    sums them (:meth:`sqlanon.dialect.Dialect.grouped_sums`: one ``GROUP BY`` per QI and one by
    class size in a ``UNION ALL``, on Spark one ``GROUPING SETS``; the histogram's sum of ``cnt``
    per size is ``size x classes``). Not one statement with the classes as a CTE under the
    ``UNION ALL``: DuckDB held many times the memory for it, the peak of a whole wide-table run
    (docs/genetic.md#memory, ``bench/genetic_memory.py``). With the full-domain ``node``
    the recoding is of, its classes are rolled up from the smallest saved set (a recoding's from
    the base set)."""
    params = Params() if stats.dialect.binds_lists else None  # code lists bound, not spelled out
    ctes, cls = stats.class_ctes(tuple(node) if node is not None else recoding, params=params)
    names = [stats.qcol(i) for i in range(len(stats.qis))]
    ctes.append(("flagged", exp.select(*[col(q) for q in names], col("cnt"), exp.alias_(ok.copy(), "ok", quoted=True)).from_(table_ref(cls))))
    released = stats.engine.temp_name("released")
    classes = exp.select(*[col(q) for q in names], col("cnt")).from_(table_ref("flagged")).where(col("ok"))
    create = stats.dialect.create_temp(released, cte_select(ctes, classes))
    if params:  # the bound code lists (an engine's execute takes them only when there are some)
        stats.engine.execute(create, params)
    else:
        stats.engine.execute(create)
    out = [[0] * len(labels) for labels in recoding.labels]
    sizes: dict[int, int] = {}
    try:
        rows = stats.engine.fetch_all(stats.dialect.grouped_sums(released, [[q] for q in names] + [["cnt"]], ["code"], "i"))
    finally:
        stats.engine.execute(stats.dialect.drop_temp(released))
    for i, code, n in rows:
        if int(i) < len(names):
            out[int(i)][int(code)] = int(n)
        else:
            size, in_size = int(code), int(n)
            if in_size % size:
                raise AssertionError(f"released rows {in_size} of classes of size {size} are no multiple of it")
            sizes[size] = in_size // size
    return out, sorted(sizes.items())


def _value_key(value) -> tuple[bool, str]:
    """A value's sort key, NULL (the NULL leaf) first."""
    return (value is not None, value or "")


def other_label(values: int, rows: int) -> str:
    """The label of the entry that folds the values not shown.

    >>> other_label(3, 1200)
    'other (3 values, 1,200 rows)'
    """
    return f"other ({values:,} value{'s' if values != 1 else ''}, {rows:,} row{'s' if rows != 1 else ''})"


def _top(values: Sequence[str], counts: Sequence[int] | np.ndarray, total: int, limit: int, extra: Sequence[tuple[str, int]] = (), folded: tuple[int, int] = (0, 0)) -> list[dict]:
    """The ``limit`` most frequent of ``values`` (rows ``counts[j]``, plus the ``extra`` pairs;
    ties by value), the rest summed as one ``other (N values, M rows)`` entry, with ``folded``
    (values, rows) never shown (:func:`shown_before`). Linear in the values: a partial sort
    (numpy) picks the candidates, only the ``limit`` best are sorted in Python."""
    arr = np.asarray(counts, dtype=np.int64)
    extra = [(v, int(n)) for v, n in extra if n]
    thr = int(np.partition(arr, len(arr) - limit)[len(arr) - limit]) if len(arr) > limit else 0
    thr = max(thr, 1)  # the limit-th largest count: fewer than ``limit`` values have more
    above = np.flatnonzero(arr > thr)
    pairs = [(values[j], int(arr[j])) for j in above.tolist()]
    ties = np.flatnonzero(arr == thr).tolist()
    pairs += heapq.nsmallest(limit - len(pairs), ((values[j], thr) for j in ties), key=lambda p: _value_key(p[0]))
    pairs = sorted(pairs + extra, key=lambda p: (-p[1], _value_key(p[0])))[:limit]
    top = [{"value": v, "rows": n, "share": n / total if total else 0.0} for v, n in pairs]
    rest = int(arr.sum()) + sum(n for _, n in extra) - sum(n for _, n in pairs) + folded[1]
    if rest:
        others = int(np.count_nonzero(arr)) + len(extra) - len(pairs) + folded[0]
        top.append({"value": other_label(others, rest), "rows": rest, "share": rest / total if total else 0.0, "other": True})
    return top


def shown_before(freq: np.ndarray, codes: np.ndarray, released: np.ndarray, k: int | None) -> np.ndarray:
    """Which input values the "before" distribution may name: those of at least ``k`` input rows
    of which at least one is surely released. A value's released rows are at least its input rows
    less the suppressed rows under its released value (exactly its released rows at level 0), so
    a value only suppressed rows have, or one of fewer than ``k`` rows, is never named: what the
    release hides, the report does not show (DESIGN.md). Vectorized over the leaves.

    >>> shown_before(np.array([5, 1, 4, 3]), np.array([0, 1, 2, 2]), np.array([5, 0, 4]), 2).tolist()
    [True, False, True, False]
    """
    freq = np.asarray(freq, dtype=np.int64)
    under = np.bincount(codes, weights=freq, minlength=len(released)).astype(np.int64)
    suppressed_under = under - np.asarray(released, dtype=np.int64)
    return (freq >= max(int(k or 1), 1)) & (freq - suppressed_under[codes] >= 1)


def _column_figures(freq: np.ndarray, codes: np.ndarray, n_labels: int, released: np.ndarray, suppressed: int, n: int) -> dict:
    """One QI's LM, non-uniform entropy and distinct counts, vectorized over its leaves:
    ``freq[leaf]`` input rows, ``codes[leaf]`` the released code, ``released[code]`` released rows."""
    m = len(codes)
    under = np.bincount(codes, minlength=n_labels)  # leaves under each released value
    gen_all = np.bincount(codes, weights=freq, minlength=n_labels)  # input rows under it
    loss = (under - 1) / (m - 1) if m > 1 else np.zeros(n_labels)
    seen = freq > 0
    f = freq[seen].astype(np.float64)
    entropy = -float(np.sum(f * np.log2(f / gen_all[codes[seen]]))) if f.size else 0.0
    return {
        "lm": (float(np.dot(released.astype(np.float64), loss)) + suppressed) / n,
        "entropy": entropy / n + 0.0,  # bits per row, ARX's non-uniform entropy (suppression-independent)
        "distinct_before": int(np.count_nonzero(freq)),
        "distinct_after": int(np.count_nonzero(released)),
    }


def _before(leaves: Sequence[str], freq: np.ndarray, codes: np.ndarray, released: np.ndarray, n: int, top: int, k: int | None) -> list[dict]:
    """The input's distribution of one QI, its hidden values folded (:func:`shown_before`)."""
    hidden = ~shown_before(freq, codes, released, k) & (freq > 0)
    folded = (int(np.count_nonzero(hidden)), int(freq[hidden].sum()))
    return _top(leaves, np.where(hidden, 0, freq), n, top, folded=folded)


def column_utility(stats, plan_node, ok: exp.Expr, suppressed: int, levels: dict | None = None, top: int = TOP_VALUES, released=None, k: int | None = None) -> dict:
    """Per QI: level and meaning, LM / precision / entropy loss, distributions before and after.

    Suppressed rows count as fully generalized in LM and precision (their QIs are ``*``). The
    "before" distribution names only the values :func:`shown_before` allows for ``k``.
    ``released``: the plan's :func:`released_counts` when already read (with the risk's
    histogram, :func:`released_figures`).
    """
    recoding = recoding_of(stats, plan_node)
    if released is None:
        released = released_counts(stats, recoding, ok, None if isinstance(plan_node, Recoding) else plan_node)
    n = stats.rows
    out = {}
    for i, (name, h) in enumerate(zip(stats.qis, stats.hierarchies)):
        codes, labels = np.asarray(recoding.codes[i], dtype=np.int64), recoding.labels[i]
        entry = _column_figures(np.asarray(stats.column_freqs[i], dtype=np.int64), codes, len(labels), np.asarray(released[i], dtype=np.int64), suppressed, n)
        entry["before"] = _before(h.leaves, np.asarray(stats.column_freqs[i], dtype=np.int64), codes, np.asarray(released[i], dtype=np.int64), n, top, k)
        entry["after"] = _top(labels, released[i], n, top, [("* (suppressed)", suppressed)])
        level = (levels or {}).get(name)
        if isinstance(level, int):
            entry["level"] = level
            entry["max_level"] = h.max_level
            entry["meaning"] = level_meaning(h, level)
            frac = level / h.max_level if h.max_level else 0.0
            entry["precision"] = (frac * (n - suppressed) + suppressed) / n
        else:
            entry["level"] = None
            entry["meaning"] = f"flexible cut: {entry['distinct_after']} released values from {entry['distinct_before']}"
            entry["precision"] = None
        out[name] = entry
    return out


def released_transformation(transformation: dict, recoding: Recoding, released, qis: Sequence[str]) -> tuple[dict, dict[str, int]]:
    """A flexible plan's transformation as a report shows it: each cut without the values no
    released row has (a value, a group or an interval only suppressed rows fall in), and per QI
    how many were left out. Read back (``sqlanon check --transformation``), a value a cut leaves
    out is released as the root, as those rows were.

    >>> from sqlanon.plan import Recoding
    >>> released_transformation({"zip": ["1305*", "99999"], "age": 1}, Recoding([[0, 0, 1]], [["1305*", "99999"]]), [[4, 0]], ["zip"])
    ({'zip': ['1305*'], 'age': 1}, {'zip': 1})
    """
    shown, hidden = dict(transformation), {}
    for i, q in enumerate(qis):
        cut = transformation.get(q)
        if not isinstance(cut, list) or i >= len(recoding.labels):
            continue
        empty = {str(label) for label, n in zip(recoding.labels[i], released[i]) if not n}
        kept = [v for v in cut if str(v) not in empty]
        if len(kept) < len(cut):
            shown[q], hidden[q] = kept, len(cut) - len(kept)
    return shown, hidden
