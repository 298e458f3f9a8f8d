"""Re-identification risk, measured by SQL on frequency sets (:mod:`sqlanon.risk.measure`), and
population uniqueness estimated from the class-size histogram (:mod:`sqlanon.risk.population`).
Definitions and references: ``docs/risk.md``."""

from __future__ import annotations

from sqlanon.risk.measure import DEFAULT_THRESHOLD, figures_from, figures_row, histogram, measure, validate_options
from sqlanon.risk.population import population_uniqueness

__all__ = ["DEFAULT_THRESHOLD", "measure", "figures_from", "population_uniqueness", "validate_options", "before_after"]


def before_after(stats, plan, *, threshold: float = DEFAULT_THRESHOLD, population_fraction: float | None = None, after_histogram=None) -> dict:
    """Risk of the input (every class released as it is) and of the plan's release (released
    classes only). Local recoding rounds are measured one by one and their histograms added.
    ``after_histogram``: the release's class-size histogram when already read
    (:func:`sqlanon.report.utility.released_figures`)."""
    from sqlglot import exp

    before = measure(stats, tuple(0 for _ in stats.qis), exp.Boolean(this=True), threshold=threshold, population_fraction=population_fraction)
    ok = plan.requirement.predicate()
    if plan.local:
        hist: dict[int, int] = {}
        for step in plan.local:
            for s, c in histogram(step.stats, step.node, ok):
                hist[s] = hist.get(s, 0) + c
        merged = [(s, hist[s]) for s in sorted(hist)]
        after = figures_from(figures_row(merged, threshold), merged, threshold, population_fraction)
    elif after_histogram is not None:
        after = figures_from(figures_row(after_histogram, threshold), after_histogram, threshold, population_fraction)
    else:
        node = plan.node if plan.node is not None else plan.recoding
        after = measure(stats, node, ok, threshold=threshold, population_fraction=population_fraction)
    return {"before": before, "after": after}


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.2f} %"


def text_lines(risk: dict) -> list[str]:
    """The risk object as aligned text lines (the CLI's ``check --risk`` output)."""
    p = risk["prosecutor"]
    lines = [
        f"records          {risk['records']:,} released in {risk['classes']:,} classes",
        f"prosecutor risk  highest {_pct(p['highest'])} ({_pct(p['records_at_highest'])} of records), average {_pct(p['average'])}",
        f"                 records above {_pct(p['threshold'])}: {_pct(p['records_above_threshold'])}",
        f"journalist risk  highest {_pct(risk['journalist']['highest'])} (bound: no population table)",
        f"marketer risk    {_pct(risk['marketer']['average'])} (bound: no population table)",
        f"sample uniques   {risk['sample_uniques']['records']:,} ({_pct(risk['sample_uniques']['share'])})",
    ]
    pu = risk.get("population_uniques")
    if pu:
        est = pu.get("estimates") or {}
        parts = ", ".join(f"{name} {_pct(e['fraction']) if e else 'n/a'}" for name, e in est.items())
        lines.append(
            f"population uniq. {_pct(pu['fraction'])} of {pu['population_size']:,.0f} (sampling fraction {pu['sampling_fraction']:g}; {pu['model']})"
            + (f"; {parts}" if parts else "")
        )
    return lines
