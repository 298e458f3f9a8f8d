"""Recursive (c,l)-diversity, hierarchical t-closeness, k-map and delta-presence.

* oracle: on small random tables, for every node of the lattice, the rows each model's SQL
  predicate suppresses equal a plain-Python count from the definitions;
* end to end: the API/CLI release is re-checked by tests/checker.py (its own definitions) and its
  metric equals the brute-force optimum over the lattice; DuckDB tables and PostgreSQL;
* bad combinations of keys are refused with one line naming the key.
"""

from __future__ import annotations

import csv
import math
import os
import random
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from checker import (  # noqa: E402
    check_delta_presence,
    check_k,
    check_k_map,
    check_recursive_cl,
    check_t_hierarchical,
    hierarchical_emd,
    precision,
    read_rows,
)
from test_oracle_search import write_hierarchy_csvs  # noqa: E402

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.privacy import DeltaPresence, KMap, RecursiveCLDiversity, TCloseness  # noqa: E402
from sqlanon.privacy.k_map import derived_k  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

COLUMNS = None


def sensitive_tree(rng, values) -> list[list[str]]:
    """A random 2- or 3-level tree over the sensitive values: ``[v, group, (supergroup,) *]``."""
    depth = rng.choice([2, 3])
    rows = []
    for v in values:
        g = f"G{rng.randint(0, 2)}"
        rows.append([v, g, f"S{int(g[1:]) % 2}", "*"] if depth == 3 else [v, g, "*"])
    return rows


def write_rows(path, case, rows) -> str:
    columns = ["id"] + case.qis + [case.sensitive, case.class_column]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(columns)
        for r in rows:
            w.writerow([r["id"]] + [r[c] for c in columns[1:]])
    return str(path)


def subset_case(rng, tmp_path, **kw):
    """A population (the random case) and an input that is a random subset of it."""
    case = brute.random_case(rng, tmp_path, weird=False, **kw)
    for i, r in enumerate(case.rows):
        r["id"] = i
    frac = rng.choice([0.3, 0.5, 0.8])
    sub = [r for r in case.rows if rng.random() < frac] or case.rows[:1]
    pop_path = write_rows(tmp_path / f"pop_{rng.randrange(10**9)}.csv", case, case.rows)
    sub_path = write_rows(tmp_path / f"sub_{rng.randrange(10**9)}.csv", case, sub)
    return case, sub, pop_path, sub_path


def classes(case, rows, node):
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        out.setdefault(tuple(case.maps[i][r[q]][node[i]] for i, q in enumerate(case.qis)), []).append(r)
    return out


# plain-Python definitions ------------------------------------------------------------------------


def ok_recursive(members, s, c, l):
    r = sorted(Counter(m[s] for m in members).values(), reverse=True)
    return len(r) >= l and r[0] < c * sum(r[l - 1 :])


def ok_hier(members, s, t, tree, q):
    p = {v: n / len(members) for v, n in Counter(m[s] for m in members).items()}
    return hierarchical_emd(p, q, tree) <= t + 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_oracle_suppressed_rows_per_node(seed, tmp_path):
    rng = random.Random(1000 + seed)
    case, sub, pop_path, sub_path = subset_case(rng, tmp_path, n_qi=rng.randint(2, 3), n_rows=rng.randint(60, 160))
    s = case.sensitive
    values = sorted({r[s] for r in case.rows})
    tree = sensitive_tree(rng, brute.SENSITIVE_VALUES)
    q = {v: n / len(sub) for v, n in Counter(r[s] for r in sub).items()}
    c, l = rng.choice([1.0, 2.0, 3.0]), rng.choice([2, 3])
    t = rng.choice([0.1, 0.2, 0.35])
    k_map = rng.randint(2, 8)
    dmin, dmax = rng.choice([(0.0, 0.6), (0.2, 0.9), (0.3, 1.0)])
    models = [RecursiveCLDiversity(c, l), TCloseness(t, "hierarchical", hierarchy=Hierarchy(attribute=s, rows=tree)), KMap(k_map), DeltaPresence(dmin, dmax)]
    needs = models[0].needs
    for m in models[1:]:
        needs = needs.merge(m.needs)
    engine = connect(threads=1)
    try:
        hierarchies = [Hierarchy(attribute=qn, rows=[list(r) for r in h]) for qn, h in zip(case.qis, case.hier_rows)]
        stats = Statistics(engine, Source.open(sub_path), case.qis, hierarchies, sensitive=s, needs=needs, population=Source.open(pop_path), sensitive_hierarchy=Hierarchy(attribute=s, rows=tree))
        stats.prepare()
        assert stats.pop_rows == case.n
        for node in case.all_nodes():
            own = classes(case, sub, node)
            pop = {key: len(m) for key, m in classes(case, case.rows, node).items()}
            want = [
                sum(len(m) for m in own.values() if not ok_recursive(m, s, c, l)),
                sum(len(m) for m in own.values() if not ok_hier(m, s, t, tree, q)),
                sum(len(m) for key, m in own.items() if pop[key] < k_map),
                sum(len(m) for key, m in own.items() if not dmin - 1e-12 <= len(m) / pop[key] <= dmax + 1e-12),
            ]
            got = [stats.evaluate(node, m.predicate()).suppressed for m in models]
            assert got == want, (node, got, want)
            assert values  # the sensitive domain is not empty
    finally:
        engine.close()


def test_hierarchical_emd_examples():
    """Li et al.'s hierarchical distance: moving mass between siblings costs 1/H per unit, across
    the root costs 1 (H = 2 here); both implementations agree with the hand values."""
    tree = [["a", "A", "*"], ["b", "A", "*"], ["c", "C", "*"], ["d", "C", "*"]]
    from sqlanon.privacy.t_closeness import emd_hierarchical

    q = {"a": 0.25, "b": 0.25, "c": 0.25, "d": 0.25}
    for p, want in (({"a": 0.5, "b": 0.5}, 0.5), ({"a": 0.5, "c": 0.5}, 0.25), ({"a": 1.0}, 0.25 * 0.5 + 0.5 * 1.0), (q, 0.0)):
        assert hierarchical_emd(p, q, tree) == pytest.approx(want)
        assert emd_hierarchical(p, q, tree) == pytest.approx(want)


def poisson_cdf(c, lam):
    return sum(math.exp(-lam) * lam**j / math.factorial(j) for j in range(c + 1))


@pytest.mark.parametrize("k,pi,sig", [(5, 0.1, 0.01), (10, 0.5, 0.05), (20, 0.01, 0.001), (3, 0.9, 0.1), (50, 0.2, 0.01)])
def test_k_map_derived_k_matches_the_poisson_rule(k, pi, sig):
    """ARX's KMap: smallest c with P(X <= c) >= 1 - significance for X ~ Poisson(pi * k); k' = c + 2
    (D3); zero-truncated: smallest c >= 1 with the truncated CDF reaching it, k' = c + 1; min with k."""
    lam = pi * k
    c = 0
    while poisson_cdf(c, lam) < 1 - sig:
        c += 1
    assert derived_k(k, pi, sig, "poisson")[0] == min(k, c + 2)
    c = 1
    while (poisson_cdf(c, lam) - math.exp(-lam)) / (1 - math.exp(-lam)) < 1 - sig:
        c += 1
    assert derived_k(k, pi, sig, "zero-truncated-poisson")[0] == min(k, c + 1)


def hier_of(case):
    return {q: {r[0]: r for r in rows} for q, rows in zip(case.qis, case.hier_rows)}


def brute_optimum(case, sub, ok_class, budget):
    """The lowest precision over nodes whose failing classes fit the budget."""
    best = None
    for node in case.all_nodes():
        own = classes(case, sub, node)
        sup = sum(len(m) for key, m in own.items() if not ok_class(node, key, m))
        if sup > budget:
            continue
        levels = dict(zip(case.qis, node))
        value = precision(levels, hier_of(case), len(sub), sup)
        best = value if best is None else min(best, value)
    return best


@pytest.mark.parametrize("seed,search", [(0, "optimal"), (1, "optimal"), (2, "optimal"), (3, "optimal"), (0, "lightning"), (1, "auto"), (2, "lightning"), (3, "auto")])
def test_releases_rechecked_and_optimal(seed, search, tmp_path):
    """Every model's release is the brute-force optimum (lightning: its walk exhausts these small
    lattices, so it is exact; auto: optimal) and passes the independent re-check."""
    rng = random.Random(2000 + seed)
    case, sub, pop_path, sub_path = subset_case(rng, tmp_path, n_qi=2, n_rows=rng.randint(80, 160), depths=[rng.randint(1, 3), rng.randint(1, 2)])
    qi = write_hierarchy_csvs(case, tmp_path)
    s = case.sensitive
    tree = sensitive_tree(rng, brute.SENSITIVE_VALUES)
    tree_path = tmp_path / "s_tree.csv"
    tree_path.write_text("\n".join(";".join(r) for r in tree) + "\n")
    frac = rng.choice([0.0, 0.05, 0.1])
    budget = math.floor(frac * len(sub) + 1e-9)
    hier = hier_of(case)
    q = {v: n / len(sub) for v, n in Counter(r[s] for r in sub).items()}
    pop_of = lambda node: {key: len(m) for key, m in classes(case, case.rows, node).items()}  # noqa: E731
    runs = [
        (dict(k=2, l_diversity="recursive", l=2, c=2.0, sensitive_column=s), lambda node, key, m: len(m) >= 2 and ok_recursive(m, s, 2.0, 2),
         lambda rows, levels: check_recursive_cl(rows, case.qis, s, 2.0, 2)),
        (dict(k=2, t=0.25, t_distance="hierarchical", t_hierarchy=str(tree_path), sensitive_column=s), lambda node, key, m: len(m) >= 2 and ok_hier(m, s, 0.25, tree, q),
         lambda rows, levels: check_t_hierarchical(rows, case.qis, s, 0.25, tree, sub)),
        (dict(k_map=4, population=pop_path), lambda node, key, m: pop_of(node)[key] >= 4,
         lambda rows, levels: check_k_map(rows, case.qis, case.rows, hier, levels, 4)),
        (dict(delta_min=0.1, delta_max=0.7, population=pop_path), lambda node, key, m: 0.1 - 1e-12 <= len(m) / pop_of(node)[key] <= 0.7 + 1e-12,
         lambda rows, levels: check_delta_presence(rows, case.qis, case.rows, hier, levels, 0.1, 0.7)),
    ]
    for i, (options, ok_class, recheck) in enumerate(runs):
        want = brute_optimum(case, sub, ok_class, budget)
        out = str(tmp_path / f"out{i}.parquet")
        if want is None:
            with pytest.raises(UnsatisfiableError):
                sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=sub_path, qi=qi, max_suppression=frac, output=out, search=search, **options)
            assert not os.path.exists(out)
            continue
        report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=sub_path, qi=qi, max_suppression=frac, output=out, search=search, **options)
        assert report.metric.value == pytest.approx(want, abs=1e-9), options
        rows = read_rows(out)
        assert len(rows) == len(sub)
        levels = {qn: int(lv) for qn, lv in report.transformation.items()}
        verdict = check_k(rows, case.qis, options.get("k", 1), frac)
        assert verdict["ok"], verdict["problems"]
        problems = recheck(rows, levels)
        assert not problems, (options, problems[:3])


def test_cli_population_table_in_a_duckdb_file(tmp_path):
    rng = random.Random(7)
    case, sub, pop_path, sub_path = subset_case(rng, tmp_path, n_qi=2, n_rows=150, depths=[2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    db = str(tmp_path / "data.duckdb")
    import duckdb

    con = duckdb.connect(db)
    con.execute("CREATE TABLE research AS SELECT * FROM read_csv(?, all_varchar=true)", [sub_path])
    con.execute('CREATE TABLE "the population" AS SELECT * FROM read_csv(?, all_varchar=true)', [pop_path])
    con.close()
    out = tmp_path / "out.parquet"
    args = ["anonymize", "--keep-others", "--keep-column", "id", "--input", db, "--table", "research", "--population", "the population", "--k-map", "3", "--delta-max", "0.9", "--output", str(out), "--json", "-q"]
    for c, spec in qi.items():
        args += ["--qi", f"{c}={spec}"]
    res = CliRunner().invoke(sqlanon.cli.app.app, args)
    assert res.exit_code == 0, res.output
    import json

    report = json.loads(res.stdout)
    assert [m["model"] for m in report["privacy"]["models"]] == ["k-anonymity", "k-map", "delta-presence"]
    rows = read_rows(str(out))
    levels = {qn: int(lv) for qn, lv in report["transformation"].items()}
    assert not check_k_map(rows, case.qis, case.rows, hier_of(case), levels, 3)
    assert not check_delta_presence(rows, case.qis, case.rows, hier_of(case), levels, 0.0, 0.9)
    # a population table that is not there: exit 2, one line naming it
    bad = CliRunner().invoke(sqlanon.cli.app.app, [a if a != "the population" else "nope" for a in args] + ["--overwrite"])
    assert bad.exit_code == 2 and "population table 'nope' not found" in bad.output


def test_population_must_contain_the_input(tmp_path):
    rng = random.Random(9)
    case, sub, pop_path, sub_path = subset_case(rng, tmp_path, n_qi=2, n_rows=100)
    qi = write_hierarchy_csvs(case, tmp_path)
    # swap roles: the input is the population, the "population" the subset
    with pytest.raises(ConfigError, match=r"the input is not a subset of population csv:.*: \d+ input row\(s\)"):
        sqlanon.run.api.anonymize(keep_others=True, input=pop_path, qi=qi, population=sub_path, k_map=2, dry_run=True)


@pytest.mark.parametrize(
    "options,message",
    [
        (dict(k=2, c=2.0), "c is the c of recursive"),
        (dict(k=2, l_diversity="recursive", l=2), "needs both --c and --l"),
        (dict(k=2, t_hierarchy="x.csv", t=0.2), "t_hierarchy is the sensitive hierarchy"),
        (dict(k=2, t=0.2, t_distance="hierarchical"), "needs --t and --t-hierarchy"),
        (dict(k=2, population="people"), "population is the population table"),
        (dict(k=2, delta_max=0.5), "needs --population TABLE"),
        (dict(k_map=3), "k-map needs the population"),
        (dict(k=2, population_size=1000), "population_size is the estimated population"),
        (dict(k_map=3, population_size=10**6, k_map_estimator="poisson", population="p"), "not both"),
        (dict(k=2, k_map_significance=0.05), "k_map_significance applies"),
        (dict(k_map=3, population_size=10**6, search="top-down"), "k-map is computed by the lattice searches"),
        (dict(k_map=3, population_size=10**6, k_map_estimator="binomial"), "k_map_estimator must be one of"),
        (dict(k=2, l_diversity="recursive", l=2.5, c=2.0, sensitive_column="disease"), "whole l >= 2"),
    ],
)
def test_bad_combinations(options, message, tmp_path):
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=40, weird=False)
    qi = write_hierarchy_csvs(case, tmp_path)
    with pytest.raises(ConfigError, match=message):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, dry_run=True, **options)


def test_estimated_k_map_is_derived_k_anonymity(tmp_path):
    rng = random.Random(4)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=120, weird=False)
    qi = write_hierarchy_csvs(case, tmp_path)
    out = str(tmp_path / "e.parquet")
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, k_map=10, population_size=600, k_map_significance=0.05, output=out)
    model = report.privacy.models[-1]
    kd = derived_k(10, 120 / 600, 0.05)[0]
    assert model["derived_k"] == kd and kd < 10
    assert check_k(read_rows(out), case.qis, kd, 0.0)["ok"]
