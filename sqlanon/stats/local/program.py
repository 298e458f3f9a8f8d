"""The compiler from a sqlglot predicate and aggregates to a kernel program.

The requirement's ``ok`` predicate and the metric's final aggregates are sqlglot expressions;
:func:`compile_program` turns them into sums over the classes of an atom (1, ``cnt``,
``cnt * cnt`` or a metric part) under a condition on ``cnt`` (an interval, or its complement), or
refuses (None: the node goes to SQL). Golden examples, expression in, program piece out (a
condition is ``(lo, hi, negated)`` on ``cnt``; a sum final its ``(coefficient, condition, atom)``
terms and whether it is a float):

>>> from sqlglot import parse_one
>>> condition(parse_one("cnt >= 5"))  # k-anonymity's ok: a class of at least 5 rows
(5, 4611686018427387904, False)
>>> condition(parse_one("cnt < 5"))
(-4611686018427387904, 4, False)
>>> condition(parse_one("NOT cnt >= 5"))
(5, 4611686018427387904, True)
>>> condition(parse_one("s > 1")) is None  # another column: refused
True
>>> final(parse_one("SUM(CASE WHEN cnt >= 5 THEN 0 ELSE cnt END)"), TRUE, set())  # suppressed rows
('sum', ([(0.0, (5, 4611686018427387904, False), '1'), (1.0, (5, 4611686018427387904, True), 'cnt')], False))
>>> final(parse_one("SUM(CASE WHEN cnt >= 5 THEN cnt * cnt ELSE 0 END)"), TRUE, set())  # discernibility's released part
('sum', ([(1.0, (5, 4611686018427387904, False), 'cnt2'), (0.0, (5, 4611686018427387904, True), '1')], False))
>>> final(parse_one("COUNT(*)"), TRUE, set())  # read from the node's summary
('count', None)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from sqlglot import exp

import sqlanon.stats.batch as batch
import sqlanon.stats.local.base as base
import sqlanon.stats.local.sets as sets


# ---------------------------------------------------------------------------------------------
# the requirement and the finals, compiled into sums of atoms under conditions on cnt

#: a condition on a class's ``cnt``: ``lo <= cnt <= hi``, negated when the flag is set
Cond = tuple[int, int, bool]
#: a term of a linear per-class expression: coefficient, condition (None: always), atom
Term = tuple[float, Cond | None, str]
TRUE: Cond = (-base.INF, base.INF, False)


def _number(e: exp.Expr) -> tuple[float, bool] | None:
    """A numeric literal's value and whether it is a float."""
    if isinstance(e, exp.Paren):
        return _number(e.this)
    if isinstance(e, exp.Neg):
        got = _number(e.this)
        return None if got is None else (-got[0], got[1])
    if isinstance(e, exp.Literal) and not e.is_string:
        text = str(e.this)
        try:
            return float(text), any(ch in text for ch in ".eE")
        except ValueError:
            return None
    return None


def _is_cnt(e: exp.Expr) -> bool:
    while isinstance(e, (exp.Paren, exp.Cast)):
        if isinstance(e, exp.Cast) and not _numeric_type(e):
            return False
        e = e.this
    return isinstance(e, exp.Column) and e.name == "cnt" and not e.table


def _numeric_type(e: exp.Cast) -> bool:
    to = e.args.get("to")
    return isinstance(to, exp.DataType) and to.is_type(*exp.DataType.NUMERIC_TYPES)


def _bound(op, value: float) -> tuple[int, int] | None:
    """``cnt <op> value`` as an integer interval."""
    if op is exp.GTE:
        return math.ceil(value), base.INF
    if op is exp.GT:
        return math.floor(value) + 1, base.INF
    if op is exp.LTE:
        return -base.INF, math.floor(value)
    if op is exp.LT:
        return -base.INF, math.ceil(value) - 1
    if op is exp.EQ:
        return (int(value), int(value)) if float(value).is_integer() else (1, 0)
    return None


FLIP = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT, exp.EQ: exp.EQ}


def condition(e: exp.Expr, ok: Cond | None = None) -> Cond | None:
    """A predicate over the class count as a :data:`Cond` (``ok``: the column ``ok``'s, when it
    may appear); None for anything else: comparisons of ``cnt`` with a number, ``AND``, ``NOT``,
    ``TRUE``, parentheses.

    >>> from sqlglot import parse_one
    >>> condition(parse_one("cnt >= 5 AND NOT cnt > 9")) is None, condition(parse_one("(cnt >= 5) AND cnt <= 9"))
    (True, (5, 9, False))
    """
    if isinstance(e, exp.Paren):
        return condition(e.this, ok)
    if isinstance(e, exp.Boolean):
        return TRUE if e.this else (1, 0, False)
    if isinstance(e, exp.Column) and e.name == "ok" and not e.table:
        return ok
    if isinstance(e, exp.Not):
        inner = condition(e.this, ok)
        return None if inner is None else (inner[0], inner[1], not inner[2])
    if isinstance(e, exp.And):
        a, b = condition(e.this, ok), condition(e.expression, ok)
        if a is None or b is None or a[2] or b[2]:
            return None
        return max(a[0], b[0]), min(a[1], b[1]), False
    op = type(e)
    if op in FLIP:
        left, right = e.this, e.expression
        if _is_cnt(left) and _number(right) is not None:
            got = _bound(op, _number(right)[0])  # type: ignore[index]
        elif _is_cnt(right) and _number(left) is not None:
            got = _bound(FLIP[op], _number(left)[0])  # type: ignore[index]
        else:
            return None
        return None if got is None else (got[0], got[1], False)
    return None


def _cases(e: exp.Case, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    ifs = e.args.get("ifs") or []
    default = e.args.get("default")
    if e.this is not None or len(ifs) != 1 or default is None:
        return None
    cond = condition(ifs[0].this, ok)
    then = linear(ifs[0].args.get("true"), ok, parts)
    other = linear(default, ok, parts)
    if cond is None or then is None or other is None:
        return None
    out: list[Term] = []
    for terms, c in ((then[0], cond), (other[0], (cond[0], cond[1], not cond[2]))):
        for coef, tc, atom in terms:
            if tc is not None:
                return None  # a condition inside a condition
            out.append((coef, c, atom))
    return out, then[1] or other[1]


def _product(a: tuple[list[Term], bool], b: tuple[list[Term], bool]) -> tuple[list[Term], bool] | None:
    for x, y in ((a, b), (b, a)):
        if all(atom == "1" and c is None for _, c, atom in x[0]):
            factor = sum(coef for coef, _, _ in x[0])
            return [(factor * coef, c, atom) for coef, c, atom in y[0]], x[1] or y[1]
    if len(a[0]) == 1 and len(b[0]) == 1 and a[0][0][1] is None and b[0][0][1] is None and a[0][0][2] == b[0][0][2] == "cnt":
        return [(a[0][0][0] * b[0][0][0], None, "cnt2")], a[1] or b[1]
    return None


def linear(e: exp.Expr | None, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """A per-class numeric expression as a sum of :data:`Term` and whether it is a float; None
    when it is not of the compiled shapes (numbers, ``cnt``, the metric's ``parts``, ``+ - *``,
    ``/`` by a number, numeric casts, one-branch ``CASE WHEN <condition on cnt> ..``)."""
    if e is None:
        return None
    num = _number(e)
    if num is not None:
        return [(num[0], None, "1")], num[1]
    if isinstance(e, exp.Paren):
        return linear(e.this, ok, parts)
    if isinstance(e, exp.Column) and not e.table and (e.name == "cnt" or e.name in parts):
        return [(1.0, None, e.name)], e.name != "cnt"
    if isinstance(e, exp.Case):
        return _cases(e, ok, parts)
    rule = ARITHMETIC.get(type(e))
    return None if rule is None else rule(e, ok, parts)


def _cast(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """A numeric cast: to a float type, or to an integer type of an integer expression."""
    assert isinstance(e, exp.Cast)
    inner = linear(e.this, ok, parts)
    if inner is None or not _numeric_type(e):
        return None
    to_float = not e.args["to"].is_type(*exp.DataType.INTEGER_TYPES)
    return (inner[0], inner[1] or to_float) if to_float or not inner[1] else None


def _add(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    a, b = linear(e.this, ok, parts), linear(e.expression, ok, parts)
    if a is None or b is None:
        return None
    sign = -1.0 if isinstance(e, exp.Sub) else 1.0
    return a[0] + [(sign * coef, c, atom) for coef, c, atom in b[0]], a[1] or b[1]


def _mul(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    a, b = linear(e.this, ok, parts), linear(e.expression, ok, parts)
    return None if a is None or b is None else _product(a, b)


def _div(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """Division by a non-zero number (a float: an integer division would truncate)."""
    a, d = linear(e.this, ok, parts), _number(e.expression)
    if a is None or d is None or d[0] == 0 or not (a[1] or d[1]):
        return None
    return [(coef / d[0], c, atom) for coef, c, atom in a[0]], True


#: the arithmetic :func:`linear` compiles, by node type
ARITHMETIC: dict[type, Callable[[exp.Expr, Cond, set[str]], tuple[list[Term], bool] | None]] = {exp.Cast: _cast, exp.Add: _add, exp.Sub: _add, exp.Mul: _mul, exp.Div: _div}


def final(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[str, Any] | None:
    """A final aggregate over a node's classes: ``("sum", (terms, float))``, ``("count", None)``,
    ``("min", None)``, ``("max", None)``; None when not compiled."""
    if isinstance(e, exp.Paren):
        return final(e.this, ok, parts)
    if isinstance(e, exp.Count) and isinstance(e.this, exp.Star) and not e.args.get("distinct"):
        return "count", None
    if isinstance(e, (exp.Min, exp.Max)) and _is_cnt(e.this) and not isinstance(e.this, exp.Cast):
        return ("min" if isinstance(e, exp.Min) else "max"), None
    if isinstance(e, exp.Sum) and not e.args.get("distinct"):
        got = linear(e.this, ok, parts)
        return None if got is None else ("sum", got)
    return None


ATOMS = {"1": 0, "cnt": 1, "cnt2": 2}


class ProgramArrays(NamedTuple):
    """A program as the node kernels take it (:func:`sqlanon.stats.local.kernels.evaluate_nodes_on`,
    ``summarize``: unpacked in this order at the jit boundary)."""

    conds: np.ndarray
    spec: np.ndarray
    cond_ptr: np.ndarray
    part_ptr: np.ndarray
    part_qi: np.ndarray
    pv_flat: np.ndarray
    pv_off: np.ndarray


@dataclass
class Program:
    """A requirement and a metric's finals compiled for :func:`sqlanon.stats.local.kernels.evaluate_nodes_on`."""

    conds: np.ndarray
    spec: np.ndarray
    #: the sums of condition ``ci`` (-1: none) are ``spec[cond_ptr[ci + 1]:cond_ptr[ci + 2]]``
    cond_ptr: np.ndarray
    #: per final: ``(kind, [(coef, sum index)], float)``
    finals: list[tuple[str, list[tuple[float, int]], bool]]
    #: finals x sums: a sum final's coefficients (its value: the node's sums times its row)
    matrix: np.ndarray
    #: the finals that are integers (rounded from their float64 sums, exact below 2**53)
    integral: list[int]
    #: the finals read from the node's summary: ``(final, summary column)`` (COUNT(*), MIN, MAX)
    from_summary: list[tuple[int, int]]
    part_ptr: np.ndarray
    part_qi: np.ndarray
    pv_flat: np.ndarray
    pv_off: np.ndarray

    @property
    def arrays(self) -> ProgramArrays:
        """The arrays the kernels read, as one bundle."""
        return ProgramArrays(self.conds, self.spec, self.cond_ptr, self.part_ptr, self.part_qi, self.pv_flat, self.pv_off)


def compile_program(stats, ok: exp.Expr, metric, extra_finals=()) -> Program | None:
    """``ok`` and the finals (``metric.batch_terms(stats)``'s, then ``extra_finals``) as sums the
    kernel takes, with the metric's part values per leaf code; None when a piece is not of the
    compiled shapes (the caller falls back to SQL)."""
    okc = condition(ok)
    if okc is None:
        return None
    got = metric.batch_terms(stats) if metric is not None else ([], [])
    if got is None:
        return None
    terms, finals = got
    part_names = [name for name, _ in terms]
    atoms = dict(ATOMS, **{name: 3 + p for p, name in enumerate(part_names)})
    conds: list[Cond] = [okc]
    spec: list[tuple[int, int]] = []
    out: list[tuple[str, list[tuple[float, int]], bool]] = []
    for _, e in [*finals, *extra_finals]:
        f = final(e, okc, set(part_names))
        if f is None:
            return None
        kind, body = f
        if kind != "sum":
            out.append((kind, [], False))
            continue
        refs = []
        for coef, c, atom in body[0]:
            if coef == 0.0:
                continue
            if c is None or c == TRUE:
                ci = -1
            else:
                if c not in conds:
                    conds.append(c)
                ci = conds.index(c)
            if (ci, atoms[atom]) not in spec:
                spec.append((ci, atoms[atom]))
            refs.append((coef, spec.index((ci, atoms[atom]))))
        out.append(("sum", refs, body[1]))
    return _package(stats, terms, conds, spec, out)


def _package(stats, terms, conds: list[Cond], spec: list[tuple[int, int]], out: list) -> Program:
    """The compiled pieces as the kernel's arrays: the sums sorted by condition (the kernel
    tests each condition once per class), the finals as a matrix over them."""
    order = sorted(range(len(spec)), key=lambda j: (spec[j][0], j))
    where = {old: new for new, old in enumerate(order)}
    out = [(kind, [(coef, where[j]) for coef, j in refs], is_float) for kind, refs, is_float in out]
    spec = [spec[j] for j in order]
    cond_ptr = np.searchsorted(np.asarray([ci for ci, _ in spec], dtype=np.int64), np.arange(-1, len(conds) + 1), side="left").astype(np.int64)
    matrix = np.zeros((len(out), len(spec)), dtype=np.float64)
    for f, (_, refs, _) in enumerate(out):
        for coef, j in refs:
            matrix[f, j] += coef
    column = {"count": 0, "min": 2, "max": 3}
    return Program(
        np.asarray([(lo, hi, int(neg)) for lo, hi, neg in conds], dtype=np.int64).reshape(-1, 3),
        np.asarray(spec, dtype=np.int64).reshape(-1, 2),
        cond_ptr,
        out,
        matrix,
        [f for f, (kind, _, is_float) in enumerate(out) if kind == "sum" and not is_float],
        [(f, column[kind]) for f, (kind, _, _) in enumerate(out) if kind in column],
        *part_values(stats, terms),
    )


def part_values(stats, terms) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The metric's parts for the kernel: per part its entries (``part_ptr``), per entry its QI
    and, per level, the offset of its values over the QI's leaf codes in ``pv_flat``."""
    lay = sets.layout(stats)
    levels = lay.kp_off.shape[1]
    ptr, qis, offs, flat, at = [0], [], [], [np.zeros(0)], 0
    for _, per_qi in terms:
        for i, per_level in per_qi:
            row = np.zeros(levels, dtype=np.int64)
            for lv, m in enumerate(lay.maps[i]):
                values = np.asarray([float(v) for v in per_level(lv)], dtype=np.float64)
                flat.append(values[m])
                row[lv] = at
                at += len(m)
            qis.append(i)
            offs.append(row)
        ptr.append(len(qis))
    return (np.asarray(ptr, dtype=np.int64), np.asarray(qis, dtype=np.int64), np.concatenate(flat).astype(np.float64),
            np.asarray(offs, dtype=np.int64).reshape(-1, levels))


def program(stats, ok: exp.Expr, metric, extra_finals=()) -> Program | None:
    """:func:`compile_program`, cached on ``stats`` per predicate, metric and extra finals."""
    cache = stats.memory.local.programs
    key = (ok.sql(), batch.metric_key(metric), tuple((name, e.sql()) for name, e in extra_finals))
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        cache[key] = compile_program(stats, ok, metric, extra_finals)
    return cache[key]
