"""Slow, independent pure-Python answers for the oracle tests.

Nothing here imports sqlanon: random tables, random tree hierarchies and every statistic, privacy
predicate and metric are computed from the definitions, row by row.
"""

from __future__ import annotations

import csv
import itertools
import math
import random
from collections import Counter, defaultdict
from dataclasses import dataclass, field

EPS = 1e-9

QI_NAMES = ["age", "zip code", "sex", 'we"ird', "edu", "job"]
SENSITIVE_VALUES = ["5", "10", "20", "100", "3", "42"]  # numeric order differs from text order
CLASS_VALUES = ["yes", "no", "maybe"]


# ---------------------------------------------------------------------------------------------
# random data


def random_tree(rng: random.Random, prefix: str, depth: int, weird: bool = False) -> list[list[str]]:
    """Rows ``[leaf, level1, ..., '*']`` of a random tree of ``depth`` levels above the leaves.

    Labels are unique per level; a node with one child sometimes passes its own label down (the
    way padded ARX hierarchies repeat a value), and with ``weird`` some leaves hold commas/quotes.
    """
    counter = itertools.count()
    frontier = [["*"]]  # root-first paths
    for d in range(depth):
        leaf_level = d == depth - 1
        new = []
        for path in frontier:
            fan = rng.randint(1, 4) if leaf_level else rng.randint(1, 3)
            for _ in range(fan):
                n = next(counter)
                if fan == 1 and len(path) > 1 and rng.random() < 0.5:
                    label = path[-1]  # same label one level down
                elif leaf_level:
                    label = f"{prefix}{n}"
                    if weird and rng.random() < 0.3:
                        label = rng.choice([f'{prefix} {n}, "x"', f"{n}", f"{prefix}'{n}"])
                else:
                    label = f"{prefix.upper()}{depth - d - 1}_{n}"
                new.append(path + [label])
        frontier = new
    rows = [list(reversed(p)) for p in frontier]
    leaves = [r[0] for r in rows]
    assert len(set(leaves)) == len(leaves)
    return rows


@dataclass
class Case:
    qis: list[str]
    hier_rows: list[list[list[str]]]
    rows: list[dict]
    sensitive: str = "disease"
    class_column: str = "salary"
    path: str = ""
    maps: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.maps = [{r[0]: r for r in h} for h in self.hier_rows]

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def maxes(self) -> list[int]:
        return [len(h[0]) - 1 for h in self.hier_rows]

    def all_nodes(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*[range(m + 1) for m in self.maxes]))


def random_case(rng: random.Random, tmp_path, n_qi=None, n_rows=None, depths=None, weird=True) -> Case:
    n_qi = n_qi or rng.randint(2, 4)
    qis = rng.sample(QI_NAMES, n_qi)
    hier_rows = []
    for i in range(n_qi):
        depth = depths[i] if depths else rng.randint(1, 3)
        hier_rows.append(random_tree(rng, "abcdefgh"[i], depth, weird=weird and rng.random() < 0.5))
    n = n_rows or rng.randint(30, 300)
    pickers = []
    for h in hier_rows:
        leaves = [r[0] for r in h]
        used = rng.sample(leaves, rng.randint(1, len(leaves)))  # some leaves never occur
        weights = [rng.random() ** 3 + 0.01 for _ in used]  # skewed: small classes happen
        pickers.append((used, weights))
    s_dom = rng.sample(SENSITIVE_VALUES, rng.randint(2, 5))
    s_w = [rng.random() + 0.1 for _ in s_dom]
    y_dom = CLASS_VALUES[: rng.randint(2, 3)]
    rows = []
    for _ in range(n):
        row = {q: rng.choices(used, weights)[0] for q, (used, weights) in zip(qis, pickers)}
        row["disease"] = rng.choices(s_dom, s_w)[0]
        row["salary"] = rng.choice(y_dom)
        rows.append(row)
    case = Case(qis, hier_rows, rows)
    case.path = write_csv(tmp_path / f"data_{rng.randrange(10**9)}.csv", case)
    return case


def write_csv(path, case: Case) -> str:
    columns = ["id"] + case.qis + [case.sensitive, case.class_column]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for i, row in enumerate(case.rows):
            w.writerow([i] + [row[c] for c in columns[1:]])
    return str(path)


# ---------------------------------------------------------------------------------------------
# privacy predicates


def sensitive_order(values) -> list[str]:
    values = list(values)
    try:
        return sorted(values, key=float)
    except (ValueError, TypeError):  # text, or a NULL (no ordered distance is asked of it)
        return sorted(values, key=lambda v: (v is not None, str(v)))


def entropy_nat(counts: Counter) -> float:
    n = sum(counts.values())
    return -sum(c / n * math.log(c / n) for c in counts.values() if c)


def emd_equal(counts: Counter, global_counts: Counter, n_total: int) -> float:
    n = sum(counts.values())
    return 0.5 * sum(abs(counts.get(v, 0) / n - g / n_total) for v, g in global_counts.items())


def emd_ordered(counts: Counter, global_counts: Counter, n_total: int) -> float:
    order = sensitive_order(global_counts)
    m = len(order)
    if m <= 1:
        return 0.0
    n = sum(counts.values())
    cum = total = 0.0
    for v in order[:-1]:
        cum += counts.get(v, 0) / n - global_counts[v] / n_total
        total += abs(cum)
    return total / (m - 1)


@dataclass
class Spec:
    """The requirement, as plain numbers."""

    k: int | None = None
    l_distinct: int | None = None
    l_entropy: float | None = None
    t_equal: float | None = None
    t_ordered: float | None = None

    def ok(self, members: list[dict], case: Case, global_s: Counter) -> bool:
        s = Counter(r[case.sensitive] for r in members)
        if self.k is not None and len(members) < self.k:
            return False
        if self.l_distinct is not None and len(s) < self.l_distinct:
            return False
        if self.l_entropy is not None and entropy_nat(s) < math.log(self.l_entropy) - EPS:
            return False
        if self.t_equal is not None and emd_equal(s, global_s, case.n) > self.t_equal + EPS:
            return False
        if self.t_ordered is not None and emd_ordered(s, global_s, case.n) > self.t_ordered + EPS:
            return False
        return True


# ---------------------------------------------------------------------------------------------
# a node, brute force


@dataclass
class Brute:
    groups: dict
    ok: dict
    classes: int
    rows: int
    min_class: int
    max_class: int
    suppressed: int
    bad_classes: int
    histogram: list
    metrics: dict
    min_distinct: int
    min_entropy: float
    max_emd_equal: float
    max_emd_ordered: float
    sum_maxy: int


def group(case: Case, node) -> dict:
    groups = defaultdict(list)
    for row in case.rows:
        key = tuple(case.maps[i][row[q]][node[i]] for i, q in enumerate(case.qis))
        groups[key].append(row)
    return groups


def evaluate(case: Case, node, spec: Spec) -> Brute:
    groups = group(case, node)
    global_s = Counter(r[case.sensitive] for r in case.rows)
    ok = {key: spec.ok(m, case, global_s) for key, m in groups.items()}
    sizes = [len(m) for m in groups.values()]
    sup = sum(len(m) for key, m in groups.items() if not ok[key])
    s_counts = [Counter(r[case.sensitive] for r in m) for m in groups.values()]
    return Brute(
        groups=groups,
        ok=ok,
        classes=len(groups),
        rows=sum(sizes),
        min_class=min(sizes),
        max_class=max(sizes),
        suppressed=sup,
        bad_classes=sum(1 for v in ok.values() if not v),
        histogram=sorted(Counter(sizes).items()),
        metrics=metrics(case, node, groups, ok),
        min_distinct=min(len(c) for c in s_counts),
        min_entropy=min(entropy_nat(c) for c in s_counts),
        max_emd_equal=max(emd_equal(c, global_s, case.n) for c in s_counts),
        max_emd_ordered=max(emd_ordered(c, global_s, case.n) for c in s_counts),
        sum_maxy=sum(max(Counter(r[case.class_column] for r in m).values()) for m in groups.values()),
    )


def leaves_under(case: Case, i: int, level: int, label: str) -> int:
    return sum(1 for r in case.hier_rows[i] if r[level] == label)


def metrics(case: Case, node, groups: dict, ok: dict) -> dict:
    n = case.n
    nq = len(case.qis)
    maxes = case.maxes
    released = [m for key, m in groups.items() if ok[key]]
    sup = sum(len(m) for key, m in groups.items() if not ok[key])

    # precision: per row and QI level/max level, a suppressed row counts 1 in every QI
    prec_total = 0.0
    lm_total = 0.0
    for key, m in groups.items():
        if ok[key]:
            prec_total += len(m) * sum(node[i] / maxes[i] if maxes[i] else 0.0 for i in range(nq)) / nq
            parts = []
            for i in range(nq):
                big_m = len(case.hier_rows[i])
                parts.append(0.0 if big_m <= 1 else (leaves_under(case, i, node[i], key[i]) - 1) / (big_m - 1))
            lm_total += len(m) * sum(parts) / nq
        else:
            prec_total += len(m)
            lm_total += len(m)
    out = {
        "precision": prec_total / n,
        "height": float(sum(node)),
        "lm": lm_total / n,
        "discernibility": float(sum(len(m) ** 2 for m in released) + sup * n),
        "aecs": n / (len(released) + (1 if sup else 0)),
    }
    minority = sum(len(m) - max(Counter(r[case.class_column] for r in m).values()) for m in released)
    out["cm"] = (minority + sup) / n
    ent = 0.0
    for i, q in enumerate(case.qis):
        f_leaf = Counter(r[q] for r in case.rows)
        f_gen = Counter(case.maps[i][r[q]][node[i]] for r in case.rows)
        for r in case.rows:
            ent += -math.log2(f_leaf[r[q]] / f_gen[case.maps[i][r[q]][node[i]]])
    out["entropy"] = ent
    # ARX's Loss (MetricMDNMLoss, gs-factor 0.5: released rows weigh their value's domain share
    # |leaves under it| / |leaves|, suppressed rows 1), per QI normalized by (agg - N/M) / (N - N/M)
    loss_cols, gran_cols = [], []
    for i in range(nq):
        big_m = len(case.hier_rows[i])
        agg = 0.0
        for key, m in groups.items():
            agg += len(m) * leaves_under(case, i, node[i], key[i]) / big_m if ok[key] else len(m)
        lo = n / big_m
        loss_cols.append(max(0.0, (agg - lo) / (n - lo)) if n > lo else 0.0)
        # ARX's granularity (QualityModelColumnOrientedLoss over QualityDomainShareRaw): a released
        # label's share from a label -> share map built level by level (a later level wins),
        # suppressed rows 1; the mean share per QI
        rows_h = case.hier_rows[i]
        share: dict = {}
        for level in range(len(rows_h[0])):
            for label in {r[level] for r in rows_h}:
                share[label] = sum(1 for r in rows_h if r[level] == label) / big_m
        gran_cols.append(sum(len(m) * share[key[i]] if ok[key] else len(m) for key, m in groups.items()) / n)
    geo = 1.0
    for v in loss_cols:
        geo *= (v + 1.0) ** (1.0 / nq)
    out["loss"] = geo - 1.0
    out["loss-arithmetic"] = sum(loss_cols) / nq
    # ARX's getArithmeticMean(false): average over QIs first, then normalize by the mean minimum
    low = sum(1 / len(case.hier_rows[i]) for i in range(nq)) / nq
    out["granularity"] = min(1.0, max(0.0, (sum(gran_cols) / nq - low) / (1 - low)))
    return out


def exhaustive(case: Case, spec: Spec, budget: int) -> dict:
    """Every lattice node: ``node -> (suppressed, satisfies, metrics)``."""
    out = {}
    for node in case.all_nodes():
        b = evaluate(case, node, spec)
        out[node] = (b.suppressed, b.suppressed <= budget and b.suppressed < case.n, b.metrics)
    return out
