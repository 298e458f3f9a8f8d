"""Every search on every engine (tests/engines/engine_suite.py): DuckDB's results. Each test runs
the same options on DuckDB and on the engine under test over the shared 400-row table and compares
the plan, the search's own figures and the released multiset (re-checked by tests/checker.py).
These were Spark's only (tests/test_spark_searches.py); PostgreSQL ran its own copies on another
table (tests/engines/test_postgres.py keeps those)."""

from __future__ import annotations

from collections import Counter

import pytest

import sqlanon
from checker import check_k, check_l_diversity
from engine_suite import COLUMNS, QI, on_engines, released


def same_release(duck_out, engine_out):
    a, b = released(duck_out), released(engine_out)
    assert Counter(tuple(r[c] for c in COLUMNS) for r in a) == Counter(tuple(r[c] for c in COLUMNS) for r in b)
    return b


def both(engine, tmp_path, **opts):
    """The run on DuckDB (reading the reference copy) and on the engine; their releases' paths."""
    duck_out, engine_out = str(tmp_path / "duck.parquet"), engine.output(tmp_path)
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=duck_out, **engine.reference("population"), **opts)
    other = sqlanon.anonymize(keep_others=True, keep_columns=["id"], output=engine_out, **engine.source("population"), **opts)
    return duck, other, duck_out, engine_out


#: the lattice searches' cases on ``people`` (PostgreSQL's); Spark's own case is the last, the
#: others (30-60 s each there) in its slow run only
LATTICE_CONFIGS = [
    dict(k=5),
    dict(k=10, max_suppression=0.05, metric="lm"),
    dict(k=4, metric="entropy"),
    dict(k=3, l=2, sensitive_column="disease", search="samarati"),
    dict(k=3, l=1.5, l_diversity="entropy", sensitive_column="disease", max_suppression=0.02),
    dict(k=3, t=0.4, sensitive_column="disease", search="incognito"),
    dict(k=5, metric="discernibility", max_suppression=0.03),
    dict(k=5, metric="cm", class_column="buys"),
    dict(k=5, max_suppression=0.02, metric="lm"),
]


def _lattice_params():
    return [pytest.param(p.values[0], config, marks=p.marks, id=p.values[0] + "-" + "-".join(f"{k}={v}" for k, v in config.items()))
            for i, config in enumerate(LATTICE_CONFIGS) for p in on_engines(slow=() if i == len(LATTICE_CONFIGS) - 1 else ("spark",))]


@pytest.mark.parametrize("engine,config", _lattice_params(), indirect=["engine"])
def test_lattice_search_same_plan_and_release_as_duckdb(engine, tmp_path, config):
    """The same lattice search on DuckDB and on the engine: same node, metric value, suppression,
    classes and released rows; the engine's release passes the independent k (and l) re-check."""
    duck_out, engine_out = str(tmp_path / "duck.parquet"), engine.output(tmp_path)
    duck = sqlanon.anonymize(keep_others=True, keep_columns=["id"], **engine.reference("people"), qi=QI, output=duck_out, **config)
    other = sqlanon.anonymize(keep_others=True, keep_columns=["id"], **engine.source("people"), qi=QI, output=engine_out, **config)
    assert other.transformation == duck.transformation
    assert other.metric.value == pytest.approx(duck.metric.value, rel=1e-9, abs=1e-12)
    assert other.suppressed_rows == duck.suppressed_rows
    assert other.privacy.classes == duck.privacy.classes
    rows = same_release(duck_out, engine_out)
    assert check_k(rows, ["zip", "age"], config["k"], config.get("max_suppression", 0.0))["ok"]
    if config.get("l") and config.get("l_diversity") != "entropy":
        assert check_l_diversity(rows, ["zip", "age"], "disease", config["l"])


# Spark: ~100 s (120 statements, 0.4-0.6 s each on a loaded 2-core machine): in its slow run only
@pytest.mark.parametrize("engine", on_engines(slow=("spark",)), indirect=True)
def test_bottom_up_same_as_duckdb(engine, tmp_path):
    duck, other, duck_out, engine_out = both(engine, tmp_path, qi={**QI, "disease": "flat"}, k=6, search="bottom-up", class_column="buys")
    assert other.transformation == duck.transformation and other.extra["steps"] == duck.extra["steps"]
    assert other.suppressed_rows == duck.suppressed_rows
    assert check_k(same_release(duck_out, engine_out), ["zip", "age", "disease"], 6, 1.0)["ok"]


@pytest.mark.parametrize("engine", on_engines(), indirect=True)
def test_top_down_same_as_duckdb(engine, tmp_path):
    duck, other, duck_out, engine_out = both(engine, tmp_path, qi={**QI, "disease": "flat"}, k=8, search="top-down", class_column="buys",
                                             search_options={"x": ["zip", "age", "disease"], "y": ["id"]})
    assert other.transformation == duck.transformation
    assert other.suppressed_rows == duck.suppressed_rows
    assert check_k(same_release(duck_out, engine_out), ["zip", "age", "disease"], 8, 1.0)["ok"]


@pytest.mark.parametrize("engine", on_engines(), indirect=True)
def test_seeded_genetic_same_as_duckdb(engine, tmp_path):
    """Through the public API only (the GA's SQL path may change): with a seed, every fitness is
    the same on both engines, so the whole run is (cut, LM, suppressed rows, evaluations)."""
    duck, other, duck_out, engine_out = both(engine, tmp_path, qi={"zip": "mask", "age": "numeric", "disease": "flat"}, k=5, search="genetic", metric="lm",
                                             class_column="buys", search_options={"iterations": 12, "population": 8, "seed": 4, "numeric": ["age"]})
    for key in ("transformation", "suppressed_rows", "evaluations"):
        assert other.to_dict()[key] == duck.to_dict()[key], key
    assert other.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
    assert check_k(same_release(duck_out, engine_out), ["zip", "age", "disease"], 5, 1.0)["ok"]


# the genetic case: ~35 s on Spark, in its slow run only
@pytest.mark.parametrize("engine,search", [pytest.param(p.values[0], search, marks=[*p.marks], id=f"{p.values[0]}-{search}")
                                           for search in ("genetic", "optimal") for p in on_engines(slow=("spark",) if search == "genetic" else ())],
                         indirect=["engine"])
def test_weights_and_level_bounds_same_as_duckdb(engine, tmp_path, search):
    """Attribute weights and per-QI level bounds: the same (seeded) run as on DuckDB, and every
    released value between its QI's bounds (zip masked 1-3 digits, age at most 10-year bands)."""
    opts = dict(qi={**QI, "disease": "flat"}, k=5, metric="lm", max_suppression=0.05,
                weights={"zip": 3.0, "age": 1.0, "disease": 0.5}, min_level={"zip": 1}, max_level={"zip": 3, "age": 2})
    if search == "genetic":
        opts.update(search="genetic", class_column="buys", search_options={"iterations": 12, "population": 8, "seed": 4})
    duck, other, duck_out, engine_out = both(engine, tmp_path, **opts)
    for key in ("transformation", "suppressed_rows"):
        assert other.to_dict()[key] == duck.to_dict()[key], key
    assert other.metric.value == pytest.approx(duck.metric.value, rel=1e-9)
    rows = same_release(duck_out, engine_out)
    assert check_k(rows, ["zip", "age", "disease"], 5, 0.05)["ok"]
    for r in rows:
        if r["zip"] == "*" and r["age"] == "*":
            continue  # suppressed
        assert 1 <= r["zip"].count("*") <= 3, r
        if r["age"].startswith("["):  # a band "[lo, hi[": at most 10 years wide (level <= 2)
            lo, hi = (int(x) for x in r["age"].strip("[").split(","))
            assert 0 < hi - lo <= 10, r
        else:
            assert r["age"].isdigit(), r
