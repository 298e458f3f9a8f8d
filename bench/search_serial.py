"""How much of the optimal search can more threads speed up at all (issue 26: the search's
speed-up from one thread to two).

Runs the optimal search on an Adult-like Parquet file in this process, on one engine thread,
with every compiled kernel (``sqlanon.stats.local.kernels``) and every SQL statement timed, and
splits the search's wall time into kernels, statements and the rest: Python (the lattice's
bookkeeping, planning the batches, NumPy glue), which runs on one thread whatever the engine's
threads. From that serial share ``S`` of a one-thread search ``T1`` it prints Amdahl's bound for
two threads, ``T1 / (S + (T1 - S) / 2)``: the speed-up the search would reach if every kernel
and every statement ran exactly twice as fast on two threads, which none does. Then the same
search unwrapped on one and on two threads, alternated, and their medians: the speed-up measured.

    python bench/search_serial.py --rows 10000000
    python bench/search_serial.py --rows 10000000 --settings 10:0.05 --repeat 5

The kernel wrappers cost ~1 us a call (a 0 % search makes ~1,500 calls); they are only on in the
decomposition run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = os.path.join(ROOT, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--settings", default="10:0,10:0.05", help="k:max_suppression pairs")
    ap.add_argument("--repeat", type=int, default=3, help="alternations of the one- and two-thread searches")
    args = ap.parse_args()
    src = os.path.join(HERE, "out", f"adult_{args.rows // 1_000_000}m.parquet" if args.rows >= 1_000_000 else f"adult_{args.rows}.parquet")
    if not os.path.exists(src):
        sys.path.insert(0, HERE)
        from adult_like import generate

        generate(args.rows, src)

    import sqlanon.run.api as api
    from sqlanon.engine import duckdb as engine_duckdb
    from sqlanon.stats import local
    from sqlanon.stats.local import kernels as local_kernels

    assert local.warm_up(wait=True), "the compiled kernels did not load"
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    spent = {"kernels": 0.0, "statements": 0.0}
    in_search = [False]

    def timed(fn, what):
        def call(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                if in_search[0]:
                    spent[what] += time.perf_counter() - t
        return call

    kernels = {name: getattr(local_kernels, name) for name in dir(local_kernels) if hasattr(getattr(local_kernels, name), "py_func")}
    run_on = engine_duckdb.DuckDBEngine._run_on
    lap = api.PhaseClock.lap

    def next_phase(self, name):
        lap(self, name)
        in_search[0] = name == "base_scan"  # the search runs from the base scan's lap to its own

    def search(k: int, sup: float, threads: int, wrapped: bool) -> float:
        spent.update(kernels=0.0, statements=0.0)
        if wrapped:
            for name, fn in kernels.items():
                setattr(local_kernels, name, timed(fn, "kernels"))
            engine_duckdb.DuckDBEngine._run_on = timed(run_on, "statements")
        api.PhaseClock.lap = next_phase
        try:
            r = api.anonymize(input=src, qi=qi, k=k, max_suppression=sup, metric="precision", search="optimal", memory_limit="1GB",
                              threads=threads, output=os.path.join(HERE, "out", "serial_release.parquet"), overwrite=True).to_dict()
        finally:
            for name, fn in kernels.items():
                setattr(local_kernels, name, fn)
            engine_duckdb.DuckDBEngine._run_on = run_on
            api.PhaseClock.lap = lap
            in_search[0] = False
        return float(r["timings"]["search"])

    print(f"{args.rows:,} rows, optimal search, precision; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    for setting in args.settings.split(","):
        k, sup = int(setting.split(":")[0]), float(setting.split(":")[1])
        t1 = search(k, sup, 1, wrapped=True)
        kern, stmts = spent["kernels"], spent["statements"]
        serial = max(t1 - kern - stmts, 0.0)
        bound = t1 / (serial + (t1 - serial) / 2)
        print(f"k={k}, {sup:.0%}: one-thread search {t1:.3f} s = kernels {kern:.3f} + statements {stmts:.3f} + Python {serial:.3f} s "
              f"({serial / t1:.0%}); two threads at most {bound:.2f}x (Amdahl, kernels and statements twice as fast)")
        ones, twos = [], []
        for _ in range(args.repeat):
            ones.append(search(k, sup, 1, wrapped=False))
            twos.append(search(k, sup, 2, wrapped=False))
        m1, m2 = statistics.median(ones), statistics.median(twos)
        print(f"    measured, {args.repeat} alternations: one thread {min(ones):.3f}-{max(ones):.3f} s, two {min(twos):.3f}-{max(twos):.3f} s; "
              f"medians {m1:.3f} / {m2:.3f} s: {m1 / m2:.2f}x", flush=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
