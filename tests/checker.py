"""An independent checker of released outputs, in plain Python (no sqlanon code).

It reads the written file back and verifies what the release promises: every class of QI values
outside the suppressed rows (all QIs ``*``) has at least k rows, suppressed rows fit the budget, and
(given the original rows, hierarchies and levels) the released multiset of QI tuples is exactly the
one full-domain generalization with suppression would produce.
"""

from __future__ import annotations

import csv
import math
from collections import Counter

import pyarrow.parquet as pq

STAR = "*"


def read_rows(path: str, delimiter: str = ",") -> list[dict]:
    if path.endswith(".parquet"):
        return pq.read_table(path).to_pylist()
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter=delimiter))


def read_arx_csv(path: str, delimiter: str = ";") -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        lines = [line.rstrip("\r\n") for line in fh]
    header = lines[0].split(delimiter)
    return [dict(zip(header, line.split(delimiter))) for line in lines[1:] if line]


def read_hierarchy(path: str, delimiter: str = ";") -> dict[str, list[str]]:
    with open(path, encoding="utf-8") as fh:
        return {row[0]: row for row in (line.rstrip("\n").split(delimiter) for line in fh) if row and row[0]}


def is_suppressed(row: dict, qis: list[str]) -> bool:
    return all(str(row[q]) == STAR for q in qis)


def check_k(rows: list[dict], qis: list[str], k: int, max_suppression: float) -> dict:
    suppressed = [r for r in rows if is_suppressed(r, qis)]
    classes = Counter(tuple(str(r[q]) for q in qis) for r in rows if not is_suppressed(r, qis))
    budget = math.floor(max_suppression * len(rows) + 1e-9)
    problems = []
    small = {c: n for c, n in classes.items() if n < k}
    if small:
        problems.append(f"{len(small)} released classes smaller than k={k}, e.g. {next(iter(small.items()))}")
    if len(suppressed) > budget:
        problems.append(f"{len(suppressed)} suppressed rows exceed the budget {budget}")
    return {"ok": not problems, "problems": problems, "suppressed": len(suppressed), "classes": len(classes), "min_class": min(classes.values()) if classes else None}


def check_l_diversity(rows, qis, sensitive, l, kind="distinct") -> bool:
    groups: dict[tuple, Counter] = {}
    for r in rows:
        if is_suppressed(r, qis):
            continue
        groups.setdefault(tuple(str(r[q]) for q in qis), Counter())[str(r[sensitive])] += 1
    for counts in groups.values():
        if kind == "distinct" and len(counts) < l:
            return False
        if kind == "entropy":
            n = sum(counts.values())
            h = -sum(c / n * math.log(c / n) for c in counts.values())
            if h < math.log(l) - 1e-9:
                return False
    return True


def expected_release(original: list[dict], hierarchies: dict[str, dict[str, list[str]]], levels: dict[str, int], k: int) -> tuple[Counter, int]:
    """Brute force: generalize every row, suppress classes smaller than k (all QIs to ``*``)."""
    qis = list(levels)
    gen = [tuple(hierarchies[q][str(r[q])][levels[q]] for q in qis) for r in original]
    sizes = Counter(gen)
    out = Counter()
    suppressed = 0
    for g in gen:
        if sizes[g] < k:
            out[tuple(STAR for _ in qis)] += 1
            suppressed += 1
        else:
            out[g] += 1
    return out, suppressed


def released_multiset(rows: list[dict], qis: list[str]) -> Counter:
    return Counter(tuple(str(r[q]) for q in qis) for r in rows)


def precision(levels: dict[str, int], hierarchies, rows: int, suppressed: int) -> float:
    p = sum(levels[q] / (len(next(iter(hierarchies[q].values()))) - 1) for q in levels) / len(levels)
    return (p * (rows - suppressed) + suppressed) / rows


def expected_local_release(original: list[dict], hierarchies, rounds: list[dict[str, int]], k: int) -> tuple[Counter, int]:
    """Brute force of local recoding with k-anonymity: round 1 generalizes every row by
    ``rounds[0]``; the rows of classes smaller than k go to round 2, whose classes are formed by
    those rows alone under ``rounds[1]``; and so on. Rows left at the end are suppressed."""
    qis = list(rounds[0])
    left = list(original)
    out = Counter()
    for levels in rounds:
        gen = [tuple(hierarchies[q][str(r[q])][levels[q]] for q in qis) for r in left]
        sizes = Counter(gen)
        nxt = []
        for r, g in zip(left, gen):
            if sizes[g] >= k:
                out[g] += 1
            else:
                nxt.append(r)
        left = nxt
    out[tuple(STAR for _ in qis)] += len(left)
    if not left:
        del out[tuple(STAR for _ in qis)]
    return out, len(left)


def local_precision(original_rows: int, hierarchies, rounds: list[dict[str, int]], released: list[int], suppressed: int) -> float:
    """Precision loss of a local recoding: each round's released rows at that round's levels."""
    total = 0.0
    for levels, n in zip(rounds, released):
        p = sum(levels[q] / (len(next(iter(hierarchies[q].values()))) - 1) for q in levels) / len(levels)
        total += p * n
    return (total + suppressed) / original_rows


def check_microaggregation(original: list[dict], released: list[dict], key: str, qis: list[str], column: str, fn: str = "mean", tol: float = 1e-6) -> dict:
    """Rows are matched by ``key`` (an id column kept in the release). Released rows are grouped
    by their released QI values (a microaggregated QI is part of the key as its printed value);
    in every group, each row's ``column`` must equal the mean/median of the group's original
    values. Suppressed rows (every QI ``*``, or NULL where a QI is itself aggregated) must hold no
    value (NULL)."""
    import statistics

    by_id = {str(r[key]): r for r in original}
    groups: dict[tuple, list[dict]] = {}
    problems = []
    for r in released:
        if all(r[q] is None or str(r[q]) == STAR for q in qis if q != column):
            if r[column] not in (None, ""):
                problems.append(f"suppressed row {r[key]} holds {column}={r[column]!r}")
            continue
        groups.setdefault(tuple(str(r[q]) for q in qis), []).append(r)
    for g, members in groups.items():
        values = [float(by_id[str(m[key])][column]) for m in members]
        want = statistics.fmean(values) if fn == "mean" else statistics.median(values)
        for m in members:
            if m[column] is None or abs(float(m[column]) - want) > tol * max(1.0, abs(want)):
                problems.append(f"class {g}: {column}={m[column]!r}, the class {fn} is {want}")
                break
    return {"ok": not problems, "problems": problems[:5], "classes": len(groups)}


# ------------------------------------------------------------------------------------------------
# issue 14 models: recursive (c,l)-diversity, hierarchical t-closeness, k-map, delta-presence


def released_classes(rows: list[dict], qis: list[str]) -> dict[tuple, list[dict]]:
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        if not is_suppressed(r, qis):
            groups.setdefault(tuple(str(r[q]) for q in qis), []).append(r)
    return groups


def check_recursive_cl(rows, qis, sensitive, c, l) -> list[str]:
    """Every released class: sorted counts r1 >= ... >= rm, r1 < c * (r_l + ... + r_m)."""
    problems = []
    for key, members in released_classes(rows, qis).items():
        r = sorted(Counter(str(m[sensitive]) for m in members).values(), reverse=True)
        if len(r) < l or not r[0] < c * sum(r[l - 1 :]):
            problems.append(f"class {key}: counts {r} fail recursive ({c},{l})-diversity")
    return problems


def hierarchical_emd(p: dict, q: dict, tree_rows: list[list[str]]) -> float:
    """Li et al.'s hierarchical EMD, computed over the tree: for every inner node N (by its path
    from the root), cost = height(N)/H * min(positive, negative) extra of its children."""
    height = len(tree_rows[0]) - 1
    # node id = the path from the root down to it (labels may repeat at different places)
    def node_of(row, level):
        return tuple(reversed(row[level:]))

    extra: dict[tuple, float] = {}
    for row in tree_rows:
        d = p.get(row[0], 0.0) - q.get(row[0], 0.0)
        for level in range(height + 1):
            extra[node_of(row, level)] = extra.get(node_of(row, level), 0.0) + d
    total = 0.0
    for node in {node_of(r, lv) for r in tree_rows for lv in range(1, height + 1)}:
        level = height + 1 - len(node)
        children = {node_of(r, level - 1) for r in tree_rows if node_of(r, level) == node}
        pos = sum(extra[ch] for ch in children if extra[ch] > 0)
        neg = -sum(extra[ch] for ch in children if extra[ch] < 0)
        total += level / height * min(pos, neg)
    return total


def check_t_hierarchical(rows, qis, sensitive, t, tree_rows, original: list[dict]) -> list[str]:
    n = len(original)
    q = {v: c / n for v, c in Counter(str(r[sensitive]) for r in original).items()}
    problems = []
    for key, members in released_classes(rows, qis).items():
        p = {v: c / len(members) for v, c in Counter(str(m[sensitive]) for m in members).items()}
        d = hierarchical_emd(p, q, tree_rows)
        if d > t + 1e-9:
            problems.append(f"class {key}: hierarchical EMD {d:.4f} > t={t}")
    return problems


def population_classes(population: list[dict], hierarchies, levels: dict[str, int]) -> Counter:
    """The population generalized by the release's levels: rows per class of labels."""
    return Counter(tuple(hierarchies[q][str(r[q])][levels[q]] for q in levels) for r in population)


def check_k_map(rows, qis, population, hierarchies, levels, k) -> list[str]:
    pop = population_classes(population, hierarchies, levels)
    return [f"class {key}: {pop.get(key, 0)} population matches < k={k}" for key in released_classes(rows, qis) if pop.get(key, 0) < k]


def check_delta_presence(rows, qis, population, hierarchies, levels, dmin, dmax) -> list[str]:
    pop = population_classes(population, hierarchies, levels)
    problems = []
    for key, members in released_classes(rows, qis).items():
        d = len(members) / pop[key] if pop.get(key) else float("inf")
        if not dmin - 1e-12 <= d <= dmax + 1e-12:
            problems.append(f"class {key}: delta {d:.4f} outside [{dmin}, {dmax}]")
    return problems
