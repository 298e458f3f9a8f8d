"""The Python API: ``anonymize`` (plan + release), ``check`` (measure any table), ``plan_sql``.

>>> import sqlanon
>>> report = sqlanon.anonymize(input="adult.csv", delimiter=";", qi={"age": "age.csv"}, k=5,
...                            output="out.parquet")          # doctest: +SKIP
>>> report["transformation"], report["metric"]                # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import math
import os
import time
from typing import Any, Callable

from sqlglot import exp

from sqlanon import release as release_mod
from sqlanon.engine import connect
from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.hierarchy import load_hierarchy
from sqlanon.metrics import METRICS
from sqlanon.plan import Plan, Recoding
from sqlanon.policy import Policy
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness
from sqlanon.search import LATTICE_SEARCHES, PLANNERS
from sqlanon.search.context import SearchContext
from sqlanon.search.lattice import Lattice
from sqlanon.source import Source, col
from sqlanon.stats import Statistics, if_, lit, sum_


def _default_memory_limit() -> str:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return f"{max(1, int(total * 0.5 / 2**30))}GB"
    except (ValueError, OSError, AttributeError):
        return "4GB"


class Session:
    """An engine, a source and the hierarchies of one run (shared by anonymize/check/sql)."""

    def __init__(self, policy: Policy, progress: Callable[[str], None] | None = None, connection=None) -> None:
        self.policy = policy
        self.progress = progress or (lambda message: None)
        if connection is not None:
            # a table of the caller's open DuckDB connection (e.g. a dbt-duckdb model's session)
            from sqlanon.engine import DuckDBEngine

            name = policy.table or policy.input
            if not name:
                raise ConfigError("with connection=..., name the input table (table=...)")
            self.source = Source(kind="table", table=name, database=None)
            self.engine = DuckDBEngine(connection=connection, memory_limit=policy.memory_limit)
            _require_table(self.engine, self.source)
            return
        self.source = Source.open(policy.input, policy.format, policy.table, policy.delimiter)
        database = ":memory:"
        if self.source.kind == "table":
            database = self.source.database
            if policy.output_table and policy.database and os.path.abspath(policy.database) != os.path.abspath(database):
                raise ConfigError("--output-table writes into the input database; --database must name the same file")
        elif policy.output_table:
            if not policy.database:
                raise ConfigError("--output-table with a file input needs --database PATH.duckdb to write into")
            database = policy.database
        self.engine = connect(database=database, memory_limit=policy.memory_limit or _default_memory_limit(), threads=policy.threads)
        if self.source.kind == "table":
            _require_table(self.engine, self.source)

    def hierarchies(self, qis: dict[str, str]) -> list:
        self.source.require_columns(self.engine, list(qis), "quasi-identifier column")
        return [load_hierarchy(spec, column, self.engine, self.source, self.policy.hierarchy_delimiter) for column, spec in qis.items()]

    def close(self) -> None:
        self.engine.close()


def _require_table(engine, source) -> None:
    from sqlanon.errors import EngineError

    try:
        source.columns(engine)
    except EngineError:
        raise ConfigError(f"table {source.table!r} not found in {source.database}") from None


def build_requirement(policy: Policy, rows: int | None = None) -> Requirement:
    models: list = [] if policy.search == "top-down" else [KAnonymity(policy.k)]
    if policy.l is not None:
        models.append(DistinctLDiversity(policy.l) if policy.l_diversity == "distinct" else EntropyLDiversity(policy.l))
    if policy.t is not None:
        models.append(TCloseness(policy.t, policy.t_distance))
    budget = math.floor(policy.max_suppression * rows + 1e-9) if rows is not None else 0
    return Requirement(models, budget=budget, max_suppression=policy.max_suppression)


def qi_specs(policy: Policy) -> dict[str, str]:
    qis = dict(policy.qi)
    for column in policy.search_options.get("numeric", []) or []:
        qis.setdefault(column, "numeric")
    return qis


def anonymize(policy: Policy | dict | str | None = None, *, progress: Callable[[str], None] | None = None, dry_run: bool = False, connection=None, _fail_after_write: bool = False, **options: Any) -> dict:
    """Find the plan and write the release; returns the report (the CLI's ``--json`` object).

    ``policy`` may be a :class:`Policy`, a dict of policy keys or a YAML path; keyword options
    override it (same names as the policy keys / CLI flags). ``connection`` runs on an open DuckDB
    connection instead (``table=`` names the input; outputs go to its database; the connection is
    not closed, and an open transaction of the caller's is joined rather than committed).
    """
    started = time.perf_counter()
    policy = _as_policy(policy, options)
    if connection is not None and not policy.input:
        policy.input = policy.table
    policy.validate()
    say = progress or (lambda message: None)
    session = Session(policy, say, connection)
    try:
        target = release_mod.Target.from_options(policy.output, policy.output_table, policy.in_place, session.source, policy.overwrite, policy.output_delimiter)
        qis = qi_specs(policy)
        hierarchies = session.hierarchies(qis)
        requirement = build_requirement(policy)
        metric = METRICS[policy.metric]()
        needs = requirement.needs.merge(metric.needs)
        class_column = policy.class_column
        stats = Statistics(session.engine, session.source, list(qis), hierarchies, policy.sensitive_column, class_column, needs)
        t0 = time.perf_counter()
        stats.prepare()
        say(f"base frequency set: {stats.base.rows:,} QI tuples from {stats.rows:,} rows ({time.perf_counter() - t0:.2f} s)")
        requirement.budget = math.floor(policy.max_suppression * stats.rows + 1e-9)
        linkability = policy.search == "top-down" and str(policy.search_options.get("privacy", "")).endswith("linkability")
        if policy.k > stats.rows and not linkability:  # a linkability threshold may be a percent
            raise UnsatisfiableError(f"k={policy.k} is larger than the table ({stats.rows} rows)")
        for model in requirement.models:
            if isinstance(model, TCloseness):
                model.global_dist = {v: n / stats.rows for v, n in stats.sensitive_domain}
                model.order = [v for v, _ in stats.sensitive_domain]
        plan = run_search(policy, session, stats, requirement, metric, say)
        verified = verify_plan(stats, plan)
        say(f"search {policy.search}: {plan.nodes_evaluated} nodes evaluated, {session.engine.queries} queries")
        report = build_report(policy, stats, plan, verified)
        if not dry_run and target.kind != "none":
            entry = {
                "source": session.source.describe(),
                "search": policy.search,
                "policy": _policy_dict(policy),
                "transformation": plan.transformation,
                "privacy": report["privacy"],
                "metrics": {"name": plan.metric_name, "value": plan.metric_value},
                "rows": stats.rows,
                "suppressed_rows": plan.suppressed_rows,
            }
            written = release_mod.write(stats, plan, target, policy.suppression, policy.drop_columns, policy.registry, entry, fail_after_write=_fail_after_write)
            report["output"] = written["output"]
            report["release_id"] = written["release_id"]
            say(f"wrote {written['output']} (release {written['release_id']})")
        report["queries"] = session.engine.queries
        report["seconds"] = round(time.perf_counter() - started, 3)
        if policy.report:
            from sqlanon.report import write_html

            write_html(report, policy.report)
        return report
    finally:
        session.close()


def run_search(policy: Policy, session: Session, stats: Statistics, requirement: Requirement, metric, say) -> Plan:
    if policy.search in LATTICE_SEARCHES:
        last = [time.perf_counter()]

        def tick(evaluated: int) -> None:  # a line every few seconds on long searches
            now = time.perf_counter()
            if now - last[0] >= 5.0:
                last[0] = now
                best = lattice.best_value
                say(f"{evaluated} nodes evaluated of {len(lattice):,}" + (f", best {metric.name} so far {best:.6g}" if best < math.inf else ""))

        lattice = Lattice(stats, requirement, metric, progress=tick)
        result = LATTICE_SEARCHES[policy.search](lattice, **policy.search_options)
        node = result.node
        recoding = Recoding.from_node(stats.hierarchies, node)
        return Plan(
            search=policy.search,
            qis=stats.qis,
            recoding=recoding,
            transformation={q: int(level) for q, level in zip(stats.qis, node)},
            requirement=requirement,
            rows=stats.rows,
            suppressed_rows=result.node_stats.suppressed,
            metric_name=metric.name,
            metric_value=float(result.value),
            node=node,
            nodes_evaluated=result.nodes_evaluated,
            extra={"nodes_total": result.nodes_total},
        )
    module_name, _, func = PLANNERS[policy.search].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        raise ConfigError(f"search {policy.search!r} is not available in this build ({err})") from None
    options = dict(policy.search_options)
    options.setdefault("k", policy.k)
    options.setdefault("metric", policy.metric)
    options.setdefault("registry", policy.registry)
    ctx = SearchContext(session.engine, session.source, stats.qis, stats.hierarchies, stats, requirement, metric, options, say)
    plan = getattr(module, func)(ctx)
    if ctx.steps and "trace" not in plan.extra and options.get("trace"):
        plan.extra["trace"] = ctx.steps
    return plan


def verify_plan(stats: Statistics, plan: Plan) -> dict:
    """Re-evaluate the final plan (one query): suppressed rows and the smallest released class."""
    ok = plan.requirement.predicate()
    node = plan.node if plan.node is not None else plan.recoding
    min_released = exp.Min(this=if_(col("ok"), col("cnt"), exp.Null()))
    aggs = [("min_released", min_released)]
    if stats.has_s and stats.needs.distinct_s:
        aggs.append(("min_distinct_s", exp.Min(this=if_(col("ok"), col("distinct_s"), exp.Null()))))
    ns = stats.evaluate(node, ok, aggs)
    if ns.suppressed != plan.suppressed_rows:
        raise AssertionError(f"plan says {plan.suppressed_rows} suppressed rows, the data says {ns.suppressed}")
    return {"classes": ns.classes - ns.bad_classes, "min_class_size": ns.extra.get("min_released"), "suppressed_rows": ns.suppressed, **({"min_distinct_sensitive": ns.extra["min_distinct_s"]} if "min_distinct_s" in ns.extra else {})}


def build_report(policy: Policy, stats: Statistics, plan: Plan, verified: dict) -> dict:
    report = {
        "search": plan.search,
        "k": policy.k,
        "transformation": plan.transformation,
        "metric": {"name": plan.metric_name, "value": plan.metric_value},
        "suppressed_rows": plan.suppressed_rows,
        "rows": stats.rows,
        "nodes_evaluated": plan.nodes_evaluated,
        "queries": stats.engine.queries,
        "seconds": None,
        "output": None,
        "max_suppression": policy.max_suppression,
        "suppression_budget": plan.requirement.budget,
        "privacy": {"models": plan.requirement.describe(), **verified},
        "quasi_identifiers": stats.qis,
        "hierarchies": [h.describe() for h in stats.hierarchies],
    }
    for key, value in plan.extra.items():
        report.setdefault(key, value)
    return report


def _as_policy(policy, options: dict) -> Policy:
    if isinstance(policy, Policy):
        result = policy
    elif isinstance(policy, str):
        result = Policy.from_file(policy)
    elif isinstance(policy, dict):
        result = Policy.from_dict(policy)
    elif policy is None:
        result = Policy()
    else:
        raise ConfigError(f"policy must be a Policy, dict or path, got {type(policy).__name__}")
    if options:
        result.update(options, "arguments")
    return result


def _policy_dict(policy: Policy) -> dict:
    from dataclasses import asdict

    return {k: v for k, v in asdict(policy).items() if v not in (None, [], {}, False)}


# ------------------------------------------------------------------------------------------------
# check: measure any table without changing it


def check(input: str, qi: list[str] | dict[str, str], *, format: str | None = None, delimiter: str | None = None, table: str | None = None, k: int | None = None, l: float | None = None, t: float | None = None, t_distance: str = "equal", sensitive_column: str | None = None, class_column: str | None = None, hierarchy_delimiter: str | None = None, suppressed_marker: str = "*", memory_limit: str | None = None, max_suppression: float = 0.0) -> dict:
    """Measure a (released) table: class sizes, l, t, suppressed rows and metrics.

    ``qi`` is a list of columns, or a mapping column -> hierarchy spec; with hierarchies, values are
    read back as levels of the hierarchy so precision and LM can be measured too. A row whose QIs
    are all ``*`` counts as suppressed.
    """
    from sqlanon.metrics.lm import loss_table

    policy = Policy(input=input, format=format, delimiter=delimiter, table=table, memory_limit=memory_limit, hierarchy_delimiter=hierarchy_delimiter)
    session = Session(policy)
    try:
        specs = qi if isinstance(qi, dict) else {c: None for c in qi}
        columns = list(specs)
        session.source.require_columns(session.engine, columns, "quasi-identifier column")
        flats = [load_hierarchy("flat", c, session.engine, session.source) for c in columns]
        needs_models = []
        if l is not None:
            needs_models.append(DistinctLDiversity(int(l)))
            needs_models.append(EntropyLDiversity(1))
        if t is not None:
            needs_models.append(TCloseness(t, t_distance))
        req = Requirement(needs_models, budget=0)
        from sqlanon.stats import ClassNeeds

        needs = req.needs.merge(ClassNeeds(majority_y=class_column is not None))
        if sensitive_column and l is None and t is None:
            needs = needs.merge(ClassNeeds(distinct_s=True, entropy_s=True))
        stats = Statistics(session.engine, session.source, columns, flats, sensitive_column, class_column, needs)
        stats.prepare()
        # the all-suppressed class: every QI equal to the marker
        star_codes = [h.leaf_index.get(suppressed_marker) for h in flats]
        not_star = exp.Boolean(this=True)
        if all(c is not None for c in star_codes):
            parts = [exp.EQ(this=col(stats.qcol(i)), expression=lit(c)) for i, c in enumerate(star_codes)]
            not_star = exp.Not(this=exp.Paren(this=exp.and_(*parts) if len(parts) > 1 else parts[0]))
        aggs = [
            ("min_class", exp.Min(this=if_(not_star, col("cnt"), exp.Null()))),
            ("suppressed", sum_(if_(not_star, lit(0), col("cnt")))),
            ("released_classes", sum_(if_(not_star, lit(1), lit(0)))),
            ("dm", sum_(if_(not_star, exp.Mul(this=col("cnt"), expression=col("cnt")), lit(0)))),
        ]
        if stats.has_s:
            if stats.needs.distinct_s:
                aggs.append(("l_distinct", exp.Min(this=if_(not_star, col("distinct_s"), exp.Null()))))
            if stats.needs.entropy_s:
                ent = exp.Exp(this=exp.Sub(this=exp.Ln(this=exp.Cast(this=col("cnt"), to=exp.DataType.build("DOUBLE"))), expression=exp.Div(this=col("nlogn_s"), expression=col("cnt"))))
                aggs.append(("l_entropy", exp.Min(this=if_(not_star, ent, exp.Null()))))
            if stats.needs.emd_equal:
                aggs.append(("t_equal", exp.Max(this=if_(not_star, col("emd_equal"), exp.Null()))))
            if stats.needs.emd_ordered:
                aggs.append(("t_ordered", exp.Max(this=if_(not_star, col("emd_ordered"), exp.Null()))))
        if stats.has_y:
            aggs.append(("cm_minority", sum_(if_(not_star, exp.Sub(this=col("cnt"), expression=col("maxy")), lit(0)))))
        node = tuple(0 for _ in columns)
        ns = stats.evaluate(node, exp.Boolean(this=True), aggs)
        e = ns.extra
        n = stats.rows
        sup = int(e["suppressed"] or 0)
        released_classes = int(e["released_classes"] or 0)
        out: dict[str, Any] = {
            "input": session.source.describe(),
            "rows": n,
            "quasi_identifiers": columns,
            "classes": released_classes,
            "k": int(e["min_class"]) if e["min_class"] is not None else None,
            "suppressed_rows": sup,
            "metrics": {
                "discernibility": float(e["dm"] or 0) + sup * n,
                "aecs": n / max(released_classes + (1 if sup else 0), 1),
            },
        }
        histogram = stats.class_histogram(node)
        out["class_size_histogram"] = [[size, count] for size, count in histogram[:50]]
        if len(histogram) > 50:
            out["class_size_histogram"].append(["more", sum(c for _, c in histogram[50:])])
        if k is not None:
            out["k_anonymous"] = out["k"] is not None and out["k"] >= k and sup <= math.floor(max_suppression * n + 1e-9)
        if "l_distinct" in e:
            out["l_distinct"] = e["l_distinct"]
        if "l_entropy" in e:
            out["l_entropy"] = e["l_entropy"]
        if "t_equal" in e:
            out["t"] = e["t_equal"]
        if "t_ordered" in e:
            out["t"] = e["t_ordered"]
        if "cm_minority" in e:
            out["metrics"]["cm"] = (float(e["cm_minority"] or 0) + sup) / n
        # precision and LM from hierarchies: read released values back as hierarchy levels
        if all(spec for spec in specs.values()):
            hs = [load_hierarchy(spec, c, session.engine, session.source, hierarchy_delimiter) if not _is_builder(spec) else None for c, spec in specs.items()]
            if all(h is not None for h in hs):
                prec, lm, per_col = 0.0, 0.0, {}
                for i, (h, flat) in enumerate(zip(hs, flats)):
                    p_sum, l_sum = 0.0, 0.0
                    for code, value in enumerate(flat.leaves):
                        rows_v = stats.column_freqs[i][code]
                        level = h.level_of(value) if value != suppressed_marker else h.max_level
                        if level is None:
                            raise ConfigError(f"column {columns[i]!r}: released value {value!r} is not in its hierarchy")
                        p_sum += rows_v * (level / h.max_level if h.max_level else 0.0)
                        labels = h.labels(level)
                        l_sum += rows_v * loss_table(h, level)[labels.index(value)] if value in labels else rows_v
                    per_col[columns[i]] = l_sum / n
                    prec += p_sum / n
                    lm += l_sum / n
                out["metrics"]["precision"] = prec / len(hs)
                out["metrics"]["lm"] = lm / len(hs)
                out["metrics"]["lm_per_column"] = per_col
        out["queries"] = session.engine.queries
        return out
    finally:
        session.close()


def _is_builder(spec: str) -> bool:
    from sqlanon.hierarchy import BUILDERS

    return str(spec).split(":")[0] in BUILDERS


def plan_sql(policy: Policy | dict | str | None = None, dialect: str = "duckdb", **options) -> list[tuple[str, str]]:
    """The SQL a run executes, rendered for ``dialect``: the base frequency set, the final node's
    evaluation and the release query. The search itself runs on DuckDB to find the final node."""
    policy = _as_policy(policy, options)
    policy.validate()
    session = Session(policy)
    try:
        qis = qi_specs(policy)
        hierarchies = session.hierarchies(qis)
        requirement = build_requirement(policy)
        metric = METRICS[policy.metric]()
        stats = Statistics(session.engine, session.source, list(qis), hierarchies, policy.sensitive_column, policy.class_column, requirement.needs.merge(metric.needs))
        stats.prepare()
        requirement.budget = math.floor(policy.max_suppression * stats.rows + 1e-9)
        plan = run_search(policy, session, stats, requirement, metric, lambda m: None)
        node = plan.node if plan.node is not None else plan.recoding
        maps = [f"sqlanon_map{i}" for i in range(len(stats.qis))]
        out = []
        original = session.engine.dialect
        session.engine.dialect = dialect
        if dialect != "duckdb":
            # other engines name the source as a table; reading files is the engine's job
            from sqlanon.source import table_ref

            session.engine.source_from = lambda source: table_ref("source")
        try:
            out.append(("base frequency set", stats.base_query().sql(dialect=dialect, pretty=True)))
            out.append(("final node", stats.node_query(node, requirement.predicate(), metric.aggregates(stats, node) if plan.node is not None else [], stats.base).sql(dialect=dialect, pretty=True)))
            bad = "sqlanon_bad" if plan.suppressed_rows else None
            if bad:
                out.append(("suppressed classes", stats.bad_class_labels_create(node, requirement.predicate(), bad).sql(dialect=dialect, pretty=True)))
            out.append(("release", release_mod.release_select(stats, maps, bad, policy.suppression, policy.drop_columns).sql(dialect=dialect, pretty=True)))
        finally:
            session.engine.dialect = original
        return out
    finally:
        session.close()


# ------------------------------------------------------------------------------------------------
# check a plan: what a transformation (levels or a flexible cut) achieves on a table


def load_transformation(spec: str | dict) -> dict:
    """A transformation from a dict, a JSON string, or a JSON file (a whole ``--json`` report or
    just its ``transformation`` object)."""
    import json

    if isinstance(spec, dict):
        data = spec
    else:
        text = spec
        if os.path.isfile(spec):
            with open(spec, encoding="utf-8") as fh:
                text = fh.read()
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise ConfigError(f"--transformation is neither a JSON file nor JSON: {str(spec)[:60]!r}") from None
    if isinstance(data, dict) and isinstance(data.get("transformation"), dict):
        data = data["transformation"]
    if not isinstance(data, dict) or not data:
        raise ConfigError("--transformation must map each quasi-identifier to a level or a cut")
    return data


def check_plan(input: str, qi: dict[str, str], transformation, *, format: str | None = None, delimiter: str | None = None, table: str | None = None, k: int = 1, max_suppression: float = 0.0, class_column: str | None = None, numeric=(), hierarchy_delimiter: str | None = None, memory_limit: str | None = None) -> dict:
    """Apply a transformation to a table *in SQL, without writing anything* and measure it: rows
    suppressed under k, the smallest released class, LM (per column, intervals or tree cuts), CM
    with ``class_column``, precision for full-domain levels."""
    from sqlanon.stats import ClassNeeds

    transformation = load_transformation(transformation)
    policy = Policy(input=input, format=format, delimiter=delimiter, table=table, memory_limit=memory_limit, hierarchy_delimiter=hierarchy_delimiter)
    session = Session(policy)
    try:
        columns = list(qi)
        missing = [c for c in columns if c not in transformation]
        if missing:
            raise ConfigError(f"the transformation has no entry for quasi-identifier {missing[0]!r}")
        hierarchies = session.hierarchies(qi)
        needs = ClassNeeds(majority_y=class_column is not None)
        stats = Statistics(session.engine, session.source, columns, hierarchies, None, class_column, needs)
        stats.prepare()
        levels = [transformation[c] for c in columns]
        if all(isinstance(v, int) for v in levels):
            for c, v, h in zip(columns, levels, hierarchies):
                if not 0 <= v <= h.max_level:
                    raise ConfigError(f"level {v} of {c!r} is outside its hierarchy (0..{h.max_level})")
            recoding = Recoding.from_node(hierarchies, levels)
        else:
            from sqlanon.cut import recoding_from_transformation

            recoding = recoding_from_transformation(transformation, columns, hierarchies, numeric)
        requirement = Requirement([KAnonymity(k)], budget=math.floor(max_suppression * stats.rows + 1e-9))
        # per released value of each QI: its LM loss (tree: leaves below it; interval: its width)
        losses = []
        for i, (h, labels) in enumerate(zip(hierarchies, recoding.labels)):
            m = len(h.rows)
            if h.numeric or all(lbl.startswith(("[", "(")) for lbl in labels):
                values = [float(r[0]) for r in h.rows]
                span = (max(values) - min(values)) or 1.0
                lo = [math.inf] * len(labels)
                hi = [-math.inf] * len(labels)
                for leaf, code in enumerate(recoding.codes[i]):
                    lo[code], hi[code] = min(lo[code], values[leaf]), max(hi[code], values[leaf])
                from sqlanon.cut import parse_intervals

                try:
                    ivs = parse_intervals(labels, columns[i])
                    losses.append([(b - a) / span for a, b in ivs])
                except (ConfigError, Exception):
                    losses.append([(b - a) / span if b >= a else 0.0 for a, b in zip(lo, hi)])
            else:
                under = [0] * len(labels)
                for code in recoding.codes[i]:
                    under[code] += 1
                losses.append([(u - 1) / (m - 1) if m > 1 else 0.0 for u in under])

        def aggs(params):
            from sqlanon.stats import lookup

            total = None
            for i, loss in enumerate(losses):
                term = lookup(loss, col(stats.qcol(i)), stats.dialect, params)
                total = term if total is None else exp.Add(this=total, expression=term)
            out = [
                ("min_released", exp.Min(this=if_(col("ok"), col("cnt"), exp.Null()))),
                ("lm_released", sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=exp.Paren(this=total)), lit(0.0)))),
            ]
            for i, loss in enumerate(losses):
                out.append((f"lm_{i}", sum_(if_(col("ok"), exp.Mul(this=col("cnt"), expression=lookup(loss, col(stats.qcol(i)), stats.dialect, params)), lit(0.0)))))
            if stats.has_y:
                out.append(("cm_released", sum_(if_(col("ok"), exp.Sub(this=col("cnt"), expression=col("maxy")), lit(0)))))
            return out

        ns = stats.evaluate(recoding, requirement.predicate(), aggs)
        n, sup = stats.rows, ns.suppressed
        per_column = {c: (float(ns.extra[f"lm_{i}"] or 0.0) + sup) / n for i, c in enumerate(columns)}
        out = {
            "input": session.source.describe(),
            "rows": n,
            "k": k,
            "suppressed_rows": sup,
            "suppression_budget": requirement.budget,
            "within_budget": sup <= requirement.budget,
            "classes": ns.classes - ns.bad_classes,
            "min_class_size": ns.extra["min_released"],
            "metrics": {"lm": sum(per_column.values()) / len(columns), "lm_per_column": per_column},
            "queries": session.engine.queries,
        }
        if stats.has_y:
            out["metrics"]["cm"] = (float(ns.extra["cm_released"] or 0) + sup) / n
        if all(isinstance(v, int) for v in levels):
            p = sum(v / h.max_level if h.max_level else 0.0 for v, h in zip(levels, hierarchies)) / len(levels)
            out["metrics"]["precision"] = (p * (n - sup) + sup) / n
        return out
    finally:
        session.close()
