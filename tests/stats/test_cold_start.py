"""One program on every run: a fresh install (an empty kernel cache, so the first run compiles the
kernels) and a warm one evaluate the same nodes by the same route; a kernel cache beside the
package that is not writable goes to ``$TMPDIR/sqlanon-numba-<uid>``, said once (sqlanon/jit.py).

Each run is a fresh interpreter (the kernels load once per process) running the same search; it
prints the nodes it evaluated in-process (in order), the nodes counted, the route decided and the
plan. Nothing here is timed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CHILD = r"""
import json, sys, tempfile
read_only = sys.argv[2] == "read-only"
if read_only:  # the package's __pycache__ not writable (as a read-only site-packages)
    real = tempfile.TemporaryFile
    def refused(*args, dir=None, **kwargs):
        if dir is not None and "__pycache__" in str(dir):
            raise PermissionError(13, "read-only", dir)
        return real(*args, dir=dir, **kwargs)
    tempfile.TemporaryFile = refused
import sqlanon
from sqlanon.stats import local
seen = []
evaluate = local.evaluate
def recorded(stats, nodes, *args, **kwargs):
    seen.extend([list(n) for n in nodes])
    return evaluate(stats, nodes, *args, **kwargs)
local.evaluate = recorded
r = sqlanon.anonymize(input=sys.argv[1], qi={"age": "bands:5,10,20", "zip": "mask", "sex": "mask"}, k=3, max_suppression=0.02,
                      memory_limit="1GB")  # a fixed room: without a limit the budget follows the memory available at the time
import sqlanon.jit as jit
print(json.dumps({"in_process": seen, "nodes": r.nodes_evaluated, "local": r.nodes_local, "route": r._report.get("local_route"),
                  "plan": r._report.get("transformation"), "cache": jit.CACHE_DIR, "error": local._WARM.get("error")}))
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    rng = random.Random(43)
    rows = [{"age": str(rng.randint(18, 80)), "zip": f"{rng.randint(1000, 1400):05d}", "sex": rng.choice(["f", "m"])} for _ in range(3000)]
    path = tmp_path_factory.mktemp("cold") / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _run(source, env: dict[str, str | None], read_only: bool = False) -> tuple[dict, str]:
    """One run in a fresh interpreter under ``env`` (added to this process's, a None value
    taken away)."""
    full = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    out = subprocess.run([sys.executable, "-c", CHILD, str(source), "read-only" if read_only else "writable"], capture_output=True, text=True,
                         env=full, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def _cached_files(path) -> list[str]:
    return [name for _, _, names in os.walk(path) for name in names if name.endswith((".nbi", ".nbc"))]


def test_an_empty_kernel_cache_and_a_warm_one_run_the_same_program(source, tmp_path):
    """The first run with an emptied cache compiles the kernels (its cache files appear) and still
    evaluates its nodes in-process; the warm run after it evaluates the very same nodes, in the same
    order, by the same route, to the same plan."""
    cache = tmp_path / "numba"
    cache.mkdir()
    env: dict[str, str | None] = {"NUMBA_CACHE_DIR": str(cache)}
    cold, _ = _run(source, env)
    assert _cached_files(cache), "the cold run compiled nothing into the emptied cache"
    warm, _ = _run(source, env)
    assert cold["error"] is None and cold["route"].startswith("in-process:")
    assert cold["local"] == cold["nodes"] == len(cold["in_process"]) > 0
    assert warm == cold


def test_a_read_only_install_caches_in_the_temporary_directory(source, tmp_path):
    """The package's __pycache__ not writable, NUMBA_CACHE_DIR not set: the kernels are cached in
    $TMPDIR/sqlanon-numba-<uid> (said once on stderr), the nodes go in-process, and a second run
    there loads them, running the same program."""
    env: dict[str, str | None] = {"NUMBA_CACHE_DIR": None, "TMPDIR": str(tmp_path)}
    first, said = _run(source, env, read_only=True)
    expected = str(tmp_path / f"sqlanon-numba-{os.getuid()}")
    assert first["cache"] == expected and _cached_files(expected)
    assert said.count("kernel cache is not writable") == 1
    assert first["error"] is None and first["local"] == first["nodes"] > 0
    again, _ = _run(source, env, read_only=True)
    assert again == first
