"""A bound code list read in DuckDB: ``list_extract($1, code + 1)`` (the list a constant of the
statement) against ``list_extract((SELECT $1), code + 1)`` (read through a scalar subquery, what
:meth:`sqlanon.dialect.duckdb.DuckDBDialect.lookup` renders) and a join to a code table, over
``--rows`` rows of codes below ``--lengths`` (a 40K-leaf zip's list, a 29K-day birth date's),
each the sum of the looked-up values and a roll-up (``GROUP BY`` of two looked-up QIs, as
``store.create_rolled_up`` makes the released node's set), alternated, best of ``--repeat``,
wall and CPU seconds (the process's, DuckDB's threads among them) side by side, load average at
the start and the end.

    .venv/bin/python bench/list_lookup.py [--rows 8000000] [--lengths 100,40000] [--repeat 3] [--out bench/results/list_lookup.txt]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import duckdb
from bench_output import finish

SHAPES = {
    "constant list": "SELECT sum(list_extract($1, q0 % $2 + 1)) FROM fs",
    "scalar subquery": "SELECT sum(list_extract((SELECT $1), q0 % $2 + 1)) FROM fs",
}
ROLL_UPS = {
    "constant list": "SELECT count(*), sum(cnt) FROM (SELECT list_extract($1, q0 % $3 + 1) AS g0, list_extract($2, q1 + 1) AS g1, SUM(cnt) AS cnt FROM fs GROUP BY 1, 2)",
    "scalar subquery": "SELECT count(*), sum(cnt) FROM (SELECT list_extract((SELECT $1), q0 % $3 + 1) AS g0, list_extract((SELECT $2), q1 + 1) AS g1, SUM(cnt) AS cnt FROM fs GROUP BY 1, 2)",
}


def cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def timed(con, sql: str, params: list) -> tuple[float, float, object]:
    t, c = time.perf_counter(), cpu()
    got = con.execute(sql, params).fetchall()
    return time.perf_counter() - t, cpu() - c, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8_000_000)
    ap.add_argument("--lengths", default="100,40000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    lines = [f"bench/list_lookup.py --rows {args.rows} --lengths {args.lengths} --repeat {args.repeat}; duckdb {duckdb.__version__}; "
             f"load average at the start {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)"]
    print(lines[0], flush=True)
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    con.execute("CREATE TABLE fs AS SELECT ((i * 7919) % 40000)::INTEGER AS q0, (i % 29200)::INTEGER AS q1, 1::BIGINT AS cnt FROM range($1) r(i)", [args.rows])
    birth = [d // 30 for d in range(29200)]
    for length in [int(x) for x in args.lengths.split(",") if x]:
        codes = [v // 100 for v in range(length)]
        best: dict[str, tuple[float, float]] = {}
        answers = set()
        for _ in range(args.repeat):
            for name, shape in SHAPES.items():
                wall, used, got = timed(con, shape, [codes, length])
                answers.add(repr(got))
                best[f"sum, {name}"] = min(best.get(f"sum, {name}", (wall, used)), (wall, used))
            for name, sql in ROLL_UPS.items():
                wall, used, got = timed(con, sql, [codes, birth, length])
                answers.add(repr(got))
                best[f"roll-up, {name}"] = min(best.get(f"roll-up, {name}", (wall, used)), (wall, used))
        assert len(answers) == 2, answers  # every shape gives the same sum, every roll-up the same classes
        for what in ("sum", "roll-up"):
            base = best[f"{what}, constant list"]
            for name in SHAPES:
                wall, used = best[f"{what}, {name}"]
                lines.append(f"list of {length:>6,}, {what:>7}, {name:>15}: {wall:6.3f} s, {used:6.3f} CPU-s ({used / base[1]:.2f}x the constant list's CPU)")
                print(lines[-1], flush=True)
    finish(lines, args.out)


if __name__ == "__main__":
    main()
