"""The dbt example project (examples/dbt) end to end with real dbt, built on the sqlanon_dbt
package: on dbt-duckdb, `dbt build` runs the seed, the sqlanon Python model (policy file in the
model's `meta: sqlanon:`) and the generic tests; on dbt-postgres, `sqlanon anonymize` writes the
release by the same policy file and `dbt build` runs the same tests on it. The tests on the raw
seed fail by design (severity warn in `dbt build`; `dbt test --select patients --warn-error`
fails). Every release is re-checked independently here. dbt is not a dependency of sqlanon:
skipped unless dbt-core with the adapter is installed (`pip install "sqlanon[dbt]"`)."""

import collections
import csv
import json
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
    seed_tests = {n: r["status"] for n, r in got.items() if n.startswith("sqlanon_dbt_") and "_patients_" in n and "patients_k5" not in n}
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
    registry = con.execute("SELECT id, rows, suppressed_rows, source, target, model_id, invocation_id, release_key, rerun_of FROM sqlanon_releases WHERE model_id LIKE '%patients_k5' ORDER BY id").fetchall()
    tables = sorted(r[0] for r in con.execute("SELECT schema_name || '.' || table_name FROM duckdb_tables()").fetchall())
    con.close()
    masked = _check_release(rows, columns)
    first, again = registry
    assert first[1:3] == (400, masked) and '"analytics"."patients"' in first[3]
    assert first[4] == '"example"."analytics"."patients_k5"'  # the model's relation, not "relation"
    assert first[5] == again[5] == "model.sqlanon_example.patients_k5"
    assert first[6] != again[6] and first[7] == again[7]  # two invocations, one release
    assert (first[8], again[8]) == (None, first[0])
    # materialized once, into the model's own table: no extra release table beside it
    assert tables == sorted(["analytics.patients", "analytics.patients_k5", "analytics.visits", "analytics.visits_k5", "main.sqlanon_releases"])
    assert got["visits_k5"]["status"] == "success"  # the incremental model's first run: every day at once
    out = subprocess.run([sys.executable, "-m", "sqlanon", "releases", "--database", str(project / "target" / "example.duckdb")], capture_output=True, text=True, env=dbt_run.env())
    assert out.returncode == 0 and "model=model.sqlanon_example.patients_k5" in out.stdout and f"re-run of {first[0]}" in out.stdout


def _visits(day: str | None = None) -> list[dict]:
    """The visits seed (the rows of the days up to ``day``)."""
    with open(os.path.join(EXAMPLE, "seeds", "visits.csv"), encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if day is None or r["day"] <= day]


def _released_visits(project) -> tuple[list[tuple], list[tuple]]:
    """The incremental model's table, (day, zip, age, sex, diagnosis) rows, and its registry rows."""
    con = duckdb.connect(str(project / "target" / "example.duckdb"), read_only=True)
    try:
        rows = [(str(r[0]), *r[1:]) for r in con.execute("SELECT day, zip, age, sex, diagnosis FROM main.visits_k5").fetchall()]
        assert [r[0] for r in con.execute("DESCRIBE main.visits_k5").fetchall()] == ["day", "zip", "age", "sex", "diagnosis"]
        registry = con.execute("SELECT id, search, rows, transformation, parent_id, lineage_root, batch_fingerprint, rerun_of, watermark FROM sqlanon_releases "
                               "WHERE model_id = 'model.sqlanon_example.visits_k5' ORDER BY id").fetchall()
        leftovers = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'visits_k5%'").fetchall()]
    finally:
        con.close()
    assert leftovers == ["visits_k5"]  # the post-hook dropped dbt-duckdb's Python temp tables
    return rows, registry


def _check_visits(rows: list[tuple], k: int = 5) -> None:
    """Independent re-check over the whole table (every day released so far): every class of
    unmasked rows on (zip, age, sex) has at least k rows; zip codes are masked by one level."""
    classes = collections.Counter(r[1:4] for r in rows if r[1:4] != ("*", "*", "*"))
    assert classes and min(classes.values()) >= k
    assert len({r[1].count("*") for r in rows if r[1] != "*"}) == 1


@pytest.mark.skipif(not dbt_run.has_adapter("duckdb"), reason="dbt (dbt-core + dbt-duckdb) is not installed")
def test_dbt_incremental_model_on_duckdb(tmp_path):
    """visits_k5 (materialized incremental, partition column day): run 1 releases the first day
    fully; run 2 appends only the second day's rows, released like run 1, and the generic tests
    pass over the whole table; run 3 with no new day appends nothing and is a re-run; a full
    refresh starts a new lineage of every day at once."""
    project = _copy(tmp_path)

    def build(day, *command):
        dbt_run.run(project, *(command or ("build",)), "--select", "+visits_k5", "--vars", json.dumps({"visits_through": day}))
        return dbt_run.results(project)

    got = build("2024-01-01")
    assert got["visits_k5"]["status"] == "success"
    first, registry = _released_visits(project)
    assert len(first) == len(_visits("2024-01-01")) == 200 and {r[0] for r in first} == {"2024-01-01"}
    _check_visits(first)
    (root,) = registry
    assert root[1] == "optimal" and root[4] is None and json.loads(root[8]) == {"column": "day", "through": "2024-01-01"}

    got = build("2024-01-02")  # the second day arrives: only its rows are appended
    tests = {n: r["status"] for n, r in got.items() if n.startswith("sqlanon_dbt_") and "visits_k5" in n}
    assert len(tests) == 2 and set(tests.values()) == {"pass"}, tests  # k_anonymous, l_diverse over the whole table
    second, registry = _released_visits(project)
    assert collections.Counter(second) - collections.Counter(first) == collections.Counter(r for r in second if r[0] == "2024-01-02")
    assert collections.Counter(first) <= collections.Counter(second)  # day 1 as released
    assert len(second) == 400 and sum(1 for r in second if r[0] == "2024-01-02") == 200  # suppressed rows are masked, not left out
    _check_visits(second)
    root, batch = registry
    assert batch[1] == "like-release" and batch[3] == root[3] and (batch[4], batch[5]) == (root[0], root[0]) and batch[6]
    assert batch[7] is None and json.loads(batch[8])["through"] == "2024-01-02"

    build("2024-01-02", "run")  # no new day: nothing appended, a re-run of the latest release
    third, registry = _released_visits(project)
    assert collections.Counter(third) == collections.Counter(second)
    rerun = registry[-1]
    assert len(registry) == 3 and rerun[2] == 0 and rerun[7] == batch[0] and rerun[5] == root[0]

    got = build("2024-01-03")
    assert {n: r["status"] for n, r in got.items() if "visits_k5" in n and n.startswith("sqlanon_dbt_")} and all(r["status"] in ("pass", "success") for r in got.values())
    fourth, registry = _released_visits(project)
    assert len(fourth) == 600 and registry[-1][4] == rerun[0] and registry[-1][5] == root[0]
    _check_visits(fourth)
    out = subprocess.run([sys.executable, "-m", "sqlanon", "releases", "--registry", str(project / "target" / "example.duckdb")], capture_output=True, text=True, env=dbt_run.env())
    assert out.returncode == 0, out.stderr
    lines = {int(line.split()[0]): line for line in out.stdout.splitlines()}
    assert f"like={root[0]} lineage={root[0]} batch=200:" in lines[batch[0]] and "through=2024-01-02" in lines[batch[0]]
    assert f"re-run of {batch[0]}" in lines[rerun[0]] and "batch=none" in lines[rerun[0]]
    assert all("model=model.sqlanon_example.visits_k5" in lines[r[0]] for r in registry)

    build("2024-01-03", "run", "--full-refresh")  # a new lineage: every day at once, by a new search
    refreshed, registry = _released_visits(project)
    assert len(refreshed) == 600 and registry[-1][1] == "optimal" and registry[-1][4] is None and registry[-1][5] is None
    _check_visits(refreshed)


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
