"""A metric's value lists saved once in a table vs bound in every statement (issue 26).

On the ``wide`` shape of ``bench/shapes.py`` (24 QIs over 30,000 rows, each with a 20,000-leaf
hierarchy), lightning with ARX's Loss and a fixed amount of work (``--steps`` evaluations, no time
limit), each run in a process of its own, the two modes alternated
(``sqlanon.stats.batch.VALUES_TABLE``): ``table`` (the default) and ``bound`` (before).

    PYTHONPATH=. .venv/bin/python bench/values_table.py [--steps 100] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import shapes  # noqa: E402

CHILD = r"""
import json, sys, time
import sqlanon
from sqlanon.stats import batch
batch.VALUES_TABLE = sys.argv[1] == "table"
data, qi, steps = sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
c0 = time.process_time()
rep = sqlanon.anonymize(input=data, qi=qi, k=2, max_suppression=0.05, search="lightning", metric="loss",
                        search_options={"step_limit": steps, "time_limit": 3600}, dry_run=True)
print(json.dumps({"search": rep["timings"]["search"], "cpu": round(time.process_time() - c0, 2), "evals": rep["heuristic"]["evaluations"],
                  "loss": rep["arx_quality"]["loss"], "stmts": rep.get("queries")}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": os.path.dirname(HERE)}
    with tempfile.TemporaryDirectory() as tmp:
        data, qi = shapes.wide_table(tmp, 24, 30_000, 20_000)
        print(f"24 QIs x 20K leaves, 30,000 rows, lightning Loss k=2 5 %, {args.steps} evaluations; load {os.getloadavg()[0]:.1f}", flush=True)
        for _ in range(args.rounds):
            for mode in ("table", "bound"):
                load = os.getloadavg()[0]
                out = subprocess.run([sys.executable, "-c", CHILD, mode, data, json.dumps(qi), str(args.steps)], capture_output=True, text=True, env=env, check=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"{mode:<6} search {r['search']:>6.2f} s  process cpu {r['cpu']:>6.2f} s  evals {r['evals']}  stmts {r['stmts']}  loss {r['loss']:.4f}  load {load:.1f}-{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
