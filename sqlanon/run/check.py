"""Measuring: what a table achieves (``check``) and what a plan would do to a table (``check_plan``),
without writing anything. Both answer from a frequency set built by one scan."""

from __future__ import annotations

import inspect
import math
from typing import Any

from sqlglot import exp

from sqlanon.run.session import Session
from sqlanon.errors import ConfigError, SqlanonError
from sqlanon.hierarchy import BUILDERS, MAX_VALUE_LENGTH, load_hierarchy
from sqlanon.plan import Recoding
from sqlanon.config.policy import Policy
from sqlanon.privacy import MODELS, KAnonymity, Requirement
from sqlanon.privacy.base import PrivacyModel, budget_rows
from sqlanon.privacy.figure import Figure, released, verdict
from sqlanon.privacy.registry import check_keys, figures
from sqlanon.expr.atoms import col, table_ref
from sqlanon.stats import Statistics
from sqlanon.expr.atoms import if_, lit, sum_
from sqlanon.metrics.lm import loss_table
from sqlanon.risk import DEFAULT_THRESHOLD, measure, validate_options
from sqlanon.privacy.needs import DECLARED, ClassNeeds
from sqlanon.files.strict_load import load_json_spec
from sqlanon.search.genetic.cut import recoding_from_transformation
from sqlanon.dialect import lookup
from sqlanon.run import by_release


def check(input: str | None = None, qi: list[str] | dict[str, str] | None = None, *, format: str | None = None, delimiter: str | None = None, table: str | None = None, class_column: str | None = None, hierarchy_delimiter: str | None = None, suppressed_marker: str | None = "*", memory_limit: str | None = None, risk: bool = False, population_fraction: float | None = None, risk_threshold: float | None = None, max_value_length: int = MAX_VALUE_LENGTH, release: int | None = None, registry: str | None = None, release_policy: bool = True, **model_options: Any) -> dict:
    """Measure a (released) table: class sizes, suppressed rows and metrics, and each privacy
    model's figure asked by its keys (``model_options``: every key a model's figure reads,
    :func:`sqlanon.privacy.registry.check_keys`: ``k``, ``max_suppression``, ``l``, ``t``,
    ``t_distance``, ``sensitive_column``, ``beta_likeness`` (the largest relative gain),
    ``delta_disclosure`` (the largest ``|log2(q/p)|``), ``average_risk`` (released classes /
    released rows), ... and whether each holds); with ``risk`` its re-identification risk
    (:mod:`sqlanon.risk`; ``population_fraction`` adds population uniqueness estimates,
    ``risk_threshold`` the prosecutor threshold).

    ``qi`` is a list of columns, or a mapping column -> hierarchy spec; with hierarchies, values are
    read back as levels of the hierarchy so precision and LM can be measured too. A row whose QIs
    are all ``suppressed_marker`` (``*``: sqlanon's masked rows; a masked release never holds it
    as data) counts as suppressed; ``suppressed_marker=None`` reads every row as data (a table
    that is no release, whose QIs may hold ``*``). Column names resolve as the engine resolves
    them (``zip`` finds ``ZIP`` on DuckDB).

    **By the release's own policy** (:mod:`sqlanon.run.by_release`): a table a registry knows (a
    file with ``sqlanon_releases.duckdb`` beside it, a table of a database holding
    ``sqlanon_releases``), or ``release=N`` (with ``registry=``, or the release's ``input``), is
    checked by that release's QIs, k, suppression budget and models, each one given here winning;
    the result then holds ``release`` and ``verdicts``. ``release_policy=False`` measures the table
    only by what is given. ``input`` may be a :class:`~sqlanon.release.result.Release` written to
    a file or a table: ``sqlanon.check(sqlanon.anonymize(..., output="out.parquet"))``.
    """
    given = _model_options(model_options)
    if hasattr(input, "_state") and hasattr(input, "to_dict"):  # a Release: where it was written
        input, table, format = by_release.release_location(input)
    found = by_release.locate(input, table, format, release, registry) if release_policy or release is not None or registry else None
    rest: dict[str, Any] = {"format": format, "delimiter": delimiter, "class_column": class_column, "hierarchy_delimiter": hierarchy_delimiter, "suppressed_marker": suppressed_marker,
            "memory_limit": memory_limit, "risk": risk, "population_fraction": population_fraction, "risk_threshold": risk_threshold, "max_value_length": max_value_length}
    if found is not None:
        return _check_by_release(found, qi, given, rest)
    if given["max_suppression"] is not None and given["k"] is None:
        raise ConfigError("--max-suppression needs --k (the suppression budget of a k-anonymity check)")
    if not input or not qi:
        raise ConfigError("check needs an input (--input, input=) and its quasi-identifiers (--qi, qi=), or a release a registry knows (--release N --registry R)" if not input else
                          f"give the quasi-identifier columns to check (--qi, qi=): no registry knows a release written to {input}")
    return _measure(input, qi, given, table=table, **rest)


def _model_options(given: dict[str, Any]) -> dict[str, Any]:
    """Every model option of the check (the registry's :func:`check_keys`, read at the call), the
    ones not given None; a keyword no model's figure reads is a TypeError, as Python's own."""
    keys = check_keys()
    unknown = sorted(set(given) - set(keys))
    if unknown:
        raise TypeError(f"check() got an unexpected keyword argument {unknown[0]!r}")
    return {key: given.get(key) for key in keys}


def _signature() -> inspect.Signature:
    """:func:`check`'s signature with its model options as keyword parameters (``help(check)``,
    editors and typer read it): one per :func:`check_keys`, their declared types."""
    own = inspect.signature(check)
    params = [p for p in own.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    at = next(i for i, p in enumerate(params) if p.name == "class_column")
    keys = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=key.type.__name__ + " | None") for name, key in check_keys().items()]
    return own.replace(parameters=params[:at] + keys + params[at:])


setattr(check, "__signature__", _signature())  # noqa: B010  (a function declares no such attribute for mypy)


def _check_by_release(found, qi, given: dict, rest: dict) -> dict:
    """The check of a release by its own policy: the measurement, then each model's verdict."""
    opts = by_release.options(found, given)
    if given["max_suppression"] is not None and opts.get("k") is None:
        raise ConfigError(f"--max-suppression needs --k (release {found.entry['id']} was written without k-anonymity)")
    if not qi and not found.settings["qi"]:
        raise ConfigError(f"release {found.entry['id']} records no quasi-identifiers; give qi=")
    rest = {**rest, "format": rest["format"] or found.format}
    dropped = _without_a_dropped_sensitive_column(found, opts, given, rest)
    twins = _twins_for(found, opts, dropped)
    out = _measure(found.input, qi or found.settings["qi"], opts, table=found.table, **rest, twins=twins)
    rows_budget = by_release.budget(found, given, out["rows"])
    out["verdicts"], not_checked = by_release.verdicts(out, opts, rows_budget, found.settings["models"])
    not_checked = _add_twin_verdicts(out, twins, not_checked)
    reads_s = {name for name, model in MODELS.items() if any(agg.sensitive for agg in model.aggregates)}  # the models reading the sensitive column
    not_checked = [f"{name} (its sensitive column {dropped!r} is not in the release)" if dropped and name in reads_s else f"{name} (check does not measure it)" for name in not_checked]
    if opts.get("k") is not None:
        out["k_anonymous"] = all(v["ok"] for v in out["verdicts"] if v["model"] in ("k-anonymity", "suppression"))
    out["release"] = {**found.describe(), "suppression_budget": rows_budget}
    if not_checked:
        out["not_checked"] = not_checked
    return out


def _twins_for(found, opts: dict, dropped: str | None) -> tuple[PrivacyModel, ...]:
    """The release's models the check has no figure for whose twin decides them (reading the
    release's sensitive column for them when it is there)."""
    unfigured = [str(m.get("model")) for m in found.settings["models"] if m.get("model") not in figures()]
    twins = release_twins(found, unfigured, sensitive_present=not dropped and found.settings.get("sensitive_column") is not None)
    if any(a.sensitive for m in twins for a in m.aggregates) and opts.get("sensitive_column") is None:
        opts["sensitive_column"] = found.settings["sensitive_column"]
    return twins


def _add_twin_verdicts(out: dict, twins, not_checked: list[str]) -> list[str]:
    """Each twin's verdict beside the measured ones; the names still not checked."""
    for m in twins:  # the models the check has no figure for: each one's own twin over the released classes
        required = " ".join(f"{k}={v}" for k, v in m.describe().items() if k != "model")
        out["verdicts"].append(verdict(m.name, required, None, out["twin_verdicts"][m.name]))
    out.pop("twin_verdicts", None)
    return [name for name in not_checked if name not in {m.name for m in twins}]


def _without_a_dropped_sensitive_column(found, opts: dict, given: dict, rest: dict) -> str | None:
    """A release that dropped its sensitive column (``drop_columns``) cannot be measured for the
    models that read it: they are left out of the check (and listed as not checked). Returns the
    column, or None when it is there (or given explicitly: then a missing one is an error)."""
    column = opts.get("sensitive_column")
    if column is None or given.get("sensitive_column") is not None:
        return None
    session = Session(Policy(input=found.input, format=rest["format"], delimiter=rest["delimiter"], table=found.table, memory_limit=rest["memory_limit"]))
    try:
        present = column in session.source.column_names(session.engine)
    finally:
        session.close()
    if present:
        return None
    for key in by_release.sensitive_keys():  # the keys of every figure reading the sensitive column
        opts[key] = None
    return column


def _measure(input: str, qi: list[str] | dict[str, str], opts: dict[str, Any], *, format: str | None = None, delimiter: str | None = None, table: str | None = None, class_column: str | None = None, hierarchy_delimiter: str | None = None, suppressed_marker: str | None = "*", memory_limit: str | None = None, risk: bool = False, population_fraction: float | None = None, risk_threshold: float | None = None, max_value_length: int = MAX_VALUE_LENGTH, twins: tuple[PrivacyModel, ...] = ()) -> dict:
    """The measurement :func:`check` describes, by what is given only (``opts``: the model
    options); ``twins``: models whose verdict is their Python twin's over the released classes
    (``twin_verdicts`` in the result)."""
    _check_k(opts.get("k"))
    if (population_fraction is not None or risk_threshold is not None) and not risk:
        raise ConfigError("--population-fraction and --risk-threshold need --risk")
    validate_options(risk_threshold, population_fraction)
    asked = _asked_figures(opts)
    for figure in asked.values():
        figure.validate(opts)
    policy = Policy(input=input, format=format, delimiter=delimiter, table=table, memory_limit=memory_limit, hierarchy_delimiter=hierarchy_delimiter, max_value_length=max_value_length)
    if max_value_length < 1:
        raise ConfigError(f"--max-value-length must be at least 1 (characters), got {max_value_length}")
    session = Session(policy)
    try:
        specs, columns, flats, stats = _scan(session, qi, opts.get("sensitive_column"), class_column, max_value_length, lambda s, c: _check_needs(opts, asked, s, c).merge(_twin_needs(twins)))
        not_star = _not_suppressed(stats, flats, suppressed_marker)
        node = tuple(0 for _ in columns)
        e = stats.evaluate(node, exp.Boolean(this=True), _check_aggregates(stats, not_star, opts)).extra
        out = _table_figures(session, stats, columns, e)
        out["suppressed_marker"] = suppressed_marker
        if risk:
            out["risk"] = measure(stats, node, not_star, threshold=risk_threshold or DEFAULT_THRESHOLD, population_fraction=population_fraction)
        verdicts = _write_figures(out, e, stats, not_star, opts, asked, twins)
        if twins:
            out["twin_verdicts"] = {m.name: verdicts[m.name] for m in twins}
        if all(spec for spec in specs.values()):
            _hierarchy_metrics(out, session, stats, specs, flats, hierarchy_delimiter, suppressed_marker, max_value_length)
        out["queries"] = session.engine.queries
        return out
    finally:
        session.close()


def _write_figures(out: dict, e: dict, stats, not_star: exp.Expr, opts: dict[str, Any], asked: dict[str, Figure], twins) -> dict[str, bool]:
    """Each model's figure into ``out``, in registry order (the asked ones, and the sensitive
    column's that were measured), with its twin's verdict; every twin's verdict, by name."""
    made = {name: figure.twin(opts) for name, figure in asked.items()}
    verdicts = twin_verdicts(stats, not_star, [m for m in made.values() if m is not None] + list(twins))
    written = {**opts, "budget_rows": budget_rows(opts.get("max_suppression") or 0.0, stats.rows)}
    for name, figure in figures().items():
        if name in asked or figure.sensitive_figure:
            twin = made.get(name)
            figure.write(out, e, stats, written, verdicts.get(twin.name) if twin is not None else None)
    return verdicts


def _asked_figures(opts: dict[str, Any]) -> dict[str, Figure]:
    """The figures the options ask for (their first key given), by model name."""
    return {name: figure for name, figure in figures().items() if figure.asked(opts)}


def _scan(session, qi, sensitive_column: str | None, class_column: str | None, max_value_length: int, needs) -> tuple[dict, list[str], list, Statistics]:
    """The measured table's QIs (resolved as the engine resolves names, with their hierarchy
    specs), their flat hierarchies and its prepared statistics (``needs(sensitive, class)``: the
    aggregates read)."""
    named: dict[str, str | None] = dict(qi) if isinstance(qi, dict) else {c: None for c in qi}
    specs = {session.source.resolve_column(session.engine, c): spec for c, spec in named.items()}
    sensitive, klass = (None if c is None else session.source.resolve_column(session.engine, c) for c in (sensitive_column, class_column))
    columns = list(specs)
    session.source.require_columns(session.engine, columns, "quasi-identifier column")
    flats = [load_hierarchy("flat", c, session.engine, session.source, max_value_length=max_value_length) for c in columns]
    stats = Statistics(session.engine, session.source, columns, flats, sensitive, klass, needs(sensitive, klass))
    stats.prepare()
    return specs, columns, flats, stats


def _twin_needs(twins) -> ClassNeeds:
    """What the twins read: the sensitive values' counts per class when one of them reads them."""
    reads_s = any(agg.sensitive for m in twins for agg in m.aggregates)
    return ClassNeeds(distinct_s=reads_s)


def _twin_checkable(model: PrivacyModel) -> bool:
    """Can the checker give ``model``'s verdict by its Python twin alone? When every aggregate it
    asks has a per-value form, is the class table's rank, or asks no column (estimated k-map's
    class-size floor, derived from the table's rows when the twin is bound): its twin then reads
    class sizes and sensitive counts only. A population (k-map with a population table,
    delta-presence) or a sensitive hierarchy (hierarchical t) is not in the release: those stay
    ``not_checked``."""
    return all(name == "ranked" or name in DECLARED and (DECLARED[name].value is not None or not DECLARED[name].column) for name in model.needs.names())


def release_twins(found, names: list[str], sensitive_present: bool) -> tuple[PrivacyModel, ...]:
    """The release's models of ``names`` (those the check has no figure for), rebuilt from its
    stored policy through the registry, whose verdict their twin can give."""
    try:
        policy = Policy.from_dict(dict(found.entry.get("policy") or {}))
    except SqlanonError:
        return ()
    out: list[PrivacyModel] = []
    for model in MODELS.values():
        if model.name not in names:
            continue
        try:
            made = model.from_policy(policy, None)
        except SqlanonError:
            continue
        out += [m for m in made if _twin_checkable(m) and (sensitive_present or not any(a.sensitive for a in m.aggregates))]
    return tuple(out)


def _check_needs(opts: dict[str, Any], asked: dict[str, Figure], sensitive_column, class_column) -> ClassNeeds:
    """The per-class aggregates the check reads: each asked figure's, and with a sensitive
    column but no figure of it asked, those of the figures shown for it (l)."""
    needs = ClassNeeds(majority_y=class_column is not None)
    for figure in asked.values():
        needs = needs.merge(figure.needs(opts))
    if sensitive_column and not any(figure.sensitive_figure for figure in asked.values()):
        for figure in figures().values():
            needs = needs.merge(figure.on_sensitive or ClassNeeds())
    return needs


def _not_suppressed(stats, flats, suppressed_marker: str | None) -> exp.Expr:
    """Not the all-suppressed class: not every QI equal to the marker (no marker: every row)."""
    if suppressed_marker is None:
        return exp.Boolean(this=True)
    star_codes = [h.leaf_index.get(suppressed_marker) for h in flats]
    if not all(c is not None for c in star_codes):
        return exp.Boolean(this=True)
    parts = [exp.EQ(this=col(stats.qcol(i)), expression=lit(c)) for i, c in enumerate(star_codes)]
    return exp.Not(this=exp.Paren(this=exp.and_(*parts) if len(parts) > 1 else parts[0]))


def _check_aggregates(stats, not_star: exp.Expr, opts: dict[str, Any]) -> list[tuple[str, exp.Expr]]:
    """The table's figures and each model's figure (the asked ones, and those of the sensitive
    column its aggregates are there for), in registry order."""
    aggs = [
        ("min_class", exp.Min(this=released(not_star, col("cnt")))),
        ("suppressed", sum_(if_(not_star.copy(), lit(0), col("cnt")))),
        ("released_classes", sum_(if_(not_star.copy(), lit(1), lit(0)))),
        ("dm", sum_(if_(not_star.copy(), exp.Mul(this=col("cnt"), expression=col("cnt")), lit(0)))),
    ]
    for figure in figures().values():
        if figure.asked(opts) or figure.sensitive_figure:
            aggs += figure.aggregates(stats, not_star, opts)
    if stats.has_y:
        aggs.append(("cm_minority", sum_(if_(not_star.copy(), exp.Sub(this=col("cnt"), expression=col("maxy")), lit(0)))))
    return aggs


def _table_figures(session, stats, columns: list[str], e: dict) -> dict[str, Any]:
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
    if "cm_minority" in e:
        out["metrics"]["cm"] = (float(e["cm_minority"] or 0) + sup) / n
    histogram = stats.class_histogram(tuple(0 for _ in columns))
    out["class_size_histogram"] = [[size, count] for size, count in histogram[:50]]
    if len(histogram) > 50:
        out["class_size_histogram"].append(["more", sum(c for _, c in histogram[50:])])
    return out


def twin_verdicts(stats, not_star: exp.Expr, models: list[PrivacyModel]) -> dict[str, bool]:
    """Whether each model holds on the table, by its own Python twin (``class_ok``; a table-level
    model's ``refine`` suppressing nothing) over the released classes, which the check groups here
    from the base frequency set (their rows and per sensitive value counts), apart from any
    search's statements."""
    if not models:
        return {}
    keys = [col(n) for n in stats.qnames] + ([col("s")] if stats.has_s else [])
    q = exp.select(*keys, exp.alias_(sum_(col("cnt")), "cnt", quoted=True)).from_(table_ref(stats.base.table)).where(not_star.copy()).group_by(*keys)
    by_key: dict[tuple, dict] = {}
    width = len(stats.qnames)
    for row in stats.engine.fetch_all(q):
        cls = by_key.setdefault(tuple(row[:width]), {"cnt": 0, "s_counts": {}, "key": tuple(row[:width])})
        cls["cnt"] += int(row[-1])
        if stats.has_s:
            cls["s_counts"][row[width]] = cls["s_counts"].get(row[width], 0) + int(row[-1])
    classes = list(by_key.values())
    out = {}
    for m in models:
        m.bind(stats)
        ok = [m.class_ok(c) for c in classes]
        out[m.name] = all(m.refine(classes, ok)) if m.table_level else all(ok)
    return out


def _hierarchy_metrics(out: dict, session, stats, specs: dict, flats, hierarchy_delimiter, suppressed_marker: str | None, max_value_length: int) -> None:
    """Precision and LM from hierarchies: released values read back as hierarchy levels."""
    columns = list(specs)
    hs = [load_hierarchy(spec, c, session.engine, session.source, hierarchy_delimiter, max_value_length) if spec and not _is_builder(spec) else None for c, spec in specs.items()]
    loaded = [h for h in hs if h is not None]
    if len(loaded) != len(hs):
        return
    n = stats.rows
    prec, lm, per_col = 0.0, 0.0, {}
    for i, (h, flat) in enumerate(zip(loaded, flats)):
        p_sum, l_sum = _column_losses(h, flat, stats.column_freqs[i], columns[i], suppressed_marker)
        per_col[columns[i]] = l_sum / n
        prec += p_sum / n
        lm += l_sum / n
    out["metrics"]["precision"] = prec / len(hs)
    out["metrics"]["lm"] = lm / len(hs)
    out["metrics"]["lm_per_column"] = per_col


def _column_losses(h, flat, freqs: list[int], column: str, suppressed_marker: str | None) -> tuple[float, float]:
    """One QI's precision and LM sums over its released values."""
    p_sum, l_sum = 0.0, 0.0
    losses: dict[int, list[float]] = {}  # per level, built once (not per value)
    for code, value in enumerate(flat.leaves):
        rows_v = freqs[code]
        level = h.level_of(value) if value != suppressed_marker else h.max_level
        if level is None:
            raise ConfigError(f"column {column!r}: released value {value!r} is not in its hierarchy")
        p_sum += rows_v * (level / h.max_level if h.max_level else 0.0)
        at = h.label_code(level, value)
        if at is not None and level not in losses:
            losses[level] = loss_table(h, level)
        l_sum += rows_v * losses[level][at] if at is not None else rows_v
    return p_sum, l_sum


def _is_builder(spec: str) -> bool:
    return str(spec).split(":")[0] in BUILDERS


def _check_k(k) -> None:
    """``--k 0`` is a value, not an absence: k-anonymity's figure refuses it."""
    KAnonymity.figure.validate({"k": k})


def load_transformation(spec: str | dict) -> dict:
    """A transformation from a dict, a JSON string, or a JSON file (a whole ``--json`` report or
    just its ``transformation`` object), or a :class:`~sqlanon.release.result.Release`."""
    if hasattr(spec, "to_dict") and hasattr(spec, "transformation"):  # a Release
        spec = spec.to_dict()
    data = spec if isinstance(spec, dict) else load_json_spec(spec, "--transformation")
    if isinstance(data, dict) and isinstance(data.get("transformation"), dict):
        data = data["transformation"]
    if not isinstance(data, dict) or not data:
        raise ConfigError("--transformation must map each quasi-identifier to a level or a cut")
    return data


def check_plan(input: str, qi: dict[str, str], transformation, *, format: str | None = None, delimiter: str | None = None, table: str | None = None, k: int = 1, max_suppression: float = 0.0, class_column: str | None = None, numeric=(), hierarchy_delimiter: str | None = None, memory_limit: str | None = None, max_value_length: int = MAX_VALUE_LENGTH) -> dict:
    """Apply a transformation to a table *in SQL, without writing anything* and measure it: rows
    suppressed under k, the smallest released class, LM (per column, intervals or tree cuts), CM
    with ``class_column``, precision for full-domain levels."""
    _check_k(k)
    transformation = load_transformation(transformation)
    policy = Policy(input=input, format=format, delimiter=delimiter, table=table, memory_limit=memory_limit, hierarchy_delimiter=hierarchy_delimiter, max_value_length=max_value_length)
    if max_value_length < 1:
        raise ConfigError(f"--max-value-length must be at least 1 (characters), got {max_value_length}")
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
        recoding = _plan_recoding(transformation, columns, levels, hierarchies, numeric)
        flexible = not all(isinstance(v, int) for v in levels)
        requirement = Requirement([KAnonymity(k)], max_suppression=max_suppression)
        requirement.bind(stats)
        losses = [_lm_losses(h, recoding, i, flexible and (h.numeric or columns[i] in set(numeric))) for i, h in enumerate(hierarchies)]
        aggs = _plan_aggregates(stats, losses)
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


def _plan_recoding(transformation: dict, columns: list[str], levels: list, hierarchies, numeric) -> Recoding:
    """A transformation's recoding: full-domain levels, or cuts (lists of released values)."""
    for c, v in zip(columns, levels):  # a level (an int) or a cut (a list of released values)
        if isinstance(v, bool) or not isinstance(v, (int, list)):
            raise ConfigError(f"the transformation of {c!r} must be a level (an integer) or a list of released values, got {v!r}")
    if any(not isinstance(v, int) for v in levels):
        return recoding_from_transformation(transformation, columns, hierarchies, numeric)
    for c, v, h in zip(columns, levels, hierarchies):
        if not 0 <= v <= h.max_level:
            raise ConfigError(f"level {v} of {c!r} is outside its hierarchy (0..{h.max_level})")
    return Recoding.from_node(hierarchies, levels)


def _lm_losses(h, recoding: Recoding, i: int, interval: bool) -> list[float]:
    """Per released value of QI ``i``: its LM loss (tree: leaves below it; interval: its width)."""
    labels = recoding.labels[i]
    if interval:
        # Iyengar's numeric LM: (U_i - L_i) / (U - L), U_i and L_i the largest and smallest
        # values the interval holds, U - L the column's range
        values = [float(r[0]) for r in h.rows]
        span = (max(values) - min(values)) or 1.0
        lo = [math.inf] * len(labels)
        hi = [-math.inf] * len(labels)
        for leaf, code in enumerate(recoding.codes[i]):
            lo[code], hi[code] = min(lo[code], values[leaf]), max(hi[code], values[leaf])
        return [(b - a) / span if b >= a else 0.0 for a, b in zip(lo, hi)]
    m = len(h.rows)
    under = [0] * len(labels)
    for code in recoding.codes[i]:
        under[code] += 1
    return [(u - 1) / (m - 1) if m > 1 else 0.0 for u in under]


def _plan_aggregates(stats, losses: list[list[float]]):
    """The plan's figures over its released classes (``f(params)``: lookups bound in order)."""

    def aggs(params):
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

    return aggs
