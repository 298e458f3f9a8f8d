"""Generation at scale: the KRIMP generator's sampler, and ``sqlanon generate`` under --time-limit.

    python bench/generation.py [--rows 1000000] [--elements 19502] [--limit 120] [--skip-e2e]

A. The sampler alone (one subprocess each, so each peak RSS is its own), on a synthetic code
   table of ``--elements`` elements over Adult's 15 columns' value counts (random itemsets of 2-6
   items, usage 0-49): the previous row x element matrix draw (kept here as the reference) at 20K
   rows, against the current sampler (rejection first, the rest exact) at 20K and ``--rows`` rows:
   seconds, peak RSS, and whether the two give the same rows where they must (they draw the same
   distribution; the random streams differ, so only the distribution is compared, by tests).
B. ``sqlanon generate`` end to end on Adult repeated to ``--rows`` rows with ``--time-limit``:
   wall seconds, peak RSS, seconds per phase, rows generated of those asked, ``stopped_by`` and
   ``stopped_in``, whether anything was written, and whether the time limit was kept: the limit
   covers every phase, so the process's wall time (Python's start included) against the limit
   plus a small slack (``SLACK`` seconds: the start and the write, which is never cut short);
   beside it the baseline measured in the same run, one DuckDB GROUP BY of every column of the
   same file (a fresh process), and the load average at the start and the end of each run.
The load average is printed with the figures: on a shared machine they are not idle figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ADULT = next((p for p in (os.path.join(ROOT, "..", "shared", "datasets", "adult", "adult.csv"), os.path.join(ROOT, "..", "..", "shared", "datasets", "adult", "adult.csv"))
              if os.path.exists(p)), os.path.join(ROOT, "..", "shared", "datasets", "adult", "adult.csv"))
ADULT_VALUES = (2, 9, 16, 7, 14, 6, 5, 2, 41, 3, 20, 30, 40, 2, 5)


def synthetic_model(elements: int, seed: int = 0):
    from sqlanon.generation.generator import GeneratorModel

    rng = np.random.default_rng(seed)
    n_cols = len(ADULT_VALUES)
    item_column = np.concatenate([[c] * v for c, v in enumerate(ADULT_VALUES)])
    starts = np.concatenate([[0], np.cumsum(ADULT_VALUES)[:-1]])
    itemsets = [(int(i),) for i in range(len(item_column))]
    seen = set(itemsets)
    while len(itemsets) < elements:
        cols = rng.choice(n_cols, size=int(rng.integers(2, 7)), replace=False)
        s = tuple(sorted(int(starts[c] + rng.integers(ADULT_VALUES[c])) for c in cols))
        if s not in seen:
            seen.add(s)
            itemsets.append(s)
    return GeneratorModel.from_code_table(itemsets, rng.integers(0, 50, size=len(itemsets)), item_column, n_cols, 0.001)


def matrix_block(model, n_rows: int, rng) -> np.ndarray:
    """The previous sampler: per column a rows x elements weight matrix and its cumulative sums."""
    m = model.n_columns
    out = np.full((n_rows, m), -1, dtype=np.int64)
    filled = np.zeros(n_rows, dtype=np.int64)
    full = (np.int64(1) << np.int64(m)) - 1
    active = np.arange(n_rows)
    colbit = np.int64(1) << np.arange(m, dtype=np.int64)
    while len(active):
        keys = rng.random((len(active), m))
        keys[(filled[active][:, None] & colbit[None, :]) != 0] = np.inf
        dom = keys.argmin(axis=1)
        draws = rng.random(len(active))
        for c in range(m):
            sel = np.nonzero(dom == c)[0]
            if not len(sel):
                continue
            rows = active[sel]
            elems = model.by_column[c]
            ok = (model.masks[elems][None, :] & filled[rows][:, None]) == 0
            cs = np.cumsum(np.where(ok, model.weights[elems][None, :], 0.0), axis=1)
            pick = np.minimum((cs <= (draws[sel] * cs[:, -1])[:, None]).sum(axis=1), len(elems) - 1)
            bad = ~ok[np.arange(len(rows)), pick]
            if bad.any():
                pick[bad] = np.argmax(ok[bad] * np.arange(1, len(elems) + 1)[None, :], axis=1)
            chosen = elems[pick]
            vals = model.values[chosen]
            r, cc = np.nonzero(vals >= 0)
            out[rows[r], cc] = vals[r, cc]
            filled[rows] |= model.masks[chosen]
        active = active[filled[active] != full]
    return out


def sampler_child(kind: str, rows: int, elements: int) -> None:
    from sqlanon.generation.generator import generate

    model = synthetic_model(elements)
    t = time.perf_counter()
    if kind == "matrix":
        rng = np.random.Generator(np.random.PCG64(1))
        out = np.concatenate([matrix_block(model, min(65_536, rows - lo), rng) for lo in range(0, rows, 65_536)])
    else:
        out = generate(model, rows, seed=1)
    seconds = time.perf_counter() - t
    assert (out >= 0).all() and out.shape == (rows, model.n_columns)
    print(json.dumps({"seconds": seconds, "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def run_child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def adult_repeated(rows: int, path: str) -> str:
    import duckdb

    con = duckdb.connect()
    times = -(-rows // 30_162)
    con.execute("CREATE TABLE a AS SELECT * FROM read_csv(?, delim=';', header=true, all_varchar=true)", [ADULT])
    con.execute("CREATE TABLE r AS SELECT a.* FROM a, range(?) LIMIT ?", [times, rows])
    con.execute("COPY r TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")
    con.close()
    return path


def e2e(rows: int, limit: float) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        data = adult_repeated(rows, os.path.join(tmp, "adult.parquet"))
        out = os.path.join(tmp, "gen.parquet")
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "sqlanon"), "generate", "-i", data, "--seed", "1", "--time-limit", str(limit), "--json", "-o", out],
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
        # the largest child so far: this one, unless an earlier child (part A) was larger
        rss = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
        result = json.loads(proc.stdout) if proc.stdout.strip() else {"error": proc.stderr[-300:]}
        group_by = group_by_seconds(data)
        return {"wall": wall, "rss_mib": rss, "exit": proc.returncode, "written": os.path.exists(out), "group_by": group_by,
                **{k: result.get(k) for k in ("rows", "rows_asked", "stopped_by", "stopped_in", "scores_time_limited", "code_table_size", "phases", "error",
                                              "nas", "pct_equal_itemsets", "dissimilarity")}}


def group_by_seconds(path: str) -> float:
    """The baseline, measured in the same run: one DuckDB GROUP BY of every column of the input
    (what the frequency-set scan asks), in a fresh process like the run's."""
    code = ("import duckdb, time; con = duckdb.connect(); t = time.perf_counter(); "
            "cols = ', '.join('\"' + c + '\"' for c in con.execute('SELECT * FROM read_parquet(?) LIMIT 0', [__import__('sys').argv[1]]).fetchdf().columns); "
            "con.execute('SELECT ' + cols + ', COUNT(*) FROM read_parquet(?) GROUP BY ' + cols, [__import__('sys').argv[1]]).fetchall(); "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sampler_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--elements", type=int, default=19_502)
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--skip-e2e", action="store_true")
    ap.add_argument("--limits", type=float, nargs="*", default=None, help="part B only, once per time limit given")
    a = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (2 cores)")
    if a.limits:
        for limit in a.limits:
            e2e_lines(a.rows, limit)
        return
    print(f"A. sampler, synthetic code table of {a.elements:,} elements over 15 columns")
    print(f"{'sampler':<22}{'rows':>10}{'seconds':>10}{'peak MiB':>10}")
    for kind, rows in (("matrix (previous)", 20_000), ("current", 20_000), ("current", a.rows)):
        got = run_child(["--child", "matrix" if kind.startswith("matrix") else "current", str(rows), str(a.elements)])
        print(f"{kind:<22}{rows:>10,}{got['seconds']:>10.2f}{got['rss_mib']:>10.0f}")
    if a.skip_e2e:
        return
    e2e_lines(a.rows, a.limit)


SLACK = 2.0  # seconds past --time-limit the whole process may take (Python's start, the write)


def e2e_lines(rows: int, limit: float) -> None:
    print(f"\nB. sqlanon generate on Adult repeated to {rows:,} rows, --time-limit {limit:g} (load average {os.getloadavg()[0]:.2f} at start)")
    got = e2e(rows, limit)
    phases = got.get("phases") or {}
    print(f"exit {got['exit']}, wall {got['wall']:.1f} s, peak {got['rss_mib'] or 0:.0f} MiB, rows {got.get('rows')} of {got.get('rows_asked')}, "
          f"stopped_by {got.get('stopped_by')}, stopped_in {got.get('stopped_in')}, written {got.get('written')}, "
          f"scores_time_limited {got.get('scores_time_limited')}, code table {got.get('code_table_size')} elements")
    print("phases (s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()) + f"; sum {sum(phases.values()):.1f}")
    print(f"time limit: wall {got['wall']:.1f} s of {limit:g} s + {SLACK:g} s slack: {'kept' if got['wall'] <= limit + SLACK else 'NOT kept'} "
          f"(wall / limit {got['wall'] / limit:.2f})")
    print(f"scores: NAS {got.get('nas')}, % equal itemsets {got.get('pct_equal_itemsets')}, dissimilarity {got.get('dissimilarity')}")
    print(f"baseline: one GROUP BY of every column {got['group_by']:.2f} s; wall / GROUP BY {got['wall'] / got['group_by']:.1f}; "
          f"load average {os.getloadavg()[0]:.2f} at end")
    if got.get("error"):
        print("error:", got["error"])


if __name__ == "__main__":
    main()
