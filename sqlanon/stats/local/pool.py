"""The in-process path's threads: one shared pool (:func:`_pool`), the threads a search uses
(:func:`threads_for`) and work spread over them in row slices (:func:`spread`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import sqlanon.stats.local.base as base


_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def threads_for(stats) -> int:
    """The threads a batch may use: the engine's ``threads`` setting when given, else the cores."""
    return max(1, int(stats.engine.threads or base.CORES))


def _pool(workers: int) -> ThreadPoolExecutor:
    """The kernels' thread pool, with at least ``workers`` threads (made again when smaller)."""
    with _POOL_LOCK:
        if not _POOL or _POOL[0]._max_workers < workers:
            _POOL[:] = [ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sqlanon-local")]
        return _POOL[0]


def spread(n: int, work: int, threads: int, run: Callable[[int, int], None], weights: Sequence[int] | None = None) -> None:
    """``run(start, stop)`` over slices of ``0..n`` (the kernels release the GIL), on at most
    ``threads`` threads and only as many as the work (``work`` per item, or each item's
    ``weights``) pays for (:data:`THREAD_WORK`), the slices of about equal work; the calling
    thread takes the first slice. The slices write disjoint rows of the outputs: the answer does
    not depend on the threads."""
    total = n * max(work, 1) if weights is None else int(sum(weights))
    use = max(1, min(threads, n, total // base.THREAD_WORK))
    if use <= 1:
        if n:
            run(0, n)
        return
    pool = _pool(use - 1)
    if weights is None:
        bounds = [n * t // use for t in range(use + 1)]
    else:
        cum = np.cumsum(np.asarray(weights, dtype=np.float64))
        bounds = [0, *[int(np.searchsorted(cum, cum[-1] * t / use)) + 1 for t in range(1, use)], n]
        bounds = [min(max(b, a), n) for a, b in zip([0, *bounds[:-1]], bounds)]
    jobs = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    futures = [pool.submit(run, a, b) for a, b in jobs[1:]]
    run(*jobs[0])
    for f in futures:
        f.result()
