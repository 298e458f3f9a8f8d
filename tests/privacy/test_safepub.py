"""SafePub (epsilon, delta)-DP: derived k and sampling probability against the paper's formulas,
the exponential mechanism's distribution, the score functions against plain Python, releases
re-checked (a subset of the input; every released class >= k), bad keys refused."""

from __future__ import annotations

import json
import math
import os
import random
import sys
from collections import Counter
from fractions import Fraction

import duckdb
import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from checker import check_k, is_suppressed, read_rows  # noqa: E402
from test_oracle_search import write_hierarchy_csvs  # noqa: E402

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from sqlanon.errors import ConfigError  # noqa: E402
from sqlanon.privacy import exponential  # noqa: E402
from sqlanon.search.lattice import safepub  # noqa: E402


def d_paper(k: int, eps: float) -> float:
    """Li, Qardaji, Su (ASIACCS 2012) / SafePub Sec. 3, written out independently:
    beta = 1 - e^-eps, gamma = (e^eps - 1 + beta) / e^eps, n_m = ceil(k/gamma - 1),
    d = max over n >= n_m of P[Binomial(n, beta) > gamma n], the max taken until the Chernoff
    bound exp(-n (gamma ln(gamma/beta) - (gamma - beta))) drops below the running max."""
    b = 1 - math.exp(-eps)
    g = (math.exp(eps) - 1 + b) / math.exp(eps)
    n = max(math.ceil(k / g - 1), 0)
    best = -1.0
    while True:
        tail = sum(math.comb(n, j) * b**j * (1 - b) ** (n - j) for j in range(math.floor(g * n) + 1, n + 1))
        best = max(best, tail)
        if math.exp(-n * (g * math.log(g / b) - (g - b))) <= best:
            return best
        n += 1


@pytest.mark.parametrize("eps", [0.1, 0.5, 0.9, 1.5, 2.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-5])
def test_derived_k_is_the_smallest_k_meeting_delta(eps, delta):
    k = safepub.derive_k(eps, delta)
    assert d_paper(k, eps) <= delta
    assert k == 1 or d_paper(k - 1, eps) > delta
    assert safepub.beta(eps) == pytest.approx(1 - math.exp(-eps))


def test_derived_k_grows_with_epsilon_and_shrinking_delta():
    ks = [safepub.derive_k(e, 1e-5) for e in (0.5, 1.0, 2.0)]
    assert ks == sorted(ks) and ks[0] < ks[-1]
    assert safepub.derive_k(1.0, 1e-6) >= safepub.derive_k(1.0, 1e-4)


class FakeSession:
    def __init__(self, engine, source):
        self.engine, self.source, self.progress = engine, source, lambda m: None


@pytest.mark.parametrize("eps", [0.2, 0.9, 2.0])
def test_sampling_probability_is_beta_even_for_identical_records(eps, tmp_path):
    """20,000 records, half of them identical copies of one record: the sample keeps each with
    probability beta (within 4 standard deviations, overall and among the copies); the same seed
    draws the same sample, another seed another one."""
    from sqlanon.engine import connect
    from sqlanon.engine.source import Source

    path = tmp_path / "t.parquet"
    con = duckdb.connect()
    con.execute("COPY (SELECT CASE WHEN i % 2 = 0 THEN 'same' ELSE 'v' || i END AS a, CASE WHEN i % 2 = 0 THEN 1 ELSE i END AS b FROM range(20000) t(i)) TO ? (FORMAT parquet)", [str(path)])
    con.close()
    engine = connect(threads=1)
    try:
        counts = []
        for seed in (1, 1, 2):
            params = type("Params", (), {})()
            params.beta, params.seed, params.input_rows, params.sample_rows = safepub.beta(eps), seed, 0, 0
            src = safepub.sample(FakeSession(engine, Source.open(str(path))), params)
            same = int(engine.scalar("SELECT count(*) FROM " + src.table + " WHERE a = 'same'"))
            other = int(engine.scalar("SELECT count(*) FROM " + src.table + " WHERE a <> 'same'"))
            ids = engine.fetch_all("SELECT a FROM " + src.table + " WHERE a <> 'same' ORDER BY a")
            counts.append((same, other, tuple(r[0] for r in ids)))
            assert params.input_rows == 20000 and params.sample_rows == same + other
            b = params.beta
            for got, n in ((same, 10000), (other, 10000), (same + other, 20000)):
                assert abs(got - n * b) <= 4 * math.sqrt(n * b * (1 - b)) + 1, (got, n, b)
        assert counts[0] == counts[1]
        assert counts[0][2] != counts[2][2]
    finally:
        engine.close()


def test_exponential_mechanism_draws_proportionally():
    """40,000 seeded draws follow ``exp(eps/2 * score)`` within 4 standard deviations, fractional
    scores included; a candidate 10^4 units below the rest changes nothing measurable."""
    rng = random.Random(5)
    scores = {0: Fraction(0), 1: Fraction(-1), 2: Fraction(-3), 3: Fraction(2), 4: Fraction(1, 2), 5: Fraction(-10**4)}
    eps = 1.3
    n = 40000
    got = Counter(safepub.exponential_draw(rng, list(scores), scores, eps) for _ in range(n))
    z = sum(math.exp(0.5 * eps * float(s)) for s in scores.values())
    for c, s in scores.items():
        p = math.exp(0.5 * eps * float(s)) / z
        assert abs(got[c] - n * p) <= 4 * math.sqrt(n * p * (1 - p)) + 1, (c, got[c], n * p)


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7)])
def test_exact_coin_for_exp_minus_gamma(gamma):
    """Canonne-Kamath-Steinke's coin: 40,000 seeded flips land ``exp(-gamma)`` of the time (4 sd)."""
    rng = random.Random(int(gamma * 6) + 1)
    n = 40000
    heads = sum(exponential.bernoulli_exp(rng, gamma) for _ in range(n))
    p = math.exp(-float(gamma))
    assert abs(heads - n * p) <= 4 * math.sqrt(n * p * (1 - p)) + 1, (heads, n * p)


class CountingRandom(random.Random):
    """Counts the random integers asked for and the largest bound: the draw uses only randrange."""

    def __init__(self, seed):
        super().__init__(seed)
        self.calls = 0

    def randrange(self, *args, **kwargs):
        self.calls += 1
        return super().randrange(*args, **kwargs)

    def getrandbits(self, k):  # keeps randrange on random bits (Random uses random() otherwise)
        return super().getrandbits(k)

    def random(self):  # pragma: no cover - must not be called
        raise AssertionError("the exact mechanism must not draw floating-point numbers")


def test_far_below_candidates_need_no_floats_and_few_draws():
    """Scores 2,000 sensitivity units apart at eps=1: ``exp(0.5 * -2000)`` is 0.0 in floating point,
    which would make the low candidate impossible; the exact draw keeps it possible (its coin is
    flipped, never skipped) and uses integers only, in a handful of random integers per draw."""
    assert math.exp(0.5 * 1.0 * -2000) == 0.0
    rng = CountingRandom(2)
    picks = Counter(exponential.draw(rng, [Fraction(0), Fraction(-2000)], 1.0) for _ in range(2000))
    assert picks == Counter({0: 2000})
    assert rng.calls < 2000 * 12


def test_float_utilities_are_refused():
    with pytest.raises(TypeError, match="exact"):
        exponential.draw(random.Random(1), [0.5, 1.0], 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        exponential.draw(random.Random(1), [Fraction(0)], 0.0)


def test_scores_match_plain_python():
    class NS:
        pass

    params = type("Params", (), {})()
    params.input_rows, params.k = 1000, 7
    ns = NS()
    ns.rows, ns.suppressed, ns.extra = 600, 50, {"sp_sq": 12345, "sp_classes": 30}
    node, heights = (1, 2, 0), [2, 4, 3]
    sup = 50 + 400
    want = -((Fraction(550, 2) + sup) + (Fraction(550 * 2, 4) + sup) + (0 + sup)) / 3 / 6
    got = safepub.score("precision", ns, node, heights, params)
    assert isinstance(got, Fraction) and got == want  # exact: the mechanism draws from it unrounded
    want = -(1000 * sup + 12345) / (1000 * (Fraction(49, 6) + 1))
    assert safepub.score("discernibility", ns, node, heights, params) == want
    assert safepub.score("aecs", ns, node, heights, params) == 31
    ns.extra["sp_sq"] = 12345.5
    with pytest.raises(ValueError, match="inexact"):
        safepub.score("discernibility", ns, node, heights, params)


def case_files(tmp_path, seed=3, n=400):
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=n, depths=[2, 2], weird=False)
    return case, write_hierarchy_csvs(case, tmp_path)


@pytest.mark.parametrize("metric", ["precision", "discernibility", "aecs"])
def test_release_is_a_k_anonymous_sample(metric, tmp_path):
    case, qi = case_files(tmp_path)
    out = str(tmp_path / f"sp_{metric}.parquet")
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, epsilon=1.0, delta=1e-3, metric=metric, seed=11, safepub_steps=20, output=out)
    sp = report.extra['safepub']
    k = safepub.derive_k(0.9, 1e-3)
    assert sp["k"] == k == report.k and sp["epsilon_anon"] == pytest.approx(0.9) and sp["epsilon_search"] == pytest.approx(0.1)
    assert sp["input_rows"] == case.n and report.rows == sp["sample_rows"]
    rows = read_rows(out)
    assert len(rows) == sp["sample_rows"]
    verdict = check_k(rows, case.qis, k, 1.0)
    assert verdict["ok"], verdict["problems"]
    assert verdict["suppressed"] == report.suppressed_rows
    # a subset of the input: every released id is an input id, once
    ids = Counter(str(r["id"]) for r in rows)
    assert max(ids.values()) == 1 and set(ids) <= {str(i) for i in range(case.n)}
    by_id = {str(i): r for i, r in enumerate(case.rows)}
    levels = report.transformation
    for r in rows:
        if not is_suppressed(r, case.qis):
            orig = by_id[str(r["id"])]
            assert all(case.maps[i][orig[q]][levels[q]] == r[q] for i, q in enumerate(case.qis))
    assert "seed" not in json.dumps(report.extra.get("policy", {}))


def test_same_seed_same_release_and_cli(tmp_path):
    case, qi = case_files(tmp_path, seed=4)
    outs = []
    for i in range(2):
        out = tmp_path / f"c{i}.parquet"
        args = ["anonymize", "--keep-others", "--keep-column", "id", "--input", case.path, "--epsilon", "2", "--delta", "1e-4", "--seed", "9", "--safepub-steps", "15", "--output", str(out), "--json", "-q"]
        for c, spec in qi.items():
            args += ["--qi", f"{c}={spec}"]
        res = CliRunner().invoke(sqlanon.cli.app.app, args)
        assert res.exit_code == 0, res.output
        outs.append((json.loads(res.stdout)["transformation"], sorted(map(str, (r["id"] for r in read_rows(str(out)))))))
    assert outs[0] == outs[1]


@pytest.mark.parametrize(
    "options,message",
    [
        (dict(epsilon=1.0), "needs --delta"),
        (dict(k=2, delta=1e-5), "delta belongs to SafePub"),
        (dict(k=2, epsilon=1.0, delta=1e-5), "k is derived from epsilon"),
        (dict(epsilon=1.0, delta=1e-5, metric="lm"), "has no score function"),
        (dict(epsilon=1.0, delta=1e-5, search="genetic"), "cannot be used with --epsilon"),
        (dict(epsilon=1.0, delta=1e-5, max_suppression=0.05), "max-suppression does not apply"),
        (dict(epsilon=1.0, delta=1e-5, epsilon_search=1.5), "epsilon_search must lie in"),
        (dict(epsilon=1.0, delta=2.0), "delta must lie in"),
        (dict(epsilon=1.0, delta=1e-5, l=2, sensitive_column="disease"), "--l cannot be honoured"),
    ],
)
def test_bad_keys(options, message, tmp_path):
    case, qi = case_files(tmp_path, n=60)
    with pytest.raises(ConfigError, match=message):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, dry_run=True, **options)


def test_policy_file_keys(tmp_path):
    """SafePub and k-map keys from a policy file (paths relative to it)."""
    import yaml

    case, qi = case_files(tmp_path, seed=6)
    policy = {"input": os.path.basename(case.path), "qi": {c: os.path.basename(p) for c, p in qi.items()}, "privacy": {"epsilon": 1.5, "delta": 1e-4, "safepub_steps": 10, "seed": 2}, "metric": "discernibility"}
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy))
    res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--policy", str(path), "--dry-run", "--json", "-q"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["safepub"]["k"] == safepub.derive_k(1.35, 1e-4) and report["metric"]["name"] == "discernibility"
    policy = {"input": os.path.basename(case.path), "qi": {c: os.path.basename(p) for c, p in qi.items()}, "k_map": 3, "population_size": 4000}
    path.write_text(yaml.safe_dump(policy))
    res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--policy", str(path), "--dry-run", "--json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["privacy"]["models"][-1]["model"] == "k-map"


def test_plan_sql_refuses_safepub(tmp_path):
    case, qi = case_files(tmp_path, n=60)
    with pytest.raises(ConfigError, match="does not render SafePub"):
        sqlanon.run.api.plan_sql(input=case.path, qi=qi, epsilon=1.0, delta=1e-5)


def test_sampling_uniform_is_uniform_on_duckdb():
    """DuckDB's sampling number (unsigned ``hash`` / 2^64) over 20,000 integers: in [0, 1), mean
    1/2, below b for about b of them (b = 0.1, SafePub's 0.593, 0.9)."""
    import duckdb
    from unit_hash_check import assert_uniform, rates_query

    con = duckdb.connect()
    assert_uniform(con.execute(rates_query("duckdb", "SELECT range AS id FROM range(20000)")).fetchone())


def test_exponential_module_doctests():
    import doctest

    result = doctest.testmod(exponential)
    assert result.attempted > 0 and result.failed == 0
