"""The notebook summary of a release (``Release._repr_html_``): the privacy models and k, the rows
and how many were suppressed, the transformation per quasi-identifier, the metric and ARX's Loss.
Built from the report's aggregates only (what the release hides, the summary does not show).

>>> page = summary_html({"search": "optimal", "k": 5, "rows": 200, "suppressed_rows": 4, "transformation": {"zip": 2},
...                      "hierarchies": [{"attribute": "zip", "levels": 5}], "metric": {"name": "lm", "value": 0.25},
...                      "privacy": {"models": [{"model": "k-anonymity", "k": 5}], "classes": 12, "min_class_size": 6}})
>>> "k-anonymity (k=5)" in page and "4 (2.0 %)" in page and "level 2 of 4" in page
True
"""

from __future__ import annotations

from html import escape

from sqlanon.release.searched import search_label

#: released values of a flexible cut shown before "..."
SHOWN_VALUES = 6


def models_text(models: list[dict] | None) -> str:
    """``k-anonymity (k=5), entropy-l-diversity (l=2.0)``: each model with its parameters."""
    parts = []
    for m in models or []:
        params = ", ".join(f"{key}={value}" for key, value in m.items() if key != "model")
        parts.append(f"{m.get('model')} ({params})" if params else str(m.get("model")))
    return ", ".join(parts) or "none"


def transformation_rows(report: dict) -> list[tuple[str, str]]:
    """Per quasi-identifier: its level (of its hierarchy's top level) or its cut's released values."""
    levels = {h.get("attribute"): h.get("levels") for h in report.get("hierarchies") or []}
    rows = []
    for column, value in (report.get("transformation") or {}).items():
        if isinstance(value, list):
            shown = ", ".join(str(v) for v in value[:SHOWN_VALUES]) + (", ..." if len(value) > SHOWN_VALUES else "")
            rows.append((column, f"cut of {len(value)} released values: {shown}"))
        else:
            top = levels.get(column)
            rows.append((column, f"level {value} of {top - 1}" if isinstance(top, int) and top > 0 else f"level {value}"))
    return rows


def _pct(part, whole) -> str:
    return f"{part:,} ({100.0 * part / whole:.1f} %)" if whole else f"{part:,}"


def summary_rows(report: dict) -> list[tuple[str, str]]:
    """The summary as (label, text) pairs, in order."""
    privacy = report.get("privacy") or {}
    metric = report.get("metric") or {}
    rows = [("privacy", models_text(privacy.get("models"))),
            ("k", f"{report.get('k')} (smallest released class {privacy.get('min_class_size')}, {privacy.get('classes')} classes)"),
            ("rows", f"{report.get('rows', 0):,}"),
            ("suppressed", _pct(report.get("suppressed_rows") or 0, report.get("rows") or 0) + (f", budget {report['suppression_budget']:,}" if report.get("suppression_budget") is not None else "")),
            ("search", search_label(report)),
            ("metric", f"{metric.get('name')} = {metric.get('value'):.6g}" if isinstance(metric.get("value"), (int, float)) else str(metric.get("name")))]
    loss = report.get("arx_quality") or {}
    if loss:
        rows.append(("loss (ARX)", ", ".join(f"{key} {value:.4g}" for key, value in loss.items() if isinstance(value, (int, float)))))
    rows.append(("output", str(report.get("output") or "(nothing written)") + (f" (release {report['release_id']})" if report.get("release_id") is not None else "")))
    return rows


def summary_html(report: dict) -> str:
    """An HTML table for a notebook cell: the summary, then the transformation per QI, then warnings."""
    cells = "".join(f"<tr><th style='text-align:left'>{escape(label)}</th><td style='text-align:left'>{escape(text)}</td></tr>" for label, text in summary_rows(report))
    qis = "".join(f"<tr><td style='text-align:left'>{escape(c)}</td><td style='text-align:left'>{escape(t)}</td></tr>" for c, t in transformation_rows(report))
    warnings = "".join(f"<li>{escape(str(w.get('message')))}</li>" for w in report.get("warnings") or [])
    return ("<div class='sqlanon-release'><b>sqlanon release</b><table>" + cells + "</table>"
            + "<table><tr><th style='text-align:left'>quasi-identifier</th><th style='text-align:left'>transformation</th></tr>" + qis + "</table>"
            + (f"<ul>{warnings}</ul>" if warnings else "") + "</div>")
