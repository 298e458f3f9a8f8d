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
engine thread; ``sql``: the new path with the genetic search's batches by SQL, not in-process).
The statement counts (``stmts``) do not depend on the machine's load, and the CPU seconds of this
process per evaluation (``cpu ms/eval``, setup included) little; the rates do:

    .venv/bin/python bench/wide.py --rates --limit 20 [--paths new,old] [--loads idle,busy]

``--bottom-up-ab OLD_TREE`` (issue 26: bottom-up on w24 under 60 s) runs the bottom-up search on
w24 (k=5, ``--sup``, default 1.0 = ``--max-suppression 1``) in fresh processes, alternating the
sqlanon of ``OLD_TREE`` (e.g. an exported older commit) with this tree's (``--one-thread``: and
this tree's with the search on one engine thread), ``--repeat`` times each, and prints seconds,
search seconds, CPU seconds, statements and the load beside each run:

    .venv/bin/python bench/wide.py --bottom-up-ab /tmp/old-sqlanon --sup 1.0 --repeat 2

``--wide-table`` (issue 44) runs lightning, the genetic search (seeded from lightning, ARX's
Loss), ``auto`` (lightning then the genetic search seeded from it, within one limit) and the
bounded optimal search on the plain wide tables of ``bench/wide_table.py`` (``t24``: 24 integer QIs x 30,000 rows,
six of ~3,000 values under ``bands:10,100,1000`` and eighteen of 16 under ``bands:2,4,8``, the
table whose packed keys overflowed; ``t16``: 16 QIs x 73,000 rows, four wide), k=5, under each
``--limits`` (default 20,60 s) and ``--sup``, each run in a fresh process, and prints Loss,
evaluations, evaluations per second, seconds, the process's peak RSS, lightning's seed seconds (``seed s``: the genetic search's and auto's split) and which search produced
the answer (the genetic search's is ``lightning`` when it found nothing better than its seed):

    .venv/bin/python bench/wide.py --wide-table --limits 20,60 --sup 1.0,0.05 --out bench/results/wide.txt
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
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


#: lightning options of the ``untied`` path (one node expanded at a time, 32 nodes per statement)
EXTRA_OPTS: dict = {}
#: genetic options of the path (``sql``, ``old``: every batch by SQL, ``local_rows=0``)
GENETIC_OPTS: dict = {}


def run_one(db, specs, search, k, sup, limit, metric="loss", iterations=None):
    opts = {}
    if search in ("lightning", "auto"):
        opts = {"time_limit": limit, **EXTRA_OPTS}
    elif search == "genetic":
        opts = {"time_limit": limit, "iterations": 1_000_000, "population": 100, "seed": 1, **GENETIC_OPTS}
        if iterations:  # a fixed amount of work instead of a time limit
            opts = {"iterations": iterations, "population": 100, "seed": 1, **GENETIC_OPTS}
    started = time.perf_counter()
    cpu0 = cpu_seconds()
    try:
        report = sqlanon.anonymize(input=db, qi=specs, k=k, max_suppression=sup, search=search,
                                   metric="lm" if search in ("genetic", "bottom-up") else metric, search_options=opts, dry_run=True)
    except sqlanon.errors.SqlanonError as err:
        return {"search": search, "error": str(err)[:160], "seconds": round(time.perf_counter() - started, 1)}
    u = (report.loss or {})
    evaluations = report.extra.get("heuristic", {}).get("evaluations") or report.extra.get("evaluations") or report.nodes_evaluated
    return {
        "search": report.search if search != "auto" else f"auto->{report.search}",
        "loss": u.get("loss"),
        "granularity": u.get("granularity"),
        "suppressed": report.suppressed_rows,
        "evaluations": evaluations,
        "evals_per_s": report.extra.get("evaluations_per_second"),
        "metric": report.metric.value,
        "statements": report.queries,
        "search_seconds": report.extra.get("heuristic", {}).get("seconds") or report.extra.get("search_seconds"),
        "seconds": round(time.perf_counter() - started, 1),
        "stopped_by": report.extra.get("heuristic", {}).get("stopped_by"),
        "cpu": round(cpu_seconds() - cpu0, 2),
    }


def cpu_seconds() -> float:
    """CPU time of this process (all its threads): robust to what else runs on the machine."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def busy_loop() -> None:  # pragma: no cover - a child process of the bench
    while True:
        pass


def set_path(path: str) -> None:
    """``old``: the joined batch statement (before issue 26's wide work) and, for the genetic
    search, every child's LM computed per row; ``new``: today's defaults (the branch statements
    over keyed sets; the genetic search's LM of feasible children only, once all members are); ``new-1thread``: those on one engine thread
    (``sqlanon.run.api.SERIAL_SEARCHES``); ``untied``: the new path with lightning expanding one
    node at a time, 32 nodes per statement (before tied nodes were expanded together); ``sql``:
    the new path with the genetic search's batches and lightning's nodes by SQL
    (``local_rows=0``: the frequency set not fetched and grouped in-process,
    :mod:`sqlanon.search.genetic.local`, :mod:`sqlanon.stats.local`; ``old`` too)."""
    from sqlanon.run import api
    from sqlanon.search.genetic import planner
    from sqlanon.search.lightning import planner as lightning
    from sqlanon.stats import deltas

    lightning.TIES = path != "untied"
    EXTRA_OPTS.clear()
    GENETIC_OPTS.clear()
    if path in ("sql", "old"):
        GENETIC_OPTS["local_rows"] = 0
        EXTRA_OPTS["local_rows"] = 0
    if path == "untied":
        EXTRA_OPTS["batch"] = 32
    defaults = set_path.__dict__.setdefault("defaults", (deltas.DELTA_ROWS, api.SERIAL_SEARCHES))
    deltas.DELTA_ROWS = 10**18 if path == "old" else defaults[0]
    planner.LM_WITHIN = path != "old"
    api.SERIAL_SEARCHES = ("lightning", "genetic", "bottom-up") if path == "new-1thread" else defaults[1]


def rates(args, say) -> None:
    import multiprocessing

    db, specs = build(args.folder, "w24", 24, 30_000)
    work = f"limit {args.limit} s" + (f" (genetic: {args.iterations} iterations, no limit)" if args.iterations else "")
    say(f"\nw24: 24 QIs, 30,000 rows, k=5, 5 % suppression, {work}; machine load before: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")
    say(f"{'search':<16}{'path':<12}{'load':<6}{'evals':>7}{'evals/s':>9}{'loss':>9}{'metric':>9}{'stmts':>7}{'stmts/eval':>11}{'seconds':>9}{'cpu s':>7}{'cpu ms/eval':>12}{'load1':>7}")
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
                    r = run_one(db, specs, search, 5, 0.05, args.limit, iterations=args.iterations if search == "genetic" else None)
                    if "error" in r:
                        say(f"{search:<11}{path:<12}{load:<6} error after {r['seconds']} s: {r['error']}")
                        continue
                    eps = r["evals_per_s"] if r["evals_per_s"] is not None else r["evaluations"] / max(r["search_seconds"] or r["seconds"], 1e-9)
                    got[(search, path, load)] = (eps, r["loss"])
                    say(f"{search:<11}{path:<12}{load:<6}{r['evaluations']:>7}{eps:>9.1f}{r['loss']:>9.4f}{r['metric']:>9.4f}{r['statements']:>7}{r['statements'] / max(r['evaluations'], 1):>11.2f}{r['seconds']:>9}{r['cpu']:>7}{1000 * r['cpu'] / max(r['evaluations'], 1):>12.1f}{os.getloadavg()[0]:>7.1f}")
        finally:
            if child is not None:
                child.terminate()
                child.join()
    set_path("new")
    say("")
    for search in ("lightning", "genetic"):
        for load in args.loads.split(","):
            new = got.get((search, "new", load))
            for other in ("sql", "old"):
                old = got.get((search, other, load))
                if new and old:
                    say(f"{search} {load}: new/{other} evals/s {new[0] / max(old[0], 1e-9):.2f}x, loss {new[1]:.4f} vs {old[1]:.4f}")
        idle, busy = got.get((search, "new", "idle")), got.get((search, "new", "busy"))
        if idle and busy:
            say(f"{search} new: busy/idle evals/s {busy[0] / max(idle[0], 1e-9):.2f}, loss busy vs idle {100 * (busy[1] - idle[1]) / max(idle[1], 1e-12):+.2f} %")


# a child process of --bottom-up-ab: sqlanon from the tree given, the bench from this folder
AB_CHILD = """
import json, sys
tree, bench, sup, folder, serial = sys.argv[1:6]
sys.path.insert(0, tree)
import sqlanon
if serial == "1":  # the search's statements on one engine thread
    from sqlanon.run import api
    api.SERIAL_SEARCHES = (*api.SERIAL_SEARCHES, "bottom-up")
sys.path.insert(1, bench)
import wide
db, specs = wide.build(folder, "w24", 24, 30_000)
print(json.dumps(wide.run_one(db, specs, "bottom-up", 5, float(sup), 60)))
"""


def bottom_up_ab(args, say) -> None:
    trees = [("old", os.path.abspath(args.bottom_up_ab), "0"), ("new", os.path.dirname(HERE), "0")]
    if args.one_thread:
        trees.append(("new-1t", os.path.dirname(HERE), "1"))
    wide_db = build(args.folder, "w24", 24, 30_000)[0]
    say(f"\nw24 ({wide_db}): 24 QIs, 30,000 rows, bottom-up, k=5; old = {trees[0][1]}, new = {trees[1][1]}; cores: {os.cpu_count()}")
    say(f"{'tree':<6}{'max_sup':>8}{'seconds':>9}{'search s':>10}{'cpu s':>8}{'stmts':>7}{'probes':>8}{'suppr.':>8}{'loss':>9}{'LM':>9}{'load1 before/after':>20}")
    got: dict[tuple[str, float], list[dict]] = {}
    for sup in [float(x) for x in args.sup.split(",")]:
        for rep in range(args.repeat):
            for label, tree, serial in (trees if rep % 2 == 0 else trees[::-1]):
                before = os.getloadavg()[0]
                out = subprocess.run([sys.executable, "-c", AB_CHILD, tree, HERE, str(sup), args.folder, serial], capture_output=True, text=True, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                if "error" in r:
                    say(f"{label:<6}{sup:>8}  error after {r['seconds']} s: {r['error']}")
                    continue
                got.setdefault((label, sup), []).append(r)
                say(f"{label:<6}{sup:>8}{r['seconds']:>9}{r['search_seconds']:>10}{r['cpu']:>8}{r['statements']:>7}{r['evaluations']:>8}{r['suppressed']:>8}"
                    f"{r['loss']:>9.4f}{r['metric']:>9.4f}{before:>10.1f} / {os.getloadavg()[0]:.1f}")
        for other in ("new", "new-1t"):
            old, new = got.get(("old", sup)), got.get((other, sup))
            if not (old and new):
                continue
            med = {k: (round(statistics.median(x[k] for x in old), 2), round(statistics.median(x[k] for x in new), 2)) for k in ("seconds", "search_seconds", "cpu", "statements")}
            say(f"max_sup {sup}: median old -> {other}: seconds {med['seconds'][0]} -> {med['seconds'][1]} ({med['seconds'][0] / max(med['seconds'][1], 1e-9):.1f}x), "
                f"search s {med['search_seconds'][0]} -> {med['search_seconds'][1]}, cpu s {med['cpu'][0]} -> {med['cpu'][1]} "
                f"({med['cpu'][0] / max(med['cpu'][1], 1e-9):.1f}x), statements {med['statements'][0]:.0f} -> {med['statements'][1]:.0f}; "
                f"same release: {all((a['suppressed'], round(a['loss'], 9)) == (b['suppressed'], round(b['loss'], 9)) for a in old for b in new)}")


#: (name, QIs, wide QIs, rows) of --wide-table (bench/wide_table.py)
WIDE_TABLES = [("t16", 16, 4, 73_000), ("t24", 24, 6, 30_000)]

# a child process of --wide-table: one search in a fresh process (its peak RSS is its own)
WIDE_CHILD = """
import json, resource, sys, time
tree, bench, path, qis, wide, search, sup, limit = sys.argv[1:9]
sys.path.insert(0, tree)
sys.path.insert(1, bench)
import sqlanon, wide_table
opts = {"time_limit": float(limit)}
if search == "genetic":
    opts.update({"iterations": 10**9, "population": 100, "seed": 1})
started = time.perf_counter()
try:
    r = sqlanon.anonymize(input=path, qi=wide_table.qi_specs(int(qis), int(wide)), k=5, max_suppression=float(sup), search=search,
                          metric="loss", search_options=opts, dry_run=True)
except sqlanon.errors.SqlanonError as err:
    print(json.dumps({"error": str(err)[:200], "seconds": round(time.perf_counter() - started, 1)}))
    raise SystemExit(0)
h = r.extra.get("heuristic", {})
evaluations = h.get("evaluations") or r.extra.get("evaluations") or r.nodes_evaluated
seconds = h.get("seconds") or r.extra.get("search_seconds")
print(json.dumps({
    "loss": r.metric.value, "suppressed": r.suppressed_rows, "evaluations": evaluations,
    "evals_per_s": r.extra.get("evaluations_per_second") or (evaluations / seconds if seconds else None),
    "search_seconds": seconds, "seconds": round(time.perf_counter() - started, 1),
    "rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    "answer_from": (r.extra.get("search_auto") or {}).get("answer_from") or r.extra.get("answer_from", search), "stopped_by": h.get("stopped_by") or r.stopped_by,
    "seed": (r.extra.get("seed_node") or {}).get("value"),
    "seed_s": r.extra.get("seed_seconds"),
}))
"""


def wide_table_runs(args, say) -> None:
    """--wide-table: lightning, the seeded genetic search and the bounded optimal search on
    bench/wide_table.py's tables."""
    import wide_table

    tree = os.path.dirname(HERE)
    say(f"{'table':<6}{'search':<16}{'limit':>6}{'max_sup':>8}{'loss':>9}{'seed loss':>10}{'suppr.':>8}{'evals':>8}{'evals/s':>9}{'search s':>9}{'seconds':>8}{'RSS MB':>8}{'seed s':>7}  answer from  (stopped; load1)")
    for name, n_qi, n_wide, rows in WIDE_TABLES:
        if args.only and name != args.only:
            continue
        path = wide_table.write(os.path.join(args.folder, f"{name}.parquet"), rows, n_qi, n_wide)
        for limit in [float(x) for x in args.limits.split(",")]:
            for sup in [float(x) for x in args.sup.split(",")]:
                for search in args.wide_searches.split(","):
                    out = subprocess.run([sys.executable, "-c", WIDE_CHILD, tree, HERE, path, str(n_qi), str(n_wide), search, str(sup), str(limit)],
                                         capture_output=True, text=True, check=True)
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    if "error" in r:
                        say(f"{name:<6}{search:<16}{limit:>6.0f}{sup:>8}  error after {r['seconds']} s: {r['error']}")
                        continue
                    seed = f"{r['seed']:.4f}" if r.get("seed") is not None else "-"
                    say(f"{name:<6}{search:<16}{limit:>6.0f}{sup:>8}{r['loss']:>9.4f}{seed:>10}{r['suppressed']:>8}{r['evaluations']:>8}{(r['evals_per_s'] or 0):>9.1f}"
                        f"{(r['search_seconds'] or 0):>9.1f}{r['seconds']:>8}{r['rss_mb']:>8}{(r.get('seed_s') or 0):>7.1f}  {r['answer_from']:<12} ({r['stopped_by']}; {os.getloadavg()[0]:.1f})")


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
    ap.add_argument("--iterations", type=int, default=None, help="with --rates: the genetic search runs this many iterations, no time limit "
                    "(the same work on every path and load: its CPU ms per evaluation compare across a loaded machine)")
    ap.add_argument("--bottom-up-ab", default=None, metavar="OLD_TREE", help="bottom-up on w24, OLD_TREE's sqlanon vs this one's, alternated")
    ap.add_argument("--repeat", type=int, default=2, help="runs per tree with --bottom-up-ab")
    ap.add_argument("--one-thread", action="store_true", help="with --bottom-up-ab, also this tree with the search on one engine thread (new-1t)")
    ap.add_argument("--wide-table", action="store_true", help="issue 44: lightning and seeded genetic on bench/wide_table.py's t16 and t24 (Loss, evals/s, peak RSS)")
    ap.add_argument("--limits", default="20,60", help="with --wide-table: the time limits (s)")
    ap.add_argument("--wide-searches", default="lightning,genetic,auto,optimal", help="with --wide-table: the searches (optimal: bounded above 2,000,000 nodes)")
    args = ap.parse_args()
    lines = []

    def say(line=""):
        print(line, flush=True)
        lines.append(line)

    if args.bottom_up_ab:
        if args.sup == "0.05,1.0":  # the default of the other modes: this one's goal is --max-suppression 1
            args.sup = "1.0"
        say(f"\n## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: bench/wide.py --bottom-up-ab {args.bottom_up_ab} --sup {args.sup} --repeat {args.repeat}"
            + (" --one-thread" if args.one_thread else "")
            + f"  (duckdb {duckdb.__version__}, load1 {os.getloadavg()[0]:.1f})")
        bottom_up_ab(args, say)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write("\n".join(lines) + "\n")
        return
    if args.wide_table:
        say(f"\n## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: bench/wide.py --wide-table --limits {args.limits} --sup {args.sup}"
            f"  (duckdb {duckdb.__version__}, {os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f}); k=5, metric loss (ARX's Loss, gs 0.5)")
        wide_table_runs(args, say)
        if args.out:
            with open(args.out, "a") as fh:
                fh.write("\n".join(lines) + "\n")
        return
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
