"""Every example in a docstring of the package runs and gives what it shows (as sqlglot's do):
a stale example fails here, not in a reader's hands."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sqlanon

MODULES = sorted(m.name for m in pkgutil.walk_packages(sqlanon.__path__, "sqlanon.") if not m.name.endswith("__main__"))


def test_the_package_has_examples():
    found = 0
    for name in MODULES:
        found += len([t for t in doctest.DocTestFinder().find(importlib.import_module(name)) if t.examples])
    assert found >= 40  # 50 docstrings with examples when this test was written


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
