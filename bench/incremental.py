"""Incremental releases on Adult: 10 daily batches appended to a release (``--like-release``),
against re-anonymizing everything each day.

Adult (30,162 rows, ARX's hierarchies) is shuffled by a seeded hash and split into day 0 (the
rest) and ``--days`` daily batches of ``--batch-rows`` rows, each a table of one DuckDB file. Day 0
is released in full (k-anonymity, the optimal search); then each day

* its batch is released like the previous release, strategy ``suppress`` and, in a second
  lineage, ``hold`` (k over the lineage's union, the default check);
* everything so far (day 0 .. day d) is re-anonymized from scratch, as one would without
  incremental releases: its transformation may change (consumers' released values change).

Per day it prints rows released, suppressed or held, whether the lineage still meets k (read back
independently: the union of the lineage's output tables grouped by the QIs), and the seconds.

    flock /tmp/sqlanon-bench.lock .venv/bin/python bench/incremental.py | tee bench/results/incremental.txt
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import sqlanon  # noqa: E402

ADULT = os.path.join(HERE, "..", "examples", "adult")
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def qi_specs() -> dict[str, str]:
    return {q: os.path.join(ADULT, f"adult_hierarchy_{q}.csv") for q in QIS}


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def load(db: str, days: int, batch_rows: int, order: str | None = None) -> int:
    """Day 0 and the daily batches as tables of ``db``; returns day 0's rows. ``order``: a column
    the rows are sorted by first (the batches drift: day 0 holds its smallest values)."""
    con = duckdb.connect(db)
    csv = os.path.join(ADULT, "adult.csv").replace("'", "''")
    first_key = f"TRY_CAST({quoted(order)} AS INTEGER), {quoted(order)}, " if order else ""
    con.execute(f"CREATE TABLE adult AS SELECT *, row_number() OVER (ORDER BY {first_key}hash(sex, age, race, education, occupation, \"native-country\", workclass, \"salary-class\", \"marital-status\") ) AS rn FROM read_csv('{csv}', delim=';', header=true, all_varchar=true)")
    total = con.execute("SELECT COUNT(*) FROM adult").fetchone()[0]
    first = total - days * batch_rows
    cols = ", ".join(quoted(c) for c, *_ in con.execute("DESCRIBE adult").fetchall() if c != "rn")
    con.execute(f"CREATE TABLE day0 AS SELECT {cols} FROM adult WHERE rn <= {first}")
    for d in range(1, days + 1):
        lo, hi = first + (d - 1) * batch_rows, first + d * batch_rows
        con.execute(f"CREATE TABLE day{d} AS SELECT {cols} FROM adult WHERE rn > {lo} AND rn <= {hi}")
    con.execute("DROP TABLE adult")
    con.close()
    return first


def union_k(db: str, tables: list[str]) -> int:
    """The smallest class of the union of ``tables`` (all-``*`` rows are the suppressed ones)."""
    con = duckdb.connect(db, read_only=True)
    classes: Counter = Counter()
    cols = ", ".join(f"CAST({quoted(q)} AS VARCHAR)" for q in QIS)
    for t in tables:
        for *key, n in con.execute(f"SELECT {cols}, COUNT(*) FROM {quoted(t)} GROUP BY ALL").fetchall():
            if any(v != "*" for v in key):
                classes[tuple(key)] += n
    con.close()
    return min(classes.values())


def timed(fn, **kwargs):
    t0 = time.perf_counter()
    result = fn(**kwargs)
    return result, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=10)
    ap.add_argument("--batch-rows", type=int, default=1000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-suppression", type=float, default=0.05)
    ap.add_argument("--order", default=None, help="sort the rows by this column before splitting them into days (drifting batches); default: a seeded shuffle")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sqlanon-incremental-")
    try:
        run(work, args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: str, args) -> None:
    dbs = {s: os.path.join(work, f"{s}.duckdb") for s in ("suppress", "hold", "full")}
    first = load(dbs["suppress"], args.days, args.batch_rows, args.order)
    for s in ("hold", "full"):
        shutil.copy(dbs["suppress"], dbs[s])
    common = {"qi": qi_specs(), "k": args.k, "max_suppression": args.max_suppression, "search": "optimal"}
    root = {}
    for s in ("suppress", "hold"):
        root[s], secs = timed(sqlanon.anonymize, input=dbs[s], table="day0", output_table="rel0", **common)
    print(f"Adult, QIs {', '.join(QIS)}; k={args.k}, max_suppression={args.max_suppression}, optimal search, DuckDB")
    print(f"day 0: {first:,} rows released in full ({secs:.2f} s): transformation {root['suppress']['transformation']}, {root['suppress']['suppressed_rows']} suppressed")
    print(f"then {args.days} daily batches of {args.batch_rows:,} rows" + (f", rows sorted by {args.order} first (later days hold larger values: the batches drift)" if args.order else " (a seeded shuffle)"))
    print()
    header = f"{'day':>3} | {'suppress: released':>18} {'suppr.':>6} {'k ok':>5} {'s':>5} | {'hold: released':>14} {'(held)':>6} {'held':>5} {'k ok':>5} {'s':>5} | {'re-anonymize all: rows':>22} {'suppr.':>6} {'same T':>6} {'s':>5}"
    print(header)
    print("-" * len(header))
    parent = {s: root[s]["release_id"] for s in ("suppress", "hold")}
    outputs: dict[str, list[str]] = {"suppress": ["rel0"], "hold": ["rel0"]}
    totals = Counter()
    con = duckdb.connect(dbs["full"])
    con.execute("CREATE TABLE so_far AS SELECT * FROM day0")
    con.close()
    for d in range(1, args.days + 1):
        cells = []
        for s in ("suppress", "hold"):
            r, secs = timed(sqlanon.anonymize, input=dbs[s], table=f"day{d}", like_release=parent[s], output_table=f"rel{d}", on_break=s)
            parent[s] = r["release_id"]
            outputs[s].append(f"rel{d}")
            inc = r.extra["incremental"]
            smallest = union_k(dbs[s], outputs[s])
            assert smallest == inc["lineage_min_class"], (smallest, inc["lineage_min_class"])
            ok = "yes" if smallest >= args.k else "NO"
            if s == "suppress":
                cells.append(f"{inc['released_rows']:>18,} {inc['suppressed_rows']:>6,} {ok:>5} {secs:>5.2f}")
            else:
                cells.append(f"{inc['released_rows']:>14,} {inc['released_from_held']:>6,} {inc['held_rows']:>5,} {ok:>5} {secs:>5.2f}")
            totals[f"{s}_released"] += inc["released_rows"]
            totals[f"{s}_seconds"] += secs
        con = duckdb.connect(dbs["full"])
        con.execute(f"INSERT INTO so_far SELECT * FROM day{d}")
        con.close()
        full, secs = timed(sqlanon.anonymize, input=dbs["full"], table="so_far", output_table="full", overwrite=True, **common)
        same = "yes" if full.transformation == root["suppress"]["transformation"] else "NO"
        totals["full_seconds"] += secs
        totals["changed"] += same == "NO"
        cells.append(f"{full['rows']:>22,} {full['suppressed_rows']:>6,} {same:>6} {secs:>5.2f}")
        print(f"{d:>3} | " + " | ".join(cells))
    print()
    n = args.days * args.batch_rows
    print(f"batches: {n:,} new rows; suppress released {totals['suppress_released']:,} in {totals['suppress_seconds']:.2f} s, hold released {totals['hold_released']:,} in {totals['hold_seconds']:.2f} s")
    print(f"re-anonymizing everything each day: {totals['full_seconds']:.2f} s in all; its transformation changed on {totals['changed']} of {args.days} days")
    print("k ok: the union of the lineage's output tables, grouped by the QIs (read back by this script), has no class under k")


if __name__ == "__main__":
    main()
