"""The fixed cost of a command (issue 43): ``sqlanon --version``, ``sqlanon --help``, a tiny
``sqlanon profile`` and a tiny anonymize (a 20-row CSV, k=2) against Python's own start
(``python -c pass``), each run as a fresh process on a warm install (the kernels compiled by a run
before the timed ones), the commands alternated ``--repeats`` times; prints the median wall and
CPU seconds (user + sys of the child) of each and their excess over Python's start, and the
modules ``python -X importtime`` says the tiny run spends most on importing (``--imports N``).

    python bench/fixed_cost.py --repeats 5
    python bench/fixed_cost.py --repeats 5 --imports 15
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)


def _sqlanon() -> list[str]:
    script = os.path.join(BIN, "sqlanon")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "sqlanon"]


def _tiny(folder: str) -> list[str]:
    path = os.path.join(folder, "tiny.csv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("zip,age\n" + "".join(f"1234{i % 3},{20 + i % 4}\n" for i in range(20)))
    return [*_sqlanon(), "anonymize", "--input", path, "--qi", "zip=mask", "--qi", "age=bands:5,10", "--k", "2", "--output", os.path.join(folder, "out.csv"), "--overwrite"]


def _profile(folder: str) -> list[str]:
    return [*_sqlanon(), "profile", "--input", os.path.join(folder, "tiny.csv"), "--quiet"]


def _seconds(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (the child's user + sys) of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _imports(cmd: list[str], top: int) -> list[tuple[int, str]]:
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    err = subprocess.run(cmd, capture_output=True, text=True, env=env).stderr
    rows = []
    for line in err.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line[len("import time:"):].split("|")
            if not name.startswith("  "):  # a top-level import (its own cumulative time)
                rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--imports", type=int, default=0, help="list this many top-level imports of the tiny run")
    ap.add_argument("--out", help="also write the figures to this file")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        commands = {"python -c pass": [sys.executable, "-c", "pass"], "sqlanon --version": [*_sqlanon(), "--version"], "sqlanon --help": [*_sqlanon(), "--help"], "tiny anonymize": _tiny(folder), "tiny profile": _profile(folder)}
        _seconds(commands["tiny anonymize"])  # warm the file cache and any kernel cache
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, cmd in commands.items():
                times[name].append(_seconds(cmd))
        lines = [f"# python bench/fixed_cost.py --repeats {args.repeats} --imports {args.imports}  (load average at the start {load:.1f}, {os.cpu_count()} cores)",
                 f"{'command':20} {'median s':>9} {'beyond python s':>16} {'median CPU s':>13} {'CPU beyond python s':>20}  (runs: {args.repeats}, alternated)"]
        floor, floor_cpu = (statistics.median(v[i] for v in times["python -c pass"]) for i in (0, 1))
        for name, values in times.items():
            med, cpu = (statistics.median(v[i] for v in values) for i in (0, 1))
            lines.append(f"{name:20} {med:9.3f} {med - floor:16.3f} {cpu:13.3f} {cpu - floor_cpu:20.3f}")
        if args.imports:
            lines.append("\ntop-level imports of the tiny run (cumulative microseconds, python -X importtime):")
            for micros, name in _imports(commands["tiny anonymize"], args.imports):
                lines.append(f"{micros:>10}  {name}")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
