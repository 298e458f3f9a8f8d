"""A DataFrame input against the same rows from a Parquet file: the run's wall time and the
Python memory it allocates (tracemalloc: Python objects and NumPy buffers; DuckDB's own memory
is not traced), for pandas, polars, Arrow and Parquet inputs of the same Adult-like rows.

    python bench/dataframe_input.py --rows 1000000

A frame copied into Python (rows as objects, or a pandas conversion) would show as a traced peak
of the order of the frame's own size; DuckDB scanning the frame's buffers shows a small one.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import tracemalloc

import duckdb

import sqlanon


def frames(rows: int, where: str) -> dict:
    """The same rows as pandas, polars, Arrow and a Parquet file (built by DuckDB)."""
    con = duckdb.connect()
    rel = con.sql(
        "SELECT lpad(CAST(1000 + (i * 7919) % 5000 AS VARCHAR), 5, '0') AS zip, 18 + (i * 31) % 70 AS age,"
        " CASE WHEN i % 3 = 0 THEN 'F' ELSE 'M' END AS sex,"
        " ['flu', 'cold', 'asthma', 'hiv'][1 + (i * 13) % 4] AS disease FROM range(" + str(int(rows)) + ") t(i)")
    table = rel.to_arrow_table()
    path = os.path.join(where, "people.parquet")
    rel.write_parquet(path)
    out = {"parquet": path, "arrow": table, "pandas": table.to_pandas()}
    try:
        import polars

        out["polars"] = polars.from_arrow(table)
    except ImportError:  # polars is in the test extra only
        pass
    con.close()
    return out


def run(source, qi: dict) -> tuple[float, int, object]:
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        if isinstance(source, str):
            release = sqlanon.anonymize(input=source, qi=qi, k=10, max_suppression=0.02, output=source + ".k10.parquet", overwrite=True)
        else:
            release = sqlanon.anonymize(source, qi=qi, k=10, max_suppression=0.02)
        seconds = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return seconds, peak, release


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    qi = {"zip": "mask", "age": "bands:5,10,20", "sex": "flat"}
    with tempfile.TemporaryDirectory() as where:
        inputs = frames(args.rows, where)
        size = int(inputs["pandas"].memory_usage(deep=True).sum())
        run(inputs["arrow"], qi)  # modules and compiled kernels loaded once
        print(f"{args.rows:,} rows; the pandas frame holds {size / 1e6:.1f} MB")
        print(f"{'input':<10}{'seconds':>9}{'traced peak MB':>16}  transformation (frames: released to memory; Parquet: to a file)")
        for name, source in inputs.items():
            seconds, peak, release = run(source, qi)
            print(f"{name:<10}{seconds:>9.2f}{peak / 1e6:>16.2f}  {release.transformation} suppressed {release.suppressed_rows:,}")
            if hasattr(release, "close"):
                release.close()


if __name__ == "__main__":
    main()
