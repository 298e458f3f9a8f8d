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


def test_example_commits_no_user_file():
    """dbt writes .user.yml (a per-user id) beside profiles.yml: it is ignored, not committed."""
    tracked = subprocess.run(["git", "ls-files", "examples/dbt"], cwd=os.path.join(EXAMPLE, "..", ".."), capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert ".user.yml" not in tracked.stdout
    ignored = subprocess.run(["git", "check-ignore", "-q", "examples/dbt/.user.yml"], cwd=os.path.join(EXAMPLE, "..", ".."))
    assert ignored.returncode == 0


@pytest.mark.skipif(DBT is None, reason="dbt (dbt-core + dbt-duckdb) is not installed")
# the custom target schema in the default run; the default schema (same code path, one schema less) is slow
@pytest.mark.parametrize("schema", [pytest.param(None, marks=pytest.mark.slow), "analytics"])
def test_dbt_python_model_anonymizes_in_the_dbt_database(tmp_path, schema):
    project = tmp_path / "dbt"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", ".user.yml"))
    if schema:  # a custom target schema: seeds and the model go there
        profiles = (project / "profiles.yml").read_text()
        (project / "profiles.yml").write_text(profiles.replace("      threads: 1", f"      threads: 1\n      schema: {schema}"))
    for command in (["seed"], ["run"]):
        env = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_NO_VERSION_CHECK="true")
        proc = subprocess.run([DBT, *command, "--profiles-dir", str(project), "--project-dir", str(project)], cwd=project, capture_output=True, text=True, env=env)
        assert proc.returncode == 0, proc.stdout[-3000:]
    con = duckdb.connect(str(project / "target" / "example.duckdb"), read_only=True)
    where = schema or "main"
    model = f'"{where}".patients_k5'
    rows, smallest = con.execute(f"SELECT SUM(n), MIN(n) FROM (SELECT COUNT(*) AS n FROM {model} WHERE zip <> '*' GROUP BY zip, age, sex)").fetchall()[0]
    suppressed = con.execute(f"SELECT COUNT(*) FROM {model} WHERE zip = '*' AND age = '*' AND sex = '*'").fetchall()[0][0]
    release = con.execute("SELECT rows, suppressed_rows, target, source FROM sqlanon_releases").fetchall()
    zips = {r[0] for r in con.execute(f"SELECT DISTINCT zip FROM {model}").fetchall()}
    tables = sorted(r[0] for r in con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables()").fetchall())
    columns = [r[0] for r in con.execute(f"DESCRIBE {model}").fetchall()]
    con.close()
    assert columns == ["zip", "age", "sex", "diagnosis"]  # the seed's id is not released (it joins back 1:1)
    assert smallest >= 5 and rows + suppressed == 400
    assert len(release) == 1 and release[0][:3] == (400, suppressed, "relation") and suppressed <= 20
    assert f'"{where}"."patients"' in release[0][3]  # the relation dbt.ref() handed over
    assert all(z == "*" or z.startswith("0") for z in zips)  # zip codes stayed strings
    # materialized once, into the model's own table: no extra release table beside it
    assert tables == sorted([f"{where}.patients", f"{where}.patients_k5", "main.sqlanon_releases"])
