"""Where one anonymize run goes, phase by phase and statement by statement (issue 26).

Runs the optimal search on an Adult-like Parquet file in this process (DuckDB, ``--threads``),
timing every SQL statement (wall and CPU seconds of the process), and prints per phase its wall
and CPU seconds and its statements' share, then the search's statements by kind (CREATE of a saved
set or SELECT) and by the rows of the largest saved set they read, the saved sets' sizes and the
rows the search's statements read (a figure load does not change). CPU over wall is about the
threads a phase kept busy; on a loaded machine compare CPU seconds and rows read.

    python bench/phase_breakdown.py --rows 10000000 --threads 1 --max-suppression 0
    python bench/phase_breakdown.py --rows 10000000 --threads 2 --max-suppression 0.05 --statements
    python bench/phase_breakdown.py --rows 10000000 --threads 2 --freeze   # the CLI's gc.freeze

Also printed per phase: the cyclic garbage collector's collections (full ones apart) and their
seconds. ``--freeze`` does what the CLI does (``gc.freeze()`` at the start, again once the
compiled kernels load: ``sqlanon.stats.local.FREEZE_GC``), to compare.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
SAVED = re.compile(r'CREATE (?:TEMPORARY )?TABLE "(sqlanon_fs\w*)"')
SETS = re.compile(r'"(sqlanon_fs\w*)"')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--max-suppression", type=float, default=0.0)
    ap.add_argument("--statements", action="store_true", help="also list every statement over 40 ms")
    ap.add_argument("--freeze", action="store_true", help="gc.freeze() at the start and once the kernels load, as the CLI does")
    args = ap.parse_args()
    src = os.path.join(HERE, "out", f"adult_{args.rows // 1_000_000}m.parquet" if args.rows >= 1_000_000 else f"adult_{args.rows}.parquet")
    if not os.path.exists(src):
        sys.path.insert(0, HERE)
        from adult_like import generate

        generate(args.rows, src)

    import sqlanon.run.api as api
    from sqlanon.engine import duckdb as engine_duckdb

    log: list[tuple[float, float, str, str]] = []  # wall, CPU, sql, phase
    sizes: dict[str, int] = {}
    phase = ["hierarchies"]
    lock = threading.Lock()
    run_on = engine_duckdb.DuckDBEngine._run_on

    def timed(self, con, sql, fetch, params=None):
        w, c = time.perf_counter(), time.process_time()
        out = run_on(self, con, sql, fetch, params)
        with lock:
            log.append((time.perf_counter() - w, time.process_time() - c, sql, phase[0]))
        m = SAVED.match(sql)
        if m:  # the saved set's rows (not counted in the statements above)
            sizes[m.group(1)] = int(run_on(self, con, f'SELECT COUNT(*) FROM "{m.group(1)}"', "all")[0][0])
        return out

    engine_duckdb.DuckDBEngine._run_on = timed
    collected: dict[str, list] = {}  # phase -> [collections, full ones, seconds]
    gc_started = [0.0]

    def on_gc(stage: str, info: dict) -> None:
        if stage == "start":
            gc_started[0] = time.perf_counter()
            return
        acc = collected.setdefault(phase[0], [0, 0, 0.0])
        acc[0] += 1
        acc[1] += info["generation"] == 2
        acc[2] += time.perf_counter() - gc_started[0]

    gc.callbacks.append(on_gc)
    if args.freeze:
        from sqlanon.stats import local

        gc.freeze()
        local.FREEZE_GC = True
    lap = api.PhaseClock.lap

    def next_phase(self, name):
        lap(self, name)
        order = ["hierarchies", "base_scan", "search", "verify", "report", "write"]
        phase[0] = order[min(order.index(name) + 1, len(order) - 1)] if name in order else name

    api.PhaseClock.lap = next_phase
    started, cpu = time.perf_counter(), time.process_time()
    out = os.path.join(HERE, "out", "phase_release.parquet")
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    r = api.anonymize(input=src, qi=qi, k=args.k, max_suppression=args.max_suppression, metric="precision", search="optimal",
                      memory_limit="1GB", threads=args.threads, output=out, overwrite=True, registry=os.path.join(HERE, "out", "phase_registry.duckdb")).to_dict()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    node = [r["transformation"][c] for c in COLUMNS]
    print(f"{args.rows:,} rows, k={args.k}, max suppression {args.max_suppression}, threads {args.threads}: {node} {r['metric']['value']:.4f}, "
          f"{r['nodes_evaluated']} nodes, {r.get('statements')} statements, {r['queries']} queries; run {wall:.2f} s, CPU {cpu:.2f} s; load {os.getloadavg()[0]:.1f}")
    print(f"{'phase':<12} {'wall s':>7} {'CPU s':>7} {'CPU/wall':>8} {'stmts':>6} {'stmt wall':>10} {'stmt CPU':>9} {'gc (full)':>10} {'gc s':>6}")
    for name, seconds in r["timings"].items():
        mine = [x for x in log if x[3] == name]
        busy = r.get("cpu_timings", {}).get(name, float("nan"))
        runs, full, spent = collected.get(name, [0, 0, 0.0])
        print(f"{name:<12} {seconds:>7.2f} {busy:>7.2f} {busy / seconds if seconds else 0:>8.2f} {len(mine):>6} {sum(x[0] for x in mine):>10.2f} {sum(x[1] for x in mine):>9.2f} "
              f"{f'{runs} ({full})':>10} {spent:>6.3f}")
    kinds: dict[tuple[str, str], list[float]] = {}
    read = 0
    for w, c, sql, name in log:
        if name != "search":
            continue
        target = SAVED.match(sql)
        sources = [t for t in set(SETS.findall(sql)) if not (target and t == target.group(1))]
        rows = max((sizes.get(t, 0) for t in sources), default=0)
        read += sum(sizes.get(t, 0) for t in sources)
        size = ">=500K" if rows >= 500_000 else ">=123K" if rows >= 122_880 else ">=20K" if rows >= 20_000 else "<20K"
        acc = kinds.setdefault(("CREATE" if target else "SELECT", size), [0, 0.0, 0.0])
        acc[0] += 1
        acc[1] += w
        acc[2] += c
    print("search statements by kind and the largest saved set they read (statements, wall s, CPU s of the process while they ran):")
    for (kind, size), (n, w, c) in sorted(kinds.items()):
        print(f"  {kind:<6} from {size:<7} {int(n):>4} {w:>7.2f} {c:>7.2f}")
    print(f"  saved sets (rows): {sorted(sizes.values(), reverse=True)}")
    print(f"  rows read by the search's statements: {read / 1e6:.2f}M")
    if args.statements:
        for w, c, sql, name in log:
            if w >= 0.04:
                print(f"  {name:<11} {w:6.3f} {c:6.3f} {' '.join(sql.split())[:110]}")


if __name__ == "__main__":
    main()
