"""TDS4SA: top-down specialization for sequential anonymization (Wang & Fung, KDD 2006).

Release T1 so that its join with previously published releases T2..Tp (which can no longer
change) satisfies an (X,Y)-privacy requirement, while T1 stays useful:

1. every attribute of ``X ∩ att(T1)`` starts at the root of its taxonomy (continuous attributes at
   one interval); if even this most general T1 violates the requirement, no generalization can
   satisfy it (Corollary 4.2): fail with :class:`UnsatisfiableError` naming the x and y at fault;
2. while a *valid* candidate exists (a value of the current cut whose specialization keeps the
   requirement on the join), specialize the winner of ``Score = InfoGain / (PrivLoss + 1)``;
   a candidate found invalid stays invalid (anti-monotonicity, Corollary 4.1) and is not asked
   again;
3. stop when no valid candidate remains: T1 is maximally specialized.

All join statistics come from :mod:`sqlanon.search.top_down.stats` (SQL over per-release aggregates; the
join is never built). Each iteration runs one statement for the current state plus one per
attribute that still has candidates (all candidates of an attribute are evaluated together).

Options (``ctx.options``): ``previous`` (paths, tables of the input database, or release ids of
the registry), ``x``, ``y``, ``privacy`` (``xy-anonymity`` | ``xy-linkability``), ``k``,
``sensitive_values``, ``inconsistent``, ``join`` (override the join attributes), ``registry``,
``factorized`` (``false`` forces the partition-pair SQL even in Case 1; for tests).

Attribute weights (``ctx.weights``, normalized to the largest) multiply the ``InfoGain`` of every
specialization of that attribute (``Score = w_a InfoGain / (PrivLoss + 1)``) and its distortion in
the reported metric. Level bounds (``ctx.bounds``): every attribute of X starts from its max-level
cut instead of the root (Corollary 4.2 is checked there), and a value whose lowest level is at or
below the min level is never specialized; a chain reaching the min level is released under its
min-level label. A QI outside X cannot take a min level above 0, a continuous one (intervals) no
bound: both refused.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any

from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.search.top_down.attrs import CatAttr, NumAttr, entropy
from sqlanon.search.top_down.join import Tree, covers, parse_inconsistent
from sqlanon.plan import Plan, Recoding
from sqlanon.search.context import SearchContext
from sqlanon.privacy.xy import SensitiveValue, XYAnonymity, XYLinkability, parse_sensitive, parse_threshold
from sqlanon.engine.source import Source
from sqlanon.stats import distinct_values
from sqlanon.search.top_down.stats import IncTable, LossyJoinStats, MatchTable, PrevSpec, Result, SideY, T1Spec, is_key
from sqlanon.search.bounds import has_levels, refuse_levelless

# ------------------------------------------------------------------------------------------------
# the planner


@dataclass
class Release:
    name: str
    source: Source
    columns: list[str]
    join_cols: list[str] = field(default_factory=list)
    trees: list = field(default_factory=list)   # per join column: Tree or None (exact values)
    labels: list[list[str]] = field(default_factory=list)
    leafsets: list[list[frozenset]] = field(default_factory=list)


def _as_list(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    out = []
    for v in value:
        out.extend(_as_list(v) if isinstance(v, str) else [str(v)])
    return out


@dataclass
class _Problem:
    """What a top-down run is asked, validated: the privacy notion, the releases, X and Y, and
    (filled by :func:`_join_attributes`) how the current release joins the previous ones."""

    ctx: SearchContext
    privacy: str
    qis: list[str]
    t1_cols: list[str]
    class_column: str | None
    releases: list[Release]
    explicit_join: list[str] | None
    x: list[str]
    y: list[str]
    x1: list[str]
    y_side: dict[str, int]
    trees: dict[int, Tree] = field(default_factory=dict)
    #: QI indexes of the current release joined to a previous one (consistency or inconsistency)
    join1: list[int] = field(default_factory=list)
    #: inconsistency predicates: (qi of T1, its value, release, join position there, its value)
    decl: list[tuple[int, str, int, int, str]] = field(default_factory=list)

    @property
    def sources(self) -> list[Source]:
        return [self.ctx.source] + [rel.source for rel in self.releases]

    def tree_of(self, qi_index: int) -> Tree:
        h = self.ctx.hierarchies[qi_index]
        if h.numeric and h.max_level == 1:
            raise ConfigError(f"{self.qis[qi_index]!r} is continuous; join attributes must be categorical (Section 3.3)")
        if qi_index not in self.trees:
            self.trees[qi_index] = Tree(h)
        return self.trees[qi_index]


def _validate(ctx: SearchContext) -> _Problem:
    """Read the privacy notion, the previous releases, X and Y; refuse what cannot be."""
    o = ctx.options
    engine, stats = ctx.engine, ctx.stats
    qis = list(ctx.qis)
    privacy = (o.get("privacy") or "xy-anonymity").lower()
    if privacy not in ("xy-anonymity", "xy-linkability"):
        raise ConfigError(f"unknown --privacy {privacy!r}; choose xy-anonymity or xy-linkability")
    t1_cols = ctx.source.column_names(engine)
    class_column = stats.class_column
    if class_column and class_column not in t1_cols:
        raise ConfigError(f"unknown class column {class_column!r}")
    # resolved by the caller (sqlanon.run.previous): a search opens no connection
    releases = [Release(name, src, src.column_names(engine)) for name, src in ctx.previous]
    explicit_join = _as_list(o.get("join")) or None
    x, y = _x_and_y(o, qis, t1_cols, releases)
    x1 = [c for c in x if c in t1_cols]
    for c in x1:
        if c not in qis:
            raise ConfigError(f"X attribute {c!r} of the current release needs a hierarchy: add --qi {c}=SPEC")
    if class_column and class_column in x + y:
        raise ConfigError(f"the class column {class_column!r} cannot be in X or Y")
    y_side = {c: _y_holder(c, t1_cols, releases) for c in y}
    return _Problem(ctx, privacy, qis, t1_cols, class_column, releases, explicit_join, x, y, x1, y_side)


def _x_and_y(o, qis: list[str], t1_cols: list[str], releases: list[Release]) -> tuple[list[str], list[str]]:
    """X (by default every QI of any release outside Y) and Y: disjoint, each column in some release."""
    y = _as_list(o.get("y"))
    if not y:
        raise ConfigError("--y is required for --search top-down (the attributes X must not be linked to)")
    x = _as_list(o.get("x"))
    if not x:
        x = [q for q in qis if q not in y]
        for rel in releases:
            x += [c for c in rel.columns if c not in x and c not in y and c in qis]
    overlap = set(x) & set(y)
    if overlap:
        raise ConfigError(f"X and Y must be disjoint; both hold {sorted(overlap)}")
    everywhere = set(t1_cols).union(*[set(rel.columns) for rel in releases]) if releases else set(t1_cols)
    for c in x + y:
        if c not in everywhere:
            raise ConfigError(f"unknown column {c!r} in --x/--y: not in the current release nor in a previous one")
    return x, y


def _y_holder(c: str, t1_cols: list[str], releases: list[Release]) -> int:
    """The one release holding Y attribute ``c`` (0 = the current one)."""
    holders = ([0] if c in t1_cols else []) + [r for r, rel in enumerate(releases, start=1) if c in rel.columns]
    if len(holders) != 1:
        raise ConfigError(f"Y attribute {c!r} is in {len(holders)} releases; a Y attribute must belong to exactly one")
    return holders[0]


def _join_attributes(p: _Problem) -> None:
    """The join attributes of every previous release (consistency), the inconsistency
    predicates, and the released values of every join column as ids and leaf sets."""
    qis = p.qis
    for rel in p.releases:
        common = [c for c in (p.explicit_join or p.t1_cols) if c in p.t1_cols and c in rel.columns and c not in p.y and c != p.class_column]
        for c in common:
            if c not in qis:
                raise ConfigError(f"common attribute {c!r} of the current release and {rel.name} needs a hierarchy: add --qi {c}=SPEC")
            qi = qis.index(c)
            rel.join_cols.append(c)
            rel.trees.append(p.tree_of(qi))
            if qi not in p.join1:
                p.join1.append(qi)
    for spec in p.ctx.options.get("inconsistent") or []:
        _inconsistency(p, spec)
    for rel in p.releases:
        for c, tree in zip(rel.join_cols, rel.trees):
            vals = sorted(distinct_values(p.ctx.engine, rel.source, c))
            rel.labels.append(vals)
            rel.leafsets.append([tree.leaves_of(v, f" of {c!r} in {rel.name}") if tree else frozenset([v]) for v in vals])


def _inconsistency(p: _Problem, spec) -> None:
    """Add one inconsistency predicate ``T1.a=va ~ Tr.b=vb`` (every release holding b)."""
    qis, t1_cols = p.qis, p.t1_cols
    (ca, va), (cb, vb) = parse_inconsistent(spec)
    if ca not in t1_cols and cb in t1_cols:
        (ca, va), (cb, vb) = (cb, vb), (ca, va)
    if ca not in t1_cols:
        raise ConfigError(f"inconsistency predicate {spec!r}: one column must be in the current release")
    if ca not in qis:
        raise ConfigError(f"inconsistency predicate {spec!r}: {ca!r} needs a hierarchy: add --qi {ca}=SPEC")
    holders = [r for r, rel in enumerate(p.releases, start=1) if cb in rel.columns]
    if not holders:
        raise ConfigError(f"inconsistency predicate {spec!r}: {cb!r} is in no previous release")
    qa = qis.index(ca)
    p.tree_of(qa).leaves_of(va, f" in inconsistency predicate {spec!r}")
    if qa not in p.join1:
        p.join1.append(qa)
    for r in holders:
        rel = p.releases[r - 1]
        if cb not in rel.join_cols:
            rel.join_cols.append(cb)
            rel.trees.append(p.tree_of(qis.index(cb)) if cb in qis and cb in t1_cols else None)
        p.decl.append((qa, va, r, rel.join_cols.index(cb), vb))


def _distinct_y_mode(p: _Problem, x_attrs: list[int], sides_y: list[list[str]]) -> tuple[str, list[str]]:
    """How the join counts distinct Y values (the paper's cases 1, 3, 4 or a distinct count),
    and per release whether its Y columns are none, a key, or values to count."""
    case1 = all(q in x_attrs for q in p.join1) and all(c in p.x for rel in p.releases for c in rel.join_cols)
    if p.privacy != "xy-anonymity":
        # distinct Y values are not counted for linkability
        return ("case1" if case1 else "case4"), ["none"] * (len(p.releases) + 1)
    sources = p.sources
    y_modes = ["none" if not cols else ("key" if is_key(p.ctx.engine, sources[s], cols) else "values") for s, cols in enumerate(sides_y)]
    with_y = [s for s, m in enumerate(y_modes) if m != "none"]
    if case1:
        return "case1", y_modes
    if all(m == "key" for m in y_modes):
        return "case4", y_modes
    if len(with_y) == 1 and y_modes[with_y[0]] == "key":
        return "case3", y_modes
    return "distinct", ["values" if m != "none" else m for m in y_modes]


def _requirement(p: _Problem) -> tuple[XYAnonymity | XYLinkability, list[SensitiveValue]]:
    """The (X,Y)-privacy requirement, and for linkability its sensitive values."""
    o = p.ctx.options
    k_opt = p.ctx.xy_k
    x, y = p.x, p.y
    if p.privacy == "xy-anonymity":
        if k_opt is None:
            raise ConfigError("--k is required")
        return XYAnonymity(int(k_opt), x, y), []
    default = parse_threshold(k_opt) if k_opt is not None else None
    specs = parse_sensitive(_as_list(o.get("sensitive_values")), y, default if default is not None else 1.0)
    if not specs:
        if default is None:
            raise ConfigError("xy-linkability needs --k (a confidence) or --sensitive-values")
        for c in y:
            for v in sorted(distinct_values(p.ctx.engine, p.sources[p.y_side[c]], c)):
                specs.append((c, v, default))
    sens: list[SensitiveValue] = []
    for column, value, thr in specs:
        if column is None:
            if len(y) != 1:
                raise ConfigError(f"sensitive value {value!r}: write COLUMN={value} when Y has several columns")
            column = y[0]
        if thr is None:
            raise ConfigError(f"sensitive value {value!r} has no threshold; give --k or VALUE:THRESHOLD")
        sens.append(SensitiveValue(column, value, thr, p.y_side[column]))
    return XYLinkability(sens, x, y), sens


def _join_stats(p: _Problem, x_attrs: list[int], sides_y: list[list[str]], mode: str, y_modes: list[str],
                sens: list[SensitiveValue]) -> LossyJoinStats:
    """The join statistics of T1 and the previous releases, prepared."""
    ctx, releases = p.ctx, p.releases
    used = sorted(set(x_attrs) | set(p.join1))
    sens_by_side = [[(k, sv.column, sv.value) for k, sv in enumerate(sens) if sv.release == s] for s in range(len(releases) + 1)]
    t1 = T1Spec(p.qis, ctx.stats.map_tables, used, x_attrs, p.join1, SideY(sides_y[0], y_modes[0]), p.class_column, sens_by_side[0],
                [ctx.stats.null_code(i) for i in range(len(p.qis))])
    prevs = []
    for r, rel in enumerate(releases, start=1):
        x_join = [i for i, c in enumerate(rel.join_cols) if c in p.x]
        x_cols = [c for c in rel.columns if c in p.x and c not in rel.join_cols]
        prevs.append(PrevSpec(rel.name, rel.source, rel.join_cols, rel.labels, x_join, x_cols, SideY(sides_y[r], y_modes[r]), sens_by_side[r]))
    lj = LossyJoinStats(ctx.engine, ctx.source, t1, prevs, len(sens), mode, shared=ctx.stats)
    lj.prepare()
    ctx.progress(f"top-down: T1 {lj.rows1:,} rows, previous {lj.rows_prev}, distinct-Y mode {mode}")
    return lj


def _refuse_bounds(p: _Problem, x_attrs: list[int], bounds) -> None:
    """Level bounds: X attributes need levels; a QI outside X cannot take a min level above 0."""
    ctx = p.ctx
    refuse_levelless(ctx, "top-down", [qi for qi in x_attrs if not has_levels(ctx.hierarchies[qi])])
    for qi, q in enumerate(p.qis):
        if qi not in x_attrs and bounds[qi][0] > 0:
            raise ConfigError(f"--min-level {q}={bounds[qi][0]}: top-down releases {q!r} unchanged (it is not in X); add it to --x or drop the bound")


def _attribute_state(p: _Problem, lj: LossyJoinStats, qi: int, has_class: bool, bounds) -> CatAttr | NumAttr:
    """The starting cut of X attribute ``qi``, with its per-leaf row and class counts."""
    h = p.ctx.hierarchies[qi]
    n_leaves = len(h.rows)
    freq = [0] * n_leaves
    hist: list[dict] = [{} for _ in range(n_leaves)]
    for leaf, cls, n in lj.class_histograms(qi):
        if leaf < 0:
            continue
        freq[leaf] += n
        hist[leaf][cls] = hist[leaf].get(cls, 0) + n
    if h.numeric and h.max_level == 1:
        return NumAttr(qi, h.leaves, freq, hist, has_class)
    return CatAttr(qi, p.tree_of(qi), freq, hist, bounds[qi] if bounds is not None else None)


@dataclass
class _Search:
    """The state of a run once set up: the cuts of X's attributes, the join statistics, the
    requirement, and what the loop has done so far."""

    p: _Problem
    lj: LossyJoinStats
    mode: str
    model: Any  # XYAnonymity | XYLinkability, told apart by p.privacy
    sens: list[SensitiveValue]
    attrs: dict[int, CatAttr | NumAttr]
    #: cuts of the join attributes outside X (their leaves, never generalized)
    fixed: dict[int, list]
    #: per release and join column: leaf -> ids of the released values covering it
    value_leaves: list[list[dict[int, list[int]]]]
    factorized: bool | None
    weights: Any
    bounds: Any
    has_class: bool
    evaluations: int = 0
    steps: list[dict] = field(default_factory=list)

    def cuts_now(self, override: dict | None = None) -> dict[int, list]:
        cuts: dict[int, list] = {qi: a.leaf_node for qi, a in self.attrs.items()}
        cuts.update(self.fixed)
        if override:
            cuts.update(override)
        return cuts

    def tables(self, cuts) -> tuple[list[MatchTable], list[IncTable]]:
        """The match tables (T1 cut node -> released value ids) and inconsistency tables of ``cuts``."""
        p = self.p
        matches = []
        for qi in p.join1:
            sides = [(r, rel.join_cols.index(p.qis[qi])) for r, rel in enumerate(p.releases, start=1) if p.qis[qi] in rel.join_cols]
            if not sides:
                continue
            rows = set()
            for leaf, node in enumerate(cuts[qi]):
                lists = [self.value_leaves[r - 1][i].get(leaf, []) for r, i in sides]
                for combo in itertools.product(*lists):
                    rows.add((node, *combo))
            matches.append(MatchTable(qi, sides, sorted(rows)))
        incs = []
        for qa, va, r, i, vb in p.decl:
            tree_a = p.trees[qa]
            a_leaves = tree_a.leaves_of(va)
            nodes = sorted({n for n in cuts[qa] if tree_a.nodes[n].leaves <= a_leaves})
            rel = p.releases[r - 1]
            tree_b = rel.trees[i]
            ws = [w for w, lab in enumerate(rel.labels[i]) if covers(tree_b, vb, lab)]
            incs.append(IncTable(qa, r, i, [(n, w) for n in nodes for w in ws]))
        return matches, incs

    def ok(self, res: Result) -> bool:
        if self.p.privacy == "xy-anonymity":
            return self.model.ok(res.ay)
        return self.model.ok_each(res.ly)

    def achieved(self, res: Result):
        if self.p.privacy == "xy-anonymity":
            return None if res.ay is None else int(res.ay)
        return XYLinkability.overall(res.ly)

    def weight(self, qi: int) -> float:
        return 1.0 if self.weights is None else self.weights[qi]


def _set_up(p: _Problem) -> _Search:
    """From a validated problem to the starting state: the requirement, the join statistics
    (prepared), and every X attribute at its most general cut."""
    ctx, releases = p.ctx, p.releases
    _join_attributes(p)
    x_attrs = [p.qis.index(c) for c in p.x1]
    sides_y = [[c for c in p.y if p.y_side[c] == s] for s in range(len(releases) + 1)]
    mode, y_modes = _distinct_y_mode(p, x_attrs, sides_y)
    model, sens = _requirement(p)
    lj = _join_stats(p, x_attrs, sides_y, mode, y_modes, sens)
    force_pairs = ctx.options.get("factorized") in (False, "false", "0", 0) and mode == "case1"
    has_class = bool(p.class_column)
    weights, bounds = ctx.weights, ctx.bounds
    if bounds is not None:
        _refuse_bounds(p, x_attrs, bounds)
    attrs = {qi: _attribute_state(p, lj, qi, has_class, bounds) for qi in x_attrs}
    fixed = {qi: [p.trees[qi].leaf_node[l] for l in range(len(ctx.hierarchies[qi].rows))] for qi in p.join1 if qi not in attrs}
    value_leaves: list[list[dict[int, list[int]]]] = [[{} for _ in rel.join_cols] for rel in releases]
    for r, rel in enumerate(releases):
        for i, sets in enumerate(rel.leafsets):
            for vid, s in enumerate(sets):
                for leaf in s:
                    value_leaves[r][i].setdefault(leaf, []).append(vid)
    return _Search(p, lj, mode, model, sens, attrs, fixed, value_leaves, False if force_pairs else None, weights, bounds, has_class)


def _evaluate_state(s: _Search) -> tuple[Result, dict[int, dict[int, Result]]]:
    """One statement: the join statistics of the current cuts, in total and per candidate."""
    m0, i0 = s.tables(s.cuts_now())
    total, per = s.lj.evaluate_state(s.cuts_now(), m0, i0, [qi for qi in s.attrs], s.factorized)
    s.evaluations += 1
    return total, per


def _most_general(s: _Search) -> tuple[Result, dict[int, dict[int, Result]]]:
    """Corollary 4.2: if the most general T1 violates the requirement, nothing can satisfy it."""
    m0, i0 = s.tables(s.cuts_now())
    total, per = s.lj.evaluate_state(s.cuts_now(), m0, i0, [qi for qi in s.attrs], s.factorized)
    s.evaluations += 1
    if not s.ok(total):
        message = _fault_message(s.lj, s.cuts_now(), m0, i0, s.p.privacy, s.model, total, s.p.releases, s.attrs, s.sens)
        if s.bounds is not None:
            message = message.replace("the most general current release", "the most general current release within --max-level")
        raise UnsatisfiableError(message)
    return total, per


def _best_of_attribute(s: _Search, qi: int, vs: list[int], total: Result, per: dict[int, dict[int, Result]],
                       invalid: set[tuple[int, int]], best: tuple | None) -> tuple | None:
    """Evaluate every candidate ``vs`` of attribute ``qi`` in one statement; a candidate whose
    specialization breaks the requirement becomes invalid; return the better of ``best`` and
    the best valid one, as ``((score, gain, -qi, -v), qi, v, gain, loss, after)``."""
    a = s.attrs[qi]
    spec = a.spec_map(vs)
    cuts = s.cuts_now({qi: spec})
    mt, it = s.tables(cuts)
    res = s.lj.evaluate_specializations(cuts, (qi, list(a.leaf_node)), mt, it, s.factorized)
    s.evaluations += 1
    cur = per.get(qi, {})
    for v in vs:
        after = _combine(res.get(v), [r for u, r in cur.items() if u != v], s.p.privacy, len(s.sens))
        if not s.ok(after):
            invalid.add((qi, v))
            continue
        gain = _info_gain(a, v, s.has_class) * s.weight(qi)
        loss = s.model.loss(total.ay, after.ay) if s.p.privacy == "xy-anonymity" else s.model.loss(total.ly, after.ly)
        score = gain / (max(loss, 0.0) + 1.0)
        key = (score, gain, -qi, -v)
        if best is None or key > best[0]:
            best = (key, qi, v, gain, loss, after)
    return best


def _specialize(s: _Search, best: tuple) -> None:
    """Specialize the winner, and record the step."""
    _, qi, v, gain, loss, after = best
    a = s.attrs[qi]
    name = s.p.qis[qi]
    step = {"attribute": name, "value": a.label(v), "into": [a.label(c) for c in a.child_ids(v)], "score": best[0][0], "info_gain": gain, "priv_loss": loss, "privacy_after": s.achieved(after)}
    a.specialize(v)
    s.steps.append(step)
    s.p.ctx.trace(step)
    s.p.ctx.progress(f"top-down: specialize {name}: {step['value']} -> {', '.join('NULL' if x is None else str(x) for x in step['into'])} (score {step['score']:.4g})")


def _loop(s: _Search, total: Result, per: dict[int, dict[int, Result]]) -> Result:
    """Specialize the best valid candidate while one remains; return the final join statistics.
    A candidate found invalid stays invalid (Corollary 4.1) and is not asked again."""
    invalid: set[tuple[int, int]] = set()
    while True:
        pending = {qi: [v for v in a.candidates() if (qi, v) not in invalid] for qi, a in s.attrs.items()}
        pending = {qi: vs for qi, vs in pending.items() if vs}
        if not pending:
            return total
        best = None
        for qi, vs in pending.items():
            best = _best_of_attribute(s, qi, vs, total, per, invalid, best)
        if best is None:
            return total
        _specialize(s, best)
        total, per = _evaluate_state(s)
        if not s.ok(total):  # cannot happen when the requirement is anti-monotone; keep the check honest
            raise AssertionError(f"specializing {s.steps[-1]['attribute']}={s.steps[-1]['value']} broke the requirement")


def _plan(s: _Search, total: Result, started: float) -> Plan:
    """The released values of every QI, the distortion, and what the run reports."""
    ctx, p, attrs, qis = s.p.ctx, s.p, s.attrs, s.p.qis
    values = []
    transformation: dict = {}
    for i, h in enumerate(ctx.hierarchies):
        if i in attrs:
            a = attrs[i]
            values.append([a.label(a.leaf_node[l]) for l in range(len(h.rows))])
            intervals = a.intervals if isinstance(a, NumAttr) else None  # numeric cuts in value order
            labels = [a.label(n) for n in sorted(a.cut, key=lambda n: intervals[n] if intervals is not None else (0, n))]
            transformation[qis[i]] = labels
        else:
            values.append(list(h.leaves))
    n = s.lj.rows1 or 1
    cat = sum(s.weight(qi) * a.distortion() for qi, a in attrs.items() if not a.numeric) / n
    cont = sum(s.weight(qi) * a.distortion() for qi, a in attrs.items() if a.numeric) / n
    s.lj.drop()
    extra = {
        "privacy_model": s.model.describe(),
        "privacy_achieved": s.achieved(total),
        "join_rows_estimated": int(total.ax),
        "distinct_y_case": s.mode,
        "previous": [rel.name for rel in p.releases],
        "join_attributes": {rel.name: rel.join_cols for rel in p.releases},
        "x": p.x,
        "y": p.y,
        "specializations": len(s.steps),
        "steps": s.steps,
        "evaluations": s.evaluations,
        "distortion": {"categorical": cat, "continuous": cont},
        "search_seconds": round(time.perf_counter() - started, 3),
    }
    if s.weights is not None:
        extra["weights"] = dict(zip(qis, s.weights))
    if s.bounds is not None:
        extra["level_bounds"] = {q: list(b) for q, b in zip(qis, s.bounds)}
    if p.privacy == "xy-linkability":
        extra["linkability_per_value"] = [{**sv.describe(), "achieved": l} for sv, l in zip(s.sens, total.ly)]
    return Plan(
        search="top-down",
        qis=qis,
        recoding=Recoding.from_values(values),
        transformation=transformation,
        requirement=ctx.requirement,
        rows=s.lj.rows1,
        suppressed_rows=0,
        metric_name="distortion",
        metric_value=cat + cont,
        node=None,
        nodes_evaluated=s.evaluations,
        extra=extra,
    )


def run(ctx: SearchContext) -> Plan:
    """Validate, set up, specialize while a valid candidate remains, and make the plan."""
    started = time.perf_counter()
    s = _set_up(_validate(ctx))
    total, per = _most_general(s)
    total = _loop(s, total, per)
    return _plan(s, total, started)


def _combine(spec: Result | None, others: list[Result], privacy: str, n_sens: int) -> Result:
    """Stats of the join after one specialization: the specialized x values plus all others."""
    parts = ([spec] if spec is not None else []) + others
    ays = [p.ay for p in parts if p.ay is not None]
    ly = []
    for k in range(n_sens):
        vals = [v for p in parts if (v := p.ly[k]) is not None]
        ly.append(max(vals) if vals else None)
    return Result(min(ays) if ays else None, sum(p.ax for p in parts), ly)


def _info_gain(a, v: int, has_class: bool) -> float:
    children = a.children(v)
    if not has_class:
        return float(a.rows(v))  # distortion: |T1[v]| (Equation 3)
    whole = a.hist(_all(children))
    total = sum(whole.values())
    if total == 0:
        return 0.0
    gain = entropy(whole)
    for leaves in children:
        hc = a.hist(leaves)
        nc = sum(hc.values())
        if nc:
            gain -= nc / total * entropy(hc)
    return max(gain, 0.0)


def _all(children):
    out = []
    for c in children:
        out.extend(c)
    return out


def _fault_message(lj, cuts, matches, incs, privacy, model, total, releases, attrs, sens) -> str:
    t1 = lj.t1
    if privacy == "xy-anonymity":
        worst = lj.worst_x(cuts, matches, incs, "ay")
        what = f"A_Y(X) = {int(total.ay) if total.ay is not None else 0} < k = {model.k}"
    else:
        k = max(range(len(sens)), key=lambda j: -1 if total.ly[j] is None else total.ly[j] - sens[j].threshold)
        worst = lj.worst_x(cuts, matches, incs, "l", k)
        sv = sens[k]
        what = f"L_y(X) = {total.ly[k]:.4g} > {sv.threshold:g} for y = {sv.column}={sv.value!r}"
    desc = []
    if worst:
        for name, value in worst["x"].items():
            if name.startswith("g"):
                qi = int(name[1:])
                desc.append(f"T1.{t1.qis[qi]}={attrs[qi].label(int(value)) if qi in attrs else value}")
            else:
                rs, _, rest = name.partition("_")
                r = int(rs[1:])
                rel = releases[r - 1]
                p = lj.prevs[r - 1]
                if rest.startswith("j"):
                    c = int(rest[1:])
                    desc.append(f"{rel.name}.{p.join_cols[c]}={rel.labels[c][int(value)]}")
                else:
                    c = int(rest[1:])
                    desc.append(f"{rel.name}.{p.x_cols[c]}={value}")
        if privacy == "xy-anonymity":
            detail = f"x = ({', '.join(desc)}) is linked to only {int(worst['ay'])} distinct Y value(s)"
        else:
            detail = f"x = ({', '.join(desc)}) infers it with confidence {worst['l'][k]:.4g}"
    else:
        detail = "no x value survives the join"
    return f"(X,Y)-privacy cannot be met even by the most general current release (Corollary 4.2): {what}; {detail}"
