"""Nodes in-process (``sqlanon/stats/local/``) against nodes by SQL statements, per node, on the
same batches: a search runs once (in-process) and records every batch of nodes it evaluated; the
batches are then evaluated again, in-process and by SQL (``local_rows=0``) alternated round by
round, in the same process and on the same statistics, so the machine's load hits both. Printed
per way: nodes, statements, wall and process CPU milliseconds per node (CPU counts every thread of
the process: DuckDB's and the kernel's), and the load average.

Cases: w24 (``bench/wide.py``'s 24 QIs x 30K rows, k=5, 5 %, Loss; lightning's batches) and Adult
(9 QIs, k=10, 0 %, Loss; the optimal search's batches and single nodes).

    python bench/local_eval.py [--rounds 3] [--cases w24,adult] [--steps 600]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import sqlanon  # noqa: E402
from sqlanon.run import api  # noqa: E402
from sqlanon.stats import local  # noqa: E402

ADULT = os.path.join(HERE, "..", "examples", "adult")
ADULT_COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def replay(stats, batches, cap: int) -> tuple[int, int, float, float]:
    """Evaluate every recorded batch again with ``stats.local_rows = cap``: nodes, statements,
    wall and CPU seconds."""
    keep, stats.local_rows = stats.local_rows, cap
    queries, wall, used = stats.engine.queries, time.perf_counter(), cpu()
    n = 0
    try:
        for nodes, ok, metric, extra in batches:
            if len(nodes) == 1:
                stats.evaluate(nodes[0], ok, metric.aggregates(stats, nodes[0]), metric=metric, extra_finals=extra)
            else:
                stats.evaluate_many(nodes, ok, lambda node, metric=metric: metric.aggregates(stats, node), metric=metric, extra_finals=extra)
            n += len(nodes)
    finally:
        stats.local_rows = keep
    return n, stats.engine.queries - queries, time.perf_counter() - wall, cpu() - used


def run_case(name: str, anonymize, rounds: int, say) -> None:
    """Run ``anonymize()`` with the batches recorded, then the A/B replay inside its session."""
    batches: list = []
    original_evaluate, original_search = local.evaluate, api.run_search

    def record(stats, nodes, ok, metric=None, extra_finals=()):
        batches.append(([tuple(n) for n in nodes], ok, metric, list(extra_finals)))
        return original_evaluate(stats, nodes, ok, metric, extra_finals)

    def search_then_replay(policy, session, stats, requirement, metric, say_, phase=None):
        local.evaluate = record
        try:
            plan = original_search(policy, session, stats, requirement, metric, say_, phase)
        finally:
            local.evaluate = original_evaluate
        nodes = sum(len(b[0]) for b in batches)
        say(f"\n{name}: {len(batches)} batches, {nodes} nodes recorded from the search ({stats.base.rows:,}-row base set, {len(stats.qis)} QIs)")
        say(f"{'round':<7}{'way':<11}{'nodes':>7}{'stmts':>7}{'wall ms/node':>14}{'cpu ms/node':>13}{'load1':>7}")
        totals: dict[str, list[float]] = {"in-process": [0, 0.0, 0.0], "sql": [0, 0.0, 0.0]}
        for r in range(rounds):
            order = [("in-process", local.LOCAL_ROWS), ("sql", 0)]
            for way, cap in order if r % 2 == 0 else order[::-1]:
                n, stmts, wall, used = replay(stats, batches, cap)
                totals[way][0] += n
                totals[way][1] += wall
                totals[way][2] += used
                say(f"{r:<7}{way:<11}{n:>7}{stmts:>7}{1000 * wall / n:>14.3f}{1000 * used / n:>13.3f}{os.getloadavg()[0]:>7.1f}")
        a, b = totals["in-process"], totals["sql"]
        say(f"{name}: in-process {1000 * a[2] / a[0]:.3f} CPU ms/node ({1000 * a[1] / a[0]:.3f} wall) against SQL {1000 * b[2] / b[0]:.3f} ({1000 * b[1] / b[0]:.3f} wall): "
            f"{b[2] / max(a[2], 1e-12):.1f}x less CPU, {b[1] / max(a[1], 1e-12):.1f}x less wall")
        return plan

    api.run_search = search_then_replay
    try:
        anonymize()
    finally:
        api.run_search = original_search


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cases", default="w24,adult")
    ap.add_argument("--steps", type=int, default=600, help="w24: lightning's step limit (nodes recorded)")
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"), help="where bench/wide.py builds w24")
    args = ap.parse_args()

    def say(line: str = "") -> None:
        print(line, flush=True)

    say(f"bench/local_eval.py --rounds {args.rounds} --cases {args.cases} --steps {args.steps}; cores {os.cpu_count()}, load {os.getloadavg()[0]:.1f}")
    for case in args.cases.split(","):
        if case == "w24":
            import wide

            db, specs = wide.build(args.folder, "w24", 24, 30_000)
            run_case("w24 lightning (k=5, 5 %, loss)", lambda: sqlanon.anonymize(input=db, qi=specs, k=5, max_suppression=0.05, search="lightning", metric="loss",
                                                                              search_options={"step_limit": args.steps, "time_limit": 600}, dry_run=True), args.rounds, say)
        elif case == "adult":
            qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in ADULT_COLUMNS}
            run_case("Adult optimal (k=10, 0 %, loss)", lambda: sqlanon.anonymize(input=os.path.join(ADULT, "adult.csv"), delimiter=";", qi=qi, k=10, max_suppression=0.0,
                                                                                metric="loss", dry_run=True), args.rounds, say)
        else:
            raise SystemExit(f"unknown case {case!r}")


if __name__ == "__main__":
    main()
