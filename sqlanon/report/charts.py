"""Chart geometry for the HTML report: plain dicts of rectangles and labels that the template draws
as inline SVG (no script, no network). Every number here comes from the report's aggregates.

>>> c = grouped_bars("t", ["a", "b"], [("before", [0.5, 1.0]), ("after", [0.25, 0.0])])
>>> [round(b["w"], 1) for b in c["bars"]][:2], c["height"] > 0  # category a: before 0.5, after 0.25 of 400 px
([200.0, 100.0], True)
"""

from __future__ import annotations

SERIES_COLORS = ("#9aa5b1", "#2b6cb0", "#c05621", "#2f855a")
BUCKETS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 9), (10, 19), (20, 49), (50, 99), (100, 999), (1000, None))


def _label(lo, hi) -> str:
    if hi is None:
        return f"{lo:,}+"
    return str(lo) if lo == hi else f"{lo}-{hi}"


def class_size_buckets(hist: list) -> list[float]:
    """Share of records per class-size bucket, from ``[size, classes]`` pairs."""
    records = [0] * len(BUCKETS)
    total = 0
    for entry in hist:
        size, classes = entry[0], entry[1]
        if isinstance(size, str):  # a summed range of a compacted histogram: ["lo-hi", classes, records]
            size, n = int(size.split("-")[0]), entry[2]
        else:
            n = size * classes
        total += n
        for i, (lo, hi) in enumerate(BUCKETS):
            if size >= lo and (hi is None or size <= hi):
                records[i] += n
                break
    return [r / total if total else 0.0 for r in records]


def grouped_bars(title: str, categories: list[str], series: list[tuple[str, list[float | None]]], *, max_value: float | None = None, percent: bool = True, label_width: int = 170, width: int = 640) -> dict:
    """Horizontal grouped bars: one row per category, one bar per series."""
    bar_h, gap, top = 14, 10, 28
    plot_w = width - label_width - 70
    peak = max_value if max_value is not None else max([v for _, vals in series for v in vals if v is not None] + [0.0])
    peak = peak or 1.0
    bars, labels = [], []
    y = top
    for ci, cat in enumerate(categories):
        labels.append({"x": label_width - 8, "y": y + bar_h * len(series) / 2 + 4, "text": cat, "anchor": "end"})
        for si, (name, vals) in enumerate(series):
            v = vals[ci]
            w = 0.0 if v is None else max(plot_w * v / peak, 0.0)
            text = "n/a" if v is None else (f"{100 * v:.2f} %" if percent else f"{v:.4g}")
            bars.append({"x": label_width, "y": y, "w": w, "h": bar_h - 2, "fill": SERIES_COLORS[si % len(SERIES_COLORS)], "title": f"{cat} ({name}): {text}"})
            labels.append({"x": label_width + w + 4, "y": y + bar_h - 4, "text": text, "anchor": "start", "small": True})
            y += bar_h
        y += gap
    legend = [{"x": label_width + 110 * i, "y": 8, "fill": SERIES_COLORS[i % len(SERIES_COLORS)], "text": name} for i, (name, _) in enumerate(series)]
    return {"title": title, "width": width, "height": y + 6, "bars": bars, "labels": labels, "legend": legend, "axis_x": label_width, "axis_top": top - 4, "axis_bottom": y - gap + 2}


def column_bars(title: str, categories: list[str], series: list[tuple[str, list[float]]], *, width: int = 640, height: int = 220) -> dict:
    """Vertical grouped bars (class-size histogram): categories along x, shares up to the peak."""
    left, bottom, top = 48, 36, 24
    plot_w, plot_h = width - left - 10, height - bottom - top
    peak = max([v for _, vals in series for v in vals] + [0.0]) or 1.0
    slot = plot_w / max(len(categories), 1)
    bw = (slot - 6) / max(len(series), 1)
    bars, labels = [], []
    for ci, cat in enumerate(categories):
        x0 = left + ci * slot + 3
        labels.append({"x": x0 + (slot - 6) / 2, "y": height - bottom + 14, "text": cat, "anchor": "middle", "small": True})
        for si, (name, vals) in enumerate(series):
            h = plot_h * vals[ci] / peak
            bars.append({"x": x0 + si * bw, "y": top + plot_h - h, "w": bw - 1, "h": h, "fill": SERIES_COLORS[si % len(SERIES_COLORS)], "title": f"classes of size {cat} ({name}): {100 * vals[ci]:.2f} % of records"})
    for frac in (0.0, 0.5, 1.0):
        labels.append({"x": left - 4, "y": top + plot_h - plot_h * frac + 4, "text": f"{100 * peak * frac:.0f} %", "anchor": "end", "small": True})
    labels.append({"x": left + plot_w / 2, "y": height - 4, "text": "class size (records sharing the same quasi-identifiers)", "anchor": "middle", "small": True})
    legend = [{"x": left + 110 * i, "y": 8, "fill": SERIES_COLORS[i % len(SERIES_COLORS)], "text": name} for i, (name, _) in enumerate(series)]
    return {"title": title, "width": width, "height": height, "bars": bars, "labels": labels, "legend": legend, "axis_x": left, "axis_top": top, "axis_bottom": top + plot_h, "baseline": {"x1": left, "x2": left + plot_w, "y": top + plot_h}}


def class_size_chart(before: list | None, after: list | None) -> dict:
    cats = [_label(lo, hi) for lo, hi in BUCKETS]
    series = []
    if before is not None:
        series.append(("input", class_size_buckets(before)))
    if after is not None:
        series.append(("release", class_size_buckets(after)))
    return column_bars("Records by the size of their equivalence class", cats, series)


RISK_ROWS = (
    ("highest prosecutor risk", lambda r: r["prosecutor"]["highest"]),
    ("average prosecutor risk", lambda r: r["prosecutor"]["average"]),
    ("records above threshold", lambda r: r["prosecutor"]["records_above_threshold"]),
    ("sample uniques", lambda r: r["sample_uniques"]["share"]),
    ("population uniques", lambda r: (r.get("population_uniques") or {}).get("fraction")),
)


def risk_chart(before: dict | None, after: dict | None) -> dict:
    rows = [(name, fn) for name, fn in RISK_ROWS if name != "population uniques" or (after or before or {}).get("population_uniques")]
    series = []
    for label, r in (("input", before), ("release", after)):
        if r is not None:
            series.append((label, [fn(r) for _, fn in rows]))
    return grouped_bars("Re-identification risk", [name for name, _ in rows], series, max_value=1.0)


def loss_chart(utility: dict) -> dict:
    names = list(utility)
    series = [("LM", [utility[c]["lm"] for c in names])]
    if any(utility[c].get("precision") is not None for c in names):
        series.append(("precision loss", [utility[c].get("precision") for c in names]))
    return grouped_bars("Information loss per quasi-identifier (0 = none, 1 = all)", names, series, max_value=1.0)


def distribution_chart(name: str, side: str, values: list[dict], color: int) -> dict:
    chart = grouped_bars(f"{name}: {side}", ["NULL" if v["value"] is None else str(v["value"])[:28] for v in values], [(side, [v["share"] for v in values])], label_width=190, width=420)
    for b in chart["bars"]:
        b["fill"] = SERIES_COLORS[color]
    chart["legend"] = []
    return chart
