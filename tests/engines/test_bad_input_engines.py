"""Bad input at the engine's edge (issue 41): a full disk, foreign and truncated registries,
Parquet files that disagree. One line naming the file, table or column, the documented exit code,
nothing half-written, and no value of the input in the message; the refusals that hold on every
engine run on DuckDB, PostgreSQL and Spark (the ``engine`` fixture). PostgreSQL's own cases (a
database that does not exist, a session terminated, a deadlock) are in
tests/engines/test_bad_input_postgres.py."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import uuid

import duckdb
import pytest

from sqlanon.engine.base import engine_error
from engine_suite import QI, on_engines
from test_bad_input import error_line, invoke


def _people(path, rows: int = 300, seed: int = 3) -> None:
    rnd = random.Random(seed)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("zip,sex,age,note\n")
        for _ in range(rows):
            fh.write(f"0{rnd.choice(['1053', '1068'])},{rnd.choice('mf')},{rnd.randint(20, 70)},{rnd.random():.12f}\n")


def _args(data, out, registry, *extra):
    return ["anonymize", "--input", str(data), "--qi", "zip=mask", "--qi", "sex=flat", "--qi", "age=bands:10,20",
            "--keep-column", "note", "--k", "3", "--output", str(out), "--registry", str(registry), "-q", *extra]


def _registry_rows(path) -> int:
    if not os.path.exists(path):
        return 0
    con = duckdb.connect(str(path), read_only=True)
    try:
        found = con.execute("SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'sqlanon_releases'").fetchone()[0]
        return int(con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0]) if found else 0
    finally:
        con.close()


# -- a full disk -----------------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root can mount one); skipped where mounting is not allowed (the injected
    test below covers the same message at the engine boundary)."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    mount = shutil.which("mount")
    if mount is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run([mount, "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + done.stderr.decode(errors="replace").strip())
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_full_disk_is_one_line_naming_the_output(tmp_path, tiny_disk, fmt):
    data = tmp_path / "people.csv"
    _people(data, rows=40_000)
    out = tiny_disk / f"out.{fmt}"
    registry = tmp_path / "reg.duckdb"
    result = invoke(_args(data, out, registry))
    assert result.exit_code == 1, result.output
    assert error_line(result) == f"error: cannot write {out}: No space left on device"
    assert os.listdir(tiny_disk) == []  # no release, no temporary file
    assert _registry_rows(registry) == 0  # and no registry row: both or neither


DUCKDB_FULL = ('IO Error: Async write failed for range [offset=30899, size=45362]: {"exception_type":"IO","exception_message":'
               '"Could not write file \\"{tmp}\\": No space left on device","errno":"28"}')


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_full_disk_injected_at_the_engine_boundary(tmp_path, monkeypatch, fmt):
    """DuckDB's asynchronous writer wraps the IO error in JSON: the message is still the path."""
    from sqlanon.engine.duckdb import DuckDBEngine

    def full(self, query, path, kind, delimiter=","):
        with open(path, "w", encoding="utf-8") as fh:  # a partial file, as a full disk leaves one
            fh.write("zip")
        raise engine_error(duckdb.IOException(DUCKDB_FULL.replace("{tmp}", path)), "COPY", "DuckDB")

    monkeypatch.setattr(DuckDBEngine, "write_file", full)
    data = tmp_path / "people.csv"
    _people(data)
    out, registry = tmp_path / f"out.{fmt}", tmp_path / "reg.duckdb"
    result = invoke(_args(data, out, registry))
    assert result.exit_code == 1, result.output
    assert error_line(result) == f"error: cannot write {out}: No space left on device"
    assert not out.exists() and [p for p in os.listdir(tmp_path) if p.endswith(".tmp")] == []
    assert _registry_rows(registry) == 0


# -- registries another program made, or cut short ------------------------------------------------------


@pytest.fixture
def registries(tmp_path):
    data, out = tmp_path / "people.csv", tmp_path / "out.parquet"
    _people(data)
    good = tmp_path / "good.duckdb"
    assert invoke(_args(data, out, good)).exit_code == 0
    foreign = tmp_path / "foreign.duckdb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE sqlanon_releases (name VARCHAR, x INTEGER)")
    con.execute("INSERT INTO sqlanon_releases VALUES ('a', 1)")
    con.close()
    truncated = tmp_path / "truncated.duckdb"
    shutil.copy(good, truncated)
    with open(truncated, "r+b") as fh:
        fh.truncate(os.path.getsize(truncated) // 2)
    garbled = tmp_path / "garbled.duckdb"
    shutil.copy(good, garbled)
    con = duckdb.connect(str(garbled))
    con.execute("UPDATE sqlanon_releases SET transformation = 'not json {', report = '[1, 2'")
    con.close()
    return {"dir": tmp_path, "good": str(good), "foreign": str(foreign), "truncated": str(truncated), "garbled": str(garbled)}


@pytest.mark.parametrize("command", ["releases", "report"])
def test_a_foreign_registry_is_named(registries, command):
    html = registries["dir"] / "r.html"
    args = ["releases", "--database", registries["foreign"]] if command == "releases" else ["report", "--release", "1", "--database", registries["foreign"], "-o", str(html)]
    result = invoke(args)
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert line.startswith(f"error: registry {registries['foreign']}: table sqlanon_releases is not a sqlanon registry (no column id, created_at")
    assert not html.exists()


@pytest.mark.parametrize("command", ["releases", "report"])
def test_a_truncated_registry_is_named(registries, command):
    html = registries["dir"] / "r.html"
    args = ["releases", "--database", registries["truncated"]] if command == "releases" else ["report", "--release", "1", "--database", registries["truncated"], "-o", str(html)]
    result = invoke(args)
    assert result.exit_code == 2, result.output
    assert error_line(result) == f"error: {registries['truncated']} is truncated or damaged (it ends before the data its header promises); restore it from a copy"
    assert not html.exists()


@pytest.mark.parametrize("command", ["releases", "report"])
def test_a_registry_column_that_is_not_json_is_named(registries, command):
    html = registries["dir"] / "r.html"
    args = ["releases", "--database", registries["garbled"]] if command == "releases" else ["report", "--release", "1", "--database", registries["garbled"], "-o", str(html)]
    result = invoke(args)
    assert result.exit_code == 2, result.output
    assert error_line(result) == f"error: registry {registries['garbled']}: release 1: column transformation is not JSON (the registry was changed by another program)"
    assert not html.exists()


def test_releases_json_of_a_good_registry_still_lists(registries):
    result = invoke(["releases", "--database", registries["good"], "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == [1] and rows[0]["transformation"]


# -- Parquet files that disagree -------------------------------------------------------------------------


@pytest.fixture
def parts(tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    con = duckdb.connect()
    con.execute(f"COPY (SELECT '0105' || (i % 3) AS zip, 20 + (i % 40) AS age FROM range(100) t(i)) TO '{folder / 'a.parquet'}'")
    con.execute(f"COPY (SELECT '0105' || (i % 3) AS zip, CAST(20 + (i % 40) AS VARCHAR) || 'y' AS age FROM range(100) t(i)) TO '{folder / 'b.parquet'}'")
    con.execute(f"COPY (SELECT '0105' || (i % 3) AS zip FROM range(100) t(i)) TO '{tmp_path / 'c.parquet'}'")
    con.close()
    return {"dir": tmp_path, "folder": folder, "out": tmp_path / "out.parquet"}


@pytest.mark.parametrize("shape", ["folder", "glob"])
def test_parquet_files_that_disagree_on_a_column_type(parts, shape):
    source = str(parts["folder"]) if shape == "folder" else str(parts["folder"] / "*.parquet")
    result = invoke(["anonymize", "--input", source, "--qi", "zip=mask", "--qi", "age=bands:10,20", "--k", "3", "--output", str(parts["out"]), "-q"])
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert line == (f"error: input {source}: the Parquet files disagree on column 'age': {parts['folder'] / 'a.parquet'} has integer, "
                    f"{parts['folder'] / 'b.parquet'} has text (the engine reads them with one schema); give files of one schema")
    assert "y'" not in line  # no value of the input
    assert not parts["out"].exists() and not (parts["dir"] / "sqlanon_releases.duckdb").exists()


def test_parquet_files_that_disagree_on_the_columns(parts):
    shutil.copy(parts["dir"] / "c.parquet", parts["folder"] / "c.parquet")
    os.remove(parts["folder"] / "b.parquet")
    result = invoke(["anonymize", "--input", str(parts["folder"]), "--qi", "zip=mask", "--k", "3", "--output", str(parts["out"]), "-q"])
    assert result.exit_code == 2, result.output
    assert error_line(result) == (f"error: input {parts['folder']}: the Parquet files disagree: {parts['folder'] / 'c.parquet'} has no column 'age' "
                                  f"({parts['folder'] / 'a.parquet'} has it); give files of one schema")
    assert not parts["out"].exists()


def test_a_conversion_error_names_no_value():
    err = engine_error(duckdb.ConversionException("Conversion Error: Could not convert string '54y' to INT32"), "SELECT", "DuckDB")
    assert str(err) == "DuckDB: Could not convert a string to INT32"
    err = engine_error(duckdb.ConversionException("Conversion Error: failed to cast column \"age\" from type VARCHAR to INTEGER: Could not convert string '54y' to INT32"), "SELECT", "DuckDB")
    assert str(err) == "column 'age' has a value that is no INTEGER (the input's files or rows disagree on its type: VARCHAR and INTEGER)"
    assert err.exit_code == 2


def test_a_registry_on_a_full_disk_is_named_and_no_release_is_left(tmp_path, tiny_disk):
    """The registry itself on a full disk: the release is not left without its row."""
    data = tmp_path / "people.csv"
    _people(data)
    out = tmp_path / "out.parquet"
    registry = tiny_disk / ("r" + uuid.uuid4().hex[:6] + ".duckdb")
    fd = os.open(tiny_disk / "filler", os.O_WRONLY | os.O_CREAT)  # the disk full before the run
    try:
        while True:
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    result = invoke(_args(data, out, registry))
    assert result.exit_code == 1, result.output
    assert error_line(result) == f"error: cannot write {registry}: No space left on device"
    assert not out.exists()


# ----------------------------------------------------------------------------------------------
# on every engine (tests/engines/engine_suite.py): the refusals that depend only on the inputs


@pytest.mark.parametrize("engine", on_engines(), indirect=True)
def test_an_unknown_quasi_identifier_is_named_on_every_engine(engine):
    import sqlanon
    from sqlanon.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown quasi-identifier column 'bogus'"):
        sqlanon.anonymize(**engine.source("research"), qi={"zip": "mask", "bogus": "flat"}, k=2, keep_others=True, dry_run=True)


@pytest.mark.parametrize("engine", on_engines(), indirect=True)
def test_k_larger_than_the_table_is_refused_on_every_engine(engine):
    import sqlanon
    from sqlanon.errors import UnsatisfiableError

    rows = len(engine.data["research"])
    with pytest.raises(UnsatisfiableError, match=rf"k={rows + 1} is larger than the table \({rows} rows\)"):
        sqlanon.anonymize(**engine.source("research"), qi=dict(QI), k=rows + 1, drop_columns=["id"], keep_others=True, dry_run=True)
