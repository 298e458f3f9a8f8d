"""What the DEBUG log (logger ``sqlanon.sql``) shows of a statement an engine runs: its text with
every string and number literal replaced by ``?``, since literals are where a statement carries
the table's values (a hierarchy's leaves inlined in a mapping table, a value compared against,
a band's edges). ``SQLANON_LOG_SQL=full`` in the environment logs statements verbatim instead: a
debugging aid for the data's owner, never a log to pass on.

>>> from sqlglot import exp
>>> q = exp.select("zip").from_("t").where(exp.column("zip").eq(exp.Literal.string("01234")))
>>> logged_text(q, "duckdb", environ={})
'SELECT zip FROM t WHERE zip = ?'
>>> logged_text(q, "duckdb", environ={"SQLANON_LOG_SQL": "full"})
"SELECT zip FROM t WHERE zip = '01234'"
>>> logged_text("SELECT CAST(a AS DECIMAL(10, 2)) FROM t WHERE b IN (1, 'x')", "duckdb", environ={})
'SELECT CAST(a AS DECIMAL(10, 2)) FROM t WHERE b IN (?, ?)'
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

#: the environment variable that asks for statements verbatim in the DEBUG log
FULL_ENV = "SQLANON_LOG_SQL"
#: its value that does
FULL = "full"


def verbatim(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the DEBUG log shows statements as they run (``SQLANON_LOG_SQL=full``)."""
    value = (os.environ if environ is None else environ).get(FULL_ENV, "")
    return str(value).strip().lower() == FULL


def _hide(node: exp.Expr) -> exp.Expr:
    """A literal as ``?``; the literals of a type (``DECIMAL(10, 2)``) are no data and stay."""
    if isinstance(node, exp.Literal) and not isinstance(node.parent, exp.DataTypeParam):
        return exp.var("?")  # a placeholder would read %s on PostgreSQL
    return node


def redacted(expression: exp.Expr, dialect: str | None) -> str:
    """``expression`` rendered with its literals as ``?`` (the tree itself is left as it was)."""
    return expression.transform(_hide, copy=True).sql(dialect=dialect or None)


def logged_text(expression: exp.Expr | str, dialect: str | None, environ: Mapping[str, str] | None = None) -> str:
    """What the log shows of ``expression`` (a tree, or a statement's text as it was run)."""
    if verbatim(environ):
        return expression if isinstance(expression, str) else expression.sql(dialect=dialect or None)
    if isinstance(expression, exp.Expr):
        return redacted(expression, dialect)
    try:
        trees = sqlglot.parse(expression, read=dialect or None)
    except (sqlglot.errors.ParseError, sqlglot.errors.TokenError):
        trees = []
    if not trees or any(t is None for t in trees):
        return f"(a statement of {len(expression):,} characters that does not parse: withheld; {FULL_ENV}={FULL} shows it)"
    return "; ".join(redacted(t, dialect) for t in trees if t is not None)
