"""``Release``: what :func:`sqlanon.anonymize` returns.

It is the ``--json`` report (a ``dict``, so code that reads ``result["transformation"]`` keeps
working) with attributes for the stable keys and ways to reach the released rows:

* ``release.transformation``, ``.metric``, ``.privacy``, ``.rows``, ``.suppressed_rows``,
  ``.output``, ``.release_id``, ``.search``;
* ``release.to_dict()``: the stable JSON object (``schemas/report.schema.json``), a plain dict;
* ``release.relation()``: the released rows as a DuckDB relation: the written file or table, or,
  when sqlanon ran on your connection and wrote nothing (a dbt model), the release *query* itself,
  lazily evaluated, so whoever consumes it (dbt) materializes it once;
* ``release.to_arrow()``: the released rows as an Arrow table (for a caller who asks for them).

PostgreSQL outputs are read with your PostgreSQL client; ``relation()``/``to_arrow()`` say so.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from typing import Any

from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.expr.atoms import drop_table, table_ref
from sqlanon.release import registry, write
from sqlanon.release.write import release_query
from sqlanon.release.linked import linked_select


class Release(dict):
    """The report of one run (see the module docstring)."""

    def __init__(self, report: dict, **state: Any) -> None:
        super().__init__(report)
        self._state = state
        self._opened: list = []

    # -- the stable keys -----------------------------------------------------------------------
    @property
    def search(self) -> str:
        return self["search"]

    @property
    def transformation(self) -> dict:
        return self["transformation"]

    @property
    def metric(self) -> dict:
        return self["metric"]

    @property
    def privacy(self) -> dict:
        return self["privacy"]

    @property
    def rows(self) -> int:
        return self["rows"]

    @property
    def suppressed_rows(self) -> int:
        return self["suppressed_rows"]

    @property
    def output(self) -> str | None:
        return self.get("output")

    @property
    def release_id(self) -> int | None:
        return self.get("release_id")

    def to_dict(self) -> dict:
        """The stable JSON object (what ``sqlanon anonymize --json`` prints), as plain types."""
        return json.loads(json.dumps(dict(self), default=str))

    def to_json(self, **kwargs) -> str:
        return json.dumps(dict(self), default=str, **kwargs)

    def __repr__(self) -> str:
        return f"Release(search={self.get('search')!r}, transformation={self.get('transformation')!r}, metric={self.get('metric')!r}, output={self.get('output')!r})"

    # -- the released rows ---------------------------------------------------------------------
    def relation(self, connection=None):
        """The released rows as a DuckDB relation (lazy). ``connection``: where to read a written
        file (default: a new in-memory connection kept by this object)."""
        import duckdb

        st = self._state
        kind = st.get("kind")
        if kind == "relation":
            return st["connection"].sql(st["sql"])
        if kind == "closed":
            raise ConfigError("the release was closed (Release.close() dropped the temporary tables its relation read); run anonymize again, or give output= or output_table= to keep it")
        if kind in ("parquet", "csv"):
            con = connection if connection is not None else self._open(duckdb.connect())
            if kind == "parquet":
                return con.read_parquet(st["path"])
            return con.read_csv(st["path"], header=True, sep=st.get("delimiter") or ",", all_varchar=True)
        if kind in ("table", "in_place"):
            if st.get("postgres"):
                raise ConfigError(f"the release is PostgreSQL table {st['table']}; read it with your PostgreSQL client")
            con = st.get("connection")
            if con is None:
                con = connection if connection is not None else self._open(duckdb.connect(st["database"], read_only=True))
            return con.table(st["table"])
        raise ConfigError("nothing was released (dry run or no output): give output=, output_table=, or run on a DuckDB connection/relation")

    def to_arrow(self):
        """The released rows as a ``pyarrow.Table`` (all of them, in memory)."""
        return self.relation().to_arrow_table()

    def close(self) -> None:
        """Drop what a lazy release relation reads (its temp tables and input view) and close
        connections this object opened. Closing the DuckDB connection does the same."""
        st = self._state
        if st.get("kind") == "relation":
            con = st["connection"]
            for name in st.get("temps", []):
                with contextlib.suppress(Exception):
                    con.execute(drop_table(table_ref(name), if_exists=True).sql(dialect="duckdb"))
            if st.get("input_view"):
                with contextlib.suppress(Exception):
                    con.unregister(st["input_view"])
            st["kind"] = "closed"
        for con in self._opened:
            with contextlib.suppress(Exception):
                con.close()
        self._opened.clear()

    def _open(self, con):
        self._opened.append(con)
        return con


def keep_release_query(engine, query: exp.Expr) -> tuple[str, list[str]]:
    """Make the release query outlive the run on a borrowed DuckDB connection: its temp tables get
    names of their own (a later run on the same connection reuses sqlanon's usual names) and are
    no longer dropped when the engine closes. Returns the SQL and the kept table names."""
    temps = set(engine._temps)  # the engine's bookkeeping of its temp tables
    used = {t.name for t in query.find_all(exp.Table) if t.name in temps}
    token = uuid.uuid4().hex[:8]
    rename = {name: f"{name}_{token}" for name in sorted(used)}
    for old, new in rename.items():
        engine.execute(exp.Alter(this=exp.Table(this=exp.to_identifier(old, quoted=True)), kind="TABLE", actions=[exp.AlterRename(this=exp.Table(this=exp.to_identifier(new, quoted=True)))]))
        engine._temps.remove(old)

    def swap(node):
        if isinstance(node, exp.Table) and node.name in rename:
            return exp.Table(this=exp.to_identifier(rename[node.name], quoted=True), alias=node.args.get("alias"))
        return node

    kept = query.transform(swap)
    return engine.dialect.render(kept), list(rename.values())


def lazy_release(engine, stats, plan, policy, entry: dict, rel_input=None) -> dict:
    """On a borrowed DuckDB connection with no output: prepare the release query (its small
    tables stay on the connection), record the release (target ``relation``) in the
    connection's registry, and return the state :meth:`Release.relation` needs. Nothing is
    written: whoever consumes the relation (a dbt model's materialization) writes it once."""
    if engine.dialect != "duckdb" or not getattr(engine, "borrowed", False):
        return {}
    query = linked_select(engine, release_query(stats, plan, policy.suppression, policy.drop_columns, policy.microaggregate), policy.linked)
    sql, temps = keep_release_query(engine, query)
    entry = dict(entry, target="relation")
    if not entry.get("input_hash"):
        entry["input_hash"] = stats.input_hash or write.input_hash(engine, stats.source)  # looked up when called: tests replace it
    with engine.transaction():
        release_id = registry.record(engine, entry)
    if rel_input is not None:
        rel_input.kept = True  # the relation reads the input view: it stays registered
    return {"kind": "relation", "connection": engine.con, "sql": sql, "temps": temps,
            "input_view": rel_input.name if rel_input is not None else None, "release_id": release_id}
