"""ruff is clean on the package, the tests and the benchmarks (rules in pyproject.toml's [tool.ruff])."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import paths

import pytest

ROOT = paths.ROOT


def test_ruff_is_clean():
    if importlib.util.find_spec("ruff") is None:
        if os.environ.get("CI"):
            pytest.fail("ruff is not installed: CI installs it with the test extra (pip install -e '.[test]')")
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "sqlanon", "tests", "bench"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, f"ruff check sqlanon tests bench:\n{out.stdout}{out.stderr}"
