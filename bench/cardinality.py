"""The distinct-tuple cliff (issue 43): one table, its QIs a masked 40K-value zip, a birth date and
gender, at 100K / 1M / 3M / 8M distinct QI tuples, each against its own GROUP BY and COPY.

The input (DuckDB SQL, deterministic; Parquet): ``--rows`` rows (10M by default); row ``r`` takes
tuple ``t = r % D`` for ``D`` distinct tuples (every tuple occurs), zip ``t % 40000`` (five
digits), birth date ``1930-01-01 + ((t // 40000) * 137 + zip * 31) % 29200`` days (injective in
``t`` for a given zip: every tuple distinct), gender from a hash of ``t``. Each size prints, side by
side, from one run:

* ``sqlanon.anonymize`` (Python API, k=5, 5 %, the optimal search, a Parquet output) in a fresh
  process: seconds per phase (the report's ``timings``), the whole run, peak RSS, nodes evaluated
  and in-process, the path the frequency set took and why (the report's ``local_route``);
* a plain DuckDB ``GROUP BY`` of the three columns (the floor of the base scan), and a plain
  ``COPY`` of the three columns to Parquet (the floor of the write), each in a fresh process
  right after, on the engine's default threads;
* run / GROUP BY and write / COPY;
* CPU seconds (the process's user + system, DuckDB's threads among them) beside the wall seconds
  of the run and of each baseline: on a loaded machine the CPU seconds move less than the wall's;
* with ``--base-tree DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/base
  1880e01``), the same run with that tree's sqlanon right after this one's, each size, so the
  two compare in one run at one load (``base:`` lines; the ratios then are before -> after).

The load average is printed at the start and the end, and beside each size.

    .venv/bin/python bench/cardinality.py [--rows 10000000] [--sizes 100000,1000000,3000000,8000000] [--local-rows 0] [--base-tree DIR] [--out bench/results/cardinality.txt]

Sizes over 80 % of ``--rows`` are skipped (a set that small has no repeated tuples to speak of).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHASES = ("hierarchies", "base_scan", "search", "verify", "report", "write")
ZIPS = 40_000


def make_table(path: str, distinct: int, rows: int) -> None:
    """The input: ``rows`` rows over ``distinct`` distinct (zip, birth, gender) tuples."""
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT lpad(CAST(t % $z AS VARCHAR), 5, '0') AS zip, "
        "CAST(DATE '1930-01-01' + CAST(((t // $z) * 137 + (t % $z) * 31) % 29200 AS INTEGER) AS DATE) AS birth, "
        "CASE WHEN hash(t) % 2 = 0 THEN 'F' ELSE 'M' END AS gender FROM (SELECT i % $d AS t FROM range($n) r(i))) "
        "TO '" + path.replace("'", "''") + "' (FORMAT parquet)",
        {"z": ZIPS, "d": distinct, "n": rows},
    )
    got = con.execute("SELECT count(*) FROM (SELECT DISTINCT zip, birth, gender FROM read_parquet('" + path.replace("'", "''") + "'))").fetchone()
    con.close()
    assert got is not None and got[0] == distinct, (got, distinct)


BASELINE = """
import json, resource, sys, time
import duckdb
src, out, kind = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")  # a long statement's bar on stdout is no JSON line
q = "read_parquet('" + src.replace("'", "''") + "')"
t = time.perf_counter()
if kind == "group_by":
    n = con.execute("SELECT count(*), sum(n) FROM (SELECT zip, birth, gender, count(*) AS n FROM " + q + " GROUP BY zip, birth, gender)").fetchone()[0]
else:
    con.execute("COPY (SELECT zip, birth, gender FROM " + q + ") TO '" + out.replace("'", "''") + "' (FORMAT parquet)")
    n = 0
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": use.ru_utime + use.ru_stime, "groups": n, "peak_rss_mb": round(use.ru_maxrss / 1024)}))
"""


def baseline(src: str, out: str, kind: str) -> dict:
    """A plain DuckDB GROUP BY or COPY of the three columns, in a fresh process."""
    got = subprocess.run([sys.executable, "-c", BASELINE, src, out, kind], capture_output=True, text=True, check=True)
    return json.loads(got.stdout.strip().splitlines()[-1])


def one(spec_json: str) -> None:
    """One run in this process (the sqlanon of ``PYTHONPATH``'s first entry): its report's
    figures, CPU seconds and peak RSS as one JSON line."""
    sys.path.insert(0, os.environ.get("PYTHONPATH", ROOT).split(os.pathsep)[0])
    import sqlanon

    t = time.perf_counter()
    r = sqlanon.anonymize(**json.loads(spec_json))
    rep = r._report
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"timings": r.timings, "cpu_timings": rep.get("cpu_timings"), "seconds": r.seconds, "process": time.perf_counter() - t, "cpu": use.ru_utime + use.ru_stime, "nodes": r.nodes_evaluated,
                      "local": r.nodes_local or 0, "route": rep.get("local_route"), "transformation": r.transformation,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


def run(spec: dict, tree: str = ROOT) -> dict:
    """``spec`` run by the sqlanon of ``tree`` in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": tree})
    if out.returncode:
        raise SystemExit(out.stderr.strip()[-2000:] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def lines_for(distinct: int, rows: int, res: dict, group_by: dict, copy: dict, label: str = "") -> list[str]:
    t = res["timings"] or {}
    parts = " ".join(f"{p} {t.get(p, 0.0):.2f}" for p in PHASES)
    cpu = res.get("cpu_timings") or {}
    cpu_parts = " ".join(f"{p} {cpu.get(p, 0.0):.2f}" for p in PHASES)
    run_ratio = res["seconds"] / group_by["seconds"]
    write_ratio = t.get("write", 0.0) / copy["seconds"]
    return [f"{label}{distinct:>9,} tuples x {rows:,} rows: run {res['seconds']:.2f} s, {res.get('cpu', 0.0):.2f} CPU-s ({parts}); peak RSS {res['peak_rss_mb']} MB; "
            f"nodes {res['nodes']} ({res['local']} in-process); plan {res['transformation']}",
            f"{'':>9}   CPU-s per phase: {cpu_parts}",
            f"{'':>9}   path: {res['route'] or 'not asked'}",
            f"{'':>9}   GROUP BY {group_by['seconds']:.2f} s, {group_by.get('cpu', 0.0):.2f} CPU-s ({group_by['groups']:,} groups, peak RSS {group_by['peak_rss_mb']} MB), "
            f"COPY {copy['seconds']:.2f} s, {copy.get('cpu', 0.0):.2f} CPU-s; run / GROUP BY {run_ratio:.1f}x (CPU {res.get('cpu', 0.0) / max(group_by.get('cpu', 0.0), 1e-9):.1f}x), "
            f"base scan / GROUP BY {t.get('base_scan', 0.0) / group_by['seconds']:.2f}x, write / COPY {write_ratio:.2f}x"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--sizes", default="100000,1000000,3000000,8000000")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-suppression", type=float, default=0.05)
    ap.add_argument("--local-rows", type=int, help="the search option local_rows (0: every node by SQL, as a set over the memory budget goes)")
    ap.add_argument("--base-tree", help="also run the sqlanon of this checkout (another commit), right after this one's, each size")
    ap.add_argument("--out")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return one(args.one)
    lines = [f"bench/cardinality.py --rows {args.rows} --sizes {args.sizes}{' --base-tree ' + args.base_tree if args.base_tree else ''} (sqlanon at {ROOT}); k={args.k}, {args.max_suppression:.0%}, optimal, local_rows {args.local_rows}; "
             f"load average at the start {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"]
    print(lines[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for d in [int(x) for x in args.sizes.split(",") if x]:
            if d > 0.8 * args.rows:
                lines.append(f"{d:>9,} tuples: skipped (over 80 % of {args.rows:,} rows)")
                print(lines[-1], flush=True)
                continue
            src = os.path.join(tmp, f"in_{d}.parquet")
            make_table(src, d, args.rows)
            spec = {"input": src, "qi": {"zip": "mask", "birth": "dates:month,year,decade", "gender": "flat"}, "k": args.k,
                    "max_suppression": args.max_suppression, "search": "optimal", "output": os.path.join(tmp, f"out_{d}.parquet")}
            if args.local_rows is not None:
                spec["search_options"] = {"local_rows": args.local_rows}
            load = os.getloadavg()[0]
            res = run(spec)
            group_by = baseline(src, "", "group_by")
            copy = baseline(src, os.path.join(tmp, f"copy_{d}.parquet"), "copy")
            got = lines_for(d, args.rows, res, group_by, copy)
            if args.base_tree:
                os.remove(spec["output"])
                before = run(spec, os.path.abspath(args.base_tree))
                got += lines_for(d, args.rows, before, group_by, copy, "base: ")
            for name in (f"out_{d}.parquet", f"copy_{d}.parquet", f"in_{d}.parquet"):
                os.remove(os.path.join(tmp, name))
            got.append(f"{'':>9}   load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
            lines += got
            print("\n".join(got), flush=True)
    lines.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(lines[-1])
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
