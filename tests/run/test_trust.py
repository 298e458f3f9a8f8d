"""Inputs that used to exit 0 and do the wrong thing (issue 10, "Silent wrong results" and
"Misleading errors"): each test here failed on the main of that day."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.cli.app import anonymize as anonymize_command
from sqlanon.cli.flags import policy_from_flags
from sqlanon.errors import ConfigError, HierarchyError

runner = CliRunner()


@pytest.fixture
def people(tmp_path):
    """Six rows; zip masked one digit gives classes of 2, 2 and one odd row (99999) that a
    k=2 release must suppress or generalize away."""
    data = tmp_path / "people.csv"
    data.write_text("name,zip,age,disease\nann,12345,31,flu\nbob,12346,32,flu\ncid,12355,41,cold\ndan,12356,45,flu\neve,99999,33,cold\n")
    return {"dir": tmp_path, "csv": str(data), "out": str(tmp_path / "out.parquet")}


def invoke(args, **kwargs):
    return runner.invoke(sqlanon.cli.app.app, args, **kwargs)


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def released(path):
    return duckdb.sql(f"SELECT * FROM read_parquet('{path}')").fetchall()


# -- a flag given is a flag used ----------------------------------------------------------------


def test_unknown_drop_column_is_an_error_naming_the_columns(people):
    """``--drop-column nmae`` used to be ignored and the direct identifier ``name`` published."""
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--drop-column", "nmae", "--output", people["out"], "-q"])
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: unknown --drop-column 'nmae' in csv:{people['csv']} (did you mean 'name'?); columns are: name, zip, age, disease"
    assert not os.path.exists(people["out"])
    with pytest.raises(ConfigError, match="unknown --drop-column 'nmae'"):
        sqlanon.anonymize(keep_others=True, input=people["csv"], qi={"zip": "mask"}, k=2, max_suppression=0.5, drop_columns=["nmae"], output=people["out"])
    # the right name drops it
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--drop-column", "name", "--output", people["out"], "-q"])
    assert r.exit_code == 0, r.output
    assert "name" not in duckdb.sql(f"SELECT * FROM read_parquet('{people['out']}')").columns


def test_max_suppression_zero_flag_wins_over_the_policy(people, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {people['csv']}\nqi:\n  zip: mask\nk: 2\nmax_suppression: 0.5\n")
    r = invoke(["anonymize", "--keep-others", "--policy", str(policy), "--json", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["suppressed_rows"] == 1  # the policy's budget is used ...
    r = invoke(["anonymize", "--keep-others", "--policy", str(policy), "--max-suppression", "0", "--json", "-q"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["max_suppression"] == 0.0 and report["suppressed_rows"] == 0  # ... unless the flag says 0


def test_zero_valued_flags_are_merged_over_a_policy(tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text("input: x.csv\nqi:\n  zip: mask\nk: 5\nmax_suppression: 0.05\nthreads: 2\nsearch_options:\n  seed: 7\n")
    flags = dict(qi=None, k=None, max_suppression=0.0, threads=None, seed=0, trace=False)
    pol = policy_from_flags(str(policy), flags, anonymize_command)
    assert pol.max_suppression == 0.0 and pol.search_options["seed"] == 0 and pol.threads == 2


def test_k_zero_says_k_must_be_at_least_one(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "0", "--output", people["out"]])
    assert r.exit_code == 2
    assert error_line(r) == "error: k must be at least 1, got 0"
    with pytest.raises(ConfigError, match="k must be at least 1, got -3"):
        sqlanon.anonymize(keep_others=True, input=people["csv"], qi={"zip": "mask"}, k=-3, dry_run=True)


def test_threads_zero_is_refused_not_ignored(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--threads", "0", "--output", people["out"]])
    assert r.exit_code == 2
    assert error_line(r) == "error: threads must be at least 1, got 0"
    assert not os.path.exists(people["out"])


def test_threads_flag_is_used(people, monkeypatch):
    seen = []
    from sqlanon.engine.duckdb import DuckDBEngine

    original = DuckDBEngine.set_option
    monkeypatch.setattr(DuckDBEngine, "set_option", lambda self, key, value: (seen.append((key, value)), original(self, key, value))[1])
    sqlanon.anonymize(keep_others=True, input=people["csv"], qi={"zip": "mask"}, k=1, threads=1, dry_run=True)
    assert ("threads", "1") in seen


def test_check_is_callable_twice(people):
    """``sqlanon.check`` stays the function after ``import sqlanon.run.check`` (the module lives under ``run/``)."""
    first = sqlanon.check(people["csv"], ["zip"], k=1)
    second = sqlanon.check(people["csv"], ["zip"], k=1)
    assert first == second and first["rows"] == 5
    import sqlanon.run.check as module

    assert sqlanon.check(people["csv"], ["zip"])["rows"] == 5
    assert module.check(people["csv"], ["zip"])["rows"] == 5


# -- contradictions that used to release ------------------------------------------------------


def test_hierarchy_with_two_roots_is_refused(people, tmp_path):
    h = tmp_path / "zip.csv"
    h.write_text("12345;1234*;A\n12346;1234*;A\n12355;1235*;B\n12356;1235*;B\n99999;9999*;B\n")
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", f"zip={h}", "--k", "2", "--output", people["out"]])
    assert r.exit_code == 1
    assert error_line(r) == f"error: hierarchy for 'zip' ({h}) has 2 roots ('A', 'B'); its last level must be one value (e.g. '*')"
    assert not os.path.exists(people["out"])
    from sqlanon.hierarchy.model import Hierarchy

    with pytest.raises(HierarchyError, match=r"has 2 roots \('X', 'Y'\)"):
        Hierarchy("v", [["a", "X"], ["b", "Y"]])


def test_duplicate_qi_is_refused(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "zip=flat", "--k", "2", "--output", people["out"]])
    assert r.exit_code == 2
    assert error_line(r) == "error: --qi names column 'zip' twice (zip=mask and zip=flat); give one hierarchy per column"
    assert not os.path.exists(people["out"])


def test_l_zero_is_refused(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--sensitive-column", "disease", "--l", "0", "--output", people["out"]])
    assert r.exit_code == 2
    assert error_line(r) == "error: l must be at least 1, got 0"
    assert not os.path.exists(people["out"])


def test_sensitive_column_that_is_also_a_qi_is_refused(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "disease=flat", "--k", "2", "--sensitive-column", "disease", "--l", "2", "--output", people["out"]])
    assert r.exit_code == 2
    assert "sensitive column 'disease' is also a quasi-identifier" in error_line(r)
    assert not os.path.exists(people["out"])


@pytest.mark.parametrize("value", ["true", "false", "yes"])
def test_policy_k_true_is_not_k_one(people, tmp_path, value):
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {people['csv']}\nqi:\n  zip: mask\nk: {value}\noutput: {people['out']}\n")
    r = invoke(["anonymize", "--keep-others", "--policy", str(policy)])
    assert r.exit_code == 2
    assert error_line(r) == f"error: bad value for 'k' in policy {policy}: {value in ('true', 'yes')!r} is not a int"
    assert not os.path.exists(people["out"])


def test_registry_that_is_not_a_database_is_refused(people):
    reg = os.path.join(people["dir"], "x.csv")
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "1", "--output", people["out"], "--registry", reg])
    assert r.exit_code == 2
    assert error_line(r) == f"error: --registry {reg}: a registry is a DuckDB database file; name it .duckdb"
    assert not os.path.exists(people["out"]) and not os.path.exists(reg)


@pytest.mark.parametrize("name", ["x.json", "x", "x.xlsx"])
def test_output_of_an_unknown_file_type_is_refused(people, name):
    out = os.path.join(people["dir"], name)
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "1", "--output", out])
    assert r.exit_code == 2
    assert "unknown file type" in error_line(r) and "name a .parquet or .csv file" in error_line(r)
    assert not os.path.exists(out)


# -- misleading errors ------------------------------------------------------------------------


def test_hierarchy_csv_with_a_bom(people, tmp_path):
    """Excel writes a UTF-8 BOM; it used to become part of the first leaf ('\\ufeff12345')."""
    h = tmp_path / "zip.csv"
    h.write_bytes("12345;1234*;*\n12346;1234*;*\n12355;1235*;*\n12356;1235*;*\n99999;9999*;*\n".encode("utf-8-sig"))
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", f"zip={h}", "--k", "2", "--max-suppression", "0.5", "--output", people["out"], "-q"])
    assert r.exit_code == 0, r.output
    assert sorted(row[1] for row in released(people["out"])) == ["*", "1234*", "1234*", "1235*", "1235*"]


def test_json_error_is_one_object_on_stdout(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zap=mask", "--k", "2", "--output", people["out"], "--json"])
    assert r.exit_code == 2
    obj = json.loads(r.stdout)
    assert obj == {"error": f"unknown quasi-identifier column 'zap' in csv:{people['csv']} (did you mean 'zip'?); columns are: name, zip, age, disease", "exit_code": 2}
    assert error_line(r) == "error: " + obj["error"]
    r = invoke(["check", "--input", people["csv"], "--qi", "zap", "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["exit_code"] == 2
    r = invoke(["releases", "--database", os.path.join(people["dir"], "none.duckdb"), "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"].startswith("registry database not found")


def test_debug_reraises_with_the_traceback(people, monkeypatch):
    monkeypatch.setenv("SQLANON_DEBUG", "1")
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "0"])
    assert r.exit_code != 0
    assert isinstance(r.exception, ConfigError) and r.exc_info[2] is not None
    monkeypatch.setenv("SQLANON_DEBUG", "0")
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "0"])
    assert r.exit_code == 2 and not isinstance(r.exception, ConfigError)


INTERRUPTIBLE = textwrap.dedent(
    """
    import sys
    from sqlanon.engine.duckdb import DuckDBEngine
    original = DuckDBEngine.write_file

    def slow_write(self, query, path, kind, delimiter=","):
        original(self, query, path, kind, delimiter)  # the file is half there when Ctrl-C comes
        print("writing", file=sys.stderr, flush=True)
        self.execute("SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b")

    DuckDBEngine.write_file = slow_write
    from sqlanon.cli.app import main
    sys.argv = ["sqlanon", *sys.argv[1:]]
    main()
    """
)


def test_ctrl_c_during_the_write(people, tmp_path):
    script = tmp_path / "run.py"
    script.write_text(INTERRUPTIBLE)
    proc = subprocess.Popen(
        [sys.executable, str(script), "anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--output", people["out"], "--threads", "1"],
        stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("writing"):
                break
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:  # never leave the endless statement running
            proc.kill()
            proc.wait()
    err = "".join(lines) + err
    assert proc.returncode == 130, err
    assert "error: interrupted; nothing was written" in err.splitlines()
    assert "internal error" not in err
    assert not os.path.exists(people["out"])
    assert [f for f in os.listdir(people["dir"]) if f.endswith(".tmp") or f.startswith("sqlanon_releases")] == []


def test_memory_limit_too_small_says_so(people, tmp_path):
    """It used to say "table not found" (the existence probe ran out of memory)."""
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.execute(f"CREATE TABLE patients AS SELECT * FROM read_csv('{people['csv']}', all_varchar=true)")
    con.close()
    for args in (["--input", people["csv"]], ["--input", db, "--table", "patients"]):
        r = invoke(["anonymize", "--keep-others", *args, "--qi", "zip=mask", "--k", "2", "--memory-limit", "1KB", "--output", people["out"]])
        assert r.exit_code == 1
        assert error_line(r).startswith("error: out of memory under --memory-limit 1KB; give a larger --memory-limit")
        assert not os.path.exists(people["out"])


def test_releases_of_a_file_that_is_not_a_database(people):
    r = invoke(["releases", "--database", people["csv"]])
    assert r.exit_code == 2
    assert error_line(r) == f"error: {people['csv']} is not a DuckDB database file"


@pytest.mark.parametrize(
    "text, line, found",
    [
        ("a,b\n1,2\n3,4,5\n6,7\n", 3, 3),  # read as ONE column by DuckDB's sniffer
        ("a,b\n1,2\n3\n6,7\n", 3, 1),
        ("a,b\n1,2\n6,7\n8,9\n10,11,12\n", 5, 3),  # read as NO rows by DuckDB's sniffer
    ],
)
def test_ragged_csv_names_the_line(tmp_path, text, line, found):
    data = tmp_path / "ragged.csv"
    data.write_text(text)
    out = tmp_path / "out.parquet"
    r = invoke(["anonymize", "--keep-others", "--input", str(data), "--qi", "a=mask", "--k", "1", "--output", str(out)])
    assert r.exit_code == 1
    assert error_line(r) == f"error: {data}: line {line} has {found} field(s), the header has 2 (a ragged CSV; check the delimiter and quoting)"
    assert not os.path.exists(out)
    r = invoke(["check", "--input", str(data), "--qi", "a"])
    assert r.exit_code == 1 and f"line {line} has {found} field(s)" in error_line(r)


def test_csv_header_problems(tmp_path):
    for text, message in (
        ("", "has no header line"),
        ("a,a\n1,2\n", "the header names column 'a' twice"),
        ("a,,c\n1,2,3\n", "column 2 of the header has no name"),
    ):
        data = tmp_path / "h.csv"
        data.write_text(text)
        r = invoke(["anonymize", "--keep-others", "--input", str(data), "--qi", "a=mask", "--k", "1", "--dry-run"])
        assert r.exit_code == 2 and message in error_line(r), r.output


# -- locks and leftovers ----------------------------------------------------------------------


@pytest.fixture
def warehouse(people, tmp_path):
    db = str(tmp_path / "warehouse.duckdb")
    con = duckdb.connect(db)
    con.execute(f"CREATE TABLE patients AS SELECT * FROM read_csv('{people['csv']}', all_varchar=true)")
    con.close()
    return db


HOLD_READ = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    con.execute("SELECT COUNT(*) FROM patients").fetchall()
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    """
)


def test_inputs_only_read_are_opened_read_only_beside_another_reader(people, warehouse, tmp_path):
    """Another process reads the warehouse (DuckDB: a shared lock); check, sql, --dry-run and
    --output to a file still work, because they open it read-only. A write needs the file."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_READ, warehouse], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        common = ["--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "2"]
        out = str(tmp_path / "rel.parquet")
        for args in (
            ["check", "--input", warehouse, "--table", "patients", "--qi", "zip"],
            ["sql", "--keep-others", *common],
            ["anonymize", "--keep-others", *common, "--max-suppression", "0.5", "--dry-run", "-q"],
            ["anonymize", "--keep-others", *common, "--max-suppression", "0.5", "--output", out, "-q"],
        ):
            r = invoke(args)
            assert r.exit_code == 0, (args, r.output)
        assert len(released(out)) == 5
        r = invoke(["anonymize", "--keep-others", *common, "--max-suppression", "0.5", "--output-table", "rel", "-q"])
        assert r.exit_code == 1 and "lock" in error_line(r).lower()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


def test_only_read_inputs_open_read_only(people, warehouse, tmp_path, monkeypatch):
    """On a read-only file (root ignores file modes, so the engine's flag is what is checked)."""
    import sqlanon.engine.duckdb as engine_mod

    modes = []
    original = engine_mod.duckdb.connect
    monkeypatch.setattr(engine_mod.duckdb, "connect", lambda database=":memory:", read_only=False, **kw: (modes.append((database, read_only)), original(database, read_only=read_only, **kw))[1])
    sqlanon.anonymize(keep_others=True, input=warehouse, table="patients", qi={"zip": "mask"}, k=2, max_suppression=0.5, dry_run=True)
    sqlanon.anonymize(keep_others=True, input=warehouse, table="patients", qi={"zip": "mask"}, k=2, max_suppression=0.5, output=str(tmp_path / "r.parquet"))
    sqlanon.check(warehouse, ["zip"], table="patients")
    sqlanon.run.api.plan_sql(keep_others=True, input=warehouse, table="patients", qi={"zip": "mask"}, k=2)
    # check also looks the table up in the database's registry (read-only): one more open
    assert [m for m in modes if m[0] == warehouse] == [(warehouse, True)] * 5
    modes.clear()
    sqlanon.anonymize(keep_others=True, input=warehouse, table="patients", qi={"zip": "mask"}, k=2, max_suppression=0.5, output_table="rel")
    assert [m for m in modes if m[0] == warehouse] == [(warehouse, False)]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may open a file without write permission for writing")
def test_read_only_file(people, warehouse, tmp_path):
    os.chmod(warehouse, 0o444)
    r = invoke(["anonymize", "--keep-others", "--input", warehouse, "--table", "patients", "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--output", str(tmp_path / "r.parquet"), "-q"])
    assert r.exit_code == 0, r.output


def test_stale_temp_files_of_a_killed_run_are_removed(people):
    """A killed run leaves ``.NAME.<pid>-<hex>.tmp``; the next run to that target removes it (and
    says so), but not a file of a live writer, nor other people's files."""
    folder = people["dir"]
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = os.path.join(folder, f".out.parquet.{dead}-0123abcd.tmp")
    live = os.path.join(folder, f".out.parquet.{os.getppid()}-89abcdef.tmp")
    old_style = os.path.join(folder, ".out.parquet.fedcba98.tmp")
    other = os.path.join(folder, ".other.parquet.1-0123abcd.tmp")
    mine = os.path.join(folder, "notes.tmp")
    for path in (stale, live, old_style, other, mine):
        with open(path, "wb") as fh:
            fh.write(b"x" * 1000)
    os.utime(old_style, (time.time() - 3600, time.time() - 3600))
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--output", people["out"]])
    assert r.exit_code == 0, r.output
    assert f"sqlanon: removed .out.parquet.{dead}-0123abcd.tmp (1,000 bytes), left beside out.parquet by an interrupted run" in r.stderr
    assert not os.path.exists(stale) and not os.path.exists(old_style)
    assert all(os.path.exists(p) for p in (live, other, mine))
    assert [f for f in os.listdir(folder) if f.startswith(".out.parquet")] == [os.path.basename(live)]


def test_seed_zero_reaches_the_genetic_search(people, monkeypatch):
    """``--seed 0`` used to mean "no seed": the generator must be created with 0, and two runs
    with seed 0 give the same release."""
    import numpy as np

    import sqlanon.search.genetic.planner as genetic

    seen = []
    real = np.random.default_rng

    def spy(seed=None, *a, **kw):
        seen.append(seed)
        return real(seed, *a, **kw)

    monkeypatch.setattr(genetic.np.random, "default_rng", spy)
    args = ["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10", "--k", "2",
            "--max-suppression", "0.5", "--search", "genetic", "--metric", "lm", "--seed", "0",
            "--option", "iterations=5", "--dry-run", "--json", "-q"]
    first = invoke(args)
    assert first.exit_code == 0, first.output
    assert seen and all(s == 0 for s in seen), seen
    report = json.loads(first.stdout)
    assert report["seed"] == 0
    second = json.loads(invoke(args).stdout)
    assert second["transformation"] == report["transformation"] and second["chromosome"] == report["chromosome"]


def test_engine_flag_is_never_silently_replaced(people):
    """``--engine postgres`` on a CSV ran on DuckDB and exited 0."""
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--engine", "postgres", "--output", people["out"]])
    assert r.exit_code == 2
    assert error_line(r).startswith("error: --engine postgres but the input is read by duckdb")
    assert not os.path.exists(people["out"])
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--engine", "duckdb", "--output", people["out"], "-q"])
    assert r.exit_code == 0, r.output


def test_overwrite_without_a_target_is_refused(people):
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--overwrite"])
    assert r.exit_code == 2
    assert "--overwrite replaces an existing --output or --output-table" in error_line(r)


def test_dry_run_says_what_it_would_write_and_writes_no_release(people):
    reg = people["dir"] / "reg.duckdb"
    report = people["dir"] / "r.html"
    args = ["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--dry-run",
            "--output", people["out"], "--registry", str(reg), "--report", str(report)]
    r = invoke(args)
    assert r.exit_code == 0, r.output
    assert f"output         (dry run: nothing written; would write {people['out']})" in r.stdout
    assert not os.path.exists(people["out"]) and not reg.exists()
    assert report.exists() and "<svg" in report.read_text()  # the report is the preview
    data = json.loads(invoke(args + ["--json", "-q", "--overwrite"]).stdout)  # the first run's report is replaced
    assert data["output"] is None and data["dry_run"]["would_write"] == people["out"]


@pytest.mark.parametrize("extra, fragment", [
    (["--max-suppression", "0.2"], "--max-suppression needs --k"),
    (["--t-distance", "ordered"], "--t-distance needs --t"),
    (["--against", "SELF", "--k", "2"], "--k not used by --against"),
    (["--transformation", '{"zip": 1, "age": 0}', "--l", "2"], "--l not used by --transformation"),
    (["--numeric", "age"], "--numeric not used by this check"),
    (["--min-sup", "2"], "--min-sup not used by this check"),
])
def test_check_refuses_flags_it_would_not_read(people, extra, fragment):
    """``check --max-suppression 0.2`` without --k, ``--k`` with --against, ... were ignored."""
    extra = [people["csv"] if a == "SELF" else a for a in extra]
    r = invoke(["check", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10", *extra])
    assert r.exit_code == 2, r.output
    assert fragment in error_line(r)


@pytest.mark.parametrize("extra, fragment", [
    (["--overwrite"], "--overwrite replaces an existing --output or --output-table; there is none here"),
    (["--rows", "0"], "--rows must be at least 1, got 0"),
])
def test_generate_refuses_unused_or_empty_requests(people, extra, fragment):
    r = invoke(["generate", "--input", people["csv"], "--seed", "1", "-q", *extra])
    assert r.exit_code == 2, r.output
    assert error_line(r) == "error: " + fragment


def test_keys_this_run_would_not_read_are_refused(people, tmp_path):
    """``--class-column`` with the precision metric, ``--database`` without ``--output-table`` and
    ``output_delimiter`` with a Parquet output were accepted and ignored."""
    base = ["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--output", people["out"]]
    r = invoke(base + ["--class-column", "disease"])
    assert r.exit_code == 2 and "would ignore it" in error_line(r)
    r = invoke(base + ["--database", str(tmp_path / "x.duckdb")])
    assert r.exit_code == 2 and "without --output-table it is not used" in error_line(r)
    assert not (tmp_path / "x.duckdb").exists()
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {people['csv']}\nqi:\n  zip: mask\nk: 2\nmax_suppression: 0.5\noutput: {people['out']}\noutput_delimiter: ';'\n")
    r = invoke(["anonymize", "--keep-others", "--policy", str(policy)])
    assert r.exit_code == 2 and "applies to a CSV --output only" in error_line(r)
    assert not os.path.exists(people["out"])
    # the same keys where they are read
    r = invoke(base + ["--class-column", "disease", "--metric", "cm", "-q"])
    assert r.exit_code == 0, r.output


def test_report_must_be_an_html_file(people, tmp_path):
    """``--report x.txt`` (or a folder) wrote an HTML page under that name."""
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--k", "2", "--max-suppression", "0.5", "--output", people["out"], "--report", str(tmp_path / "r.txt")])
    assert r.exit_code == 2 and error_line(r) == f"error: --report {tmp_path / 'r.txt'}: the report is an HTML page; name it .html"
    assert not os.path.exists(people["out"]) and not (tmp_path / "r.txt").exists()
    r = invoke(["generate", "--input", people["csv"], "--seed", "1", "--report", str(tmp_path)])
    assert r.exit_code == 2 and "is a directory" in error_line(r)
    with pytest.raises(ConfigError, match="name it .html"):
        sqlanon.anonymize(keep_others=True, input=people["csv"], qi={"zip": "mask"}, k=2, max_suppression=0.5, report=str(tmp_path / "r.json"), dry_run=True)


def test_numeric_and_a_hierarchy_for_one_column_is_refused(people):
    """``--qi age=bands:5,10 --numeric age``: the hierarchy silently won."""
    r = invoke(["anonymize", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10", "--k", "2", "--max-suppression", "0.5", "--numeric", "age", "--dry-run"])
    assert r.exit_code == 2
    assert error_line(r) == "error: 'age' has a hierarchy (--qi age=bands:5,10) and is declared --numeric; give one of the two"
