"""Report: the JSON object of a run (stable keys, see README) and an HTML rendering of it."""

from __future__ import annotations

import html
import json
import os

STABLE_KEYS = ("search", "k", "transformation", "metric", "suppressed_rows", "rows", "nodes_evaluated", "queries", "seconds", "output")


def write_html(report: dict, path: str) -> None:
    def table(d: dict) -> str:
        rows = "".join(
            f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(json.dumps(v, default=str) if isinstance(v, (dict, list)) else str(v))}</td></tr>"
            for k, v in d.items()
        )
        return f"<table>{rows}</table>"

    summary = {k: report.get(k) for k in STABLE_KEYS}
    doc = (
        "<!doctype html><html><head><meta charset='utf-8'><title>sqlanon report</title>"
        "<style>body{font-family:sans-serif;margin:2em}th{text-align:left;padding-right:1em;vertical-align:top}"
        "td{font-family:monospace}table{border-collapse:collapse;margin-bottom:1.5em}tr{border-bottom:1px solid #ddd}</style>"
        "</head><body><h1>sqlanon release report</h1><h2>Summary</h2>" + table(summary)
        + "<h2>Transformation</h2>" + table(report.get("transformation", {}))
        + "<h2>Privacy achieved</h2>" + table(report.get("privacy", {}))
        + "<h2>Hierarchies</h2>" + "".join(table(h) for h in report.get("hierarchies", []))
        + "</body></html>"
    )
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(doc)
    os.replace(tmp, path)
