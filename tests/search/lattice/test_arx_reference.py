"""ARX's reference optima on Adult (all 9 columns QIs), through the API and the CLI, each release
re-checked by the independent checker against a brute-force generalization of the input."""

import json

import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from checker import check_k, expected_release, precision, read_arx_csv, read_hierarchy, read_rows, released_multiset
from conftest import ADULT_COLUMNS, qi_flags

# (k, max suppression, ARX optimum, precision loss, suppressed rows) from the spine issue
PRECISION = [
    (2, 0.0, [0, 4, 1, 1, 3, 2, 0, 2, 0], 0.6111, 0),
    (5, 0.0, [0, 4, 1, 2, 3, 2, 0, 2, 0], 0.6667, 0),
    (10, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 0], 0.6667, 0),
    (100, 0.0, [0, 4, 1, 2, 3, 2, 2, 1, 0], 0.7222, 0),
    (2, 0.05, [0, 4, 0, 0, 1, 1, 0, 1, 0], 0.2896, 1236),
    (5, 0.05, [0, 4, 0, 0, 3, 1, 0, 1, 0], 0.3656, 1461),
    (10, 0.05, [0, 4, 0, 0, 3, 1, 0, 2, 0], 0.4140, 1237),
    (100, 0.05, [0, 4, 0, 2, 3, 1, 1, 2, 0], 0.5753, 1339),
]

# (k, suppression limit, ARX optimum, entropy loss) from ../shared/datasets/adult/README.md
ENTROPY = [
    (5, 0.04, [1, 0, 1, 1, 3, 2, 2, 0, 1], 255559.85455731067),
    (100, 0.04, [1, 1, 1, 1, 3, 2, 2, 1, 1], 379417.3460570988),
    (5, 0.0, [1, 2, 1, 1, 3, 2, 2, 1, 1], 407289.5388925293),
    (100, 0.0, [0, 4, 1, 1, 3, 2, 2, 1, 1], 453196.8932458743),
]


@pytest.fixture(scope="module")
def original(adult):
    rows = read_arx_csv(adult["csv"])
    hier = {c: read_hierarchy(adult["qi"][c]) for c in ADULT_COLUMNS}
    return rows, hier


def _verify_release(path, original, levels, k, max_suppression):
    rows, hier = original
    released = read_rows(path)
    assert len(released) == len(rows)
    verdict = check_k(released, ADULT_COLUMNS, k, max_suppression)
    assert verdict["ok"], verdict["problems"]
    expected, suppressed = expected_release(rows, hier, levels, k)
    assert released_multiset(released, ADULT_COLUMNS) == expected
    return suppressed


@pytest.mark.parametrize("k,sup,arx_node,loss,arx_suppressed", PRECISION)
def test_optimal_precision_matches_arx(adult, original, tmp_path, k, sup, arx_node, loss, arx_suppressed):
    out = str(tmp_path / "out.parquet")
    report = sqlanon.anonymize(input=adult["csv"], delimiter=";", qi=adult["qi"], k=k, max_suppression=sup, metric="precision", search="optimal", output=out)
    node = [report.transformation[c] for c in ADULT_COLUMNS]
    assert report.metric.value == pytest.approx(loss, abs=5e-5)
    rows, hier = original
    levels = dict(zip(ADULT_COLUMNS, node))
    suppressed = _verify_release(out, original, levels, k, sup)
    assert suppressed == report.suppressed_rows
    # the precision of what was written, computed independently, is the reported value
    assert precision(levels, hier, len(rows), suppressed) == pytest.approx(report.metric.value, abs=1e-12)
    if node == arx_node:
        assert report.suppressed_rows == arx_suppressed
    else:  # a tie: ARX's node must score the same under our independent computation
        _, arx_sup = expected_release(rows, hier, dict(zip(ADULT_COLUMNS, arx_node)), k)
        assert arx_sup <= int(sup * len(rows))
        assert precision(dict(zip(ADULT_COLUMNS, arx_node)), hier, len(rows), arx_sup) == pytest.approx(report.metric.value, abs=1e-12)
    assert report.nodes_evaluated < 12960


@pytest.mark.parametrize("k,sup,arx_node,loss", ENTROPY)
def test_optimal_entropy_matches_arx(adult, k, sup, arx_node, loss):
    report = sqlanon.anonymize(input=adult["csv"], delimiter=";", qi=adult["qi"], k=k, max_suppression=sup, metric="entropy", search="optimal")
    node = [report.transformation[c] for c in ADULT_COLUMNS]
    assert node == arx_node
    assert report.metric.value == pytest.approx(loss, rel=1e-12)


def test_cli_contract_json(adult, original, tmp_path):
    out = str(tmp_path / "cli.parquet")
    args = ["anonymize", "--input", adult["csv"], "--format", "csv", "--delimiter", ";", *qi_flags(adult["qi"]),
            "--k", "10", "--max-suppression", "0.05", "--metric", "precision", "--search", "optimal", "--output", out, "--json", "--quiet"]
    result = CliRunner().invoke(sqlanon.cli.app.app, args)
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout)
    for key in ("search", "k", "transformation", "metric", "suppressed_rows", "rows", "nodes_evaluated", "queries", "seconds", "output"):
        assert key in obj
    assert obj["metric"]["name"] == "precision" and obj["metric"]["value"] == pytest.approx(0.4140, abs=5e-5)
    assert obj["rows"] == 30162 and obj["output"] == out
    # nodes are evaluated in batches: fewer node statements than nodes, every one a query
    assert obj["queries"] >= obj["statements"] and obj["statements"] < obj["nodes_evaluated"]
    levels = {c: obj["transformation"][c] for c in ADULT_COLUMNS}
    assert _verify_release(out, original, levels, 10, 0.05) == obj["suppressed_rows"] == 1237


# samarati takes ~30 s on Adult; the oracle tests check it against the exhaustive optimum on small data
@pytest.mark.parametrize("search", [pytest.param("samarati", marks=pytest.mark.slow), "incognito"])
def test_other_lattice_searches_release_valid_output(adult, original, tmp_path, search):
    out = str(tmp_path / f"{search}.parquet")
    report = sqlanon.anonymize(input=adult["csv"], delimiter=";", qi=adult["qi"], k=100, max_suppression=0.0, metric="precision", search=search, output=out)
    levels = {c: report.transformation[c] for c in ADULT_COLUMNS}
    _verify_release(out, original, levels, 100, 0.0)
    if search == "incognito":  # incognito finds every satisfying node, so it is optimal too
        assert report.metric.value == pytest.approx(0.7222, abs=5e-5)
    else:  # samarati: minimal height among satisfying nodes; optimal's node has height 15
        assert sum(levels.values()) <= 15


def test_policy_file_and_flags_win(adult, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "input: {}\ndelimiter: ';'\nk: 2\nmax_suppression: 0.0\nmetric: precision\nqi:\n".format(adult["csv"])
        + "".join(f"  {c}: {adult['qi'][c]}\n" for c in ADULT_COLUMNS)
    )
    result = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--policy", str(policy), "--k", "100", "--json", "-q"])
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout)
    assert obj["k"] == 100 and obj["metric"]["value"] == pytest.approx(0.7222, abs=5e-5)


@pytest.mark.slow  # ~6 s
def test_equal_closeness_optimum_in_no_more_nodes_than_arx(adult):
    """Issue 26's t-closeness case: 8 QIs, salary-class sensitive, equal-distance 0.2-closeness,
    k=5, 5 %, precision. The optimum is the one an evaluation of all 6,480 nodes gives (run once
    by hand: [0, 4, 0, 2, 3, 0, 1, 2], 0.5773241164); the search must find it evaluating no more
    nodes than ARX's Flash (1,929, bench/results/arx_node_counts.json); the node count does not
    depend on the machine."""
    qi = {c: adult["qi"][c] for c in ADULT_COLUMNS[:-1]}
    report = sqlanon.anonymize(input=adult["csv"], delimiter=";", qi=qi, k=5, max_suppression=0.05, metric="precision", search="optimal",
                               sensitive_column="salary-class", t=0.2, t_distance="equal")
    assert [report.transformation[c] for c in ADULT_COLUMNS[:-1]] == [0, 4, 0, 2, 3, 0, 1, 2]
    assert report.metric.value == pytest.approx(0.577324116437902, rel=1e-12)
    assert report.nodes_evaluated <= 1929
