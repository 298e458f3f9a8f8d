"""A plain wide table of integer QIs (issue 44): a few columns with thousands of values under
``bands:10,100,1000``, the rest small (~16 values) under ``bands:2,4,8``.

The default shape is the one that overflowed the packed class keys of the batch statements
(``Overflow in addition of INT32``): 30,000 rows of 24 integer columns ``c0..c23``, six wide
(``c0..c5``: ~3,000 distinct values in ``0..2999``) and eighteen small (``c6..c23``: values
``0..15``), plus an ``id`` and a sensitive ``s``. Values are skewed (a power of a uniform draw)
and every other column is pulled toward a shared latent value, so that columns are correlated
and the lattice's optimum is not trivial. numpy, seeded: the same arguments give the same table.

    python bench/wide_table.py --rows 30000 --qis 24 --wide 6 --out bench/.wide/wide24.parquet

:func:`qi_specs` gives the ``--qi`` specs (``c0=bands:10,100,1000``, ..) for
:func:`sqlanon.anonymize` or the CLI.
"""

from __future__ import annotations

import argparse
import os

#: the hierarchy of a wide column (values 0..WIDE_DOMAIN-1) and of a small one
WIDE_BANDS = "bands:10,100,1000"
SMALL_BANDS = "bands:2,4,8"
WIDE_DOMAIN = 3_000
SMALL_DOMAIN = 16


def columns(qis: int) -> list[str]:
    return [f"c{i}" for i in range(qis)]


def qi_specs(qis: int = 24, wide: int = 6) -> list[str]:
    """The ``--qi`` specs of the table's QIs: the first ``wide`` columns wide, the rest small."""
    return [f"{name}={WIDE_BANDS if i < wide else SMALL_BANDS}" for i, name in enumerate(columns(qis))]


def table(rows: int = 30_000, qis: int = 24, wide: int = 6, seed: int = 44):
    """The table as an Arrow table (``id``, ``c0..``, ``s``)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    latent = rng.random(rows)
    cols: dict = {"id": np.arange(rows, dtype=np.int64)}
    for i, name in enumerate(columns(qis)):
        domain = WIDE_DOMAIN if i < wide else SMALL_DOMAIN
        # wide columns nearly uniform (thousands of values at 30K rows), small ones skewed
        draw = rng.random(rows) ** (1.0 + (i % 4) * 0.25 if i < wide else 1.5 + (i % 5) * 0.5)
        if i % 2:
            draw = 0.7 * draw + 0.3 * latent
        cols[name] = np.minimum(domain - 1, np.floor(domain * draw)).astype(np.int32)
    cols["s"] = rng.integers(0, 5, rows).astype(np.int32)
    return pa.table(cols)


def write(path: str, rows: int = 30_000, qis: int = 24, wide: int = 6, seed: int = 44) -> str:
    """Write the table as Parquet at ``path`` (kept when it exists: the same arguments give the
    same table) and return ``path``."""
    import pyarrow.parquet as pq

    if not os.path.exists(path):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        tmp = f"{path}.tmp"
        pq.write_table(table(rows, qis, wide, seed), tmp)
        os.replace(tmp, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=30_000)
    ap.add_argument("--qis", type=int, default=24)
    ap.add_argument("--wide", type=int, default=6)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    write(args.out, args.rows, args.qis, args.wide, args.seed)
    print(" ".join(f"--qi {spec}" for spec in qi_specs(args.qis, args.wide)))


if __name__ == "__main__":
    main()
