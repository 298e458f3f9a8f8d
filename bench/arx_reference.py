"""ARX's reference optima on Adult, side by side with sqlanon's optimal search (the tests assert them;
this prints the table with the work each case took).

    python bench/arx_reference.py [--search optimal|incognito|samarati]
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
    args = ap.parse_args()
    qi = {c: os.path.join(ADULT, f"adult_hierarchy_{c}.csv") for c in COLUMNS}
    print(f"{'metric':<10}{'k':>4}{'sup':>6}  {'ARX optimum':<28}{'sqlanon':<28}{'ARX value':>14}{'sqlanon value':>16}{'suppressed':>11}{'nodes':>7}{'queries':>8}{'s':>7}")
    total = 0.0
    for metric, k, sup, arx, value in CASES:
        t = time.perf_counter()
        r = sqlanon.anonymize(input=os.path.join(ADULT, "adult.csv"), delimiter=";", qi=qi, k=k, max_suppression=sup, metric=metric, search=args.search)
        seconds = time.perf_counter() - t
        total += seconds
        node = [r["transformation"][c] for c in COLUMNS]
        same = "=" if node == arx else "~"
        print(f"{metric:<10}{k:>4}{sup:>6.0%}  {str(arx):<28}{str(node) + ' ' + same:<28}{value:>14.4f}{r['metric']['value']:>16.4f}{r['suppressed_rows']:>11}{r['nodes_evaluated']:>7}{r['queries']:>8}{seconds:>7.1f}")
    print(f"total {total:.1f} s   (= same node as ARX, ~ a different node with the same value)")


if __name__ == "__main__":
    main()
