"""The same runs on DuckDB and on PostgreSQL: time, statements, and whether the plans agree.

Starts a local PostgreSQL server from the ``pgserver`` wheel (test extras), loads the input into
a table with COPY (not timed), and runs ``sqlanon anonymize`` (optimal, ARX's Adult hierarchies)
against the DuckDB source (CSV/Parquet) and against the PostgreSQL table, each in a child process
(wall time and peak RSS of the client; the server's memory is its own). Also times one plain
``GROUP BY`` of the 9 QIs on each engine as the baseline.

    python bench/postgres_engine.py                      # Adult, 30,162 rows
    python bench/postgres_engine.py --rows 1000000       # the Adult-like generator (bench/adult_like.py)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from scale_spine import ADULT, COLUMNS, measured  # noqa: E402


LOAD = r"""
import sys, time, duckdb, psycopg
url, src_sql = sys.argv[1], sys.argv[2]
table = duckdb.connect().sql("SELECT * FROM " + src_sql).to_arrow_table()
t = time.perf_counter()
with psycopg.connect(url, autocommit=True) as con:
    con.execute("DROP TABLE IF EXISTS adult")
    con.execute("CREATE TABLE adult (" + ", ".join('"' + c + '" TEXT' for c in table.column_names) + ")")
    with con.cursor().copy("COPY adult FROM STDIN") as copy:
        for batch in table.to_batches(100_000):
            for row in zip(*[c.to_pylist() for c in batch.columns]):
                copy.write_row(row)
    con.execute("ANALYZE adult")
print(table.num_rows, time.perf_counter() - t)
"""


def load_into_postgres(url: str, src_sql: str) -> tuple[int, float]:
    """In a child process, so this process stays small (a child's peak RSS starts at its parent's)."""
    _, _, out = measured([sys.executable, "-c", LOAD, url, src_sql])
    rows, seconds = out.split()
    return int(rows), float(seconds)


def pg_group_by(url: str) -> float:
    import psycopg

    q = ", ".join('"' + c + '"' for c in COLUMNS)
    with psycopg.connect(url) as con:
        t = time.perf_counter()
        con.execute("SELECT COUNT(*) FROM (SELECT " + q + ", COUNT(*) FROM adult GROUP BY " + q + ") g").fetchone()
        return time.perf_counter() - t


def duck_group_by(src_sql: str) -> float:
    import duckdb

    con = duckdb.connect()
    q = ", ".join('"' + c + '"' for c in COLUMNS)
    t = time.perf_counter()
    con.execute("SELECT COUNT(*) FROM (SELECT " + q + ", COUNT(*) FROM " + src_sql + " GROUP BY " + q + ")").fetchone()
    seconds = time.perf_counter() - t
    con.close()
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=0, help="0: Adult itself; else an Adult-like table of this many rows")
    ap.add_argument("--settings", default="5:0.05,10:0.0,100:0.0", help="k:max_suppression pairs")
    ap.add_argument("--genetic", action="store_true", help="also a seeded genetic run (LM, k=10, age numeric) on both engines: evaluations per second")
    args = ap.parse_args()
    import pgserver

    if args.rows:
        from adult_like import generate

        path = os.path.join(HERE, "out", f"adult_like_{args.rows}.parquet")
        if not os.path.exists(path):
            generate(args.rows, path)
        duck_flags = ["--input", path]
        src_sql = f"read_parquet('{path}')"
    else:
        path = os.path.join(ADULT, "adult.csv")
        duck_flags = ["--input", path, "--format", "csv", "--delimiter", ";"]
        src_sql = f"read_csv('{path}', delim=';', header=true, all_varchar=true)"
    server = pgserver.get_server(tempfile.mkdtemp(prefix="sqlanon_pg_"), cleanup_mode="stop")
    url = server.get_uri()
    try:
        rows, load_s = load_into_postgres(url, src_sql)
        print(f"{rows:,} rows; loaded into PostgreSQL in {load_s:.1f} s (not counted)")
        gb = {"duckdb": duck_group_by(src_sql), "postgres": pg_group_by(url)}
        print(f"plain GROUP BY of the 9 QIs: duckdb {gb['duckdb']:.2f} s, postgres {gb['postgres']:.2f} s")
        qi = []
        for c in COLUMNS:
            qi += ["--qi", f"{c}={os.path.join(ADULT, f'adult_hierarchy_{c}.csv')}"]
        print(f"{'k':>4} {'maxsup':>6} {'engine':>9} {'seconds':>8} {'x GROUP BY':>10} {'RSS MB':>7} {'nodes':>6} {'queries':>8} {'ms/query':>8}  same plan")
        for setting in args.settings.split(","):
            k, sup = setting.split(":")
            results = {}
            for engine, flags in (("duckdb", duck_flags), ("postgres", ["--input", url, "--table", "adult"])):
                cmd = [sys.executable, "-m", "sqlanon", "anonymize", *flags, *qi, "--k", k, "--max-suppression", sup,
                       "--search", "optimal", "--dry-run", "--json", "-q"]
                seconds, rss, out = measured(cmd)
                r = json.loads(out)
                results[engine] = r
                same = "" if engine == "duckdb" else ("yes" if r["transformation"] == results["duckdb"]["transformation"] and abs(r["metric"]["value"] - results["duckdb"]["metric"]["value"]) < 1e-9 else "NO")
                print(f"{k:>4} {sup:>6} {engine:>9} {seconds:>8.1f} {seconds / gb[engine]:>9.1f}x {rss:>7.0f} {r['nodes_evaluated']:>6} {r['queries']:>8} {1000 * seconds / r['queries']:>8.1f}  {same}")
        if args.genetic:
            ga = ["--qi", "age=numeric", "--numeric", "age", "--k", "10", "--search", "genetic", "--metric", "lm",
                  "--option", "seed=1", "--option", "iterations=3000", "--dry-run", "--json", "-q"]
            for c in COLUMNS:
                if c != "age":
                    ga += ["--qi", f"{c}={os.path.join(ADULT, f'adult_hierarchy_{c}.csv')}"]
            runs = {}
            for engine, flags in (("duckdb", duck_flags), ("postgres", ["--input", url, "--table", "adult"])):
                seconds, rss, out = measured([sys.executable, "-m", "sqlanon", "anonymize", *flags, *ga])
                runs[engine] = r = json.loads(out)
                same = "" if engine == "duckdb" else ("yes" if r["transformation"] == runs["duckdb"]["transformation"] else "NO")
                print(f"genetic {engine:>9}: {seconds:6.1f} s, {r['evaluations']} evaluations, {r['evaluations_per_second']} per second, LM {r['lm']:.4f}  {same}")
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
