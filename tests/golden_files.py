"""The golden SQL files: per dialect, a few files grouped by statistic family
(``tests/golden/<dialect>/<family>.sql``), each holding several cases, every case under a title line
``-- name: <case>`` followed by its pretty-printed statement(s). Read and rewritten by
``tests/dialect/test_golden_sql.py`` (``SQLANON_UPDATE_GOLDEN=1`` rewrites a case in place, the file's
other cases kept)."""

from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path

from paths import GOLDEN

#: a case's family (its file), by the first prefix of its name that matches; the rest are "base"
FAMILIES = (
    ("node_batch", "batch"),
    ("node_", "node"),
    ("bottom_up_", "bottom_up"),
    ("genetic_", "genetic"),
    ("release_", "release"),
    ("itemsets_", "itemsets"),
    ("top_down_", "top_down"),
)

#: what each family file holds, its first line
TITLES = {
    "base": "the source and the base frequency set: the base scan, class labels, grouped sums, pair counts, SafePub's sample",
    "node": "one lattice node, one statement: each privacy model's predicate and each metric's aggregates",
    "batch": "many lattice nodes in one statement (sqlanon/stats/batch.py)",
    "bottom_up": "the bottom-up search's statements (sqlanon/search/bottom_up/stats.py)",
    "genetic": "the genetic search's batched fitness (sqlanon/search/genetic/stats.py)",
    "release": "the release query (sqlanon/release/write.py)",
    "itemsets": "the KRIMP itemset miner's statements",
    "top_down": "the top-down search's lossy-join statistics (sqlanon/search/top_down/stats.py)",
}

TITLE = re.compile(r"^-- name: (\S+)\n", re.MULTILINE)


def family(name: str) -> str:
    return next((fam for prefix, fam in FAMILIES if name.startswith(prefix)), "base")


def path_of(dialect: str, name: str) -> Path:
    return GOLDEN / dialect / f"{family(name)}.sql"


def parse(text: str) -> dict[str, str]:
    """``{case: statement text}`` of one family file (the lines before the first title are its
    header). A case's text ends with one newline; cases are parted by one blank line."""
    parts = TITLE.split(text)
    return {name: body.rstrip("\n") + "\n" for name, body in zip(parts[1::2], parts[2::2])}


def render(fam: str, dialect: str, cases: dict[str, str]) -> str:
    header = f"-- golden SQL ({dialect}): {TITLES[fam]}\n-- regenerate: SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py\n\n"
    return header + "\n".join(f"-- name: {name}\n{cases[name]}" for name in sorted(cases))


def cases_in(dialect: str) -> dict[str, str]:
    """Every case of a dialect, from all its family files."""
    out: dict[str, str] = {}
    for path in sorted((GOLDEN / dialect).glob("*.sql")):
        out.update(parse(path.read_text(encoding="utf-8")))
    return out


def read(dialect: str, name: str) -> str | None:
    path = path_of(dialect, name)
    if not path.exists():
        return None
    return parse(path.read_text(encoding="utf-8")).get(name)


def write(dialect: str, name: str, text: str) -> None:
    """Set one case in its family file, the dialect's folder locked while the file is read and
    rewritten (under pytest-xdist several workers rewrite the same file)."""
    path = path_of(dialect, name)
    path.parent.mkdir(exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        cases = parse(path.read_text(encoding="utf-8")) if path.exists() else {}
        cases[name] = text
        path.write_text(render(family(name), dialect, cases), encoding="utf-8")
    finally:
        os.close(folder)  # and the lock with it


def check(dialect: str, name: str, text: str, update: bool) -> None:
    """``text`` is the golden case ``name`` of ``dialect`` (after writing it, when updating)."""
    if update:
        write(dialect, name, text)
    path = path_of(dialect, name)
    expected = read(dialect, name)
    assert expected is not None, f"missing golden case {name!r} in {path}; run SQLANON_UPDATE_GOLDEN=1 pytest tests/dialect/test_golden_sql.py"
    assert text == expected, f"{name} ({dialect}): generated SQL differs from its case in {path} (SQLANON_UPDATE_GOLDEN=1 to accept)"
