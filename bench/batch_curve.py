"""The batch curve: milliseconds per node against nodes per statement (sqlanon/stats/batch.py),
and the fixed cost of one statement (building its SQL, DuckDB parse/plan/fetch).

    python bench/batch_curve.py                                  # Adult (30,162 rows)
    python bench/batch_curve.py --input bench/out/adult_1m.parquet --nodes 64

The same random nodes (a fixed seed, from the middle heights of the lattice, where searches spend
their time) are evaluated with one statement per node and with batches of 2..64; wall and process
CPU seconds are printed (the machine may be shared: CPU seconds are the steadier figure).
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import resource
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ADULT = os.path.join(HERE, "..", "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=os.path.join(ADULT, "adult.csv"))
    ap.add_argument("--nodes", type=int, default=128)
    ap.add_argument("--sizes", default="1,2,4,8,16,32,64")
    ap.add_argument("--memory-limit", default="1GB")
    ap.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's)")
    args = ap.parse_args()

    import sqlanon.run.api as api
    from sqlanon.metrics import METRICS
    from sqlanon.privacy import KAnonymity, Requirement
    from sqlanon.stats import Statistics
    from sqlanon.stats import batch

    opts = dict(input=args.input, qi={c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}, k=5, memory_limit=args.memory_limit)
    if args.input.endswith(".csv"):
        opts["delimiter"] = ";"
    policy = api._as_policy(None, opts)
    session = api.Session(policy, lambda m: None, None)
    try:
        hs = session.hierarchies(api.qi_specs(policy))
        if args.threads:
            session.engine.set_option("threads", str(args.threads))
        stats = Statistics(session.engine, session.source, COLUMNS, hs)
        t = time.perf_counter()
        stats.prepare()
        print(f"{stats.rows:,} rows, base frequency set {stats.base.rows:,} tuples ({time.perf_counter() - t:.2f} s); "
              f"batch_size() for it: {batch.batch_size(stats.base.rows)}; load average {os.getloadavg()[0]:.1f} (2 cores)")
        lattice = list(itertools.product(*[range(h.max_level + 1) for h in hs]))
        top = sum(h.max_level for h in hs)
        middle = [n for n in lattice if top // 4 <= sum(n) <= top // 2]
        nodes = random.Random(1).sample(middle, min(args.nodes, len(middle)))
        req = Requirement([KAnonymity(5)], budget=int(0.05 * stats.rows))
        ok, metric = req.predicate(), METRICS["precision"]()
        # the fixed part: a one-node statement on a one-row set, built fresh vs from the text cache
        print(f"{'nodes/stmt':>10}{'stmts':>7}{'wall s':>8}{'cpu s':>8}{'ms/node wall':>14}{'ms/node cpu':>13}")
        sizes = [int(s) for s in args.sizes.split(",")]
        for size in sizes:  # warm-up: each batch shape's SQL text is built once (then cached)
            for start in range(0, len(nodes), size):
                if size > 1:
                    batch.evaluate_batch(stats, nodes[start : start + size], ok, metric)
        for size in sizes:
            w, c = time.perf_counter(), cpu()
            statements = 0
            for start in range(0, len(nodes), size):
                chunk = nodes[start : start + size]
                if size == 1:
                    stats.evaluate(chunk[0], ok, metric.aggregates(stats, chunk[0]))
                else:
                    batch.evaluate_batch(stats, chunk, ok, metric)
                statements += 1
            w, c = time.perf_counter() - w, cpu() - c
            print(f"{size:>10}{statements:>7}{w:>8.2f}{c:>8.2f}{1000 * w / len(nodes):>14.2f}{1000 * c / len(nodes):>13.2f}", flush=True)
        # per-statement fixed cost: sqlglot build + render of one batch statement, and a cached run
        chunk = nodes[:8]
        groups = batch.layout(stats, chunk)
        from sqlanon.expr.atoms import Params

        t = time.perf_counter()
        for _ in range(20):
            _sql = stats.engine.sql_text(batch.build(stats, groups, ok, metric, Params()))
        build_ms = (time.perf_counter() - t) / 20 * 1000
        t = time.perf_counter()
        for _ in range(20):
            _params = batch.batch_params(stats, groups, metric)
        params_ms = (time.perf_counter() - t) / 20 * 1000
        print(f"building one 8-node statement with sqlglot: {build_ms:.1f} ms; its parameters alone (cached text): {params_ms:.2f} ms")
    finally:
        session.close()


if __name__ == "__main__":
    main()
