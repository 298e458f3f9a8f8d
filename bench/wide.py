"""Wide tables (issue 15): the heuristic searches on 16 and 24 integer-coded QIs.

Builds two synthetic tables as Parquet files (numpy, seeded, reproducible):

* ``w16``: 16 QIs, 75,000 rows; ``w24``: 24 QIs, 30,000 rows;
* every QI is an integer code with a domain of 8-64 values and a skewed (Zipf-like) distribution,
  some QIs correlated through a shared latent value; its hierarchy is an interval hierarchy of 3-5
  levels (leaf, bands of growing width, ``*``), written as ARX CSV files;

and prints, for k=5 at 5 % and 100 % suppression, for each heuristic (lightning and auto on the
lattice, genetic, bottom-up): ARX's Loss (geometric mean, gs 0.5), granularity (ARX's quality: higher is better), suppressed rows,
evaluations and seconds, with a 60 s limit where the search takes one (lightning, genetic).

Run (it takes several minutes; use the bench lock):

    flock /tmp/sqlanon-bench.lock .venv/bin/python bench/wide.py [--limit 60] [--only w24] [--out bench/results/wide.txt]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import sqlanon  # noqa: E402

# (name, QIs, rows)
TABLES = [("w16", 16, 75_000), ("w24", 24, 30_000)]


def qi_shapes(n_qi: int) -> list[tuple[int, list[int]]]:
    """Per QI: domain size and the band widths of its levels (3-5 levels with leaf and root)."""
    shapes = []
    for i in range(n_qi):
        domain = [8, 16, 32, 64][i % 4]
        widths = {8: [2, 4], 16: [4], 32: [4, 16], 64: [4, 16, 32]}[domain]
        if i % 3 == 2 and len(widths) > 1:
            widths = widths[:1]  # some shallower hierarchies
        shapes.append((domain, widths))
    return shapes


def write_hierarchy(path: str, domain: int, widths: list[int]) -> None:
    with open(path, "w") as fh:
        for v in range(domain):
            levels = [str(v)]
            for w in widths:
                lo = v // w * w
                levels.append(f"{lo}-{lo + w - 1}")
            levels.append("*")
            fh.write(";".join(levels) + "\n")


def build(folder: str, name: str, n_qi: int, rows: int, seed: int = 42) -> tuple[str, list[str]]:
    """The table as ``folder/name.parquet`` and its hierarchy CSVs; returns (path, --qi specs)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{name}.parquet")
    shapes = qi_shapes(n_qi)
    specs = []
    for i, (domain, widths) in enumerate(shapes):
        hpath = os.path.join(folder, f"{name}_h{i}.csv")
        write_hierarchy(hpath, domain, widths)
        specs.append(f"q{i}={hpath}")
    if not os.path.exists(path):
        rng = np.random.default_rng(seed)
        latent = rng.random(rows)
        cols = {"id": np.arange(rows)}
        for i, (domain, _) in enumerate(shapes):
            # skewed: a power of a uniform draw (exponent 1.5-3.5); every other QI pulled toward a
            # shared latent value, so that QIs are correlated
            draw = rng.random(rows) ** (1.5 + (i % 5) * 0.5)
            if i % 2:
                draw = 0.6 * draw + 0.4 * latent
            cols[f"q{i}"] = np.minimum(domain - 1, np.floor(domain * draw)).astype(np.int32)
        cols["s"] = rng.integers(0, 5, rows).astype(np.int32)
        pq.write_table(pa.table(cols), path)
    return path, specs


def run_one(db, specs, search, k, sup, limit, metric="loss"):
    opts = {}
    if search in ("lightning", "auto"):
        opts = {"time_limit": limit}
    elif search == "genetic":
        opts = {"time_limit": limit, "iterations": 1_000_000, "population": 100, "seed": 1}
    started = time.perf_counter()
    cpu0 = cpu_seconds()
    try:
        report = sqlanon.anonymize(input=db, qi=specs, k=k, max_suppression=sup, search=search,
                                   metric="lm" if search == "genetic" else metric, search_options=opts, dry_run=True)
    except sqlanon.errors.SqlanonError as err:
        return {"search": search, "error": str(err)[:160], "seconds": round(time.perf_counter() - started, 1)}
    u = report.get("arx_quality", {})
    evaluations = report.get("heuristic", {}).get("evaluations") or report.get("evaluations") or report["nodes_evaluated"]
    return {
        "search": report["search"] if search != "auto" else f"auto->{report['search']}",
        "loss": u.get("loss"),
        "granularity": u.get("granularity"),
        "suppressed": report["suppressed_rows"],
        "evaluations": evaluations,
        "evals_per_s": report.get("evaluations_per_second"),
        "seconds": round(time.perf_counter() - started, 1),
        "stopped_by": report.get("heuristic", {}).get("stopped_by"),
        "cpu": round(cpu_seconds() - cpu0, 1),
    }


def cpu_seconds() -> float:
    """CPU time of this process (all its threads): robust to what else runs on the machine."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--searches", default="lightning,auto,genetic,bottom-up")
    ap.add_argument("--sup", default="0.05,1.0")
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = []

    def say(line=""):
        print(line, flush=True)
        lines.append(line)

    say(f"bench/wide.py  limit={args.limit}s  duckdb {duckdb.__version__}  k=5")
    for name, n_qi, rows in TABLES:
        if args.only and name != args.only:
            continue
        db, specs = build(args.folder, name, n_qi, rows)
        nodes = 1
        for _, widths in qi_shapes(n_qi):
            nodes *= len(widths) + 2
        say(f"\n{name}: {n_qi} QIs, {rows:,} rows, lattice {nodes:.3g} nodes")
        say(f"{'search':<18}{'max_sup':>8}{'loss':>9}{'granul.':>9}{'suppr.':>8}{'evals':>8}{'evals/s':>9}{'seconds':>9}{'cpu s':>7}{'load1':>7}  stopped")
        for sup in [float(s) for s in args.sup.split(",")]:
            for search in args.searches.split(","):
                r = run_one(db, specs, search, 5, sup, args.limit)
                if "error" in r:
                    say(f"{search:<18}{sup:>8}  error after {r['seconds']} s: {r['error']}")
                    continue
                eps = r["evals_per_s"] if r["evals_per_s"] is not None else r["evaluations"] / max(r["seconds"], 1e-9)
                # load average of the shared machine right after the run (other processes compete)
                say(f"{r['search']:<18}{sup:>8}{r['loss']:>9.4f}{r['granularity']:>9.4f}{r['suppressed']:>8}{r['evaluations']:>8}{eps:>9.1f}{r['seconds']:>9}{r['cpu']:>7}{os.getloadavg()[0]:>7.1f}  {r['stopped_by'] or ''}")
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
