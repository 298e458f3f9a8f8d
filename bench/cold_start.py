"""One program on every run (issue 43): the same command on an emptied kernel cache (what the first
run after ``pip install`` meets: numba compiles the kernels), on an emptied cache filled by
``sqlanon.warm_up()`` first (what ``sqlanon warm-up`` after the install gives the first run) and on
a warm one, alternated, each a fresh interpreter: nodes evaluated, how many in-process, a digest of
the in-process nodes in evaluation order, the path the frequency set took (the report's
``local_route``), the run's seconds, the whole process's wall and CPU seconds (user + sys).

The command: ``sqlanon.anonymize`` on ``--rows`` Adult-like rows (``bench/adult_like.py``; Adult's
9 QIs and hierarchies from examples/adult), k=10, ``--max-suppression`` (5 % by default), the
optimal search, nothing written. The cold runs get a new empty ``NUMBA_CACHE_DIR`` each; the
warm runs share one, filled by a run before the first timed one; the "warmed-up" runs a new one
each, filled by ``sqlanon.warm_up()`` in a process of its own (its seconds printed apart, not in the
run's). ``--against DIR``: another sqlanon tree (e.g. main's) run the same way, alternated with this
one (its warmed-up line only if it has ``sqlanon.warm_up``).

Printed at the end, per tree: "same path: yes/no" (every run evaluated the same nodes in the same
order by the same route to the same plan), and the median cold / warm and warmed-up / warm ratios
of process wall and CPU seconds.

    .venv/bin/python bench/cold_start.py [--rows 1000000] [--repeat 3] [--max-suppression 0.05] [--against /tmp/base] [--out bench/results/cold_start.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_output import finish  # noqa: E402

ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
CHILD = """
import hashlib, json, os, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import sqlanon
from sqlanon.stats import local
seen = []
evaluate = local.evaluate
def recorded(stats, nodes, *args, **kwargs):
    seen.extend(tuple(int(v) for v in n) for n in nodes)
    return evaluate(stats, nodes, *args, **kwargs)
local.evaluate = recorded
qi = {{c: os.path.join({adult!r}, f"adult_hierarchy_{{c}}.csv") for c in {columns!r}}}
r = sqlanon.anonymize(input={data!r}, qi=qi, k=10, max_suppression={sup}, search="optimal")
use = resource.getrusage(resource.RUSAGE_SELF)
route = r._report.get("local_route") or "not asked"
print(json.dumps({{"nodes": r.nodes_evaluated, "local": r.nodes_local or 0, "route": route, "run": r.seconds,
                  "order": hashlib.sha1(repr(seen).encode()).hexdigest()[:10], "path": route.split(":")[0],
                  "process": time.perf_counter() - t0, "cpu": use.ru_utime + use.ru_stime, "plan": r.transformation,
                  "peak_rss_mb": round(use.ru_maxrss / 1024)}}))
"""
WARM_UP = """
import json, resource, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {root!r})
import sqlanon
got = sqlanon.warm_up()
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({{"process": time.perf_counter() - t0, "cpu": use.ru_utime + use.ru_stime, "kernels": got.compiled}}))
"""


def child(code: str, cache: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    if out.returncode:
        raise SystemExit(out.stderr.strip()[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def once(root: str, data: str, sup: float, cache: str) -> dict:
    return child(CHILD.format(root=root, adult=ADULT, columns=COLUMNS, data=data, sup=sup), cache)


def has_warm_up(root: str) -> bool:
    with open(os.path.join(root, "sqlanon", "__init__.py"), encoding="utf-8") as fh:
        return "def warm_up" in fh.read()


def describe(label: str, got: dict) -> str:
    return (f"{label:<15} nodes {got['nodes']:3d} ({got['local']} in-process, order {got['order']})  run {got['run']:6.2f} s  "
            f"process {got['process']:6.2f} s (CPU {got['cpu']:6.2f} s)  peak RSS {got['peak_rss_mb']} MB  plan {got['plan']}  path: {got['route']}")


def same_path(runs: list[dict]) -> bool:
    keys = [(r["nodes"], r["local"], r["order"], r["path"], json.dumps(r["plan"], sort_keys=True)) for r in runs]
    return len(set(keys)) == 1


def summary(name: str, runs: dict[str, list[dict]]) -> list[str]:
    every = [r for rs in runs.values() for r in rs]
    lines = [f"{name}: same path: {'yes' if same_path(every) else 'no'} (nodes, in-process count, node order, route and plan on all {len(every)} runs)"]
    med = {label: (statistics.median(r["process"] for r in rs), statistics.median(r["cpu"] for r in rs)) for label, rs in runs.items() if rs}
    warm_wall, warm_cpu = med["warm"]
    for label, (wall, cpu) in med.items():
        if label != "warm":
            lines.append(f"{name}: median {label} / warm: wall {wall:.2f} / {warm_wall:.2f} s = {wall / warm_wall:.2f}x, CPU {cpu:.2f} / {warm_cpu:.2f} s = {cpu / warm_cpu:.2f}x")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-suppression", type=float, default=0.05)
    ap.add_argument("--against", help="another sqlanon tree, run alternately with this one")
    ap.add_argument("--out")
    args = ap.parse_args()
    import adult_like

    trees = {"this": ROOT, **({"against": os.path.abspath(args.against)} if args.against else {})}
    lines = [f"bench/cold_start.py --rows {args.rows} --repeat {args.repeat} --max-suppression {args.max_suppression} "
             f"(trees: {', '.join(f'{k} {v}' for k, v in trees.items())}); load average at the start {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"]
    print(lines[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "adult_like.parquet")
        adult_like.generate(args.rows, data)
        runs: dict[str, dict[str, list[dict]]] = {name: {"cold": [], "warmed-up": [], "warm": []} for name in trees}
        for name, root in trees.items():
            once(root, data, args.max_suppression, os.path.join(tmp, f"{name}-warm"))  # fills the warm cache
        for i in range(args.repeat):
            for name, root in trees.items():
                for label in runs[name]:
                    cache = os.path.join(tmp, f"{name}-{label}{i}") if label != "warm" else os.path.join(tmp, f"{name}-warm")
                    if label == "warmed-up":
                        if not has_warm_up(root):
                            continue
                        done = child(WARM_UP.format(root=root), cache)
                        lines.append(f"{name:<8} sqlanon.warm_up() into an empty cache: process {done['process']:.2f} s (CPU {done['cpu']:.2f} s), "
                                     f"{len(done['kernels'])} kernels compiled")
                        print(lines[-1], flush=True)
                    got = once(root, data, args.max_suppression, cache)
                    runs[name][label].append(got)
                    lines.append(f"{name:<8} " + describe(label, got))
                    print(lines[-1], flush=True)
    for name in trees:
        lines.extend(summary(name, runs[name]))
    print("\n".join(lines[-sum(len(summary(n, runs[n])) for n in trees):]))
    finish(lines, args.out)


if __name__ == "__main__":
    main()
