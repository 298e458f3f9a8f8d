"""Re-identification risk on Adult (ARX's hierarchies, 9 quasi-identifiers): the raw data and the
k=5, 5 % suppression optimum of the bundled example (precision, optimal search), each figure beside
ARX's definition of it. Optionally (--scale-rows N) an Adult-like table of N rows, to show the HTML
report stays small (aggregates only) and what risk + utility + report cost.

    flock /tmp/sqlanon-bench.lock .venv/bin/python bench/risk_adult.py [--scale-rows 10000000]

Writes bench/results/risk_adult.txt (and the printed lines).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import sqlanon  # noqa: E402
from sqlanon.run.check import check  # noqa: E402

EXAMPLE = os.path.join(HERE, "..", "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
FRACTIONS = (0.01, 0.1, 0.5)

#: ARX's definitions (org.deidentifier.arx.risk, read via the search tool) of what each line shows
ARX = {
    "highest": "RiskModelSampleRisks.getHighestRisk: 1 / smallest class size",
    "records_at_highest": "getFractionOfRecordsAffectedByHighestRisk: records in smallest classes / records",
    "average": "getAverageRisk: 1 / average class size (= classes / records)",
    "above": "RiskModelSampleRiskDistribution: share of records with risk > threshold",
    "journalist": "getEstimatedJournalistRisk: 1 / smallest class (no population table)",
    "marketer": "getEstimatedMarketerRisk: 1 / average class size (no population table)",
    "uniques": "RiskModelSampleUniqueness: share of records in classes of size 1",
    "population": "RiskModelPopulationUniqueness (Dankar rule: pi<=0.1 Pitman else min(Zayatz,SNB))",
}


def lines_for(name: str, risk: dict) -> list[str]:
    p = risk["prosecutor"]
    out = [f"== {name}: {risk['records']:,} released records in {risk['classes']:,} classes",
           f"  prosecutor highest        {p['highest']:.6f}   | {ARX['highest']}",
           f"  records at highest        {p['records_at_highest']:.6f}   | {ARX['records_at_highest']}",
           f"  prosecutor average        {p['average']:.6f}   | {ARX['average']}",
           f"  records above {p['threshold']:.2f}        {p['records_above_threshold']:.6f}   | {ARX['above']}",
           f"  journalist (bound)        {risk['journalist']['highest']:.6f}   | {ARX['journalist']}",
           f"  marketer (bound)          {risk['marketer']['average']:.6f}   | {ARX['marketer']}",
           f"  sample uniques            {risk['sample_uniques']['share']:.6f}   | {ARX['uniques']} ({risk['sample_uniques']['records']:,} records)"]
    return out


def population_lines(path: str, **kwargs) -> list[str]:
    """Population uniqueness of a table for each sampling fraction (check --risk --population-fraction)."""
    out = [f"  population uniques        | {ARX['population']}"]
    for f in FRACTIONS:
        r = check(path, COLUMNS, risk=True, population_fraction=f, **kwargs)["risk"]["population_uniques"]
        est = r.get("estimates") or {}
        parts = "  ".join(f"{m}={e['fraction']:.6f}" if e else f"{m}=n/a" for m, e in est.items())
        share = "n/a" if r["fraction"] is None else f"{r['fraction']:.6f}"
        out.append(f"    fraction {f:<5} -> {share} ({r['model']}; {parts})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale-rows", type=int, default=0, help="also run on an Adult-like table of N rows")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "risk_adult.txt"))
    args = ap.parse_args()
    qi = {c: os.path.join(EXAMPLE, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    csv = os.path.join(EXAMPLE, "adult.csv")
    lines = ["# bench/risk_adult.py: re-identification risk on Adult (30,162 rows, 9 QIs, ARX hierarchies)", ""]

    t0 = time.perf_counter()
    raw = check(csv, COLUMNS, format="csv", delimiter=";", risk=True)
    t_raw = time.perf_counter() - t0
    lines += lines_for("raw data (sqlanon check --risk)", raw["risk"]) + population_lines(csv, format="csv", delimiter=";")
    lines.append(f"  ({t_raw:.2f} s for check --risk)")
    lines.append("")

    out_dir = os.path.join(HERE, "out")
    os.makedirs(out_dir, exist_ok=True)
    t0 = time.perf_counter()
    report = sqlanon.anonymize(input=csv, format="csv", delimiter=";", qi=qi, k=5, max_suppression=0.05, metric="precision", search="optimal", output=os.path.join(out_dir, "risk_adult_k5.parquet"), overwrite=True, report=os.path.join(out_dir, "risk_adult_k5.html"), population_fraction=0.1)
    t_run = time.perf_counter() - t0
    after = report.risk["after"]
    lines += lines_for(f"k=5, 5 % optimum {json.dumps(list(report.transformation.values()))} ({report.suppressed_rows:,} suppressed)", after) + population_lines(os.path.join(out_dir, "risk_adult_k5.parquet"))
    lines.append(f"  prosecutor highest <= 1/k: {after['prosecutor']['highest'] <= 0.2}")
    lines.append(f"  ({t_run:.2f} s for the whole anonymize run incl. risk, utility, report; HTML {os.path.getsize(os.path.join(out_dir, 'risk_adult_k5.html')):,} bytes)")
    # the same release re-read from its file by check --risk
    again = check(os.path.join(out_dir, "risk_adult_k5.parquet"), COLUMNS, risk=True)["risk"]
    lines.append(f"  re-check of the written file: highest {again['prosecutor']['highest']:.6f}, average {again['prosecutor']['average']:.6f}, classes {again['classes']:,}")

    if args.scale_rows:
        sys.path.insert(0, HERE)
        from adult_like import generate

        path = os.path.join(out_dir, f"adult_like_{args.scale_rows}.parquet")
        if not os.path.exists(path):
            generate(args.scale_rows, path)
        lines.append("")
        html = os.path.join(out_dir, f"adult_like_{args.scale_rows}.html")
        t0 = time.perf_counter()
        full = sqlanon.anonymize(input=path, qi=qi, k=5, max_suppression=0.05, metric="precision", search="optimal", dry_run=True, report=html)
        t_full = time.perf_counter() - t0
        lines.append(f"== Adult-like, {args.scale_rows:,} rows (dry run with --report, transformation {list(full.transformation.values())})")
        lines.append(f"  {t_full:.1f} s in all ({full.nodes_evaluated} nodes); HTML {os.path.getsize(html):,} bytes; --json report {len(full.to_json()):,} bytes")
        lines.append(f"  risk before: highest {full.risk['before']['prosecutor']['highest']:.4f}, sample uniques {full.risk['before']['sample_uniques']['share']:.4f}, {full.risk['before']['classes']:,} classes; after: highest {full.risk['after']['prosecutor']['highest']:.4f}")
        lines.append(f"  peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    text = "\n".join(lines) + "\n"
    print(text)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    main()
