"""Microaggregation: a numeric column released as the mean or median of its equivalence class.

As in ARX (``DataDefinition.setMicroAggregationFunction``), an alternative to generalizing a
numeric value: every row of a released class gets the class's mean (or median) of the column, so
within a class the value no longer tells rows apart, while its average over the class is kept.

* a **QI** column keeps its hierarchy to form the classes (ARX's "clustering and
  microaggregation"); its released value is the class aggregate instead of the generalized label;
* a **non-QI** numeric column (e.g. income) is replaced by the aggregate over the class.

The class is the released one: the rows that print the same generalized QI values (with local
recoding, rows of several rounds may share a class). Suppressed rows get NULL in a microaggregated
column (one suppressed row's "class mean" would be its own value). The aggregate is computed by
SQL in the release statement (one ``GROUP BY`` over the released classes joined back), never in
Python.
"""

from __future__ import annotations

import re

from sqlglot import exp

from sqlanon.errors import ConfigError, EngineError
from sqlanon.expr.atoms import col

FUNCTIONS = ("mean", "median")
_NUMERIC = re.compile(r"int|double|float|real|decimal|numeric|number", re.IGNORECASE)


def validate(spec: dict[str, str], columns: list[tuple[str, str]], qis: list[str], policy, engine=None, source=None) -> None:
    """Each microaggregated column exists, is numeric (a text column, e.g. of a CSV, must cast to
    a number in every row: one scan), and is neither dropped nor the sensitive column."""
    types = dict(columns)
    for name, fn in spec.items():
        if fn not in FUNCTIONS:
            raise ConfigError(f"microaggregate {name}={fn!r}: the function must be one of {', '.join(FUNCTIONS)}")
        if name not in types:
            raise ConfigError(f"microaggregate names {name!r}, which is not a column; columns are: {', '.join(types)}")
        if not _NUMERIC.search(str(types[name])) and not _casts_to_number(engine, source, name):
            raise ConfigError(f"microaggregate {name!r}: the column is {types[name]} and not every value is a number")
        if name in (policy.drop_columns or []):
            raise ConfigError(f"microaggregate {name!r}: the column is also dropped (--drop-column)")
        if name == policy.sensitive_column:
            raise ConfigError(f"microaggregate {name!r}: the sensitive column is what l-diversity/t-closeness protect; it cannot be aggregated")
    if spec and policy.search not in ("optimal", "samarati", "incognito"):
        raise ConfigError(f"--microaggregate works with the lattice searches (optimal, samarati, incognito), not {policy.search}")


def _casts_to_number(engine, source, name: str) -> bool:
    if engine is None:
        return False

    value = exp.Cast(this=col(name, "src"), to=exp.DataType.build("DOUBLE"))
    q = exp.select(exp.Max(this=value)).from_(exp.alias_(engine.source_from(source), "src", table=True, quoted=True))
    try:
        engine.fetch_one(q)
    except EngineError:
        return False
    return True


def aggregate(fn: str, value: exp.Expr) -> exp.Expr:
    """``AVG(CAST(x AS DOUBLE))`` or ``MEDIAN(x)`` (sqlglot renders PERCENTILE_CONT on PostgreSQL)."""
    as_double = exp.Cast(this=value, to=exp.DataType.build("DOUBLE"))
    if fn == "mean":
        return exp.Avg(this=as_double)
    if fn == "median":
        return exp.Median(this=as_double)
    raise ConfigError(f"unknown microaggregation function {fn!r}")
