"""No measured figure in the package's comments and docstrings: a timing or a size measured once
("3.3x slower", "1.1 s at 10M rows", "13.7 GB") goes stale where nobody re-measures it, so it
lives in ``docs/measurements.md`` (with what it measured and the constant or function it
justifies) and the code keeps a short reason and a pointer ``(docs/measurements.md)``.

Read from the source with :mod:`tokenize` and :mod:`ast` (comments, and the docstrings of modules,
classes and functions; other strings, such as help texts and messages, are not looked at). What is
not a measurement is left out: a figure in quotes or double backticks (``500MB``, a unit's example),
a doctest line, a decade (``1980s``), and the few phrases of :data:`ALLOWED`."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import paths

#: a number and a unit of time, size or ratio: ``0.4 s``, ``30 ms``, ``2 min``, ``83 MB``, ``3x``,
#: ``4 times faster``
FIGURE = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?(?:\s?(?:ms|µs|us|s|sec|seconds|min|minutes|MiB|MB|GB|GiB|KiB|kB|KB|TB)\b|x\b|\s(?:times|×)\s(?:faster|slower))"
)
#: spans that are not prose: quoted or backticked text, a decade
NOT_PROSE = re.compile(r"``[^`]*``|`[^`]*`|'[^']*'|\"[^\"]*\"|\b\d{4}s\b")

#: (file, phrase): figures that are not measurements (arithmetic on a layout, a setting, a rule)
ALLOWED: set[tuple[str, str]] = {
    ("sqlanon/search/genetic/local.py", "4,096 codes and losses, 64 KB"),  # 4,096 x 16 bytes
    ("sqlanon/search/lightning/planner.py", "(> 0 seconds)"),  # an option's constraint
    ("sqlanon/stats/batch.py", "inside a 1 GB memory limit"),  # a memory limit a user sets
    ("sqlanon/stats/local/base.py", "int32 each: 80 MB"),  # 20M codes x 4 bytes
    ("sqlanon/stats/local/base.py", "250K rows of 24 QIs: 25 MB fetched, 50 MB of roll-ups"),  # the same arithmetic
    ("sqlanon/stats/local/sets.py", "1.6M rows: ~0.9 GB"),  # 16 threads x 1.6M rows x 36 bytes
    ("sqlanon/stats/pages.py", "on every array of 4 MiB"),  # NumPy's threshold for huge pages
    ("sqlanon/stats/store.py", "than at 2x"),  # the rule compared, PARTIAL_GAIN against 2
    ("sqlanon/stats/store.py", "4x smaller than"),  # the rule itself (PARTIAL_GAIN)
}

def prose(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring line of a module, doctest lines left out."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = node.body[0] if node.body else None
            if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
                in_doctest = False
                for i, line in enumerate(doc.value.value.splitlines()):
                    stripped = line.strip()
                    in_doctest = stripped.startswith((">>>", "...")) or (in_doctest and bool(stripped))
                    if not in_doctest:
                        yield doc.lineno + i, line


def figures(path: Path) -> Iterator[tuple[int, str, str]]:
    rel = path.relative_to(paths.ROOT).as_posix()
    for line, text in prose(path):
        for fig in found_in(text):
            if not any(rel == f and phrase in text for f, phrase in ALLOWED):
                yield line, fig, text.strip()


def all_figures() -> dict[str, list[tuple[int, str, str]]]:
    out = {}
    for path in sorted(paths.PACKAGE.rglob("*.py")):
        found = list(figures(path))
        if found:
            out[path.relative_to(paths.ROOT).as_posix()] = found
    return out


def test_no_measured_figure_in_comments_or_docstrings():
    found = all_figures()
    assert not found, "measured figures in comments or docstrings (move them to docs/measurements.md):\n" + "\n".join(
        f"{f}:{line}: {fig!r} in {text[:120]!r}" for f, hits in found.items() for line, fig, text in hits
    )


def found_in(text: str) -> list[str]:
    return [m.group(0) for m in FIGURE.finditer(NOT_PROSE.sub(" ", text))]


def test_the_check_sees_a_figure_and_leaves_units_alone(tmp_path):
    path = tmp_path / "sample.py"
    path.write_text('"""Measured: 3.3x slower, 1.1 s at 10M rows.\n\n>>> parse("500MB")\n500000000\n"""\n# a ``1GB`` limit, the 1980s, 13.7 GB of RAM\n', encoding="utf-8")
    assert [fig for _line, text in prose(path) for fig in found_in(text)] == ["13.7 GB", "3.3x", "1.1 s"]
