"""A new user's first release of a warehouse table (issue 41): profile, then anonymize by the policy
the profile wrote, unedited.

For each size (200K and 2M rows by default), engine (DuckDB, PostgreSQL from the pgserver wheel)
and k (5 and 10) it builds the hospital-admissions table of ``bench/warehouse_table.py``, runs

    sqlanon profile --input ... --table admissions --write-policy policy.yaml --k K
    sqlanon anonymize --policy policy.yaml --json

as child processes, and prints: the exit codes, the roles the profile found, per quasi-identifier
its level and the distinct values released, suppressed rows, ARX's Loss, seconds per phase, and an
independent check of the released table (no SQL of sqlanon's): every class over the released
quasi-identifiers *and* every released column linked to one (city, state, diagnosis_chapter) has
at least k rows, suppressed rows apart.

Goal at 200K rows, k=5: the unedited policy runs; no QI ends at ``*``; the birth date keeps at
least 10-year age bands; the release is k-anonymous over every QI and every linked column.

    python bench/warehouse.py                         # 200K and 2M rows, DuckDB and PostgreSQL
    python bench/warehouse.py --rows 200000 --engines duckdb --out bench/results/warehouse.txt
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import warehouse_table  # noqa: E402

CLI = [sys.executable, "-m", "sqlanon"]


def run(args: list[str]) -> tuple[int, dict | None, str, float]:
    t = time.perf_counter()
    out = subprocess.run(CLI + args, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT})
    seconds = time.perf_counter() - t
    try:
        data = json.loads(out.stdout) if out.stdout.strip().startswith("{") else None
    except json.JSONDecodeError:
        data = None
    last = (out.stderr.strip().splitlines() or [""])[-1]
    return out.returncode, data, last, seconds


@contextlib.contextmanager
def postgres():
    import pgserver

    data = tempfile.mkdtemp(prefix="sqlanon-bench-pg-")
    srv = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield srv.get_uri()
    finally:
        srv.cleanup()
        shutil.rmtree(data, ignore_errors=True)


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def released_check(fetch, table: str, columns: list[str], k: int, marker: str = "*") -> dict:
    """Classes under k over ``columns`` of the released ``table``, suppressed rows (every QI the
    marker) apart; ``fetch(sql)`` runs a query on the engine that holds the release."""
    cols = ", ".join(quote(c) for c in columns)
    text = [f"CAST({quote(c)} AS VARCHAR)" for c in columns]
    suppressed = " AND ".join(f"coalesce({t}, '') = '{marker}'" for t in text)
    small = fetch(
        f"SELECT count(*), coalesce(sum(n), 0) FROM (SELECT count(*) AS n FROM {quote(table)} "
        f"WHERE NOT ({suppressed}) GROUP BY {cols}) c WHERE n < {int(k)}"
    )[0]
    classes = fetch(f"SELECT count(*) FROM (SELECT 1 FROM {quote(table)} GROUP BY {cols}) c")[0][0]
    return {"classes": int(classes), "classes_under_k": int(small[0]), "rows_in_them": int(small[1])}


def distinct_released(fetch, table: str, column: str) -> int:
    return int(fetch(f"SELECT count(DISTINCT {quote(column)}) FROM {quote(table)}")[0][0])


def one_case(engine: str, source: str, rows: int, k: int, work: str, fetch) -> list[str]:
    here = os.path.join(work, f"{engine}_{rows}_k{k}")  # the policy's outputs (its report) beside it
    os.makedirs(here, exist_ok=True)
    policy = os.path.join(here, "policy.yaml")
    prof_args = ["profile", "--input", source, "--table", warehouse_table.TABLE, "--write-policy", policy, "--overwrite", "--k", str(k), "--json", "-q"]
    prc, prof, plast, psec = run(prof_args)
    lines = [f"== {engine} {rows:,} rows, k={k}", f"profile: exit {prc}, {psec:.1f} s" + ("" if prc == 0 else f": {plast}")]
    if prof:
        roles: dict[str, list[str]] = {}
        for col in prof.get("columns", []):
            roles.setdefault(col.get("role", "?"), []).append(col["name"])
        lines.append("roles: " + "; ".join(f"{r}: {', '.join(c)}" for r, c in sorted(roles.items())))
    if prc != 0:
        return lines
    arc, rep, alast, asec = run(["anonymize", "--policy", policy, "--json", "-q"])
    lines.append(f"anonymize (policy unedited): exit {arc}, {asec:.1f} s" + ("" if arc == 0 else f": {alast}"))
    if arc != 0 or not rep:
        return lines
    qis = rep.get("quasi_identifiers", [])
    levels = {h["attribute"]: h.get("distinct_per_level") for h in rep.get("hierarchies", [])}
    at_root = []
    target = rep.get("output_table") or rep.get("output")
    table = str(target).removeprefix("table ").split(".")[-1].strip('"') if target else None
    for qi in qis:
        lvl = rep["transformation"].get(qi)
        per = levels.get(qi) or []
        top = "  <- at *" if per and lvl is not None and isinstance(lvl, int) and lvl == len(per) - 1 else ""
        if top:
            at_root.append(qi)
        released = distinct_released(fetch, table, qi) if table else "?"
        lines.append(f"  {qi:<18} level {lvl} of {len(per) - 1 if per else '?'}, {released} distinct released{top}")
    lines.append(f"suppressed rows {rep.get('suppressed_rows'):,} of {rep.get('rows'):,}; ARX's Loss {rep.get('arx_quality', {}).get('loss')}")
    lines.append("phases (s): " + ", ".join(f"{p} {s}" for p, s in (rep.get("timings") or {}).items()))
    if table:
        # the columns that follow a QI (a column following a sensitive one is no QI's)
        released = fetch_columns(fetch, table)
        linked = [c for c, source in warehouse_table.LINKED.items() if c in released and source in qis]
        check = released_check(fetch, table, list(dict.fromkeys(qis + linked)), k)
        verdict = "k-anonymous" if check["classes_under_k"] == 0 else "NOT k-anonymous"
        lines.append(f"independent check over QIs + linked {linked}: {check['classes']:,} classes, {check['classes_under_k']} under k "
                     f"({check['rows_in_them']} rows): {verdict}")
        ages = birth_band_years(rep, "dob")
        met = not at_root and check["classes_under_k"] == 0 and ages is not None and ages <= 10
        lines.append(f"goal (no QI at *, dob in bands of 10 years or less, k-anonymous): {'met' if met else 'NOT met'}"
                     + (f" (at *: {', '.join(at_root)})" if at_root else "") + ("; dob released as dates" if ages == 0 else f"; dob released in {ages if ages else '?'}-year bands"))
    return lines


def birth_band_years(rep: dict, column: str) -> int | None:
    """The width in years of the bands the birth date is released in (1: the age itself, None:
    ``*`` or no age hierarchy), read from its ``age:DAY,W1,W2,..`` spec and its level."""
    spec = str((rep.get("policy") or {}).get("qi", {}).get(column, "") or next(
        (h.get("origin", "") for h in rep.get("hierarchies", []) if h.get("attribute") == column), ""))
    level = rep["transformation"].get(column)
    if not spec.startswith("age:") or not isinstance(level, int):
        return None
    widths = [1] + [int(w) for w in spec.split(",")[1:]]  # level 1 is the age in years
    return widths[level - 1] if 1 <= level <= len(widths) else (0 if level == 0 else None)


def fetch_columns(fetch, table: str) -> list[str]:
    return [r[0] for r in fetch(f"SELECT column_name FROM information_schema.columns WHERE table_name = '{table}'")]


def duckdb_case(rows: int, ks: list[int], work: str) -> list[str]:
    path = os.path.join(work, f"warehouse_{rows}.duckdb")
    with duckdb.connect(path) as con:
        warehouse_table.build(con, rows)
    out = []
    for k in ks:
        def fetch(sql: str) -> list:
            with duckdb.connect(path, read_only=True) as con:
                return con.execute(sql).fetchall()
        out += one_case("duckdb", path, rows, k, work, fetch)
    return out


def postgres_case(rows: int, ks: list[int], work: str) -> list[str]:
    import psycopg

    with postgres() as uri:
        with duckdb.connect() as con:
            warehouse_table.build(con, rows)
            warehouse_table.to_postgres(con, uri)
        out = []
        for k in ks:
            def fetch(sql: str) -> list:
                with psycopg.connect(uri) as pg:
                    return pg.execute(sql.replace("AS VARCHAR", "AS TEXT")).fetchall()
            out += one_case("postgresql", uri, rows, k, work, fetch)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="200000,2000000")
    ap.add_argument("--k", default="5,10")
    ap.add_argument("--engines", default="duckdb,postgresql")
    ap.add_argument("--out", help="also write the figures to this file")
    args = ap.parse_args()
    ks = [int(k) for k in args.k.split(",")]
    lines = [f"bench/warehouse.py at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
    with tempfile.TemporaryDirectory(prefix="sqlanon-warehouse-") as work:
        for rows in (int(r) for r in args.rows.split(",")):
            for engine in args.engines.split(","):
                case = duckdb_case if engine == "duckdb" else postgres_case
                got = case(rows, ks, work)
                print("\n".join(got), flush=True)
                lines += got
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
