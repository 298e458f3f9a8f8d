"""The dbt example project (examples/dbt) end to end with real dbt, built on the sqlanon_dbt
package: on dbt-duckdb, `dbt build` runs the seed, the sqlanon Python model (policy file in the
model's `meta: sqlanon:`) and the generic tests; on dbt-postgres, `sqlanon anonymize` writes the
release by the same policy file and `dbt build` runs the same tests on it. The tests on the raw
seed fail by design (severity warn in `dbt build`; `dbt test --select patients --warn-error`
fails). Every release is re-checked independently here. dbt is not a dependency of sqlanon:
skipped unless dbt-core with the adapter is installed (`pip install "sqlanon[dbt]"`)."""

import collections
import csv
import os
import shutil
import subprocess
import sys

import duckdb
import pytest

import dbt_run

EXAMPLE = os.path.join(dbt_run.ROOT, "examples", "dbt")
QI = ("zip", "age", "sex")


def test_example_commits_no_user_file():
    """dbt writes .user.yml (a per-user id) beside profiles.yml: it is ignored, not committed."""
    tracked = subprocess.run(["git", "ls-files", "examples/dbt"], cwd=dbt_run.ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    assert ".user.yml" not in tracked.stdout
    ignored = subprocess.run(["git", "check-ignore", "-q", "examples/dbt/.user.yml"], cwd=dbt_run.ROOT)
    assert ignored.returncode == 0


def _copy(tmp_path):
    project = tmp_path / "dbt"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("target", "logs", ".user.yml", "dbt_packages"))
    dbt_run.use_package(project)
    dbt_run.run(project, "deps")
    return project


def _raw_failures() -> tuple[int, int]:
    """The oracle on the seed: classes under 5 on (zip, age, sex), and its row count."""
    with open(os.path.join(EXAMPLE, "seeds", "patients.csv"), encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    classes = collections.Counter(tuple(r[c] for c in QI) for r in rows)
    return sum(1 for n in classes.values() if n < 5), len(rows)


def _check_release(rows: list[tuple], columns: list[str]) -> int:
    """Independent re-check of the released rows: 5-anonymous apart from masked rows, at most 5 %
    masked, the seed's id not released, zip codes still strings. Returns the masked rows."""
    assert columns == ["zip", "age", "sex", "diagnosis"]
    masked = [r for r in rows if r[:3] == ("*", "*", "*")]
    classes = collections.Counter(r[:3] for r in rows if r[:3] != ("*", "*", "*"))
    assert len(rows) == 400 and len(masked) <= 20 and min(classes.values()) >= 5
    assert all(r[0] == "*" or r[0].startswith("0") for r in rows)
    return len(masked)


def _raw_seed_fails(project, uri=None) -> None:
    target = ["--target", "pg"] if uri else []
    proc = dbt_run.run(project, "test", "--select", "patients", "--warn-error", *target, uri=uri, ok=False)
    assert proc.returncode != 0
    got = dbt_run.results(project)
    k = next(r for name, r in got.items() if name.startswith("sqlanon_dbt_k_anonymous_patients_"))
    unique = got["sqlanon_dbt_not_unique_per_row_patients_id"]
    assert k["status"] == "fail" and k["failures"] == _raw_failures()[0]
    assert unique["status"] == "fail" and unique["failures"] == 1


def _build_passes(project, uri=None) -> dict:
    target = ["--target", "pg"] if uri else []
    dbt_run.run(project, "build", *target, uri=uri)
    got = dbt_run.results(project)
    release_tests = {n: r["status"] for n, r in got.items() if "patients_k5" in n and not n.startswith("patients_k5")}
    seed_tests = {n: r["status"] for n, r in got.items() if n.startswith("sqlanon_dbt_") and "patients_k5" not in n}
    assert len(release_tests) == 4 and set(release_tests.values()) == {"pass"}, release_tests
    assert len(seed_tests) == 2 and set(seed_tests.values()) == {"warn"}, seed_tests  # the raw seed fails them, by design
    return got


@pytest.mark.skipif(not dbt_run.has_adapter("duckdb"), reason="dbt (dbt-core + dbt-duckdb) is not installed")
def test_dbt_build_on_duckdb(tmp_path):
    project = _copy(tmp_path)
    profiles = (project / "profiles.yml").read_text()  # a custom target schema: seeds and the model go there
    (project / "profiles.yml").write_text(profiles.replace("      path: target/example.duckdb\n      threads: 1", "      path: target/example.duckdb\n      threads: 1\n      schema: analytics"))
    got = _build_passes(project)
    assert got["patients_k5"]["status"] == "success"
    dbt_run.run(project, "run", "--select", "patients_k5")  # the unchanged model again: a re-run, not a new release
    _raw_seed_fails(project)

    con = duckdb.connect(str(project / "target" / "example.duckdb"), read_only=True)
    rows = con.execute('SELECT zip, age, sex, diagnosis FROM "analytics".patients_k5').fetchall()
    columns = [r[0] for r in con.execute('DESCRIBE "analytics".patients_k5').fetchall()]
    registry = con.execute("SELECT id, rows, suppressed_rows, source, target, model_id, invocation_id, release_key, rerun_of FROM sqlanon_releases ORDER BY id").fetchall()
    tables = sorted(r[0] for r in con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables()").fetchall())
    con.close()
    masked = _check_release(rows, columns)
    first, again = registry
    assert first[:3] == (1, 400, masked) and '"analytics"."patients"' in first[3]
    assert first[4] == '"example"."analytics"."patients_k5"'  # the model's relation, not "relation"
    assert first[5] == again[5] == "model.sqlanon_example.patients_k5"
    assert first[6] != again[6] and first[7] == again[7]  # two invocations, one release
    assert (first[8], again[8]) == (None, 1)
    # materialized once, into the model's own table: no extra release table beside it
    assert tables == sorted(["analytics.patients", "analytics.patients_k5", "main.sqlanon_releases"])
    out = subprocess.run([sys.executable, "-m", "sqlanon", "releases", "--database", str(project / "target" / "example.duckdb")], capture_output=True, text=True, env=dbt_run.env())
    assert out.returncode == 0 and "model=model.sqlanon_example.patients_k5" in out.stdout and "re-run of 1" in out.stdout


@pytest.mark.postgres
@pytest.mark.skipif(not dbt_run.has_adapter("postgres"), reason="dbt-postgres is not installed")
def test_dbt_build_on_postgres(tmp_path):
    psycopg = pytest.importorskip("psycopg")
    from conftest import local_postgres

    project = _copy(tmp_path)
    with local_postgres() as uri:
        dbt_run.run(project, "seed", "--target", "pg", uri=uri)
        cli = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", "--input", uri, "--table", "analytics.patients", "--output-table", "analytics.patients_k5",
                              "--policy", "policies/patients_k5.yml"], cwd=project, capture_output=True, text=True, env=dbt_run.env())
        assert cli.returncode == 0, cli.stderr
        got = _build_passes(project, uri)
        assert "patients_k5" not in got  # no Python model on dbt-postgres: the release is the source
        _raw_seed_fails(project, uri)
        with psycopg.connect(uri) as con:
            rows = con.execute("SELECT zip, age, sex, diagnosis FROM analytics.patients_k5").fetchall()
            columns = [d.name for d in con.execute("SELECT * FROM analytics.patients_k5 LIMIT 0").description]
            recorded = con.execute("SELECT rows, suppressed_rows, target FROM sqlanon_releases").fetchall()
    masked = _check_release([tuple(r) for r in rows], columns)
    assert recorded == [(400, masked, "table analytics.patients_k5")]
