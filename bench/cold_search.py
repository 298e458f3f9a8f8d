"""A search's fixed cost in a fresh process (what a CLI run pays): each case runs in a new
interpreter (import sqlanon, one ``anonymize`` call on Adult, nothing written), optionally
alternated with another tree's sqlanon, printing the search seconds, the run's and the whole
process's, nodes, statements and the load.

    python bench/cold_search.py [--old OLD_TREE] [--repeat 3] [precision:10:0 loss:10:0 ...]

A case is ``metric:k:max_suppression`` on Adult's 9 QIs, search optimal.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)
ADULT = os.path.join(TREE, "examples", "adult")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]
ONE = """
import os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {tree!r})
import sqlanon
qi = {{c: os.path.join({adult!r}, f"adult_hierarchy_{{c}}.csv") for c in {columns!r}}}
r = sqlanon.anonymize(input=os.path.join({adult!r}, "adult.csv"), delimiter=";", qi=qi, k={k}, max_suppression={sup}, metric={metric!r}, search="optimal")
print(f"search {{r['search_seconds']:.3f}} run {{r['seconds']:.3f}} process {{time.perf_counter() - t0:.3f}} nodes {{r['nodes_evaluated']}} statements {{r['statements']}} load {{os.getloadavg()[0]:.1f}}")
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--old", help="another checkout's root, run alternately with this one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("cases", nargs="*", default=["precision:10:0", "loss:10:0"])
    args = ap.parse_args()
    trees = [("old", os.path.abspath(args.old))] if args.old else []
    trees.append(("new", TREE))
    for _ in range(args.repeat):
        for label, tree in trees:
            for case in args.cases:
                metric, k, sup = case.split(":")
                code = ONE.format(tree=tree, adult=ADULT, columns=COLUMNS, k=int(k), sup=float(sup), metric=metric)
                out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tree)
                line = out.stdout.strip() or out.stderr.strip().splitlines()[-1]
                print(f"{label:<4} {case:<18} {line}", flush=True)


if __name__ == "__main__":
    main()
