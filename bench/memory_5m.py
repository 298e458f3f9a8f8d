"""Where the memory of one anonymize run goes, phase by phase (issue 43, "Memory grew").

Runs ``sqlanon anonymize`` on an Adult-like Parquet file (``bench/adult_like.py``; 5M rows by
default) in a child process per setting, as the CLI runs it, and prints per phase its peak RSS (the
kernel's high-water mark, reset at every phase's start: ``/proc/self/clear_refs``), the RSS at its
end, DuckDB's own memory at its end (``duckdb_memory()``, summed) and, within the phases, the peak
RSS of the steps named by ``--step`` (``module:function``: the base set's fetch, the search's
roll-ups); the run's peak is the largest phase's (the first phase counts from the process's
start). Each setting runs
``--repeat`` times alternated with a baseline (``--base``: a git revision's ``sqlanon`` package
copied aside, measured in the same run), so a line compares two builds under the same load.

    python bench/memory_5m.py                                # 5M rows, k=10 at 0 % and 5 %
    python bench/memory_5m.py --base 146ded9 --repeat 2      # against the package at 146ded9
    python bench/memory_5m.py --memory-limit ''              # DuckDB's default memory limit
    python bench/memory_5m.py --tracemalloc                  # also Python's traced peak per phase

Prints the load average at the start and the end (a shared machine: RSS does not depend on load,
seconds do).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
PHASES = ["hierarchies", "base_scan", "search", "verify", "report", "write"]
STEPS = [
    "sqlanon.stats.local.sets:_fetched",
    "sqlanon.stats.local.sets:layout",
    "sqlanon.stats.core:Statistics.prepare",
]

#: the child: the CLI's main with the phase clock and the steps wrapped to read the high-water mark
CHILD = r'''
import importlib, json, os, sys, time
sys.path.insert(0, {pkg!r})
STEPS, TRACE = {steps!r}, {trace!r}
if TRACE:
    import tracemalloc; tracemalloc.start()
def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024.0
    return 0.0
def reset():
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
open_peaks = {{}}   # name -> peak MiB while open
def checkpoint():
    hwm = status("VmHWM:")
    for name in open_peaks:
        open_peaks[name] = max(open_peaks[name], hwm)
    reset()
out = {{"phases": {{}}, "steps": {{}}}}
engines = []
import sqlanon.engine.duckdb as d
init = d.DuckDBEngine.__init__
def keep(self, *a, **kw):
    init(self, *a, **kw)
    for name, value in {duck_set!r}:
        self.set_option(name, value)
    engines.append(self)
d.DuckDBEngine.__init__ = keep
def duck_mib():
    total = 0.0
    for e in engines:
        try:
            total += sum(r[0] for r in e.con.execute("SELECT memory_usage_bytes FROM duckdb_memory()").fetchall()) / 2**20
        except Exception:
            pass
    return total
try:
    import sqlanon.run.api as api
except ImportError:  # an older layout (the --base revision)
    import sqlanon.api as api
lap = api.PhaseClock.lap
checkpoint(); open_peaks["phase"] = status("VmRSS:")
def next_phase(self, name):
    checkpoint()
    lap(self, name)
    rec = out["phases"].setdefault(name, {{"peak": 0.0}})
    rec["peak"] = max(rec["peak"], open_peaks.pop("phase"))
    rec["rss"], rec["duckdb"] = status("VmRSS:"), duck_mib()
    if TRACE:
        cur, peak = tracemalloc.get_traced_memory(); rec["py"] = peak / 2**20; tracemalloc.reset_peak()
    open_peaks["phase"] = status("VmRSS:")
api.PhaseClock.lap = next_phase
def wrap(spec):
    mod_name, attr = spec.split(":")
    mod = None
    for name in (mod_name, mod_name.rsplit(".", 1)[0]):  # an older layout: the package was a module
        try:
            mod = importlib.import_module(name)
            break
        except ImportError:
            pass
    if mod is None or not hasattr(mod, attr.split(".")[0]):
        return
    owner, name = mod, attr
    if "." in attr:
        cls, name = attr.split(".")
        owner = getattr(mod, cls)
    fn = getattr(owner, name)
    def wrapped(*a, **kw):
        checkpoint()
        before = status("VmRSS:")
        open_peaks[spec] = before
        try:
            return fn(*a, **kw)
        finally:
            checkpoint()
            rec = out["steps"].setdefault(spec, {{"calls": 0, "peak": 0.0, "grew": 0.0}})
            rec["calls"] += 1
            rec["peak"] = max(rec["peak"], open_peaks.pop(spec))
            rec["grew"] = max(rec["grew"], status("VmRSS:") - before)
    setattr(owner, name, wrapped)
for spec in STEPS:
    wrap(spec)
import runpy
sys.argv = ["sqlanon"] + {argv!r}
import atexit, io
buf = io.StringIO()
def done():
    out["report"] = json.loads(buf.getvalue())
    sys.__stdout__.write(json.dumps(out) + "\n")
    sys.__stdout__.flush()
atexit.register(done)
sys.stdout = buf
runpy.run_module("sqlanon", run_name="__main__", alter_sys=True)
'''


def package_at(rev: str, into: str) -> str:
    """The ``sqlanon`` package (and its SQL templates) as of ``rev``, extracted under ``into`` (its parent dir returned)."""
    listed = subprocess.run(["git", "-C", ROOT, "ls-tree", "--name-only", rev], check=True, capture_output=True, text=True).stdout.split()
    paths = [p for p in ("sqlanon", "sql") if p in listed]  # an older layout kept its SQL templates in sql/
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, *paths], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def run_once(pkg: str, argv: list[str], steps: list[str], trace: bool, duck_set: list[tuple[str, str]] = ()) -> tuple[dict, float]:
    # a registry per build (an older build's registry table has other columns)
    argv = [a.replace("memory_registry.duckdb", f"memory_registry_{os.path.basename(pkg)}.duckdb") for a in argv]
    code = CHILD.format(pkg=pkg, steps=steps, trace=trace, argv=argv, duck_set=list(duck_set))
    t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    out, err = proc.communicate()
    seconds, after = time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"run failed ({proc.returncode}):\n{err[-3000:]}\n{out[-3000:]}")
    rec = json.loads(out.strip().splitlines()[-1])
    rec["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime  # the child's, every thread's
    return rec, seconds


def argv_for(args, src: str, qi: list[str], k: str, sup: str) -> list[str]:
    argv = ["anonymize", "--input", src, *qi, "--k", k, "--max-suppression", sup, "--metric", "precision", "--search", "optimal",
            "--output", os.path.join(HERE, "out", "memory_release.parquet"), "--overwrite",
            "--registry", os.path.join(HERE, "out", "memory_registry.duckdb"), "--json", "-q"]
    if args.memory_limit:
        argv += ["--memory-limit", args.memory_limit]
    if args.threads:
        argv += ["--threads", args.threads]
    for option in args.option:
        argv += ["--option", option]
    return argv


def peak_of(record: dict) -> float:
    return max(p["peak"] for p in record["phases"].values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--settings", default="10:0.0,10:0.05", help="k:max_suppression pairs")
    ap.add_argument("--memory-limit", default="1GB", help="--memory-limit of the runs ('' for DuckDB's default)")
    ap.add_argument("--threads", default="", help="--threads of the runs (default: DuckDB's own)")
    ap.add_argument("--base", default="", help="a git revision whose sqlanon package runs alternated with this tree's, as the baseline")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--step", action="append", default=[], help="module:function whose peak RSS to print (beside the defaults)")
    ap.add_argument("--no-warm-up", action="store_true", help="no unmeasured first run per build (its kernels compiled already)")
    ap.add_argument("--duckdb-set", action="append", default=[], help="NAME=VALUE: a DuckDB setting on every engine of the runs, to compare")
    ap.add_argument("--tracemalloc", action="store_true", help="Python's traced peak per phase too (slower)")
    ap.add_argument("--option", action="append", default=[], help="a search option KEY=VALUE for every run")
    args = ap.parse_args()
    print(f"# load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    src = os.path.join(HERE, "out", f"adult_{args.rows // 1_000_000}m.parquet" if args.rows >= 1_000_000 else f"adult_{args.rows}.parquet")
    if not os.path.exists(src):
        sys.path.insert(0, HERE)
        from adult_like import generate

        generate(args.rows, src)
    qi = []
    for c in COLUMNS:
        qi += ["--qi", f"{c}={os.path.join(ADULT, f'adult_hierarchy_{c}.csv')}"]
    steps = STEPS + args.step
    duck_set = [tuple(x.split("=", 1)) for x in args.duckdb_set]
    builds = [("this tree", ROOT)]
    if args.base:  # the package copied aside once (its kernels compile on its first run)
        copy = os.path.join(HERE, "out", f"base_{args.base}")
        if not os.path.isdir(copy):
            os.makedirs(copy)
            package_at(args.base, copy)
        builds.insert(0, (f"base {args.base}", copy))
    if not args.no_warm_up:  # the first run of a copy compiles its kernels: not measured
        first = args.settings.split(",")[0].split(":")
        for _label, pkg in builds:
            run_once(pkg, argv_for(args, src, qi, *first), steps, False)
    for setting in args.settings.split(","):
        k, sup = setting.split(":")
        argv = argv_for(args, src, qi, k, sup)
        print(f"\n== {args.rows:,} rows, k={k}, max suppression {sup}, memory limit {args.memory_limit or 'DuckDB default'}"
              f"{', threads ' + args.threads if args.threads else ''}{', ' + ' '.join(args.option) if args.option else ''}{', DuckDB ' + ' '.join(args.duckdb_set) if args.duckdb_set else ''}")
        peaks: dict[str, list[float]] = {}
        for rep in range(args.repeat):
            for label, pkg in builds:
                rec, seconds = run_once(pkg, argv, steps, args.tracemalloc, duck_set)
                r = rec["report"]
                peaks.setdefault(label, []).append(peak_of(rec))
                node = [r["transformation"][c] for c in COLUMNS]
                print(f"-- {label} (run {rep + 1}): peak {peak_of(rec):.0f} MiB, {seconds:.1f} s (CPU {rec['cpu']:.1f} s), search {r.get('search_seconds', 0):.2f} s, "
                      f"{r['nodes_evaluated']} nodes ({r.get('nodes_local') or 0} in-process), {node} {r['metric']['value']:.4f}; load {os.getloadavg()[0]:.1f}")
                print(f"   route: {r.get('local_route')}")
                head = f"   {'phase':<12} {'peak MiB':>9} {'end RSS':>8} {'DuckDB':>7} {'seconds':>8}" + (f" {'py peak':>8}" if args.tracemalloc else "")
                print(head)
                for name in PHASES:
                    p = rec["phases"].get(name)
                    if p is None:
                        continue
                    line = f"   {name:<12} {p['peak']:>9.0f} {p['rss']:>8.0f} {p['duckdb']:>7.0f} {r['timings'].get(name, 0):>8.2f}"
                    if args.tracemalloc:
                        line += f" {p.get('py', 0):>8.0f}"
                    print(line)
                for spec, s in rec["steps"].items():
                    print(f"   step {spec}: {s['calls']} call(s), peak {s['peak']:.0f} MiB, RSS grew {s['grew']:+.0f} MiB")
        if len(builds) > 1:
            b, t = (min(peaks[label]) for label, _ in builds)
            print(f"peak RSS (least of {args.repeat}): base {b:.0f} MiB -> this tree {t:.0f} MiB ({t / b:.2f}x)")
    print(f"\n# load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
