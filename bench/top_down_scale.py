"""Scalability of the top-down sequential-release search (Wang & Fung 2006, Figure 5).

The paper's enlarged Set A: every record r of Ti gets alpha-1 "variations" with a unique key Ki,
q attributes of Xi (chosen uniformly) given random values and the others inherited from r. Top6
(X,Y)-anonymity with Y = K1 and k = 40. Each size runs in a fresh process (peak RSS is that
process's); the paper spent 885 s at 1M records per table (Pentium IV, 1 GB RAM).

    python bench/top_down_scale.py [--sizes 200000,400000,600000,800000,1000000] [--q 2] [--taxonomies paper|anjana]
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

from _top_down_common import CLASS, JOIN, T1_ATTRS, T2_ONLY, TAXONOMIES, hierarchy_specs, load_adult, run_planner

PAPER_1M_SECONDS = 885


def enlarge(df, cols, key, size, q, rng):

    base = df[cols].reset_index(drop=True)
    idx = rng.integers(0, len(base), size)
    idx[: len(base)] = np.arange(min(len(base), size))
    out = base.iloc[idx].reset_index(drop=True)
    variation = np.ones(size, dtype=bool)
    variation[: min(len(base), size)] = False
    domains = {c: base[c].unique() for c in cols if c != CLASS}
    attrs = list(domains)
    nv = int(variation.sum())
    picks = np.argsort(rng.random((nv, len(attrs))), axis=1)[:, :q]
    rows = np.flatnonzero(variation)
    for j, c in enumerate(attrs):
        chosen = (picks == j).any(axis=1)
        target = rows[chosen]
        values = domains[c][rng.integers(0, len(domains[c]), len(target))]
        col = out[c].to_numpy(copy=True)
        col[target] = values
        out[c] = col
    out.insert(0, key, rng.permutation(size).astype(str))
    return out


def child(args) -> None:
    qi = json.loads(args.qi)
    x = list(dict.fromkeys(T1_ATTRS + JOIN + T2_ONLY))
    t0 = time.perf_counter()
    plan, _ = run_planner(args.t1, qi, [args.t2], x, ["K1"], 40, memory_limit=args.memory_limit)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mb": peak, "steps": plan.extra["specializations"], "queries": plan.extra["queries"],
                      "A": plan.extra["privacy_achieved"], "join_rows": plan.extra["join_rows_estimated"], "search_seconds": plan.extra["search_seconds"]}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="200000,400000,600000,800000,1000000")
    ap.add_argument("--q", type=int, default=2)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--taxonomies", default="paper", choices=TAXONOMIES)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--t1")
    ap.add_argument("--t2")
    ap.add_argument("--qi")
    args = ap.parse_args()
    if args.child:
        return child(args)
    work = tempfile.mkdtemp(prefix="sqlanon_scale_")
    qi = hierarchy_specs(work, args.taxonomies)
    df = load_adult()
    rng = np.random.default_rng(11)
    print(f"enlarged Set A (q={args.q}, {args.taxonomies} taxonomies), Top6 (X,Y)-anonymity, Y=K1, k=40; paper: {PAPER_1M_SECONDS} s at 1M per table")
    print(f"{'records/table':>13} {'seconds':>8} {'search s':>8} {'peak RSS MB':>11} {'steps':>5} {'queries':>7} {'A_Y(X)':>6} {'join rows (estimated)':>22} {'paper s':>8}")
    for size in [int(s) for s in args.sizes.split(",")]:
        t1 = enlarge(df, T1_ATTRS + [CLASS], "K1", size, args.q, rng)
        t2 = enlarge(df, T2_ONLY + JOIN, "K2", size, args.q, rng)
        p1, p2 = os.path.join(work, f"t1_{size}.parquet"), os.path.join(work, f"t2_{size}.parquet")
        t1.to_parquet(p1, index=False)
        t2.to_parquet(p2, index=False)
        del t1, t2
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--t1", p1, "--t2", p2, "--qi", json.dumps(qi), "--memory-limit", args.memory_limit]
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        if res.returncode != 0:
            print(res.stderr)
            raise SystemExit(1)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        paper = "885" if size == 1_000_000 else ""
        print(f"{size:>13,} {r['seconds']:8.1f} {r['search_seconds']:8.1f} {r['peak_rss_mb']:11.0f} {r['steps']:>5} {r['queries']:>7} {r['A']:>6} {r['join_rows']:>22,} {paper:>8}")
        os.remove(p1)
        os.remove(p2)


if __name__ == "__main__":
    main()
