"""What a second thread gives the in-process kernels on this machine (issue 26's cores).

Two independent groupings of 1.6M integer keys into ~710K classes (the shape of a node over the
10M-row benchmark's base set, :func:`sqlanon.stats.local_kernels.count_classes`), one after the
other and then on two threads at once; then one grouping whole against split over two threads by
the keys' hash (a roll-up's way, :func:`sqlanon.stats.local.rolled_up`); prints the times and the
speed-ups. The search's own
speed-up from threads is bounded by what stays one thread's (the fetch, the roll-ups, the
search's Python): ``bench/scale_spine.py --threads 1,2``.

    python bench/thread_scaling.py
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sqlanon.stats import local, local_kernels

ROWS = 1_600_000


def buffers(rng: np.random.Generator) -> tuple:
    keys = rng.integers(0, ROWS // 2, size=(ROWS, 1)).astype(np.int64)
    cap = 16
    while cap < 2 * ROWS:
        cap *= 2
    return keys, np.ones(ROWS, dtype=np.int64), np.empty(cap, dtype=np.int32), np.empty(ROWS, dtype=np.int64), np.empty(ROWS, dtype=np.int32), np.empty(0, dtype=np.int32)


def main() -> None:
    assert local.warm_up(wait=True), "the compiled kernels did not load"
    rng = np.random.default_rng(0)
    a, b = buffers(rng), buffers(rng)
    local_kernels.count_classes(*a)
    pool = ThreadPoolExecutor(1)
    ratios = []
    for _ in range(7):
        t = time.perf_counter()
        local_kernels.count_classes(*a)
        local_kernels.count_classes(*b)
        one = time.perf_counter() - t
        t = time.perf_counter()
        other = pool.submit(local_kernels.count_classes, *b)
        local_kernels.count_classes(*a)
        other.result()
        two = time.perf_counter() - t
        ratios.append(one / two)
        print(f"two groupings of {ROWS:,} keys: one thread {one:.3f} s, two threads {two:.3f} s, speed-up {one / two:.2f}x", flush=True)
    print(f"median speed-up {sorted(ratios)[len(ratios) // 2]:.2f}x")
    # one grouping split over two threads by the keys' hash (what a roll-up does: local.rolled_up)
    keys, cnt, table = a[0], a[1], a[2]
    half = [(np.empty(len(table) // 2, dtype=np.int32), np.empty(ROWS, dtype=np.int64), np.empty(ROWS, dtype=np.int32)) for _ in range(2)]
    ratios = []
    for _ in range(7):
        t = time.perf_counter()
        n = local_kernels.count_classes(*a)
        one = time.perf_counter() - t
        t = time.perf_counter()
        other = pool.submit(local_kernels.group_part, keys, cnt, 1, 2, *half[1])
        n0 = local_kernels.group_part(keys, cnt, 0, 2, *half[0])
        n1 = other.result()
        two = time.perf_counter() - t
        assert n0 + n1 == n, (n0, n1, n)
        ratios.append(one / two)
        print(f"one grouping of {ROWS:,} keys: whole {one:.3f} s, in two hash parts on two threads {two:.3f} s, speed-up {one / two:.2f}x", flush=True)
    print(f"median speed-up {sorted(ratios)[len(ratios) // 2]:.2f}x")


if __name__ == "__main__":
    main()
