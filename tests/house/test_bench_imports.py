"""The bench scripts import sqlanon's internals (planners, statistics, objectives) to measure them;
they are not run by the suite, so a move in the package can leave one broken unseen (the layout
move of issue 25 left ``bench/genetic_adult.py`` importing ``sqlanon.metrics.flexible``, which no
longer exists). Every ``from sqlanon... import name`` and ``import sqlanon...`` in ``bench/`` must
resolve: the module imports and the name is an attribute or a submodule of it."""

from __future__ import annotations

import ast
import importlib
import paths

import pytest

BENCH = paths.BENCH


def sqlanon_imports() -> list[tuple[str, int, str, str | None]]:
    found = []
    for path in sorted(BENCH.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "sqlanon":
                assert node.module is not None
                found += [(path.name, node.lineno, node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found += [(path.name, node.lineno, alias.name, None) for alias in node.names if alias.name.split(".")[0] == "sqlanon"]
    return found


def test_the_bench_scripts_import_sqlanon():
    assert len(sqlanon_imports()) > 50  # the scan found the scripts' imports


@pytest.mark.parametrize("where,line,module,name", sqlanon_imports(), ids=lambda v: str(v))
def test_every_bench_import_resolves(where, line, module, name):
    loaded = importlib.import_module(module)
    if name is not None and not hasattr(loaded, name):
        importlib.import_module(f"{module}.{name}")  # a submodule: raises if it is neither
