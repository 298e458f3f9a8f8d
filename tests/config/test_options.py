"""Typed search options (sqlanon.config.search_options): an option is read by its search or refused, naming it.

Each of these failed on the main of issue 10: ``--option iteratons=5`` ran 2000 iterations, and
genetic options given to a lattice search were silently ignored."""

import doctest
import os

import pytest
import yaml
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
import sqlanon.config.search_options
from sqlanon.errors import ConfigError
from sqlanon.config.search_options import SEARCH_OPTIONS, cli_search_options, parse_search_options

runner = CliRunner()


@pytest.fixture
def small(tmp_path):
    data = tmp_path / "people.csv"
    rows = ["zip,age,sex,disease"]
    for i in range(60):
        rows.append(f"1234{i % 6},{20 + i % 40},{'MF'[i % 2]},{['flu', 'cold', 'cancer'][i % 3]}")
    data.write_text("\n".join(rows) + "\n")
    return {"dir": tmp_path, "data": str(data), "out": str(tmp_path / "out.parquet")}


def run_cli(small, *extra):
    args = ["anonymize", "--keep-others", "--input", small["data"], "--qi", "zip=mask", "--qi", "age=bands:10,20", "--k", "3", "--output", small["out"], "--quiet", *extra]
    return runner.invoke(sqlanon.cli.app.app, args)


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_doctests():
    assert doctest.testmod(sqlanon.config.search_options).failed == 0


def test_misspelled_option_is_refused_with_a_suggestion(small):
    result = run_cli(small, "--search", "genetic", "--metric", "lm", "--option", "iteratons=5")
    assert result.exit_code == 2
    line = error_line(result)
    assert "'iteratons'" in line and "did you mean 'iterations'" in line and "genetic" in line
    assert not os.path.exists(small["out"])


@pytest.mark.parametrize("search,extra", [
    ("optimal", ["--iterations", "5"]),
    ("samarati", ["--seed", "0"]),
    ("incognito", ["--option", "population=10"]),
    ("optimal", ["--trace"]),
    ("bottom-up", ["--iterations", "5"]),
    ("genetic", ["--option", "pruning=false"]),
    ("top-down", ["--option", "numeric_fanout=3"]),
])
def test_option_of_another_search_is_refused(small, search, extra):
    result = run_cli(small, "--search", search, *extra)
    assert result.exit_code == 2, result.output
    line = error_line(result)
    assert f"not by {search}" in line
    assert not os.path.exists(small["out"])


def test_unknown_option_for_a_lattice_search(small):
    result = run_cli(small, "--option", "bacth=4")
    assert result.exit_code == 2
    assert "unknown search option 'bacth'" in error_line(result) and "'batch'" in error_line(result)


@pytest.mark.parametrize("pair,fragment", [
    ("iterations=many", "'iterations'"),
    ("population=1", "'population'"),
    ("mutation_rate=2", "'mutation_rate'"),
    ("crossover=three-point", "'crossover'"),
    ("prune_unused=maybe", "'prune_unused'"),
])
def test_bad_option_values_name_the_option(small, pair, fragment):
    result = run_cli(small, "--search", "genetic", "--metric", "lm", "--option", pair)
    assert result.exit_code == 2
    line = error_line(result)
    assert fragment in line and "search genetic" in line


def test_option_given_twice_is_refused(small):
    result = run_cli(small, "--search", "genetic", "--metric", "lm", "--iterations", "5", "--option", "iterations=6")
    assert result.exit_code == 2
    assert "given twice" in error_line(result)


def test_policy_search_options_are_checked(small):
    policy = small["dir"] / "policy.yaml"
    policy.write_text(yaml.safe_dump({"input": small["data"], "qi": {"zip": "mask"}, "k": 2, "search": "genetic", "metric": "lm",
                                      "search_options": {"iterations": 5, "populaton": 10}}))
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--policy", str(policy), "--dry-run", "--quiet"])
    assert result.exit_code == 2
    assert "'populaton'" in error_line(result) and "did you mean 'population'" in error_line(result)


def test_api_search_options_are_checked(small):
    with pytest.raises(ConfigError, match="'seed'.*search genetic"):
        sqlanon.anonymize(keep_others=True, input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", metric="lm", search_options={"seed": "abc"}, dry_run=True)
    with pytest.raises(ConfigError, match="read by search genetic, lattice-genetic, not by optimal"):
        sqlanon.anonymize(keep_others=True, input=small["data"], qi={"zip": "mask"}, k=2, search_options={"iterations": 3}, dry_run=True)


def test_options_are_typed_and_zero_is_a_value():
    assert cli_search_options(None, seed=0, trace=False, x=[], iterations=None) == {"seed": 0}
    assert cli_search_options(["seed=0", "mutation-rate=0"]) == {"seed": "0", "mutation_rate": "0"}
    assert parse_search_options("genetic", {"seed": "0", "mutation_rate": "0", "prune_unused": "false", "numeric": "age, zip"}) == {
        "seed": 0, "mutation_rate": 0.0, "prune_unused": False, "numeric": ["age", "zip"]}
    assert parse_search_options("top-down", {"y": "disease", "previous": ["a.csv", "b.csv"], "inconsistent": "sex=Male|pregnant=Yes"}) == {
        "y": ["disease"], "previous": ["a.csv", "b.csv"], "inconsistent": ["sex=Male|pregnant=Yes"]}
    with pytest.raises(ConfigError, match="--option wants KEY=VALUE"):
        cli_search_options(["iterations"])


def test_seed_zero_reaches_the_genetic_search(small):
    """--seed 0 used to be dropped as 'no seed' (0 == False): two runs with it are identical."""
    import json

    outs = []
    for _ in range(2):
        result = run_cli(small, "--search", "genetic", "--metric", "lm", "--seed", "0", "--iterations", "30", "--population", "8", "--dry-run", "--json")
        assert result.exit_code == 0, result.output
        outs.append(json.loads(result.stdout)["transformation"])
    assert outs[0] == outs[1]


def test_declared_defaults_are_the_searches_defaults():
    from sqlanon.search.lattice import optimal
    from sqlanon.search.genetic import planner as genetic

    g = SEARCH_OPTIONS["genetic"].model_fields
    for key, value in genetic.DEFAULTS.items():
        assert g[key].default == value, key
    assert SEARCH_OPTIONS["optimal"].model_fields["batch"].default == optimal.BATCH
    assert SEARCH_OPTIONS["incognito"].model_fields["batch"].default == optimal.BATCH
    assert SEARCH_OPTIONS["optimal"].model_fields["probes"].default == optimal.PROBES
    from sqlanon.stats import local

    for name in ("optimal", "samarati", "incognito", "lightning", "auto"):
        assert SEARCH_OPTIONS[name].model_fields["local_rows"].default == local.LOCAL_ROWS, name


def test_every_search_has_an_options_model():
    from sqlanon.search.registry import SEARCHES

    assert sorted(SEARCH_OPTIONS) == sorted(SEARCHES)
