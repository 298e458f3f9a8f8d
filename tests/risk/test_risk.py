"""Re-identification risk: SQL figures against plain-Python oracles on small random tables, the
1/k bound on k-anonymous releases, population-uniqueness estimators against plain-Python versions
of their equations, and the CLI/API/registry front doors."""

import json
import math
import random
from collections import Counter

import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from checker import is_suppressed, read_rows
from sqlanon.run.check import check
from sqlanon.risk import population as pop

runner = CliRunner()


def write_table(tmp_path, seed, n=None):
    rnd = random.Random(seed)
    n = n or rnd.randint(40, 400)
    lines = ["zip,age,sex,disease"]
    for _ in range(n):
        lines.append(f"{rnd.choice(['13053', '13068', '13102', '14850', '14853'])},{rnd.randint(20, 60)},{rnd.choice('MF')},{rnd.choice(['flu', 'hiv', 'cold'])}")
    path = tmp_path / f"t{seed}.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def oracle_risk(rows, qis, threshold):
    """Plain Python: class sizes of the released (not all-'*') rows and every figure from them."""
    sizes = Counter(tuple(r[q] for q in qis) for r in rows if not is_suppressed(r, qis))
    n = sum(sizes.values())
    f = list(sizes.values())
    hist = Counter(f)
    return {
        "records": n,
        "classes": len(f),
        "highest": max(1 / x for x in f),
        "average": sum((1 / x) * x for x in f) / n,  # mean over records of 1/f_j
        "above": sum(x for x in f if 1 / x > threshold) / n,
        "uniques": sum(1 for x in f if x == 1),
        "at_highest": sum(x for x in f if x == min(f)) / n,
        "hist": sorted(hist.items()),
    }


@pytest.mark.parametrize("seed", range(6))
def test_check_risk_equals_plain_python(seed, tmp_path):
    path = write_table(tmp_path, seed)
    threshold = random.Random(seed).choice([0.05, 0.1, 0.2, 0.5])
    got = check(path, ["zip", "age", "sex"], risk=True, risk_threshold=threshold)["risk"]
    want = oracle_risk(read_rows(path), ["zip", "age", "sex"], threshold)
    assert got["records"] == want["records"] and got["classes"] == want["classes"]
    p = got["prosecutor"]
    assert p["highest"] == pytest.approx(want["highest"])
    assert p["average"] == pytest.approx(want["average"])
    assert p["records_above_threshold"] == pytest.approx(want["above"])
    assert p["records_at_highest"] == pytest.approx(want["at_highest"])
    assert got["sample_uniques"]["records"] == want["uniques"]
    assert [tuple(x) for x in got["class_sizes"]] == want["hist"]
    # without population tables, journalist and marketer risk are their prosecutor bounds
    assert got["journalist"]["highest"] == p["highest"] and got["marketer"]["average"] == p["average"]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("suppression", ["mask", "drop"])
def test_k_anonymous_release_has_prosecutor_risk_at_most_one_over_k(seed, suppression, tmp_path):
    path = write_table(tmp_path, seed, n=300)
    k = [2, 3, 5, 7, 10][seed]
    out = str(tmp_path / f"out{seed}.csv")
    report = sqlanon.anonymize(keep_others=True, input=path, qi={"zip": "mask", "age": "bands:5,10,20"}, k=k, max_suppression=0.1, suppression=suppression, output=out, population_fraction=0.05)
    after, before = report.risk["after"], report.risk["before"]
    assert after["prosecutor"]["highest"] <= 1 / k + 1e-12
    assert after["records"] == 300 - report.suppressed_rows
    assert after["sample_uniques"]["records"] == 0
    assert after["population_uniques"]["uniques"] == 0  # no sample uniques: nothing to estimate
    # the release, re-read from its file, gives the same figures (the independent re-check)
    want = oracle_risk(read_rows(out), ["zip", "age"], 0.2)
    assert after["prosecutor"]["highest"] == pytest.approx(want["highest"])
    assert after["prosecutor"]["average"] == pytest.approx(want["average"])
    assert [tuple(x) for x in after["class_sizes"]] == want["hist"]
    # before: the input as it is
    raw = oracle_risk(read_rows(path), ["zip", "age"], 0.2)
    assert before["prosecutor"]["highest"] == pytest.approx(raw["highest"])
    assert before["sample_uniques"]["records"] == raw["uniques"]
    assert report.utility["zip"]["level"] == report.transformation["zip"]


def test_k_anonymous_release_checked_with_risk(tmp_path):
    path = write_table(tmp_path, 11, n=400)
    out = str(tmp_path / "out.parquet")
    sqlanon.anonymize(keep_others=True, input=path, qi={"zip": "mask", "age": "bands:5,10,20", "sex": "flat"}, k=4, max_suppression=0.05, output=out)
    got = check(out, ["zip", "age", "sex"], risk=True)["risk"]
    assert got["prosecutor"]["highest"] <= 0.25


# ------------------------------------------------------------------------------------------------
# population uniqueness: each estimator against a plain-Python version of its equations

HISTOGRAMS = [
    {1: 10, 2: 5, 3: 5},
    {1: 300, 2: 120, 3: 50, 4: 30, 5: 20, 8: 10, 20: 3},
    {1: 40, 2: 25, 3: 12, 6: 4, 11: 2},
    {1: 3, 2: 9, 4: 7, 9: 2},
    {1: 50, 2: 10, 3: 3, 5: 1, 40: 2},
    {1: 200, 2: 30, 3: 10, 4: 5, 10: 3, 100: 2},
]
#: heavy-tailed histograms, where the Pitman likelihood has its maximum inside 0 < alpha < 1
PITMAN_OK = HISTOGRAMS[4:]


def hypergeom_pmf_one(N, K, n):
    N, n = int(round(N)), int(round(n))
    return K * math.comb(N - K, n - 1) / math.comb(N, n)


@pytest.mark.parametrize("hist", HISTOGRAMS)
@pytest.mark.parametrize("m", [20, 4, 2])
def test_zayatz_equals_plain_python(hist, m):
    n = sum(s * c for s, c in hist.items())
    N, pi = n * m, 1 / m
    u = sum(hist.values())
    denom = sum(c / u * hypergeom_pmf_one(N, s, n) for s, c in hist.items())
    share = hist[1] / u * hypergeom_pmf_one(N, 1, n) / denom
    assert pop.zayatz(hist, n, N) == pytest.approx(hist[1] * share / pi, rel=1e-9)


def test_pitman_without_interior_maximum_is_unavailable():
    # light tails: the likelihood grows as theta diverges (its maximum has alpha <= 0); as in
    # ARX, no estimate, and Dankar's rule falls back to Zayatz
    hist = HISTOGRAMS[0]
    assert math.isnan(pop.pitman(hist, 35, 350))
    assert pop.dankar(hist, 35, 350)[1] == "zayatz"


@pytest.mark.parametrize("hist", PITMAN_OK)
def test_pitman_solves_its_likelihood_equations(hist):
    n = sum(s * c for s, c in hist.items())
    u = sum(hist.values())
    theta, alpha = pop.pitman_parameters(hist, n)
    assert theta > 0 and 0 < alpha < 1
    # the score equations of the Pitman sampling formula, summed term by term
    g1 = sum(1 / (theta + i * alpha) for i in range(1, u)) - sum(1 / (theta + i) for i in range(1, n))
    g2 = sum(i / (theta + i * alpha) for i in range(1, u)) - sum(c * sum(1 / (j - alpha) for j in range(1, s)) for s, c in hist.items())
    assert abs(g1) < 1e-7 and abs(g2) < 1e-7
    N = n / 0.05
    want = math.gamma(theta + 1) / math.gamma(theta + alpha) * N**alpha
    assert pop.pitman(hist, n, N) == pytest.approx(want, rel=1e-9)


def snb_probabilities_by_summation(pi, a, b, terms=4000):
    """P(sample class size = 1) and (= 2) per population class: sum over population class sizes
    F = 1 + X, X ~ NB(a, b), of the binomial thinning probabilities (plain series)."""
    p1 = p2 = 0.0
    log_nb = a * math.log(b)  # log P(X = 0)
    for x in range(terms):
        if x:
            log_nb += math.log((a + x - 1) / x) + math.log(1 - b)
        F = 1 + x
        w = math.exp(log_nb)
        p1 += w * F * pi * (1 - pi) ** (F - 1)
        if F >= 2:
            p2 += w * F * (F - 1) / 2 * pi * pi * (1 - pi) ** (F - 2)
    return p1, p2


@pytest.mark.parametrize("hist", HISTOGRAMS[:3])
@pytest.mark.parametrize("pi", [0.3, 0.6])
def test_snb_matches_its_model_by_summation(hist, pi):
    K, a, b = pop.snb_parameters(hist, pi)
    assert math.isfinite(a) and math.isfinite(b), "SNB did not converge"
    p1, p2 = snb_probabilities_by_summation(pi, a, b)
    assert K * p1 == pytest.approx(hist[1], rel=1e-6)
    assert K * p2 == pytest.approx(hist[2], rel=1e-6)
    n = sum(s * c for s, c in hist.items())
    assert pop.snb(hist, n, n / pi) == pytest.approx(K * b**a, rel=1e-12)
    # Haas & Stokes' Shlosser-type estimate of the number of population classes, term by term
    u, f1 = sum(hist.values()), hist[1]
    s = lambda fn: sum(fn(i) * f for i, f in hist.items())  # noqa: E731
    want_k = u + f1 * s(lambda i: i * pi**2 * (1 - pi**2) ** (i - 1)) / s(lambda i: ((1 + pi) ** i - 1) * (1 - pi) ** i) * (s(lambda i: (1 - pi) ** i) / s(lambda i: i * pi * (1 - pi) ** (i - 1))) ** 2
    assert K == pytest.approx(want_k, rel=1e-12)


@pytest.mark.parametrize("hist", HISTOGRAMS)
@pytest.mark.parametrize("pi", [0.01, 0.1, 0.2, 0.9])
def test_dankar_decision_rule(hist, pi):
    n = sum(s * c for s, c in hist.items())
    N = n / pi
    value, model = pop.dankar(hist, n, N)
    z, p, s = pop.zayatz(hist, n, N), pop.pitman(hist, n, N), pop.snb(hist, n, N)
    ok = lambda x: math.isfinite(x) and x != 0  # noqa: E731
    if pi <= 0.1:
        assert (model, value) == (("pitman", p) if ok(p) else ("zayatz", z))
    elif ok(s):
        assert (model, value) == (("zayatz", z) if z < s else ("snb", s))
    else:
        assert (model, value) == ("zayatz", z)
    result = pop.population_uniqueness(hist, pi)
    assert result["model"] == model and result["uniques"] == pytest.approx(value)
    assert 0 <= result["fraction"] <= 1


def test_special_functions():
    assert pop.digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-12)
    assert pop.trigamma(1.0) == pytest.approx(math.pi**2 / 6, abs=1e-12)
    for x in (0.3, 1.7, 4.2, 25.0):  # digamma is the derivative of lgamma
        h = 1e-6
        assert pop.digamma(x) == pytest.approx((math.lgamma(x + h) - math.lgamma(x - h)) / (2 * h), rel=1e-6)
        assert pop.trigamma(x) == pytest.approx((pop.digamma(x + h) - pop.digamma(x - h)) / (2 * h), rel=1e-5)


def test_census_and_no_uniques():
    r = pop.population_uniqueness({1: 4, 3: 2}, 1.0)
    assert r["model"] == "census" and r["uniques"] == 4
    r = pop.population_uniqueness({2: 4, 3: 2}, 0.1)
    assert r["uniques"] == 0 and r["model"].startswith("none")


# ------------------------------------------------------------------------------------------------
# front doors


def test_cli_check_risk_prints_figures(tmp_path):
    path = write_table(tmp_path, 3)
    res = runner.invoke(sqlanon.cli.app.app, ["check", "--input", path, "--qi", "zip", "--qi", "age", "--risk", "--population-fraction", "0.1"])
    assert res.exit_code == 0, res.output
    assert "prosecutor risk  highest" in res.output and "population uniq." in res.output
    res = runner.invoke(sqlanon.cli.app.app, ["check", "--input", path, "--qi", "zip", "--risk", "--json"])
    data = json.loads(res.output)
    assert data["risk"]["prosecutor"]["highest"] > 0 and "population_uniques" not in data["risk"]


@pytest.mark.parametrize("args,needle", [
    (["--population-fraction", "0.1"], "need --risk"),
    (["--risk", "--population-fraction", "0"], "--population-fraction"),
    (["--risk", "--population-fraction", "1.5"], "--population-fraction"),
    (["--risk", "--risk-threshold", "-1"], "--risk-threshold"),
])
def test_cli_check_risk_bad_options(tmp_path, args, needle):
    path = write_table(tmp_path, 4)
    res = runner.invoke(sqlanon.cli.app.app, ["check", "--input", path, "--qi", "zip", *args])
    assert res.exit_code == 2 and needle in res.output


def test_risk_in_registry_and_json_report(tmp_path):
    path = write_table(tmp_path, 5, n=300)
    out = str(tmp_path / "out.parquet")
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--input", path, "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "3", "--max-suppression", "0.1", "--output", out, "--json", "-q", "--population-fraction", "0.2"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)  # the JSON is stdout (a warning goes to stderr)
    assert set(report["risk"]) == {"before", "after"} and "population_uniques" in report["risk"]["before"]
    from sqlanon.release import registry
    from sqlanon.engine import connect

    engine = connect(database=str(tmp_path / "sqlanon_releases.duckdb"), read_only=True)
    try:
        stored = registry.get_report(engine, report["release_id"])
    finally:
        engine.close()
    assert stored["risk"] == report["risk"]
    assert stored["sql"] and stored["sql"][0][0] == "base frequency set", stored["sql"]


@pytest.mark.parametrize("flag,value", [("--population-fraction", "2"), ("--population-fraction", "0"), ("--risk-threshold", "1.5")])
def test_anonymize_refuses_bad_risk_options_before_writing(tmp_path, flag, value):
    path = write_table(tmp_path, 6)
    out = tmp_path / "out.parquet"
    res = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--input", path, "--qi", "zip=mask", "--k", "2", "--output", str(out), flag, value, "-q"])
    assert res.exit_code == 2 and flag in res.output
    assert not out.exists() and not (tmp_path / "sqlanon_releases.duckdb").exists()
