"""``sqlanon.dbt.anonymize_model`` (the dbt-duckdb model) and the registry's run keys, without
the dbt command: a stand-in for dbt's ``dbt`` object, dbt-duckdb's ``parsed_model`` in the
caller's frame, and a DuckDB connection as dbt's ``session``. Every release is re-checked
independently (smallest class, suppressed rows), and the registry rows say new release or re-run."""

from __future__ import annotations

import collections
import json
import os

import duckdb
import pytest
from typer.testing import CliRunner

from sqlanon.cli.app import app
from sqlanon.dbt import anonymize_model, model_policy, package_path
from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.release import registry, runs
from sqlanon.engine import connect

POLICY = {"qi": {"zip": "mask", "age": "bands:10,20", "sex": "flat"}, "k": 4, "max_suppression": 0.1, "drop_columns": ["id"],
          "keep_columns": ["diagnosis", "visit", "fee"]}  # every column has a role


class _This:
    database, schema, identifier = "memory", "main", "patients_k4"

    def __repr__(self) -> str:
        return '"memory"."main"."patients_k4"'


class _Dbt:
    """What dbt-duckdb hands a Python model (``dbt.this``, ``dbt.config.get``)."""

    this = _This()


def _model(con, meta, unique_id="model.example.patients_k4", **options):
    parsed_model = {"unique_id": unique_id}  # dbt-duckdb's submit_python_job has this local  # noqa: F841
    return anonymize_model(_Dbt(), con, con.table("patients"), meta, **options)


@pytest.fixture
def con(tmp_path):
    import random

    rng = random.Random(7)
    c = duckdb.connect(str(tmp_path / "dbt.duckdb"))
    c.execute("CREATE TABLE patients (id INTEGER, zip VARCHAR, age INTEGER, sex VARCHAR, diagnosis VARCHAR, visit DATE, fee DECIMAL(8,2))")
    rows = [(i, rng.choice(["02139", "02141", "02142", "00501"]), rng.choice([23, 31, 38, 45, 52]), rng.choice(["M", "F"]),
             rng.choice(["flu", "none", None]), f"2024-01-{rng.randint(10, 28)}", rng.randint(0, 9999) / 100) for i in range(300)]
    c.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    yield c
    c.close()


def _check_release(rel, k: int, budget: int) -> None:
    """Independent re-check of a released relation: every class of unmasked rows has >= k rows,
    masked rows ('*' in every QI) within the budget; the id is not released."""
    assert "id" not in rel.columns
    rows = rel.fetchall()
    qi = [rel.columns.index(c) for c in ("zip", "age", "sex")]
    masked = sum(1 for r in rows if all(r[i] == "*" for i in qi))
    classes = collections.Counter(tuple(r[i] for i in qi) for r in rows if not all(r[i] == "*" for i in qi))
    assert len(rows) == 300 and masked <= budget and min(classes.values()) >= k


def _runs(con):
    return con.execute("SELECT id, target, model_id, invocation_id, release_key, rerun_of FROM sqlanon_releases ORDER BY id").fetchall()


def test_rerun_of_an_unchanged_model_is_the_same_release(con):
    meta = {"sqlanon": dict(POLICY)}
    first = _model(con, meta)
    _check_release(first, 4, 30)
    rel = _model(con, meta)  # the unchanged model again: a re-run
    _check_release(rel, 4, 30)
    was = con.execute("SELECT diagnosis FROM patients WHERE id = 3").fetchall()[0][0]
    con.execute("UPDATE patients SET diagnosis = 'asthma' WHERE id = 3")  # the input changed: a new release
    _model(con, meta)
    _model(con, {"sqlanon": dict(POLICY, k=5)})  # the policy changed: a new release
    _model(con, meta, unique_id="model.example.other")  # another model: its own release
    con.execute("UPDATE patients SET diagnosis = ? WHERE id = 3", [was])
    _model(con, meta)  # input back as it was at release 1: a re-run of it
    rows = _runs(con)
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert [r[5] for r in rows] == [None, 1, None, None, None, 1]
    assert all(r[1] == '"memory"."main"."patients_k4"' for r in rows)  # the model's relation, not "relation"
    assert [r[2] for r in rows] == ["model.example.patients_k4"] * 4 + ["model.example.other", "model.example.patients_k4"]
    keys = [r[4] for r in rows]
    assert keys[0] == keys[1] == keys[5] and len(set(keys)) == 4
    assert all(r[3] for r in rows)  # an invocation id (dbt_common's, in this process)


def test_policy_file_with_model_keys_over_it(con, tmp_path):
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "p.yml").write_text("qi:\n  zip: mask\n  age: bands:10,20\n  sex: flat\nk: 3\nmax_suppression: 0.1\ndrop_columns: [id]\nkeep_columns: [diagnosis, visit, fee]\n")
    policy = model_policy({"sqlanon": {"policy": "policies/p.yml", "k": 6}}, {}, str(tmp_path))
    assert policy.privacy.k == 6 and policy.qi["zip"] == "mask" and policy.release.drop_columns == ["id"]
    assert model_policy({"sqlanon": {"policy": "policies/p.yml"}}, {"k": 2}, str(tmp_path)).privacy.k == 2
    assert model_policy({"sqlanon": {"privacy": {"k": 7}, "qi": {"zip": "mask"}}}, {}, str(tmp_path)).privacy.k == 7
    (tmp_path / "h.csv").write_text("02139;0213*;*\n")
    assert model_policy({"sqlanon": {"qi": {"zip": "h.csv"}, "k": 2}}, {}, str(tmp_path)).qi["zip"] == str(tmp_path / "h.csv")  # relative to the project
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:  # run on the connection: the policy file's k=3 with the model's k=6
        rel = anonymize_model(_Dbt(), con, con.table("patients"), {"sqlanon": {"policy": "policies/p.yml", "k": 6}})
        _check_release(rel, 6, 30)
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("meta, message", [
    (None, "the model has no sqlanon policy"),
    ({"other": {}}, "the model has no sqlanon policy"),
    ({"sqlanon": {"k": 5, "output": "x.parquet"}}, "meta.sqlanon.output does not apply to a dbt model"),
    ({"sqlanon": {"k": 5, "release": {"output_table": "t"}}}, "meta.sqlanon.output_table does not apply"),
    ({"sqlanon": {"k": 5, "no_such_key": 1}}, "no_such_key"),
    ({"sqlanon": {"policy": "missing.yml"}}, "policy file not found"),
])
def test_model_config_refusals(meta, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        model_policy(meta, {}, str(tmp_path))


def test_policy_file_that_writes_an_output_is_refused(tmp_path):
    (tmp_path / "p.yml").write_text("qi:\n  zip: mask\nk: 3\noutput_table: released\n")
    with pytest.raises(ConfigError, match="do not apply to a dbt model"):
        model_policy({"sqlanon": {"policy": "p.yml"}}, {}, str(tmp_path))


def test_releases_lists_the_run_keys(con, tmp_path):
    _model(con, {"sqlanon": dict(POLICY)})
    _model(con, {"sqlanon": dict(POLICY)})
    con.close()
    path = str(tmp_path / "dbt.duckdb")
    out = CliRunner().invoke(app, ["releases", "--database", path])
    assert out.exit_code == 0, out.output
    lines = out.output.strip().splitlines()
    assert "model=model.example.patients_k4" in lines[0] and lines[0].rstrip().endswith("re-run of 1")
    assert "re-run" not in lines[1] and "invocation=" in lines[1]
    js = CliRunner().invoke(app, ["releases", "--database", path, "--json"])
    import json

    listed = json.loads(js.output)
    assert [r["rerun_of"] for r in listed] == [1, None] and listed[0]["release_key"] == listed[1]["release_key"]


def test_registry_without_run_keys_gains_them(tmp_path):
    """A registry made before the run keys: listed with None, and the columns are added by the
    next release (ADD COLUMN IF NOT EXISTS); a release outside dbt has no run keys."""
    path = str(tmp_path / "old.duckdb")
    c = duckdb.connect(path)
    c.execute("CREATE TABLE sqlanon_releases (id INTEGER, created_at VARCHAR, source VARCHAR, target VARCHAR, search VARCHAR, policy VARCHAR, transformation VARCHAR, privacy VARCHAR, metrics VARCHAR, rows BIGINT, suppressed_rows BIGINT, input_hash VARCHAR, sqlanon_version VARCHAR)")
    c.execute("INSERT INTO sqlanon_releases VALUES (1, 'then', 's', 't', 'optimal', '{}', '{}', '{}', '{}', 10, 0, 'h', '0.0')")
    c.close()
    engine = connect(database=path, read_only=True)
    try:
        assert registry.list_releases(engine)[0]["rerun_of"] is None
    finally:
        engine.close()
    engine = connect(database=path)
    try:
        with engine.transaction():
            new = registry.record(engine, {"source": "s", "target": "t", "policy": {"k": 2}, "rows": 10})
        with engine.transaction(), runs.tagged("model.p.m", "inv-1", target="main.m"):
            tagged = registry.record(engine, {"source": "s", "target": "relation", "policy": {"k": 2}, "rows": 10, "input_hash": "h"})
        listed = {r["id"]: r for r in registry.list_releases(engine)}
    finally:
        engine.close()
    assert (new, tagged) == (2, 3)
    assert listed[2]["model_id"] is None and listed[2]["target"] == "t"
    assert listed[3]["model_id"] == "model.p.m" and listed[3]["invocation_id"] == "inv-1" and listed[3]["target"] == "main.m"
    assert listed[3]["rerun_of"] is None and len(listed[3]["release_key"]) == 32


def test_package_path_is_the_shipped_package():
    assert os.path.isfile(os.path.join(package_path(), "dbt_project.yml"))
    out = CliRunner().invoke(app, ["dbt", "path"])
    assert out.exit_code == 0 and out.output.strip() == package_path()


# -- the incremental model (sqlanon.dbt.incremental), with what dbt does around it -------------

VISITS = {"qi": {"zip": "mask", "age": "bands:10,20", "sex": "flat"}, "k": 4, "max_suppression": 0.1, "drop_columns": ["id"], "keep_columns": ["day", "diagnosis"]}
ARRIVED = {1: "day <= 1", 2: "day <= 2", 3: "day <= 3"}  # the days the warehouse holds


class _Visits:
    database, schema, identifier = "dbt", "main", "visits_k4"

    def __repr__(self) -> str:
        return '"dbt"."main"."visits_k4"'


class _IncrementalDbt:
    """dbt's ``dbt`` object of an incremental model: ``is_incremental`` once its table exists."""

    this = _Visits()

    def __init__(self, incremental: bool) -> None:
        self.is_incremental = incremental


@pytest.fixture
def visits(tmp_path):
    import random

    rng = random.Random(11)
    c = duckdb.connect(str(tmp_path / "dbt.duckdb"))
    c.execute("CREATE TABLE visits (id INTEGER, day INTEGER, zip VARCHAR, age INTEGER, sex VARCHAR, diagnosis VARCHAR)")
    rows = [(i, 1 + i // 150, rng.choice(["02139", "02141", "02142", "00501"]), rng.choice([23, 31, 38, 45, 52, 67]), rng.choice(["M", "F"]), rng.choice(["flu", "none"])) for i in range(450)]
    c.executemany("INSERT INTO visits VALUES (?, ?, ?, ?, ?, ?)", rows)
    yield c
    c.close()


def _run_incremental(con, meta, day: int, relation=None):
    """One dbt run of the incremental model: create its table on the first run, append after."""
    parsed_model = {"unique_id": "model.example.visits_k4"}  # noqa: F841
    exists = bool(con.execute("SELECT COUNT(*) FROM duckdb_tables() WHERE table_name = 'visits_k4'").fetchall()[0][0])
    rel = anonymize_model(_IncrementalDbt(exists), con, relation if relation is not None else con.table("visits").filter(ARRIVED[day]), meta)
    if exists:
        rel.insert_into("visits_k4")
    else:
        rel.create("visits_k4")


def _table(con) -> list[tuple]:
    return con.execute("SELECT day, zip, age, sex, diagnosis FROM visits_k4").fetchall()


def _lineage(con) -> list[tuple]:
    return con.execute("SELECT id, search, rows, parent_id, lineage_root, rerun_of, watermark, lineage FROM sqlanon_releases ORDER BY id").fetchall()


def _k_over_table(con, k: int = 4) -> None:
    """Independent re-check: every unmasked class on (zip, age, sex) of the whole table has >= k rows."""
    rows = _table(con)
    classes = collections.Counter(r[1:4] for r in rows if r[1:4] != ("*", "*", "*"))
    assert min(classes.values()) >= k


def test_incremental_model_hold_keeps_rows_until_their_class_reaches_k(visits):
    meta = {"sqlanon": dict(VISITS, incremental={"on_break": "hold", "partition_column": "day"})}
    _run_incremental(visits, meta, 1)
    root = _table(visits)
    for day in (2, 3):
        _run_incremental(visits, meta, day)
        _k_over_table(visits)
        rows = _table(visits)
        assert all(r[1] != "*" for r in rows if r[0] > 1)  # held, not masked: a batch's released rows are all in classes of k
        held = visits.execute("SELECT COUNT(*) FROM sqlanon_held_1").fetchall()[0][0]
        info = json.loads(_lineage(visits)[-1][7])
        assert info["strategy"] == "hold" and info["unseen_rows"] == 0 and held > 0
        assert info["released_from_held"] > 0 if day == 3 else info["released_from_held"] == 0  # day 2's held rows join classes of day 3
        assert len(rows) - len(root) + held == 150 * (day - 1)  # every new row released or held, none twice
    assert collections.Counter(root) <= collections.Counter(_table(visits))
    assert [r[3:5] for r in _lineage(visits)] == [(None, None), (1, 1), (2, 1)]
    assert [json.loads(r[6])["through"] for r in _lineage(visits)] == ["1", "2", "3"]


def test_incremental_model_refuse_writes_nothing(visits):
    meta = {"sqlanon": dict(VISITS, incremental={"on_break": "refuse", "partition_column": "day"})}
    _run_incremental(visits, meta, 1)
    before, registry = _table(visits), _lineage(visits)
    with pytest.raises(UnsatisfiableError, match="breaks k=4"):
        _run_incremental(visits, meta, 2)
    assert _table(visits) == before and _lineage(visits) == registry


def test_incremental_model_filtered_by_the_model(visits):
    """Without a partition column the model passes the new rows itself (a filter on dbt.this);
    the same rows again are refused, no rows are a re-run."""
    meta = {"sqlanon": dict(VISITS, incremental=True)}
    _run_incremental(visits, meta, 1)
    day2 = visits.table("visits").filter("day = 2")
    _run_incremental(visits, meta, 2, relation=day2)
    assert len(_table(visits)) == 300
    with pytest.raises(ConfigError, match="already released"):
        _run_incremental(visits, meta, 2, relation=visits.table("visits").filter("day = 2"))
    _run_incremental(visits, meta, 2, relation=visits.table("visits").filter("day > 3"))
    rows = _lineage(visits)
    assert len(_table(visits)) == 300 and [r[5] for r in rows] == [None, None, 2] and rows[-1][2] == 0 and rows[-1][6] is None


@pytest.mark.parametrize("incremental, message", [
    ({"on_break": "drop"}, "on_break must be one of suppress, hold, refuse"),
    ({"lineage_check": "all"}, "lineage_check must be one of cumulative, batch"),
    ({"partition": "day"}, "incremental.partition is not a key"),
    ({"partition_column": "visit_day"}, "partition_column 'visit_day' is not a column"),
    ("yes", "must be a mapping"),
])
def test_incremental_config_refusals(visits, incremental, message):
    with pytest.raises(ConfigError, match=message):
        _run_incremental(visits, {"sqlanon": dict(VISITS, incremental=incremental)}, 1)


def test_incremental_model_refusals_after_the_first_run(visits):
    meta = {"sqlanon": dict(VISITS, incremental={"partition_column": "day"})}
    _run_incremental(visits, meta, 1)
    registry = _lineage(visits)
    with pytest.raises(ConfigError, match=r"policy changed since release 1 .*k: 4 -> 5.*--full-refresh"):
        _run_incremental(visits, {"sqlanon": dict(VISITS, k=5, incremental={"partition_column": "day"})}, 2)
    with pytest.raises(ConfigError, match="the lineage's is 'day'"):
        _run_incremental(visits, {"sqlanon": dict(VISITS, incremental={"partition_column": "age"})}, 2)
    with pytest.raises(ConfigError, match="has no incremental: key"):
        _run_incremental(visits, {"sqlanon": dict(VISITS)}, 2)
    assert _lineage(visits) == registry and len(_table(visits)) == 150
    visits.execute("DELETE FROM sqlanon_releases")
    with pytest.raises(ConfigError, match="no release of it: run it with --full-refresh"):
        _run_incremental(visits, meta, 2)


def test_incremental_model_with_search_auto(visits):
    """The root records the search auto chose (and why); the model asking auto again is the same policy."""
    meta = {"sqlanon": dict(VISITS, search="auto", incremental={"partition_column": "day"})}
    _run_incremental(visits, meta, 1)
    _run_incremental(visits, meta, 2)
    assert len(_table(visits)) == 300 and [r[3] for r in _lineage(visits)] == [None, 1]
    with pytest.raises(ConfigError, match="search: 'auto' -> 'samarati'"):
        _run_incremental(visits, {"sqlanon": dict(VISITS, search="samarati", incremental={"partition_column": "day"})}, 3)
