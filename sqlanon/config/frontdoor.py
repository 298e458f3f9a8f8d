"""What the Python API accepts besides policy keys, turned into policy keys.

* hierarchy **builders** (``bands(5, 10, 20)``, ``mask()``, ``dates()``, ``flat()``,
  ``numeric()``, ``stored("name")``) and :class:`~sqlanon.hierarchy.Hierarchy` objects as ``qi``
  values;
* **privacy model objects**: ``privacy=[KAnonymity(5), EntropyLDiversity(2, "disease")]`` becomes
  ``k=5, l=2, l_diversity="entropy", sensitive_column="disease"``;
* a **DuckDB relation** as the input (``sqlanon.anonymize(con.table("patients"), ...)``, any
  relation: a filter, a join, ``con.sql(...)``, Arrow-backed): registered as a temporary view on
  its connection (DuckDB refuses a relation of another database, and so do we).

>>> bands(5, 10, 20)
'bands:5,10,20'
>>> privacy_keys([KAnonymity(5), EntropyLDiversity(2, "disease")])
{'k': 5, 'l': 2.0, 'l_diversity': 'entropy', 'sensitive_column': 'disease'}
"""

from __future__ import annotations

import uuid
from typing import Any
from collections.abc import Callable

from sqlanon.errors import ConfigError
from sqlanon.privacy import DeltaPresence, DistinctLDiversity, EntropyLDiversity, KAnonymity, KMap, PrivacyModel, RecursiveCLDiversity, TCloseness

__all__ = ["bands", "mask", "dates", "flat", "numeric", "stored", "privacy_keys", "RelationInput", "normalize"]


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


def dates() -> HierarchySpec:
    """day -> month -> year -> ``*``."""
    return HierarchySpec("dates")


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

def _k(m: KAnonymity) -> dict:
    return {"k": m.k}


def _distinct_l(m: DistinctLDiversity) -> dict:
    return {"l": m.l, "l_diversity": "distinct", **({"sensitive_column": m.column} if getattr(m, "column", None) else {})}


def _entropy_l(m: EntropyLDiversity) -> dict:
    return {"l": m.l, "l_diversity": "entropy", **({"sensitive_column": m.column} if getattr(m, "column", None) else {})}


def _t(m: TCloseness) -> dict:
    out = {"t": m.t, "t_distance": m.distance, **({"sensitive_column": m.column} if getattr(m, "column", None) else {})}
    if getattr(m, "hierarchy", None) is not None:  # hierarchical: the sensitive column's hierarchy spec
        out["t_hierarchy"] = m.hierarchy
    return out


def _recursive_cl(m: RecursiveCLDiversity) -> dict:
    return {"l": m.l, "c": m.c, "l_diversity": "recursive"}


def _k_map(m: KMap) -> dict:
    """k-map; without population_size, give population= (the population table) as a keyword."""
    out = {"k_map": m.k_map}
    if m.population_size is not None:
        out.update(population_size=m.population_size, k_map_estimator=m.estimator, k_map_significance=m.significance)
    return out


def _delta(m: DeltaPresence) -> dict:
    """delta-presence; give population= (the population table) as a keyword."""
    return {"delta_min": m.delta_min, "delta_max": m.delta_max}


#: privacy model class -> its policy keys (a model added to sqlanon.privacy adds a line here)
TO_POLICY: dict[type, Callable[[Any], dict]] = {
    KAnonymity: _k,
    DistinctLDiversity: _distinct_l,
    EntropyLDiversity: _entropy_l,
    RecursiveCLDiversity: _recursive_cl,
    TCloseness: _t,
    KMap: _k_map,
    DeltaPresence: _delta,
}


def privacy_keys(models) -> dict:
    """Policy keys of a list of privacy model objects; two models setting one key differently
    (two l-diversities, two sensitive columns) are an error."""
    if isinstance(models, PrivacyModel):
        models = [models]
    out: dict = {}
    for m in models:
        convert = TO_POLICY.get(type(m))
        if convert is None:
            name = type(m).__name__
            raise ConfigError(f"privacy model {name} cannot be given as an object (yet); use its policy keys, or one of {', '.join(t.__name__ for t in TO_POLICY)}")
        for key, value in convert(m).items():
            if key in out and out[key] != value:
                raise ConfigError(f"privacy models disagree on {key}: {out[key]!r} and {value!r}")
            out[key] = value
    return out


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
        if getattr(self, "kept", False):
            return
        import contextlib

        with contextlib.suppress(Exception):
            self.connection.unregister(self.name)


def normalize(policy, options: dict, connection):
    """Split the API's arguments into (policy, policy keys, relation input or None, connection)."""
    options = dict(options)
    relation = None
    if is_relation(policy):
        relation, policy = policy, None
    if is_relation(options.get("input")):
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
        rel_input = RelationInput(relation, connection)
        connection = rel_input.connection
        options["table"] = rel_input.name
        options["input"] = rel_input.name
    return policy, options, rel_input, connection
