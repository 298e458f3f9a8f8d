"""The model cases of ``bench/arx_reference.py --group models`` in CPU seconds, this checkout
beside another (``--base-tree DIR``, e.g. ``git worktree add --detach /tmp/base main``): each
round runs one warm process per tree, alternately (this tree, the base, this tree, ...), each
process a warm-up run, then every model case ``--repeat`` times; per case the search's CPU
seconds (the report's ``cpu_timings["search"]``: the process's, every thread's, which the load
inflates far less than wall seconds), the minimum over every run of the tree, and the nodes
evaluated and the node found (which must be the same on both trees).

    .venv/bin/python bench/models_cpu.py [--base-tree DIR] [--rounds 3] [--repeat 2] [--cases 'hier-0.15;0.2-close'] [--out bench/results/models_cpu.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from bench_output import finish

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def one(cases: list[str], repeat: int) -> None:
    """In this process (the sqlanon of ``PYTHONPATH``'s first entry): the cases' search CPU
    seconds, nodes and node, printed as one JSON line."""
    sys.path.insert(0, os.environ.get("PYTHONPATH", ROOT).split(os.pathsep)[0])
    import arx_reference as ref
    from sqlanon.stats import local

    args = argparse.Namespace(search="optimal")
    todo = [m for m in ref.MODELS if m[0] in cases]
    first = todo[0]
    ref.run_case(args, {}, "precision", first[1], 0.05, ref.COLUMNS[:-1], {"sensitive_column": "salary-class", **first[2]})
    local.warm_up(wait=True)
    out = {}
    for label, k, extra in todo:
        for _ in range(repeat):
            r, _ = ref.run_case(args, {}, "precision", k, 0.05, ref.COLUMNS[:-1], {"sensitive_column": "salary-class", **extra})
            got = out.setdefault(label, {"cpu": [], "wall": [], "nodes": r.nodes_evaluated, "node": [r.transformation[c] for c in ref.COLUMNS[:-1]]})
            got["cpu"].append((r.cpu_timings or {}).get("search"))
            got["wall"].append(r.extra.get("search_seconds"))
    print(json.dumps(out))


def run(tree: str, cases: list[str], repeat: int) -> dict:
    """One process of ``tree``'s sqlanon over the cases (:func:`one`)."""
    env = {**os.environ, "PYTHONPATH": tree}
    got = subprocess.run([sys.executable, __file__, "--one", ";".join(cases), "--repeat", str(repeat)], capture_output=True, text=True, env=env, cwd=HERE, check=True)
    return json.loads(got.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--base-tree", help="also run the sqlanon of this checkout, alternately with this one's")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cases", default="distinct-2;0.2-close;entropy-1.5;hier-0.15;ordered-0.2;recursive-4,2", help="the cases, separated by ';'")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.one is not None:
        one(args.one.split(";"), args.repeat)
        return
    cases = [c for c in args.cases.split(";") if c]
    trees = [("this", ROOT)] + ([("base", os.path.abspath(args.base_tree))] if args.base_tree else [])
    lines = [f"bench/models_cpu.py --rounds {args.rounds} --repeat {args.repeat}{' --base-tree ' + args.base_tree if args.base_tree else ''} (this = {ROOT}); load average at the start {os.getloadavg()[0]:.1f} (2 cores)"]
    print(lines[0], flush=True)
    runs: dict[str, list[dict]] = {name: [] for name, _ in trees}
    for rnd in range(args.rounds):
        for name, tree in trees:
            load = os.getloadavg()[0]
            got = run(tree, cases, args.repeat)
            runs[name].append(got)
            line = f"round {rnd + 1} {name:<5} load {load:5.1f}  " + "  ".join(f"{c} {min(got[c]['cpu']):.3f}" for c in cases)
            lines.append(line)
            print(line, flush=True)
    head = f"{'case':<15}" + "".join(f"{name + ' cpu min':>14}{name + ' wall min':>15}" for name, _ in trees) + (f"{'cpu change':>12}" if args.base_tree else "") + f"{'nodes':>7}  node"
    lines.append(head)
    for c in cases:
        row, mins = f"{c:<15}", {}
        for name, _ in trees:
            mins[name] = min(x for g in runs[name] for x in g[c]["cpu"])
            row += f"{mins[name]:>14.3f}{min(x for g in runs[name] for x in g[c]['wall']):>15.3f}"
        if args.base_tree:
            row += f"{(mins['this'] / mins['base'] - 1) * 100:>+11.1f}%"
        same = {json.dumps((g[c]["nodes"], g[c]["node"])) for name, _ in trees for g in runs[name]}
        nodes, node = runs["this"][0][c]["nodes"], runs["this"][0][c]["node"]
        row += f"{nodes:>7}  {node}" + ("" if len(same) == 1 else "  DIFFERENT between the trees or runs")
        lines.append(row)
    print("\n".join(lines[-len(cases) - 1:]))
    finish(lines, args.out)


if __name__ == "__main__":
    main()
