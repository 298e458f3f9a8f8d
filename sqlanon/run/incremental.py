"""Incremental releases: a new batch released with release N's transformation (``--like-release N``).

The batch is generalized by release N's recorded transformation and hierarchies (never a new
search: consumers see the same released values), then counted per class **together with every
release of N's lineage** (the ledger of :mod:`sqlanon.release.lineage`). A class is released when

* ``cumulative`` (default): its rows over the lineage (earlier releases + this batch) are >= k;
* ``batch``: its rows in this batch are >= k on their own (then the union is k-anonymous too).

Rows of other classes, and rows whose values release N's hierarchies never saw, are handled by
``on_break``: ``suppress`` (masked to ``*`` or dropped, as ``--suppression`` says), ``hold`` (kept,
generalized, in the holding table of the target database and released by a later batch once
their class reaches k; rows with unseen values wait for the next full run) or ``refuse`` (an
:class:`UnsatisfiableError`, nothing written). The release, its registry row, the ledger and the
holding table are written together (one transaction for a table; the registry's for a file).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from sqlglot import exp

from sqlanon.config.policy import Policy, PrivacyPolicy
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.engine.table_name import TableName, same_table
from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.expr.atoms import and_all, as_varchar, col, if_, lit, sum_, table_ref
from sqlanon.hierarchy import is_builder_spec
from sqlanon.release import lineage, registry, runs, write as release_mod
from sqlanon.release.result import Release, keep_release_query
from sqlanon.run.check import _plan_recoding
from sqlanon.run.session import Session
from sqlanon.stats import format_input_hash

STRATEGIES = ("suppress", "hold", "refuse")
CHECKS = ("cumulative", "batch")
#: policy keys a batch run takes from its own arguments; every other one comes from release N
BATCH_KEYS = {"input", "format", "delimiter", "table", "output", "output_table", "database", "in_place", "overwrite", "output_delimiter",
              "registry", "suppression", "like_release", "on_break", "lineage_check", "memory_limit", "threads", "engine"}
#: privacy keys of release N's policy a batch can keep (k-anonymity and its suppression limit)
KEPT_PRIVACY = {"k", "max_suppression"}
#: hidden columns of the candidate rows
UNSEEN, HELD, OK, HELD_BY = "__sqlanon_unseen", "__sqlanon_held", "__sqlanon_ok", "__sqlanon_held_by"


def refuse_unused(policy: Policy) -> None:
    """``on_break`` and ``lineage_check`` mean something only with ``like_release``."""
    out = policy.release
    if out.like_release is None:
        for key, value in (("on_break", out.on_break), ("lineage_check", out.lineage_check)):
            if value is not None:
                raise ConfigError(f"--{key.replace('_', '-')} applies to incremental releases; give --like-release N")


@dataclass
class Lineage:
    """Release N, its lineage's root and what the batch takes from them."""

    parent: dict
    root: dict
    qis: list[str]
    specs: dict[str, Any]
    transformation: dict
    k: int
    drop_columns: list[str]
    ledger_exists: bool = False
    held_exists: bool = False

    @property
    def root_id(self) -> int:
        return int(self.root["id"])


@dataclass
class Batch:
    """One batch run's state: its engine and tables, the registry engine, the figures."""

    policy: Policy
    session: Session
    target: release_mod.Target
    reg: Any  # the registry's engine (the session's for a table release)
    reg_where: str
    strategy: str
    check: str
    lin: Lineage | None = None
    columns: list[str] = field(default_factory=list)
    kept: set[int] = field(default_factory=set)
    tables: dict[str, str] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    hierarchies: list = field(default_factory=list)
    #: a release relation on the caller's DuckDB connection (a dbt model appends it), not a write
    lazy: bool = False
    relation_state: dict = field(default_factory=dict)
    described: str | None = None
    append_to: str | None = None

    @property
    def source_text(self) -> str:
        """The batch's input as the report and the registry name it."""
        return self.described or self.session.source.describe()

    @property
    def engine(self):
        return self.session.engine

    @property
    def shared(self) -> bool:
        return self.reg is self.session.engine


def anonymize_batch(policy: Policy, *, progress=None, dry_run: bool = False, connection=None, described: str | None = None,
                    append_to: str | None = None) -> Release:
    """Release the batch (``policy.source``) like release ``policy.release.like_release``;
    ``described``: what the input is, when its source is a temporary view (a relation);
    ``append_to``: on the caller's DuckDB connection with no output, append the released rows to
    this existing table (a dbt incremental model's) in the registry row's transaction."""
    started = time.perf_counter()
    say = progress or (lambda message: None)
    refuse_given(policy)
    session = Session(policy, say, connection, read_only=dry_run)
    batch = None
    try:
        batch = _open(policy, session, dry_run)
        batch.described = described
        if append_to is not None and not batch.lazy:
            raise ConfigError("appending a batch to a table needs the caller's DuckDB connection and no output")
        batch.append_to = append_to
        batch.lin = _lineage(batch)
        _check_batch(batch)
        fingerprint = _fingerprint(batch)
        _candidates(batch)
        _decide(batch)
        report = _report(batch, fingerprint)
        _refuse_breaking(batch)
        if not dry_run:
            _write(batch, report, fingerprint)
            say(f"wrote {report['output']} (release {report['release_id']}, like release {batch.lin.parent['id']})")
        report["seconds"] = round(time.perf_counter() - started, 3)
        report["queries"] = session.engine.queries
        return Release(report, **_state(batch))
    finally:
        if batch is not None and not batch.shared:
            batch.reg.close()
        session.close()


def refuse_given(policy: Policy) -> None:
    """A flag given is a flag used: a batch takes its QIs, hierarchies, k and search from release
    N, so any of those given here is refused (naming it), as are bad strategy values."""
    defaults = Policy().flat()
    given = [key for key, value in policy.flat().items() if key not in BATCH_KEYS and value != defaults.get(key)]
    if given:
        raise ConfigError(f"--like-release {policy.release.like_release} takes the quasi-identifiers, hierarchies, privacy model and search from that release; {', '.join(given)} cannot be given here")
    out = policy.release
    if out.on_break is not None and out.on_break not in STRATEGIES:
        raise ConfigError(f"--on-break must be one of {', '.join(STRATEGIES)}, got {out.on_break!r}")
    if out.lineage_check is not None and out.lineage_check not in CHECKS:
        raise ConfigError(f"--lineage-check must be one of {', '.join(CHECKS)}, got {out.lineage_check!r}")


def _open(policy: Policy, session: Session, dry_run: bool) -> Batch:
    """The target (checked), the registry holding release N, the strategy."""
    out = policy.release
    engine = session.engine
    if engine.dialect == "spark":
        raise ConfigError("--like-release runs on DuckDB and PostgreSQL (Spark has no transactions for the lineage's tables)")
    target = release_mod.Target.from_options(out.output, out.output_table, out.in_place, session.source, out.overwrite, out.output_delimiter)
    lazy = target.kind == "none" and not dry_run and engine.dialect == "duckdb" and engine.borrowed
    if target.kind == "none" and not dry_run and not lazy:
        raise ConfigError("--like-release writes a release: give --output, --output-table or --in-place (or --dry-run)")
    release_mod.check_target(engine, target, session.source)
    strategy, check = out.on_break or "suppress", out.lineage_check or "cumulative"
    if target.kind in ("parquet", "csv"):
        reg_path = out.registry or registry.default_registry_for(target.file)
        if strategy == "hold":
            raise ConfigError("--on-break hold keeps held rows in a holding table of the target database; a file release has none (release to a table: --output-table or --in-place)")
        if "://" not in reg_path and not os.path.isfile(reg_path):
            raise ConfigError(f"release {out.like_release} not found: registry {reg_path} does not exist (name the lineage's registry with --registry)")
        release_mod.check_registry(engine, target, session.source, out.registry)
        return Batch(policy, session, target, connect(database=reg_path, read_only=dry_run), reg_path, strategy, check)
    if out.registry:
        raise ConfigError(f"--registry {out.registry} is where file releases are recorded; a table release is recorded in its own database (sqlanon_releases)")
    return Batch(policy, session, target, engine, engine.database or "of the connection", strategy, check, lazy=lazy)


def _lineage(batch: Batch) -> Lineage:
    """Release N and its lineage's root, from the registry; refused when unusable."""
    n = int(batch.policy.release.like_release or 0)
    parent = registry.get_release(batch.reg, n)
    if parent is None:
        raise ConfigError(f"release {n} not found in registry {batch.reg_where}")
    found = lineage.lineage_rows(batch.reg).get(int(n))
    root = parent if found is None else registry.get_release(batch.reg, int(found["lineage_root"]))
    if root is None:
        raise ConfigError(f"release {n} names lineage root {found and found['lineage_root']}, which is not in registry {batch.reg_where}")
    runs.merge_into(batch.reg, [root])  # a dbt model's root: its output is the model's relation
    policy = root.get("policy") or {}
    _refuse_root(root, policy)
    qis = list((policy.get("qi") or {}).keys())
    lin = Lineage(parent, root, qis, dict(policy["qi"]), dict(root["transformation"]), int(policy["k"]), list(policy.get("drop_columns") or []))
    lin.ledger_exists = lineage.table_exists(batch.reg, lineage.ledger_name(lin.root_id))
    lin.held_exists = batch.shared and lineage.table_exists(batch.reg, lineage.held_name(lin.root_id))
    return lin


def _refuse_root(root: dict, policy: dict) -> None:
    """The root must be a global recoding meeting k-anonymity only (what a batch can keep)."""
    rid = root["id"]
    if not policy.get("qi") or not policy.get("k") or not isinstance(root.get("transformation"), dict) or not root["transformation"]:
        raise ConfigError(f"release {rid} is not a k-anonymous generalization (search {root.get('search')!r}); a batch needs one to be released like it")
    others = sorted(key for key in policy if key in _privacy_keys() and key not in KEPT_PRIVACY)
    if others:
        raise ConfigError(f"release {rid} also meets {', '.join(others)}; incremental releases keep k-anonymity only")
    for key in ("local_recoding", "microaggregate"):
        if policy.get(key):
            raise ConfigError(f"release {rid} uses {key}; a batch can be released only like a global recoding")
    if policy.get("search") == "top-down" or root.get("target") == "relation":
        raise ConfigError(f"release {rid} ({root.get('search')}, {root.get('target')}) cannot start a lineage: its output is not a table or file of generalized rows")


def _privacy_keys() -> set[str]:
    return set(PrivacyPolicy.model_fields) - {"l_diversity", "t_distance"}


def _root_output(batch: Batch) -> exp.Expr:
    """The root release's output as a FROM item of the registry's engine (its released classes
    start the ledger)."""
    lin = batch.lin
    assert lin is not None
    target = str(lin.root.get("target") or "")
    table = released_table(lin.root)
    if table is not None:
        return Source(kind="table", table=table).table_expression()
    if batch.reg.dialect != "duckdb" or not os.path.exists(target):
        raise ConfigError(f"release {lin.root['id']}'s output {target} cannot be read to count its classes (the lineage starts from them)")
    return batch.reg.source_from(Source.open(target))


def _check_batch(batch: Batch) -> None:
    """The batch has release N's columns (less the dropped ones), is not release N's own output,
    and its hierarchies load; the released columns, in the batch's order."""
    lin, source, engine = batch.lin, batch.session.source, batch.engine
    assert lin is not None
    have = source.column_names(engine)
    released = [c for c in have if c not in lin.drop_columns]
    root_out = _root_output(batch) if not lin.ledger_exists else None
    expected = _released_columns(batch, root_out)
    if expected is not None and sorted(released) != sorted(expected):
        missing, extra = [c for c in expected if c not in released], [c for c in released if c not in expected]
        raise ConfigError(f"the batch {source.describe()} has other columns than release {lin.parent['id']}'s source" + (f": missing {', '.join(missing)}" if missing else "") + (f"; not in it: {', '.join(extra)}" if extra else ""))
    absent = [q for q in lin.qis if q not in have]
    if absent:
        raise ConfigError(f"the batch {source.describe()} lacks quasi-identifier {absent[0]!r} of release {lin.parent['id']} (a release of another source?)")
    _refuse_own_output(batch)
    batch.columns = released
    batch.tables["root_output"] = root_out  # type: ignore[assignment]


def _refuse_own_output(batch: Batch) -> None:
    """A batch read from a table the lineage released (rows already counted) is refused."""
    lin, source = batch.lin, batch.session.source
    assert lin is not None
    if source.kind != "table" or not batch.shared:
        return
    name = source.table_name(batch.engine.dialect)
    for r in registry.list_releases(batch.reg):
        if r["id"] == lin.root_id or r.get("lineage_root") == lin.root_id:
            table = released_table(r)
            if table is not None and same_table(batch.engine, TableName.parse(table, batch.engine.dialect), name):
                raise ConfigError(f"the batch {source.describe()} is release {r['id']}'s output (released rows); a batch is a table or file of new source rows")


def released_table(release: dict) -> str | None:
    """The table a release's output is: ``table NAME``, or a dbt model's relation (the table the
    model materialized: its target, with the model's unique id); None for a file or a relation."""
    target = str(release.get("target") or "")
    if target.startswith("table "):
        return target[len("table "):]
    if release.get("model_id") and target and target != "relation":
        return target
    return None


def _released_columns(batch: Batch, root_out) -> list[str] | None:
    """The columns release N's lineage released: its root's output's, or recorded with its batches."""
    lin = batch.lin
    assert lin is not None
    if root_out is not None:
        return [c for c, _ in batch.reg.describe_columns(exp.select("*").from_(root_out.copy()).limit(0))]
    rows = lineage.lineage_rows(batch.reg)
    mine = [r for r in rows.values() if int(r["lineage_root"]) == lin.root_id and r.get("lineage")]
    return mine[0]["lineage"].get("columns") if mine else None


def _fingerprint(batch: Batch) -> str:
    """The batch's row hash; a batch already released in the lineage (or the root's input) is
    refused: its people would be counted twice."""
    lin = batch.lin
    assert lin is not None
    fp = batch_fingerprint(batch.engine, batch.session.source)
    if fp.split("+")[0] == lin.root.get("input_hash"):
        raise ConfigError(f"the batch is release {lin.root_id}'s own input (same rows); a batch holds new rows only")
    seen = lineage.fingerprints(batch.reg, lin.root_id).get(fp)
    if seen is not None:
        raise ConfigError(f"the batch was already released (release {seen}, same rows); releasing it again would count its people twice")
    return fp


def batch_fingerprint(engine, source) -> str:
    """``rows:xor+sum`` of the rows' hashes: order-independent, and unlike the XOR alone (the
    registry's ``input_hash``, its first part) not blind to rows that come twice."""
    h = engine.dialect.row_hash(source.column_names(engine))
    q = exp.select(exp.Count(this=exp.Star()), exp.Anonymous(this="bit_xor", expressions=[h]), exp.Sum(this=h.copy())).from_(engine.source_from(source))
    n, x, total = engine.fetch_one(q) or (0, 0, 0)
    return f"{format_input_hash(n, x)}+{int(total or 0) & 0xFFFFFFFFFFFFFFFF:016x}"


def _hierarchies(batch: Batch):
    lin = batch.lin
    assert lin is not None
    policy = batch.policy
    root_policy = lin.root.get("policy") or {}
    if root_policy.get("hierarchy_delimiter"):
        policy.hierarchies.hierarchy_delimiter = root_policy["hierarchy_delimiter"]
    if root_policy.get("max_value_length"):
        policy.hierarchies.max_value_length = int(root_policy["max_value_length"])
    for q, spec in lin.specs.items():
        if isinstance(spec, str) and spec.startswith("hierarchy object ("):
            raise ConfigError(f"release {lin.root_id}'s hierarchy of {q!r} was a Python object ({spec}); a batch cannot load it again (give release N a hierarchy file or table)")
    hierarchies = batch.session.hierarchies(lin.specs)
    batch.hierarchies = hierarchies
    levels = [lin.transformation.get(q) for q in lin.qis]
    numeric = (root_policy.get("search_options") or {}).get("numeric") or []
    return hierarchies, _plan_recoding(lin.transformation, lin.qis, levels, hierarchies, numeric)


def _maps(batch: Batch, hierarchies, recoding) -> list[str]:
    """Per QI a ``leaf -> value, known`` table: ``known`` is False for a value release N's
    hierarchy never saw (a hierarchy built from the data that releases it as itself, when the
    lineage never released it); a leaf missing from the table is unseen too."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    names = []
    for i, (q, h) in enumerate(zip(lin.qis, hierarchies)):
        values = recoding.values(i)
        if values == h.leaves:
            batch.kept.add(i)
        name = engine.temp_name(f"batch_map{i}")
        engine.register_columns(name, {"leaf": (pa.string(), list(h.leaves)), "value": (pa.string(), list(values))})
        if is_builder_spec(lin.specs[q]) and i in batch.kept:
            known = _released_values(batch, q)
            flagged = exp.select(col("leaf"), col("value"), exp.alias_(col("value").isin(query=known), "known", quoted=True)).from_(table_ref(name))
            name = engine.temp_name(f"batch_known{i}")
            engine.execute(engine.dialect.create_temp(name, flagged))
        else:
            flagged = exp.select(col("leaf"), col("value"), exp.alias_(exp.Boolean(this=True), "known", quoted=True)).from_(table_ref(name))
            name = engine.temp_name(f"batch_known{i}")
            engine.execute(engine.dialect.create_temp(name, flagged))
        names.append(name)
    return names


def _released_values(batch: Batch, q: str) -> exp.Select:
    """The values of QI ``q`` the lineage released (from the prior classes, on the batch engine)."""
    return exp.select(col(q)).distinct().from_(table_ref(batch.tables["prior"]))


def _prior(batch: Batch) -> None:
    """The lineage's released classes so far, as a table of the batch's engine."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    if lin.ledger_exists:
        q: exp.Select = lineage.ledger_prior(lin.root_id, lin.qis)
    else:
        q = lineage.output_classes(batch.tables["root_output"].copy(), lin.qis)  # type: ignore[attr-defined]
    name = engine.temp_name("batch_prior")
    if batch.shared:
        engine.execute(engine.dialect.create_temp(name, q))
    else:  # the registry is another database: its (small) aggregate is brought over
        engine.register_arrow(name, batch.reg.fetch_arrow(q))
    batch.tables["prior"] = name


def _candidates(batch: Batch) -> None:
    """The batch's rows generalized (and the held rows of earlier batches, strategy ``hold``),
    each flagged unseen or not: one temporary table."""
    lin, engine, source = batch.lin, batch.engine, batch.session.source
    assert lin is not None
    _prior(batch)
    hierarchies, recoding = _hierarchies(batch)
    maps = _maps(batch, hierarchies, recoding)
    qi_index = {q: i for i, q in enumerate(lin.qis)}
    q = exp.select().from_(exp.alias_(engine.source_from(source), "src", table=True, quoted=True))
    for i, name in enumerate(maps):
        q = q.join(table_ref(name, alias=f"m{i}"), on=exp.EQ(this=col("leaf", f"m{i}"), expression=as_varchar(col(lin.qis[i], "src"))), join_type="left")
    for c in batch.columns:
        at = qi_index.get(c)
        q = q.select(col(c, "src") if at is None else exp.alias_(col("value", f"m{at}"), c, quoted=True))
    q = q.select(*[exp.alias_(col(lin.qis[i], "src"), _raw(i), quoted=True) for i in sorted(batch.kept)])
    unseen = exp.or_(*[exp.Not(this=exp.Coalesce(this=col("known", f"m{i}"), expressions=[exp.false()])) for i in range(len(maps))])
    q = q.select(exp.alias_(unseen, UNSEEN, quoted=True), exp.alias_(exp.false(), HELD, quoted=True))
    body: exp.Query = q
    if batch.lin.held_exists and batch.strategy == "hold":  # type: ignore[union-attr]
        _same_types(batch, q)
        held = exp.select(*[col(c) for c in _stored_columns(batch)], exp.alias_(exp.false(), UNSEEN, quoted=True), exp.alias_(exp.true(), HELD, quoted=True)).from_(table_ref(lineage.held_name(lin.root_id)))
        body = exp.union(q, held, distinct=False)
    name = engine.temp_name("batch_rows")
    engine.execute(engine.dialect.create_temp(name, body))
    batch.tables["rows"] = name


def _same_types(batch: Batch, rows: exp.Select) -> None:
    """The batch's generalized rows have the holding table's column types (else the held rows
    could not be released with them): refused naming the first column that differs."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    mine = dict(engine.describe_columns(rows.copy().limit(0)))
    held = dict(engine.describe_columns(exp.select("*").from_(table_ref(lineage.held_name(lin.root_id))).limit(0)))
    for name in _stored_columns(batch):
        if name in held and str(held[name]).upper() != str(mine.get(name)).upper():
            raise ConfigError(f"column {name!r} of the batch is {mine.get(name)}, the holding table {lineage.held_name(lin.root_id)}'s is {held[name]}: cast it (a view) so the held rows can be released with it")


def _raw(i: int) -> str:
    return f"__sqlanon_raw{i}"


def _stored_columns(batch: Batch) -> list[str]:
    """A held row's columns: the released ones and the raw values of ungeneralized QIs."""
    return [*batch.columns, *[_raw(i) for i in sorted(batch.kept)]]


def _decide(batch: Batch) -> None:
    """Which classes are released (their rows over the lineage, or in the batch, >= k), and the
    rows flagged so: two small temporary tables and one of the rows."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    qis = lin.qis
    classes = exp.select(*[col(q) for q in qis], exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True)).from_(table_ref(batch.tables["rows"])).where(exp.Not(this=col(UNSEEN))).group_by(*[col(q) for q in qis])
    total = exp.Add(this=exp.Coalesce(this=col(lineage.ROWS, "p"), expressions=[lit(0)]), expression=col("n", "c"))
    counted = total if batch.check == "cumulative" else col("n", "c")
    decided = exp.select(*[col(q, "c") for q in qis], col("n", "c"), exp.alias_(total, "total", quoted=True), exp.alias_(exp.GTE(this=counted, expression=lit(lin.k)), OK, quoted=True))
    decided = decided.from_(exp.alias_(classes.subquery(), "c", table=True, quoted=True)).join(table_ref(batch.tables["prior"], alias="p"), on=_same_class("c", "p", qis), join_type="left")
    batch.tables["classes"] = engine.temp_name("batch_classes")
    engine.execute(engine.dialect.create_temp(batch.tables["classes"], decided))
    flagged = exp.select(*[col(c, "r") for c in _stored_columns(batch)], col(UNSEEN, "r"), col(HELD, "r"), exp.alias_(exp.Coalesce(this=col(OK, "d"), expressions=[exp.false()]), OK, quoted=True))
    flagged = flagged.from_(table_ref(batch.tables["rows"], alias="r")).join(table_ref(batch.tables["classes"], alias="d"), on=_same_class("r", "d", qis), join_type="left")
    batch.tables["flagged"] = engine.temp_name("batch_flagged")
    engine.execute(engine.dialect.create_temp(batch.tables["flagged"], flagged))
    _figures(batch)


def _same_class(left: str, right: str, qis: list[str]) -> exp.Expr:
    return and_all([exp.EQ(this=col(q, left), expression=col(q, right)) for q in qis])


def _count(cond: exp.Expr) -> exp.Expr:
    return exp.Coalesce(this=sum_(if_(cond, lit(1), lit(0))), expressions=[lit(0)])


def _figures(batch: Batch) -> None:
    """The batch's figures (one statement over its rows, one over the lineage's classes)."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    ok, unseen, held = col(OK), col(UNSEEN), col(HELD)
    q = exp.select(
        _count(exp.Not(this=held.copy())), _count(held.copy()), _count(ok.copy()),
        _count(exp.and_(ok.copy(), held.copy())), _count(unseen.copy()),
        _count(exp.and_(exp.Not(this=ok.copy()), exp.Not(this=unseen.copy()))),
    ).from_(table_ref(batch.tables["flagged"]))
    keys = ("batch_rows", "held_before", "released_rows", "released_from_held", "unseen_rows", "breaking_rows")
    batch.figures = dict(zip(keys, (int(v or 0) for v in engine.fetch_one(q) or ())))
    released = exp.select(*[col(q_) for q_ in lin.qis], col("total")).from_(table_ref(batch.tables["classes"])).where(col(OK))
    batch_min = exp.select(exp.Min(this=col("n")), exp.Count(this=exp.Star())).from_(table_ref(batch.tables["classes"])).where(col(OK))
    untouched = exp.select(*[col(q_, "p") for q_ in lin.qis], exp.alias_(col(lineage.ROWS, "p"), "total", quoted=True)).from_(table_ref(batch.tables["prior"], alias="p"))
    untouched = untouched.where(exp.Not(this=exp.Exists(this=exp.select(lit(1)).from_(table_ref(batch.tables["classes"], alias="d")).where(exp.and_(col(OK, "d"), _same_class("p", "d", lin.qis))))))
    union = exp.union(released, untouched, distinct=False)
    smallest = exp.select(exp.Min(this=col("total")), exp.Count(this=exp.Star())).from_(exp.alias_(union.subquery(), "u", table=True, quoted=True))
    batch.figures["batch_min_class"], batch.figures["batch_classes"] = engine.fetch_one(batch_min) or (None, 0)
    batch.figures["lineage_min_class"], batch.figures["lineage_classes"] = engine.fetch_one(smallest) or (None, 0)


def _refuse_breaking(batch: Batch) -> None:
    f, lin = batch.figures, batch.lin
    assert lin is not None
    if batch.strategy != "refuse" or not (f["breaking_rows"] or f["unseen_rows"]):
        return
    raise UnsatisfiableError(
        f"the batch breaks k={lin.k} over release {lin.root_id}'s lineage: {f['breaking_rows']} row(s) in classes under k, "
        f"{f['unseen_rows']} with values release {lin.parent['id']}'s hierarchies never saw; nothing written (--on-break suppress or hold releases the rest)"
    )


def _masking(batch: Batch) -> bool:
    """Rows not released are masked (``*``) in the release: strategy suppress, suppression mask."""
    return batch.strategy == "suppress" and batch.policy.release.suppression != "drop"


def release_query(batch: Batch) -> exp.Select:
    """The released rows, in the batch's column order: the QIs' released values (masked ``*``
    when suppressed rows are masked), an ungeneralized QI as the source's column when nothing is
    masked (its type kept, as a full release keeps it), the other columns as they are."""
    lin = batch.lin
    assert lin is not None
    masked = _masking(batch) and (batch.figures["breaking_rows"] or batch.figures["unseen_rows"])
    qi_index = {q: i for i, q in enumerate(lin.qis)}
    q = exp.select().from_(table_ref(batch.tables["flagged"]))
    for c in batch.columns:
        i = qi_index.get(c)
        if i is None:
            q = q.select(col(c))
        elif masked:
            q = q.select(exp.alias_(if_(col(OK), col(c), lit(release_mod.SUPPRESSED)), c, quoted=True))
        else:
            q = q.select(exp.alias_(col(_raw(i)), c, quoted=True) if i in batch.kept else col(c))
    return q if _masking(batch) else q.where(col(OK))


def _report(batch: Batch, fingerprint: str) -> dict:
    lin, f = batch.lin, batch.figures
    assert lin is not None
    held = batch.strategy == "hold"
    not_released = f["batch_rows"] + f["held_before"] - f["released_rows"]
    info = {
        "like_release": int(lin.parent["id"]), "lineage_root": lin.root_id, "strategy": batch.strategy, "check": batch.check,
        "batch_fingerprint": fingerprint, "columns": batch.columns, **f,
        "suppressed_rows": 0 if held else not_released, "held_rows": not_released if held else 0,
        "lineage_meets_k": f["lineage_min_class"] is None or f["lineage_min_class"] >= lin.k,
    }
    rows = f["batch_rows"] + f["held_before"]
    return {
        "search": "like-release", "k": lin.k, "transformation": lin.transformation,
        "metric": _precision(batch, rows, not_released), "suppressed_rows": info["suppressed_rows"], "rows": f["batch_rows"],
        "nodes_evaluated": 0, "queries": 0, "seconds": None, "output": None, "release_id": None,
        "max_suppression": float((lin.root.get("policy") or {}).get("max_suppression") or 0.0),
        "suppression_budget": rows,  # a batch has no budget: its suppression is per class
        "quasi_identifiers": lin.qis, "input": batch.source_text, "hierarchies": [h.describe() for h in batch.hierarchies],
        "privacy": {"models": [{"model": "k-anonymity", "k": lin.k, "over": "lineage" if batch.check == "cumulative" else "each batch"}],
                    "classes": f["batch_classes"], "min_class_size": f["batch_min_class"], "suppressed_rows": not_released},
        "incremental": info,
        **({"dry_run": {"would_write": batch.target.describe()}} if batch.target.kind != "none" else {}),
    }


def _precision(batch: Batch, rows: int, not_released: int) -> dict:
    """Precision of the candidate rows (the batch's and the held ones) as released: each QI's
    level over its height, a row not released counting 1 (a full-domain transformation; a cut
    has none, ``value`` 0 with name ``none``)."""
    lin = batch.lin
    assert lin is not None
    levels = [lin.transformation[q] for q in lin.qis]
    if not all(isinstance(v, int) for v in levels) or not rows:
        return {"name": "none", "value": 0.0}
    p = sum(v / h.max_level if h.max_level else 0.0 for v, h in zip(levels, batch.hierarchies)) / len(levels)
    return {"name": "precision", "value": (p * (rows - not_released) + not_released) / rows}


def _entry(batch: Batch, report: dict) -> dict:
    lin = batch.lin
    assert lin is not None
    policy = {k: v for k, v in batch.policy.flat().items() if v not in (None, [], {}, False) and k != "qi"}
    policy.update(qi=lin.specs, k=lin.k, drop_columns=lin.drop_columns)
    return {
        "source": batch.source_text, "search": "like-release", "policy": policy,
        "transformation": lin.transformation, "privacy": report["privacy"], "metrics": report["metric"],
        "rows": report["rows"], "suppressed_rows": report["suppressed_rows"] + report["incremental"]["held_rows"],
        "input_hash": report["incremental"]["batch_fingerprint"], "report": report,
    }


def _write(batch: Batch, report: dict, fingerprint: str) -> None:
    """The release, its registry row, the ledger and the holding table: both or neither."""
    lin = batch.lin
    assert lin is not None
    report.pop("dry_run", None)
    classes = _released_classes(batch)

    def also(reg_engine, release_id: int) -> None:
        report["release_id"] = release_id
        lineage.set_lineage(reg_engine, release_id, int(lin.parent["id"]), lin.root_id, fingerprint, _lineage_info(report))
        if not lin.ledger_exists:
            lineage.create_ledger(reg_engine, lin.root_id, _root_output(batch), lin.qis)
        lineage.add_to_ledger(reg_engine, lin.root_id, release_id, classes(reg_engine), lin.qis)
        if batch.strategy == "hold":
            _update_held(batch, release_id)

    entry = _entry(batch, report)
    if batch.lazy:
        _prepare_relation(batch, entry, also)
        report["output"], report["release_id"] = "relation", batch.relation_state["release_id"]
        return
    written = release_mod.write_query(batch.engine, release_query(batch), batch.target, batch.session.source, entry, batch.reg_where if batch.target.kind in ("parquet", "csv") else None, also=also)
    report["output"], report["release_id"] = written["output"], written["release_id"]


def _prepare_relation(batch: Batch, entry: dict, also) -> None:
    """On the caller's DuckDB connection with no output: the registry row, the ledger and the
    holding table in one transaction, with the released rows appended to ``append_to`` (a dbt
    incremental model's table) in it too; else the release is a lazy relation over the batch's
    flagged rows (a temporary table, fixed before the holding table changed) for the caller."""
    engine = batch.engine
    with engine.transaction():
        release_id = registry.record(engine, dict(entry, target="relation" if batch.append_to is None else f"table {batch.append_to}"))
        if batch.append_to is not None:
            engine.execute(exp.insert(release_query(batch), exp.to_table(batch.append_to, dialect="duckdb"), columns=batch.columns))
        also(engine, release_id)
    if batch.append_to is not None:
        batch.relation_state = {"kind": "table", "table": batch.append_to, "connection": engine.con, "release_id": release_id}
        return
    sql, temps = keep_release_query(engine, release_query(batch))
    batch.relation_state = {"kind": "relation", "connection": engine.con, "sql": sql, "temps": temps, "release_id": release_id}


def _lineage_info(report: dict) -> dict:
    keep = ("strategy", "check", "columns", "batch_rows", "released_rows", "released_from_held", "suppressed_rows", "held_rows",
            "unseen_rows", "breaking_rows", "lineage_min_class", "lineage_classes", "lineage_meets_k")
    return {key: report["incremental"][key] for key in keep}


def _released_classes(batch: Batch):
    """``f(registry engine) -> FROM item`` of this batch's released classes (QIs, ``rows``): the
    batch engine's table, or its (small) aggregate registered on another registry's engine."""
    lin = batch.lin
    assert lin is not None
    q = exp.select(*[col(c) for c in lin.qis], exp.alias_(col("n"), lineage.ROWS, quoted=True)).from_(table_ref(batch.tables["classes"])).where(col(OK))
    if batch.shared:
        return lambda reg_engine: q.subquery()
    table = batch.engine.fetch_arrow(q)

    def registered(reg_engine):
        name = reg_engine.temp_name("batch_released")
        reg_engine.register_arrow(name, table)
        return table_ref(name)

    return registered


def _update_held(batch: Batch, release_id: int) -> None:
    """Held rows whose class is now released leave the holding table; this batch's rows of
    classes still under k join it (generalized; rows with unseen values are not kept)."""
    lin, engine = batch.lin, batch.engine
    assert lin is not None
    name = lineage.held_name(lin.root_id)
    stay = exp.select(*[col(c) for c in _stored_columns(batch)], exp.alias_(exp.cast(lit(int(release_id)), "BIGINT"), HELD_BY, quoted=True)).from_(table_ref(batch.tables["flagged"]))
    stay = stay.where(exp.and_(exp.Not(this=col(OK)), exp.Not(this=col(UNSEEN)), exp.Not(this=col(HELD))))
    if not lin.held_exists:
        engine.execute(engine.dialect.create_table(table_ref(name), stay))
        return
    released = exp.select(lit(1)).from_(table_ref(batch.tables["classes"], alias="d")).where(exp.and_(col(OK, "d"), _same_class(name, "d", lin.qis)))
    engine.execute(exp.delete(table_ref(name), where=exp.Exists(this=released)))
    engine.execute(exp.insert(stay, table_ref(name), columns=[*_stored_columns(batch), HELD_BY]))


def _state(batch: Batch) -> dict:
    if batch.relation_state:
        return batch.relation_state
    t = batch.target
    if t.kind == "none" or batch.policy.release.like_release is None:
        return {}
    engine = batch.engine
    return {"kind": t.kind, "path": t.path, "delimiter": t.delimiter, "table": t.table, "database": engine.database,
            "postgres": engine.dialect == "postgres", "connection": batch.session.engine.con if engine.borrowed and engine.dialect == "duckdb" else None}
