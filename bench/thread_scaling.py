"""What a second thread gives the in-process kernels on this machine (issue 26's cores).

Two independent groupings of 1.6M integer keys into ~710K classes (the shape of a node over the
10M-row benchmark's base set, :func:`sqlanon.stats.local.kernels.count_classes`), one after the
other and then on two threads at once; then one grouping whole against split over two threads by
the keys' hash, the rows' hashes computed first (a roll-up's way,
:func:`sqlanon.stats.local.rolled_up`; the parts put back in first-row order after is not
counted), on the random keys and on the same keys sorted (as the fetched set is); last, the
fetched set's radix sort (1.6M 40-bit keys, :func:`sqlanon.stats.local.radix_sorted`) on one
thread and on two; prints the times and the speed-ups. The search's own
speed-up from threads is bounded by what stays one thread's (the fetch, the roll-ups, the
search's Python): ``bench/scale_spine.py --threads 1,2``.

First, what a first touch of fresh memory costs here on huge pages (NumPy's default for arrays of
4 MiB or more) and on small ones (:mod:`sqlanon.stats.pages`): 64 MiB arrays filled one after
another, huge and small alternated, each kept, so each takes memory the process never had.

    python bench/thread_scaling.py
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from sqlanon.stats import local, pages
from sqlanon.stats.local import kernels as local_kernels

ROWS = 1_600_000


def buffers(rng: np.random.Generator) -> tuple:
    keys = rng.integers(0, ROWS // 2, size=(ROWS, 1)).astype(np.int64)
    cap = 16
    while cap < 2 * ROWS:
        cap *= 2
    return keys, np.ones(ROWS, dtype=np.int64), np.empty(cap, dtype=np.int32), np.empty(ROWS, dtype=np.int64), np.empty(ROWS, dtype=np.int32), np.empty(0, dtype=np.int32)


def first_touch(rounds: int = 4, mib: int = 64) -> None:
    """Seconds to fill fresh ``mib`` MiB arrays, huge pages and small alternated."""
    setter = pages._setter()
    if setter is None:
        print("first touch: this NumPy has no huge-page switch")
        return
    held, took = [], {True: [], False: []}
    before = setter(True)
    try:
        for _ in range(rounds):
            for huge in (True, False):
                setter(huge)
                t = time.perf_counter()
                a = np.empty(mib << 20, dtype=np.uint8)
                a.fill(1)
                took[huge].append(time.perf_counter() - t)
                held.append(a)
    finally:
        setter(before)
    for huge in (True, False):
        s = sorted(took[huge])
        print(f"first touch of {mib} MiB on {'huge' if huge else 'small'} pages: {s[0]:.3f}-{s[-1]:.3f} s ({1000 * s[len(s) // 2] / mib:.2f} ms a MiB, median)")


def main() -> None:
    first_touch()
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
    # one grouping split over two threads by the keys' hash (what a roll-up does: local.rolled_up),
    # on the random keys and on the same keys sorted (the fetched set is sorted: sqlanon.stats.local.clustered)
    random_keys, cnt, table = a[0], a[1], a[2]
    half = [(np.empty(len(table) // 2, dtype=np.int32), np.empty(ROWS, dtype=np.int64), np.empty(ROWS, dtype=np.int32)) for _ in range(2)]
    hashes = np.empty(ROWS, dtype=np.uint64)
    for order, keys in (("random", random_keys), ("sorted", np.sort(random_keys, axis=0))):
        ratios = []
        for _ in range(7):
            t = time.perf_counter()
            n = local_kernels.count_classes(keys, *a[1:])
            one = time.perf_counter() - t
            t = time.perf_counter()
            other = pool.submit(local_kernels.hash_rows, keys, ROWS // 2, ROWS, hashes)
            local_kernels.hash_rows(keys, 0, ROWS // 2, hashes)
            other.result()
            other = pool.submit(local_kernels.group_part, keys, cnt, hashes, 1, 2, *half[1])
            n0 = local_kernels.group_part(keys, cnt, hashes, 0, 2, *half[0])
            n1 = other.result()
            two = time.perf_counter() - t
            assert n0 + n1 == n, (n0, n1, n)
            ratios.append(one / two)
            print(f"one grouping of {ROWS:,} {order} keys: whole {one:.3f} s, hashed then in two hash parts on two threads {two:.3f} s, speed-up {one / two:.2f}x", flush=True)
        print(f"median speed-up {sorted(ratios)[len(ratios) // 2]:.2f}x ({order} keys)")

    # the fetched set's radix sort, one thread against two (the same order: checked)
    key = rng.integers(0, 1 << 40, size=ROWS, dtype=np.int64)
    ratios = []
    for _ in range(7):
        t = time.perf_counter()
        want = local_kernels.radix_sort(key, cnt, 40)
        one = time.perf_counter() - t
        t = time.perf_counter()
        got = local.radix_sorted(key, cnt, 40, 2)
        two = time.perf_counter() - t
        assert (want[0] == got[0]).all() and (want[1] == got[1]).all()
        ratios.append(one / two)
        print(f"radix sort of {ROWS:,} 40-bit keys: one thread {one:.3f} s, two threads {two:.3f} s, speed-up {one / two:.2f}x", flush=True)
    print(f"median speed-up {sorted(ratios)[len(ratios) // 2]:.2f}x (radix sort)")


if __name__ == "__main__":
    main()
