"""A generalization hierarchy: one row per leaf, one column per level (leaf ... root).

Hierarchies are metadata (thousands of leaves at most), so they live in Python *and* as mapping
tables in the database. Every level is given small integer codes so frequency sets can be rolled up
on integers: ``leaf_code -> level-l code`` arrays, and ``level-a code -> level-b code`` arrays.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow as pa

from sqlanon.errors import HierarchyError

#: the text a NULL source value is joined on where a join needs a key (the release's mapping
#: tables: ``COALESCE(CAST(v AS VARCHAR), NULL_KEY) = leaf``; SQL never matches NULL = NULL, and
#: ``IS NOT DISTINCT FROM`` is no hash join on PostgreSQL); a leaf equal to it is refused
NULL_KEY = "\x1fsqlanon:NULL\x1f"


#: cached properties derived from ``rows`` (dropped when ``rows`` is assigned)
_DERIVED = ("leaves", "leaf_index", "_codes", "_label_codes", "_label_level", "_leaves_under")


@dataclass
class Hierarchy:
    """``rows[i] = [leaf, level1, ..., root]``; all rows have the same length.

    NULL is a value: at most one row is the NULL leaf ``[None, None, ..., root]`` (NULL stays
    NULL at every level below the root; :meth:`with_null_leaf` adds it, last, so the other
    leaves keep their codes). No other cell may be NULL or empty."""

    attribute: str
    rows: list[list[str]]  # the NULL leaf's cells below the root are None (see the docstring)
    origin: str = "inline"
    numeric: bool = False

    def __post_init__(self) -> None:
        self.validate()

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name == "rows":  # what is derived from the rows is derived again from the new ones
            for key in _DERIVED:
                self.__dict__.pop(key, None)

    # -- validation ------------------------------------------------------------------------------
    def validate(self) -> None:
        where = f"hierarchy for {self.attribute!r} ({self.origin})"
        if not self.rows:
            raise HierarchyError(f"{where} is empty")
        width = len(self.rows[0])
        seen: dict[str, int] = {}
        for i, row in enumerate(self.rows, start=1):
            if len(row) != width:
                raise HierarchyError(
                    f"{where} is ragged: row {i} ({row[0]!r}) has {len(row)} levels, row 1 has {width}"
                )
            self._check_cells(where, i, row)
            if row[0] in seen:
                raise HierarchyError(f"{where}: leaf {row[0]!r} appears twice (rows {seen[row[0]]} and {i})")
            seen[row[0]] = i
        roots = list(dict.fromkeys(row[-1] for row in self.rows))
        if len(roots) != 1:
            shown = ", ".join(repr(r) for r in roots[:3]) + (", ..." if len(roots) > 3 else "")
            raise HierarchyError(f"{where} has {len(roots)} roots ({shown}); its last level must be one value (e.g. '*')")
        # A tree: every value at level l has exactly one parent at level l+1.
        for level in range(1, width - 1):
            parent: dict[str, str] = {}
            for row in self.rows:
                value, up = row[level], row[level + 1]
                if parent.setdefault(value, up) != up:
                    raise HierarchyError(
                        f"{where} is not a tree: {value!r} at level {level} has parents "
                        f"{parent[value]!r} and {up!r}"
                    )

    @staticmethod
    def _check_cells(where: str, i: int, row: list) -> None:
        """A row's cells: text, or the NULL leaf's ``None`` below a text root."""
        if row[0] is None:
            if any(cell is not None for cell in row[:-1]) or row[-1] is None or len(row) < 2:
                raise HierarchyError(f"{where}: row {i} is a NULL leaf, which must stay NULL at every level below the root")
            return
        for j, cell in enumerate(row):
            if cell is None or cell == "":
                raise HierarchyError(f"{where}: row {i} has an empty or NULL value at level {j}")
        if row[0] == NULL_KEY:
            raise HierarchyError(f"{where}: row {i} holds sqlanon's NULL key as a leaf")

    # -- NULL ------------------------------------------------------------------------------------
    @property
    def null_code(self) -> int | None:
        """The NULL leaf's code, or None when the hierarchy has no NULL leaf."""
        return self.leaf_index.get(None)  # type: ignore[call-overload]

    @property
    def has_null(self) -> bool:
        return self.null_code is not None

    def null_row(self) -> list:
        """The NULL leaf's row: NULL at every level below the root, then the root."""
        row: list = [None] * self.max_level
        return row + [self.rows[0][-1]]

    def with_null_leaf(self) -> Hierarchy:
        """This hierarchy with the NULL leaf added last (itself when it has one already)."""
        if self.has_null:
            return self
        if self.max_level == 0:
            raise HierarchyError(f"hierarchy for {self.attribute!r} ({self.origin}) has no level above its leaves for NULL to climb to")
        return dataclasses.replace(self, rows=[*self.rows, self.null_row()])

    def without_null_leaf(self) -> Hierarchy:
        """This hierarchy without its NULL leaf (itself when it has none)."""
        if not self.has_null:
            return self
        return dataclasses.replace(self, rows=[r for r in self.rows if r[0] is not None])

    # -- shape -----------------------------------------------------------------------------------
    @property
    def max_level(self) -> int:
        return len(self.rows[0]) - 1

    @cached_property
    def leaves(self) -> list[str]:
        """The leaves in row order (their codes); built once (callers index it in loops), so
        never change the list in place: assign ``rows`` instead, which builds it again."""
        return [r[0] for r in self.rows]

    @cached_property
    def leaf_index(self) -> dict[str, int]:
        return {leaf: i for i, leaf in enumerate(self.leaves)}

    def labels(self, level: int) -> list[str]:
        """Distinct labels at ``level`` in order of first appearance (their codes)."""
        return self._codes[level][0]

    def leaf_to_level(self, level: int) -> list[int]:
        """``result[leaf_code]`` = code of its ancestor at ``level``."""
        return self._codes[level][1]

    def level_to_level(self, low: int, high: int) -> list[int]:
        """``result[code at low]`` = code at ``high`` (a tree, so it is well defined)."""
        out = [0] * len(self.labels(low))
        lo, hi = self.leaf_to_level(low), self.leaf_to_level(high)
        for leaf in range(len(self.rows)):
            out[lo[leaf]] = hi[leaf]
        return out

    def leaves_under(self, level: int) -> list[int]:
        """``result[code at level]`` = number of leaves below that value (for LM, Loss): counted
        once per level (the metrics ask per node). Shared: do not change the list."""
        out = self._leaves_under.get(level)
        if out is None:
            import numpy as np

            codes = np.asarray(self.leaf_to_level(level), dtype=np.int64)
            out = self._leaves_under[level] = np.bincount(codes, minlength=len(self.labels(level))).tolist()
        return out

    @cached_property
    def _leaves_under(self) -> dict[int, list[int]]:
        return {}

    @cached_property
    def _codes(self) -> list[tuple[list[str], list[int]]]:
        out = []
        for level in range(self.max_level + 1):
            index: dict[str, int] = {}
            codes = []
            for row in self.rows:
                codes.append(index.setdefault(row[level], len(index)))
            out.append((list(index), codes))
        return out

    def level_of(self, value: str) -> int | None:
        """Lowest level holding ``value`` as a label (for reading released data back)."""
        return self._label_level.get(value)

    def label_code(self, level: int, value: str) -> int | None:
        """The code of ``value`` at ``level`` (None when it is no label there)."""
        return self._label_codes[level].get(value)

    @cached_property
    def _label_codes(self) -> list[dict[str, int]]:
        return [{label: code for code, label in enumerate(self.labels(level))} for level in range(self.max_level + 1)]

    @cached_property
    def _label_level(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for level in range(self.max_level, -1, -1):  # the lowest level wins
            out.update(dict.fromkeys(self.labels(level), level))
        return out

    # -- as tables -------------------------------------------------------------------------------
    def mapping_columns(self) -> dict[str, tuple[pa.DataType, list]]:
        """``code`` (the leaf code), then ``level_0`` (the leaf), ..., ``level_h`` as strings:
        ``{column: (Arrow type, values)}`` (:meth:`sqlanon.engine.base.Engine.register_columns`)."""
        import pyarrow as pa

        cols: dict[str, tuple[pa.DataType, list]] = {"code": (pa.int32(), list(range(len(self.rows))))}
        for level in range(self.max_level + 1):
            cols[f"level_{level}"] = (pa.string(), [r[level] for r in self.rows])
        return cols

    def mapping_table(self) -> pa.Table:
        """:meth:`mapping_columns` as an Arrow table."""
        import pyarrow as pa

        return pa.table({name: pa.array(values, kind) for name, (kind, values) in self.mapping_columns().items()})

    def describe(self) -> dict:
        return {
            "attribute": self.attribute,
            "origin": self.origin,
            "leaves": len(self.rows),
            "levels": self.max_level + 1,
            "distinct_per_level": [len(self.labels(level)) for level in range(self.max_level + 1)],
        }
