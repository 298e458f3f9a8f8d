"""Scalability of bottom-up generalization (Wang, Yu, Chakraborty 2004, Section 6.2, Figure 4).

The paper enlarges Adult: for each record, sigma - 1 "variations" that take random leaf values on
rho randomly chosen VID attributes and agree with the record elsewhere. K = 150, rho = 3, VID = the 7
categorical attributes. Its slowest run (sigma = 30: 45,222 x 30 = 1,356,660 rows, 127,831 distinct
vids) took < 730 s (C++, 2.4 GHz Pentium IV), plus <= 50 s to build the index.

We only have the 30,162-row training file, so sigma = 30 gives 904,860 rows; sigma = 45 gives
1,357,290 rows, the paper's size. Each sigma runs in a fresh process (peak RSS is per run):

* ``index s``: the base frequency set + vid table (one scan of the enlarged table);
* ``search s``: the bottom-up search (Steps 1-3 per iteration, all in DuckDB);
* ``rows touched/step`` vs ``vids``: vid rows read + written when applying a generalization, against
  the size of the vid table -- the cost of a step follows the vids generalized, not all vids.

Run: ``python bench/bottom_up_scale.py [--sigmas 1,5,10,20,30,45] [--rho 3] [--k 150]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

PAPER_SECONDS = 730


def one(sigma: int, rho: int, k: int, seed: int, memory_limit: str, threads: int | None) -> dict:
    from bottom_up_adult import CLASS, DATA, HIER, load_hierarchy, load_rows

    from sqlanon.engine import connect
    from sqlanon.privacy import KAnonymity, Requirement
    from sqlanon.search.bottom_up import planner as bottom_up
    from sqlanon.search.context import SearchContext
    from sqlanon.engine.source import Source
    from sqlanon.privacy.needs import ClassNeeds
    from sqlanon.stats import Statistics

    header, rows = load_rows(os.path.join(DATA, "adult.csv"))
    qis = [q for q in HIER if q != "age"]
    qidx = [header.index(q) for q in qis]
    hierarchies = [load_hierarchy(q, os.path.join(DATA, "hierarchies", HIER[q]), {r[i] for r in rows}) for q, i in zip(qis, qidx)]
    # integer leaf codes of the original rows, then sigma - 1 variations each
    codes = np.array([[h.leaf_index[r[i]] for h, i in zip(hierarchies, qidx)] for r in rows], dtype=np.int32)
    cls = np.array([r[header.index(CLASS)] for r in rows], dtype=object)
    rng = np.random.default_rng(seed)
    n, m = codes.shape
    blocks = [codes]
    for _ in range(sigma - 1):
        var = codes.copy()
        pick = np.argsort(rng.random((n, m)), axis=1)[:, :rho]  # rho distinct attributes per row
        for j, h in enumerate(hierarchies):
            hit = (pick == j).any(axis=1)
            var[hit, j] = rng.integers(0, len(h.leaves), int(hit.sum()))
        blocks.append(var)
    allc = np.concatenate(blocks)
    cols = {}
    for j, (q, h) in enumerate(zip(qis, hierarchies)):
        dictionary = pa.array(h.leaves, pa.string())
        cols[q] = pa.DictionaryArray.from_arrays(pa.array(allc[:, j], pa.int32()), dictionary).cast(pa.string())
    cols[CLASS] = pa.array(np.tile(cls, sigma).tolist(), pa.string())
    del blocks, allc
    engine = connect(database=":memory:", memory_limit=memory_limit, threads=threads)
    engine.register_arrow("adult_big", pa.table(cols))
    del cols
    source = Source(kind="table", table="adult_big")
    t0 = time.perf_counter()
    stats = Statistics(engine, source, qis, hierarchies, class_column=CLASS, needs=ClassNeeds(majority_y=True))
    stats.prepare()
    t_index = time.perf_counter() - t0
    ctx = SearchContext(stats, Requirement([KAnonymity(k)], budget=0), None, {"trace": True})
    q0 = engine.queries
    t1 = time.perf_counter()
    plan = bottom_up.run(ctx)
    t_search = time.perf_counter() - t1
    trace = plan.extra["trace"]
    touched = [s["rows_touched"] for s in trace]
    vids_before = [plan.extra["vids"]] + [s["vids"] for s in trace[:-1]]
    ratios = [t / v for t, v in zip(touched, vids_before) if v]
    return {
        "sigma": sigma,
        "rows": stats.rows,
        "vids": plan.extra["vids"],
        "index_s": round(t_index, 2),
        "search_s": round(t_search, 2),
        "steps": plan.extra["steps"],
        "probes": plan.extra["probes"],
        "max_candidates": max((len(s["candidates"]) for s in trace), default=0),
        "queries": engine.queries - q0,
        "touched_mean": round(float(np.mean(touched)), 1) if touched else 0,
        "touched_max": int(max(touched)) if touched else 0,
        "touched_over_vids_mean": round(float(np.mean(ratios)), 4) if ratios else 0,
        "touched_over_vids_median": round(float(np.median(ratios)), 4) if ratios else 0,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "final_A": trace[-1]["A"] if trace else None,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sigmas", default="1,5,10,15,20,25,30,45")
    ap.add_argument("--rho", type=int, default=3)
    ap.add_argument("--k", type=int, default=150)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--memory-limit", default="3GB")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.rho, args.k, args.seed, args.memory_limit, args.threads)))
        return
    print(f"bottom-up scale-up: K = {args.k}, rho = {args.rho}, VID = 7 categorical Adult attributes; paper: <= {PAPER_SECONDS} s (sigma = 30, 1,356,660 rows, 127,831 vids)")
    head = f"{'sigma':>5} {'rows':>10} {'vids':>8} {'index s':>8} {'search s':>9} {'paper s':>8} {'steps':>5} {'probes':>6} {'maxCand':>7} {'touched/step':>12} {'touched/vids':>12} {'peak RSS MB':>11}"
    print(head)
    for sigma in [int(s) for s in args.sigmas.split(",")]:
        cmd = [sys.executable, os.path.abspath(__file__), "--one", str(sigma), "--rho", str(args.rho), "--k", str(args.k), "--seed", str(args.seed), "--memory-limit", args.memory_limit]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"sigma={sigma}: failed\n{out.stderr[-2000:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        paper = f"{PAPER_SECONDS}" if sigma == 30 else "-"
        print(
            f"{r['sigma']:>5} {r['rows']:>10,} {r['vids']:>8,} {r['index_s']:>8.2f} {r['search_s']:>9.2f} {paper:>8} {r['steps']:>5} {r['probes']:>6} {r['max_candidates']:>7} "
            f"{r['touched_mean']:>12,.0f} {r['touched_over_vids_mean']:>12.4f} {r['peak_rss_mb']:>11,.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
