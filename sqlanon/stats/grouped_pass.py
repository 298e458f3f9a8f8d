"""The grouped pass: the source read once, grouped on its raw key columns, before the set-up.

A run used to scan the source once per hierarchy built from the data (the ``DISTINCT`` values
of a masked zip, a date, ...) and once more for the base scan. When the base scan groups the
source first (:func:`sqlanon.stats.base_scan.groups_first`: every key column's text is one to
one with its values), the groups it makes are all the set-up reads: so they are made once, into
a temporary table (the key columns, each group's row count and its part of the input hash,
:func:`sqlanon.stats.base_scan.grouped_select`), before the hierarchies are built. The builders
read their distinct values from it (at most one row per distinct tuple, not one per source row)
and the base scan codes its groups (a join per group) instead of grouping the source again. The
run then reads the source twice: here and in the release write.

The keys are the QIs and the sensitive and class columns the policy names (a model that does
not read one leaves it out of the base set, and the base scan then sums the groups the column
told apart: :func:`sqlanon.stats.base_scan.base_query`). Every row is grouped, the rows a
``nulls: suppress`` QI withholds among them: their count is read from the groups too
(:func:`sqlanon.stats.base_scan.withheld_query`). Where the pass does not apply (a key column of another
type, a name taken), :func:`create` returns None and the run reads the source as before. The
table is dropped after the base scan (:func:`drop`), and with the engine's temporary tables when
a run fails earlier (:meth:`sqlanon.engine.base.Engine.close`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from sqlanon.engine.source import Source
from sqlanon.errors import EngineError
from sqlanon.expr.atoms import table_ref
from sqlanon.hierarchy.nulls import modes as null_modes
import sqlanon.stats.base_scan as base_scan


#: the start of the groups' table's name (:meth:`Engine.temp_name`: ``sqlanon_grouped_..``)
PREFIX = "sqlanon_grouped_"


@dataclass
class GroupedPass:
    """The source's groups, saved: ``table`` holds ``keys``, :data:`~base_scan.COUNT` and, when
    ``hashed``, :data:`~base_scan.HASH`; ``statement`` is the one that made it (the report's)."""

    table: str
    keys: list[str]
    hashed: bool
    statement: exp.Expr

    def item(self, alias: str = "src") -> exp.Expr:
        """The groups as a FROM item (``alias``: the name the source's columns are read under)."""
        return table_ref(self.table, alias=alias)


def key_columns(qis: Sequence[str], sensitive: str | None, class_column: str | None) -> list[str]:
    """The columns the pass groups on: the QIs, then the sensitive and the class column when
    named, each once (a superset of :func:`base_scan.key_columns`).

    >>> key_columns(["zip", "age"], "disease", "zip")
    ['zip', 'age', 'disease']
    """
    return list(dict.fromkeys([*qis, *([sensitive] if sensitive else []), *([class_column] if class_column else [])]))


def hashed(engine, source: Source, qis: Sequence[str], row_hash: bool, nulls) -> bool:
    """Whether the groups carry their part of the input hash: as :class:`Statistics` takes it per
    row (asked for, no QI suppressing its NULLs, and not every column a text QI:
    :func:`base_scan.hash_by_groups`)."""
    if not row_hash or "suppress" in null_modes(nulls, list(qis)):
        return False
    return not base_scan.hash_by_groups(source.columns(engine), qis)


def create(engine, source: Source, keys: list[str], row_hash: bool) -> GroupedPass | None:
    """Group the source's rows on ``keys`` into a temporary table (one scan), or None where the
    base scan would not group them first (:func:`base_scan.groups_first`)."""
    kinds = dict(source.columns(engine))
    if not keys or base_scan.COUNT in kinds or base_scan.HASH in kinds or not all(base_scan.one_to_one(kinds.get(k)) for k in keys):
        return None
    columns = source.column_names(engine) if row_hash else None
    query = base_scan.grouped_select(engine.source_from(source), keys, engine.dialect, columns)
    name = engine.temp_name(PREFIX[len("sqlanon_"):].rstrip("_"))
    statement = engine.dialect.create_temp(name, query)
    engine.execute(statement)
    return GroupedPass(name, keys, row_hash, statement)


def serves(grouped: GroupedPass, stats) -> bool:
    """Whether the groups hold what ``stats``' base scan reads: every key column
    (:func:`base_scan.key_columns`), and the input hash's parts exactly when it takes them."""
    return set(base_scan.key_columns(stats)) <= set(grouped.keys) and grouped.hashed == (stats.row_hash and not stats.hash_by_groups)


def drop(engine, grouped: GroupedPass | None) -> None:
    """Drop the groups' table (after the base scan, or when the run ends)."""
    if grouped is not None:
        with contextlib.suppress(EngineError):  # a failed run's error is the one said (an aborted PostgreSQL transaction refuses the drop)
            engine.execute(engine.dialect.drop_temp(grouped.table))
