"""The in-process path's shared parts: its limits (kept bytes, threads' work), the fetched set
(:class:`LocalSet`), the classes a grouping returns (:class:`Classes`) and the kernel module's
loader (:func:`_kernels`). Every other module of :mod:`sqlanon.stats.local` reads its limits
here, as ``base.NAME``, so a test patches them in one place."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

import sqlanon.stats.batch as batch


#: rolled-up sets (a group's meet) kept per Statistics
MEETS = 16
#: the kept roll-ups (and, apart, the kept moved key words) hold at most this many times the
#: fetched set's bytes (250K rows of 24 QIs: 25 MB fetched, 50 MB of roll-ups)
KEPT = 2
#: a group of at least this many nodes is grouped from its meet, rolled up first (and kept);
#: a smaller one from the smallest kept set it generalizes
ROLL_NODES = 2
#: a packed key word stays below this (as the batch statement's, :data:`sqlanon.stats.batch.WORD`)
WORD = batch.WORD
#: an unbounded side of a condition on ``cnt``
INF = 1 << 62
#: a batch is spread over threads only when it holds at least this much work per thread (nodes
#: x rows of the set they are grouped from): a thread's hand-off has its cost (docs/measurements.md)
THREAD_WORK = 100_000
#: no per-row classes wanted (:func:`~sqlanon.stats.local.kernels.count_classes`)
_NO_ROWS = np.empty(0, dtype=np.int32)


@dataclass
class LocalSet:
    """The fetched base frequency set: leaf codes (rows x QIs, int32) and counts (int64)."""

    codes: np.ndarray
    cnt: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.cnt.shape[0])

    @functools.cached_property
    def columns(self) -> np.ndarray:
        """The codes column-major (QIs x rows, C-contiguous), made on first use and kept: the
        kernels that read one column at a time take them so
        (:func:`sqlanon.stats.local.kernels.threshold_many`)."""
        return np.ascontiguousarray(self.codes.T)


class Classes(NamedTuple):
    """A grouping of the fetched set: per fetched row its class, per class its rows (summed
    ``cnt``) and its first fetched row (whose leaf codes give the class's released codes)."""

    row_class: np.ndarray
    cnt: np.ndarray
    rep: np.ndarray


def _kernels():
    """The compiled kernels (:mod:`sqlanon.stats.local.kernels`), imported on first use: numba
    loads then, not when the CLI starts."""
    import sqlanon.stats.local.kernels as kernels

    return kernels


CORES = os.cpu_count() or 1


# ---------------------------------------------------------------------------------------------
# the generic grouping (any per-QI maps)


#: a fetched set of more rows than this is sorted (:func:`clustered`)
SORT_ROWS = 100_000


#: a source set of more than this many rows is first rolled up to a stepping stone
STONE_ROWS = 100_000
#: the stepping stones hold at most this many times the fetched set's bytes
STONES = 1


#: key words moved to a reference kept per Statistics (a descent's next batch moves from the last)
KEYED = 8
