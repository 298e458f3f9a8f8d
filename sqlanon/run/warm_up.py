"""``sqlanon warm-up`` / :func:`sqlanon.warm_up`: compile the package's kernels ahead, into numba's
cache, so that the first run after an install loads them as every later run does.

Without it the first run that evaluates nodes in-process compiles the kernels it calls (numba,
a few CPU seconds: docs/measurements.md, "One program on every run"): it takes the same path as a
warm run, only later. Run once after ``pip install`` (in a Dockerfile or a CI image: the cache is
kept with the image when it is the package's own ``__pycache__``, or ``NUMBA_CACHE_DIR``).

What it runs: the node kernels' load (:func:`sqlanon.stats.local.warm_up`, the very calls every
run's load makes), then small jobs through the public paths on a few hundred generated rows, so
the kernels are compiled for the argument types the runs pass: an optimal search, a genetic one,
an l-diversity one (the histogram kernels) and a KRIMP generation with its scores. Kernels no
such job reaches stay for their first call (listed in :attr:`WarmUp.left`). Nothing of the user's
is read or written; the jobs' files live in a temporary directory.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from collections.abc import Callable
import dataclasses
from dataclasses import dataclass, field

import importlib

import sqlanon.jit as jit  # first: a read-only install's cache place is set before numba loads
import sqlanon.kernel_cache as kernel_cache
import numpy as np

import sqlanon.stats.local as local
import sqlanon.stats.local.base as local_base
import sqlanon.stats.local.rollups as rollups
import sqlanon.stats.local.sets as sets
from numba.core.registry import CPUDispatcher
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.generation import pipeline
from sqlanon.run.api import anonymize


@dataclass
class WarmUp:
    """What :func:`warm_up` did: the kernels the cache now holds (``module.kernel``), those no job
    reached (compiled on their first call), where the cache is, its index files per kernel
    module, whether it is the package's own ``__pycache__`` and the seconds it took (wall, and
    this process's CPU)."""

    compiled: list[str]
    left: list[str]
    cache: str
    beside_package: bool
    read_only_fallback: bool
    index_files: dict[str, int]
    seconds: float
    cpu_seconds: float
    error: str | None = None
    jobs: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The CLI's ``--json`` object."""
        return dataclasses.asdict(self)

    def lines(self) -> list[str]:
        """The summary the CLI prints."""
        where = f"the package's __pycache__ beside each kernel module ({self.cache}, ...)" if self.beside_package else self.cache
        out = [f"{len(self.compiled)} kernels compiled or loaded into the cache in {self.seconds:.1f} s (CPU {self.cpu_seconds:.1f} s): {', '.join(self.jobs)}",
               f"kernel cache: {where}"]
        out += [f"  {module}: {n} kernel index files" for module, n in self.index_files.items()]
        if self.left:
            out.append(f"left to their first call ({len(self.left)}): {', '.join(self.left)}")
        if self.read_only_fallback:
            out.append("the package is read-only: the cache is in the temporary directory; a run whose temporary directory is new compiles again "
                       "(set NUMBA_CACHE_DIR to a kept directory)")
        if self.error:
            out.append(f"the kernels could not load ({self.error}): every node goes by SQL")
        return out


def _rows(n: int = 400) -> list[dict]:
    rng = random.Random(43)
    return [{"age": rng.randint(18, 80), "zip": f"{rng.randint(1000, 1400):05d}", "sex": rng.choice(["f", "m"]),
             "disease": rng.choice(["flu", "cold", "asthma", "ulcer"])} for _ in range(n)]


def _csv(folder: str) -> str:
    path = os.path.join(folder, "warm_up.csv")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("age,zip,sex,disease\n" + "".join(f"{r['age']},{r['zip']},{r['sex']},{r['disease']}\n" for r in _rows()))
    return path


def _large_set_kernels() -> None:
    """The kernels only large fetched sets call (the sort of a set over ``SORT_ROWS`` rows, the
    parts' first-row order on one thread) and the groupings by arbitrary maps other searches
    call, each through the function that calls it in a run, on a tiny set of the runs' dtypes."""
    codes, cnt = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.int32), np.array([2, 1, 3], dtype=np.int64)
    sets.radix_sorted(np.array([2, 1, 2], dtype=np.int64), cnt.copy(), 2, 1)
    local_base._kernels().clustered_rows(codes, cnt, np.arange(2, dtype=np.int64))
    rollups.in_first_row_order(3, np.array([0, 1], dtype=np.int32), np.array([5, 1], dtype=np.int64), np.zeros(3, dtype=np.int32),
                               np.zeros(3, dtype=np.int64), 1)
    fetched = local_base.LocalSet(codes, cnt)
    maps = [np.array([0, 0], dtype=np.int64), np.array([0, 1], dtype=np.int64)]
    sets.group_by_maps(fetched, maps)
    sets.group_many(fetched, [maps, maps], threads=1)


def _jobs(folder: str) -> dict[str, Callable[[], object]]:
    """The small jobs, by what they compile."""
    data = _csv(folder)
    qi = {"age": "bands:5,10,20", "zip": "mask", "sex": "mask"}

    def generate() -> object:
        engine = connect()
        try:
            return pipeline.run(engine, Source.open(data, "csv"), seed=1, risk=False)
        finally:
            engine.close()

    return {
        "node kernels": lambda: local.warm_up(wait=True),
        "optimal search": lambda: anonymize(input=data, qi=qi, k=3, max_suppression=0.02, keep_others=True),
        "genetic search": lambda: anonymize(input=data, qi=qi, k=3, max_suppression=0.02, keep_others=True, search="genetic",
                                            search_options={"iterations": 40, "population": 8, "seed": 1}),
        "l-diversity (histogram kernels)": lambda: anonymize(input=data, qi=qi, k=3, max_suppression=0.02, keep_others=True,
                                                             sensitive_column="disease", l=2),
        "generation": generate,
        "large-set and grouping kernels": _large_set_kernels,
    }


def _kernels() -> dict[str, dict[str, CPUDispatcher]]:
    """Every kernel (a numba dispatcher) of the kernel modules called from Python, by module (not
    those inlined into others: they have no machine code of their own)."""
    out = {}
    for name in kernel_cache.KERNEL_MODULES:
        module = importlib.import_module(name)
        out[name] = {k: v for k, v in vars(module).items() if isinstance(v, CPUDispatcher) and v.targetoptions.get("inline") != "always"}
    return out


def _cached_names(module_file: str) -> set[str]:
    """The kernels of the module at ``module_file`` that the cache holds an index of (the index
    files are named ``<module>.<kernel>-<line>.<python>.nbi``)."""
    return {os.path.basename(f).split(".", 1)[1].rsplit("-", 1)[0] for f in kernel_cache.index_files(module_file)}


def warm_up(progress: Callable[[str], None] | None = None) -> WarmUp:
    """Compile (or, when cached already, load) the package's kernels into numba's cache; returns
    what it did (:class:`WarmUp`). ``progress`` is told each job as it starts."""
    started, cpu = time.perf_counter(), time.process_time()
    done = []
    with tempfile.TemporaryDirectory(prefix="sqlanon-warm-up-") as folder:
        for name, job in _jobs(folder).items():
            if progress is not None:
                progress(name)
            at = time.process_time()
            job()
            done.append(f"{name} {time.process_time() - at:.1f} CPU-s")
            if local._WARM.get("error"):
                break
    cached = {m: _cached_names(f) for m, f in kernel_cache.KERNEL_MODULES.items()}
    names = {m: sorted(ks) for m, ks in _kernels().items()}
    compiled = [f"{m.removeprefix('sqlanon.')}.{k}" for m, ks in names.items() for k in ks if k in cached[m]]
    left = [f"{m.removeprefix('sqlanon.')}.{k}" for m, ks in names.items() for k in ks if k not in cached[m]]
    root = kernel_cache.root()
    return WarmUp(compiled=compiled, left=left, cache=root or kernel_cache.module_dir(kernel_cache.KERNEL_MODULES["sqlanon.stats.local.kernels"]), beside_package=root is None, read_only_fallback=jit.CACHE_DIR is not None,
                  index_files={m: len(kernel_cache.index_files(f)) for m, f in kernel_cache.KERNEL_MODULES.items()},
                  seconds=time.perf_counter() - started, cpu_seconds=time.process_time() - cpu, error=local._WARM.get("error"), jobs=done)
