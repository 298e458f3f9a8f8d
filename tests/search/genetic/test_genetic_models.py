"""Hierarchical t-closeness and recursive (c,l)-diversity in the genetic search.

* batched fitness: for random flexible cuts, the suppressed rows, LM and feasibility the genetic
  statement computes under hierarchical t-closeness equal plain Python (Li et al.'s EMD over the
  sensitive tree, recomputed by tests/checker.py's own tree walk);
* k-map and delta-presence against a population table: per candidate, the population count of
  every class recomputed in Python from the population rows, and the suppressed rows compared;
* end to end (API, written release): every released class passes checker.check_t_hierarchical /
  check_recursive_cl and k, and k-map / delta-presence recounted on the population with the
  release's own value mapping (read from the written rows).
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
from test_genetic import write_parquet  # noqa: E402
from test_genetic_oracle import python_fitness, random_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import ConfigError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.search.genetic.objective import FlexibleEvaluator, build_objective  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.privacy.delta_presence import DeltaPresence  # noqa: E402
from sqlanon.privacy.k_map import KMap  # noqa: E402
from sqlanon.search.genetic import planner as genetic  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

S_TREE = [["x", "xy", "*"], ["y", "xy", "*"], ["z", "z", "*"]]


def scored_cuts(eng, stats, req, qis, hs, rng):
    """Random flexible cuts of ``hs`` scored by the genetic statement (one batch), with the cuts."""
    for m in req.models:  # what each model reads of the table (the budget is the test's own)
        m.bind(stats)
    layout = genetic.layout_for(qis, hs, stats.column_freqs, {})
    objective, costs = build_objective("lm", {}, None)
    ev = FlexibleEvaluator(stats, layout, objective, req, costs, req.needs)
    ev.prepare()
    densities = [0.0, 1.0] + [rng.random() for _ in range(8)]
    chroms = [layout.repair([rng.random() < d for _ in range(layout.nbits)]) for d in densities]
    scored = ev.score(chroms)
    assert ev.gstats.batches == 1
    return ev, layout, list(zip(chroms, scored))


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
                ev, layout, scored = scored_cuts(eng, stats, req, qis, hs, rng)
                for ch, agg in scored:
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
    report = sqlanon.anonymize(keep_others=True, input=path, qi=specs, k=2, t=0.12, t_distance="hierarchical", t_hierarchy=str(tree), sensitive_column="s",
                               max_suppression=0.1, search="genetic", metric="lm", search_options=ga, output=out)
    released = checker.read_rows(out)
    assert report.suppressed_rows <= report.suppression_budget
    assert checker.check_k(released, qis, 2, 0.1)["ok"]
    assert checker.check_t_hierarchical(released, qis, "s", 0.12, S_TREE, rows) == []
    out2 = str(tmp_path / "rec.csv")
    report = sqlanon.anonymize(keep_others=True, input=path, qi=specs, k=2, l=2, c=2.0, l_diversity="recursive", sensitive_column="s",
                               max_suppression=0.1, search="genetic", metric="lm", search_options=ga, output=out2)
    released = checker.read_rows(out2)
    assert report.suppressed_rows <= report.suppression_budget
    assert checker.check_k(released, qis, 2, 0.1)["ok"]
    assert checker.check_recursive_cl(released, qis, "s", 2.0, 2) == []


def population_of(rows, seed, extra):
    """The research rows plus ``extra`` rows drawn from the values the research rows hold."""
    rng = random.Random(seed)
    pop = [dict(r) for r in rows]
    for _ in range(extra):
        pop.append({c: rng.choice(rows)[c] for c in rows[0]})
    return pop


@pytest.mark.parametrize("seed", [51, 52])
def test_batched_fitness_under_k_map_and_delta_presence_equals_plain_python(seed, tmp_path):
    qis, rows, hs = random_table(seed, 3, 150)
    path = write_parquet(tmp_path / "t.parquet", rows)
    pop = population_of(rows, seed, 250)
    pop_path = write_parquet(tmp_path / "pop.parquet", pop)
    rng = random.Random(seed)
    cases = [
        ([KMap(4)], lambda size, pc: pc >= 4),
        ([KAnonymity(2), KMap(6)], lambda size, pc: size >= 2 and pc >= 6),
        ([DeltaPresence(0.2, 0.6)], lambda size, pc: 0.2 - 1e-12 <= size / pc <= 0.6 + 1e-12),
    ]
    for models, ok in cases:
        for budget in (0, 20):
            req = Requirement(models, budget=budget)
            eng = connect(threads=1)
            try:
                stats = Statistics(eng, Source.open(path), qis, hs, needs=req.needs, population=Source.open(pop_path))
                stats.prepare()
                ev, layout, scored = scored_cuts(eng, stats, req, qis, hs, rng)
                for ch, agg in scored:
                    rec = layout.recoding(ch)
                    values = [dict(zip(h.leaves, rec.values(i))) for i, h in enumerate(hs)]
                    key = lambda r: tuple(values[i][r[q]] for i, q in enumerate(qis))  # noqa: E731
                    sizes, pop_sizes = Counter(map(key, rows)), Counter(map(key, pop))
                    sup = sum(n for c, n in sizes.items() if not ok(n, pop_sizes[c]))
                    where = (type(models[-1]).__name__, budget, layout.transformation(ch))
                    assert agg["suppressed"] == sup, where
                    assert agg["feasible"] == (sup <= budget and sup < len(rows)), where
                ev.drop()
            finally:
                eng.close()


def test_genetic_releases_under_k_map_and_delta_presence_pass_a_recount(tmp_path):
    qis, rows, hs = random_table(53, 3, 240)
    rows = [{"id": str(i), **r} for i, r in enumerate(rows)]
    path = write_parquet(tmp_path / "t.parquet", rows)
    pop = population_of(rows, 53, 300)
    for j, r in enumerate(pop[len(rows):]):
        r["id"] = f"p{j}"
    pop_path = write_parquet(tmp_path / "pop.parquet", pop)
    specs = _qi_specs(tmp_path, qis, hs)
    ga = {"iterations": 120, "population": 24, "seed": 6}
    for name, options, ok in (("kmap", dict(k_map=5), lambda size, pc: pc >= 5),
                              ("delta", dict(delta_min=0.3, delta_max=0.7), lambda size, pc: 0.3 - 1e-12 <= size / pc <= 0.7 + 1e-12)):
        out = str(tmp_path / f"{name}.csv")
        report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=path, qi=specs, population=pop_path, max_suppression=0.1, search="genetic", metric="lm",
                                   search_options=ga, output=out, **options)
        released = checker.read_rows(out)
        assert report.suppressed_rows <= report.suppression_budget, name
        # the release's own mapping of every value (all population values occur in the input)
        mapping = [dict() for _ in qis]
        original = {r["id"]: r for r in rows}
        for r in released:
            if checker.is_suppressed(r, qis):
                continue
            for i, q in enumerate(qis):
                assert mapping[i].setdefault(original[r["id"]][q], r[q]) == r[q], (name, q)
        classes = checker.released_classes(released, qis)
        pop_sizes = Counter(tuple(mapping[i].get(p[q]) for i, q in enumerate(qis)) for p in pop)
        for key, members in classes.items():
            assert ok(len(members), pop_sizes[key]), (name, key, len(members), pop_sizes[key])


def test_genetic_computes_estimated_k_map_and_recursive_cl(tmp_path):
    qis, rows, hs = random_table(42, 2, 60)
    path = write_parquet(tmp_path / "t.parquet", rows)
    for options in (dict(k=2, k_map=3, population_size=10**6), dict(k=2, l=2, c=2.0, l_diversity="recursive", sensitive_column="s")):
        opts = dict(input=path, qi=_qi_specs(tmp_path, qis, hs), search="genetic", metric="lm", max_suppression=1.0,
                    search_options={"iterations": 10, "population": 6, "seed": 1}, dry_run=True, **options)
        assert sqlanon.anonymize(**opts).search == "genetic"
    with pytest.raises(ConfigError, match=r"k-map is computed by the lattice searches \(optimal, samarati, incognito, lightning, lattice-genetic, auto\) and the genetic search; search bottom-up cannot honour it"):
        sqlanon.anonymize(keep_others=True, input=path, qi=_qi_specs(tmp_path, qis, hs), search="bottom-up", k=2, k_map=3, population_size=10**6, dry_run=True)


def test_cli_genetic_with_a_population_table(tmp_path):
    """With --k-map/--delta-* and --search genetic, --population is the population table (the GA's
    population size is then --option population=N); unsatisfiable: exit 3, one line, nothing written."""
    from typer.testing import CliRunner

    import sqlanon.cli.app

    qis, rows, hs = random_table(54, 2, 200)
    rows = [{"id": str(i), **r} for i, r in enumerate(rows)]
    path = write_parquet(tmp_path / "t.parquet", rows)
    pop = population_of(rows, 54, 200)
    for j, r in enumerate(pop[len(rows):]):
        r["id"] = f"p{j}"
    pop_path = write_parquet(tmp_path / "pop.parquet", pop)
    flags = [x for spec in _qi_specs(tmp_path, qis, hs) for x in ("--qi", spec)]
    base = ["anonymize", "--keep-others", "--keep-column", "id", "-i", path, *flags, "--search", "genetic", "--metric", "lm", "--population", pop_path, "--option", "population=12",
            "--iterations", "40", "--seed", "2", "--max-suppression", "0.1"]
    out = tmp_path / "o.csv"
    res = CliRunner().invoke(sqlanon.cli.app.app, [*base, "--k-map", "4", "--output", str(out), "--json", "-q"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["population"] == 12 and out.exists()
    res = CliRunner().invoke(sqlanon.cli.app.app, [*base, "--k-map", "100000", "--output", str(tmp_path / "never.csv"), "-q"])
    assert res.exit_code == 3, res.output
    assert len(res.output.strip().splitlines()) == 1 and "k-map k=100000" in res.output
    assert not (tmp_path / "never.csv").exists()
