"""Join keys for NULL: SQL never matches ``NULL = NULL``, and ``IS NOT DISTINCT FROM`` is no hash
join on PostgreSQL, so where a release joins a source value or a released label that may be NULL
(the NULL leaf of :class:`sqlanon.hierarchy.model.Hierarchy`), both sides are coalesced to
:data:`sqlanon.hierarchy.model.NULL_KEY`, which no leaf may be.

>>> from sqlglot import exp
>>> h = Hierarchy("zip", [["1", "*"]]).with_null_leaf()
>>> leaf_key(h, exp.column("zip")).sql("duckdb")
"COALESCE(CAST(zip AS TEXT), '\\x1fsqlanon:NULL\\x1f')"
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from sqlanon.expr.atoms import as_varchar, lit
from sqlanon.hierarchy.model import NULL_KEY, Hierarchy


def leaf_keys(h: Hierarchy) -> list[str]:
    """A mapping table's ``leaf`` column: the leaves, the NULL leaf as :data:`NULL_KEY`."""
    return [NULL_KEY if leaf is None else leaf for leaf in h.leaves]


def leaf_key(h: Hierarchy, value: exp.Expr) -> exp.Expr:
    """A source value as the text it joins :func:`leaf_keys` on (coalesced when ``h`` has a NULL leaf)."""
    text = as_varchar(value)
    return exp.Coalesce(this=text, expressions=[lit(NULL_KEY)]) if h.has_null else text


def null_keyed(labels: Sequence, value: exp.Expr) -> exp.Expr:
    """``value`` (a released label), NULL as :data:`NULL_KEY` when ``labels`` hold NULL (a
    hierarchy's leaves, or a level's labels): both sides of a join on labels go through it."""
    if None not in labels:
        return value
    return exp.Coalesce(this=value, expressions=[lit(NULL_KEY)])


def null_as_key(value: exp.Expr) -> exp.Expr:
    """A sensitive or class value as text, NULL as :data:`NULL_KEY`: a value of its own, which
    ``COUNT(DISTINCT ..)`` and ``GROUP BY`` then count like any other."""
    return exp.Coalesce(this=as_varchar(value), expressions=[lit(NULL_KEY)])
