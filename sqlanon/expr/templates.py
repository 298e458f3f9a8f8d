"""Fixed-shape SQL lives in ``sql/*.sql`` (shipped inside the wheel as ``sqlanon/sql``); this module
loads a template, parses it with sqlglot and fills its ``:name`` placeholders with expressions."""

from __future__ import annotations

import functools
import os

import sqlglot
from sqlglot import exp
from sqlanon.expr.atoms import lit

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: the wheel's ``sqlanon/sql``, then the source tree's ``sql/`` beside the package
_DIRS = [os.path.join(_PACKAGE, "sql"), os.path.join(os.path.dirname(_PACKAGE), "sql")]


@functools.cache
def _text(name: str) -> str:
    for d in _DIRS:
        path = os.path.join(d, name + ".sql")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                return fh.read()
    raise FileNotFoundError(f"SQL template {name}.sql not found in {_DIRS}")


def template(name: str, **values) -> exp.Expr:
    """Parse ``sql/<name>.sql`` and replace placeholders; plain Python values become literals."""
    tree = sqlglot.parse_one(_text(name), read="duckdb")

    filled = {k: v if isinstance(v, exp.Expression) else lit(v) for k, v in values.items()}
    return exp.replace_placeholders(tree, **filled)
