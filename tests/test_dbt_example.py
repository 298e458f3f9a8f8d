"""The dbt example project (examples/dbt) end to end: dbt seed + dbt run with the sqlanon Python
model on dbt's own DuckDB connection. dbt is not a dependency of sqlanon: skipped unless the
`dbt` command is installed (e.g. `pip install "dbt-core~=1.11.0" dbt-duckdb`)."""

import os
import shutil
import subprocess
import sys

import duckdb
import pytest

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "dbt")
DBT = shutil.which("dbt") or (os.path.join(os.path.dirname(sys.executable), "dbt") if os.path.exists(os.path.join(os.path.dirname(sys.executable), "dbt")) else None)


@pytest.mark.skipif(DBT is None, reason="dbt (dbt-core + dbt-duckdb) is not installed")
def test_dbt_python_model_anonymizes_in_the_dbt_database(tmp_path):
    project = tmp_path / "dbt"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target", "logs"))
    for command in (["seed"], ["run"]):
        env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_NO_VERSION_CHECK="true")
        proc = subprocess.run([DBT, *command, "--profiles-dir", str(project), "--project-dir", str(project)], cwd=project, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stdout[-2000:]
    con = duckdb.connect(str(project / "target" / "example.duckdb"), read_only=True)
    rows, smallest = con.execute("SELECT SUM(n), MIN(n) FROM (SELECT COUNT(*) AS n FROM patients_k5 WHERE zip <> '*' GROUP BY zip, age, sex)").fetchone()
    suppressed = con.execute("SELECT COUNT(*) FROM patients_k5 WHERE zip = '*' AND age = '*' AND sex = '*'").fetchone()[0]
    release = con.execute("SELECT rows, suppressed_rows FROM sqlanon_releases").fetchall()
    zips = {r[0] for r in con.execute("SELECT DISTINCT zip FROM patients_k5").fetchall()}
    con.close()
    assert smallest >= 5 and rows + suppressed == 400
    assert release == [(400, suppressed)] and suppressed <= 20
    assert all(z == "*" or z.startswith("0") for z in zips)  # zip codes stayed strings
