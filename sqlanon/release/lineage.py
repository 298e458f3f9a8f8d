"""The lineage of incremental releases: what the registry database keeps so that later batches
released with release N's transformation (``anonymize --like-release N``) stay k-anonymous together.

A lineage starts at a full release (its *root*). In the registry database it has

* four registry columns of each batch release: ``parent_id`` (the release it was made like),
  ``lineage_root``, ``batch_fingerprint`` (the batch's order-independent row hash) and ``lineage``
  (the batch's figures, JSON);
* a **ledger** ``sqlanon_lineage_<root>``: per release of the lineage, its released classes (the
  QIs' released values) and their rows; the root's are counted from its output when the first
  batch is released. Only released classes are kept (each at least k over the lineage);
* a **holding table** ``sqlanon_held_<root>`` (strategy ``hold``): rows of classes still under k,
  already generalized, released by a later batch once their class reaches k.

>>> ledger_name(3), held_name(3)
('sqlanon_lineage_3', 'sqlanon_held_3')
"""

from __future__ import annotations

import json

from sqlglot import exp

from sqlanon.expr.atoms import as_varchar, col, lit, table_ref
from sqlanon.expr.templates import template
from sqlanon.engine.table_name import TableName, lookup

#: the registry columns of incremental releases (name, type)
COLUMNS = (("parent_id", "BIGINT"), ("lineage_root", "BIGINT"), ("batch_fingerprint", "VARCHAR"), ("lineage", "VARCHAR"))
#: the ledger's count column and release column
ROWS, RELEASE = "rows", "release_id"


def ledger_name(root: int) -> str:
    return f"sqlanon_lineage_{int(root)}"


def held_name(root: int) -> str:
    return f"sqlanon_held_{int(root)}"


def add_column_statements() -> list[exp.Alter]:
    """``ALTER TABLE sqlanon_releases ADD COLUMN IF NOT EXISTS`` of each lineage column."""
    return [exp.Alter(this=exp.to_table("sqlanon_releases"), kind="TABLE", actions=[exp.ColumnDef(this=exp.to_identifier(name), kind=exp.DataType.build(kind), exists=True)]) for name, kind in COLUMNS]


def ensure_columns(engine) -> None:
    """Add the lineage columns to ``sqlanon_releases`` (a no-op where they are)."""
    for add in add_column_statements():
        engine.execute(add)


def has_columns(engine) -> bool:
    return bool(engine.scalar(template("registry_has_lineage")))


def set_lineage(engine, release_id: int, parent: int, root: int, fingerprint: str, info: dict) -> None:
    ensure_columns(engine)
    engine.execute(template("registry_set_lineage", id=int(release_id), parent_id=int(parent), lineage_root=int(root), batch_fingerprint=fingerprint, lineage=json.dumps(info, default=str, sort_keys=True)))


def lineage_rows(engine) -> dict[int, dict]:
    """``id -> {parent_id, lineage_root, batch_fingerprint, lineage}`` of the releases that have them."""
    if not has_columns(engine):
        return {}
    out = {}
    for rid, parent, root, fingerprint, info in engine.fetch_all(template("registry_lineage_list")):
        if root is not None:
            out[int(rid)] = {"parent_id": parent, "lineage_root": root, "batch_fingerprint": fingerprint, "lineage": json.loads(info) if info else None}
    return out


def with_lineage(engine, releases: list[dict]) -> list[dict]:
    """The registry's releases with their lineage keys (None on releases that are not batches)."""
    found = lineage_rows(engine)
    for r in releases:
        r.update(found.get(int(r["id"]), {"parent_id": None, "lineage_root": None, "batch_fingerprint": None, "lineage": None}))
    return releases


def table_exists(engine, name: str) -> bool:
    return lookup(engine, TableName(name=name)) is not None


def ledger_prior(root: int, qis: list[str]) -> exp.Select:
    """The lineage's released classes so far and their rows (summed over its releases)."""
    return exp.select(*[col(q) for q in qis], exp.alias_(exp.cast(exp.Sum(this=col(ROWS)), "BIGINT"), ROWS, quoted=True)).from_(table_ref(ledger_name(root))).group_by(*[col(q) for q in qis])


def output_classes(output: exp.Expr, qis: list[str], root: int | None = None) -> exp.Select:
    """The released classes of a release's output (``output``: its FROM item) and their rows; the
    suppressed class (every QI ``*``) is not one. With ``root``, as ledger rows of that release."""
    keys = [exp.alias_(as_varchar(col(q, "o")), q, quoted=True) for q in qis]
    masked = exp.and_(*[exp.EQ(this=as_varchar(col(q, "o")), expression=lit("*")) for q in qis])
    head = [exp.alias_(exp.cast(lit(int(root)), "BIGINT"), RELEASE, quoted=True)] if root is not None else []
    q = exp.select(*head, *keys, exp.alias_(exp.Count(this=exp.Star()), ROWS, quoted=True))
    q = q.from_(exp.alias_(output, "o", table=True, quoted=True)).where(exp.Not(this=exp.Paren(this=masked)))
    return q.group_by(*[as_varchar(col(q_, "o")) for q_ in qis])


def create_ledger(engine, root: int, output: exp.Expr, qis: list[str]) -> None:
    """The lineage's ledger, holding the root release's classes (counted from its output)."""
    engine.execute(engine.dialect.create_table(table_ref(ledger_name(root)), output_classes(output, qis, root)))


def add_to_ledger(engine, root: int, release_id: int, classes: exp.Expr, qis: list[str]) -> None:
    """Append one release's released classes (``classes``: a FROM item with the QIs and ``rows``)."""
    q = exp.select(exp.alias_(exp.cast(lit(int(release_id)), "BIGINT"), RELEASE, quoted=True), *[col(c, "c") for c in qis], col(ROWS, "c")).from_(exp.alias_(classes, "c", table=True, quoted=True))
    engine.execute(exp.insert(q, table_ref(ledger_name(root)), columns=[RELEASE, *qis]  + [ROWS]))


def fingerprints(engine, root: int) -> dict[str, int]:
    """``batch fingerprint -> release id`` of the lineage's batches."""
    if not has_columns(engine):
        return {}
    q = exp.select(col("batch_fingerprint"), col("id")).from_(table_ref("sqlanon_releases")).where(exp.EQ(this=col("lineage_root"), expression=lit(int(root))))
    return {fp: int(rid) for fp, rid in engine.fetch_all(q) if fp}
