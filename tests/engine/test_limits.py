"""Limits users give (issue 24): threads and memory refused when they would harm the machine or be
misread, for the CLI flag, the policy key and the Python API alike."""

import os

import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.errors import ConfigError
from sqlanon.engine.resources import THREADS_PER_CORE, memory_bytes

runner = CliRunner()


@pytest.fixture
def small(tmp_path):
    data = tmp_path / "people.csv"
    data.write_text("zip,age,disease\n12345,31,flu\n12346,32,flu\n12355,41,cold\n12356,45,flu\n12345,33,cold\n12346,36,cold\n")
    return {"dir": tmp_path, "data": str(data), "out": str(tmp_path / "out.parquet")}


def _cli_error(args: list[str]) -> str:
    result = runner.invoke(sqlanon.cli.app.app, args)
    assert result.exit_code == 2, result.output
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_threads_above_the_cap_are_refused_everywhere(small, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    too_many = 3 * THREADS_PER_CORE + 1
    base = ["anonymize", "--input", small["data"], "--qi", "zip=mask", "--k", "2", "--output", small["out"], "-q"]
    line = _cli_error([*base, "--threads", str(too_many)])
    assert f"threads {too_many} is above the cap of 12" in line and "3 cores" in line
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {small['data']}\nqi: {{zip: mask}}\nk: 2\nthreads: 100000\n")
    assert "threads 100000 is above the cap of 12" in _cli_error(["anonymize", "--policy", str(policy), "--output", small["out"], "-q"])
    with pytest.raises(ConfigError, match="threads 100000 is above the cap"):
        sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, threads=100000)
    with pytest.raises(ConfigError, match="above the cap"):
        sqlanon.engine.connect(threads=10**5)
    assert not os.path.exists(small["out"])
    report = sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, threads=12)  # the cap itself runs
    assert report.k == 2


@pytest.mark.parametrize("value", ["-1GB", "0GB", "0", "lots", "1", "", "-5%", "0%", "150%", "1XB"])
def test_bad_memory_limits_are_refused_naming_the_value(small, tmp_path, value):
    base = ["anonymize", "--input", small["data"], "--qi", "zip=mask", "--k", "2", "--output", small["out"], "-q"]
    line = _cli_error([*base, "--memory-limit", value])
    assert (f"memory_limit {value!r} is not a positive size" in line) if value else ("--memory-limit is empty" in line)
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {small['data']}\nqi: {{zip: mask}}\nk: 2\nmemory_limit: '{value}'\n")
    line = _cli_error(["anonymize", "--policy", str(policy), "--output", small["out"], "-q"])
    assert f"memory_limit {value!r}" in line if value else "memory_limit in policy" in line and "is empty" in line
    with pytest.raises(ConfigError, match="is not a positive size" if value else "memory_limit in arguments is empty"):
        sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, memory_limit=value)
    with pytest.raises(ConfigError, match="is not a positive size"):
        sqlanon.check(small["data"], ["zip"], k=2, memory_limit=value)
    assert not os.path.exists(small["out"])


def test_good_memory_limits_parse():
    assert memory_bytes("2GB") == 2 * 10**9
    assert memory_bytes("1.5GiB") == 3 * 2**29
    assert memory_bytes("300 mb") == 300 * 10**6
    assert 0 < memory_bytes("50%")


# -- a metric a search cannot optimize is refused before any scan ---------------------------------

SEARCH_NAMES = ["optimal", "samarati", "incognito", "lightning", "auto", "bottom-up", "top-down", "genetic"]


def _no_scan(monkeypatch):
    from sqlanon.stats import Statistics

    def scan(self):
        raise AssertionError("the source was scanned before the refusal")

    monkeypatch.setattr(Statistics, "prepare", scan)


@pytest.mark.parametrize("search", SEARCH_NAMES)
def test_every_search_metric_pair_is_optimized_or_refused_before_the_scan(small, monkeypatch, search):
    from sqlanon.metrics import METRICS
    from sqlanon.search.registry import SEARCHES

    _no_scan(monkeypatch)
    for metric in METRICS:
        own = SEARCHES[search].metrics  # None: the lattice family optimizes any metric
        lattice = own is None
        for class_column in ([("disease" if metric == "cm" else None)] if lattice else [None, "disease"]):
            allowed = tuple(METRICS) if own is None else own
            if search == "bottom-up" and class_column:
                allowed = ()
            kw = dict(input=small["data"], qi={"zip": "mask"}, k=2, search=search, metric=metric, class_column=class_column, dry_run=True)
            if search == "top-down":
                kw["search_options"] = {"y": ["age"]}
            if metric in allowed and search == "genetic" and metric == "cm" and not class_column:
                with pytest.raises(ConfigError, match="needs --class-column"):  # accepted metric, missing input
                    sqlanon.anonymize(**kw)
            elif metric in allowed:
                with pytest.raises(AssertionError, match="scanned"):  # accepted: it got as far as the scan
                    sqlanon.anonymize(**kw)
            else:
                with pytest.raises(ConfigError, match=f"search {search}.* cannot optimize metric '{metric}'"):
                    sqlanon.anonymize(**kw)


def test_a_validated_policy_validates_again(small):
    from sqlanon.config.policy import Policy

    policy = Policy(input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", search_options={"objective": "regression", "regression_target": "age"})
    policy.validate()
    policy.validate()  # the default metric it filled in is not taken for a --metric given against the objective
    with pytest.raises(ConfigError, match="--metric cm and --option objective=regression"):
        Policy(input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", metric="cm", search_options={"objective": "regression"}).validate()


def test_bottom_up_reports_the_metric_it_optimized(small):
    line = _cli_error(["anonymize", "--input", small["data"], "--qi", "zip=mask", "--k", "2", "--search", "bottom-up", "--metric", "loss", "--dry-run", "-q"])
    assert "search bottom-up cannot optimize metric 'loss'; it optimizes lm" in line
    report = sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, search="bottom-up", metric="lm", dry_run=True)
    assert report.metric.name == "lm"
    report = sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", dry_run=True,
                               search_options={"iterations": 4, "population": 4, "seed": 0})
    assert report.metric.name == "lm"  # its default (it refused the lattice's default, precision, after the scan)


# -- shape-only refusals come before the data is read --------------------------------------------


def test_an_oversized_lattice_is_refused_before_the_scan(tmp_path, monkeypatch):
    cols = [f"c{i}" for i in range(10)]
    data = tmp_path / "wide.csv"
    data.write_text(",".join(cols) + "\n" + "".join(",".join(str((r * (i + 3)) % 16) for i in range(10)) + "\n" for r in range(40)))
    qi = {c: "bands:2,4,8,16" for c in cols}  # 6 levels each (leaf, 4 bands, *): 6^10 nodes
    _no_scan(monkeypatch)
    for search in ("samarati", "incognito"):
        with pytest.raises(ConfigError, match="the lattice has 60,466,176 nodes, more than 2,000,000"):
            sqlanon.anonymize(input=str(data), qi=qi, k=2, search=search, dry_run=True)
    with pytest.raises(ConfigError, match="the lattice has"):
        sqlanon.run.api.plan_sql(input=str(data), qi=qi, k=2, search="samarati")
    for search in ("lightning", "optimal"):  # lightning and bounded optimal walk it: they get to the scan
        with pytest.raises(AssertionError, match="scanned"):
            sqlanon.anonymize(input=str(data), qi=qi, k=2, search=search, dry_run=True)


def test_planner_refusals_that_need_no_data_come_before_the_scan(small, monkeypatch):
    _no_scan(monkeypatch)
    with pytest.raises(ConfigError, match="--y is required for --search top-down"):
        sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, search="top-down", dry_run=True)
    with pytest.raises(ConfigError, match="regression metric needs --option regression_target"):
        sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", search_options={"objective": "regression"}, dry_run=True)
    with pytest.raises(ConfigError, match="CM metric needs --class-column"):
        sqlanon.anonymize(input=small["data"], qi={"zip": "mask"}, k=2, search="genetic", metric="cm", dry_run=True)
