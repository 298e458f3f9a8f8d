"""mypy holds on the package: ``python -m mypy`` with the configuration in pyproject.toml
([tool.mypy]: strict optional, untyped bodies checked, unused ignores reported) finds no error at
all (exit 0). A narrow ``# type: ignore[code]`` with its reason is for the engine boundary only
(untyped third-party libraries such as pyspark and psycopg).

Skipped only when mypy is not installed outside CI; under ``CI`` it must run (the README's test
command installs the ``dev`` extra). One xdist worker runs it, with its cache in a temporary
directory (the suite writes no .mypy_cache into the checkout)."""

import importlib.util
import os
import subprocess
import sys
import tomllib
import paths

import pytest

ROOT = str(paths.ROOT)


def test_mypy_configuration_keeps_optional_checks_on():
    """The checks the zero above stands for: strict optional (mypy's default) and untyped bodies checked."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        config = tomllib.load(f)["tool"]["mypy"]
    assert config.get("strict_optional", True) is True
    assert config.get("check_untyped_defs") is True
    assert config.get("ignore_errors", False) is False and config.get("ignore_missing_imports", False) is False


@pytest.mark.xdist_group("mypy")
def test_mypy_finds_no_error_in_the_package(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed: CI installs the dev extra (pip install -e '.[test,dev]')")
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy-cache"), "sqlanon"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"mypy found errors (exit {proc.returncode}):\n{output}"
    assert "Success: no issues found" in output, output
