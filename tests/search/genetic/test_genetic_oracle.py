"""Oracle for the genetic search's batched fitness (:mod:`sqlanon.search.genetic.stats`).

The statement groups rows by a packed class key (QIs in blocks sharing one lookup list, the
candidate number folded into the first key word, several words when the batch's cuts need more
than 62 bits) and sums the rows' LM loss per block. Here every figure the search ranks on is
recomputed in plain Python from the rows, candidate by candidate: suppressed rows under k,
distinct/entropy/recursive-(c,l) diversity and t-closeness (equal and ordered distance), feasibility under several suppression budgets,
and the LM value (released value's (M_P - 1)/(M - 1) per row and QI, 1 for a suppressed row).
Random tables mix small and large leaf domains so that blocks hold one to several QIs; every
other case reads the base table in parts (the split DuckDB gets for small tables).
"""

from __future__ import annotations

import math
import os
import random
import sys
from collections import Counter, defaultdict

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
from test_genetic import write_parquet  # noqa: E402

import sqlanon  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, RecursiveCLDiversity, Requirement, TCloseness  # noqa: E402
from sqlanon.search.genetic import planner as genetic  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402
from sqlanon.search.genetic.stats import blocks_of  # noqa: E402


def random_table(seed: int, n_qi: int, n: int):
    """Rows with skewed codes over domains of 2-70 leaves; interval hierarchies of 2-4 levels."""
    rng = random.Random(seed)
    qis = [f"a{i}" for i in range(n_qi)]
    domains = [rng.choice([2, 3, 5, 8, 8, 20, 70]) for _ in qis]
    hs = []
    for q, d in zip(qis, domains):
        w1 = rng.choice([2, 3, 5])
        widths = [w1, w1 * rng.choice([2, 3, 5])][: rng.randint(0, 2)]  # nested bands: a tree
        rows = [[str(v)] + [f"{v // w * w}-{v // w * w + w - 1}" for w in widths] + ["*"] for v in range(d)]
        hs.append(Hierarchy(q, rows))
    rows = []
    for _ in range(n):
        r = {q: str(min(d - 1, int(d * rng.random() ** 2))) for q, d in zip(qis, domains)}
        r["s"] = rng.choice("xyz") if rng.random() < 0.7 else "x"
        rows.append(r)
    return qis, rows, hs


def leaves_below(h: Hierarchy) -> dict[str, int]:
    """Released label -> number of hierarchy leaves below it (M_P)."""
    out: Counter = Counter()
    for row in h.rows:
        for label in dict.fromkeys(row):
            out[label] += 1
    return out


def python_fitness(rows, qis, hs, values, ok, budget):
    """(suppressed rows, LM, feasible) from the rows, as the paper defines them."""
    groups = defaultdict(Counter)
    for r in rows:
        groups[tuple(values[i][r[q]] for i, q in enumerate(qis))][r["s"]] += 1
    below = [leaves_below(h) for h in hs]
    n, N = len(qis), len(rows)
    suppressed, loss = 0, 0.0
    for key, sens in groups.items():
        size = sum(sens.values())
        if not ok(sens):
            suppressed += size
            loss += n * size
            continue
        for i, label in enumerate(key):
            m = len(hs[i].rows)
            loss += size * ((below[i][label] - 1) / (m - 1) if m > 1 else 0.0)
    feasible = suppressed <= budget and suppressed < N
    return suppressed, loss / (n * N), feasible


def emd_ordered(c: Counter, glob: dict) -> float:
    """Ordered-distance EMD: mean absolute running difference over the values in sorted order."""
    order = sorted(glob)
    n, cum, total = sum(c.values()), 0.0, 0.0
    for v in order[:-1]:
        cum += c.get(v, 0) / n - glob[v]
        total += abs(cum)
    return total / max(len(order) - 1, 1)


def recursive_cl(c: Counter, cc: float, l: int) -> bool:
    """r1 < c (r_l + .. + r_m), counts sorted largest first (absent values count 0)."""
    r = sorted(c.values(), reverse=True)
    return r[0] < cc * sum(r[l - 1 :])


def entropy(c: Counter) -> float:
    n = sum(c.values())
    return -sum(v / n * math.log(v / n) for v in c.values())


@pytest.mark.parametrize("seed,n_qi,n", [(11, 3, 150), (12, 5, 200), (13, 9, 250), (14, 26, 200)])
def test_batched_fitness_equals_plain_python(seed, n_qi, n, tmp_path):
    qis, rows, hs = random_table(seed, n_qi, n)
    path = write_parquet(tmp_path / "t.parquet", rows)
    glob = {v: c / n for v, c in Counter(r["s"] for r in rows).items()}
    k = random.Random(seed).choice([2, 3, 5])
    cases = [
        ([KAnonymity(k)], lambda c: sum(c.values()) >= k),
        ([KAnonymity(2), DistinctLDiversity(2)], lambda c: sum(c.values()) >= 2 and len(c) >= 2),
        ([EntropyLDiversity(1.4)], lambda c: entropy(c) >= math.log(1.4) - 1e-9),
        ([TCloseness(0.35, "equal")], lambda c: 0.5 * sum(abs(c.get(v, 0) / sum(c.values()) - p) for v, p in glob.items()) <= 0.35 + 1e-9),
        ([KAnonymity(2), TCloseness(0.2, "ordered")], lambda c: sum(c.values()) >= 2 and emd_ordered(c, glob) <= 0.2 + 1e-9),
        ([RecursiveCLDiversity(2.0, 2)], lambda c: recursive_cl(c, 2.0, 2)),
    ]
    rng = random.Random(seed)
    for ci, (models, ok) in enumerate(cases):
        for bi, budget in enumerate((0, n // 10, n)):
            # every other case scans the base table in 3 parts (one UNION ALL, as DuckDB gets it
            # for tables smaller than its row groups) instead of the table itself
            split = 3 if (ci + bi) % 2 else 1
            req = Requirement(models, budget=budget)
            eng = connect(threads=2)
            try:
                stats = Statistics(eng, Source.open(path), qis, hs, sensitive="s", needs=req.needs)
                stats.prepare()
                for m in models:
                    if isinstance(m, TCloseness):
                        m.global_dist = {v: c / stats.rows for v, c in stats.sensitive_domain}
                        m.order = [v for v, _ in stats.sensitive_domain]
                layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
                objective, costs = build_objective("lm", {}, None)
                ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, local=False)  # the SQL statement under test (the local path: test_genetic_local.py)
                ev.gstats.split = split
                ev.prepare()
                assert len(ev.gstats.parts) == (split if split > 1 else 0)
                densities = [0.0, 1.0] + [rng.random() for _ in range(10)]
                chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in densities]
                scored = ev.score(chroms)
                assert ev.gstats.batches == 1  # one statement for the batch
                for ch, agg in zip(chroms, scored):
                    rec = layout.recoding(ch)
                    values = [dict(zip(h.leaves, rec.values(i))) for i, h in enumerate(hs)]
                    sup, lm, feasible = python_fitness(rows, qis, hs, values, ok, budget)
                    where = (type(models[-1]).__name__, budget, layout.transformation(ch))
                    assert agg["suppressed"] == sup, where
                    assert agg["value"] == pytest.approx(lm, abs=1e-9), where
                    assert agg["report"]["lm"] == pytest.approx(lm, abs=1e-9), where
                    assert agg["feasible"] == feasible, where
                # the final per-column scoring agrees with the batched one
                best = ev.score([chroms[-1]], per_column=True)[0]
                assert best["value"] == pytest.approx(scored[-1]["value"], abs=1e-9)
                ev.drop()
            finally:
                eng.close()


def test_wide_batches_use_blocks_and_several_key_words(tmp_path):
    """26 QIs: fewer lookups than QIs (blocks), and the all-specific candidate needs two words."""
    qis, rows, hs = random_table(14, 26, 200)
    path = write_parquet(tmp_path / "t.parquet", rows)
    req = Requirement([KAnonymity(2)], budget=len(rows))
    eng = connect(threads=1)
    try:
        stats = Statistics(eng, Source.open(path), qis, hs, needs=req.needs)
        stats.prepare()
        layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
        objective, costs = build_objective("lm", {}, None)
        ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, local=False)  # the SQL key layout under test
        ev.prepare()
        assert len(ev.gstats.blocks) < len(qis)
        assert ev.gstats.blocks == blocks_of([len(h.rows) for h in hs])
        ev.score([layout.repair([1] * layout.nbits)])
        assert ev.gstats.words > 1
        ev.score([layout.repair([0] * layout.nbits)])
        assert ev.gstats.words == 1
        ev.drop()
    finally:
        eng.close()


def test_genetic_release_under_ordered_t_closeness_passes_an_independent_check(tmp_path):
    """End to end (API, written release): k and ordered t-closeness hold in every released class,
    recomputed from the written rows; suppression within the budget."""
    qis, rows, hs = random_table(21, 4, 300)
    path = write_parquet(tmp_path / "t.parquet", rows)
    specs = []
    for q, h in zip(qis, hs):
        p = tmp_path / f"{q}.csv"
        p.write_text("\n".join(";".join(r) for r in h.rows) + "\n")
        specs.append(f"{q}={p}")
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(input=path, qi=specs, k=3, t=0.25, t_distance="ordered", sensitive_column="s", max_suppression=0.2,
                               search="genetic", metric="lm", search_options={"iterations": 150, "population": 24, "seed": 3}, output=out)
    assert report.suppressed_rows <= report.suppression_budget
    released = checker.read_rows(out)
    assert checker.check_k(released, qis, 3, 0.2)["ok"]
    glob = {v: c / len(rows) for v, c in Counter(r["s"] for r in rows).items()}
    for key, members in checker.released_classes(released, qis).items():
        assert emd_ordered(Counter(r["s"] for r in members), glob) <= 0.25 + 1e-9, key
