"""What every search's options model is built from: the common options, the list types and
:func:`given`. Each search declares its own model beside itself (``search/<name>/spec.py``);
:mod:`sqlanon.config.search_options` parses options against them."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def given(value: Any) -> bool:
    """Was a flag or option given? ``0`` and ``0.0`` are values, not absences: only None, False and
    an empty list are."""
    return value is not None and value is not False and not (isinstance(value, list) and not value)


def _comma_list(value: Any) -> Any:
    """``"a,b"`` -> ``["a", "b"]``; a list keeps its items (each may itself be ``"a,b"``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        out: list = []
        for v in value:
            out.extend(_comma_list(v) if isinstance(v, str) else [v])
        return out
    return value


def _one_or_many(value: Any) -> Any:
    """A single string is a one-item list (for items that may hold commas themselves)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return list(value)
    return value


#: a list of names: a YAML/JSON list, or comma-separated text (``--option x=a,b``)
Names = Annotated[list[str], BeforeValidator(_comma_list)]
#: a list of free-form items (a string is one item)
Items = Annotated[list[str], BeforeValidator(_one_or_many)]


class SearchOptions(BaseModel):
    """Options every search reads."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, title="common search options")

    numeric: Names = Field(default_factory=list, description="Quasi-identifiers cut into intervals (declares --qi COLUMN=numeric).")


#: a row cap on the base frequency set fetched once and grouped in-process, a sanity bound: the
#: memory its tuples need against the memory budget decides (:data:`sqlanon.stats.local.LOCAL_ROWS`;
#: tests compare them); 0: every node by SQL
LOCAL_ROWS = 1_000_000_000


def local_rows_field() -> Any:
    """The lattice searches' ``local_rows`` option."""
    return Field(LOCAL_ROWS, ge=0, description="Fetch the base frequency set once and evaluate its lattice nodes in-process (compiled) when it has at most this many rows and its codes, kept roll-ups and buffers fit the memory budget (the engine's memory limit, else half the memory available; the report's local_route says which path ran and why); 0: every node by SQL statements.")
