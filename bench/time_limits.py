"""Time limits kept (issue 24): lightning and genetic on the 24-QI, 30,000-row ``w24`` table of
``bench/wide.py`` at ``--time-limit 20``, on the machine as it is and with a CPU-bound process
running beside it (``--hog``: the bench starts it and stops it).

Prints, per search: the search's own seconds (``heuristic.seconds`` / ``search_seconds``, what the
limit bounds), the search phase as the report times it (``timings.search``), evaluations,
``stopped_by``, and the load average. Goal: search seconds <= 21.

    python bench/time_limits.py [--limit 20] [--hog] [--out bench/results/time_limits.txt]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import sqlanon  # noqa: E402
from wide import build  # noqa: E402


def hog() -> None:  # pragma: no cover - a busy loop in a child process
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


def run_one(db: str, specs: list[str], search: str, limit: float) -> dict:
    opts: dict = {"time_limit": limit}
    if search == "genetic":
        opts.update(iterations=1_000_000, population=100, seed=1)
    started = time.perf_counter()
    report = sqlanon.anonymize(input=db, qi=specs, k=5, max_suppression=0.05, search=search,
                               metric="lm" if search == "genetic" else "loss", search_options=opts, dry_run=True)
    whole = time.perf_counter() - started
    heuristic = report.extra.get("heuristic") or {}
    return {
        "search": search,
        "search_s": heuristic.get("seconds", report.extra.get("search_seconds")),
        "phase_s": (report.timings or {}).get("search"),
        "run_s": round(whole, 1),
        "evaluations": heuristic.get("evaluations", report.extra.get("evaluations")),
        "stopped_by": report.stopped_by,
        "suppressed": report.suppressed_rows,
        "warnings": len(report.warnings or []),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=float, default=20.0)
    ap.add_argument("--hog", action="store_true", help="run a CPU-bound process beside the searches")
    ap.add_argument("--searches", default="lightning,genetic")
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"))
    ap.add_argument("--out", default=None, help="append the lines to this file")
    args = ap.parse_args()
    db, specs = build(args.folder, "w24", 24, 30_000)
    child = None
    if args.hog:
        child = multiprocessing.Process(target=hog, daemon=True)
        child.start()
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    try:
        label = "with a CPU-bound process beside it (--hog)" if args.hog else "as it is (no hog)"
        say(f"# bench/time_limits.py --limit {args.limit:g}{' --hog' if args.hog else ''}: w24 (24 QIs, 30,000 rows), k=5 at 5 %, machine {label}; "
            f"{os.cpu_count()} cores, load before {os.getloadavg()[0]:.1f}")
        say(f"{'search':<11}{'search s':>9}{'phase s':>9}{'run s':>7}{'evals':>7}  {'stopped_by':<11}{'suppr.':>7}{'load1':>7}")
        for search in args.searches.split(","):
            r = run_one(db, specs, search, args.limit)
            say(f"{r['search']:<11}{r['search_s']:>9.2f}{r['phase_s'] or 0:>9.2f}{r['run_s']:>7}{r['evaluations']:>7}  {r['stopped_by'] or '':<11}{r['suppressed']:>7}{os.getloadavg()[0]:>7.1f}")
    finally:
        if child is not None:
            child.terminate()
            child.join()
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
