"""Release: apply a final plan and write it (Parquet, CSV, a new table, or the same table in place).

The release query is the **mapping-table join** shape: the source joined to one small
``leaf -> released value`` table per QI; rows of suppressed classes are found by a LEFT JOIN to the
(small) table of suppressed classes and masked to ``*`` (or dropped with an anti join). Nothing is
written before the plan is final, files appear atomically (written beside, then renamed), and table
writes happen in one transaction together with the registry entry.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from sqlanon import registry
from sqlanon.errors import ConfigError, SqlanonError
from sqlanon.source import drop_table, col, table_ref
from sqlanon.stats import as_varchar, lit

SUPPRESSED = "*"


@dataclass
class Target:
    """Where a release goes: ``parquet``/``csv`` file, ``table`` (in the engine's database) or
    ``in_place`` (replace the source table)."""

    kind: str
    path: str | None = None
    table: str | None = None
    delimiter: str = ","
    overwrite: bool = False

    def describe(self) -> str:
        return self.path if self.kind in ("parquet", "csv") else f"table {self.table}"

    @classmethod
    def from_options(cls, output=None, output_table=None, in_place=False, source=None, overwrite=False, delimiter=","):
        chosen = [bool(output), bool(output_table), bool(in_place)]
        if sum(chosen) > 1:
            raise ConfigError("give only one of --output, --output-table, --in-place")
        if in_place:
            if source is None or source.kind != "table":
                raise ConfigError("--in-place needs a table input (--format duckdb --table T)")
            return cls(kind="in_place", table=source.table)
        if output_table:
            return cls(kind="table", table=output_table, overwrite=overwrite)
        if output:
            from sqlanon.policy_checks import output_kind

            kind = output_kind(output)
            if os.path.isdir(output):
                raise ConfigError(f"output {output} is a directory; name a file")
            if os.path.exists(output) and not overwrite:
                raise ConfigError(f"output file already exists: {output} (use --overwrite)")
            return cls(kind=kind, path=output, overwrite=overwrite, delimiter=delimiter)
        return cls(kind="none")


def mapping_tables(engine, stats, recoding) -> list[str]:
    """Register ``leaf -> released value`` per QI (small: one row per hierarchy leaf)."""
    names = []
    for i, h in enumerate(stats.hierarchies):
        name = engine.temp_name(f"map{i}")
        engine.register_arrow(
            name,
            pa.table({"leaf": pa.array(h.leaves, pa.string()), "value": pa.array(recoding.values(i), pa.string())}),
        )
        names.append(name)
    return names


def release_select(stats, maps: list[str], bad_table: str | None, suppression: str = "mask", drop_columns=()) -> exp.Select:
    """The release query over the source, column order kept, QIs replaced by released values."""
    engine, source = stats.engine, stats.source
    src = exp.alias_(engine.source_from(source), "src", table=True, quoted=True)
    q = exp.select().from_(src)
    qi_index = {name: i for i, name in enumerate(stats.qis)}
    for i, name in enumerate(stats.qis):
        alias = f"m{i}"
        cond = exp.EQ(this=col("leaf", alias), expression=as_varchar(col(name, "src")))
        q = q.join(table_ref(maps[i], alias=alias), on=cond, join_type="inner")
    if bad_table:
        cond = exp.and_(*[exp.EQ(this=col(stats.qcol(i), "b"), expression=col("value", f"m{i}")) for i in range(len(stats.qis))]) if len(stats.qis) > 1 else exp.EQ(this=col(stats.qcol(0), "b"), expression=col("value", "m0"))
        q = q.join(table_ref(bad_table, alias="b"), on=cond, join_type="left")
        is_bad = exp.Not(this=exp.Is(this=col(stats.qcol(0), "b"), expression=exp.Null()))
    for name in source.column_names(engine):
        if name in drop_columns:
            continue
        if name in qi_index:
            value = col("value", f"m{qi_index[name]}")
            if bad_table and suppression == "mask":
                value = exp.Case().when(is_bad, lit(SUPPRESSED)).else_(value)
            q = q.select(exp.alias_(value, name, quoted=True))
        else:
            q = q.select(col(name, "src"))
    if bad_table and suppression == "drop":
        q = q.where(exp.Is(this=col(stats.qcol(0), "b"), expression=exp.Null()))
    return q


def input_hash(engine, source) -> str:
    """Order-independent hash of every input row (to tie a release to its input)."""
    from sqlanon.stats import format_input_hash, row_hash_expr

    h = row_hash_expr(source.column_names(engine), None, engine.dialect)
    q = exp.select(exp.Count(this=exp.Star()), exp.Anonymous(this="bit_xor", expressions=[h])).from_(engine.source_from(source))
    n, x = engine.fetch_one(q)
    return format_input_hash(n, x)


def rounds_query(stats, plan, suppression: str = "mask", drop_columns=(), microaggregate=None):
    """The release of a plan with local recoding rounds and/or microaggregated columns
    (:mod:`sqlanon.release_rounds`); registers its small tables on the engine."""
    from sqlanon.release_rounds import round_maps, rounds_select

    steps = plan.local or []
    nodes = [s.node for s in steps] if steps else [plan.node]
    maps = round_maps(stats.engine, stats, nodes)
    ok = plan.requirement.predicate()
    bads = []
    for r, node in enumerate(nodes):
        round_stats = steps[r].stats if steps else stats
        failing = steps[r].suppressed if steps else plan.suppressed_rows
        if not failing:
            bads.append(None)
            continue
        name = stats.engine.temp_name(f"bad{r}")
        stats.engine.execute(round_stats.bad_class_labels_create(node, ok, name))
        bads.append(name)
    return rounds_select(stats, maps, bads, suppression, drop_columns, microaggregate)


def write(stats, plan, target: Target, suppression: str = "mask", drop_columns=(), registry_path: str | None = None, entry: dict | None = None, fail_after_write: bool = False, microaggregate: dict | None = None) -> dict:
    """Write the plan's release; returns ``{"output": ..., "release_id": ...}``.

    ``fail_after_write`` is for tests: it raises after the data is written but before the
    transaction commits, to prove nothing is left half-written.
    """
    engine = stats.engine
    if suppression not in ("mask", "drop"):
        raise ConfigError(f"--suppression must be mask or drop, got {suppression!r}")
    if target.kind == "none":
        return {"output": None, "release_id": None}
    if plan.local or microaggregate:
        query = rounds_query(stats, plan, suppression, drop_columns, microaggregate)
    else:
        maps = mapping_tables(engine, stats, plan.recoding)
        bad = None
        if plan.suppressed_rows:
            bad = engine.temp_name("bad")
            node = plan.node if plan.node is not None else plan.recoding
            engine.execute(stats.bad_class_labels_create(node, plan.requirement.predicate(), bad))
        query = release_select(stats, maps, bad, suppression, drop_columns)
    entry = dict(entry or {})
    if not entry.get("input_hash"):  # the base scan usually computed it already (row_hash)
        entry["input_hash"] = stats.input_hash or input_hash(engine, stats.source)
    entry["target"] = target.describe()
    if target.kind in ("parquet", "csv"):
        return _write_file(engine, query, target, entry, registry_path, fail_after_write)
    return _write_table(engine, query, target, stats.source, entry, fail_after_write)


def write_query(engine, query, target: Target, source, entry: dict, registry_path: str | None = None) -> dict:
    """Write any release query (e.g. generated rows) to a target, atomically, and record it."""
    entry = dict(entry)
    entry["target"] = target.describe()
    if target.kind == "none":
        return {"output": None, "release_id": None}
    if target.kind in ("parquet", "csv"):
        return _write_file(engine, query, target, entry, registry_path, False)
    return _write_table(engine, query, target, source, entry, False)


def _write_file(engine, query, target: Target, entry: dict, registry_path, fail_after_write) -> dict:
    final = target.path
    os.makedirs(os.path.dirname(os.path.abspath(final)), exist_ok=True)
    tmp = os.path.join(os.path.dirname(os.path.abspath(final)), f".{os.path.basename(final)}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        engine.write_file(query, tmp, target.kind, target.delimiter)
        if fail_after_write:
            raise SqlanonError("simulated failure after writing (test hook)")
        os.replace(tmp, final)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    release_id = None
    reg = registry_path or registry.default_registry_for(final)
    if reg:
        from sqlanon.engine import connect

        reg_engine = connect(database=reg)
        try:
            with reg_engine.transaction():
                release_id = registry.record(reg_engine, entry)
        finally:
            reg_engine.close()
    return {"output": final, "release_id": release_id, "registry": reg}


def _table_exists(engine, name: str) -> bool:
    q = exp.select(exp.Count(this=exp.Star())).from_(table_ref("tables", "information_schema")).where(
        exp.EQ(this=col("table_name"), expression=exp.Literal.string(name))
    )
    return bool(engine.scalar(q))


def _write_table(engine, query, target: Target, source, entry: dict, fail_after_write) -> dict:
    name = target.table
    with engine.transaction():
        if target.kind == "table":
            if _table_exists(engine, name):
                if not target.overwrite:
                    raise ConfigError(f"output table {name!r} already exists (use --overwrite)")
                engine.execute(drop_table(table_ref(name)))
            engine.execute(exp.Create(this=table_ref(name), kind="TABLE", expression=query))
        else:
            tmp = f"{name}__sqlanon_new"
            engine.execute(exp.Create(this=table_ref(tmp), kind="TABLE", expression=query))
            engine.execute(drop_table(source.table_expression()))
            engine.execute(exp.Alter(this=table_ref(tmp), kind="TABLE", actions=[exp.AlterRename(this=table_ref(name))]))
        release_id = registry.record(engine, entry)
        if fail_after_write:
            raise SqlanonError("simulated failure after writing (test hook)")
        if os.environ.get("SQLANON_TEST_CRASH") == "in-transaction":
            os._exit(9)  # test hook: the process dies with the transaction open
    return {"output": f"table {name}", "release_id": release_id, "registry": getattr(engine, "database", None)}
