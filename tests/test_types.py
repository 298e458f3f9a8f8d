"""mypy holds on the package: ``python -m mypy`` with the configuration in pyproject.toml
([tool.mypy]: strict optional, untyped bodies checked, unused ignores reported).

The goal is no error at all (exit 0). Until the last ones are fixed, ``KNOWN_ERRORS`` is a ratchet:
the test fails when mypy finds more errors than that, so nothing new slips in; lower it as errors
are fixed, and at 0 the test asserts a clean exit.

Skipped only when mypy is not installed outside CI; under ``CI`` it must run (the README's test
command installs the ``dev`` extra). One xdist worker runs it, with its cache in a temporary
directory (the suite writes no .mypy_cache into the checkout)."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

#: errors left on 2026-11-27 (engine/spark, progress, generate/scores, safepub, ...): only down
KNOWN_ERRORS = 22


@pytest.mark.xdist_group("mypy")
def test_mypy_finds_no_new_errors_in_the_package(tmp_path):
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
    if KNOWN_ERRORS == 0:
        assert proc.returncode == 0, f"mypy found errors (exit {proc.returncode}):\n{output}"
        return
    found = re.search(r"Found (\d+) errors? in", output)
    assert proc.returncode in (0, 1) and (proc.returncode == 0 or found), f"mypy did not run (exit {proc.returncode}):\n{output}"
    errors = int(found.group(1)) if found else 0
    assert errors <= KNOWN_ERRORS, f"mypy: {errors} errors, more than the {KNOWN_ERRORS} known ones:\n{output}"
