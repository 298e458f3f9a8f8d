"""The PostgreSQL engine, end to end against a real server (``pgserver`` runs one from a wheel):
every result is compared with the DuckDB engine's on the same data, and every release is
re-checked independently. Skipped where ``pgserver``/``psycopg`` are not installed (the test
extras install them, so CI runs these)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import uuid

import pytest
from typer.testing import CliRunner

pgserver = pytest.importorskip("pgserver")
psycopg = pytest.importorskip("psycopg")

pytestmark = pytest.mark.postgres

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from conftest import local_postgres  # noqa: E402
from checker import check_k, read_rows  # noqa: E402
from sqlanon.errors import SqlanonError  # noqa: E402

runner = CliRunner()
COLUMNS = ["id", "zip", "age", "disease", "buys"]


@pytest.fixture(scope="module")
def server():
    with local_postgres() as uri:
        yield uri


def _with_db(uri: str, db: str) -> str:
    head, _, query = uri.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{db}" + (f"?{query}" if query else "")


@pytest.fixture
def people(server, tmp_path):
    """The same small table as a CSV (for DuckDB) and as a PostgreSQL table in a fresh database."""
    rnd = random.Random(7)
    rows = [[i, rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59), rnd.choice(["flu", "cold", "hiv", "cancer"]), rnd.choice(["yes", "no"])] for i in range(300)]
    data = tmp_path / "people.csv"
    data.write_text("\n".join([",".join(COLUMNS)] + [",".join(map(str, r)) for r in rows]) + "\n")
    db = "t_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as con:
        con.execute("CREATE DATABASE " + db)
    url = _with_db(server, db)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE people (id INTEGER, zip TEXT, age INTEGER, disease TEXT, buys TEXT)")
        with con.cursor().copy("COPY people FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
    return {"url": url, "csv": str(data), "dir": tmp_path, "rows": rows, "qi": {"zip": "mask", "age": "bands:5,10,20"}}


def pg_rows(url: str, table: str) -> list[dict]:
    with psycopg.connect(url) as con, con.cursor() as cur:
        cur.execute('SELECT * FROM "' + table.replace('"', '""') + '"')
        names = [d.name for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def pg_tables(url: str) -> set[str]:
    with psycopg.connect(url) as con:
        return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").fetchall()}


def as_text(rows: list[dict]) -> list[dict]:
    return [{k: str(v) for k, v in r.items()} for r in rows]


@pytest.mark.local_eval
def test_nodes_in_process_over_a_postgres_base_set(people):
    """The in-process path (:mod:`sqlanon.stats.local`) fetches a PostgreSQL base set's leaf codes
    as it does DuckDB's: nodes evaluated in-process, fewer statements, and the plan of the search
    by SQL on the same server."""
    from sqlanon.stats import local

    assert local.warm_up(wait=True)
    reports = {}
    for cap in (0, None):
        options = {"local_rows": cap} if cap is not None else {}
        reports[cap] = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="people", qi=people["qi"], k=10, max_suppression=0.05, metric="loss", search_options=options, dry_run=True)
    assert reports[0].nodes_local is None
    assert reports[None].nodes_local > 0
    assert reports[None].queries < reports[0].queries
    assert reports[None].transformation == reports[0].transformation
    assert reports[None].metric.value == pytest.approx(reports[0].metric.value, rel=1e-9)
    assert reports[None].suppressed_rows == reports[0].suppressed_rows


def test_csv_output_streams_the_same_rows(people):
    out = str(people["dir"] / "pg.csv")
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["url"], table="people", qi=people["qi"], k=5, output=out, output_delimiter=";")
    rows = read_rows(out, delimiter=";")
    assert len(rows) == 300 and list(rows[0]) == COLUMNS
    assert check_k(rows, ["zip", "age"], 5, 0.0)["ok"]
    assert report.output == out and not [p for p in os.listdir(people["dir"]) if p.endswith(".tmp")]


def test_output_table_and_registry_in_the_database(people):
    args = ["anonymize", "--keep-others", "--keep-column", "id", "--input", people["url"], "--table", "people", "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "5", "--output-table", "people_k5", "--json", "-q"]
    res = runner.invoke(sqlanon.cli.app.app, args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["output"] == "table people_k5"
    rows = as_text(pg_rows(people["url"], "people_k5"))
    assert len(rows) == 300 and check_k(rows, ["zip", "age"], 5, 0.0)["ok"]
    assert pg_tables(people["url"]) == {"people", "people_k5", "sqlanon_releases"}
    again = runner.invoke(sqlanon.cli.app.app, args)
    assert again.exit_code == 2 and "already exists" in again.output
    listed = runner.invoke(sqlanon.cli.app.app, ["releases", "--database", people["url"], "--json"])
    assert listed.exit_code == 0, listed.output
    assert [r["target"] for r in json.loads(listed.stdout)] == ["table people_k5"]
    checked = runner.invoke(sqlanon.cli.app.app, ["check", "--input", people["url"], "--table", "people_k5", "--qi", "zip", "--qi", "age", "--k", "5", "--json"])
    assert checked.exit_code == 0, checked.output
    measured = json.loads(checked.stdout.strip().splitlines()[-1])
    assert measured["rows"] == 300 and measured["k"] >= 5


def test_in_place_is_one_transaction(people):
    before = sorted(pg_rows(people["url"], "people"), key=lambda r: r["id"])
    with pytest.raises(SqlanonError, match="simulated failure"):
        sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["url"], table="people", qi=people["qi"], k=5, in_place=True, _fail_after_write=True)
    assert sorted(pg_rows(people["url"], "people"), key=lambda r: r["id"]) == before
    assert pg_tables(people["url"]) == {"people"}  # no half-written table, no registry
    # the process dies with the transaction open: the server rolls it back
    env = dict(os.environ, SQLANON_TEST_CRASH="in-transaction")
    proc = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", "--keep-others", "--keep-column", "id", "--input", people["url"], "--table", "people", "--qi", "zip=mask", "--k", "5", "--in-place", "-q"], env=env, capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert sorted(pg_rows(people["url"], "people"), key=lambda r: r["id"]) == before
    assert pg_tables(people["url"]) == {"people"}
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["url"], table="people", qi=people["qi"], k=5, in_place=True)
    after = as_text(pg_rows(people["url"], "people"))
    assert sorted(int(r["id"]) for r in after) == list(range(300))
    assert check_k(after, ["zip", "age"], 5, 0.0)["ok"] and report.release_id == 1
    assert pg_tables(people["url"]) == {"people", "sqlanon_releases"}


def test_bottom_up_same_as_duckdb(people):
    opts = dict(qi={"zip": "mask", "age": "bands:5,10,20", "disease": "flat"}, k=6, search="bottom-up", class_column="buys")
    duck = sqlanon.run.api.anonymize(keep_others=True, input=people["csv"], dry_run=True, **opts)
    pg = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="people", dry_run=True, **opts)
    assert pg.transformation == duck.transformation and pg.extra['steps'] == duck.extra['steps']


def test_planners_with_weights_and_level_bounds_same_as_duckdb(people):
    """Bottom-up (min-level start through a lookup that folds to a constant for disease) and the
    genetic search with weights and level bounds: the same cut as DuckDB, and the PostgreSQL release
    keeps every value within its levels and is k-anonymous."""
    qi = {"zip": "mask", "age": "bands:5,10,20", "disease": "flat"}
    keys = dict(min_level={"zip": 1, "age": 1, "disease": 1}, max_level={"age": 2}, weights={"zip": 3})
    for search, extra in (("bottom-up", dict(class_column="buys")), ("genetic", dict(metric="lm", search_options={"iterations": 100, "population": 20, "seed": 4}))):
        opts = dict(qi=qi, k=6, max_suppression=0.02, search=search, **keys, **extra)
        duck = sqlanon.run.api.anonymize(keep_others=True, input=people["csv"], dry_run=True, **opts)
        out = people["dir"] / f"{search}.csv"
        pg = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["url"], table="people", output=str(out), **opts)
        assert pg.transformation == duck.transformation and pg.suppressed_rows == duck.suppressed_rows, search
        released = as_text(read_rows(str(out)))
        assert check_k(released, ["zip", "age", "disease"], 6, 0.02)["ok"], search
        original = {str(r[0]): r for r in people["rows"]}
        for r in released:
            if all(r[q] == "*" for q in qi):
                continue
            age = original[r["id"]][2]
            assert r["age"] in (f"[{age // 5 * 5}, {age // 5 * 5 + 5}[", f"[{age // 10 * 10}, {age // 10 * 10 + 10}["), (search, age, r["age"])
            assert r["zip"].endswith("*") and r["disease"] == "*", (search, r)


def test_bad_input_on_postgres(people):
    base = ["anonymize", "--keep-others", "--keep-column", "id", "--qi", "zip=mask", "--k", "5", "--dry-run", "-q"]
    res = runner.invoke(sqlanon.cli.app.app, base + ["--input", people["url"], "--table", "nope"])
    assert res.exit_code == 2 and "table 'nope' not found" in res.output
    # (an unknown QI column is named on every engine: tests/engines/test_bad_input_engines.py)
    res = runner.invoke(sqlanon.cli.app.app, base + ["--input", people["url"]])
    assert res.exit_code == 2 and "--table is required" in res.output
    # a wrong database, and a password that must not be echoed
    head, _, query = people["url"].partition("?")
    secret = head.replace("postgres:@", "postgres:s3cret@").rsplit("/", 1)[0] + "/no_such_db" + (f"?{query}" if query else "")
    res = runner.invoke(sqlanon.cli.app.app, base + ["--input", secret, "--table", "people"])
    assert res.exit_code == 2 and "cannot connect" in res.output and "no_such_db" in res.output  # the URL names no database: the input is missing (exit 2, like a missing file)
    assert "s3cret" not in res.output
    # a password that works (the test server trusts local connections): not in the registry either
    with_password = head.replace("postgres:@", "postgres:s3cret@") + (f"?{query}" if query else "")
    assert "s3cret" in with_password
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--input", with_password, "--table", "people", "--qi", "zip=mask", "--k", "5", "--output-table", "pw", "--json", "-q"])
    assert res.exit_code == 0 and "s3cret" not in res.output, res.output
    with psycopg.connect(people["url"]) as con:
        stored = con.execute("SELECT * FROM sqlanon_releases").fetchall()
        assert stored and not any("s3cret" in str(row) for row in stored)
        con.execute("DROP TABLE pw")
        con.execute("DROP TABLE sqlanon_releases")
        con.commit()
    # NULL in a quasi-identifier: the same one-line error as on DuckDB, nothing written
    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute("UPDATE people SET zip = NULL WHERE id = 3")
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--input", people["url"], "--table", "people", "--qi", "zip=mask", "--nulls", "refuse", "--k", "5", "--output-table", "o", "-q"])
    assert res.exit_code == 1 and "'zip' (1 row) has NULL values (nulls: refuse)" in res.output, res.output
    assert pg_tables(people["url"]) == {"people"}


@pytest.mark.parametrize("metric,extra", [("lm", {}), ("cm", {}), (None, {"objective": "regression", "regression_target": "id", "dispersion": "mad"}),
                                          (None, {"objective": "weighted", "weights": "cm:buys=0.7,regression:id=0.2,lm=0.1"})])
def test_genetic_same_as_duckdb(people, metric, extra):
    """The GA with a seed on both engines: every fitness value is the same, so the whole run is
    (same cut, LM, CM, suppressed rows, evaluations); the PostgreSQL release passes the re-check."""
    opts = dict(qi={"zip": "mask", "age": "numeric", "disease": "flat"}, k=5, search="genetic", metric=metric, class_column="buys",
                search_options={"iterations": 150, "population": 20, "seed": 4, "numeric": ["age"], **extra})
    duck = sqlanon.run.api.anonymize(keep_others=True, input=people["csv"], dry_run=True, **opts)
    out = str(people["dir"] / "ga.parquet")
    pg = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["url"], table="people", output=out, **opts)
    for key in ("transformation", "suppressed_rows", "evaluations"):
        assert pg.to_dict()[key] == duck.to_dict()[key], key
    assert pg.extra['lm'] == pytest.approx(duck.extra['lm']) and pg.extra['cm'] == pytest.approx(duck.extra['cm'])
    assert check_k(as_text(read_rows(out)), ["zip", "age", "disease"], 5, 1.0)["ok"]


def test_top_down_with_a_previous_release_in_the_database(people, tmp_path):
    """Wang & Fung's Example 1 with T1 and T2 as tables of the database, the previous release
    named as a table and as a registry id: the same cut as on DuckDB, and (X,Y)-anonymity holds on
    the materialized join of the released tables."""
    t1 = [[1, "Alice", "Banker", "c1"], [2, "Alice", "Banker", "c1"], [3, "Bob", "Clerk", "c2"], [4, "Bob", "Driver", "c3"], [5, "Cathy", "Engineer", "c4"]]
    t2 = [[1, "Banker", "Cancer"], [2, "Banker", "Cancer"], [3, "Clerk", "HIV"], [4, "Driver", "Cancer"], [5, "Engineer", "HIV"]]
    (tmp_path / "t1.csv").write_text("K1,Name,Job,Class\n" + "\n".join(",".join(map(str, r)) for r in t1) + "\n")
    (tmp_path / "t2.csv").write_text("K2,Job,Disease\n" + "\n".join(",".join(map(str, r)) for r in t2) + "\n")
    job = tmp_path / "job.csv"
    job.write_text("Banker,White-collar,*\nClerk,White-collar,*\nDriver,Blue-collar,*\nEngineer,Blue-collar,*\n")
    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute("CREATE TABLE t1 (\"K1\" INTEGER, \"Name\" TEXT, \"Job\" TEXT, \"Class\" TEXT)")
        con.execute("CREATE TABLE t2 (\"K2\" INTEGER, \"Job\" TEXT, \"Disease\" TEXT)")
        for name, rows in (("t1", t1), ("t2", t2)):
            with con.cursor().copy("COPY " + name + " FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
    qi = {"Name": "flat", "Job": str(job)}
    opts = dict(search="top-down", k=2, class_column="Class")
    xy = {"x": ["Name", "Job", "Disease"], "y": ["K1", "K2"]}
    duck = sqlanon.run.api.anonymize(keep_others=True, input=str(tmp_path / "t1.csv"), qi=qi, dry_run=True, search_options=dict(xy, previous=[str(tmp_path / "t2.csv")]), **opts)
    pg = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="t1", qi=qi, output_table="t1_released", search_options=dict(xy, previous=["t2"]), **opts)
    assert pg.transformation == duck.transformation == {"Name": ["*"], "Job": ["White-collar", "Blue-collar"]}
    released = pg_rows(people["url"], "t1_released")
    parent = {"Banker": "White-collar", "Clerk": "White-collar", "Driver": "Blue-collar", "Engineer": "Blue-collar"}
    links: dict = {}
    for r in released:  # the join on Job (consistency: the released value is the job or its parent)
        for k2, job2, disease in t2:
            if r["Job"] in (job2, parent[job2], "*"):
                links.setdefault((r["Name"], r["Job"], job2, disease), set()).add((r["K1"], k2))
    assert links and min(len(v) for v in links.values()) >= 2
    # T2 itself released through sqlanon (k = 1: unchanged), then named by its registry id
    t2_release = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="t2", qi={"Job": str(job)}, k=1, output_table="t2_released")
    assert t2_release.transformation == {"Job": 0}
    by_id = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="t1", qi=qi, dry_run=True, search_options=dict(xy, previous=[str(t2_release.release_id)]), **opts)
    assert by_id.transformation == pg.transformation


def test_generate_same_code_table_and_rows_as_duckdb(people):
    """KRIMP and the generator on a PostgreSQL table: the same code table, and with a seed the
    same generated rows as on DuckDB (written client-side as CSV)."""
    outs = {}
    for name, flags in (("duck", ["--input", people["csv"]]), ("pg", ["--input", people["url"], "--table", "people"])):
        out = str(people["dir"] / f"gen_{name}.csv")
        res = runner.invoke(sqlanon.cli.app.app, ["generate", *flags, "--columns", "zip,disease,buys", "--min-sup", "5", "--seed", "3", "--output", out, "--json", "-q"])
        assert res.exit_code == 0, res.output
        outs[name] = (json.loads(res.stdout.strip().splitlines()[-1]), sorted(tuple(r.values()) for r in read_rows(out)))
    (duck, duck_rows), (pg, pg_rows_) = outs["duck"], outs["pg"]
    assert pg["code_table_size"] == duck["code_table_size"] and pg["total_bits"] == pytest.approx(duck["total_bits"])
    assert pg_rows_ == duck_rows and len(pg_rows_) == 300


def test_weird_identifiers_and_schema_qualified_table(people):
    """A column named with a quote, a space and SQL in it, in a table with a quote and capitals in
    its name inside its own schema; the release goes in place (one transaction)."""
    col = 'zip "code"; DROP TABLE t; --'
    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute('CREATE SCHEMA s')
        con.execute('CREATE TABLE s."We""ird" ("zip ""code""; DROP TABLE t; --" TEXT, v INTEGER)')
        con.execute('INSERT INTO s."We""ird" VALUES (\'12345\', 1), (\'12346\', 2), (\'12355\', 3), (\'12356\', 4)')
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--input", people["url"], "--table", 's.We"ird', "--qi", f"{col}=mask", "--k", "2", "--output-table", "out table", "-q"])
    assert res.exit_code == 0, res.output
    with psycopg.connect(people["url"]) as con:
        rows = con.execute('SELECT "zip ""code""; DROP TABLE t; --", v FROM "out table" ORDER BY v').fetchall()
        assert rows == [("1234*", 1), ("1234*", 2), ("1235*", 3), ("1235*", 4)]
        assert con.execute('SELECT COUNT(*) FROM s."We""ird"').fetchone()[0] == 4
    sql = runner.invoke(sqlanon.cli.app.app, ["sql", "--keep-others", "--input", people["url"], "--table", 's.We"ird', "--qi", f"{col}=mask", "--k", "2", "--dialect", "postgres"])
    assert sql.exit_code == 0, sql.output
    assert '"zip ""code""; DROP TABLE t; --"' in sql.stdout and '"s"."We""ird"' in sql.stdout


def test_borrowed_psycopg_connection_joins_the_callers_transaction(people):
    """``anonymize(keep_others=True, connection=<psycopg connection>)``: the connection stays open, sqlanon's temp
    tables are gone afterwards, a failing call leaves the caller's transaction usable, and writes
    made inside the caller's open transaction are the caller's to commit or roll back."""
    con = psycopg.connect(people["url"])  # autocommit off: the caller controls transactions
    try:
        con.execute("SELECT 1")  # the caller's transaction is open
        with pytest.raises(SqlanonError, match="table 'nope' not found"):
            sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="nope", qi=people["qi"], k=5, output_table="x")
        report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="people", qi=people["qi"], k=5, output_table="people_k5")
        assert report.output == "table people_k5"
        rows = con.execute("SELECT COUNT(*) FROM people_k5").fetchone()[0]
        assert rows == 300  # visible inside the caller's transaction
        temps = con.execute("SELECT COUNT(*) FROM pg_class WHERE relname LIKE 'sqlanon%' AND relpersistence = 't'").fetchone()[0]
        assert temps == 0
        con.rollback()
        assert "people_k5" not in pg_tables(people["url"])  # rolled back with the caller's transaction
        sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], connection=con, table="people", qi=people["qi"], k=5, output_table="people_k5")
        con.commit()
        assert {"people_k5", "sqlanon_releases"} <= pg_tables(people["url"])
        assert check_k(as_text(pg_rows(people["url"], "people_k5")), ["zip", "age"], 5, 0.0)["ok"]
        assert not con.closed
    finally:
        con.close()


def test_policy_file_with_a_postgres_url(people, tmp_path):
    """A policy's paths are relative to it, but a URL stays a URL."""
    import yaml

    policy = tmp_path / "sub" / "policy.yaml"
    policy.parent.mkdir()
    policy.write_text(yaml.safe_dump({"input": people["url"], "table": "people", "qi": people["qi"], "k": 5, "output": "out/r.csv"}))
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--policy", str(policy), "--json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout.strip().splitlines()[-1])["output"] == str(tmp_path / "sub" / "out" / "r.csv")
    assert check_k(read_rows(str(tmp_path / "sub" / "out" / "r.csv")), ["zip", "age"], 5, 0.0)["ok"]


def test_in_place_refuses_a_table_a_view_depends_on(people):
    """A table with a dependent view (or a foreign key of another table) is refused before the
    search, and the line names the dependent objects (it named only the table, after the search).
    Table and view are as they were."""
    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute("CREATE VIEW people_view AS SELECT zip FROM people")
        con.execute('CREATE SCHEMA "Other"')
        con.execute('CREATE VIEW "Other"."Second View" AS SELECT zip FROM people_view')  # depends on the view only
        con.execute("CREATE VIEW people_ages AS SELECT age FROM people")
    before = sorted(pg_rows(people["url"], "people"), key=lambda r: r["id"])
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--input", people["url"], "--table", "people", "--qi", "zip=mask", "--k", "5", "--in-place"])
    assert res.exit_code == 2, res.output
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: --in-place recreates table 'people', and people_ages, people_view depend on it (a view or a foreign key): drop them first, or write the release with --output-table"], res.output
    assert "base frequency set" not in res.stderr
    assert sorted(pg_rows(people["url"], "people"), key=lambda r: r["id"]) == before
    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute("DROP VIEW people_ages")
        con.execute("DROP VIEW \"Other\".\"Second View\"")
        con.execute("DROP VIEW people_view")
        con.execute("ALTER TABLE people ADD PRIMARY KEY (id)")
        con.execute("CREATE TABLE visits (person INTEGER REFERENCES people (id))")
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--input", people["url"], "--table", "people", "--qi", "zip=mask", "--k", "5", "--in-place", "-q"])
    assert res.exit_code == 2 and "and visits depends on it" in res.stderr, res.output


def test_a_drop_refused_by_dependents_names_them(people):
    """Should a view appear after the check, the DROP's error names it (the server's DETAIL)."""
    from sqlanon.engine import connect
    from sqlanon.errors import EngineError
    from sqlanon.expr.atoms import drop_table, table_ref

    with psycopg.connect(people["url"], autocommit=True) as con:
        con.execute("CREATE VIEW people_view AS SELECT zip FROM people")
    engine = connect(database=people["url"])
    try:
        with pytest.raises(EngineError, match="view people_view depends on table people; --in-place recreates the table"):
            engine.execute(drop_table(table_ref("people")))
    finally:
        engine.close()
    assert pg_tables(people["url"]) == {"people", "people_view"}


def test_stored_hierarchy_in_postgres(people, tmp_path):
    """``hierarchy import --database URL`` stores the mapping table in PostgreSQL;
    ``--qi zip=table:NAME`` reads it back: the same plan as from the file."""
    tree = tmp_path / "zip.csv"
    tree.write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in ["12345", "12346", "12355", "12356", "13001", "13002"]))
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", str(tree), "--column", "zip", "--database", people["url"]])
    assert r.exit_code == 0 and "table:sqlanon_hierarchy_zip" in r.output, r.output
    assert "sqlanon_hierarchy_zip" in pg_tables(people["url"])
    a = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="people", qi={"zip": str(tree)}, k=20, dry_run=True)
    b = sqlanon.run.api.anonymize(keep_others=True, input=people["url"], table="people", qi={"zip": "table:sqlanon_hierarchy_zip"}, k=20, dry_run=True)
    assert a.transformation == b.transformation and a.metric == b.metric


def test_profiled_policy_runs_on_postgres(server, tmp_path):
    """The policy ``sqlanon profile`` writes for a PostgreSQL table runs as it is (its release a
    new table of that database) and the release passes the independent k re-check (the profile
    itself equals DuckDB's on every engine: tests/engines/test_profile_every_engine.py)."""
    from test_profile import postgres_typed_table, typed_rows

    rows = typed_rows()
    url = postgres_typed_table(server, rows, prefix="t")
    pg_policy = str(tmp_path / "pg" / "policy.yaml")
    pg = sqlanon.profile(url, table="people", write_policy=pg_policy)
    # sex has NULLs: NULL is a value of its own, so the written policy runs as it is, every row in
    report = sqlanon.anonymize(pg_policy)
    released = pg_rows(url, "people_k5")
    assert report.rows == len(rows) and any(r[-1] is None for r in rows) and (tmp_path / "pg" / "people_k5.html").is_file()
    assert set(released[0]) == {"zip", "dob", "diagnosis", "visits", "age", "country", "sex"}
    verdict = check_k(as_text(released), pg["roles"]["qi"], 5, 0.05)
    assert verdict["ok"], verdict["problems"]


def test_check_a_postgres_release_by_its_own_policy(people):
    """A table release in PostgreSQL is recorded in that database's sqlanon_releases: `check` on
    the table reads its QIs, k, budget and models from there (tests/run/test_python_api.py for DuckDB)."""
    release = sqlanon.run.api.anonymize(keep_columns=["id", "buys"], input=people["url"], table="people", qi=people["qi"], k=6, max_suppression=0.05, l=2, sensitive_column="disease", output_table="people_k6")
    got = sqlanon.check(people["url"], table="people_k6")
    assert got["release"]["id"] == release.release_id and got["quasi_identifiers"] == ["zip", "age"]
    assert [(v["model"], v["ok"]) for v in got["verdicts"]] == [("k-anonymity", True), ("suppression", True), ("distinct-l-diversity", True)]
    assert got["suppressed_rows"] == release.suppressed_rows
    assert check_k(as_text(pg_rows(people["url"], "people_k6")), ["zip", "age"], 6, 0.05)["ok"]
    res = CliRunner().invoke(sqlanon.cli.app.app, ["check", "--input", people["url"], "--table", "people_k6", "--k", "50"])
    assert res.exit_code == 3 and "NO" in res.stdout


@pytest.mark.local_eval
def test_the_memory_limit_given_is_the_in_process_budget_and_over_it_nodes_go_by_sql(people, monkeypatch):
    """On PostgreSQL the ``memory_limit`` the user gives bounds what this process fetches: within
    it the base set's nodes go in-process and the report's ``local_route`` names that budget;
    with a budget the set does not fit (faked: one byte) every node goes by SQL on the server and
    the route says so. Both find what DuckDB finds on the same rows."""
    from sqlanon.engine.postgres import PostgresEngine
    from sqlanon.stats import local

    assert local.warm_up(wait=True)
    args = dict(keep_others=True, qi=people["qi"], k=10, max_suppression=0.05, metric="loss", dry_run=True)
    duck = sqlanon.run.api.anonymize(input=people["csv"], **args)
    fits = sqlanon.run.api.anonymize(input=people["url"], table="people", memory_limit="64MB", **args)
    assert fits.local_route.startswith("in-process:") and fits.local_route.endswith("of a 61.0 MiB budget")
    assert fits.nodes_local > 0
    monkeypatch.setattr(PostgresEngine, "client_memory_bytes", lambda self: 1)
    over = sqlanon.run.api.anonymize(input=people["url"], table="people", **args)
    assert over.local_route.startswith("sql:") and "over a 0.0 MiB budget" in over.local_route
    assert over.nodes_local is None and over.nodes_evaluated > 0
    for r in (fits, over):
        assert r.transformation == duck.transformation and r.suppressed_rows == duck.suppressed_rows
        assert r.metric.value == pytest.approx(duck.metric.value, rel=1e-9)


def test_integer_results_come_back_whole_by_the_text_route(server):
    """:meth:`PostgresEngine.fetch_arrow` of integer columns (one row of texts, parsed by Arrow)
    returns what the driver returns row by row: the values, NULLs, types, and no rows at all;
    a text column takes the driver's route."""
    from sqlglot import exp

    from sqlanon.engine.postgres import PostgresEngine

    engine = PostgresEngine(database=server)
    try:
        rows = exp.select("*").from_(exp.values([(1, 2**40), (None, -3), (70000, None)], alias="v", columns=["a", "b"]))
        got = engine.fetch_arrow(rows)
        assert got.column("a").to_pylist() == [1, None, 70000] and got.column("b").to_pylist() == [2**40, -3, None]
        assert [str(t) for t in got.schema.types] == ["int32", "int64"]
        empty = engine.fetch_arrow(exp.select("*").from_(exp.alias_(exp.Subquery(this=rows.copy()), "q", table=True)).where("FALSE"))
        assert empty.num_rows == 0 and empty.column_names == ["a", "b"]
        text = engine.fetch_arrow(exp.select(exp.alias_(exp.Literal.string("x"), "s")))
        assert text.column("s").to_pylist() == ["x"]
    finally:
        engine.close()


def _statements(monkeypatch) -> list[str]:
    """Every statement the PostgreSQL engine runs from now on, as its text."""
    from sqlanon.engine.postgres import PostgresEngine

    seen: list[str] = []
    run = PostgresEngine._run

    def recorded(self, sql, fetch, params=None):
        seen.append(sql)
        return run(self, sql, fetch, params)

    monkeypatch.setattr(PostgresEngine, "_run", recorded)
    return seen


def test_batches_take_one_branch_per_node_on_postgres(people, monkeypatch):
    """All in SQL on PostgreSQL, a batch over a set of ``PostgresDialect.branch_rows`` rows or more
    takes one branch per node (each node its own ``GROUP BY`` of the set by its packed key, the
    ``c0``.. parts), never the joined shape (the node table cross-joined to the code table
    ``w0``), whatever the base set's size; with DuckDB's rule (no ``branch_rows``) this small
    base set's batches are joined. Both find what DuckDB finds."""
    from sqlanon.dialect.postgres import PostgresDialect

    args = dict(keep_others=True, qi=people["qi"], k=10, max_suppression=0.05, metric="loss", dry_run=True, search_options={"local_rows": 0})
    duck = sqlanon.run.api.anonymize(input=people["csv"], **args)
    seen = _statements(monkeypatch)
    shapes = {}
    for rows in (0, None):
        monkeypatch.setattr(PostgresDialect, "branch_rows", rows)
        seen.clear()
        r = sqlanon.run.api.anonymize(input=people["url"], table="people", **args)
        assert r.transformation == duck.transformation and r.suppressed_rows == duck.suppressed_rows
        assert r.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
        shapes[rows] = (sum('"c0" AS (' in s for s in seen), sum('"w0" AS (' in s for s in seen))
    assert shapes[0][0] > 0 and shapes[0][1] == 0
    assert shapes[None][1] > 0  # the control: joined on DuckDB's rule


def test_marginals_from_the_fetched_base_set_on_postgres(people, monkeypatch):
    """The lattice's pair marginals on PostgreSQL come from the base set's codes fetched once
    (``PostgresEngine.marginal_fetch_rows``), never from a ``GROUPING SETS`` statement, even over
    the default's size (here every size: ``marginals.LOCAL_ROWS`` 0); without the engine's figure
    they take the statement. The same plan either way, and DuckDB's."""
    import sqlanon.stats.marginals as marginals
    from sqlanon.engine.postgres import PostgresEngine

    monkeypatch.setattr(marginals, "LOCAL_ROWS", 0)
    # batch=4: the lattice needs more than one round, so the pair marginals are read
    args = dict(keep_others=True, qi=people["qi"], k=10, max_suppression=0.05, metric="loss", dry_run=True, search_options={"local_rows": 0, "batch": 4})
    duck = sqlanon.run.api.anonymize(input=people["csv"], **args)
    seen = _statements(monkeypatch)
    grouping = {}
    for rows in (PostgresEngine.marginal_fetch_rows, None):
        monkeypatch.setattr(PostgresEngine, "marginal_fetch_rows", rows)
        seen.clear()
        r = sqlanon.run.api.anonymize(input=people["url"], table="people", **args)
        assert r.transformation == duck.transformation and r.suppressed_rows == duck.suppressed_rows
        assert r.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
        grouping[rows] = sum("GROUPING SETS" in s.upper() for s in seen)
    assert grouping[None] > 0
    assert grouping[2_000_000] == 0
