"""What the role refusal costs: the profile's verdicts of the columns a policy leaves without a
role (:func:`sqlanon.run.columns.verdicts`: the row count, then one aggregate statement over a
Bernoulli sample), at several sample sizes, on a table of ROWS rows (default 2M).

    python bench/roles_refusal.py [ROWS]

Measured (2M rows, four columns without a role, one thread, a loaded 2-core machine): 1M-row
sample 5.1 s, 100k (the default) 0.75 s, 10k 0.64 s; a whole dry run of the same table 1.3 s.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import duckdb  # noqa: E402

from sqlanon.config.policy import Policy  # noqa: E402
from sqlanon.run import columns  # noqa: E402
from sqlanon.run.session import Session  # noqa: E402


def main(rows: int) -> None:
    path = os.path.join(tempfile.mkdtemp(prefix="sqlanon-roles-"), "t.duckdb")
    con = duckdb.connect(path)
    con.execute(
        "CREATE TABLE t AS SELECT lpad(CAST(i % 97 AS VARCHAR), 5, '0') AS zip, 18 + i % 70 AS age, "
        "CASE WHEN i % 2 = 0 THEN 'F' ELSE 'M' END AS gender, DATE '1940-01-01' + CAST(i % 20000 AS INTEGER) AS dob, "
        "CAST(100000000 + i AS VARCHAR) AS ssn, CAST(i % 1000 AS DECIMAL(10,2)) / 4 AS amount FROM range(?) r(i)",
        [rows],
    )
    con.close()
    session = Session(Policy(input=path, table="t", threads=1), lambda m: None, read_only=True)
    try:
        for sample in (1_000_000, columns.VERDICT_SAMPLE_ROWS, 10_000):
            t0 = time.perf_counter()
            columns.verdicts(session, ["gender", "dob", "ssn", "amount"], sample)
            print(f"sample {sample:>9,} rows: {time.perf_counter() - t0:.2f} s")
    finally:
        session.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000)
