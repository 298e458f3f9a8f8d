"""Issue 44: the genetic search's peak RSS on t24 (``bench/wide_table.py``: 30,000 rows, 24 QIs,
k=5, ARX's Loss, 100 % suppression), where it is reached, and whether a change kept the result.

Each run is a fresh process (its peak RSS is its own) running ``--search genetic`` seeded from
lightning as ``bench/wide.py --wide-table`` does, under ``--steps`` evaluations (a step limit, not a
time limit: the same seed then gives the same chromosome, Loss and best-so-far history whatever the
machine's load, so ``--ab`` can say whether the result is unchanged) or ``--seconds``. A thread
samples the process's RSS every 20 ms and files each sample under the phase the main thread is in
(from its stack: ``setup`` (imports, the session, hierarchies), ``scan`` (the base scan and the
fetched frequency set), ``seed`` (lightning's seed search), ``genetic`` (the GA), ``verify``
(the independent re-check of the answer) and ``report`` (risk and utility)); the kernels load in a
background thread, so their memory shows under whichever phase the main thread is in. ``--ab
OLD_TREE`` alternates OLD_TREE's sqlanon (``old``) with this tree's (``new``), ``--repeat`` pairs.

    .venv/bin/python bench/genetic_memory.py --steps 3000 --repeat 2 --ab /tmp/base-genetic [--out bench/results/genetic_memory.txt]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

#: (phase, the end of ``path:function`` of a frame on the main thread's stack that marks it), the
#: innermost match wins
PHASES = [("scan", ":prepare"), ("genetic", "genetic/planner.py:run"), ("seed", "seeding.py:_lightning_seed"), ("verify", ":verify_plan"),
          ("report", ":add_risk_and_utility")]

CHILD = """
import hashlib, json, resource, sys, threading, time, traceback
tree, bench, path, steps, seconds, phases = sys.argv[1:7]
sys.path.insert(0, tree)
sys.path.insert(1, bench)
phases = json.loads(phases)
main = threading.get_ident()
peak = {}
done = []


def rss_mb():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return 0


def phase():
    frame = sys._current_frames().get(main)
    names = [f"{f.filename}:{f.name}" for f in traceback.extract_stack(frame)] if frame is not None else []
    found = "setup"
    for name in names:
        for label, marker in phases:
            if name.endswith(marker):
                found = label
    return found


def sample():
    while not done:
        label, mb = phase(), rss_mb()
        peak[label] = max(peak.get(label, 0), mb)
        time.sleep(0.02)


threading.Thread(target=sample, daemon=True).start()
import sqlanon, wide_table
opts = {"iterations": 10**9, "population": 100, "seed": 1}
opts.update({"step_limit": int(steps)} if int(steps) else {"time_limit": float(seconds)})
cpu0 = time.process_time()
r = sqlanon.anonymize(input=path, qi=wide_table.qi_specs(24, 6), k=5, max_suppression=1.0, search="genetic", metric="loss",
                      search_options=opts, dry_run=True)
cpu = time.process_time() - cpu0
done.append(1)
history = [(b.get("iteration"), b.get("evaluations"), b.get("value")) for b in r.extra.get("best_so_far", [])]
digest = lambda x: hashlib.sha1(json.dumps(x).encode()).hexdigest()[:10]
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "phases": peak, "loss": r.metric.value,
                  "evaluations": r.extra.get("evaluations"), "chromosome": digest(r.extra.get("chromosome")), "history": digest(history),
                  "answer_from": r.extra.get("answer_from"), "cpu": round(cpu, 2)}))
"""

ORDER = ["setup", "scan", "seed", "genetic", "verify", "report"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=3000, help="the genetic search's step limit (0: --seconds instead)")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--ab", default=None, metavar="OLD_TREE")
    ap.add_argument("--folder", default=os.path.join(HERE, ".wide"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    sys.path.insert(0, HERE)
    import wide_table

    lines = []

    def say(line: str = "") -> None:
        print(line, flush=True)
        lines.append(line)

    limit = f"--steps {args.steps}" if args.steps else f"--seconds {args.seconds:g}"
    say(f"\n## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}: bench/genetic_memory.py {limit} --repeat {args.repeat}"
        + (f" --ab {args.ab}" if args.ab else "") + f"  ({os.cpu_count()} cores, load1 {os.getloadavg()[0]:.1f}); t24, k=5, ARX's Loss, 100 % suppression")
    say("peak RSS (MB) of the process and its high-water mark per phase")
    say(f"{'tree':<5}{'pair':>5}{'peak':>6}" + "".join(f"{p:>9}" for p in ORDER) + f"{'loss':>9}{'evals':>7}{'cpu s':>7}  chromosome history    answer  load1")
    path = wide_table.write(os.path.join(args.folder, "t24.parquet"), 30_000, 24, 6)
    tree = os.path.dirname(HERE)
    runs = [("old", args.ab), ("new", tree)] if args.ab else [("new", tree)]
    results: dict[str, list[dict]] = {}
    for pair in range(args.repeat):
        for label, where in runs if pair % 2 == 0 else runs[::-1]:
            out = subprocess.run([sys.executable, "-c", CHILD, where, HERE, path, str(args.steps), str(args.seconds), json.dumps(PHASES)],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results.setdefault(label, []).append(r)
            say(f"{label:<5}{pair + 1:>5}{r['peak_mb']:>6}" + "".join(f"{r['phases'].get(p, '-'):>9}" for p in ORDER)
                + f"{r['loss']:>9.4f}{r['evaluations']:>7}{r['cpu']:>7}  {r['chromosome']} {r['history']}  {r['answer_from']:<7} {os.getloadavg()[0]:.1f}")
    if args.ab and args.steps:
        keys = ("loss", "chromosome", "history")
        same = all(tuple(a[k] for k in keys) == tuple(b[k] for k in keys) for a in results["old"] for b in results["new"])
        say(f"same chromosome, Loss and best-so-far history old and new: {same}")
    if args.out:
        with open(args.out, "a") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
