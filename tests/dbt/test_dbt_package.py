"""The sqlanon_dbt package's generic tests (k_anonymous, l_diverse, not_unique_per_row) with real
dbt, on dbt-duckdb and dbt-postgres, against a pure-Python oracle: on small random seeds (NULLs,
skewed zip codes with leading zeros, DATE, DECIMAL, a released-like table with masked rows), each
test returns exactly the failing classes the oracle finds. One `dbt seed` + `dbt test` per engine.
Also: `sqlanon dbt path` and the package's compile-time refusals."""

from __future__ import annotations

import collections
import csv
import os
import random
import shutil
import subprocess
import sys

import pytest
import yaml

import dbt_run

pytestmark = pytest.mark.skipif(not dbt_run.has_adapter("duckdb"), reason="dbt (dbt-core + dbt-duckdb) is not installed")

PEOPLE = ["id", "zip", "age", "sex", "diagnosis", "visit", "amount"]
RELEASED = ["zip", "age", "sex", "diagnosis"]


def _people(rng: random.Random, n: int = 160) -> list[dict]:
    zips = ["02139", "02139", "02139", "02141", "02142", "00501", "10001", "94110"]
    rows = []
    for i in range(n):
        zip_ = rng.choice(zips) if rng.random() > 0.05 else None
        age = rng.choice([23, 35, 35, 41, 41, 41, 67]) if rng.random() > 0.05 else None
        sex = rng.choice(["M", "F", "F"]) if rng.random() > 0.03 else None
        diagnosis = rng.choice(["flu", "flu", "none", "fracture", "asthma"]) if rng.random() > 0.1 else None
        visit = f"2024-0{rng.randint(1, 3)}-{rng.randint(10, 12)}"
        amount = f"{rng.randint(0, 400)}.{rng.choice(['00', '50', '05'])}"
        rows.append({"id": i, "zip": zip_, "age": age, "sex": sex, "diagnosis": diagnosis, "visit": visit, "amount": amount})
    return rows


def _released(rng: random.Random) -> list[dict]:
    """A release-like table: classes of 1 to 8 rows, a few rows masked ('*' in every QI)."""
    rows = []
    for z in ("0213*", "0214*", "1000*", None):
        for a in ("[20, 40[", "[40, 60[", "[60, 80["):
            for s in ("M", "F"):
                for _ in range(rng.choice([1, 2, 3, 3, 5, 8])):
                    rows.append({"zip": z, "age": a, "sex": s, "diagnosis": rng.choice(["flu", "none", "asthma", None]) if rng.random() > 0.3 else "flu"})
    rows += [{"zip": "*", "age": "*", "sex": "*", "diagnosis": rng.choice(["flu", "none"])} for _ in range(4)]
    rows += [{"zip": "*", "age": "[20, 40[", "sex": "*", "diagnosis": "flu"}]  # not every QI masked: a class
    rng.shuffle(rows)
    return rows


# --- the oracle -------------------------------------------------------------------------------
def _classes(rows, cols):
    return collections.Counter(tuple(r[c] for c in cols) for r in rows)


def _masked(key, marker):
    return marker is not None and all(v == marker for v in key)


def k_failures(rows, cols, k, marker=None, budget=None) -> int:
    failing = 0
    for key, n in _classes(rows, cols).items():
        if _masked(key, marker):
            failing += budget is not None and n > budget * len(rows)
        else:
            failing += n < k
    return failing


def l_failures(rows, cols, sensitive, l, marker=None) -> int:
    values = collections.defaultdict(set)
    for r in rows:
        values[tuple(r[c] for c in cols)].add(r[sensitive])  # None is one value
    return sum(1 for key, s in values.items() if not _masked(key, marker) and len(s) < l)


def unique_failures(rows, col, share=1) -> int:
    distinct = len({r[col] for r in rows})
    if not rows:
        return 0
    return int(distinct >= len(rows) if share == 1 else distinct > share * len(rows))


# --- the project ------------------------------------------------------------------------------
def _cases():
    """(test name, model, kind, arguments): each becomes a named generic test in schema.yml."""
    return [
        ("people_k2", "people", "k", {"columns": ["zip", "age", "sex"], "k": 2}),
        ("people_zip_k12", "people", "k", {"columns": ["zip"], "k": 12}),
        ("people_sex_k1", "people", "k", {"columns": "sex", "k": 1}),
        ("people_visit_amount_k2", "people", "k", {"columns": ["visit", "amount"], "k": 2}),
        ("released_k3", "released", "k", {"columns": ["zip", "age", "sex"], "k": 3}),
        ("released_k3_marked", "released", "k", {"columns": ["zip", "age", "sex"], "k": 3, "suppression_marker": "*"}),
        ("released_k3_tight_budget", "released", "k", {"columns": ["zip", "age", "sex"], "k": 3, "suppression_marker": "*", "max_suppression": 0.01}),
        ("released_k1_budget", "released", "k", {"columns": ["zip", "age", "sex"], "k": 1, "suppression_marker": "*", "max_suppression": 0.5}),
        ("people_zip_l3", "people", "l", {"columns": ["zip"], "sensitive": "diagnosis", "l": 3}),
        ("people_l2", "people", "l", {"columns": ["zip", "age", "sex"], "sensitive": "diagnosis", "l": 2}),
        ("released_l2_marked", "released", "l", {"columns": ["zip", "age", "sex"], "sensitive": "diagnosis", "l": 2, "suppression_marker": "*"}),
        ("released_l2", "released", "l", {"columns": ["zip", "age", "sex"], "sensitive": "diagnosis", "l": 2}),
        ("people_id_unique", "people", "u", {"column": "id"}),
        ("people_zip_unique", "people", "u", {"column": "zip"}),
        ("people_amount_share", "people", "u", {"column": "amount", "max_share": 0.5}),
        ("people_amount_unique", "people", "u", {"column": "amount"}),
    ]


def _expected(data) -> dict[str, int]:
    out = {}
    for name, model, kind, a in _cases():
        rows = data[model]
        cols = [a["columns"]] if isinstance(a.get("columns"), str) else a.get("columns")
        if kind == "k":
            out[name] = k_failures(rows, cols, a["k"], a.get("suppression_marker"), a.get("max_suppression"))
        elif kind == "l":
            out[name] = l_failures(rows, cols, a["sensitive"], a["l"], a.get("suppression_marker"))
        else:
            out[name] = unique_failures(rows, a["column"], a.get("max_share", 1))
    return out


def _schema() -> dict:
    models: dict[str, dict] = {"people": {"name": "people", "data_tests": [], "columns": []}, "released": {"name": "released", "data_tests": [], "columns": []}}
    for name, model, kind, a in _cases():
        if kind == "u":
            args = {k: v for k, v in a.items() if k != "column"}
            test = {"sqlanon_dbt.not_unique_per_row": {"name": name, **({"arguments": args} if args else {})}}
            models[model]["columns"].append({"name": a["column"], "data_tests": [test]})
        else:
            macro = "sqlanon_dbt.k_anonymous" if kind == "k" else "sqlanon_dbt.l_diverse"
            models[model]["data_tests"].append({macro: {"name": name, "arguments": a}})
    return {"seeds": list(models.values())}


def _write_csv(path, columns, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in columns])


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The project, its package installed (``dbt deps``) once for the module."""
    return _project(tmp_path_factory.mktemp("dbtpkg"))


def _project(tmp_path):
    rng = random.Random(20261201)
    data = {"people": _people(rng), "released": _released(rng)}
    project = tmp_path / "proj"
    (project / "seeds").mkdir(parents=True)
    types = {"people": {"id": "integer", "zip": "varchar(5)", "age": "integer", "sex": "varchar(1)", "diagnosis": "varchar(20)", "visit": "date", "amount": "decimal(10,2)"},
             "released": {c: "varchar(20)" for c in RELEASED}}
    (project / "dbt_project.yml").write_text(yaml.safe_dump({"name": "pkgtest", "version": "1.0", "profile": "pkgtest", "seed-paths": ["seeds"],
                                                           "seeds": {"pkgtest": {m: {"+column_types": t} for m, t in types.items()}}}))
    dbt_run.use_package(project)
    (project / "profiles.yml").write_text(yaml.safe_dump({"pkgtest": {"target": "dev", "outputs": {
        "dev": {"type": "duckdb", "path": str(project / "pkg.duckdb"), "threads": 1},
        "pg": {"type": "postgres", "host": "{{ env_var('PGHOST') }}", "port": "{{ env_var('PGPORT') | int }}", "user": "{{ env_var('PGUSER') }}",
               "password": "{{ env_var('PGPASSWORD') }}", "dbname": "{{ env_var('PGDATABASE') }}", "schema": "pkgtest", "threads": 1}}}}))
    (project / "seeds" / "schema.yml").write_text(yaml.safe_dump(_schema(), sort_keys=False))
    # the released seed's values would read as NULL when empty, and '*' stays a string
    # (`sqlanon_dbt` compares the cast to text); loading to the adapters needs only CSV
    _write_csv(project / "seeds" / "people.csv", PEOPLE, data["people"])
    _write_csv(project / "seeds" / "released.csv", RELEASED, data["released"])
    dbt_run.run(project, "deps")
    return project, data


def _check(project, data, uri=None) -> None:
    target = ["--target", "pg"] if uri else []
    dbt_run.run(project, "seed", *target, uri=uri)
    proc = dbt_run.run(project, "test", *target, "--store-failures", uri=uri, ok=False)
    got = dbt_run.results(project)
    expected = _expected(data)
    assert set(expected) <= set(got), proc.stdout[-3000:]
    for name, n in expected.items():
        assert got[name]["status"] == ("pass" if n == 0 else "fail"), (name, got[name].get("message"), n)
        assert (got[name].get("failures") or 0) == n, (name, got[name].get("failures"), n)
    # the cases cover both outcomes of every test
    assert {n > 0 for name, n in expected.items() if "_l" in name} == {True, False}
    assert {n > 0 for name, n in expected.items() if name.startswith("released_k")} == {True, False}
    assert expected["people_id_unique"] == 1 and expected["people_zip_unique"] == 0
    assert proc.returncode != 0  # dbt test fails: some tests fail by design


def test_generic_tests_match_the_oracle_on_duckdb(built):
    project, data = built
    _check(project, data)
    import duckdb

    con = duckdb.connect(str(project / "pkg.duckdb"), read_only=True)
    zips = {r[0] for r in con.execute("SELECT DISTINCT zip FROM main.people WHERE zip IS NOT NULL").fetchall()}
    # a failing test's rows are the failing classes with their sizes (stored by --store-failures)
    table = next(r[0] + "." + r[1] for r in con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE table_name = 'released_k3_marked'").fetchall())
    got = sorted(con.execute(f"SELECT zip, age, sex, class_size FROM {table}").fetchall(), key=str)
    con.close()
    assert "00501" in zips  # leading zeros kept: the seed is what the oracle read
    want = sorted((key + (n,) for key, n in _classes(data["released"], ["zip", "age", "sex"]).items() if n < 3 and key != ("*", "*", "*")), key=str)
    assert got == want and got


@pytest.mark.postgres
@pytest.mark.skipif(not dbt_run.has_adapter("postgres"), reason="dbt-postgres is not installed")
def test_generic_tests_match_the_oracle_on_postgres(built):
    from conftest import local_postgres

    project, data = built
    with local_postgres() as uri:
        _check(project, data, uri)


def test_refusals_at_compile_time(built, tmp_path):
    project = tmp_path / "proj"
    shutil.copytree(built[0], project, symlinks=True, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb"))
    (project / "profiles.yml").write_text((project / "profiles.yml").read_text().replace(str(built[0]), str(project)))
    bad = {"seeds": [{"name": "released", "data_tests": [
        {"sqlanon_dbt.k_anonymous": {"name": "k_zero", "arguments": {"columns": ["zip"], "k": 0, "suppression_marker": "*", "max_suppression": 0.1}}}]}]}
    (project / "seeds" / "schema.yml").write_text(yaml.safe_dump(bad))
    proc = dbt_run.run(project, "compile", ok=False)  # dbt stops at the first compilation error
    assert proc.returncode != 0 and "Compilation Error in test k_zero" in proc.stdout
    assert "sqlanon_dbt: k must be a whole number >= 1, got 0" in proc.stdout, proc.stdout[-3000:]


def test_dbt_path_prints_the_package():
    proc = subprocess.run([sys.executable, "-m", "sqlanon", "dbt", "path"], capture_output=True, text=True, env=dbt_run.env())
    assert proc.returncode == 0, proc.stderr
    path = proc.stdout.strip()
    assert os.path.isfile(os.path.join(path, "dbt_project.yml"))
    with open(os.path.join(path, "dbt_project.yml"), encoding="utf-8") as fh:
        assert yaml.safe_load(fh)["name"] == "sqlanon_dbt"
    assert {"k_anonymous.sql", "l_diverse.sql", "not_unique_per_row.sql"} <= set(os.listdir(os.path.join(path, "macros")))


def test_the_wheel_ships_the_package():
    """pyproject's force-include puts dbt/sqlanon_dbt in the wheel where package_path() looks."""
    import tomllib

    from sqlanon.dbt import _PACKAGE_DIRS

    with open(os.path.join(dbt_run.ROOT, "pyproject.toml"), "rb") as fh:
        include = tomllib.load(fh)["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    assert include["dbt/sqlanon_dbt"] == "sqlanon/dbt/sqlanon_dbt"
    assert _PACKAGE_DIRS[0].endswith(os.path.join("sqlanon", "dbt", "sqlanon_dbt"))
