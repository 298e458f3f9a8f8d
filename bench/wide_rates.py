"""Issue 44: the genetic search's evaluations per second against lightning's node checks on the
same wide table (``bench/wide_table.py``'s t16 and t24, k=5, ARX's Loss), the same amount of work
each (``--steps`` evaluations: lightning's step limit; the genetic search's, unseeded so that
every step is one of its own evaluations), alternated in fresh processes, ``--repeat`` pairs,
and the ratio of each pair (measured in the same script run: the shared machine's load moves
both). Both evaluate frequency sets of the same fetched base set in-process (lightning a node's
levels, the genetic search a flexible cut's intervals).

    .venv/bin/python bench/wide_rates.py --steps 3000 --repeat 2 [--sup 1.0] [--out bench/results/wide_rates_s51.txt]

On a loaded machine the wall rates move with the load; the CPU columns (the anonymize call's
process CPU seconds, set-up included, the same for both) move much less. ``--ab OLD_TREE`` runs
the genetic search of OLD_TREE's sqlanon against this tree's instead (alternated, same steps):
the ratio is new / old evaluations per CPU second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import json, resource, sys, time
tree, bench, path, qis, wide, search, sup, steps = sys.argv[1:9]
sys.path.insert(0, tree)
sys.path.insert(1, bench)
import sqlanon, wide_table
opts = {"step_limit": int(steps)}
if search == "genetic":
    opts.update({"iterations": 10**9, "population": 100, "seed": 1, "seed_lattice": False})
cpu0 = time.process_time()
r = sqlanon.anonymize(input=path, qi=wide_table.qi_specs(int(qis), int(wide)), k=5, max_suppression=float(sup), search=search,
                      metric="loss", search_options=opts, dry_run=True)
h = r.extra.get("heuristic", {})
if search == "lightning":
    evaluations, seconds = h["evaluations"], h["seconds"]
else:
    evaluations, seconds = r.extra["evaluations"], r.extra["search_seconds"]
print(json.dumps({"evaluations": evaluations, "seconds": seconds, "rate": evaluations / seconds, "loss": r.metric.value,
                  "cpu": time.process_time() - cpu0}))
"""

TABLES = [("t16", 16, 4, 73_000), ("t24", 24, 6, 30_000)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sup", default="1.0")
    ap.add_argument("--only", default=None)
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--ab", default=None, metavar="OLD_TREE", help="the genetic search of OLD_TREE against this tree's")
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    import wide_table

    lines = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    say(f"\n## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: bench/wide_rates.py --steps {args.steps} --repeat {args.repeat} --sup {args.sup}"
        f"  ({os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f}); k=5, ARX's Loss")
    tree = os.path.dirname(HERE)
    if args.ab:
        say(f"genetic of {args.ab} (old) against {tree} (new), {args.steps} evaluations each")
        say(f"{'table':<6}{'pair':>5}{'old/s':>9}{'new/s':>9}{'old cpu':>9}{'new cpu':>9}{'new/old per cpu s':>19}{'same loss':>10}{'load1':>7}")
    else:
        say(f"{'table':<6}{'pair':>5}{'lightning/s':>12}{'genetic/s':>11}{'ratio':>7}{'light. s':>9}{'gen. s':>8}{'light. cpu':>11}{'gen. cpu':>9}{'cpu ratio':>10}{'load1':>7}")
    for name, qis, wide, rows in TABLES:
        if args.only and name != args.only:
            continue
        path = wide_table.write(os.path.join(args.folder, f"{name}.parquet"), rows, qis, wide)
        for pair in range(args.repeat):
            got = {}
            runs = [("old", args.ab, "genetic"), ("new", tree, "genetic")] if args.ab else [("lightning", tree, "lightning"), ("genetic", tree, "genetic")]
            for label, where, search in runs if pair % 2 == 0 else runs[::-1]:
                out = subprocess.run([sys.executable, "-c", CHILD, where, HERE, path, str(qis), str(wide), search, args.sup, str(args.steps)],
                                     capture_output=True, text=True, check=True)
                got[label] = json.loads(out.stdout.strip().splitlines()[-1])
            if args.ab:
                old, new = got["old"], got["new"]
                per_cpu = (new["evaluations"] / new["cpu"]) / (old["evaluations"] / old["cpu"])
                say(f"{name:<6}{pair + 1:>5}{old['rate']:>9.1f}{new['rate']:>9.1f}{old['cpu']:>9.2f}{new['cpu']:>9.2f}{per_cpu:>19.2f}"
                    f"{str(old['loss'] == new['loss']):>10}{os.getloadavg()[0]:>7.1f}")
                continue
            light, gen = got["lightning"], got["genetic"]
            cpu_ratio = (gen["evaluations"] / gen["cpu"]) / (light["evaluations"] / light["cpu"])
            say(f"{name:<6}{pair + 1:>5}{light['rate']:>12.1f}{gen['rate']:>11.1f}{gen['rate'] / light['rate']:>7.2f}"
                f"{light['seconds']:>9.2f}{gen['seconds']:>8.2f}{light['cpu']:>11.2f}{gen['cpu']:>9.2f}{cpu_ratio:>10.2f}{os.getloadavg()[0]:>7.1f}")
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
