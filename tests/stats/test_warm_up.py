"""``sqlanon warm-up`` and :func:`sqlanon.warm_up` (issue 43, "one program on every run"): into an
empty kernel cache (``NUMBA_CACHE_DIR``) they compile every kernel, leaving index files for each
kernel module and no kernel to its first call, and say where the cache is; a run after them loads
what they compiled and compiles nothing more (no new cache file: the warm-up compiled the argument
types the runs pass). Each run is a fresh interpreter (numba reads its cache directory once).
Nothing here is timed."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

pytest.importorskip("numba")

import sqlanon.kernel_cache as kernel_cache  # noqa: E402

API = r"""
import json, sys
import sqlanon
got = sqlanon.warm_up()
print(json.dumps(got.to_dict()))
"""
RUN = r"""
import sys
import sqlanon
r = sqlanon.anonymize(input=sys.argv[1], qi={"age": "bands:5,10,20", "zip": "mask", "sex": "mask"}, k=4, max_suppression=0.05, keep_others=True)
print(r.nodes_local, r.nodes_evaluated)
"""


def _files(cache) -> set[str]:
    return {name for _, _, names in os.walk(cache) for name in names if name.endswith((".nbi", ".nbc"))}


def _env(cache) -> dict[str, str]:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache)}


@pytest.fixture(scope="module")
def warmed(tmp_path_factory):
    """An empty kernel cache after ``sqlanon warm-up --json``: (cache, its JSON, stderr)."""
    cache = tmp_path_factory.mktemp("numba")
    cli = [sys.executable, "-m", "sqlanon", "warm-up", "--json"]
    out = subprocess.run(cli, capture_output=True, text=True, env=_env(cache), timeout=1800)
    assert out.returncode == 0, out.stderr[-3000:]
    return cache, json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_the_cli_compiles_every_kernel_into_the_cache(warmed):
    cache, done, _ = warmed
    assert done["error"] is None and done["cache"] == str(cache) and not done["beside_package"] and not done["read_only_fallback"]
    assert done["left"] == [] and done["compiled"]
    for module, path in kernel_cache.KERNEL_MODULES.items():
        assert kernel_cache.index_files(path, {"NUMBA_CACHE_DIR": str(cache)}), f"no index file of {module} in the cache"
        assert done["index_files"][module] > 0
    assert kernel_cache.compiled("evaluate_nodes_on", env={"NUMBA_CACHE_DIR": str(cache)})


def test_the_api_after_the_cli_loads_what_it_compiled(warmed):
    """``sqlanon.warm_up()`` on the filled cache reports the same kernels and adds no cache file."""
    cache, done, _ = warmed
    before = _files(cache)
    out = subprocess.run([sys.executable, "-c", API], capture_output=True, text=True, env=_env(cache), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    again = json.loads(out.stdout.strip().splitlines()[-1])
    assert again["compiled"] == done["compiled"] and again["left"] == [] and again["index_files"] == done["index_files"]
    assert _files(cache) == before


def test_a_run_after_the_warm_up_compiles_nothing(warmed, tmp_path):
    """A run on other data (its nodes in-process) finds every specialisation it calls in the cache."""
    cache, _, _ = warmed
    rng = random.Random(7)
    path = tmp_path / "t.csv"
    path.write_text("age,zip,sex\n" + "".join(f"{rng.randint(18, 90)},{rng.randint(1000, 1999):05d},{rng.choice('fm')}\n" for _ in range(2000)))
    before = _files(cache)
    out = subprocess.run([sys.executable, "-c", RUN, str(path)], capture_output=True, text=True, env=_env(cache), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    local, nodes = (int(v) for v in out.stdout.split())
    assert local == nodes > 0
    assert _files(cache) == before, f"the run compiled {sorted(_files(cache) - before)}"


def test_the_cli_says_what_it_did(tmp_path, warmed):
    """Without --json: the kernels, the seconds, the cache's place and each module's index files."""
    cache, done, _ = warmed
    out = subprocess.run([sys.executable, "-m", "sqlanon", "warm-up"], capture_output=True, text=True, env=_env(cache), timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    assert f"{len(done['compiled'])} kernels compiled or loaded into the cache in" in out.stdout
    assert f"kernel cache: {cache}" in out.stdout
    assert all(f"{module}: " in out.stdout for module in kernel_cache.KERNEL_MODULES)
    assert "warm-up: node kernels" in out.stderr


def test_a_read_only_install_is_told_what_its_cache_costs():
    from sqlanon.run.warm_up import WarmUp

    done = WarmUp(compiled=["stats.local.kernels.count_classes"], left=[], cache="/tmp/sqlanon-numba-1", beside_package=False, read_only_fallback=True,
                  index_files={"sqlanon.stats.local.kernels": 1}, seconds=1.0, cpu_seconds=1.0)
    said = "\n".join(done.lines())
    assert "kernel cache: /tmp/sqlanon-numba-1" in said and "the package is read-only" in said and "NUMBA_CACHE_DIR" in said
