"""``sqlanon check``'s human output: an aligned two-column table (nested figures flattened to
``metrics.aecs``-style keys, no JSON), the release checked by and its models' verdicts, then the
risk lines. ``--json`` prints the object itself.

>>> print("\\n".join(check_lines({"rows": 10, "k": 2, "metrics": {"aecs": 2.5}, "class_size_histogram": [[2, 5]], "k_anonymous": True})))
rows                  10
k                     2
metrics.aecs          2.5
k_anonymous           yes
class sizes           2 x 5
"""

from __future__ import annotations

from typing import Any

from sqlanon.risk import text_lines

#: keys shown in their own section (or not at all, ``queries`` last)
_APART = ("risk", "release", "verdicts", "not_checked", "class_size_histogram", "queries")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) if value else "(none)"
    return "(none)" if value is None else str(value)


def _flat(prefix: str, value: Any) -> list[tuple[str, str]]:
    if isinstance(value, dict):
        return [pair for key, v in value.items() for pair in _flat(f"{prefix}.{key}" if prefix else str(key), v)]
    return [(prefix, _text(value))]


def _histogram(pairs: list) -> str:
    return ", ".join(f"{size} x {count}" if size != "more" else f"more: {count}" for size, count in pairs)


def _release_pairs(release: dict) -> list[tuple[str, str]]:
    models = ", ".join(f"{m.get('model')} ({', '.join(f'{k}={v}' for k, v in m.items() if k != 'model')})" for m in release.get("models") or [])
    return [("release", f"{release.get('id')} of {release.get('registry')} (written to {release.get('target')}, {release.get('created_at')})"),
            ("checked by", models or "(no privacy model recorded)"),
            ("budget", f"{release.get('suppression_budget'):,} rows may be suppressed" if release.get("suppression_budget") is not None else "(none)")]


def _verdict_lines(verdicts: list[dict]) -> list[str]:
    rows = [("model", "required", "measured", "ok")] + [(v["model"], v["required"], _text(v["measured"]), "yes" if v["ok"] else "NO") for v in verdicts]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]


def check_lines(result: dict) -> list[str]:
    """The lines ``sqlanon check`` prints for ``result`` (without ``--json``)."""
    pairs: list[tuple[str, str]] = []
    if result.get("release"):
        pairs += _release_pairs(result["release"])
    for key, value in result.items():
        if key not in _APART:
            pairs += _flat(str(key), value)
    if result.get("class_size_histogram") is not None:
        pairs.append(("class sizes", _histogram(result["class_size_histogram"])))
    if result.get("not_checked"):
        pairs.append(("not checked", ", ".join(result["not_checked"])))
    if "queries" in result:
        pairs.append(("queries", _text(result["queries"])))
    width = max([22, *(len(label) + 2 for label, _ in pairs)])
    lines = [f"{label:<{width}}{text}" for label, text in pairs]
    if result.get("verdicts"):
        lines += ["", *_verdict_lines(result["verdicts"])]
    if result.get("risk"):
        lines += ["", *text_lines(result["risk"])]
    return lines
