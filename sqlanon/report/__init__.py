"""Report: the JSON object of a run (stable keys, see README) and its HTML page.

The page is one self-contained file rendered from ``templates/report.html.j2`` (jinja2 with
autoescape): inline SVG plots, no script, nothing loaded from the network. It holds aggregates
only, so its size does not grow with the table.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os

from sqlanon.report import charts, paths
from sqlanon.version import __version__
from sqlanon.report.labels import search_label

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

RISK_DEFINITIONS = (
    ("highest prosecutor risk", lambda r: r["prosecutor"]["highest"], "1 / size of the smallest released class"),
    ("average prosecutor risk", lambda r: r["prosecutor"]["average"], "classes / released records"),
    ("records at the highest risk", lambda r: r["prosecutor"]["records_at_highest"], "share of records in the smallest classes"),
    ("records above threshold", lambda r: r["prosecutor"]["records_above_threshold"], "share of records whose risk 1/size exceeds the threshold"),
    ("journalist risk (bound)", lambda r: r["journalist"]["highest"], "1 / smallest population class; bounded by the prosecutor figure"),
    ("marketer risk (bound)", lambda r: r["marketer"]["average"], "expected share of records re-identified; bounded by the average"),
    ("sample uniques", lambda r: r["sample_uniques"]["share"], "share of records alone in their class"),
    ("population uniques", lambda r: (r.get("population_uniques") or {}).get("fraction"), "estimated share of population records that are unique (Dankar et al.'s rule)"),
)


def _environment():
    import jinja2

    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=jinja2.select_autoescape(["html", "j2"], default=True), undefined=jinja2.ChainableUndefined)


def _number(value) -> float | None:
    """A count of a stored report as a number: registries written from PostgreSQL before
    sqlanon made them ints hold some as strings (``"16"``); None when it is no number."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _pct(x) -> str:
    return "n/a" if x is None else f"{100 * x:.2f} %"


def _models_text(models, k) -> str:
    if not models:
        return f"k-anonymity (k={k})" if k is not None else "?"
    parts = []
    for m in models if isinstance(models, list) else [models]:
        if isinstance(m, dict):
            rest = ", ".join(f"{key}={value}" for key, value in m.items() if key != "model")
            parts.append(f"{m.get('model', '?')}" + (f" ({rest})" if rest else ""))
        else:
            parts.append(str(m))
    return "; ".join(parts)


def _risk_rows(before: dict | None, after: dict | None) -> list[dict]:
    """The risk table: per measure its value before and after the release, and its definition."""
    risk_rows: list[dict] = []
    if not after:
        return risk_rows
    for name, fn, definition in RISK_DEFINITIONS:
        b, a = (fn(before) if before else None), fn(after)
        if name == "population uniques" and a is None and (b is None):
            continue
        risk_rows.append({"name": name + (f" ({_pct(after['prosecutor']['threshold'])})" if name == "records above threshold" else ""), "before": _pct(b), "after": _pct(a), "definition": definition})
    pu = after.get("population_uniques")
    if pu:
        risk_rows[-1]["definition"] += f"; sampling fraction {pu['sampling_fraction']:g}, model {pu['model']}"
    return risk_rows


def _policy_shown(report: dict) -> dict:
    """What the page shows of the run's policy: the stored policy, then the report's keys."""
    policy = {key: report.get(key) for key in ("search", "k", "max_suppression", "suppression_budget", "metric", "quasi_identifiers", "weights", "privacy") if report.get(key) is not None}
    if report.get("policy"):
        policy = {"policy": report["policy"], **policy}
    return policy


def render(report: dict, *, sql: list | None = None, release_id=None, created_at: str | None = None, full_paths: bool | None = None) -> str:
    """The report page as a string. Paths are shown relative to the working directory or by
    their file name (:mod:`sqlanon.report.paths`) unless ``full_paths`` (by default: the run's
    policy key ``full_paths``)."""
    if full_paths is None:
        full_paths = bool((report.get("policy") or {}).get("full_paths"))
    report, sql = paths.page_report(report, sql, full_paths)
    risk = report.get("risk") or {}
    before, after = risk.get("before"), risk.get("after")
    utility = report.get("utility") or {}
    top = max((sum(1 for v in u["before"] if not v.get("other")) for u in utility.values()), default=0)
    dist_plots = {name: (charts.distribution_chart(name, "input", u["before"], 0), charts.distribution_chart(name, "release", u["after"], 1)) for name, u in utility.items()}
    privacy = report.get("privacy") or {}
    min_class, k = _number(privacy.get("min_class_size")), _number(report.get("k"))
    page = _environment().get_template("report.html.j2").render(
        r=report,
        search=search_label(report),
        release_id=release_id if release_id is not None else report.get("release_id"),
        created_at=created_at or dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        version=__version__,
        models=_models_text(privacy.get("models"), report.get("k")),
        k_met=min_class is not None and k is not None and min_class >= k,
        risk_before=before,
        risk_after=after,
        risk_rows=_risk_rows(before, after),
        risk_plot=charts.risk_chart(before, after),
        class_plot=charts.class_size_chart(before["class_sizes"] if before else None, after["class_sizes"] if after else None),
        utility=utility,
        loss_plot=charts.loss_chart(utility) if utility else None,
        dist_plots=dist_plots,
        top=top,
        policy_json=json.dumps(_policy_shown(report), indent=2, default=str, sort_keys=True),
        sql=sql,
    )
    return page


def write_html(report: dict, path: str, *, sql: list | None = None, release_id=None, created_at: str | None = None, full_paths: bool | None = None) -> None:
    """Render and write atomically (a temp file beside ``path``, then renamed)."""
    doc = render(report, sql=sql, release_id=release_id, created_at=created_at, full_paths=full_paths)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(doc)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
