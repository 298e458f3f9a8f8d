"""sqlglot expressions evaluated over numpy columns: a node's class table held in-process.

The in-process model route (:mod:`sqlanon.stats.histograms`) computes each class's columns
(``cnt``, the models' aggregates, the metric's parts, ``ok``) as numpy arrays; the requirement's
predicate and the finals stay the sqlglot expressions every SQL route runs, evaluated here with
SQL's arithmetic on doubles (``/`` a true division, ``LN``, ``ABS``, numeric casts, ``CASE``).
:func:`evaluable` says whether an expression uses only what is known here (otherwise the route
refuses and SQL answers).

>>> from sqlglot import parse_one
>>> cols = {"cnt": np.array([1, 5, 9]), "distinct_s": np.array([1, 2, 2])}
>>> ok = parse_one("cnt >= 5 AND distinct_s >= 2")
>>> evaluable(ok), value(ok, cols).tolist()
(True, [False, True, True])
>>> cols["ok"] = value(ok, cols)
>>> aggregate(parse_one("SUM(CASE WHEN ok THEN 0 ELSE cnt END)"), cols), aggregate(parse_one("COUNT(*)"), cols)
(1, 3)
>>> evaluable(parse_one("ROW_NUMBER() OVER (ORDER BY cnt)"))
False
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sqlglot import exp

Cols = dict[str, Any]

_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    exp.GTE: np.greater_equal, exp.GT: np.greater, exp.LTE: np.less_equal, exp.LT: np.less, exp.EQ: np.equal, exp.NEQ: np.not_equal,
}
_ARITH: dict[type, Callable[[Any, Any], Any]] = {exp.Add: np.add, exp.Sub: np.subtract, exp.Mul: np.multiply}
_AGGREGATES = (exp.Sum, exp.Count, exp.Min, exp.Max)


def _literal(e: exp.Literal) -> Any:
    if e.is_string:
        raise ValueError("a string literal")
    text = str(e.this)
    return float(text) if any(ch in text for ch in ".eE") else int(text)


def _cast(e: exp.Cast, cols: Cols) -> Any:
    inner = value(e.this, cols)
    to = e.args["to"]
    if to.is_type(*exp.DataType.INTEGER_TYPES):
        return np.asarray(inner).astype(np.int64)
    if to.is_type(*exp.DataType.NUMERIC_TYPES):
        return np.asarray(inner, dtype=np.float64)
    raise ValueError(f"a cast to {to.sql()}")


def _case(e: exp.Case, cols: Cols) -> Any:
    if e.this is not None:
        raise ValueError("a CASE on a value")
    default = e.args.get("default")
    out = value(default, cols) if default is not None else None
    if out is None:
        raise ValueError("a CASE without ELSE")
    for branch in reversed(e.args.get("ifs") or []):
        out = np.where(value(branch.this, cols), value(branch.args["true"], cols), out)
    return out


def _binary(e: exp.Expr, cols: Cols) -> Any:
    a, b = value(e.this, cols), value(e.expression, cols)
    kind = type(e)
    if kind in _COMPARE:
        return _COMPARE[kind](a, b)
    if kind in _ARITH:
        return _ARITH[kind](a, b)
    if kind is exp.Div:
        return np.true_divide(a, b)
    if kind is exp.And:
        return np.logical_and(a, b)
    if kind is exp.Or:
        return np.logical_or(a, b)
    raise ValueError(f"{kind.__name__}")


def _unary(e: exp.Expr, cols: Cols) -> Any:
    kind = type(e)
    inner = value(e.this, cols)
    if kind is exp.Paren:
        return inner
    if kind is exp.Neg:
        return np.negative(inner)
    if kind is exp.Not:
        return np.logical_not(inner)
    if kind is exp.Ln:
        return np.log(np.asarray(inner, dtype=np.float64))
    if kind is exp.Abs:
        return np.abs(inner)
    raise ValueError(f"{kind.__name__}")


_UNARY = (exp.Paren, exp.Neg, exp.Not, exp.Ln, exp.Abs)
_BINARY = (*_COMPARE, *_ARITH, exp.Div, exp.And, exp.Or)


def value(e: exp.Expr, cols: Cols) -> Any:
    """``e`` per class: a numpy array (or a scalar for a constant); ValueError for what is not known."""
    if isinstance(e, exp.Column):
        if e.table or e.name not in cols:
            raise ValueError(f"column {e.sql()}")
        return cols[e.name]
    if isinstance(e, exp.Literal):
        return _literal(e)
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Cast):
        return _cast(e, cols)
    if isinstance(e, exp.Case):
        return _case(e, cols)
    if isinstance(e, exp.If):
        return np.where(value(e.this, cols), value(e.args["true"], cols), value(e.args["false"], cols))
    if isinstance(e, _UNARY):
        return _unary(e, cols)
    if isinstance(e, _BINARY):
        return _binary(e, cols)
    raise ValueError(f"{type(e).__name__}")


def _scalar(x: Any) -> Any:
    x = np.asarray(x).item() if np.ndim(x) == 0 else x
    return int(x) if isinstance(x, (bool, np.bool_)) else x


def aggregate(e: exp.Expr, cols: Cols) -> Any:
    """A final over the classes (``SUM``, ``COUNT(*)``, ``MIN``, ``MAX``, or arithmetic on them) as a Python number."""
    n = len(cols["cnt"])
    if isinstance(e, exp.Paren):
        return aggregate(e.this, cols)
    if isinstance(e, exp.Count):
        if not isinstance(e.this, exp.Star) or e.args.get("distinct"):
            raise ValueError("COUNT of a value")
        return n
    if isinstance(e, (exp.Sum, exp.Min, exp.Max)):
        v = np.broadcast_to(np.asarray(value(e.this, cols)), (n,))
        if not n:
            return None
        got = v.sum() if isinstance(e, exp.Sum) else v.min() if isinstance(e, exp.Min) else v.max()
        return _scalar(got.item())
    if isinstance(e, (exp.Literal, exp.Boolean)) or type(e) in _ARITH or isinstance(e, (exp.Div, exp.Cast, exp.Neg)):
        # arithmetic over aggregates: each aggregate reduced first
        return _scalar(value(_reduced(e, cols), {}))
    raise ValueError(f"{type(e).__name__}")


def _reduced(e: exp.Expr, cols: Cols) -> exp.Expr:
    """``e`` with each aggregate inside replaced by its value as a literal."""
    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, _AGGREGATES):
            got = aggregate(node, cols)
            return exp.Null() if got is None else exp.Literal.number(got)
        return node
    return e.transform(swap, copy=True)


def evaluable(e: exp.Expr) -> bool:
    """Whether every node of ``e`` is one :func:`value` / :func:`aggregate` knows."""
    known = (exp.Column, exp.Literal, exp.Boolean, exp.Cast, exp.Case, exp.If, exp.Star, exp.DataType, exp.Identifier, *_UNARY, *_BINARY, *_AGGREGATES)
    for node in e.walk():
        if not isinstance(node, known):
            return False
        if isinstance(node, exp.Literal) and node.is_string:
            return False
        if isinstance(node, exp.DataType) and not node.is_type(*exp.DataType.NUMERIC_TYPES):
            return False
        if isinstance(node, (exp.Sum, exp.Count, exp.Min, exp.Max)) and node.args.get("distinct"):
            return False
    return True


# ---------------------------------------------------------------------------------------------
# compiled once: the same evaluation as closures (no walk of the sqlglot tree per node)

Fn = Callable[[Cols], Any]


def compiled(e: exp.Expr) -> Fn:
    """``e`` as a function of the columns giving what :func:`value` gives (the tree read once:
    a search evaluates the same predicate over every node's classes).

    >>> from sqlglot import parse_one
    >>> cols = {"cnt": np.array([1, 5, 9]), "s": np.array([1.0, 2.0, 2.5])}
    >>> e = parse_one("CASE WHEN cnt >= 5 THEN LN(CAST(s AS DOUBLE)) / 2 ELSE -1 END")
    >>> compiled(e)(cols).tolist() == value(e, cols).tolist()
    True
    """
    if isinstance(e, exp.Column):
        if e.table:
            raise ValueError(f"column {e.sql()}")
        name = e.name
        return lambda cols: cols[name]
    if isinstance(e, (exp.Literal, exp.Boolean)):
        const = value(e, {})
        return lambda cols: const
    if isinstance(e, exp.Cast):
        return _compiled_cast(e)
    if isinstance(e, exp.Case):
        return _compiled_case(e)
    if isinstance(e, exp.If):
        c, t, f = compiled(e.this), compiled(e.args["true"]), compiled(e.args["false"])
        return lambda cols: np.where(c(cols), t(cols), f(cols))
    if isinstance(e, _UNARY):
        return _compiled_unary(e)
    if isinstance(e, _BINARY):
        a, b = compiled(e.this), compiled(e.expression)
        op = _BINARY_OPS[type(e)]
        return lambda cols: op(a(cols), b(cols))
    raise ValueError(f"{type(e).__name__}")


_BINARY_OPS: dict[type, Callable[[Any, Any], Any]] = {**_COMPARE, **_ARITH, exp.Div: np.true_divide, exp.And: np.logical_and, exp.Or: np.logical_or}


def _compiled_cast(e: exp.Cast) -> Fn:
    inner = compiled(e.this)
    to = e.args["to"]
    if to.is_type(*exp.DataType.INTEGER_TYPES):
        return lambda cols: np.asarray(inner(cols)).astype(np.int64)
    if to.is_type(*exp.DataType.NUMERIC_TYPES):
        return lambda cols: np.asarray(inner(cols), dtype=np.float64)
    raise ValueError(f"a cast to {to.sql()}")


def _compiled_case(e: exp.Case) -> Fn:
    if e.this is not None:
        raise ValueError("a CASE on a value")
    default = e.args.get("default")
    if default is None:
        raise ValueError("a CASE without ELSE")
    out = compiled(default)
    for branch in reversed(e.args.get("ifs") or []):
        out = _where(compiled(branch.this), compiled(branch.args["true"]), out)
    return out


def _where(c: Fn, t: Fn, f: Fn) -> Fn:
    return lambda cols: np.where(c(cols), t(cols), f(cols))


def _compiled_unary(e: exp.Expr) -> Fn:
    inner = compiled(e.this)
    kind = type(e)
    if kind is exp.Paren:
        return inner
    if kind is exp.Ln:
        return lambda cols: np.log(np.asarray(inner(cols), dtype=np.float64))
    op = _UNARY_OPS[kind]
    return lambda cols: op(inner(cols))


_UNARY_OPS: dict[type, Callable[[Any], Any]] = {exp.Neg: np.negative, exp.Not: np.logical_not, exp.Abs: np.abs}


def compiled_aggregate(e: exp.Expr) -> Fn:
    """A final as a function of the columns giving what :func:`aggregate` gives.

    >>> from sqlglot import parse_one
    >>> cols = {"cnt": np.array([1, 5, 9]), "ok": np.array([False, True, True])}
    >>> e = parse_one("SUM(CASE WHEN ok THEN 0 ELSE cnt END) / CAST(COUNT(*) AS DOUBLE) + MAX(cnt)")
    >>> compiled_aggregate(e)(cols) == aggregate(e, cols)
    True
    """
    if isinstance(e, exp.Paren):
        return compiled_aggregate(e.this)
    if isinstance(e, exp.Count):
        _count_star(e)
        return lambda cols: len(cols["cnt"])
    if isinstance(e, (exp.Sum, exp.Min, exp.Max)):
        inner = compiled(e.this)
        reduce = np.sum if isinstance(e, exp.Sum) else np.min if isinstance(e, exp.Min) else np.max

        def reduced(cols: Cols) -> Any:
            n = len(cols["cnt"])
            if not n:
                return None
            return _scalar(reduce(np.broadcast_to(np.asarray(inner(cols)), (n,))).item())
        return reduced
    if _over_aggregates(e):
        body, parts = _template(e, compiled_aggregate)

        def arithmetic(cols: Cols) -> Any:
            got = {f"__agg{i}": p(cols) for i, p in enumerate(parts)}
            if any(v is None for v in got.values()):
                return aggregate(e, cols)  # a NULL inside: the tree's own way
            return _scalar(body(got))
        return arithmetic
    raise ValueError(f"{type(e).__name__}")


def _count_star(e: exp.Count) -> None:
    """ValueError unless ``e`` is ``COUNT(*)`` (the only count known here)."""
    if not isinstance(e.this, exp.Star) or e.args.get("distinct"):
        raise ValueError("COUNT of a value")


def _over_aggregates(e: exp.Expr) -> bool:
    """Whether ``e`` is a constant or arithmetic whose operands are aggregates (or constants)."""
    return isinstance(e, (exp.Literal, exp.Boolean)) or type(e) in _ARITH or isinstance(e, (exp.Div, exp.Cast, exp.Neg))


def _template(e: exp.Expr, compile_one: Callable[[exp.Expr], Any]) -> tuple[Fn, list]:
    """``e`` compiled with each aggregate inside read from a column ``__aggN``, and the
    aggregates compiled by ``compile_one``, in that order."""
    parts: list = []

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, _AGGREGATES):
            parts.append(compile_one(node))
            return exp.column(f"__agg{len(parts) - 1}")
        return node
    return compiled(e.transform(swap, copy=True)), parts


# ---------------------------------------------------------------------------------------------
# finals of many nodes at once: each node's classes a run of rows of the same columns

Segments = Callable[[Cols, Any, Any], list]


def compiled_segments(e: exp.Expr) -> Segments:
    """A final as a function ``(columns, starts, sizes)`` giving, per node, what
    :func:`compiled_aggregate` gives over that node's classes (node ``j``'s classes the rows
    ``starts[j]:starts[j] + sizes[j]`` of the columns, none empty): the columns computed once
    for a whole round of nodes. Integer sums, MIN, MAX and COUNT reduce every node at once;
    a sum of doubles is summed node by node as numpy sums one node's array (the same bits).

    >>> from sqlglot import parse_one
    >>> cols = {"cnt": np.array([1, 5, 9, 2]), "ok": np.array([False, True, True, False])}
    >>> e = parse_one("SUM(CASE WHEN ok THEN 0 ELSE cnt END) / CAST(COUNT(*) AS DOUBLE) + MAX(cnt)")
    >>> starts, sizes = np.array([0, 1]), np.array([1, 3])
    >>> compiled_segments(e)(cols, starts, sizes) == [compiled_aggregate(e)({k: v[a:a + n] for k, v in cols.items()}) for a, n in zip(starts, sizes)]
    True
    """
    if isinstance(e, exp.Paren):
        return compiled_segments(e.this)
    if isinstance(e, exp.Count):
        _count_star(e)
        return lambda cols, starts, sizes: sizes.tolist()
    if isinstance(e, (exp.Sum, exp.Min, exp.Max)):
        inner = compiled(e.this)
        ufunc = np.add if isinstance(e, exp.Sum) else np.minimum if isinstance(e, exp.Min) else np.maximum

        def reduced(cols: Cols, starts, sizes) -> list:
            v = np.broadcast_to(np.asarray(inner(cols)), (len(cols["cnt"]),))
            if v.dtype == np.bool_:
                v = v.astype(np.int64)
            if ufunc is np.add and v.dtype.kind == "f":
                return [v[a:a + n].sum().item() for a, n in zip(starts.tolist(), sizes.tolist())]
            return ufunc.reduceat(v, starts).tolist()
        return reduced
    if _over_aggregates(e):
        body, parts = _template(e, compiled_segments)

        def arithmetic(cols: Cols, starts, sizes) -> list:
            got = {f"__agg{i}": np.asarray(p(cols, starts, sizes)) for i, p in enumerate(parts)}
            out = np.broadcast_to(np.asarray(body(got)), (len(sizes),)).tolist()
            return [int(x) if isinstance(x, bool) else x for x in out]
        return arithmetic
    raise ValueError(f"{type(e).__name__}")
