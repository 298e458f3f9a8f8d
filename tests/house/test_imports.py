"""The import structure of ``sqlanon``: no circles, imports at the top of the module, a light CLI.

Read from the source with :mod:`ast` (nothing is imported except in the last test):

* the graph of module-level imports between sqlanon modules has no cycle. An edge goes from a
  module to every sqlanon module its top-level statements import (``from sqlanon.x import y``
  where ``y`` is a submodule is an edge to ``sqlanon.x.y``), and to the packages on the way, whose
  ``__init__`` runs first; a package's own ``__init__`` is a module like any other;
* the SQL floor stays a floor: :mod:`sqlanon.expr` imports no sqlanon module but ``errors``,
  :mod:`sqlanon.dialect` only ``expr`` and ``errors``, and :mod:`sqlanon.privacy` and
  :mod:`sqlanon.metrics` only those, the hierarchy model and each other;
* there are no function-level (indented) imports of sqlanon modules, except the lazy loads listed in
  ``LAZY`` with their reason: a circle is broken by moving the shared thing down a layer, not by
  hiding the import in a function;
* ``import sqlanon.cli.app`` loads none of the heavy optional dependencies.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path
import paths

ROOT = paths.PACKAGE

#: (importing module, imported module) -> why the import is inside a function
LAZY = {
    ("sqlanon", "sqlanon.run.check"): "as below: `sqlanon.check` loads the checker on first use",
    ("sqlanon", "sqlanon.run.profile"): "as below: `sqlanon.profile` loads the profiler on first use",
    ("sqlanon", "sqlanon.run.warm_up"): "as below: `sqlanon.warm_up` loads numba and the jobs on first use",
    ("sqlanon.cli.warm_up", "sqlanon.run.warm_up"): "as below: warm-up loads numba and the run when it runs",
    ("sqlanon", "sqlanon.run.api"): "the API nouns of `import sqlanon` (anonymize, check, ...) load on first use: "
    "`import sqlanon` (and the CLI's start) stays free of duckdb, sqlglot and pyarrow",
    ("sqlanon.cli.launch", "sqlanon.cli.app"): "the console script answers `sqlanon --version` before the app (typer, rich) is imported",
    ("sqlanon.generation.itemsets", "sqlanon.generation.kernels"): "kernels compiles numba code (about 0.6 s to import numba): loaded by the generate pipeline only",
    ("sqlanon.generation.krimp", "sqlanon.generation.kernels"): "as above: numba is loaded when KRIMP runs, not when the CLI starts",
    ("sqlanon.generation.scores", "sqlanon.generation.kernels"): "as above: numba is loaded when the scores are computed",
    ("sqlanon.stats.local.base", "sqlanon.stats.local.kernels"): "as above: numba is loaded when the first node is evaluated in-process, not when the CLI starts",
    # a command's fixed cost is its own imports: building the app and any --help load no engine
    # client, numpy nor pyarrow (HEAVY below, tests/cli/test_lazy_imports.py); a command loads
    # the run's modules when it runs
    ("sqlanon.cli.app", "sqlanon.run.api"): "anonymize and sql load the run (stats, engines, numpy, pyarrow) when they run",
    ("sqlanon.cli.app", "sqlanon.run.check"): "as above: check loads the checker when it runs",
    ("sqlanon.cli.app", "sqlanon.run.profile"): "as above: profile loads the profiler when it runs",
    ("sqlanon.cli.app", "sqlanon.generation.scores"): "as above: check --against loads the scores (numpy, pyarrow) when it runs",
    ("sqlanon.cli.dbt", "sqlanon.dbt"): "as above: the dbt package's module imports the run; `dbt path` loads it when it runs",
    ("sqlanon.cli.generate", "sqlanon.generation.pipeline"): "as above: generate loads the pipeline (numpy, pyarrow) when it runs",
    ("sqlanon.cli.generate", "sqlanon.release.write"): "as above: generate loads the release writer (the stats) when it runs",
    ("sqlanon.risk.measure", "sqlanon.stats"): "the policy reads the risk options from sqlanon.risk; the stats (numpy, pyarrow) load when a table is measured",
    ("sqlanon.stats.histograms", "sqlanon.stats.local.histogram_kernels"): "the histogram kernels (numba) load when the first model node is rolled up in-process",
}

#: what each floor package may import (besides itself); privacy and metrics may import each other
FLOOR = {
    "sqlanon.expr": ("sqlanon.errors",),
    "sqlanon.dialect": ("sqlanon.errors", "sqlanon.expr"),
    "sqlanon.privacy": ("sqlanon.errors", "sqlanon.expr", "sqlanon.dialect", "sqlanon.hierarchy.model", "sqlanon.metrics"),
    "sqlanon.metrics": ("sqlanon.errors", "sqlanon.expr", "sqlanon.dialect", "sqlanon.hierarchy.model", "sqlanon.privacy"),
}

#: modules the CLI must not load when it starts (optional or slow to import)
HEAVY = ("pyspark", "psycopg", "pandas", "numba", "numpy", "pyarrow", "duckdb")


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


class _Imports(ast.NodeVisitor):
    """Every import statement of a module: (imported module, line, inside a function?)."""

    def __init__(self, name: str, is_package: bool) -> None:
        self.name = name
        self.package = name if is_package else name.rpartition(".")[0]
        self.depth = 0
        self.found: list[tuple[str, int, bool]] = []

    def _function(self, node: ast.AST) -> None:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def _add(self, target: str, line: int) -> None:
        if target == "sqlanon" or target.startswith("sqlanon."):
            self.found.append((target, line, self.depth > 0))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - (node.level - 1)]
            module = ".".join(base + ([module] if module else []))
        for alias in node.names:
            sub = f"{module}.{alias.name}"
            self._add(sub if sub in MODULES else module, node.lineno)


def _imports(name: str) -> list[tuple[str, int, bool]]:
    path = MODULES[name]
    visitor = _Imports(name, path.name == "__init__.py")
    visitor.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return visitor.found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line} over module-level imports; importing ``a.b.c`` runs the
    packages ``a`` and ``a.b`` first (edges too, unless they enclose the importer: those are
    running already)."""
    graph: dict[str, dict[str, int]] = {}
    for name in MODULES:
        edges = graph.setdefault(name, {})
        own = set(_ancestors(name))
        for target, line, lazy in _imports(name):
            if lazy or target == name:
                continue
            edges.setdefault(target, line)  # also an enclosing package: `from sqlanon import __version__`
            for parent in _ancestors(target):
                if parent not in own and parent != name:
                    edges.setdefault(parent, line)
    return graph


def _cycle(graph: dict[str, dict[str, int]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_graph_is_read():
    graph = _graph()
    assert "sqlanon.cli.app" in graph and "sqlanon.expr.atoms" in graph["sqlanon.stats.core"]
    # `from sqlanon.expr.atoms import col` runs sqlanon.expr first
    assert "sqlanon.expr" in graph["sqlanon.stats.core"]
    assert _cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b": 1}, "b": {}}) is None


def test_no_import_cycles():
    graph = _graph()
    cycle = _cycle(graph)
    if cycle:
        steps = [f"{a} imports {b} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
        raise AssertionError("import cycle:\n  " + "\n  ".join(steps))


def test_the_sql_floor_imports_nothing_above_it():
    bad = []
    for name in MODULES:
        package = next((p for p in FLOOR if name == p or name.startswith(p + ".")), None)
        if package is None:
            continue
        allowed = (package, *FLOOR[package])
        for target, line, _lazy in _imports(name):
            if not any(target == a or target.startswith(a + ".") for a in allowed):
                bad.append(f"{name}:{line} imports {target}")
    assert not bad, "the SQL floor imports above itself:\n  " + "\n  ".join(bad)


def test_imports_are_at_module_level():
    bad, used = {}, set()
    for name in MODULES:
        for target, line, lazy in _imports(name):
            if not lazy:
                continue
            if (name, target) in LAZY:
                used.add((name, target))
            else:
                bad[f"{MODULES[name].relative_to(ROOT.parent)}:{line} imports {target} inside a function"] = 1
    assert not bad, f"{len(bad)} function-level imports of sqlanon modules (move them to the top; break a circle by moving the shared thing down):\n  " + "\n  ".join(bad)
    assert used == set(LAZY), f"allowed lazy imports that no longer exist (drop them from LAZY): {sorted(set(LAZY) - used)}"


def test_the_cli_loads_no_heavy_dependency():
    code = f"import sys, sqlanon.cli.app; print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(ROOT.parent) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "", f"import sqlanon.cli.app loads {out.stdout.strip()}"
