"""Why no plan satisfies the requirement: one line that names the model at fault and what is closest.

Every search that gives up calls :func:`unsatisfiable` with the transformation that came closest
(the one suppressing the fewest rows: the most general lattice node when the requirement is
monotone, else the best evaluated one; for a flexible planner its final recoding). One more
statement measures, at that transformation, for every model

* the rows it would suppress on its own (so the message names the model(s) that break the budget),
* its worst class (smallest class for k, fewest distinct values for l, largest distance for t, ...),

and the error reads, for example::

    no transformation satisfies k-anonymity k=50 within the suppression budget of 301 rows (1% of
    30,162): k-anonymity fails (alone it suppresses 2,412 rows). Closest: age=4, sex=1, ...
    suppresses 2,412 rows; there the smallest class has 3 rows (k=50)

The error carries the same facts as ``err.details`` (a dict) for the API.

A model takes part by implementing ``worst()`` (SQL aggregates over the node's class table) and
``describe_worst(values)`` (the words); models without them are still named by their own
suppression.
"""

from __future__ import annotations

from sqlglot import exp

from sqlanon.errors import UnsatisfiableError
from sqlanon.expr.atoms import col
from sqlanon.expr.atoms import if_, lit
from sqlanon.privacy.needs import NodeStats


def model_label(model) -> str:
    d = dict(model.describe())
    name = d.pop("model")
    return name + (" " + " ".join(f"{k}={v}" for k, v in d.items()) if d else "")


def requirement_label(requirement) -> str:
    return "; ".join(model_label(m) for m in requirement.models) or "the requirement"


def transformation_label(qis, node) -> str:
    """``age=4, sex=1`` for a lattice node; ``flexible cuts`` for a recoding without levels."""
    if isinstance(node, tuple):
        return ", ".join(f"{q}={int(lv)}" for q, lv in zip(qis, node))
    return "the search's final recoding"


def closest(evaluated) -> object | None:
    """Of ``(node, NodeStats)`` pairs, the node suppressing the fewest rows (ties: fewer classes
    failing, then the lower node)."""
    best = None
    for node, ns in evaluated:
        key = (ns.suppressed, ns.bad_classes, sum(node) if isinstance(node, tuple) else 0)
        if best is None or key < best[0]:
            best = (key, node)
    return None if best is None else best[1]


def measure(stats, requirement, node) -> tuple[NodeStats, list[dict]]:
    """One statement at ``node``: per class-level model, the rows it suppresses alone and its worst
    class (a table-level model, whose verdict needs the whole class table, is not measured alone)."""
    models = [(i, m) for i, m in enumerate(requirement.models) if not m.table_level]
    aggs: list[tuple[str, exp.Expr]] = []
    for i, model in models:
        aggs.append((f"m{i}_suppressed", exp.Sum(this=if_(model.predicate(), lit(0), col("cnt")))))
        for j, (_name, e) in enumerate(model.worst()):
            aggs.append((f"m{i}_w{j}", e))
    ns = stats.evaluate(node, requirement.predicate(), aggs)
    per_model = []
    for i, model in models:
        names = [name for name, _ in model.worst()]
        values = {name: ns.extra.get(f"m{i}_w{j}") for j, name in enumerate(names)}
        per_model.append({"model": model_label(model), "suppressed_rows": int(ns.extra.get(f"m{i}_suppressed") or 0), "worst": values, "model_obj": model})
    return ns, per_model


def unsatisfiable(stats, requirement, node, *, qis=None, scope: str = "", label: str | None = None) -> UnsatisfiableError:
    """The error to raise when nothing satisfies ``requirement``; ``node`` is what came closest.

    ``scope`` adds where the search looked (e.g. ``"within the level bounds"``), ``label`` names a
    non-lattice transformation. Returns the error (the caller raises it)."""
    qis = qis or stats.qis
    budget = int(requirement.budget)
    rows = int(stats.rows)
    try:
        ns, per_model = measure(stats, requirement, node)
    except Exception:  # never hide the real verdict behind a failing diagnosis
        return UnsatisfiableError(f"no transformation satisfies {requirement_label(requirement)} within the suppression budget of {budget:,} rows")
    failing = [m for m in per_model if m["suppressed_rows"] > budget]
    fault = _fault(ns, per_model, failing, budget, rows)
    pct = f"{requirement.max_suppression:.4g}" if requirement.max_suppression else "0"
    where = label or transformation_label(qis, node)
    details = [w for w in (_worst_words(m) for m in per_model) if w]
    message = (
        f"no transformation {scope + ' ' if scope else ''}satisfies {requirement_label(requirement)} within the suppression budget of "
        f"{budget:,} rows (max_suppression {pct} of {rows:,}): {fault}. Closest: {where} suppresses {ns.suppressed:,} rows"
        + (f"; there {', '.join(details)}" if details else "")
    )
    err = UnsatisfiableError(message)
    err.details = {
        "failing_models": [m["model"] for m in failing] or [m["model"] for m in per_model],
        "budget": budget,
        "closest": {
            "transformation": {q: int(lv) for q, lv in zip(qis, node)} if isinstance(node, tuple) else where,
            "suppressed_rows": int(ns.suppressed),
            "models": [{k: v for k, v in m.items() if k != "model_obj"} for m in per_model],
        },
    }
    return err


def _fault(ns, per_model: list[dict], failing: list[dict], budget: int, rows: int) -> str:
    """Which model(s) break the budget at the closest transformation, in words."""
    if rows and ns.suppressed >= rows and ns.suppressed <= budget:
        return "it would suppress every row, and a release of nothing is refused"
    if failing:
        return "; ".join(f"{m['model']} fails (alone it suppresses {m['suppressed_rows']:,} rows)" for m in failing)
    if per_model:
        return "the models fail together (" + ", ".join(f"{m['model']} alone suppresses {m['suppressed_rows']:,}" for m in per_model) + ")"
    return "the requirement fails"


def _worst_words(m: dict) -> str | None:
    return m["model_obj"].describe_worst(m["worst"]) or None
