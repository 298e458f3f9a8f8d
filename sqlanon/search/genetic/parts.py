"""How the genetic search's batch statement is laid out (:mod:`sqlanon.search.genetic.stats`):
QIs grouped into blocks sharing one lookup list, the base table split into parts so every
engine thread scans one, the candidates' lists as Arrow columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

#: largest product of leaf-domain sizes of the QIs sharing one block lookup list
BLOCK_CELLS = 4096
#: DuckDB scans a table one row group (this many rows) per task: a smaller base table would keep
#: the batch statement on one core, so it is split into parts read by one ``UNION ALL``
ROW_GROUP_ROWS = 122_880
#: rows a part holds at least (smaller base tables stay whole)
MIN_PART_ROWS = 4096


def scan_parts(rows: int, threads: int, min_rows: int = MIN_PART_ROWS) -> int:
    """Parts to split a base table of ``rows`` into so that ``threads`` threads can scan it: one
    when it has a row group per thread already, or when parts would be smaller than ``min_rows``.

    >>> scan_parts(30_000, 2), scan_parts(30_000, 1), scan_parts(3_000, 2), scan_parts(500_000, 2)
    (2, 1, 1, 1)
    >>> scan_parts(30_000, 8), scan_parts(200_000, 4)
    (7, 4)
    """
    if threads < 2 or -(-rows // ROW_GROUP_ROWS) >= threads:
        return 1
    return max(1, min(threads, rows // max(min_rows, 1)))


def blocks_of(sizes: Sequence[int], cells: int = BLOCK_CELLS) -> list[list[int]]:
    """Consecutive QIs grouped while their domain sizes multiply to at most ``cells`` (a QI with a
    larger domain is a block of its own).

    >>> blocks_of([8, 16, 32, 64, 8])
    [[0, 1, 2], [3, 4]]
    """
    out: list[list[int]] = []
    prod = 0
    for i, size in enumerate(sizes):
        if out and prod * size <= cells:
            out[-1].append(i)
            prod *= size
        else:
            out.append([i])
            prod = size
    return out


def candidate_lists(per_candidate: list[np.ndarray], kind) -> pa.Array:
    """One list per candidate as an Arrow list column."""
    offsets = np.zeros(len(per_candidate) + 1, dtype=np.int32)
    np.cumsum([len(a) for a in per_candidate], out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(np.concatenate(per_candidate), kind))
