"""The fixed cost of a command (issue 43): ``sqlanon --version``, ``sqlanon --help`` and a tiny
anonymize (a 20-row CSV, k=2) against Python's own start (``python -c pass``), each run as a fresh
process, the commands alternated ``--repeats`` times; prints the median seconds of each and its
excess over Python's start, and the modules ``python -X importtime`` says the tiny run spends most
on importing (``--imports N``).

    python bench/fixed_cost.py --repeats 5
    python bench/fixed_cost.py --repeats 5 --imports 15
"""

from __future__ import annotations

import argparse
import os
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


def _seconds(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - started


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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        commands = {"python -c pass": [sys.executable, "-c", "pass"], "sqlanon --version": [*_sqlanon(), "--version"], "sqlanon --help": [*_sqlanon(), "--help"], "tiny anonymize": _tiny(folder)}
        _seconds(commands["tiny anonymize"])  # warm the file cache and any kernel cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeats):
            for name, cmd in commands.items():
                times[name].append(_seconds(cmd))
        floor = statistics.median(times["python -c pass"])
        print(f"{'command':20} {'median s':>9} {'beyond python s':>16}  (runs: {args.repeats}, alternated)")
        for name, values in times.items():
            med = statistics.median(values)
            print(f"{name:20} {med:9.3f} {med - floor:16.3f}")
        if args.imports:
            print("\ntop-level imports of the tiny run (cumulative microseconds, python -X importtime):")
            for micros, name in _imports(commands["tiny anonymize"], args.imports):
                print(f"{micros:>10}  {name}")


if __name__ == "__main__":
    main()
