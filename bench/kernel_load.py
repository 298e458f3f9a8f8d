"""What loading the in-process kernels costs a fresh process (:func:`sqlanon.stats.local.warm_up`).

A 10M-row run loads them in a background thread during its base scan, where on two threads the
database wants both cores, so their CPU time is the run's time. Each run is a fresh interpreter
that imports :mod:`sqlanon.stats.local` (not timed) and then waits for the load (timed: wall and
the process's CPU seconds), with SciPy's linear algebra hidden as the CLI does
(:data:`sqlanon.stats.local.HIDE_SCIPY_BLAS`) and without, alternated. Also printed: whether SciPy
is installed (without it, numba never imports it and both ways are the same).

    python bench/kernel_load.py            # 5 alternations
    python bench/kernel_load.py --runs 9
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys

CHILD = """
import sys, time
from sqlanon.stats import local
local.HIDE_SCIPY_BLAS = {hide}
wall, cpu = time.perf_counter(), time.process_time()
assert local.warm_up(wait=True), local._WARM.get("error")
print(time.perf_counter() - wall, time.process_time() - cpu, "scipy.linalg" in sys.modules)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    print(f"SciPy installed: {importlib.util.find_spec('scipy') is not None}; load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    got: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    loaded: dict[bool, bool] = {}
    for _ in range(args.runs):
        for hide in (True, False):
            out = subprocess.run([sys.executable, "-c", CHILD.format(hide=hide)], capture_output=True, text=True, check=True).stdout.split()
            got[hide].append((float(out[0]), float(out[1])))
            loaded[hide] = out[2] == "True"
    for hide in (True, False):
        wall = sorted(w for w, _ in got[hide])
        cpu = sorted(c for _, c in got[hide])
        label = "SciPy's linear algebra hidden (the CLI)" if hide else "as numba imports it (a library call)"
        print(f"{label:<42} wall {wall[0]:.3f}-{wall[-1]:.3f} s (median {statistics.median(wall):.3f}), "
              f"CPU {cpu[0]:.3f}-{cpu[-1]:.3f} s (median {statistics.median(cpu):.3f}); scipy.linalg loaded: {loaded[hide]}")
    ratio = statistics.median(w for w, _ in got[True]) / statistics.median(w for w, _ in got[False])
    print(f"hidden / not, median wall: {ratio:.2f}x")


if __name__ == "__main__":
    main()
