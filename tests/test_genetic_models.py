"""Hierarchical t-closeness and recursive (c,l)-diversity in the genetic search.

* batched fitness: for random flexible cuts, the suppressed rows, LM and feasibility the genetic
  statement computes under hierarchical t-closeness equal plain Python (Li et al.'s EMD over the
  sensitive tree, recomputed by tests/checker.py's own tree walk);
* end to end (API, written release): every released class passes checker.check_t_hierarchical /
  check_recursive_cl and k; k-map and delta-presence stay refused by the genetic search.
"""

from __future__ import annotations

import os
import random
import sys
from collections import Counter, defaultdict

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
from test_genetic import write_parquet  # noqa: E402
from test_genetic_oracle import leaves_below, random_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import ConfigError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics.flexible import FlexibleEvaluator, build_objective  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.search import genetic  # noqa: E402
from sqlanon.source import Source  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

S_TREE = [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]]


def python_fitness(rows, qis, hs, values, ok, budget):
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
    return suppressed, loss / (n * N), suppressed <= budget and suppressed < N


@pytest.mark.parametrize("seed,n_qi,n", [(31, 3, 160), (32, 4, 220)])
def test_batched_fitness_under_hierarchical_t_equals_plain_python(seed, n_qi, n, tmp_path):
    qis, rows, hs = random_table(seed, n_qi, n)
    path = write_parquet(tmp_path / "t.parquet", rows)
    glob = {v: c / n for v, c in Counter(r["s"] for r in rows).items()}
    rng = random.Random(seed)
    for t, k in ((0.15, 2), (0.3, 3), (0.05, 1)):
        def ok(c, t=t, k=k):
            size = sum(c.values())
            return size >= k and checker.hierarchical_emd({v: m / size for v, m in c.items()}, glob, S_TREE) <= t + 1e-9

        for budget in (0, n // 8):
            s_tree = Hierarchy("s", [list(r) for r in S_TREE])
            req = Requirement([KAnonymity(k), TCloseness(t, "hierarchical", hierarchy=s_tree)], budget=budget)
            eng = connect(threads=1)
            try:
                stats = Statistics(eng, Source.open(path), qis, hs, sensitive="s", needs=req.needs, sensitive_hierarchy=s_tree)
                stats.prepare()
                from sqlanon.privacy import options as privacy_options

                privacy_options.bind(req, stats)
                for m in req.models:
                    if isinstance(m, TCloseness):
                        m.global_dist = {v: c / stats.rows for v, c in stats.sensitive_domain}
                        m.order = [v for v, _ in stats.sensitive_domain]
                layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
                objective, costs = build_objective("lm", {}, None)
                ev = FlexibleEvaluator(stats, layout, objective, req.predicate(), req.budget, costs, req.needs)
                ev.prepare()
                densities = [0.0, 1.0] + [rng.random() for _ in range(8)]
                chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in densities]
                scored = ev.score(chroms)
                assert ev.gstats.batches == 1
                for ch, agg in zip(chroms, scored):
                    rec = layout.recoding(ch)
                    values = [dict(zip(h.leaves, rec.values(i))) for i, h in enumerate(hs)]
                    sup, lm, feasible = python_fitness(rows, qis, hs, values, ok, budget)
                    where = (t, k, budget, layout.transformation(ch))
                    assert agg["suppressed"] == sup, where
                    assert agg["value"] == pytest.approx(lm, abs=1e-9), where
                    assert agg["feasible"] == feasible, where
                ev.drop()
            finally:
                eng.close()


def _qi_specs(tmp_path, qis, hs) -> list[str]:
    specs = []
    for q, h in zip(qis, hs):
        p = tmp_path / f"{q}.csv"
        p.write_text("\n".join(";".join(r) for r in h.rows) + "\n")
        specs.append(f"{q}={p}")
    return specs


def test_genetic_releases_under_hierarchical_t_and_recursive_cl_pass_the_checker(tmp_path):
    qis, rows, hs = random_table(41, 3, 300)
    path = write_parquet(tmp_path / "t.parquet", rows)
    specs = _qi_specs(tmp_path, qis, hs)
    tree = tmp_path / "s.csv"
    tree.write_text("\n".join(";".join(r) for r in S_TREE) + "\n")
    ga = {"iterations": 150, "population": 24, "seed": 5}
    out = str(tmp_path / "hier.csv")
    report = sqlanon.anonymize(input=path, qi=specs, k=2, t=0.12, t_distance="hierarchical", t_hierarchy=str(tree), sensitive_column="s",
                               max_suppression=0.1, search="genetic", metric="lm", search_options=ga, output=out)
    released = checker.read_rows(out)
    assert report["suppressed_rows"] <= report["suppression_budget"]
    assert checker.check_k(released, qis, 2, 0.1)["ok"]
    assert checker.check_t_hierarchical(released, qis, "s", 0.12, S_TREE, rows) == []
    out2 = str(tmp_path / "rec.csv")
    report = sqlanon.anonymize(input=path, qi=specs, k=2, l=2, c=2.0, l_diversity="recursive", sensitive_column="s",
                               max_suppression=0.1, search="genetic", metric="lm", search_options=ga, output=out2)
    released = checker.read_rows(out2)
    assert report["suppressed_rows"] <= report["suppression_budget"]
    assert checker.check_k(released, qis, 2, 0.1)["ok"]
    assert checker.check_recursive_cl(released, qis, "s", 2.0, 2) == []


@pytest.mark.parametrize("options,message", [
    (dict(k=2, k_map=3, population_size=10**6), "k-map is computed by the lattice searches"),
    (dict(k=2, l=2, c=2.0, l_diversity="recursive", sensitive_column="s"), None),
])
def test_genetic_model_support_is_stated(tmp_path, options, message):
    qis, rows, hs = random_table(42, 2, 60)
    path = write_parquet(tmp_path / "t.parquet", rows)
    opts = dict(input=path, qi=_qi_specs(tmp_path, qis, hs), search="genetic", metric="lm", max_suppression=1.0,
                search_options={"iterations": 10, "population": 6, "seed": 1}, dry_run=True, **options)
    if message:
        with pytest.raises(ConfigError, match=message):
            sqlanon.anonymize(**opts)
    else:
        assert sqlanon.anonymize(**opts)["search"] == "genetic"
