"""PostgreSQL and Spark side by side, each against its own plain ``GROUP BY`` (issue 43, "engines
at their floor"): at 1M Adult-like rows, k=10 at 0 % and 5 %, the optimal search in-process (the
base frequency set fetched once to this process) and all in SQL (``local_rows=0``), with the
report's phases and which path ran (``local_route``), and whether the plan is DuckDB's.

PostgreSQL is a server of the ``pgserver`` wheel in a temporary directory (the table loaded by
COPY, not timed; each run a child ``sqlanon anonymize`` process: wall time of the whole command).
Spark is one local SparkSession (``--master``, default ``local[2]``; the JVM start not counted),
borrowed by ``sqlanon.anonymize(..., connection=spark)`` in this process. Each engine's GROUP BY of
the 9 QIs is timed in the same run (median of ``--gb-runs`` after one untimed run) and every
ratio is against it. Spark is heavy on two cores: one run per case.

    python bench/engines.py                                  # both engines, 1M rows
    python bench/engines.py --engines postgres --rows 200000
    python bench/engines.py --engines postgres --before     # + all-SQL with the PostgreSQL shapes off
    python bench/engines.py --engines postgres --paths all-SQL --base-tree /tmp/base --out bench/results/X.txt

``--base-tree DIR`` (a checkout of another commit, e.g. ``git worktree add --detach /tmp/base main``):
PostgreSQL only, each case is run with that tree's sqlanon too, alternately (this tree's, the
base's, ``--repeat`` times), on the same server at the same load (``base`` rows).
``--out FILE`` writes every printed line to FILE.

PostgreSQL's rows also give the server's CPU seconds of the run (every server process: the
backend, parallel workers) against one GROUP BY's, and the client's: on a machine shared with
other jobs, wall time moves with their load, CPU much less.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from adult_like import COLUMNS  # noqa: E402
from scale_spine import ADULT, measured  # noqa: E402
from spark_engine import data_file, spark_group_by  # noqa: E402
from postgres_engine import load_into_postgres  # noqa: E402
from bench_output import finish  # noqa: E402

PHASES = ("hierarchies", "base_scan", "search", "verify")
PATHS = (("in-process", {}), ("all-SQL", {"local_rows": 0}))
#: PostgreSQL only, ``--before``: the all-SQL run as it was before issue 43's PostgreSQL shapes,
#: in the same run (a child process with them switched off: DuckDB's rule for one branch per node,
#: the pair marginals by a GROUPING SETS statement over 100,000 base-set rows)
BEFORE = (
    "import sys, runpy; from sqlanon.dialect.postgres import PostgresDialect; from sqlanon.engine.postgres import PostgresEngine; "
    "PostgresDialect.branch_rows = None; PostgresEngine.marginal_fetch_rows = None; "
    "sys.argv = ['sqlanon', *sys.argv[1:]]; runpy.run_module('sqlanon', run_name='__main__')"
)
TICK = os.sysconf("SC_CLK_TCK")
#: every line printed, for ``--out``
LINES: list[str] = []


def say(text: str) -> None:
    """Print ``text`` now and keep it for ``--out``."""
    print(text, flush=True)
    LINES.extend(text.split("\n"))


def server_cpu(pid: int) -> float:
    """CPU seconds of a PostgreSQL server so far: the postmaster's own and its reaped children's
    (the backends of finished connections, parallel workers) from its ``/proc`` stat, plus its
    live children's. Less moved by other jobs on a shared machine than wall time."""
    def stat(p: int) -> list[str]:
        with open(f"/proc/{p}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()

    f = stat(pid)
    total = sum(int(x) for x in f[11:15])
    for child in os.listdir("/proc"):
        if child.isdigit():
            try:
                c = stat(int(child))
            except OSError:
                continue
            if int(c[1]) == pid:
                total += int(c[11]) + int(c[12])
    return total / TICK


def postmaster(url: str) -> int | None:
    """The server's postmaster pid (None where it cannot be read: not this machine's)."""
    import psycopg

    with psycopg.connect(url) as con:
        data = con.execute("SHOW data_directory").fetchone()[0]
    try:
        with open(os.path.join(data, "postmaster.pid")) as f:
            return int(f.readline())
    except OSError:
        return None


def pg_group_by(url: str, runs: int) -> list[float]:
    import psycopg

    q = ", ".join('"' + c + '"' for c in COLUMNS)
    sql = "SELECT COUNT(*) FROM (SELECT " + q + ", COUNT(*) FROM adult GROUP BY " + q + ") g"
    out = []
    with psycopg.connect(url) as con:
        con.execute(sql).fetchone()
        for _ in range(runs):
            t = time.perf_counter()
            con.execute(sql).fetchone()
            out.append(time.perf_counter() - t)
    return out


def line(engine: str, k: str, sup: str, path: str, seconds: float, gb: float, r: dict, duck: dict | None, cpu: str = "") -> str:
    phases = r.get("timings") or {}
    same = "" if duck is None else ("yes" if r["transformation"] == duck["transformation"] and r["suppressed_rows"] == duck["suppressed_rows"]
                                    and abs(r["metric"]["value"] - duck["metric"]["value"]) < 1e-9 else "NO")
    route = (r.get("local_route") or "-").split(":")[0]
    return (f"{engine:>8} {k:>3} {sup:>5} {path:>10} {seconds:>7.1f} {seconds / gb:>6.1f}x {r['nodes_evaluated']:>5} {r.get('nodes_local') or 0:>5} "
            f"{r['queries']:>5} " + " ".join(f"{phases.get(p, 0):>6.1f}" for p in PHASES) + f"  {route:<10} {same:<4} {cpu}")


def header(cpu: bool = False) -> str:
    return (f"{'engine':>8} {'k':>3} {'sup':>5} {'path':>10} {'seconds':>7} {'ratio':>7} {'nodes':>5} {'local':>5} {'stmts':>5} "
            + " ".join(f"{p[:6]:>6}" for p in PHASES) + "  route      same"
            + ("  server CPU s (x GROUP BY's) + client CPU s; load" if cpu else ""))


def as_dict(release) -> dict:
    return {"transformation": release.transformation, "suppressed_rows": release.suppressed_rows, "metric": {"value": release.metric.value},
            "nodes_evaluated": release.nodes_evaluated, "nodes_local": release.nodes_local, "queries": release.queries,
            "timings": release.timings, "local_route": release.local_route}


def run_postgres(path: str, settings: list[tuple[str, str]], gb_runs: int, duck: dict, before: bool, paths: list, base_tree: str | None = None, repeat: int = 1) -> None:
    import pgserver

    server = pgserver.get_server(tempfile.mkdtemp(prefix="sqlanon_pg_"), cleanup_mode="stop")
    url = server.get_uri()
    try:
        rows, load_s = load_into_postgres(url, f"read_parquet('{path}')")
        pid = postmaster(url)
        c0 = server_cpu(pid) if pid else 0.0
        times = pg_group_by(url, gb_runs)
        gb = statistics.median(times)
        time.sleep(0.5)  # the closed connection's backend reaped
        gb_cpu = (server_cpu(pid) - c0) / (gb_runs + 1) if pid else 0.0
        say(f"\n## postgres: {rows:,} rows (loaded in {load_s:.1f} s, not counted); GROUP BY of the 9 QIs {gb:.2f} s ({'/'.join(f'{t:.2f}' for t in times)}), "
              f"{gb_cpu:.2f} server CPU-s each (its parallel workers' included); load average {os.getloadavg()[0]:.2f}")
        say(header(cpu=pid is not None))
        qi = []
        for c in COLUMNS:
            qi += ["--qi", f"{c}={os.path.join(ADULT, f'adult_hierarchy_{c}.csv')}"]
        paths = [*paths, *((("before/SQL", {"local_rows": 0}),) if before else ())]
        trees = [None, *([os.path.abspath(base_tree)] if base_tree else [])]
        for k, sup in settings:
            for (name, options), _run, tree in itertools.product(paths, range(repeat), trees):
                opts = [x for key, v in options.items() for x in ("--option", f"{key}={v}")]
                head = [sys.executable, "-c", BEFORE] if name.startswith("before") else [sys.executable, "-m", "sqlanon"]
                c0, client = (server_cpu(pid) if pid else 0.0), []
                env = dict(os.environ, PYTHONPATH=tree) if tree else None
                seconds, _, out = measured([*head, "anonymize", "--input", url, "--table", "adult", *qi, "--k", k,
                                            "--max-suppression", sup, "--metric", "precision", "--search", "optimal", "--dry-run", "--json", "-q", *opts], client, env)
                cpu = ""
                if pid:
                    time.sleep(0.5)  # the finished run's backend reaped
                    used = server_cpu(pid) - c0
                    cpu = f"{used:6.1f} ({used / gb_cpu:4.1f}x) + {client[0]:5.1f}; {os.getloadavg()[0]:.1f}" if gb_cpu else f"{used:6.1f} + {client[0]:5.1f}"
                say(line("postgres", k, sup, name if tree is None else "base/" + ("SQL" if "SQL" in name else "in-pr"), seconds, gb, json.loads(out), duck[(k, sup)], cpu))
    finally:
        server.cleanup()


def run_spark(path: str, settings: list[tuple[str, str]], gb_runs: int, duck: dict, master: str, paths: list) -> None:
    import sqlanon
    from pyspark.sql import SparkSession

    from sqlanon.engine.spark import default_conf

    conf = default_conf(master)
    conf["spark.driver.memory"] = "4g"
    t = time.perf_counter()
    builder = SparkSession.builder.master(master).appName("sqlanon-bench")
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    start = time.perf_counter() - t
    try:
        _, times = spark_group_by(spark, path, gb_runs)
        gb = statistics.median(times)
        say(f"\n## spark {spark.version} {master} (session start {start:.1f} s, not counted); GROUP BY of the 9 QIs {gb:.2f} s ({'/'.join(f'{t:.2f}' for t in times)}); load average {os.getloadavg()[0]:.2f}")
        say(header())
        qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
        for k, sup in settings:
            for name, options in paths:
                t = time.perf_counter()
                r = sqlanon.anonymize(input=path, qi=qi, k=int(k), max_suppression=float(sup), metric="precision", search="optimal", dry_run=True,
                                      search_options=options, connection=spark)
                say(line("spark", k, sup, name, time.perf_counter() - t, gb, as_dict(r), duck[(k, sup)], f"load {os.getloadavg()[0]:.1f}"))
    finally:
        spark.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--settings", default="10:0.0,10:0.05", help="k:max_suppression pairs")
    ap.add_argument("--engines", default="postgres,spark")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--gb-runs", type=int, default=3)
    ap.add_argument("--before", action="store_true", help="PostgreSQL: also the all-SQL run with issue 43's PostgreSQL shapes off (see BEFORE)")
    ap.add_argument("--paths", default="in-process,all-SQL", help="which of " + ",".join(n for n, _ in PATHS))
    ap.add_argument("--base-tree", help="PostgreSQL: also run the sqlanon of this checkout (another commit), alternately with this one's")
    ap.add_argument("--repeat", type=int, default=1, help="PostgreSQL: runs of each case (each tree's, alternately)")
    ap.add_argument("--out", help="write the printed lines to this file")
    args = ap.parse_args()
    paths = [p for p in PATHS if p[0] in args.paths.split(",")]
    import sqlanon

    path = data_file(args.rows)
    settings = [tuple(s.split(":")) for s in args.settings.split(",")]
    say(f"# bench/engines.py {' '.join(sys.argv[1:])}\n# {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC; load average {os.getloadavg()[0]:.2f} (2 cores); {args.rows:,} Adult-like rows")
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    duck = {}
    for k, sup in settings:
        r = sqlanon.anonymize(input=path, qi=qi, k=int(k), max_suppression=float(sup), metric="precision", search="optimal", dry_run=True)
        duck[(k, sup)] = as_dict(r)
    engines = args.engines.split(",")
    if "postgres" in engines:
        run_postgres(path, settings, args.gb_runs, duck, args.before, paths, args.base_tree, args.repeat)
    if "spark" in engines:
        run_spark(path, settings, args.gb_runs, duck, args.master, paths)
    finish(LINES, args.out)


if __name__ == "__main__":
    main()
