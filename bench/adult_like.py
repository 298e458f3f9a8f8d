"""Generate an Adult-like Parquet file of N rows (default 10M) for the scale benchmarks.

Each column is drawn from Adult's marginal distribution (so the values fit ARX's hierarchies), with
a weak dependence on a latent "profile" so the data is not perfectly independent; the result has
millions of distinct QI combinations at 10M rows. Written in 1M-row chunks (memory stays small).

    python bench/adult_like.py --rows 10000000 --out bench/out/adult_10m.parquet
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ADULT = os.path.join(HERE, "..", "examples", "adult", "adult.csv")
COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def marginals(path: str):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh, delimiter=";"))
    header, body = rows[0], rows[1:]
    out = {}
    for i, c in enumerate(header):
        counts = collections.Counter(r[i] for r in body if len(r) == len(header))
        values = sorted(counts)
        p = np.array([counts[v] for v in values], dtype=float)
        out[c] = (values, p / p.sum())
    return header, out


def generate(rows: int, out: str, adult: str = DEFAULT_ADULT, seed: int = 42, chunk: int = 1_000_000) -> None:
    header, marg = marginals(adult)
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    writer = None
    done = 0
    while done < rows:
        n = min(chunk, rows - done)
        profile = rng.integers(0, 4, n)
        cols = {}
        for c in header:
            values, p = marg[c]
            # a per-profile tilt of the marginal, renormalized: mild dependence between columns
            codes = np.empty(n, dtype=np.int32)
            for prof in range(4):
                idx = np.flatnonzero(profile == prof)
                tilt = p * np.exp(0.6 * np.sin(np.arange(len(p)) * (prof + 1)))
                codes[idx] = rng.choice(len(values), size=len(idx), p=tilt / tilt.sum())
            cols[c] = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(values)).cast(pa.string())
        table = pa.table(cols)
        if writer is None:
            writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
        writer.write_table(table)
        done += n
    writer.close()
    os.replace(tmp, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--out", default=os.path.join(HERE, "out", "adult_10m.parquet"))
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()
    t = time.perf_counter()
    generate(args.rows, args.out, seed=args.seed)
    print(f"wrote {args.rows:,} rows to {args.out} in {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    main()
