"""The grouping kernels' named bundles (:mod:`sqlanon.stats.local.sets`) are unpacked at the jit
boundary in the kernels' own parameter order: a bundle whose fields drift from the kernel's
parameters (a reordered or renamed field) fails here, before it passes one array for another."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

pytest.importorskip("numba")

import sqlanon.stats.local.base as base  # noqa: E402
import sqlanon.stats.local.sets as sets  # noqa: E402


def _params(kernel) -> list[str]:
    return list(inspect.signature(kernel.py_func).parameters)


def test_group_many_takes_its_bundles_in_order():
    kern = base._kernels()
    assert _params(kern.group_many) == ["codes", "cnt", *sets.CandidateMaps._fields, "start", "stop", *sets.Grouped._fields]


def test_threshold_many_takes_its_bundles_in_order():
    kern = base._kernels()
    assert _params(kern.threshold_many) == ["codes_t", "cnt", *sets.CandidateMaps._fields, *sets.Threshold._fields, "start", "stop",
                                            *sets.Summaries._fields]


def test_bundled_calls_equal_one_candidate_at_a_time():
    """group_many and threshold_many through their bundles equal group_by_maps per candidate
    (an independent brute count of the classes and of the rows under k)."""
    rng = np.random.default_rng(45)
    codes = rng.integers(0, 6, size=(300, 3)).astype(np.int32)
    local = base.LocalSet(codes, rng.integers(1, 4, size=300).astype(np.int64))
    candidates = [[rng.integers(0, 3, size=6).astype(np.int64) for _ in range(3)] for _ in range(5)]
    k = 7
    summary, _ = sets.threshold_many(local, candidates, k, threads=2)
    for j, (maps, classes) in enumerate(zip(candidates, sets.group_many(local, candidates, threads=2))):
        released = np.stack([maps[i][codes[:, i]] for i in range(3)], axis=1)
        sizes: dict[tuple[int, ...], int] = {}
        for row, c in zip(map(tuple, released), local.cnt):
            sizes[row] = sizes.get(row, 0) + int(c)
        assert sorted(classes.cnt.tolist()) == sorted(sizes.values())
        under = [s for s in sizes.values() if s < k]
        assert summary[j].tolist() == [len(sizes), min(sizes.values()), sum(under), len(under)]
