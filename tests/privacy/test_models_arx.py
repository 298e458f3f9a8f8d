"""Enhanced beta-likeness, delta-disclosure privacy and average re-identification risk (ARX's
EnhancedBLikeness, DDisclosurePrivacy, AverageReidentificationRisk): on small random tables, every
lattice node's suppressed rows from SQL equal a pure-Python brute force (the classes grouped row by
row, each model's definition applied to them, and the model's own Python twin too), and the optimal
search finds the exhaustive optimum; on DuckDB, on PostgreSQL (pgserver), and on Spark (a few)."""

from __future__ import annotations

import math
import os
import random
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402

import sqlanon.run.api  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.average_risk import AverageRisk  # noqa: E402
from sqlanon.privacy.beta_likeness import EnhancedBetaLikeness  # noqa: E402
from sqlanon.privacy.delta_disclosure import DeltaDisclosure  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

EPS = 1e-9
MODELS = ("beta", "delta", "risk", "k+risk")


# ------------------------------------------------------------------------------------------------
# the definitions, row by row


def beta_ok(s: Counter, glob: Counter, n_total: int, beta: float) -> bool:
    """ARX EnhancedBLikeness: (q - p) / p <= min(beta, -ln p) for every value the class holds."""
    n = sum(s.values())
    for v, c in s.items():
        p = glob[v] / n_total
        if (c / n - p) / p > min(beta, -math.log(p)) + EPS:
            return False
    return True


def delta_ok(s: Counter, glob: Counter, n_total: int, delta: float) -> bool:
    """|log2(q / p)| < delta for every value of the table (a value the class lacks: infinite)."""
    n = sum(s.values())
    for v, g in glob.items():
        if s.get(v, 0) == 0 or abs(math.log2((s[v] / n) / (g / n_total))) >= delta - EPS:
            return False
    return True


def risk_suppressed(sizes: list[int], r: float) -> int:
    """ARX's enforcement: suppress the smallest released classes until classes / rows <= r."""
    sizes = sorted(sizes)
    c, rows, gone = len(sizes), sum(sizes), 0
    for size in sizes:
        if rows and c / rows <= r + 1e-12:
            break
        c, rows, gone = c - 1, rows - size, gone + size
    return gone


def brute_node(case, node, spec) -> tuple[int, dict]:
    """(suppressed rows, per class key: released?) at ``node``."""
    groups = brute.group(case, node)
    glob = Counter(r[case.sensitive] for r in case.rows)
    ok = {}
    for key, members in groups.items():
        s = Counter(r[case.sensitive] for r in members)
        good = len(members) >= spec.get("k", 1)
        if "beta" in spec:
            good = good and beta_ok(s, glob, case.n, spec["beta"])
        if "delta" in spec:
            good = good and delta_ok(s, glob, case.n, spec["delta"])
        ok[key] = good
    suppressed = sum(len(m) for key, m in groups.items() if not ok[key])
    if "risk" in spec:
        suppressed += risk_suppressed([len(m) for key, m in groups.items() if ok[key]], spec["risk"])
    return suppressed, ok


def twin_suppressed(case, node, req) -> int:
    """The same through the models' Python twins (Requirement.released)."""
    groups = list(brute.group(case, node).items())
    classes = [{"cnt": len(m), "s_counts": Counter(r[case.sensitive] for r in m), "key": key} for key, m in groups]
    return sum(c["cnt"] for c, good in zip(classes, req.released(classes)) if not good)


def models_for(name: str, rng: random.Random):
    if name == "beta":
        beta = round(rng.uniform(0.2, 2.5), 3)
        return [KAnonymity(1), EnhancedBetaLikeness(beta)], {"beta": beta}
    if name == "delta":
        delta = round(rng.uniform(0.4, 2.5), 3)
        return [KAnonymity(1), DeltaDisclosure(delta)], {"delta": delta}
    r = round(rng.uniform(0.05, 0.5), 3)
    if name == "risk":
        return [KAnonymity(1), AverageRisk(r)], {"risk": r}
    k = rng.randint(2, 4)
    return [KAnonymity(k), AverageRisk(r)], {"k": k, "risk": r}


def make_stats(engine, case, source, needs):
    hierarchies = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    stats = Statistics(engine, source, case.qis, hierarchies, sensitive=case.sensitive, needs=needs, keep_sets=4, materialize_rows=0)
    stats.prepare()
    return stats


def check_case(case, engine, source, name, rng, fractions=(0.0, 0.1, 0.3), searches=("optimal",)):
    models, spec = models_for(name, rng)
    stats = make_stats(engine, case, source, Requirement(list(models)).needs)
    for fraction in fractions:
        req = Requirement(list(models), max_suppression=fraction)
        req.bind(stats)
        table = {}
        for node in case.all_nodes():
            expected, ok = brute_node(case, node, spec)
            got = stats.evaluate(node, req.predicate()).suppressed
            tag = f"{name} {spec} budget={req.budget} node={node}"
            assert got == expected, tag
            assert twin_suppressed(case, node, req) == expected, tag + " (twin)"
            if expected <= req.budget and expected < case.n:
                table[node] = precision(case, node, brute.group(case, node), _released_ok(case, node, spec, ok))
        for search in searches:
            lattice = Lattice(stats, req, METRICS["precision"]())
            if not table:
                with pytest.raises(UnsatisfiableError):
                    LATTICE_SEARCHES[search](lattice)
                continue
            res = LATTICE_SEARCHES[search](lattice)
            tag = f"{name} {spec} budget={req.budget} {search} node={res.node}"
            assert res.node in table, tag + " does not satisfy the requirement"
            best = table.values()
            if search == "samarati":  # a satisfying node of the least height, the best of that height
                height = min(sum(n) for n in table)
                assert sum(res.node) == height, tag
                best = [v for n, v in table.items() if sum(n) == height]
            assert res.value == pytest.approx(min(best), rel=1e-9, abs=1e-9), tag


def precision(case, node, groups: dict, ok: dict) -> float:
    """Precision: per row the mean of level / height over the QIs, a suppressed row 1."""
    maxes = case.maxes
    per_row = sum(lv / m if m else 0.0 for lv, m in zip(node, maxes)) / len(node)
    return sum(len(m) * (per_row if ok[key] else 1.0) for key, m in groups.items()) / case.n


def _released_ok(case, node, spec, ok: dict) -> dict:
    """Per class: released, after the average-risk suppression (smallest first; precision does not
    depend on which of equal-sized classes goes)."""
    if "risk" not in spec:
        return ok
    groups = brute.group(case, node)
    out = dict(ok)
    gone = risk_suppressed([len(m) for key, m in groups.items() if ok[key]], spec["risk"])
    for key in sorted((k for k in groups if ok[k]), key=lambda k: len(groups[k])):
        if gone <= 0:
            break
        out[key] = False
        gone -= len(groups[key])
    return out


# ------------------------------------------------------------------------------------------------
# DuckDB


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("name", MODELS)
def test_every_node_and_the_optimum_on_duckdb(seed, name, tmp_path):
    rng = random.Random(7919 * seed + hash(name) % 1000)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=rng.randint(30, 160), depths=[rng.randint(1, 2), rng.randint(1, 3)], weird=False)
    engine = connect(threads=1)
    try:
        check_case(case, engine, Source.open(case.path), name, rng, searches=("optimal", "samarati", "incognito"))
    finally:
        engine.close()


def test_policy_keys_flags_and_refusals(tmp_path):
    rng = random.Random(3)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=80, depths=[1, 2], weird=False)
    qi = {q: "flat" for q in case.qis}
    report = sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, beta_likeness=3.0, delta_disclosure=4.0, average_risk=0.5, sensitive_column="disease", max_suppression=0.2, dry_run=True)
    names = [m["model"] for m in report.privacy.models]
    assert names == ["k-anonymity", "enhanced-beta-likeness", "delta-disclosure", "average-risk"]
    with pytest.raises(ConfigError, match="needs --sensitive-column"):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, beta_likeness=1.0, dry_run=True)
    with pytest.raises(ConfigError, match="average re-identification risk is computed by the lattice searches"):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, average_risk=0.3, search="genetic", dry_run=True)
    with pytest.raises(ConfigError, match="average_risk must lie in"):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, average_risk=0.0, dry_run=True)


def test_genetic_search_honours_beta_and_delta(tmp_path):
    """The genetic batch computes the same aggregates (sqlanon.privacy.aggregates): its release
    passes the models' Python twins on every released class."""
    rng = random.Random(5)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=120, depths=[2, 2], weird=False)
    specs = {q: p for q, p in zip(case.qis, _write_hierarchies(case, tmp_path))}
    out = str(tmp_path / "g.csv")
    report = sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=specs, beta_likeness=2.0, delta_disclosure=3.0, sensitive_column="disease", max_suppression=0.3,
                                       search="genetic", metric="lm", search_options={"iterations": 30, "population": 10, "seed": 2}, output=out, keep_columns=["id"])
    import csv

    with open(out, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    glob = Counter(r["disease"] for r in case.rows)
    classes: dict = {}
    for r in rows:
        if all(r[q] == "*" for q in case.qis):
            continue
        classes.setdefault(tuple(r[q] for q in case.qis), Counter())[r["disease"]] += 1
    assert classes and report.suppressed_rows <= report.suppression_budget
    for s in classes.values():
        assert beta_ok(s, glob, case.n, 2.0) and delta_ok(s, glob, case.n, 3.0)


def _write_hierarchies(case, tmp_path) -> list[str]:
    import csv

    out = []
    for i, rows in enumerate(case.hier_rows):
        path = tmp_path / f"h{i}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, delimiter=";", lineterminator="\n").writerows(rows)
        out.append(str(path))
    return out


# ------------------------------------------------------------------------------------------------
# PostgreSQL


@pytest.fixture(scope="module")
def pg_url():
    pytest.importorskip("pgserver")
    from conftest import local_postgres

    with local_postgres() as uri:
        yield uri


def _load_pg(url: str, case, table: str) -> None:
    import psycopg
    from psycopg import sql

    columns = ["id", *case.qis, case.sensitive, case.class_column]
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(sql.SQL("CREATE TABLE {} ({})").format(sql.Identifier(table), sql.SQL(", ").join(sql.SQL("{} TEXT").format(sql.Identifier(c)) for c in columns)))
        with con.cursor().copy(sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(table))) as copy:
            for i, row in enumerate(case.rows):
                copy.write_row([str(i), *[row[c] for c in columns[1:]]])


@pytest.mark.postgres
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", MODELS)
def test_every_node_and_the_optimum_on_postgres(pg_url, seed, name, tmp_path):
    rng = random.Random(104729 * seed + len(name))
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=rng.randint(30, 120), depths=[rng.randint(1, 2), rng.randint(1, 2)], weird=False)
    table = f"m_{name.replace('+', '_')}_{seed}"
    _load_pg(pg_url, case, table)
    engine = connect(database=pg_url)
    try:
        check_case(case, engine, Source(kind="table", table=table, database=pg_url), name, rng, fractions=(0.0, 0.2))
    finally:
        engine.close()


# ------------------------------------------------------------------------------------------------
# Spark (few: each statement is a job)


@pytest.mark.spark
@pytest.mark.parametrize("name", ["delta", "k+risk"])
def test_every_node_and_the_optimum_on_spark(spark, name, tmp_path):
    from sqlanon.engine.spark import SparkEngine  # pyspark is optional

    rng = random.Random(17 + len(name))
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60, depths=[1, 2], weird=False)
    view = f"arx_{name.replace('+', '_')}"
    spark.read.option("header", True).csv(case.path).createOrReplaceTempView(view)
    engine = SparkEngine(connection=spark)
    check_case(case, engine, Source(kind="table", table=view), name, rng, fractions=(0.2,))


# ------------------------------------------------------------------------------------------------
# the checker


def test_checker_measures_the_three_models(tmp_path):
    """``check`` on a table equals the brute force; on the release of a run with the three models
    every one holds (and the CLI exits 3 when one does not)."""
    from typer.testing import CliRunner

    from sqlanon.cli.app import app
    from sqlanon.run.check import check

    rng = random.Random(11)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=150, depths=[2, 2], weird=False)
    glob = Counter(r[case.sensitive] for r in case.rows)
    groups = brute.group(case, (0, 0))
    gains, logs, lacking = [], [], 0
    for members in groups.values():
        s = Counter(r[case.sensitive] for r in members)
        n = len(members)
        gains += [(c / n - glob[v] / case.n) / (glob[v] / case.n) for v, c in s.items()]
        lacking += len(s) < len(glob)
        logs += [abs(math.log2((c / n) / (glob[v] / case.n))) for v, c in s.items()]
    got = check(case.path, case.qis, sensitive_column="disease", beta_likeness=1.0, delta_disclosure=1.0, average_risk=0.5)
    assert got["beta_likeness"] == pytest.approx(max(gains))
    assert got["delta_disclosure_classes_lacking_values"] == lacking
    assert got["delta_disclosure"] == (None if lacking else pytest.approx(max(logs)))
    assert got["average_risk"] == pytest.approx(len(groups) / case.n)
    assert got["average_risk_ok"] == (len(groups) / case.n <= 0.5)

    specs = {q: p for q, p in zip(case.qis, _write_hierarchies(case, tmp_path))}
    out = str(tmp_path / "r.csv")
    sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=specs, beta_likeness=2.5, delta_disclosure=3.0, average_risk=0.25, sensitive_column="disease", max_suppression=0.5, output=out, keep_columns=["id"])
    released = check(out, case.qis, sensitive_column="disease", beta_likeness=2.5, delta_disclosure=3.0, average_risk=0.25)
    assert released["beta_likeness_ok"] and released["delta_disclosure_ok"] and released["average_risk_ok"], released
    strict = CliRunner().invoke(app, ["check", "--input", out, "--qi", case.qis[0], "--qi", case.qis[1], "--average-risk", "0.0001", "--json"])
    assert strict.exit_code == 3, strict.output
