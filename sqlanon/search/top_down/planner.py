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
import math
import os
import time
from dataclasses import dataclass, field

from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.search.top_down.join import Tree, covers, parse_inconsistent
from sqlanon.plan import Plan, Recoding
from sqlanon.privacy.xy import SensitiveValue, XYAnonymity, XYLinkability, parse_sensitive, parse_threshold
from sqlanon.engine.source import Source
from sqlanon.stats import distinct_values
from sqlanon.search.top_down.stats import IncTable, LossyJoinStats, MatchTable, PrevSpec, Result, SideY, T1Spec

# ------------------------------------------------------------------------------------------------
# per-attribute cut state



def merge_class_hist(class_hist, leaves) -> dict:
    """Class counts of a set of leaves (summed per class value)."""
    out: dict = {}
    for leaf in leaves:
        for c, n in class_hist[leaf].items():
            out[c] = out.get(c, 0) + n
    return out

class CatAttr:
    """A categorical attribute: a cut of its taxonomy tree."""

    numeric = False

    def __init__(self, qi: int, tree: Tree, freq: list[int], class_hist: list[dict], bounds: tuple[int, int] | None = None) -> None:
        self.qi, self.tree, self.freq, self.class_hist = qi, tree, freq, class_hist
        self.cut = {0}
        self.leaf_node = [0] * len(freq)
        self.lo = 0
        if bounds is not None:
            # level bounds: start from the max-level cut, never specialize a node whose children
            # would all lie below the min level (its lowest level is <= lo)
            h = tree.hierarchy
            self.lo, hi = int(bounds[0]), int(bounds[1])
            up = h.leaf_to_level(hi)
            members: dict[int, set] = {}
            for leaf, code in enumerate(up):
                members.setdefault(code, set()).add(leaf)
            self.leaf_node = [tree.by_set[frozenset(members[up[leaf]])] for leaf in range(len(freq))]
            self.cut = set(self.leaf_node)

    def top_level(self, node: int) -> int:
        """The highest hierarchy level holding this node's leaf set (its chain's top)."""
        n = self.tree.nodes[node]
        return self.tree.hierarchy.max_level if node == 0 else self.tree.nodes[n.parent].level - 1

    def rows(self, node: int) -> int:
        return sum(self.freq[l] for l in self.tree.nodes[node].leaves)

    def hist(self, leaves) -> dict:
        return merge_class_hist(self.class_hist, leaves)

    def children(self, node: int) -> list[frozenset]:
        return [self.tree.nodes[c].leaves for c in self.tree.nodes[node].children]

    def child_ids(self, node: int) -> list[int]:
        return list(self.tree.nodes[node].children)

    def candidates(self) -> list[int]:
        return sorted(v for v in self.cut if self.tree.nodes[v].children and self.rows(v) > 0 and self.tree.nodes[v].level > self.lo)

    def spec_map(self, cands) -> list[int]:
        m = list(self.leaf_node)
        for v in cands:
            for c in self.tree.nodes[v].children:
                for l in self.tree.nodes[c].leaves:
                    m[l] = c
        return m

    def specialize(self, v: int) -> None:
        self.cut.discard(v)
        for c in self.tree.nodes[v].children:
            self.cut.add(c)
            for l in self.tree.nodes[c].leaves:
                self.leaf_node[l] = c

    def label(self, node: int) -> str:
        n = self.tree.nodes[node]
        level = self.released_level(node)
        if level != n.level:  # a chain reaching the min level: its label there
            return self.tree.hierarchy.rows[next(iter(n.leaves))][level]
        return n.label

    def distortion(self) -> float:
        """Paper's distortion: one unit per generalization step (value -> parent value), per record;
        a shallow branch padded to the hierarchy's height counts its real steps, not its level."""
        return float(sum(self.freq[l] * self.tree.depth_steps(self.leaf_node[l], l, self.released_level(self.leaf_node[l])) for l in range(len(self.freq)) if self.freq[l]))

    def released_level(self, node: int) -> int:
        """The level whose label is released for ``node`` (its lowest, or the min level on a chain)."""
        n = self.tree.nodes[node]
        return self.lo if n.level < self.lo <= self.top_level(node) else n.level


class NumAttr:
    """A continuous attribute: intervals of its sorted distinct values, split on the fly at the
    InfoGain-best point (the median of the rows when there is no class column)."""

    numeric = True

    def __init__(self, qi: int, values: list[str], freq: list[int], class_hist: list[dict], has_class: bool) -> None:
        self.qi, self.freq, self.class_hist, self.has_class = qi, freq, class_hist, has_class
        self.values = values
        self.nums = [float(v) for v in values]
        self.order = sorted(range(len(values)), key=lambda i: self.nums[i])  # position -> leaf
        self.intervals: dict[int, tuple[int, int]] = {0: (0, len(values))}
        self.cut = {0}
        self.leaf_node = [0] * len(values)
        self._split: dict[int, list[int]] = {}
        self._next = 1

    def _leaves(self, node: int):
        lo, hi = self.intervals[node]
        return [self.order[p] for p in range(lo, hi)]

    def rows(self, node: int) -> int:
        return sum(self.freq[l] for l in self._leaves(node))

    def hist(self, leaves) -> dict:
        return merge_class_hist(self.class_hist, leaves)

    def child_ids(self, node: int) -> list[int]:
        if node not in self._split:
            lo, hi = self.intervals[node]
            best, best_gain = None, -1.0
            present = [p for p in range(lo, hi) if self.freq[self.order[p]] > 0]
            total = sum(self.freq[self.order[p]] for p in present)
            left_rows, left_hist = 0, {}
            whole = self.hist(self._leaves(node))
            for idx, p in enumerate(present[:-1]):
                leaf = self.order[p]
                left_rows += self.freq[leaf]
                for c, n in self.class_hist[leaf].items():
                    left_hist[c] = left_hist.get(c, 0) + n
                split = present[idx + 1]
                if self.has_class:
                    right = {c: whole[c] - left_hist.get(c, 0) for c in whole}
                    gain = entropy(whole) - (left_rows / total) * entropy(left_hist) - ((total - left_rows) / total) * entropy(right)
                else:
                    gain = -abs(2 * left_rows - total)  # the median split
                if gain > best_gain + 1e-12:
                    best, best_gain = split, gain
            if best is None:
                self._split[node] = []
            else:
                a, b = self._next, self._next + 1
                self._next += 2
                self.intervals[a], self.intervals[b] = (lo, best), (best, hi)
                self._split[node] = [a, b]
        return self._split[node]

    def children(self, node: int) -> list[list[int]]:
        return [self._leaves(c) for c in self.child_ids(node)]

    def candidates(self) -> list[int]:
        return sorted(v for v in self.cut if self.child_ids(v))

    def spec_map(self, cands) -> list[int]:
        m = list(self.leaf_node)
        for v in cands:
            for c in self.child_ids(v):
                for l in self._leaves(c):
                    m[l] = c
        return m

    def specialize(self, v: int) -> None:
        self.cut.discard(v)
        for c in self.child_ids(v):
            self.cut.add(c)
            for l in self._leaves(c):
                self.leaf_node[l] = c

    def label(self, node: int) -> str:
        if node == 0:
            return "*"
        lo, hi = self.intervals[node]
        a = self.values[self.order[lo]]
        if hi >= len(self.order):
            return f"[{a}, {self.values[self.order[-1]]}]"
        return f"[{a}, {self.values[self.order[hi]]}["

    def distortion(self) -> float:
        full = (self.nums[self.order[-1]] - self.nums[self.order[0]]) or 1.0
        out = 0.0
        for l in range(len(self.freq)):
            node = self.leaf_node[l]
            lo, hi = self.intervals[node]
            top = self.nums[self.order[hi]] if hi < len(self.order) else self.nums[self.order[-1]]
            width = top - self.nums[self.order[lo]]
            out += self.freq[l] * (width / full if node != 0 else 1.0)
        return out


def entropy(hist: dict) -> float:
    total = sum(hist.values())
    if total <= 0:
        return 0.0
    return -sum((n / total) * math.log2(n / total) for n in hist.values() if n > 0)


# ------------------------------------------------------------------------------------------------
# resolving the previous releases


def resolve_previous(ref: str, engine, registry: str | None = None, depth: int = 0) -> tuple[str, Source]:
    """A previous release: a Parquet/CSV path, a table of the input database, or a registry id."""
    ref = str(ref).strip()
    if not ref:
        raise ConfigError("empty --previous")
    if os.path.exists(ref) or any(ch in ref for ch in "*?["):
        if ref.lower().endswith((".duckdb", ".db")):
            raise ConfigError(f"--previous {ref}: name a table of the input database or a Parquet/CSV file, not a database file")
        return ref, Source.open(ref)
    if ref.isdigit() and depth == 0:
        from sqlanon.release import registry as reg_mod
        from sqlanon.engine import connect, is_postgres_url

        db = getattr(engine, "database", None) or ""
        candidates = (registry, db, os.path.join(os.getcwd(), reg_mod.REGISTRY_FILE))
        places = [p for p in candidates if p and p != ":memory:" and (is_postgres_url(p) or os.path.exists(p))]
        for place in places:
            if place == db or (not is_postgres_url(place) and not is_postgres_url(db) and os.path.abspath(place) == os.path.abspath(db)):
                entry = reg_mod.get_release(engine, int(ref))
            else:
                other = connect(database=place, read_only=True)
                try:
                    entry = reg_mod.get_release(other, int(ref))
                finally:
                    other.close()
            if entry:
                target = entry.get("target") or (entry.get("policy") or {}).get("output") or (entry.get("policy") or {}).get("output_table")
                if not target:
                    raise ConfigError(f"release {ref} in {place} does not say where it was written")
                if isinstance(target, str) and target.startswith("table "):
                    target = target[len("table "):]
                return f"release {ref} ({target})", resolve_previous(target, engine, registry, depth + 1)[1]
        raise ConfigError(f"--previous {ref}: no such release in the registry ({', '.join(places) or 'no registry found'})")
    src = Source(kind="table", table=ref, database=getattr(engine, "database", None))
    try:
        src.columns(engine)
    except Exception:
        raise ConfigError(f"--previous {ref}: not a file, a release id, or a table of the input database") from None
    return ref, src


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


def run(ctx) -> Plan:
    started = time.perf_counter()
    o = ctx.options
    engine, stats = ctx.engine, ctx.stats
    qis = list(ctx.qis)
    privacy = (o.get("privacy") or "xy-anonymity").lower()
    if privacy not in ("xy-anonymity", "xy-linkability"):
        raise ConfigError(f"unknown --privacy {privacy!r}; choose xy-anonymity or xy-linkability")
    t1_cols = ctx.source.column_names(engine)
    class_column = getattr(stats, "class_column", None) or o.get("class_column")
    if class_column and class_column not in t1_cols:
        raise ConfigError(f"unknown class column {class_column!r}")

    # -- previous releases -----------------------------------------------------------------
    releases: list[Release] = []
    for ref in _as_list(o.get("previous")):
        name, src = resolve_previous(ref, engine, o.get("registry"))
        releases.append(Release(name, src, src.column_names(engine)))
    explicit_join = _as_list(o.get("join")) or None

    # -- X and Y ----------------------------------------------------------------------------
    y = _as_list(o.get("y"))
    if not y:
        raise ConfigError("--y is required for --search top-down (the attributes X must not be linked to)")
    x = _as_list(o.get("x"))
    if not x:
        x = [q for q in qis if q not in y]
        for r in releases:
            x += [c for c in r.columns if c not in x and c not in y and c in qis]
    overlap = set(x) & set(y)
    if overlap:
        raise ConfigError(f"X and Y must be disjoint; both hold {sorted(overlap)}")
    everywhere = set(t1_cols).union(*[set(r.columns) for r in releases]) if releases else set(t1_cols)
    for c in x + y:
        if c not in everywhere:
            raise ConfigError(f"unknown column {c!r} in --x/--y: not in the current release nor in a previous one")
    x1 = [c for c in x if c in t1_cols]
    for c in x1:
        if c not in qis:
            raise ConfigError(f"X attribute {c!r} of the current release needs a hierarchy: add --qi {c}=SPEC")
    if class_column and class_column in x + y:
        raise ConfigError(f"the class column {class_column!r} cannot be in X or Y")
    y_side: dict[str, int] = {}
    for c in y:
        holders = ([0] if c in t1_cols else []) + [r for r, rel in enumerate(releases, start=1) if c in rel.columns]
        if len(holders) != 1:
            raise ConfigError(f"Y attribute {c!r} is in {len(holders)} releases; a Y attribute must belong to exactly one")
        y_side[c] = holders[0]

    # -- join attributes (consistency) and inconsistency predicates --------------------------
    trees: dict[int, Tree] = {}

    def tree_of(qi_index: int) -> Tree:
        h = ctx.hierarchies[qi_index]
        if getattr(h, "numeric", False) and h.max_level == 1:
            raise ConfigError(f"{qis[qi_index]!r} is continuous; join attributes must be categorical (Section 3.3)")
        if qi_index not in trees:
            trees[qi_index] = Tree(h)
        return trees[qi_index]

    join1: list[int] = []
    for r, rel in enumerate(releases, start=1):
        common = [c for c in (explicit_join or t1_cols) if c in t1_cols and c in rel.columns and c not in y and c != class_column]
        for c in common:
            if c not in qis:
                raise ConfigError(f"common attribute {c!r} of the current release and {rel.name} needs a hierarchy: add --qi {c}=SPEC")
            qi = qis.index(c)
            rel.join_cols.append(c)
            rel.trees.append(tree_of(qi))
            if qi not in join1:
                join1.append(qi)
    decl = []
    for spec in o.get("inconsistent") or []:
        (ca, va), (cb, vb) = parse_inconsistent(spec)
        if ca not in t1_cols and cb in t1_cols:
            (ca, va), (cb, vb) = (cb, vb), (ca, va)
        if ca not in t1_cols:
            raise ConfigError(f"inconsistency predicate {spec!r}: one column must be in the current release")
        if ca not in qis:
            raise ConfigError(f"inconsistency predicate {spec!r}: {ca!r} needs a hierarchy: add --qi {ca}=SPEC")
        holders = [r for r, rel in enumerate(releases, start=1) if cb in rel.columns]
        if not holders:
            raise ConfigError(f"inconsistency predicate {spec!r}: {cb!r} is in no previous release")
        qa = qis.index(ca)
        tree_of(qa).leaves_of(va, f" in inconsistency predicate {spec!r}")
        if qa not in join1:
            join1.append(qa)
        for r in holders:
            rel = releases[r - 1]
            if cb not in rel.join_cols:
                rel.join_cols.append(cb)
                rel.trees.append(tree_of(qis.index(cb)) if cb in qis and cb in t1_cols else None)
            decl.append((qa, va, r, rel.join_cols.index(cb), vb))

    # released values of every join column of the previous releases -> ids and leaf sets
    for rel in releases:
        for c, tree in zip(rel.join_cols, rel.trees):
            vals = sorted(distinct_values(engine, rel.source, c))
            rel.labels.append(vals)
            rel.leafsets.append([tree.leaves_of(v, f" of {c!r} in {rel.name}") if tree else frozenset([v]) for v in vals])

    # -- who is in X, how Y is counted ---------------------------------------------------------
    x_attrs = [qis.index(c) for c in x1]
    used = sorted(set(x_attrs) | set(join1))
    case1 = all(q in x_attrs for q in join1) and all(c in x for rel in releases for c in rel.join_cols)
    sides_y = [[c for c in y if y_side[c] == s] for s in range(len(releases) + 1)]
    sources = [ctx.source] + [rel.source for rel in releases]
    lj_probe = LossyJoinStats(engine, ctx.source, None, [], 0, "case1")
    y_modes = []
    if privacy == "xy-anonymity":
        for s, cols in enumerate(sides_y):
            y_modes.append("none" if not cols else ("key" if lj_probe.is_key(sources[s], cols) else "values"))
        with_y = [s for s, m in enumerate(y_modes) if m != "none"]
        if case1:
            mode = "case1"
        elif all(m == "key" for m in y_modes):
            mode = "case4"
        elif len(with_y) == 1 and y_modes[with_y[0]] == "key":
            mode = "case3"
        else:
            mode = "distinct"
            y_modes = ["values" if m != "none" else m for m in y_modes]
    else:
        y_modes = ["none"] * (len(releases) + 1)
        mode = "case1" if case1 else "case4"  # distinct Y values are not counted for linkability

    # -- the requirement ----------------------------------------------------------------------
    k_opt = o.get("k")
    sens: list[SensitiveValue] = []
    if privacy == "xy-anonymity":
        if k_opt is None:
            raise ConfigError("--k is required")
        model = XYAnonymity(int(k_opt), x, y)
    else:
        default = parse_threshold(k_opt) if k_opt is not None else None
        specs = parse_sensitive(_as_list(o.get("sensitive_values")), y, default if default is not None else 1.0)
        if not specs:
            if default is None:
                raise ConfigError("xy-linkability needs --k (a confidence) or --sensitive-values")
            for c in y:
                for v in sorted(distinct_values(engine, sources[y_side[c]], c)):
                    specs.append((c, v, default))
        for column, value, thr in specs:
            if column is None:
                if len(y) != 1:
                    raise ConfigError(f"sensitive value {value!r}: write COLUMN={value} when Y has several columns")
                column = y[0]
            if thr is None:
                raise ConfigError(f"sensitive value {value!r} has no threshold; give --k or VALUE:THRESHOLD")
            sens.append(SensitiveValue(column, value, thr, y_side[column]))
        model = XYLinkability(sens, x, y)
    sens_by_side = [[(k, sv.column, sv.value) for k, sv in enumerate(sens) if sv.release == s] for s in range(len(releases) + 1)]

    t1 = T1Spec(qis, stats.map_tables, used, x_attrs, join1, SideY(sides_y[0], y_modes[0]), class_column, sens_by_side[0])
    prevs = []
    for r, rel in enumerate(releases, start=1):
        x_join = [p for p, c in enumerate(rel.join_cols) if c in x]
        x_cols = [c for c in rel.columns if c in x and c not in rel.join_cols]
        prevs.append(PrevSpec(rel.name, rel.source, rel.join_cols, rel.labels, x_join, x_cols, SideY(sides_y[r], y_modes[r]), sens_by_side[r]))
    if o.get("factorized") in (False, "false", "0", 0) and mode == "case1":
        force_pairs = True
    else:
        force_pairs = False
    lj = LossyJoinStats(engine, ctx.source, t1, prevs, len(sens), mode, shared=stats)
    lj.prepare()
    ctx.progress(f"top-down: T1 {lj.rows1:,} rows, previous {lj.rows_prev}, distinct-Y mode {mode}")

    # -- attribute states -----------------------------------------------------------------------
    has_class = bool(class_column)
    weights, bounds = getattr(ctx, "weights", None), getattr(ctx, "bounds", None)
    if bounds is not None:
        from sqlanon.search.bounds import has_levels, refuse_levelless

        refuse_levelless(ctx, "top-down", [qi for qi in x_attrs if not has_levels(ctx.hierarchies[qi])])
        for qi, q in enumerate(qis):
            if qi not in x_attrs and bounds[qi][0] > 0:
                raise ConfigError(f"--min-level {q}={bounds[qi][0]}: top-down releases {q!r} unchanged (it is not in X); add it to --x or drop the bound")
    attrs: dict[int, object] = {}
    for qi in x_attrs:
        h = ctx.hierarchies[qi]
        n_leaves = len(h.rows)
        freq = [0] * n_leaves
        hist: list[dict] = [dict() for _ in range(n_leaves)]
        for leaf, cls, n in lj.class_histograms(qi):
            if leaf < 0:
                continue
            freq[leaf] += n
            hist[leaf][cls] = hist[leaf].get(cls, 0) + n
        if getattr(h, "numeric", False) and h.max_level == 1:
            attrs[qi] = NumAttr(qi, h.leaves, freq, hist, has_class)
        else:
            attrs[qi] = CatAttr(qi, tree_of(qi), freq, hist, bounds[qi] if bounds is not None else None)
    fixed = {qi: [trees[qi].leaf_node[l] for l in range(len(ctx.hierarchies[qi].rows))] for qi in join1 if qi not in attrs}

    def cuts_now(override: dict | None = None) -> dict[int, list[int]]:
        cuts = {qi: a.leaf_node for qi, a in attrs.items()}
        cuts.update(fixed)
        if override:
            cuts.update(override)
        return cuts

    value_leaves = [[{} for _ in rel.join_cols] for rel in releases]  # per release, column: leaf -> [ids]
    for r, rel in enumerate(releases):
        for p, sets in enumerate(rel.leafsets):
            for vid, s in enumerate(sets):
                for leaf in s:
                    value_leaves[r][p].setdefault(leaf, []).append(vid)

    def node_leaves(qi: int, node: int) -> frozenset:
        return trees[qi].nodes[node].leaves

    def tables(cuts):
        matches = []
        for qi in join1:
            sides = [(r, rel.join_cols.index(qis[qi])) for r, rel in enumerate(releases, start=1) if qis[qi] in rel.join_cols]
            if not sides:
                continue
            rows = set()
            for leaf, node in enumerate(cuts[qi]):
                lists = [value_leaves[r - 1][p].get(leaf, []) for r, p in sides]
                for combo in itertools.product(*lists):
                    rows.add((node, *combo))
            matches.append(MatchTable(qi, sides, sorted(rows)))
        incs = []
        for qa, va, r, p, vb in decl:
            tree_a = trees[qa]
            a_leaves = tree_a.leaves_of(va)
            nodes = sorted({n for n in cuts[qa] if node_leaves(qa, n) <= a_leaves})
            rel = releases[r - 1]
            tree_b = rel.trees[p]
            ws = [w for w, lab in enumerate(rel.labels[p]) if covers(tree_b, vb, lab)]
            incs.append(IncTable(qa, r, p, [(n, w) for n in nodes for w in ws]))
        return matches, incs

    factorized = False if force_pairs else None

    # -- Corollary 4.2: the most general T1 first ------------------------------------------------
    def ok(res: Result) -> bool:
        if privacy == "xy-anonymity":
            return model.ok(res.ay)
        return model.ok_each(res.ly)

    def achieved(res: Result):
        if privacy == "xy-anonymity":
            return None if res.ay is None else int(res.ay)
        return XYLinkability.overall(res.ly)

    m0, i0 = tables(cuts_now())
    total, per = lj.evaluate_state(cuts_now(), m0, i0, [qi for qi in attrs], factorized)
    evaluations = 1
    if not ok(total):
        message = _fault_message(lj, cuts_now(), m0, i0, privacy, model, total, releases, attrs, sens)
        if bounds is not None:
            message = message.replace("the most general current release", "the most general current release within --max-level")
        raise UnsatisfiableError(message)

    invalid: set[tuple[int, int]] = set()
    steps = []
    while True:
        pending = {qi: [v for v in a.candidates() if (qi, v) not in invalid] for qi, a in attrs.items()}
        pending = {qi: vs for qi, vs in pending.items() if vs}
        if not pending:
            break
        best = None
        for qi, vs in pending.items():
            a = attrs[qi]
            spec = a.spec_map(vs)
            cuts = cuts_now({qi: spec})
            mt, it = tables(cuts)
            res = lj.evaluate_specializations(cuts, (qi, list(a.leaf_node)), mt, it, factorized)
            evaluations += 1
            cur = per.get(qi, {})
            for v in vs:
                after = _combine(res.get(v), [r for u, r in cur.items() if u != v], privacy, len(sens))
                if not ok(after):
                    invalid.add((qi, v))
                    continue
                gain = _info_gain(a, v, has_class) * (1.0 if weights is None else weights[qi])
                loss = model.loss(total.ay, after.ay) if privacy == "xy-anonymity" else model.loss(total.ly, after.ly)
                score = gain / (max(loss, 0.0) + 1.0)
                key = (score, gain, -qi, -v)
                if best is None or key > best[0]:
                    best = (key, qi, v, gain, loss, after)
        if best is None:
            break
        _, qi, v, gain, loss, after = best
        a = attrs[qi]
        step = {"attribute": qis[qi], "value": a.label(v), "into": [a.label(c) for c in a.child_ids(v)], "score": best[0][0], "info_gain": gain, "priv_loss": loss, "privacy_after": achieved(after)}
        a.specialize(v)
        steps.append(step)
        ctx.trace(step)
        ctx.progress(f"top-down: specialize {qis[qi]}: {step['value']} -> {', '.join(step['into'])} (score {step['score']:.4g})")
        m0, i0 = tables(cuts_now())
        total, per = lj.evaluate_state(cuts_now(), m0, i0, [q for q in attrs], factorized)
        evaluations += 1
        if not ok(total):  # cannot happen when the requirement is anti-monotone; keep the check honest
            raise AssertionError(f"specializing {step['attribute']}={step['value']} broke the requirement")

    # -- the plan ---------------------------------------------------------------------------------
    values = []
    transformation: dict = {}
    for i, h in enumerate(ctx.hierarchies):
        if i in attrs:
            a = attrs[i]
            values.append([a.label(a.leaf_node[l]) for l in range(len(h.rows))])
            labels = [a.label(n) for n in sorted(a.cut, key=lambda n: (a.intervals[n] if a.numeric else (0, n)))]
            transformation[qis[i]] = labels
        else:
            values.append(list(h.leaves))
    n = lj.rows1 or 1
    def w(qi: int) -> float:
        return 1.0 if weights is None else weights[qi]

    cat = sum(w(qi) * a.distortion() for qi, a in attrs.items() if not a.numeric) / n
    cont = sum(w(qi) * a.distortion() for qi, a in attrs.items() if a.numeric) / n
    lj.drop()
    extra = {
        "privacy_model": model.describe(),
        "privacy_achieved": achieved(total),
        "join_rows_estimated": int(total.ax),
        "distinct_y_case": mode,
        "previous": [rel.name for rel in releases],
        "join_attributes": {rel.name: rel.join_cols for rel in releases},
        "x": x,
        "y": y,
        "specializations": len(steps),
        "steps": steps,
        "evaluations": evaluations,
        "distortion": {"categorical": cat, "continuous": cont},
        "search_seconds": round(time.perf_counter() - started, 3),
    }
    if weights is not None:
        extra["weights"] = dict(zip(qis, weights))
    if bounds is not None:
        extra["level_bounds"] = {q: list(b) for q, b in zip(qis, bounds)}
    if privacy == "xy-linkability":
        extra["linkability_per_value"] = [{**sv.describe(), "achieved": l} for sv, l in zip(sens, total.ly)]
    return Plan(
        search="top-down",
        qis=qis,
        recoding=Recoding.from_values(values),
        transformation=transformation,
        requirement=ctx.requirement,
        rows=lj.rows1,
        suppressed_rows=0,
        metric_name="distortion",
        metric_value=cat + cont,
        node=None,
        nodes_evaluated=evaluations,
        extra=extra,
    )


def _combine(spec: Result | None, others: list[Result], privacy: str, n_sens: int) -> Result:
    """Stats of the join after one specialization: the specialized x values plus all others."""
    parts = ([spec] if spec is not None else []) + others
    ays = [p.ay for p in parts if p.ay is not None]
    ly = []
    for k in range(n_sens):
        vals = [p.ly[k] for p in parts if p.ly[k] is not None]
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
