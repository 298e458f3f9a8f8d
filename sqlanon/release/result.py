"""``Release``: what :func:`sqlanon.anonymize` returns.

A plain class (not a dict) with typed, read-only fields for the report's stable keys, the
released rows in the forms a notebook wants, and the report page:

* fields: ``search``, ``k``, ``transformation``, ``metric`` (a :class:`Metric`), ``privacy`` (a
  :class:`PrivacyOutcome`), ``rows``, ``suppressed_rows``, ``suppression_budget``,
  ``max_suppression``, ``quasi_identifiers``, ``hierarchies``, ``output``, ``release_id``,
  ``nodes_evaluated``, ``queries``, ``seconds``, ``timings``, ``risk``, ``utility``, ``loss``
  (ARX's Loss and granularity), ``warnings``, ``dry_run``, ``stopped_by``, ``input``, and
  ``extra`` (what a search or model adds: ``trace``, ``local_recoding``, ...);
* ``release.to_dict()``: the stable JSON object (``schemas/report.schema.json``), a plain dict,
  the only dict view (``to_json()`` its text);
* ``release.relation()``: the released rows as a DuckDB relation: the written file or table, the
  in-memory table of a DataFrame input, or, when sqlanon ran on your connection and wrote nothing
  (a dbt model), the release *query* itself, lazily evaluated;
* ``release.to_arrow()``, ``.to_pandas()``, ``.to_polars()``: the released rows (all of them);
* ``release.report_html()`` / ``release.save_report(path)``: the HTML report page;
* in a notebook, ``_repr_html_`` shows the summary (model, k, rows, suppressed, the
  transformation per QI, the metric and ARX's Loss).

PostgreSQL outputs are read with your PostgreSQL client; ``relation()``/``to_arrow()`` say so.

>>> r = Release({"search": "optimal", "k": 5, "transformation": {"zip": 2}, "metric": {"name": "lm", "value": 0.25},
...              "rows": 100, "suppressed_rows": 3, "privacy": {"models": [{"model": "k-anonymity", "k": 5}], "classes": 9,
...              "min_class_size": 5, "suppressed_rows": 3}, "output": None})
>>> r.metric.value, r.privacy.min_class_size, r.k
(0.25, 5, 5)
>>> r
Release(search='optimal', k=5, rows=100, suppressed_rows=3, transformation={'zip': 2}, metric=lm=0.25, output=None)
"""

from __future__ import annotations

import contextlib
import copy
import math
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from sqlanon.files.paths import check_report_path, refuse_existing
from sqlanon.errors import ConfigError, from_os_error
from sqlanon.expr.atoms import drop_table, table_ref
from sqlanon.release import registry, write
from sqlanon.release.summary import summary_html
from sqlanon.report import render, write_html
from sqlanon.release.write import release_query
from sqlanon.release.linked import linked_select


@dataclass(frozen=True)
class Metric:
    """The metric the search optimized and its value for the release (lower is better)."""

    name: str
    value: float

    def __str__(self) -> str:
        return f"{self.name}={self.value:.6g}"


@dataclass(frozen=True)
class PrivacyOutcome:
    """The privacy models required and what the release achieves, re-measured on the data."""

    models: list[dict] = field(default_factory=list)
    classes: int = 0
    min_class_size: int | None = None
    suppressed_rows: int = 0
    min_distinct_sensitive: int | None = None

    @classmethod
    def from_report(cls, data: dict | None) -> PrivacyOutcome:
        data = data or {}
        return cls(list(data.get("models") or []), int(data.get("classes") or 0), data.get("min_class_size"),
                   int(data.get("suppressed_rows") or 0), data.get("min_distinct_sensitive"))


#: the report keys with a field of their own; the others are in :attr:`Release.extra`
FIELDS = ("search", "k", "transformation", "metric", "privacy", "rows", "suppressed_rows", "suppression_budget",
          "max_suppression", "quasi_identifiers", "hierarchies", "output", "release_id", "nodes_evaluated",
          "nodes_local", "local_route", "queries", "seconds", "timings", "cpu_timings", "risk", "utility", "arx_quality",
          "warnings", "dry_run", "stopped_by", "input", "weights")


class Release:
    """One run's release and report (see the module docstring). Fields are read-only."""

    __slots__ = ("_report", "_state", "_opened", "_metric", "_privacy")

    def __init__(self, report: dict, **state: Any) -> None:
        self._report = report
        self._state = state
        self._opened: list = []
        metric = report.get("metric") or {}
        self._metric = Metric(str(metric.get("name")), float(metric["value"]) if metric.get("value") is not None else math.nan)
        self._privacy = PrivacyOutcome.from_report(report.get("privacy"))

    # -- the report's stable keys, typed -------------------------------------------------------
    search: str = property(lambda self: self._report.get("search"), doc="The search that chose the plan.")  # type: ignore[assignment]
    k: int | None = property(lambda self: self._report.get("k"), doc="k of k-anonymity (None: no k asked).")  # type: ignore[assignment]
    rows: int = property(lambda self: self._report.get("rows"), doc="Rows of the input.")  # type: ignore[assignment]
    suppressed_rows: int = property(lambda self: self._report.get("suppressed_rows"), doc="Rows suppressed.")  # type: ignore[assignment]
    suppression_budget: int | None = property(lambda self: self._report.get("suppression_budget"), doc="Rows that may be suppressed.")  # type: ignore[assignment]
    max_suppression: float | None = property(lambda self: self._report.get("max_suppression"), doc="The suppression budget asked, a fraction.")  # type: ignore[assignment]
    output: str | None = property(lambda self: self._report.get("output"), doc="Where the release is: a path, 'table NAME', 'relation', or None.")  # type: ignore[assignment]
    release_id: int | None = property(lambda self: self._report.get("release_id"), doc="Its id in the registry (None: not recorded).")  # type: ignore[assignment]
    nodes_evaluated: int = property(lambda self: self._report.get("nodes_evaluated"), doc="Nodes the search evaluated.")  # type: ignore[assignment]
    nodes_local: int | None = property(lambda self: self._report.get("nodes_local"), doc="Of them, those grouped in-process.")  # type: ignore[assignment]
    local_route: str | None = property(lambda self: self._report.get("local_route"), doc="Which path the base frequency set's nodes took and why (in-process within the memory budget, or SQL).")  # type: ignore[assignment]
    queries: int = property(lambda self: self._report.get("queries"), doc="SQL statements executed.")  # type: ignore[assignment]
    seconds: float | None = property(lambda self: self._report.get("seconds"), doc="Wall time of the run.")  # type: ignore[assignment]
    stopped_by: str | None = property(lambda self: self._report.get("stopped_by"), doc="Heuristic searches: why the search ended.")  # type: ignore[assignment]
    input: str | None = property(lambda self: self._report.get("input"), doc="The input, described.")  # type: ignore[assignment]

    @property
    def metric(self) -> Metric:
        """The metric optimized and its value."""
        return self._metric

    @property
    def privacy(self) -> PrivacyOutcome:
        """The privacy models and what the release achieves."""
        return self._privacy

    @property
    def transformation(self) -> dict[str, Any]:
        """Per quasi-identifier: its hierarchy level, or the released values of a flexible cut."""
        return copy.deepcopy(self._report.get("transformation") or {})

    @property
    def quasi_identifiers(self) -> list[str]:
        return list(self._report.get("quasi_identifiers") or [])

    def _nested(self, key: str, default=None):
        value = self._report.get(key, default)
        return copy.deepcopy(value)

    hierarchies: list[dict] = property(lambda self: self._nested("hierarchies", []), doc="Per QI: its hierarchy's shape.")  # type: ignore[assignment]
    timings: dict[str, float] | None = property(lambda self: self._nested("timings"), doc="Seconds per phase.")  # type: ignore[assignment]
    cpu_timings: dict[str, float] | None = property(lambda self: self._nested("cpu_timings"), doc="CPU seconds per phase.")  # type: ignore[assignment]
    risk: dict | None = property(lambda self: self._nested("risk"), doc="Re-identification risk before and after.")  # type: ignore[assignment]
    utility: dict | None = property(lambda self: self._nested("utility"), doc="Per QI: its values before and after, and its loss.")  # type: ignore[assignment]
    loss: dict | None = property(lambda self: self._nested("arx_quality"), doc="ARX's Loss (geometric, arithmetic) and granularity.")  # type: ignore[assignment]
    warnings: list[dict] = property(lambda self: self._nested("warnings", None) or [], doc="Reasons to look twice (also on stderr).")  # type: ignore[assignment]
    dry_run: dict | None = property(lambda self: self._nested("dry_run"), doc="A dry run: what it would write.")  # type: ignore[assignment]
    weights: dict[str, float] | None = property(lambda self: self._nested("weights"), doc="Attribute weights as the metric used them.")  # type: ignore[assignment]

    @property
    def extra(self) -> dict:
        """The report keys a search or privacy model adds (``trace``, ``local_recoding``, ...)."""
        return {k: copy.deepcopy(v) for k, v in self._report.items() if k not in FIELDS}

    def __getitem__(self, key):
        """Not a dict (any more): say where the key is."""
        where = f"release.{'loss' if key == 'arx_quality' else key}" if key in FIELDS else f"release.extra[{key!r}]"
        raise TypeError(f"a Release is not a dict: read {where}, or release.to_dict()[{key!r}] for the JSON object")

    def to_dict(self) -> dict:
        """The stable JSON object (what ``sqlanon anonymize --json`` prints), as plain types."""
        return json.loads(self.to_json())

    def to_json(self, **kwargs) -> str:
        return json.dumps(self._report, default=str, **kwargs)

    def __repr__(self) -> str:
        return (f"Release(search={self.search!r}, k={self.k!r}, rows={self.rows!r}, suppressed_rows={self.suppressed_rows!r}, "
                f"transformation={self._report.get('transformation')!r}, metric={self.metric}, output={self.output!r})")

    def _repr_html_(self) -> str:
        return summary_html(self._report)

    # -- the report page -----------------------------------------------------------------------
    def report_html(self) -> str:
        """The HTML report page (as ``--report`` writes it), as a string."""
        return render(self._page_report(), sql=self._state.get("sql_listing"))

    def save_report(self, path: str, overwrite: bool = False) -> str:
        """Write the HTML report page to ``path`` (an existing file only with ``overwrite``); returns the path."""
        check_report_path(path)
        refuse_existing(path, "report file", overwrite)
        try:
            write_html(self._page_report(), path, sql=self._state.get("sql_listing"))
        except OSError as err:
            raise from_os_error(err) from None
        return path

    def _page_report(self) -> dict:
        policy = self._state.get("policy")
        return {**self._report, "policy": policy} if policy is not None else dict(self._report)

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
            raise ConfigError("the release was closed (Release.close() dropped what its relation read); run anonymize again, or give output= or output_table= to keep it")
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

    def to_pandas(self):
        """The released rows as a ``pandas.DataFrame`` (all of them, in memory; needs pandas)."""
        _needs("pandas", "to_pandas()")
        return self.relation().df()

    def to_polars(self):
        """The released rows as a ``polars.DataFrame`` (all of them, in memory; needs polars)."""
        _needs("polars", "to_polars()")
        import polars

        return polars.from_arrow(self.to_arrow())

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
        if st.get("owned") is not None:  # the in-memory database of a DataFrame input
            with contextlib.suppress(Exception):
                st.pop("owned").close()
            st["kind"] = "closed"
        for con in self._opened:
            with contextlib.suppress(Exception):
                con.close()
        self._opened.clear()

    def _open(self, con):
        self._opened.append(con)
        return con


def _needs(module: str, what: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise ConfigError(f"Release.{what} needs {module}, which is not installed (pip install {module}); to_arrow() needs only pyarrow")


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
    if engine.dialect != "duckdb" or not engine.borrowed:
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
