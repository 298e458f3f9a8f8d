"""Scale benchmark of the spine: optimal full-domain k-anonymization of an Adult-like Parquet file.

Prints, for each setting, the wall time and peak RSS of ``sqlanon anonymize`` (a child process, DuckDB
memory_limit 1GB) next to one plain ``COUNT(*) ... GROUP BY`` of the 9 QI columns over the same file
(also a child process, same limit), and their ratio — the figure to watch (aim: under 10x).

    python bench/scale_spine.py --rows 10000000            # generates bench/out/adult_10m.parquet once
    python bench/scale_spine.py --rows 30162 --adult       # the Adult benchmark itself
    python bench/scale_spine.py --threads 1,2              # each thread count: GROUP BY, anonymize, and
                                                           # the search's speed-up against the first count
    python bench/scale_spine.py --threads 1,2 --option lookahead_threads=true   # a search option for every run
    python bench/scale_spine.py --threads 1,2 --one-at-a-time   # no statements side by side, to compare
    python bench/scale_spine.py --threads 1,2 --option local_rows=0   # every node by SQL, to compare
    python bench/scale_spine.py --threads 1,2 --huge-pages      # NumPy's huge pages for the kernels' arrays

The ``local`` column: the nodes grouped in-process over the fetched base set (sqlanon/stats/local/).

sqlanon's modules are byte-compiled first (``compileall``), as ``pip install`` does: with
``PYTHONDONTWRITEBYTECODE`` set (this sandbox sets it) an editable install never gets ``.pyc``
files, and every run then compiles ~0.15 s of source at start.

Under every run a line of its phases (the report's ``timings`` and ``cpu_timings``): wall seconds
and CPU seconds of the process per phase, and the process's start and exit outside them.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]

GROUP_BY = r'''
import duckdb, sys, time
con = duckdb.connect()
con.execute("SET memory_limit = '{limit}'")
con.execute("SET enable_progress_bar = false")
if {threads!r}:
    con.execute("SET threads = " + str(int({threads!r})))
cols = {cols!r}
q = ", ".join('"' + c.replace('"', '""') + '"' for c in cols)
t = time.perf_counter()
n = con.execute("SELECT COUNT(*) FROM (SELECT " + q + ", COUNT(*) FROM " + {src!r} + " GROUP BY " + q + ")").fetchone()[0]
print(n, time.perf_counter() - t)
'''


#: the CLI with statements run one at a time (``--one-at-a-time``)
ONE_AT_A_TIME = "import sqlanon.engine.duckdb as d; d.SIDE_BY_SIDE = False; from sqlanon.cli.app import main; main()"
#: the CLI with NumPy's huge pages kept for the in-process kernels' arrays (``--huge-pages``)
HUGE_PAGES = "import sqlanon.stats.pages as p; p.SMALL = False; from sqlanon.cli.app import main; main()"


def measured(cmd: list[str], cpu: list[float] | None = None, env: dict | None = None) -> tuple[float, float, str]:
    """Wall seconds, peak RSS (MB) and stdout of ``cmd`` (run with ``env`` when given); its CPU
    seconds (user + system, every thread's) are appended to ``cpu`` when given."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    out_chunks = proc.stdout.read()
    err = proc.stderr.read()
    _, status, rusage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"command failed ({status}): {' '.join(cmd)}\n{err}")
    if cpu is not None:
        cpu.append(rusage.ru_utime + rusage.ru_stime)
    return seconds, rusage.ru_maxrss / 1024.0, out_chunks


def phase_line(r: dict, seconds: float, cpu: float) -> str:
    """The run's phases: wall seconds, CPU seconds of the process in brackets (CPU / wall is about
    the threads a phase kept busy), and the process's start and exit outside the run's phases."""
    wall, busy = r.get("timings") or {}, r.get("cpu_timings") or {}
    parts = [f"{name} {wall[name]:.2f} ({busy[name]:.2f})" if name in busy else f"{name} {wall[name]:.2f}" for name in wall]
    outside = seconds - float(r.get("seconds") or 0.0)
    inside_cpu = sum(busy.values())
    return f"      phases s (CPU s): {' | '.join(parts)} | start+exit {outside:.2f} ({cpu - inside_cpu:.2f}); process CPU {cpu:.1f} s, load {os.getloadavg()[0]:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--adult", action="store_true", help="run on the Adult CSV itself")
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--settings", default="10:0.0,10:0.05", help="k:max_suppression pairs")
    ap.add_argument("--metric", default="precision")
    ap.add_argument("--option", action="append", default=[], help="a search option KEY=VALUE for every run (e.g. lookahead_threads=true)")
    ap.add_argument("--threads", default="", help="comma-separated DuckDB thread counts (default: DuckDB's own)")
    ap.add_argument("--huge-pages", action="store_true", help="the in-process kernels' fresh arrays on NumPy's huge pages (sqlanon.stats.pages.SMALL off), to compare")
    ap.add_argument("--one-at-a-time", action="store_true", help="statements one at a time (sqlanon.engine.duckdb.SIDE_BY_SIDE off), to compare")
    args = ap.parse_args()
    compiled = compileall.compile_dir(os.path.join(ROOT, "sqlanon"), quiet=1)
    print(f"sqlanon byte-compiled ({'ok' if compiled else 'FAILED'}; PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})")
    if args.huge_pages:
        print("the in-process kernels' fresh arrays on NumPy's huge pages (--huge-pages: sqlanon.stats.pages.SMALL off)")
    if args.adult:
        src_path = os.path.join(ADULT, "adult.csv")
        src_sql = f"read_csv('{src_path}', delim=';', header=true, all_varchar=true)"
        input_flags = ["--input", src_path, "--format", "csv", "--delimiter", ";"]
    else:
        src_path = os.path.join(HERE, "out", f"adult_{args.rows // 1_000_000}m.parquet" if args.rows >= 1_000_000 else f"adult_{args.rows}.parquet")
        if not os.path.exists(src_path):
            sys.path.insert(0, HERE)
            from adult_like import generate

            t = time.perf_counter()
            generate(args.rows, src_path)
            print(f"generated {src_path} ({args.rows:,} rows) in {time.perf_counter() - t:.1f} s")
        src_sql = f"read_parquet('{src_path}')"
        input_flags = ["--input", src_path]
    qi = []
    for c in COLUMNS:
        qi += ["--qi", f"{c}={os.path.join(ADULT, f'adult_hierarchy_{c}.csv')}"]
    thread_counts = [int(t) for t in args.threads.split(",") if t] or [0]
    search_seconds: dict[str, float] = {}
    for threads in thread_counts:
        code = GROUP_BY.format(limit=args.memory_limit, cols=COLUMNS, src=src_sql, threads=threads)
        gb_seconds, gb_rss, out = measured([sys.executable, "-c", code])
        groups, gb_inner = out.split()
        label = f"threads {threads}" if threads else "DuckDB's default threads"
        print(f"{label}: plain GROUP BY of the 9 QIs: {int(groups):,} groups, {float(gb_inner):.2f} s query ({gb_seconds:.2f} s with process start), peak RSS {gb_rss:.0f} MB; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)", flush=True)
        print(f"{'k':>4} {'maxsup':>7} {'seconds':>8} {'ratio':>7} {'peak RSS MB':>12} {'nodes':>6} {'local':>6} {'stmts':>6} {'queries':>8} {'search s':>9} {'speed-up':>9}  transformation / metric")
        for setting in args.settings.split(","):
            k, sup = setting.split(":")
            out_path = os.path.join(HERE, "out", "scale_release.parquet")
            cli = [sys.executable, "-c", ONE_AT_A_TIME] if args.one_at_a_time else [sys.executable, "-c", HUGE_PAGES] if args.huge_pages else [sys.executable, "-m", "sqlanon"]
            cmd = [*cli, "anonymize", *input_flags, *qi, "--k", k, "--max-suppression", sup,
                   "--metric", args.metric, "--search", "optimal", "--memory-limit", args.memory_limit,
                   "--output", out_path, "--overwrite", "--registry", os.path.join(HERE, "out", "scale_registry.duckdb"), "--json", "-q"]
            if threads:
                cmd += ["--threads", str(threads)]
            for option in args.option:
                cmd += ["--option", option]
            cpu: list[float] = []
            seconds, rss, out = measured(cmd, cpu)
            r = json.loads(out)
            node = [r["transformation"][c] for c in COLUMNS]
            search = float(r.get("search_seconds", float("nan")))
            first = search_seconds.setdefault(setting, search)
            print(f"{k:>4} {sup:>7} {seconds:>8.1f} {seconds / float(gb_inner):>6.1f}x {rss:>12.0f} {r['nodes_evaluated']:>6} {r.get('nodes_local') or 0:>6} {r.get('statements', 0):>6} {r['queries']:>8} {search:>9.1f} {first / search:>8.2f}x  {node} {r['metric']['value']:.4f} (suppressed {r['suppressed_rows']:,})", flush=True)
            print(phase_line(r, seconds, cpu[0]), flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")


if __name__ == "__main__":
    main()
