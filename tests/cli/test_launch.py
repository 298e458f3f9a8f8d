"""The console script (:mod:`sqlanon.cli.launch`): ``--version`` is answered before the app and
its dependencies are imported; every other command reaches the app."""

import subprocess
import sys
from importlib.metadata import version

#: modules ``sqlanon --version`` must not import (the app, its CLI libraries, the engine)
NOT_LOADED = ("sqlanon.cli.app", "typer", "rich", "duckdb", "sqlglot", "pyarrow", "pydantic")


def _launch(*args: str) -> subprocess.CompletedProcess:
    code = (
        "import sys\n"
        f"sys.argv = ['sqlanon', *{list(args)!r}]\n"
        "from sqlanon.cli import launch\n"
        "try:\n"
        "    launch.main()\n"
        "finally:\n"
        f"    print('LOADED=' + ','.join(m for m in {NOT_LOADED!r} if m in sys.modules), file=sys.stderr, flush=True)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_version_before_the_app():
    for flag in ("--version", "-V"):
        out = _launch(flag)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == f"sqlanon {version('sqlanon')}"
        assert "LOADED=\n" in out.stderr or out.stderr.rstrip().endswith("LOADED="), out.stderr


def test_other_commands_reach_the_app():
    out = _launch("--help")
    assert out.returncode == 0, out.stderr
    assert "Usage: sqlanon" in out.stdout and "anonymize" in out.stdout


def test_the_console_script_is_the_launcher():
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "sqlanon"]
    assert script.value == "sqlanon.cli.launch:main"
