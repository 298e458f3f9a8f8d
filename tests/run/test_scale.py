"""Scale test (marked slow; run with ``pytest -m slow``): a 2M-row Adult-like Parquet file under a
1 GB DuckDB memory limit, end to end through the CLI, and the release re-checked by independent SQL
(the rows are never pulled into Python). Timing lives in bench/scale_spine.py, not here."""

import json
import os
import subprocess
import sys
import paths

import duckdb
import pytest

ROOT = str(paths.ROOT)
sys.path.insert(0, os.path.join(ROOT, "bench"))

COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


@pytest.mark.slow
def test_two_million_rows_under_one_gigabyte(tmp_path):
    from adult_like import generate

    data = str(tmp_path / "adult_2m.parquet")
    generate(2_000_000, data)
    out = str(tmp_path / "release.parquet")
    qi = []
    for c in COLUMNS:
        qi += ["--qi", f"{c}={os.path.join(ROOT, 'examples', 'adult', f'adult_hierarchy_{c}.csv')}"]
    proc = subprocess.run(
        [sys.executable, "-m", "sqlanon", "anonymize", "--input", data, *qi, "--k", "10", "--max-suppression", "0.05",
         "--memory-limit", "1GB", "--output", out, "--json", "-q"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["rows"] == 2_000_000
    quoted = ", ".join('"' + c + '"' for c in COLUMNS)
    all_star = " AND ".join('"' + c + "\" = '*'" for c in COLUMNS)
    con = duckdb.connect()
    rows, suppressed = con.execute(f"SELECT COUNT(*), COUNT(*) FILTER (WHERE {all_star}) FROM read_parquet(?)", [out]).fetchone()
    smallest = con.execute(f"SELECT MIN(n) FROM (SELECT COUNT(*) AS n FROM read_parquet(?) WHERE NOT ({all_star}) GROUP BY {quoted})", [out]).fetchone()[0]
    con.close()
    assert rows == 2_000_000
    assert suppressed == report["suppressed_rows"] <= int(0.05 * 2_000_000)
    assert smallest >= 10
