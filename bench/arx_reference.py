"""ARX's reference optima on Adult, side by side with sqlanon's optimal search (the tests assert them;
this prints the table with the work each case took): nodes evaluated, node statements (a batch of
nodes is one statement), all queries, search seconds (the lattice search alone), nodes per second,
and the whole run's seconds (CSV read, base set, search, verification; no output written).

ARX 3.9.2's Flash checks 500-1,450 nodes on these 5 % cases (issue 12; per-case counts are not in
../shared/datasets/adult/README.md, so the range is printed as the comparison).

    python bench/arx_reference.py [--search optimal|incognito|samarati] [--option batch=1 --option probes=1]
"""

from __future__ import annotations

import argparse
import os
import time

import sqlanon

HERE = os.path.dirname(os.path.abspath(__file__))
ADULT = os.path.join(HERE, "..", "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
CASES = [
    ("precision", 2, 0.0, [0, 4, 1, 1, 3, 2, 0, 2, 0], 0.6111),
    ("precision", 5, 0.0, [0, 4, 1, 2, 3, 2, 0, 2, 0], 0.6667),
    ("precision", 10, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 0], 0.6667),
    ("precision", 100, 0.0, [0, 4, 1, 2, 3, 2, 2, 1, 0], 0.7222),
    ("precision", 2, 0.05, [0, 4, 0, 0, 1, 1, 0, 1, 0], 0.2896),
    ("precision", 5, 0.05, [0, 4, 0, 0, 3, 1, 0, 1, 0], 0.3656),
    ("precision", 10, 0.05, [0, 4, 0, 0, 3, 1, 0, 2, 0], 0.4140),
    ("precision", 100, 0.05, [0, 4, 0, 2, 3, 1, 1, 2, 0], 0.5753),
    ("entropy", 5, 0.04, [1, 0, 1, 1, 3, 2, 2, 0, 1], 255559.85455731067),
    ("entropy", 100, 0.04, [1, 1, 1, 1, 3, 2, 2, 1, 1], 379417.3460570988),
    ("entropy", 5, 0.0, [1, 2, 1, 1, 3, 2, 2, 1, 1], 407289.5388925293),
    ("entropy", 100, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 1], 453196.8932458743),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--search", default="optimal")
    ap.add_argument("--option", action="append", default=[], help="search option KEY=VALUE (e.g. batch=1, probes=1)")
    args = ap.parse_args()
    options = {k: int(v) for k, v in (o.split("=", 1) for o in args.option)}
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    print(f"{'metric':<10}{'k':>4}{'sup':>6}  {'ARX optimum':<28}{'sqlanon':<28}{'ARX value':>14}{'sqlanon value':>16}{'suppressed':>11}{'nodes':>7}{'ARX nodes':>10}{'stmts':>6}{'queries':>8}{'search s':>9}{'nodes/s':>8}{'run s':>7}")
    total = total_search = 0.0
    nodes_total = statements_total = 0
    for metric, k, sup, arx, value in CASES:
        t = time.perf_counter()
        r = sqlanon.anonymize(input=os.path.join(ADULT, "adult.csv"), delimiter=";", qi=qi, k=k, max_suppression=sup, metric=metric, search=args.search, search_options=options)
        seconds = time.perf_counter() - t
        total += seconds
        search_s = r.get("search_seconds", seconds)
        total_search += search_s
        nodes_total += r["nodes_evaluated"]
        statements_total += r.get("statements", 0)
        arx_nodes = "500-1450" if sup else "-"
        node = [r["transformation"][c] for c in COLUMNS]
        same = "=" if node == arx else "~"
        print(f"{metric:<10}{k:>4}{sup:>6.0%}  {str(arx):<28}{str(node) + ' ' + same:<28}{value:>14.4f}{r['metric']['value']:>16.4f}{r['suppressed_rows']:>11}{r['nodes_evaluated']:>7}{arx_nodes:>10}{r.get('statements', 0):>6}{r['queries']:>8}{search_s:>9.2f}{r['nodes_evaluated'] / max(search_s, 1e-9):>8.0f}{seconds:>7.1f}", flush=True)
    print(f"total: search {total_search:.1f} s, runs {total:.1f} s, {nodes_total} nodes in {statements_total} statements   (= same node as ARX, ~ a different node with the same value)")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (2 cores)")


if __name__ == "__main__":
    main()
