"""One program on every run (issue 43): the same command on an emptied kernel cache (what the first
run after ``pip install`` meets: numba compiles the kernels) and on a warm one, alternated, each a
fresh interpreter: nodes evaluated, how many in-process, the path the frequency set took
(the report's ``local_route``), the run's seconds, the whole process's wall and CPU seconds.

The command: ``sqlanon.anonymize`` on ``--rows`` Adult-like rows (``bench/adult_like.py``; Adult's
9 QIs and hierarchies from examples/adult), k=10, ``--max-suppression`` (5 % by default), the
optimal search, nothing written. The cold runs get a new empty ``NUMBA_CACHE_DIR`` each; the
warm runs share one, filled by a run before the first timed one.

    .venv/bin/python bench/cold_start.py [--rows 1000000] [--repeat 3] [--max-suppression 0.05] [--out bench/results/cold_start.txt]
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

ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
CHILD = """
import json, os, resource, sys, time
t0, c0 = time.perf_counter(), time.process_time()
sys.path.insert(0, {root!r})
import sqlanon
qi = {{c: os.path.join({adult!r}, f"adult_hierarchy_{{c}}.csv") for c in {columns!r}}}
r = sqlanon.anonymize(input={data!r}, qi=qi, k=10, max_suppression={sup}, search="optimal")
print(json.dumps({{"nodes": r.nodes_evaluated, "local": r.nodes_local or 0, "route": r._report.get("local_route"), "run": r.seconds,
                  "process": time.perf_counter() - t0, "cpu": time.process_time() - c0, "plan": r.transformation,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}}))
"""


def once(data: str, sup: float, cache: str) -> dict:
    code = CHILD.format(root=ROOT, adult=ADULT, columns=COLUMNS, data=data, sup=sup)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    if out.returncode:
        raise SystemExit(out.stderr.strip()[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def describe(label: str, got: dict) -> str:
    return (f"{label:<5} nodes {got['nodes']:3d} ({got['local']} in-process)  run {got['run']:6.2f} s  process {got['process']:6.2f} s "
            f"(CPU {got['cpu']:6.2f} s)  peak RSS {got['peak_rss_mb']} MB  plan {got['plan']}  path: {got['route'] or 'not asked'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-suppression", type=float, default=0.05)
    ap.add_argument("--out")
    args = ap.parse_args()
    import adult_like

    lines = [f"bench/cold_start.py --rows {args.rows} --repeat {args.repeat} --max-suppression {args.max_suppression} (sqlanon at {ROOT}); "
             f"load average at the start {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"]
    print(lines[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "adult_like.parquet")
        adult_like.generate(args.rows, data)
        warm_cache = os.path.join(tmp, "warm")
        once(data, args.max_suppression, warm_cache)  # fills the warm cache
        runs: dict[str, list[dict]] = {"cold": [], "warm": []}
        for i in range(args.repeat):
            for label in ("cold", "warm"):
                cache = os.path.join(tmp, f"cold{i}") if label == "cold" else warm_cache
                got = once(data, args.max_suppression, cache)
                runs[label].append(got)
                lines.append(describe(label, got))
                print(lines[-1], flush=True)
    same = all((r["nodes"], r["local"], r["plan"]) == (runs["warm"][0]["nodes"], runs["warm"][0]["local"], runs["warm"][0]["plan"]) for r in runs["cold"] + runs["warm"])
    cold, warm = (statistics.median(r["process"] for r in runs[k]) for k in ("cold", "warm"))
    lines.append(f"same nodes, in-process count and plan on every run: {same}; median process seconds cold {cold:.2f} / warm {warm:.2f} = {cold / warm:.2f}x")
    lines.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print("\n".join(lines[-2:]))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
