"""What each in-process kernel costs to compile on an emptied cache (issue 43, "one program on
every run"): a fresh interpreter with a new empty ``NUMBA_CACHE_DIR`` runs the kernel load
(:func:`sqlanon.stats.local._load`, every kernel once on a tiny input) with each kernel's first
call timed; then a second fresh interpreter on the now filled cache, the same (what a warm
install pays). Printed per kernel: cold seconds, warm seconds (wall, first call); and the load's totals, wall and CPU.

    .venv/bin/python bench/kernel_compile.py [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

CHILD = """
import json, time
import numba
t0 = time.perf_counter()
import sqlanon.stats.local as local
import sqlanon.stats.local.base as base
real = base._kernels()
times = {}
class Timed:
    def __getattr__(self, name):
        fn = getattr(real, name)
        if not isinstance(fn, numba.core.registry.CPUDispatcher):
            return fn
        def timed(*a):
            t = time.perf_counter()
            try:
                return fn(*a)
            finally:
                times[name] = times.get(name, 0.0) + time.perf_counter() - t
        return timed
base._kernels = Timed
t1, c1 = time.perf_counter(), time.process_time()
local._load()
assert local._WARM.get("ready"), local._WARM
print(json.dumps({"import": t1 - t0, "load": time.perf_counter() - t1, "load_cpu": time.process_time() - c1, "kernels": times}))
"""


def once(cache: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env={**os.environ, "NUMBA_CACHE_DIR": cache})
    if out.returncode:
        raise SystemExit(out.stderr.strip()[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)")
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as cache:
            cold, warm = once(cache), once(cache)
        names = sorted(cold["kernels"], key=lambda n: -cold["kernels"][n])
        for n in names:
            print(f"  {n:<22} cold {cold['kernels'][n]:6.3f} s  warm {warm['kernels'].get(n, 0.0):6.3f} s")
        print(f"run {i}: import cold {cold['import']:.2f} s / warm {warm['import']:.2f} s; kernel load cold {cold['load']:.2f} s / warm {warm['load']:.2f} s"
              f" (CPU cold {cold['load_cpu']:.2f} s / warm {warm['load_cpu']:.2f} s)", flush=True)


if __name__ == "__main__":
    main()
