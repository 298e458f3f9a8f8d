"""What the Python API accepts besides policy keys, turned into policy keys.

* hierarchy **builders** (``bands(5, 10, 20)``, ``mask()``, ``dates()``, ``age()``,
  ``birth_year()``, ``flat()``,
  ``numeric()``, ``stored("name")``) and :class:`~sqlanon.hierarchy.Hierarchy` objects as ``qi``
  values;
* **privacy model objects**: ``privacy=[KAnonymity(5), EntropyLDiversity(2, "disease")]`` becomes
  ``k=5, l=2, l_diversity="entropy", sensitive_column="disease"``;
* a **DuckDB relation** as the input (``sqlanon.anonymize(con.table("patients"), ...)``, any
  relation: a filter, a join, ``con.sql(...)``, Arrow-backed): registered as a temporary view on
  its connection (DuckDB refuses a relation of another database, and so do we);
* a **pandas/polars DataFrame or an Arrow table** as the input (:mod:`sqlanon.config.frames`).

>>> bands(5, 10, 20)
'bands:5,10,20'
>>> privacy_keys([KAnonymity(5), EntropyLDiversity(2, "disease")])
{'k': 5, 'l': 2.0, 'l_diversity': 'entropy', 'sensitive_column': 'disease'}
"""

from __future__ import annotations

import uuid

from sqlanon.errors import ConfigError
from sqlanon.config.frames import FrameInput, is_frame

from sqlanon.privacy import EntropyLDiversity, KAnonymity  # noqa: F401  (the module doctest)
from sqlanon.privacy.registry import to_policy

__all__ = ["bands", "mask", "dates", "age", "birth_year", "flat", "numeric", "stored", "privacy_keys", "RelationInput", "normalize"]


class HierarchySpec(str):
    """A hierarchy spec built by a builder call (it *is* the spec text, e.g. ``"bands:5,10,20"``)."""

    def __repr__(self) -> str:
        return str.__repr__(self)


def _num(x: float) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ConfigError(f"band widths are numbers, got {x!r}")
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def bands(*widths: float) -> HierarchySpec:
    """Numeric bands of growing widths (``[lo, hi[``), then ``*``: ``bands(5, 10, 20)``."""
    if not widths:
        raise ConfigError("bands() needs at least one width, e.g. bands(5, 10, 20)")
    return HierarchySpec("bands:" + ",".join(_num(w) for w in widths))


def mask(char: str = "*") -> HierarchySpec:
    """Hide one more trailing character per level (zip codes)."""
    return HierarchySpec("mask" if char == "*" else f"mask:{char}")


def dates(*levels: str, decade: bool = False) -> HierarchySpec:
    """day -> month -> year -> ``*`` (``decade=True``: a decade level before ``*``); with
    ``levels``, those calendar levels: ``dates("month", "quarter", "year", "5y", "decade")``.

    >>> dates(), dates(decade=True), dates("month", "year", "5y")
    ('dates', 'dates:decade', 'dates:month,year,5y')
    """
    if levels and decade:
        raise ConfigError("dates(): give the levels or decade=True, not both (add 'decade' to the levels)")
    if any(not isinstance(x, str) for x in levels):
        raise ConfigError(f"dates() levels are names such as 'month' or '5y', got {levels!r}")
    if levels:
        return HierarchySpec("dates:" + ",".join(levels))
    return HierarchySpec("dates:decade" if decade else "dates")


def age(reference="today", *widths: int) -> HierarchySpec:
    """Age in years at ``reference`` (a ``datetime.date``, ``"YYYY-MM-DD"`` or ``"today"``),
    then age bands of ``widths`` (default 5, 10, 20), then ``*``.

    >>> import datetime
    >>> age(datetime.date(2026, 1, 1)), age("today", 10, 20)
    ('age:2026-01-01', 'age:today,10,20')
    """
    import datetime as dt

    ref = reference.isoformat() if isinstance(reference, dt.date) and not isinstance(reference, dt.datetime) else reference
    if not isinstance(ref, str):
        raise ConfigError(f"age() reference is a date, 'YYYY-MM-DD' or 'today', got {reference!r}")
    return HierarchySpec("age:" + ",".join([ref, *(_whole(w, "age") for w in widths)]))


def birth_year(*widths: int) -> HierarchySpec:
    """The birth year, then spans of ``widths`` years (default 5, 10), then ``*``.

    >>> birth_year(), birth_year(5, 10, 20)
    ('birth_year', 'birth_year:5,10,20')
    """
    return HierarchySpec("birth_year:" + ",".join(_whole(w, "birth_year") for w in widths) if widths else "birth_year")


def _whole(w, kind: str) -> str:
    if isinstance(w, bool) or not isinstance(w, int):
        raise ConfigError(f"{kind}() widths are whole numbers of years, got {w!r}")
    return str(w)


def flat() -> HierarchySpec:
    """Distinct values under ``*`` (a categorical attribute with no taxonomy)."""
    return HierarchySpec("flat")


def numeric() -> HierarchySpec:
    """Distinct values under ``*``, cut into intervals by the flexible searches."""
    return HierarchySpec("numeric")


def stored(name: str) -> HierarchySpec:
    """A mapping table stored in the input's database (``sqlanon hierarchy import``)."""
    return HierarchySpec(f"table:{name}")


# ------------------------------------------------------------------------------------------------
# privacy model objects -> policy keys


def privacy_keys(models) -> dict:
    """Policy keys of a list of privacy model objects (each model's ``to_policy``); two models
    setting one key differently (two l-diversities, two sensitive columns) are an error."""
    return to_policy(models)


# ------------------------------------------------------------------------------------------------
# a DuckDB relation as the input

def is_relation(obj) -> bool:
    try:
        import duckdb
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, duckdb.DuckDBPyRelation)


class RelationInput:
    """A DuckDB relation registered as a temporary view ``sqlanon_input_<hex>`` on a connection."""

    def __init__(self, relation, connection=None) -> None:
        import duckdb

        self.relation = relation
        self.explicit = connection is not None
        if connection is not None and type(connection).__module__.startswith("psycopg"):
            raise ConfigError("a DuckDB relation input runs on its DuckDB connection, not on a PostgreSQL one")
        self.connection = connection if connection is not None else duckdb.default_connection()
        self.name = f"sqlanon_input_{uuid.uuid4().hex[:12]}"
        self.sql = relation.sql_query()
        self.kept = False
        #: a relation lives on its caller's connection: sqlanon owns none (:class:`FrameInput` may)
        self.owned = None
        try:  # DuckDB refuses to read a relation of another database: say which connection to pass
            from sqlglot import exp

            self.connection.register(self.name, relation)
            probe = exp.Describe(this=exp.Table(this=exp.to_identifier(self.name, quoted=True)))
            self.connection.execute(probe.sql(dialect="duckdb")).fetchall()
        except duckdb.Error:
            self.release()
            if self.explicit:
                raise ConfigError("the input relation belongs to another database than connection=...; pass the connection it was made on") from None
            raise ConfigError("the input relation is not on DuckDB's default connection; pass connection=<the connection it was made on>") from None

    def describe(self) -> str:
        first = " ".join(self.sql.split())
        return "relation:" + (first if len(first) <= 200 else first[:197] + "...")

    def release(self) -> None:
        """Unregister the view (unless a release relation still reads it)."""
        if self.kept:
            return
        import contextlib

        with contextlib.suppress(Exception):
            self.connection.unregister(self.name)


def normalize(policy, options: dict, connection):
    """Split the API's arguments into (policy, policy keys, relation input or None, connection)."""
    options = dict(options)
    relation = None
    if is_relation(policy) or is_frame(policy):
        relation, policy = policy, None
    if is_relation(options.get("input")) or is_frame(options.get("input")):
        if relation is not None:
            raise ConfigError("give the input relation once (as the first argument or input=)")
        relation = options.pop("input")
    if "privacy" in options and not isinstance(options["privacy"], dict):
        for key, value in privacy_keys(options.pop("privacy")).items():
            if key in options and options[key] != value:
                raise ConfigError(f"{key}={options[key]!r} disagrees with the privacy model objects ({key}={value!r})")
            options[key] = value
    rel_input = None
    if relation is not None:
        for key in ("table", "format", "delimiter"):
            if options.get(key):
                raise ConfigError(f"{key}= does not apply to a relation input")
        if options.get("in_place"):
            raise ConfigError("in_place needs a table input; a relation cannot be replaced in place (write output_table= instead)")
        rel_input = FrameInput(relation, connection) if is_frame(relation) else RelationInput(relation, connection)
        connection = rel_input.connection
        options["table"] = rel_input.name
        options["input"] = rel_input.name
    return policy, options, rel_input, connection
