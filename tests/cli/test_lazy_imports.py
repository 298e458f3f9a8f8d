"""Building the app and rendering any command's ``--help`` load no engine client, numpy, pyarrow
nor numba (the fixed cost of a command is its own imports): a module-set check, not a timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pyarrow", "numpy", "numba", "duckdb", "pandas", "psycopg", "pyspark", "sqlanon.stats", "sqlanon.run.api")

PROBE = """
import json, sys
heavy = json.loads(sys.argv[2])
sys.argv = ["sqlanon", *json.loads(sys.argv[1])]
from sqlanon.cli import app
try:
    app.app(prog_name="sqlanon")
except SystemExit:
    pass
print(json.dumps(sorted(name for name in heavy if name in sys.modules)), file=sys.stderr)
"""


def _loaded(args: list[str], heavy=HEAVY) -> list[str]:
    run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), json.dumps(heavy)], capture_output=True, text=True)
    return json.loads(run.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [[], ["--help"], ["anonymize", "--help"], ["check", "--help"], ["sql", "--help"], ["profile", "--help"],
                                  ["generate", "--help"], ["hierarchy", "show", "--help"], ["releases", "--help"], ["dbt", "--help"], ["schema", "--help"], ["warm-up", "--help"]])
def test_help_and_light_commands_load_no_engine_nor_numpy(args):
    assert _loaded(args) == []


def test_the_probe_sees_a_command_that_does_load_them(tmp_path):
    """The check above can fail: a command that runs loads them (a hierarchy built from data
    needs an engine)."""
    data = tmp_path / "t.csv"
    data.write_text("age\n30\n41\n")
    assert "duckdb" in _loaded(["hierarchy", "show", "bands:10", "--column", "age", "--input", str(data)])


def test_a_hook_on_a_later_import_runs_once_the_module_is_loaded():
    code = """
import sys
from sqlanon.cli.lazy import after_import
seen = []
after_import("sqlanon.stats.local", lambda module: seen.append(module.FREEZE_GC))
assert seen == [] and "sqlanon.stats.local" not in sys.modules
from sqlanon.stats import local
assert seen == [False] and not any(type(f).__name__ == "_AfterImport" for f in sys.meta_path)
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout.strip() == "ok", run.stderr
