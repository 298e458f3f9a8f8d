"""Both or neither (issue 24): a release and its registry row are written together or not at
all; the registry, the targets and every file sqlanon writes are checked before the search; a
release never replaces its input; SIGTERM is handled like Ctrl-C. Each test failed on the main
of that day."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.errors import ConfigError

runner = CliRunner()

CSV = "zip,age,disease\n12345,31,flu\n12346,32,flu\n12355,41,cold\n12356,45,flu\n12345,33,cold\n12346,36,cold\n"


@pytest.fixture
def data(tmp_path):
    csv = tmp_path / "people.csv"
    csv.write_text(CSV)
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE people AS SELECT * FROM read_csv('{csv}', all_varchar=true)")
    con.close()
    return {"dir": tmp_path, "csv": str(csv), "db": str(db), "out": str(tmp_path / "out.parquet")}


def invoke(args):
    return runner.invoke(sqlanon.cli.app.app, args)


def error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def leftovers(folder) -> list[str]:
    return sorted(f for f in os.listdir(folder) if f.endswith(".tmp") or f == "out.parquet")


def registry_rows(path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0]
    finally:
        con.close()


# -- the registry of a file release is checked before the search --------------------------------


def _truncated(path, data):
    path.write_bytes(b"DUCK" + os.urandom(200))


def _wrong_schema(path, data):
    duckdb.connect(str(path)).execute("CREATE TABLE sqlanon_releases (a INTEGER)").close()


def _a_view(path, data):
    duckdb.connect(str(path)).execute("CREATE VIEW sqlanon_releases AS SELECT 1 AS id").close()


REGISTRIES = [
    ("truncated file", _truncated, "--registry {reg} is not a DuckDB database file"),
    ("wrong schema", _wrong_schema, "registry {reg}: table sqlanon_releases is not a sqlanon registry (no column id, created_at"),
    ("a view", _a_view, "registry {reg}: sqlanon_releases is a view, not a sqlanon registry table"),
]


@pytest.mark.parametrize("make, fragment", [r[1:] for r in REGISTRIES], ids=[r[0] for r in REGISTRIES])
def test_bad_registry_is_refused_before_the_search_and_a_retry_works(data, make, fragment):
    """The release used to be left on disk with exit 1 (the registry failed after the write),
    and the retry then failed with "output exists"."""
    reg = data["dir"] / "reg.duckdb"
    make(reg, data)
    args = ["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "--registry", str(reg)]
    r = invoke(args)
    assert r.exit_code == 2, r.output
    assert fragment.format(reg=reg) in error_line(r)
    assert "base frequency set" not in r.stderr  # refused before the scan and the search
    assert leftovers(data["dir"]) == []
    reg.unlink()  # fixed: the same command now works
    r = invoke(args + ["-q"])
    assert r.exit_code == 0, r.output
    assert os.path.exists(data["out"]) and registry_rows(reg) == 1


def test_registry_that_is_the_input_database(data):
    args = ["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--output", data["out"]]
    for same in (data["db"], os.path.relpath(data["db"])):
        r = invoke(args + ["--registry", same])
        assert r.exit_code == 2, r.output
        assert error_line(r) == f"error: --registry {same} is the input database; name another file (a table release, --output-table or --in-place, is recorded in the input database)"
        assert leftovers(data["dir"]) == []
    r = invoke(args + ["--registry", str(data["dir"] / "other.duckdb"), "-q"])
    assert r.exit_code == 0, r.output
    assert registry_rows(data["dir"] / "other.duckdb") == 1


def test_registry_row_that_cannot_be_written_leaves_no_release(data, monkeypatch):
    """A registry that fails when the row is written (after the checks) leaves no file."""
    from sqlanon.release import registry

    def broken(engine, entry):
        raise ConfigError("the registry broke")

    monkeypatch.setattr(registry, "record", broken)
    with pytest.raises(ConfigError, match="the registry broke"):
        sqlanon.anonymize(keep_others=True, input=data["csv"], qi={"zip": "mask"}, k=2, output=data["out"])
    assert leftovers(data["dir"]) == [] and not os.path.exists(data["dir"] / "sqlanon_releases.duckdb")
    monkeypatch.undo()
    sqlanon.anonymize(keep_others=True, input=data["csv"], qi={"zip": "mask"}, k=2, output=data["out"])
    assert os.path.exists(data["out"]) and registry_rows(data["dir"] / "sqlanon_releases.duckdb") == 1


def test_table_release_with_a_registry_view_is_refused_before_the_search(data):
    """The registry of a table release is the database's sqlanon_releases: a view there used to
    fail the write with a raw Catalog Error after the search."""
    duckdb.connect(data["db"]).execute("CREATE VIEW sqlanon_releases AS SELECT 1 AS id").close()
    r = invoke(["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--output-table", "released"])
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: registry {data['db']}: sqlanon_releases is a view, not a sqlanon registry table; name another --registry"
    assert "base frequency set" not in r.stderr
    con = duckdb.connect(data["db"], read_only=True)
    assert con.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'released'").fetchone()[0] == 0
    con.close()


def test_registry_flag_with_a_table_release_is_refused(data):
    r = invoke(["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--output-table", "released", "--registry", str(data["dir"] / "r.duckdb")])
    assert r.exit_code == 2
    assert "is where file releases are recorded" in error_line(r)


# -- a release never replaces its input ---------------------------------------------------------


def test_output_that_is_the_input_file_is_refused(data, monkeypatch):
    """``--output people.csv --overwrite`` used to replace the source file silently."""
    monkeypatch.chdir(data["dir"])
    os.symlink(data["csv"], data["dir"] / "link.csv")
    before = open(data["csv"]).read()
    for same in (data["csv"], "people.csv", "./people.csv", "link.csv"):
        r = invoke(["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", same, "--overwrite"])
        assert r.exit_code == 2, r.output
        assert error_line(r).startswith(f"error: --output {same} is the input csv:")
    assert open(data["csv"]).read() == before


def test_output_inside_a_parquet_input_is_refused(data):
    folder = data["dir"] / "parts"
    folder.mkdir()
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{data['csv']}')) TO '{folder / 'a.parquet'}'")
    for source, output in ((str(folder), str(folder / "new.parquet")), (str(folder / "*.parquet"), str(folder / "b.parquet")), (str(folder / "a.parquet"), str(folder / "a.parquet"))):
        r = invoke(["anonymize", "--keep-others", "--input", source, "--format", "parquet", "--qi", "zip=mask", "--k", "2", "--output", output, "--overwrite"])
        assert r.exit_code == 2, r.output
        assert "is the input parquet:" in error_line(r)
    assert os.listdir(folder) == ["a.parquet"]


@pytest.mark.parametrize("name", ["people", "PEOPLE", "main.people", '"people"', "w.main.people"])
def test_output_table_that_is_the_input_table_is_refused(data, name):
    """``--output-table people --overwrite`` on input ``people`` used to fail with a raw Catalog Error."""
    r = invoke(["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--output-table", name, "--overwrite"])
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: --output-table {name} is the input table; use --in-place to replace it (in one transaction)"
    con = duckdb.connect(data["db"], read_only=True)
    assert con.execute("SELECT zip FROM people ORDER BY zip LIMIT 1").fetchone() == ("12345",)
    con.close()


# -- one rule for every file written: an existing one is replaced only with --overwrite ----------


def test_existing_report_is_kept_without_overwrite(data):
    """``--report keep.html`` used to replace the file while ``--output`` refused."""
    keep = data["dir"] / "keep.html"
    keep.write_text("precious")
    args = ["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "--report", str(keep)]
    r = invoke(args)
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: report file already exists: {keep} (use --overwrite)"
    assert keep.read_text() == "precious" and leftovers(data["dir"]) == []
    with pytest.raises(ConfigError, match="report file already exists"):
        sqlanon.anonymize(keep_others=True, input=data["csv"], qi={"zip": "mask"}, k=2, report=str(keep))
    r = invoke(args + ["--overwrite", "-q"])
    assert r.exit_code == 0, r.output
    assert "<svg" in keep.read_text()
    # --overwrite with --in-place (or no output) is used by the report: accepted
    r = invoke(["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--in-place", "--report", str(keep), "--overwrite", "-q"])
    assert r.exit_code == 0, r.output


def test_every_other_written_file_obeys_the_rule(data):
    keep = data["dir"] / "keep.html"
    keep.write_text("precious")
    r = invoke(["generate", "--input", data["csv"], "--output", str(data["dir"] / "gen.parquet"), "--report", str(keep), "-q"])
    assert r.exit_code == 2 and "report file already exists" in error_line(r)
    assert not os.path.exists(data["dir"] / "gen.parquet")
    invoke(["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "-q"])
    reg = str(data["dir"] / "sqlanon_releases.duckdb")
    r = invoke(["report", "--release", "1", "--database", reg, "--output", str(keep)])
    assert r.exit_code == 2 and error_line(r) == f"error: report file already exists: {keep} (use --overwrite)"
    r = invoke(["schema", "policy", "--output", str(keep)])
    assert r.exit_code == 2 and "output file already exists" in error_line(r)
    assert keep.read_text() == "precious"
    assert invoke(["report", "--release", "1", "--database", reg, "--output", str(keep), "--overwrite"]).exit_code == 0
    assert "<html" in keep.read_text().lower()
    from sqlanon.hierarchy import Hierarchy, write_csv_hierarchy

    with pytest.raises(ConfigError, match="hierarchy file already exists"):
        write_csv_hierarchy(Hierarchy(attribute="a", rows=[["1", "*"]], origin="t"), str(keep))


# -- SIGTERM is handled like Ctrl-C ------------------------------------------------------------


def _run_and_terminate(args, env_pause: str | None, ready: str, script: str | None = None):
    """Start ``sqlanon args`` in a process, wait for the line ``ready`` on its stderr, send
    SIGTERM, and return (exit code, stderr)."""
    env = dict(os.environ)
    env.pop("SQLANON_DEBUG", None)
    if env_pause:
        env["SQLANON_TEST_PAUSE"] = env_pause
    command = [sys.executable, script] if script else [sys.executable, "-m", "sqlanon"]
    proc = subprocess.Popen([*command, *args], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith(ready):
                break
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + err


def _one_terminated_line(err: str) -> None:
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == ["error: terminated (SIGTERM); nothing was written"], err
    assert "Traceback" not in err


def test_sigterm_during_a_file_write(data):
    """SIGTERM used to kill the run with exit -15, no message, and leave ``.out.parquet.<pid>-<hex>.tmp``."""
    args = ["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "-q"]
    code, err = _run_and_terminate(args, "write", "paused at write")
    assert code == 143, err
    _one_terminated_line(err)
    assert sorted(os.listdir(data["dir"])) == ["people.csv", "w.duckdb"]  # no release, no temporary file, no registry


def test_sigterm_inside_the_in_place_transaction(data):
    args = ["anonymize", "--keep-others", "--input", data["db"], "--table", "people", "--qi", "zip=mask", "--k", "2", "--in-place", "-q"]
    code, err = _run_and_terminate(args, "in-transaction", "paused at in-transaction")
    assert code == 143, err
    _one_terminated_line(err)
    con = duckdb.connect(data["db"], read_only=True)
    try:
        assert con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall() == [("people",)]
        assert sorted(con.execute("SELECT * FROM people").fetchall()) == sorted(tuple(line.split(",")) for line in CSV.splitlines()[1:])
    finally:
        con.close()


SLOW_STATEMENT = """
import sys
from sqlanon.engine.duckdb import DuckDBEngine
original = DuckDBEngine.write_file

def slow_write(self, query, path, kind, delimiter=","):
    original(self, query, path, kind, delimiter)  # the temporary file is there when SIGTERM comes
    print("writing", file=sys.stderr, flush=True)
    self.execute("SELECT sum(a.range * b.range) FROM range(1000000) a, range(1000000) b")

DuckDBEngine.write_file = slow_write
from sqlanon.cli.app import main
sys.argv = ["sqlanon", *sys.argv[1:]]
main()
"""


def test_sigterm_during_a_statement(data, tmp_path):
    """SIGTERM while DuckDB runs a statement: DuckDB interrupts it, the run says so."""
    script = tmp_path / "run.py"
    script.write_text(SLOW_STATEMENT)
    out = tmp_path / "sub" / "out.csv"
    args = ["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", str(out), "--threads", "1", "--json"]
    code, err = _run_and_terminate(args, None, "writing", str(script))
    assert code == 143, err
    _one_terminated_line(err)
    assert os.listdir(tmp_path / "sub") == []


# -- a release never keeps a column unique per row unless told to -------------------------------


@pytest.fixture
def ids(tmp_path):
    """400 rows: ``id`` unique, ``visit`` unique but one value twice (near-unique), zip/age QIs."""
    lines = ["id,visit,zip,age,note"]
    for i in range(400):
        lines.append(f"{i},{i if i else 1},{12340 + i % 8},{20 + i % 40},n{i % 3}")
    csv = tmp_path / "ids.csv"
    csv.write_text("\n".join(lines) + "\n")
    return {"dir": tmp_path, "csv": str(csv), "out": str(tmp_path / "out.parquet")}


def test_release_keeping_a_unique_column_is_refused_before_the_scan(ids):
    """The dbt example released the seed's ``id``: every released row joined 1:1 to the original."""
    args = ["anonymize", "--keep-others", "--input", ids["csv"], "--qi", "zip=mask", "--qi", "age=bands:10,20", "--k", "5", "--output", ids["out"]]
    r = invoke(args)
    assert r.exit_code == 2, r.output
    # with keep_others, 'visit' (one value twice: 399 distinct in 400 rows) is nearly unique: refused too
    assert error_line(r) == ("error: columns 'id', 'visit' are (nearly) unique per row (400 rows): released as is, every row joins back to its input row; "
                             "leave it out (--drop-column id --drop-column visit), make it a QI, or keep it knowingly (--keep-column)")
    assert "base frequency set" not in r.stderr and leftovers(ids["dir"]) == []
    with pytest.raises(ConfigError, match=r"columns 'id', 'visit' are \(nearly\) unique per row"):
        sqlanon.anonymize(keep_others=True, input=ids["csv"], qi={"zip": "mask", "age": "bands:10,20"}, k=5, output=ids["out"], dry_run=True)
    # left out, or kept knowingly (flag, policy key, API keyword): released
    r = invoke(args + ["--drop-column", "id", "--keep-column", "visit", "-q"])
    assert r.exit_code == 0, r.output
    assert [c for c, *_ in duckdb.sql(f"DESCRIBE SELECT * FROM '{ids['out']}'").fetchall()] == ["visit", "zip", "age", "note"]
    r = invoke(args + ["--keep-column", "id", "--keep-column", "visit", "--overwrite", "-q"])
    assert r.exit_code == 0, r.output
    assert duckdb.sql(f"SELECT COUNT(DISTINCT id) FROM '{ids['out']}'").fetchall() == [(400,)]
    sqlanon.anonymize(keep_others=True, input=ids["csv"], qi={"zip": "mask", "age": "bands:10,20"}, k=5, keep_columns=["id", "visit"], output=ids["out"], overwrite=True)
    policy = ids["dir"] / "p.yaml"
    policy.write_text(f"input: {ids['csv']}\nqi:\n  zip: mask\n  age: bands:10,20\nk: 5\nkeep_columns: [id, visit]\n")
    assert invoke(["anonymize", "--keep-others", "--policy", str(policy), "--output", ids["out"], "--overwrite", "-q"]).exit_code == 0


def test_keep_column_is_checked(ids):
    base = ["anonymize", "--keep-others", "--input", ids["csv"], "--qi", "zip=mask", "--k", "5", "--output", ids["out"], "--drop-column", "id"]
    r = invoke(base + ["--keep-column", "idd"])
    assert r.exit_code == 2 and "unknown --keep-column 'idd'" in error_line(r)
    r = invoke(base + ["--keep-column", "zip"])
    assert r.exit_code == 2 and error_line(r) == "error: --keep-column 'zip' is a quasi-identifier; it keeps a released column as is"
    r = invoke(base + ["--keep-column", "id"])
    assert r.exit_code == 2 and "--keep-column 'id' is also dropped" in error_line(r)


def test_unique_columns_approximate_then_exact(ids):
    """One pass of approximate counts; the exact count only for the near-unique columns."""
    from sqlanon.engine import connect
    from sqlanon.release.write import unique_columns
    from sqlanon.engine.source import Source

    engine = connect(database=":memory:")
    try:
        engine.keep_log = True
        rows, unique = unique_columns(engine, Source.open(ids["csv"]), ["id", "visit", "zip", "note"])
        assert (rows, unique) == (400, ["id"])
        statements = [s for s in engine.log if "COUNT" in s.upper()]
        assert len(statements) == 2 and "APPROX_COUNT_DISTINCT" in statements[0].upper()
        assert '"zip"' not in statements[1] and '"note"' not in statements[1]  # far from unique: not counted exactly
    finally:
        engine.close()


def test_report_under_a_file_is_refused_before_the_search(data):
    """``--report afile/r.html`` where ``afile`` is a file: refused before anything is written (the
    release used to be written, then the report failed)."""
    blocker = data["dir"] / "afile"
    blocker.write_text("")
    r = invoke(["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "--report", str(blocker / "r.html")])
    assert r.exit_code == 2, r.output
    assert error_line(r) == f"error: cannot write report file {blocker / 'r.html'}: {blocker} is a file, not a folder"
    assert leftovers(data["dir"]) == [] and not (data["dir"] / "sqlanon_releases.duckdb").exists()


def test_report_that_fails_after_the_release_names_it_and_the_way_back(data, monkeypatch):
    """A report write that fails after the release (a full disk) says the release stands and how to
    write its report again from the registry; that command works, and no temporary file is left."""
    import errno

    report = data["dir"] / "r.html"
    real_open = open

    def full_disk(path, *args, **kwargs):
        if str(path).endswith(".r.html.tmp"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_disk)
    r = invoke(["anonymize", "--keep-others", "--input", data["csv"], "--qi", "zip=mask", "--k", "2", "--output", data["out"], "--report", str(report)])
    monkeypatch.undo()
    assert r.exit_code == 1, r.output
    line = error_line(r)
    registry = data["dir"] / "sqlanon_releases.duckdb"
    again = f"sqlanon report --release 1 --database {registry} -o {report}"
    assert line == f"error: cannot write {report}: No space left on device; release 1 was written to {data['out']} and recorded: write its report again with {again}"
    assert os.path.exists(data["out"]) and registry_rows(registry) == 1 and not report.exists()
    assert not [f for f in os.listdir(data["dir"]) if f.endswith(".tmp")]
    r = invoke(again.split()[1:])
    assert r.exit_code == 0, r.output
    assert "<svg" in report.read_text()
