"""JSON Schemas of the policy file and of the --json report: the checked-in copies are the generated
ones, the example policy and real reports validate, and bad policies do not."""

import json
import os
import paths

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.config.schema import policy_schema, report_schema

ROOT = str(paths.ROOT)
SCHEMAS = os.path.join(ROOT, "schemas")
runner = CliRunner()
REGENERATE = "regenerate: sqlanon schema {0} --output schemas/{0}.schema.json"


def load(name):
    with open(os.path.join(SCHEMAS, f"{name}.schema.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.parametrize("name,make", [("policy", policy_schema), ("report", report_schema)])
def test_checked_in_schema_is_the_generated_one(name, make):
    assert load(name) == make(), REGENERATE.format(name)
    jsonschema.Draft202012Validator.check_schema(load(name))


@pytest.mark.parametrize("name", ["policy", "report"])
def test_schema_command_prints_it(name, tmp_path):
    result = runner.invoke(sqlanon.cli.app.app, ["schema", name])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == load(name)
    out = tmp_path / "s.json"
    assert runner.invoke(sqlanon.cli.app.app, ["schema", name, "--output", str(out)]).exit_code == 0
    assert json.loads(out.read_text()) == load(name)


def test_schema_command_refuses_an_unknown_name():
    result = runner.invoke(sqlanon.cli.app.app, ["schema", "polcy"])
    assert result.exit_code == 2 and "unknown schema 'polcy'" in result.stderr


def policy_validator():
    return jsonschema.Draft202012Validator(load("policy"))


def test_example_policy_validates():
    with open(os.path.join(ROOT, "examples", "adult", "policy.yaml"), encoding="utf-8") as fh:
        policy_validator().validate(yaml.safe_load(fh))


@pytest.mark.parametrize("policy", [
    {"input": "a.csv", "qi": {"age": "bands:5,10"}, "k": 5, "search": "genetic", "search_options": {"iterations": 10, "seed": 0, "numeric": ["age"]}},
    {"input": "a.csv", "qi": {"age": {"hierarchy": "age.csv"}}, "privacy": {"k": 3, "l": 2}, "sensitive_column": "d"},
    {"input": "a.csv", "qi": ["age=bands:5"], "k": 2, "weights": {"age": 2}, "min_level": "age=1", "search_options": {"batch": 4}},
    {"input": "a.csv", "qi": {"zip": "mask"}, "k": 2, "search": "top-down", "search_options": {"y": ["d"], "privacy": "xy-linkability"}},
    {"source": {"input": "a.csv"}, "qi": {"zip": "mask"}, "privacy": {"k": 2, "max_suppression": 0.1}, "strategy": {"search": "genetic", "search_options": {"iterations": 5}}, "release": {"output": "o.parquet"}},
])
def test_good_policies_validate(policy):
    policy_validator().validate(policy)


@pytest.mark.parametrize("policy,where", [
    ({"input": "a.csv", "qi": {"age": "x.csv"}, "k": 5, "kk": 3}, "kk"),
    ({"input": "a.csv", "k": "five"}, "five"),
    ({"input": "a.csv", "k": 0}, "0"),
    ({"input": "a.csv", "search": "genetic", "search_options": {"iteratons": 5}}, "iteratons"),
    ({"input": "a.csv", "search_options": {"iterations": 5}}, "iterations"),  # optimal is the default search
    ({"input": "a.csv", "search": "samarati", "search_options": {"batch": 2}}, "batch"),
    ({"input": "a.csv", "metric": "precison"}, "precison"),
    ({"input": "a.csv", "qi": {"age": {"hierarchy": "a.csv", "levels": 3}}}, "levels"),
    ({"source": {"input": "a.csv", "kk": 1}}, "kk"),
    ({"strategy": {"search": "genetic", "search_options": {"iteratons": 5}}}, "iteratons"),
])
def test_bad_policies_do_not_validate(policy, where):
    errors = list(policy_validator().iter_errors(policy))
    assert errors and where in " ".join(str(e.message) + str(list(e.path)) for e in errors)


def test_policy_schema_knows_every_policy_key():
    from sqlanon.config.policy import SECTIONS, Policy

    assert {*Policy.keys(), *SECTIONS} <= set(load("policy")["properties"])


def test_real_reports_validate(tmp_path):
    data = tmp_path / "p.csv"
    data.write_text("zip,age,d\n" + "".join(f"1234{i % 5},{20 + i % 30},{'xyz'[i % 3]}\n" for i in range(50)))
    validator = jsonschema.Draft202012Validator(load("report"))
    for extra in ([], ["--search", "genetic", "--metric", "lm", "--iterations", "20", "--population", "6", "--seed", "1"], ["--search", "bottom-up"]):
        result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--input", str(data), "--qi", "zip=mask", "--qi", "age=bands:10,20", "--k", "3",
                                                "--output", str(tmp_path / f"o{len(extra)}.parquet"), "--json", "--quiet", *extra])
        assert result.exit_code == 0, result.output
        report = json.loads(result.stdout)
        validator.validate(report)
    bad = dict(report, rows="fifty")
    assert list(validator.iter_errors(bad))
    del bad["transformation"]
    assert any("transformation" in e.message for e in validator.iter_errors(bad))
