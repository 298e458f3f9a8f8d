"""DuckDB vs Spark (local mode) on Adult-like Parquet files: the optimal search's time on each
engine and its ratio to the same engine's own plain ``GROUP BY`` scan of the 9 QIs.

One process holds both engines: DuckDB through ``sqlanon.anonymize(...)`` (its own in-memory
connection), Spark through ``sqlanon.anonymize(..., connection=spark)`` on one SparkSession built
here with :func:`sqlanon.engine.spark.default_conf` (what ``--engine spark`` sets) and
``--master`` (default ``local[2]``). The JVM start is timed apart and not counted. Each plan is a
dry run (search + verification of the final node, no release written), ARX's Adult hierarchies,
precision metric. "ratio" = plan seconds / that engine's GROUP BY seconds (both warm: the GROUP BY
runs once untimed first, so file metadata and the JIT are warm for both; then the median of
``RUNS`` timed runs).

    python bench/spark_engine.py                                # 1M and 10M rows, k=10 at 0 % and 5 %
    python bench/spark_engine.py --rows 1000000 --profile       # + Spark's slowest statements

``--profile`` records every Spark statement's wall time (by kind: CACHE TABLE / SELECT / ..) and
prints the totals and the slowest few: where Spark's time goes.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = os.path.join(ROOT, "examples", "adult")
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)

from adult_like import COLUMNS, generate  # noqa: E402


def data_file(rows: int) -> str:
    path = os.path.join(HERE, "out", f"adult_like_{rows}.parquet")
    if not os.path.exists(path):
        t = time.perf_counter()
        generate(rows, path)
        print(f"generated {path} ({rows:,} rows) in {time.perf_counter() - t:.1f} s (not counted)", flush=True)
    return path


#: the GROUP BY baseline is timed this many times (after one untimed run) and its median used: one
#: timing on a shared 2-core machine moved by 2x (Spark 2.2-3.8 s within minutes)
RUNS = 3


def quoted(cols, q: str) -> str:
    return ", ".join(q + c + q for c in cols)


def duck_group_by(path: str, runs: int = RUNS) -> tuple[int, list[float]]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    sql = "SELECT COUNT(*) FROM (SELECT " + quoted(COLUMNS, '"') + ", COUNT(*) AS n FROM read_parquet(?) GROUP BY ALL)"
    con.execute(sql, [path]).fetchone()  # warm
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        n = con.execute(sql, [path]).fetchone()[0]
        times.append(time.perf_counter() - t)
    con.close()
    return n, times


def spark_group_by(spark, path: str, runs: int = RUNS) -> tuple[int, list[float]]:
    df = spark.read.parquet(path)
    sql = "SELECT COUNT(*) FROM (SELECT " + quoted(COLUMNS, "`") + ", COUNT(*) AS n FROM src GROUP BY " + quoted(COLUMNS, "`") + ")"
    df.createOrReplaceTempView("src")
    spark.sql(sql).collect()  # warm
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        n = spark.sql(sql).collect()[0][0]
        times.append(time.perf_counter() - t)
    spark.catalog.dropTempView("src")
    return n, times


class Profile:
    """Wall time of every Spark statement, by its first words."""

    def __init__(self):
        from sqlanon.engine.spark import SparkEngine

        self.by_kind = collections.defaultdict(lambda: [0, 0.0])
        self.slowest: list[tuple[float, str]] = []
        original = SparkEngine._run
        profile = self

        def timed(engine, sql, fetch, params=None):
            t = time.perf_counter()
            try:
                return original(engine, sql, fetch, params)
            finally:
                seconds = time.perf_counter() - t
                kind = " ".join(sql.split()[:2]).upper() if sql.upper().startswith("CACHE") else sql.split()[0].upper()
                profile.by_kind[kind][0] += 1
                profile.by_kind[kind][1] += seconds
                profile.slowest.append((seconds, " ".join(sql.split())[:160]))

        SparkEngine._run = timed

    def report(self) -> None:
        for kind, (n, s) in sorted(self.by_kind.items(), key=lambda kv: -kv[1][1]):
            print(f"    spark {kind:<14} {n:>5} statements {s:>8.1f} s  ({1000 * s / n:.0f} ms each)")
        for s, sql in sorted(self.slowest, reverse=True)[:5]:
            print(f"    {s:7.2f} s  {sql}")
        self.by_kind.clear()
        self.slowest.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", default="1000000,10000000", help="comma-separated row counts")
    ap.add_argument("--settings", default="10:0.0,10:0.05", help="k:max_suppression pairs")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--spark-conf", action="append", default=[], help="extra KEY=VALUE for the session")
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--profile", action="store_true", help="Spark statement times by kind, and the slowest")
    ap.add_argument("--gb-runs", type=int, default=RUNS, help="timed GROUP BY runs (their median is the baseline)")
    args = ap.parse_args()
    gb_runs = max(1, args.gb_runs)
    import sqlanon
    from sqlanon.engine.spark import default_conf

    engines = args.engines.split(",")
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC; load average {os.getloadavg()[0]:.2f} (2 cores); master {args.master}", flush=True)
    spark = None
    if "spark" in engines:
        from pyspark.sql import SparkSession

        conf = default_conf(args.master)
        conf["spark.driver.memory"] = args.driver_memory
        conf.update(kv.split("=", 1) for kv in args.spark_conf)
        t = time.perf_counter()
        builder = SparkSession.builder.master(args.master).appName("sqlanon-bench")
        for k, v in conf.items():
            builder = builder.config(k, v)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        print(f"Spark {spark.version} session start {time.perf_counter() - t:.1f} s (not counted); conf {sorted(conf.items())}", flush=True)
    profile = Profile() if args.profile and spark is not None else None
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    for rows in (int(r) for r in args.rows.split(",")):
        path = data_file(rows)
        gb, runs = {}, {}
        if "duckdb" in engines:
            groups, runs["duckdb"] = duck_group_by(path, gb_runs)
        if spark is not None:
            groups, runs["spark"] = spark_group_by(spark, path, gb_runs)
        gb = {e: statistics.median(t) for e, t in runs.items()}
        print(f"\n## {rows:,} rows ({groups:,} distinct QI tuples); plain GROUP BY of the 9 QIs (median of {gb_runs}): "
              + ", ".join(f"{e} {gb[e]:.2f} s ({'/'.join(f'{x:.2f}' for x in t)})" for e, t in runs.items()) + f"; load average {os.getloadavg()[0]:.2f}", flush=True)
        print(f"{'k':>4} {'maxsup':>6} {'engine':>7} {'seconds':>8} {'ratio':>7} {'nodes':>6} {'stmts':>6} {'queries':>8} {'ms/query':>9}  node / metric / suppressed  (same as DuckDB)")
        for setting in args.settings.split(","):
            k, sup = setting.split(":")
            results = {}
            for engine in engines:
                conn = {"connection": spark} if engine == "spark" else {}
                t = time.perf_counter()
                r = sqlanon.anonymize(input=path, qi=qi, k=int(k), max_suppression=float(sup), metric="precision", search="optimal", dry_run=True, **conn)
                seconds = time.perf_counter() - t
                results[engine] = r
                node = [r.transformation[c] for c in COLUMNS]
                same = ""
                if engine != "duckdb" and "duckdb" in results:
                    d = results["duckdb"]
                    same = "yes" if r.transformation == d.transformation and r.suppressed_rows == d.suppressed_rows and abs(r.metric.value - d.metric.value) < 1e-9 else "NO"
                print(f"{k:>4} {sup:>6} {engine:>7} {seconds:>8.1f} {seconds / gb[engine]:>6.1f}x {r.nodes_evaluated:>6} {r.extra.get('statements', 0):>6} {r.queries:>8} {1000 * seconds / r.queries:>9.0f}  {node} {r.metric.value:.4f} {r.suppressed_rows:,}  {same}", flush=True)
                if profile is not None and engine == "spark":
                    profile.report()
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f} (2 cores)")
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
