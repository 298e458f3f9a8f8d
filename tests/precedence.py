"""Does a rendered statement mean the tree that was built? sqlglot renders a tree as it is, without
the parentheses operator precedence needs: ``Div(Add(a, b), c)`` renders ``a + b / c`` in DuckDB and
Spark. Every golden statement is checked (tests/dialect/test_golden_sql.py), and with
``SQLANON_CHECK_PRECEDENCE=1`` every statement the suite renders (tests/conftest.py)."""

from __future__ import annotations

import sqlglot
from sqlglot import exp


def _without_parens(tree: exp.Expression) -> exp.Expression:
    tree = tree.copy()
    for paren in list(tree.find_all(exp.Paren)):
        paren.replace(paren.this)
    return tree


def _operators_parenthesized(tree: exp.Expression) -> exp.Expression:
    tree = tree.copy()
    operator = (exp.Binary, exp.Unary)
    for node in [n for n in tree.find_all(operator) if isinstance(n.parent, operator)]:
        if isinstance(node, (exp.Paren, exp.Dot)) or isinstance(node.parent, (exp.Paren, exp.Dot)):
            continue
        paren = exp.Paren()
        node.replace(paren)
        paren.set("this", node)
    return tree


def assert_precedence_kept(tree: exp.Expression, render, dialect: str) -> None:
    """The rendered text means the tree that was built. sqlglot renders a tree as it is, without
    the parentheses operator precedence needs (``Div(Add(a, b), c)`` renders ``a + b / c``), so the
    text is parsed back and compared, parentheses aside, with the rendering of a copy of the tree
    in which every operator under another operator is parenthesized."""
    as_rendered = sqlglot.parse_one(render(tree), read=dialect)
    as_built = sqlglot.parse_one(render(_operators_parenthesized(tree)), read=dialect)
    assert _without_parens(as_rendered) == _without_parens(as_built), f"{dialect}: the rendered SQL does not mean the built tree (missing parentheses?):\n{render(tree)}"
