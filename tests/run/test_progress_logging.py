"""Progress (rich, on a terminal only), logging (``sqlanon`` and ``sqlanon.sql``), and pandas
never imported by the package (it is only in the bench extra)."""

import io
import json
import logging
import os
import subprocess
import sys
import tomllib
import paths

import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.progress import Reporter, RichReporter

ROOT = str(paths.ROOT)
runner = CliRunner()


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("zip,age,sex\n" + "".join(f"{10000 + (i * 7919) % 90},{18 + (i * 31) % 70},{'MF'[(i // 11) % 2]}\n" for i in range(3000)))
    return tmp_path, str(path)


def args(path, out, *extra):
    return ["anonymize", "--keep-others", "--input", path, "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--qi", "sex=flat", "--k", "10", "--output", out, *extra]


def test_sql_is_logged_at_debug_and_messages_at_info(data, caplog):
    tmp, path = data
    with caplog.at_level(logging.DEBUG, logger="sqlanon"):
        release = sqlanon.anonymize(keep_others=True, input=path, qi={"zip": "mask", "age": "bands:5,10,20"}, k=10, output=str(tmp / "o.parquet"))
    sql = [r.getMessage() for r in caplog.records if r.name == "sqlanon.sql"]
    assert len(sql) >= release.queries  # every statement the engines ran (the registry has its own)
    assert any(s.upper().startswith("COPY") for s in sql) and any("GROUP BY" in s.upper() for s in sql)
    info = [r.getMessage() for r in caplog.records if r.name == "sqlanon" and r.levelno == logging.INFO]
    assert any(m.startswith("base frequency set") for m in info) and any(m.startswith("wrote ") for m in info)


def test_no_progress_bars_when_not_a_tty(data):
    """Not a terminal, or --json: no bars (no escape codes, no bar glyphs), only plain message lines;
    -q: nothing on stderr."""
    tmp, path = data
    for extra in ([], ["--json"]):
        result = runner.invoke(sqlanon.cli.app.app, args(path, str(tmp / f"a{len(extra)}.parquet"), *extra))
        assert result.exit_code == 0
        lines = result.stderr.splitlines()
        assert lines and all(line.startswith("sqlanon: ") for line in lines)
        assert "\x1b" not in result.stderr and "━" not in result.stderr
    result = runner.invoke(sqlanon.cli.app.app, args(path, str(tmp / "b.parquet"), "--json", "-q"))
    assert result.exit_code == 0 and result.stderr == "" and json.loads(result.stdout)["rows"] == 3000


def test_sqlanon_log_env_turns_logging_on(data):
    tmp, path = data
    env = dict(os.environ, SQLANON_LOG="DEBUG")
    proc = subprocess.run([sys.executable, "-m", "sqlanon", *args(path, str(tmp / "c.parquet"), "--json")], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "sqlanon.sql DEBUG" in proc.stderr and "sqlanon INFO wrote" in proc.stderr
    assert json.loads(proc.stdout)["rows"] == 3000  # stdout untouched


def test_rich_progress_shows_the_three_phases(data):
    from rich.console import Console

    tmp, path = data
    buffer = io.StringIO()
    reporter = RichReporter(Console(file=buffer, force_terminal=True, width=120, color_system=None))
    release = sqlanon.anonymize(keep_others=True, input=path, qi={"zip": "mask", "age": "bands:5,10,20", "sex": "flat"}, k=10, output=str(tmp / "d.parquet"), progress=reporter)
    text = buffer.getvalue()
    for phase in ("base scan", "search optimal", "write"):
        assert phase in text
    assert "100/100" in text  # the base scan and the write finished (DuckDB's own statement progress)
    assert "sqlanon: wrote" in text and release.output


def test_a_message_callback_still_works(data):
    tmp, path = data
    seen = []
    sqlanon.anonymize(keep_others=True, input=path, qi={"zip": "mask"}, k=10, dry_run=True, progress=seen.append)
    assert any(m.startswith("base frequency set") for m in seen)
    assert isinstance(sqlanon.progress.as_reporter(seen.append), Reporter)


def test_pandas_is_not_a_core_dependency_and_not_needed(data):
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert not any(d.startswith("pandas") for d in project["dependencies"])
    assert any(d.startswith("pandas") for d in project["optional-dependencies"]["bench"])
    tmp, path = data
    # pandas made unimportable (as on an install without it): DuckDB probes for it on its own,
    # sqlanon must work without it
    code = (
        "import sys\n"
        "class NoPandas:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pandas' or name.startswith('pandas.'):\n"
        "            raise ModuleNotFoundError(\"No module named 'pandas'\")\n"
        "sys.meta_path.insert(0, NoPandas())\n"
        "import duckdb, sqlanon\n"
        f"r = sqlanon.anonymize(keep_others=True, input={path!r}, qi={{'zip': 'mask'}}, k=10, output={str(tmp / 'e.parquet')!r})\n"
        "r.to_arrow(); r.relation().fetchall()\n"
        f"sqlanon.check({str(tmp / 'e.parquet')!r}, ['zip'], k=10)\n"
        "con = duckdb.connect(); con.execute(\"CREATE TABLE t AS SELECT (i % 9)::VARCHAR AS g FROM range(90) t(i)\").fetchall()\n"
        "sqlanon.anonymize(con.table('t'), connection=con, qi={'g': 'flat'}, k=5).to_arrow()\n"
        "import sqlanon.cli.app\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:]
