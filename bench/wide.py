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

``--rates`` (issue 26) prints instead, on w24 (k=5, 5 %), lightning's nodes/s and the genetic
search's evaluations/s with the loss each reaches under ``--limit`` (20 s there), each search
run *idle* and *busy* (with one CPU-bound process beside it, started by the bench), and each on
the ``new`` path (branch statements over keyed sets) and the ``old`` one (the joined batch
statement), so that ratios come from one run of the script (``new-1thread``: the new path on one
engine thread).
The statement counts (``stmts``) do not depend on the machine's load; the rates do:

    .venv/bin/python bench/wide.py --rates --limit 20 [--paths new,old] [--loads idle,busy]
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
        "metric": (report.get("metric") or {}).get("value", float("nan")),
        "statements": report.get("queries", 0),
        "search_seconds": report.get("heuristic", {}).get("seconds") or report.get("search_seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "stopped_by": report.get("heuristic", {}).get("stopped_by"),
        "cpu": round(cpu_seconds() - cpu0, 1),
    }


def cpu_seconds() -> float:
    """CPU time of this process (all its threads): robust to what else runs on the machine."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def busy_loop() -> None:  # pragma: no cover - a child process of the bench
    while True:
        pass


def set_path(path: str) -> None:
    """``old``: the joined batch statement (before issue 26's wide work); ``new``: today's
    defaults (the branch statements over keyed sets); ``new-1thread``: those on one engine thread
    (``sqlanon.run.api.SERIAL_SEARCHES``)."""
    from sqlanon.run import api
    from sqlanon.stats import deltas

    defaults = set_path.__dict__.setdefault("defaults", (deltas.DELTA_ROWS, api.SERIAL_SEARCHES))
    deltas.DELTA_ROWS = 10**18 if path == "old" else defaults[0]
    api.SERIAL_SEARCHES = ("lightning", "genetic", "bottom-up") if path == "new-1thread" else defaults[1]


def rates(args, say) -> None:
    import multiprocessing

    db, specs = build(args.folder, "w24", 24, 30_000)
    say(f"\nw24: 24 QIs, 30,000 rows, k=5, 5 % suppression, limit {args.limit} s; machine load before: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")
    say(f"{'search':<11}{'path':<12}{'load':<6}{'evals':>7}{'evals/s':>9}{'loss':>9}{'metric':>9}{'stmts':>7}{'stmts/eval':>11}{'seconds':>9}{'cpu s':>7}{'load1':>7}")
    got = {}
    for load in args.loads.split(","):
        child = None
        if load == "busy":
            child = multiprocessing.Process(target=busy_loop, daemon=True)
            child.start()
        try:
            for search in args.searches.split(","):
                for path in args.paths.split(","):
                    set_path(path)
                    r = run_one(db, specs, search, 5, 0.05, args.limit)
                    if "error" in r:
                        say(f"{search:<11}{path:<12}{load:<6} error after {r['seconds']} s: {r['error']}")
                        continue
                    eps = r["evals_per_s"] if r["evals_per_s"] is not None else r["evaluations"] / max(r["search_seconds"] or r["seconds"], 1e-9)
                    got[(search, path, load)] = (eps, r["loss"])
                    say(f"{search:<11}{path:<12}{load:<6}{r['evaluations']:>7}{eps:>9.1f}{r['loss']:>9.4f}{r['metric']:>9.4f}{r['statements']:>7}{r['statements'] / max(r['evaluations'], 1):>11.2f}{r['seconds']:>9}{r['cpu']:>7}{os.getloadavg()[0]:>7.1f}")
        finally:
            if child is not None:
                child.terminate()
                child.join()
    set_path("new")
    say("")
    for search in ("lightning", "genetic"):
        for load in args.loads.split(","):
            new, old = got.get((search, "new", load)), got.get((search, "old", load))
            if new and old:
                say(f"{search} {load}: new/old evals/s {new[0] / max(old[0], 1e-9):.2f}x, loss {new[1]:.4f} vs {old[1]:.4f}")
        idle, busy = got.get((search, "new", "idle")), got.get((search, "new", "busy"))
        if idle and busy:
            say(f"{search} new: busy/idle evals/s {busy[0] / max(idle[0], 1e-9):.2f}, loss busy vs idle {100 * (busy[1] - idle[1]) / max(idle[1], 1e-12):+.2f} %")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--only", default=None)
    ap.add_argument("--searches", default=None, help="default: lightning,auto,genetic,bottom-up (with --rates: lightning,genetic)")
    ap.add_argument("--sup", default="0.05,1.0")
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--rates", action="store_true", help="w24 rates idle and busy, new and old paths (issue 26)")
    ap.add_argument("--paths", default="new,old")
    ap.add_argument("--loads", default="idle,busy")
    args = ap.parse_args()
    lines = []

    def say(line=""):
        print(line, flush=True)
        lines.append(line)

    if args.searches is None:
        args.searches = "lightning,genetic" if args.rates else "lightning,auto,genetic,bottom-up"
    if args.rates:
        say(f"bench/wide.py --rates  limit={args.limit}s  duckdb {duckdb.__version__}")
        rates(args, say)
        if args.out:
            with open(args.out, "w") as fh:
                fh.write("\n".join(lines) + "\n")
        return

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
