"""Time the hierarchy builders over many distinct values (a builder is a Python loop over the
column's distinct values: the cost at 10^5 of them).

    python bench/hierarchy_builders.py [--values 100000] [--repeat 3]

Prints the best of ``--repeat`` runs per builder: exact bands over DOUBLE and BIGINT texts,
calendar levels over timestamps, ages over birth dates (the Hierarchy's validation included).
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import time

from sqlanon.hierarchy import dates
from sqlanon.hierarchy.builders import numeric_bands


def cases(n: int) -> dict:
    rnd = random.Random(1)
    doubles = list({repr(rnd.uniform(-1e6, 1e6)) for _ in range(n)})
    bigints = list({str(rnd.randint(-(2**63), 2**63 - 1)) for _ in range(n)})
    stamps = list({str(dt.datetime(2000, 1, 1) + dt.timedelta(seconds=rnd.randint(0, 10**9))) for _ in range(n)})
    births = list({(dt.date(1920, 1, 1) + dt.timedelta(days=rnd.randint(0, 36_000))).isoformat() for _ in range(n)})
    return {
        "bands:0.1,0.5,1 (DOUBLE)": lambda: numeric_bands(doubles, ["0.1", "0.5", "1"], "x", double=True),
        "bands:10,100,1000 (BIGINT)": lambda: numeric_bands(bigints, ["10", "100", "1000"], "x"),
        "dates:hour,day,month,quarter,year,5y,decade": lambda: dates.date_levels(stamps, ["hour", "day", "month", "quarter", "year", "5y", "decade"], "x"),
        "age:2026-01-01,5,10,20": lambda: dates.age_bands(births, dt.date(2026, 1, 1), [5, 10, 20], "x"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--values", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for name, build in cases(args.values).items():
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            h = build()
            best = min(best, time.perf_counter() - start)
        print(f"{name:45s} {len(h.rows):>8,} leaves  {best:6.2f} s")


if __name__ == "__main__":
    main()
