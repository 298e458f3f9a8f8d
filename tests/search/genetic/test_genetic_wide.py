"""The genetic search on wide data and with the lattice's privacy models (issue 15).

* fitness of a whole batch of candidates in one statement agrees, candidate by candidate, with a
  pure-Python count (classes from the released values, each model's predicate in Python) and
  with the spine's own statistics, for k-anonymity, distinct and entropy l-diversity and
  t-closeness (equal distance);
* with 24 QIs the class key no longer fits one BIGINT and is packed into several words;
* releases under l-diversity pass the independent checker.
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
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.search.genetic import planner as genetic  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402


def table(seed: int, n_qi: int, n: int):
    rng = random.Random(seed)
    qis = [f"c{i}" for i in range(n_qi)]
    rows = []
    for _ in range(n):
        r = {q: str(min(int(rng.expovariate(0.5)), 7)) for q in qis}
        r["s"] = rng.choice(["u", "v", "w"]) if rng.random() < 0.6 else "u"
        rows.append(r)
    hs = [Hierarchy(q, [[str(v), f"{v // 2 * 2}-{v // 2 * 2 + 1}", f"{v // 4 * 4}-{v // 4 * 4 + 3}", "*"] for v in range(8)]) for q in qis]
    return qis, rows, hs


def python_suppressed(rows, qis, values, model_ok) -> int:
    """values[i][leaf label] -> released label; a class fails when model_ok(its s counter) is False."""
    groups = defaultdict(Counter)
    for r in rows:
        groups[tuple(values[i][r[q]] for i, q in enumerate(qis))][r["s"]] += 1
    return sum(sum(c.values()) for c in groups.values() if not model_ok(c))


def entropy(c: Counter) -> float:
    n = sum(c.values())
    return -sum(v / n * math.log(v / n) for v in c.values())


def emd_equal(c: Counter, glob: dict) -> float:
    n = sum(c.values())
    return 0.5 * sum(abs(c.get(v, 0) / n - p) for v, p in glob.items())


@pytest.mark.parametrize("seed,n_qi", [(1, 3), (2, 4), (3, 24)])
def test_batched_fitness_with_l_and_t_equals_python_and_the_spine(seed, n_qi, tmp_path):
    qis, rows, hs = table(seed, n_qi, 240)
    path = write_parquet(tmp_path / "t.parquet", rows)
    glob = {v: n / len(rows) for v, n in Counter(r["s"] for r in rows).items()}
    cases = [
        ([KAnonymity(3)], lambda c: sum(c.values()) >= 3),
        ([KAnonymity(2), DistinctLDiversity(2)], lambda c: sum(c.values()) >= 2 and len(c) >= 2),
        ([EntropyLDiversity(1.5)], lambda c: entropy(c) >= math.log(1.5) - 1e-9),
        ([TCloseness(0.3, "equal")], lambda c: emd_equal(c, glob) <= 0.3 + 1e-9),
    ]
    for models, ok in cases:
        req = Requirement(models, budget=len(rows))
        eng = connect(threads=1)
        try:
            stats = Statistics(eng, Source.open(path), qis, hs, sensitive="s", needs=req.needs)
            stats.prepare()
            for m in models:
                if isinstance(m, TCloseness):
                    m.global_dist = {v: n / stats.rows for v, n in stats.sensitive_domain}
                    m.order = [v for v, _ in stats.sensitive_domain]
            layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
            objective, costs = build_objective("lm", {}, None)
            ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs, local=False)  # the SQL statement under test (key words)
            ev.prepare()
            rng = random.Random(seed)
            chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in [0.0, 1.0] + [rng.random() for _ in range(14)]]
            scored = ev.score(chroms)  # one statement for the lot
            assert ev.gstats.batches == 1
            if n_qi == 24:
                # the all-specific candidate releases 8 values per QI: 8^24 > 2^62, several key words
                assert ev.gstats.words > 1
            for ch, agg in zip(chroms, scored):
                rec = layout.recoding(ch)
                values = [dict(zip(h.leaves, rec.values(i))) for i, h in enumerate(hs)]
                expected = python_suppressed(rows, qis, values, ok)
                assert agg["suppressed"] == expected, (type(models[-1]).__name__, layout.transformation(ch))
                assert stats.evaluate(rec, req.predicate()).suppressed == expected
            ev.drop()
        finally:
            eng.close()


def test_genetic_release_under_entropy_l_diversity_passes_the_checker(tmp_path):
    qis, rows, hs = table(5, 4, 300)
    path = write_parquet(tmp_path / "t.parquet", rows)
    hdir = []
    for q, h in zip(qis, hs):
        p = tmp_path / f"{q}.csv"
        p.write_text("\n".join(";".join(r) for r in h.rows) + "\n")
        hdir.append(f"{q}={p}")
    out = str(tmp_path / "out.csv")
    report = sqlanon.anonymize(input=path, qi=hdir, k=3, l=1.4, l_diversity="entropy", sensitive_column="s", max_suppression=0.1,
                               search="genetic", metric="lm", search_options={"iterations": 120, "population": 24, "seed": 2}, output=out)
    assert report.suppressed_rows <= report.suppression_budget
    released = checker.read_rows(out)
    assert checker.check_k(released, qis, 3, 0.1)["ok"]
    assert checker.check_l_diversity(released, qis, "s", 1.4, kind="entropy")


def test_genetic_names_the_failing_model(tmp_path):
    qis, rows, hs = table(6, 3, 120)
    path = write_parquet(tmp_path / "t.parquet", rows)
    hdir = []
    for q, h in zip(qis, hs):
        p = tmp_path / f"{q}.csv"
        p.write_text("\n".join(";".join(r) for r in h.rows) + "\n")
        hdir.append(f"{q}={p}")
    with pytest.raises(sqlanon.errors.UnsatisfiableError, match="distinct-l-diversity l=4 fails"):
        sqlanon.anonymize(input=path, qi=hdir, k=2, l=4, sensitive_column="s", search="genetic", metric="lm",
                          search_options={"iterations": 10, "population": 8, "seed": 1}, dry_run=True)
