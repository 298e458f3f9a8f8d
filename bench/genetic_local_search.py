"""Is the genetic search converged? Iterated local search from a solution, same fitness (by SQL).

    python bench/genetic_local_search.py --k 10 --trees paper [--start best.json] [--seconds 180]

From ``--start`` (a ``transformation`` JSON, e.g. the ``transformation`` column of the CSV that
``bench/genetic_adult.py`` writes; default the all-general solution) it climbs to a local optimum
under LM over every single bit flip (repaired, the flipped bit kept) and every shift of a numeric
end point by 1..3 positions, then repeats: flip 2..12 random bits of the best, climb again, keep it
when better, until ``--seconds``. Not part of the library (the paper's search is the GA); used to
show how far the GA's best is from a strong local optimum (docs/genetic.md).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import genetic_adult as B  # noqa: E402


def evaluator(k: int, trees: str, work: str):
    from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective
    from sqlanon.search.genetic import planner as genetic

    path = B.clean_parquet(work)
    ctx = B.context(path, k, "lm", {"numeric": ["age", "education-num"]}, B.TREE_SETS[trees])
    layout = genetic.layout_for(ctx.qis, ctx.hierarchies, ctx.stats.column_freqs, ctx.options)
    objective, costs = build_objective("lm", {}, B.CLASS)
    ev = FlexibleEvaluator(ctx.stats, layout, objective, ctx.requirement, costs)
    ev.prepare()
    return layout, ev


def neighbours(layout, bits) -> list[tuple]:
    out = set()
    for j in range(layout.nbits):
        c = list(bits)
        c[j] ^= 1
        out.add(layout.repair(c, [j]))
    for coder, (a, b) in zip(layout.coders, layout.offsets):
        if not coder.numeric:
            continue
        for j in range(a, b):
            if bits[j]:
                for d in (-3, -2, -1, 1, 2, 3):
                    if a <= j + d < b and not bits[j + d]:
                        c = list(bits)
                        c[j], c[j + d] = 0, 1
                        out.add(tuple(c))
    out.discard(tuple(bits))
    return list(out)


def climb(ev, layout, bits):
    best = ev.score([bits])[0]["value"]
    while True:
        nb = neighbours(layout, bits)
        scores = ev.score(nb)
        i = min(range(len(nb)), key=lambda i: scores[i]["value"])
        if scores[i]["value"] >= best - 1e-12:
            return bits, best
        bits, best = nb[i], scores[i]["value"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--trees", choices=sorted(B.TREE_SETS), default="paper")
    ap.add_argument("--start", help="a transformation JSON file (default: the all-general solution)")
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/sqlanon_genetic_bench")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = random.Random(args.seed)
    layout, ev = evaluator(args.k, args.trees, args.work)
    if args.start:
        with open(args.start) as fh:
            start = layout.bits_from_transformation(json.load(fh))
    else:
        start = tuple([0] * layout.nbits)
    print(json.dumps({"start": ev.score([start])[0]["value"]}), flush=True)
    bits, best = climb(ev, layout, start)
    t0 = time.perf_counter()
    print(json.dumps({"seconds": 0, "lm": round(best, 5), "evaluations": ev.evaluations}), flush=True)
    while time.perf_counter() - t0 < args.seconds:
        c = list(bits)
        flips = rng.sample(range(layout.nbits), rng.randint(2, 12))
        for j in flips:
            c[j] ^= 1
        cand, value = climb(ev, layout, layout.repair(c, flips))
        if value < best - 1e-12:
            bits, best = cand, value
            print(json.dumps({"seconds": round(time.perf_counter() - t0), "lm": round(best, 5), "evaluations": ev.evaluations}), flush=True)
    agg = ev.score([bits], per_column=True)[0]
    print(json.dumps({"k": args.k, "trees": args.trees, "lm": round(best, 5), "suppressed": agg["suppressed"],
                      "evaluations": ev.evaluations, "lm_per_column": dict(zip(layout.qis, [round(x, 4) for x in agg["lm_per_column"]])),
                      "transformation": layout.transformation(bits)}))
    ev.drop()


if __name__ == "__main__":
    main()
