"""Real-world shapes (issue 24): the phases after the search on columns with many distinct values.

Two generated inputs (DuckDB SQL, deterministic):

* ``zip``: 200,000 rows; ``zip`` has 5K / 10K / 20K / 40K / 90K distinct five-digit values
  (``--qi zip=mask``), plus ``age`` (bands:5,10,20), ``sex`` and ``education`` (flat);
* ``wide``: 24 QIs over 30,000 rows, each with a 20,000-leaf hierarchy (ARX CSV: leaf, /10, /100,
  /1000, ``*``), searched by lightning with a step limit.

Each run is the whole ``sqlanon.anonymize`` (Python API, a Parquet output) in a subprocess of its
own, and prints the report's ``timings`` (seconds per phase) and the process's peak RSS. The
target: the phases after the search (``verify`` + ``report``: utility and risk) stay under the
search plus the base scan, at every size.

    .venv/bin/python bench/shapes.py [--sizes 5000,10000,20000,40000,90000] [--rows 200000] [--no-wide] [--out bench/results/shapes.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PHASES = ("hierarchies", "base_scan", "search", "verify", "report", "write")


def zip_table(path: str, distinct: int, rows: int) -> None:
    """``rows`` rows; zip ``(i * 7919) % distinct`` (every value occurs), age 18-90, sex, education."""
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT lpad(CAST((i * 7919) % $d AS VARCHAR), 5, '0') AS zip, 18 + CAST(hash(i + 1) % 73 AS INTEGER) AS age, "
        "CASE WHEN hash(i + 2) % 2 = 0 THEN 'F' ELSE 'M' END AS sex, 'edu' || CAST(hash(i + 3) % 16 AS VARCHAR) AS education, "
        "CAST(hash(i + 4) % 1000 AS INTEGER) AS income FROM range($n) t(i)) TO '" + path.replace("'", "''") + "' (FORMAT parquet)",
        {"d": distinct, "n": rows},
    )
    con.close()


def wide_table(folder: str, qis: int, rows: int, leaves: int) -> tuple[str, dict[str, str]]:
    """``qis`` columns drawn from ``leaves`` codes each, and one ARX CSV hierarchy per column."""
    con = duckdb.connect()
    hier = os.path.join(folder, "h.csv")
    con.execute(
        "COPY (SELECT 'v' || lpad(CAST(i AS VARCHAR), 5, '0'), 'a' || CAST(i // 10 AS VARCHAR), 'b' || CAST(i // 100 AS VARCHAR), "
        "'c' || CAST(i // 1000 AS VARCHAR), '*' FROM range($m) t(i)) TO '" + hier.replace("'", "''") + "' (HEADER false, DELIMITER ';')",
        {"m": leaves},
    )
    cols = ", ".join(f"'v' || lpad(CAST(hash(i, {c}) % {leaves} AS VARCHAR), 5, '0') AS q{c}" for c in range(qis))
    data = os.path.join(folder, "wide.parquet")
    con.execute(f"COPY (SELECT {cols} FROM range({int(rows)}) t(i)) TO '" + data.replace("'", "''") + "' (FORMAT parquet)")
    con.close()
    return data, {f"q{c}": hier for c in range(qis)}


def one(args: argparse.Namespace) -> None:
    """One run in this process: print its timings and peak RSS as one JSON line."""
    sys.path.insert(0, ROOT)
    import sqlanon

    spec = json.loads(args.one)
    r = sqlanon.anonymize(**spec)
    print(json.dumps({"timings": r.timings, "seconds": r.seconds, "nodes": r.nodes_evaluated, "transformation": r.transformation,
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))


def run(spec: dict) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    if out.returncode:
        raise SystemExit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def line(label: str, res: dict) -> str:
    t = res["timings"]
    if t is None:  # a version before the report's timings: the whole run only
        return f"{label:<22} total {res['seconds']:7.2f} s  peak RSS {res['peak_rss_mb']:5d} MB"
    after = t["verify"] + t["report"]
    budget = t["search"] + t["base_scan"]
    parts = " ".join(f"{p} {t[p]:7.2f}" for p in PHASES)
    verdict = "ok" if after <= budget else "OVER"
    return f"{label:<22} {parts}  total {res['seconds']:7.2f} s  peak RSS {res['peak_rss_mb']:5d} MB  after-search {after:.2f} s vs search+scan {budget:.2f} s: {verdict}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="5000,10000,20000,40000,90000")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--no-wide", action="store_true")
    ap.add_argument("--wide-rows", type=int, default=30_000)
    ap.add_argument("--step-limit", type=int, default=100, help="lightning's step limit on the wide table")
    ap.add_argument("--out")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        return one(args)
    lines = [f"bench/shapes.py (sqlanon at {ROOT}); load average at the start {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)",
             "seconds per phase (the report's timings); after-search = verify + report (utility, risk)"]
    print(lines[0], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for d in [int(x) for x in args.sizes.split(",") if x]:
            path = os.path.join(tmp, f"zip_{d}.parquet")
            zip_table(path, d, args.rows)
            spec = {"input": path, "qi": {"zip": "mask", "age": "bands:5,10,20", "sex": "flat", "education": "flat"}, "k": 5,
                    "max_suppression": 0.05, "output": os.path.join(tmp, f"out_{d}.parquet")}
            lines.append(line(f"zip {d // 1000}K x {args.rows // 1000}K", run(spec)))
            print(lines[-1], flush=True)
        if not args.no_wide:
            data, qi = wide_table(tmp, 24, args.wide_rows, 20_000)
            spec = {"input": data, "qi": qi, "k": 2, "max_suppression": 0.05, "search": "lightning", "metric": "loss",
                    "search_options": {"step_limit": args.step_limit}, "output": os.path.join(tmp, "out_wide.parquet")}
            lines.append(line("24 QIs x 20K leaves", run(spec)))
            print(lines[-1], flush=True)
    lines.append(f"load average at the end {os.getloadavg()[0]:.1f}")
    print(lines[-1])
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
