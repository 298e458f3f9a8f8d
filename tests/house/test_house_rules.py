"""The house's size and layering rules, read from the source (nothing is imported):

* no module of ``sqlanon/`` is over :data:`MAX_LINES` lines (a longer one holds more than one
  concept: split it by meaning);
* no module imports its own package's front door (``from sqlanon.stats import batch`` inside
  ``sqlanon/stats/``) where that ``__init__`` imports the package's modules to hand their names on:
  a module that imports it back closes a circle through the face (import the sibling by its own
  path, ``from sqlanon.stats.batch import ...`` or ``import sqlanon.stats.batch as batch``);
* the rooms below the policy never import it: :mod:`sqlanon.config` (what a run is told) names
  the registries of searches, metrics, privacy models and engines, so it stands above them, and
  only the rooms that write or run a policy (``profiling``, ``run``, ``cli``, ``dbt``) import it;
* no package-level circle: the graph of rooms (``sqlanon.<room>``) drawn by module-level imports
  has no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import paths
import test_imports

PACKAGE: Path = paths.PACKAGE
MAX_LINES = 800
#: the rooms that write or run a policy and may import sqlanon.config
ABOVE_CONFIG = ("config", "profiling", "run", "cli", "dbt")


MODULES: dict[str, Path] = test_imports.MODULES  # every module of sqlanon/ by dotted name


def _imports(name: str) -> list[tuple[str, list[str], int]]:
    """``(module imported, names taken from it, line)`` of every sqlanon import of module ``name``,
    with relative imports resolved; imports under ``if TYPE_CHECKING:`` are left out."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            if base == "sqlanon" or base.startswith("sqlanon."):
                out.append((base, [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Import):
            out += [(a.name, [], node.lineno) for a in node.names if a.name == "sqlanon" or a.name.startswith("sqlanon.")]
    return out


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_no_module_is_over_the_line_limit():
    long = sorted(f"{path.relative_to(PACKAGE.parent)}: {n} lines" for path in PACKAGE.rglob("*.py") if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES)
    assert len(MODULES) > 100
    assert not long, f"modules over {MAX_LINES} lines (split them by concept):\n  " + "\n  ".join(long)


def _faces() -> set[str]:
    """The packages whose ``__init__`` imports modules of their own (a face handing names on)."""
    return {name for name, path in MODULES.items() if path.name == "__init__.py" and any(t.startswith(name + ".") for t, _n, _l in _imports(name))}


FACES = _faces()


def test_no_module_imports_its_own_package_face():
    bad = []
    for name, path in MODULES.items():
        parts = name.split(".")
        own = {".".join(parts[:i]) for i in range(2, len(parts) if path.name != "__init__.py" else len(parts))} & FACES
        for target, names, line in _imports(name):
            if target in own:
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {', '.join(names) or target} through its own package's __init__ ({target})")
    assert not bad, "imports through the package face (a circle with its __init__; import the module by its own path):\n  " + "\n  ".join(bad)


def test_the_rooms_below_the_policy_do_not_import_it():
    bad = []
    for name, path in MODULES.items():
        room = _room(name)
        if room in ABOVE_CONFIG or room is None:
            continue
        for target, _names, line in _imports(name):
            if target == "sqlanon.config" or target.startswith("sqlanon.config."):
                bad.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    assert not bad, "modules below sqlanon.config importing it (move the shared thing down, e.g. to sqlanon.files):\n  " + "\n  ".join(bad)


def _room_graph() -> dict[str, dict[str, str]]:
    graph: dict[str, dict[str, str]] = {}
    for name, path in MODULES.items():
        room = _room(name)
        if room is None or path.name == "__init__.py" and name.count(".") == 0:
            continue
        for target, _names, line in _imports(name):
            other = _room(target)
            if other is not None and other != room:
                graph.setdefault(room, {}).setdefault(other, f"{path.relative_to(PACKAGE.parent)}:{line}")
    return graph


def test_the_rooms_have_no_circle():
    graph = _room_graph()
    assert "stats" in graph and "expr" in graph["stats"]
    cycles = []
    for start in sorted(graph):
        # a path from one of start's targets back to start closes a circle
        for first, where in graph[start].items():
            seen, todo = {first}, [(first, [f"{start} -> {first} ({where})"])]
            while todo:
                node, path = todo.pop()
                for nxt, why in graph.get(node, {}).items():
                    if nxt == start:
                        cycles.append(" ; ".join(path + [f"{node} -> {start} ({why})"]))
                        todo = []
                        break
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append((nxt, path + [f"{node} -> {nxt} ({why})"]))
    assert not cycles, "rooms importing each other in a circle:\n  " + "\n  ".join(sorted(set(cycles))[:20])
