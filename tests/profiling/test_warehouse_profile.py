"""The policy the profile writes for a warehouse table (bench/warehouse_table.py: a date of birth,
a zip with its city and state, gender, ethnicity, an admission time over six years), run
unedited: no QI ends at ``*``, and the release is k-anonymous over every QI and every linked column
(checked here by plain SQL). What does it: ``metric: loss`` in the written policy (precision sent
zip to ``*``) and a span of years between the admission's year and ``*`` (docs/profile.md)."""

import json
import sys
import paths

import duckdb
import pytest
from typer.testing import CliRunner

from sqlanon.cli.app import app
from sqlanon.profiling.proposals import year_spans

sys.path.insert(0, str(paths.BENCH))
import warehouse_table  # noqa: E402

runner = CliRunner()


def test_year_spans_keep_two_values_and_nest():
    assert year_spans(2020, 2025) == ["5y"]
    assert year_spans(2020, 2024) == []  # one 5-year span: nothing between the year and *
    assert year_spans(1930, 2015) == ["5y", "decade", "20y"]
    assert year_spans(2019, 2021) == ["5y"]  # 2015-2019 | 2020-2024; the decades keep no fewer values
    assert year_spans(None, None) == []


def profiled(tmp_path, rows, k):
    db = str(tmp_path / "w.duckdb")
    with duckdb.connect(db) as con:
        warehouse_table.build(con, rows)
    policy = str(tmp_path / "policy.yaml")
    out = runner.invoke(app, ["profile", "--input", db, "--table", warehouse_table.TABLE, "--write-policy", policy, "--k", str(k), "-q"])
    assert out.exit_code == 0, out.output
    return db, policy


def anonymized(policy, *extra):
    out = runner.invoke(app, ["anonymize", "--policy", policy, "--json", "-q", "--overwrite", *extra])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def at_root(report) -> list[str]:
    tops = {h["attribute"]: len(h["distinct_per_level"]) - 1 for h in report["hierarchies"]}
    return [qi for qi, level in report["transformation"].items() if level == tops[qi]]


def classes_under_k(db, table, columns, k) -> int:
    """Classes of fewer than k rows over ``columns`` of the release, suppressed rows (every QI
    ``*``) apart: plain SQL, none of sqlanon's."""
    cols = ", ".join(f'"{c}"' for c in columns)
    masked = " AND ".join(f"coalesce(CAST(\"{c}\" AS VARCHAR), '') = '*'" for c in columns if c not in warehouse_table.LINKED)
    with duckdb.connect(db, read_only=True) as con:
        return con.execute(f'SELECT count(*) FROM (SELECT count(*) AS n FROM "{table}" WHERE NOT ({masked}) GROUP BY {cols}) c WHERE n < ?', [k]).fetchone()[0]


def test_profiled_policy_keeps_every_qi_above_the_root(tmp_path):
    db, policy = profiled(tmp_path, 50_000, 5)
    text = open(policy, encoding="utf-8").read()
    assert "\nmetric: loss" in text and '"dates:month,quarter,year,5y"' in text
    report = anonymized(policy)
    assert "loss" in json.dumps(report["metric"])
    assert at_root(report) == [], report["transformation"]
    table = f"{warehouse_table.TABLE}_k5"
    qis = list(report["transformation"])
    with duckdb.connect(db, read_only=True) as con:
        released = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()}
    linked = [c for c, of in warehouse_table.LINKED.items() if c in released and of in qis]
    assert linked == ["city", "state"]
    assert classes_under_k(db, table, qis + linked, 5) == 0
    # the same policy under anonymize's default metric gives zip up
    precision = anonymized(policy, "--metric", "precision", "--output-table", "by_precision")
    assert "zip" in at_root(precision), precision["transformation"]


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 10])
def test_warehouse_goal_at_200k_rows(tmp_path, k):
    """Issue 41's goal: 200,000 rows, the profiled policy unedited: no QI at ``*``, the birth date in
    bands of 10 years or finer, k-anonymous over the QIs and the linked columns."""
    db, policy = profiled(tmp_path, 200_000, k)
    report = anonymized(policy)
    assert at_root(report) == [], report["transformation"]
    assert report["transformation"]["dob"] <= 3  # age:DAY,5,10,20: level 3 is the 10-year bands
    assert classes_under_k(db, f"{warehouse_table.TABLE}_k{k}", [*report["transformation"], "city", "state"], k) == 0


def test_city_names_in_two_states_keep_the_state_level(tmp_path):
    """One zip whose state breaks the zip-prefix blocks (00501 in NY, amid the AL zips) and city names
    found in two states: neither city nor state nor any prefix follows the other all the way, so the
    profile's chain goes through the pair ``city, state``, which ``state`` follows; before, it was
    ``zip -> city -> *`` and the state was lost with the city. The release stays k-anonymous over the
    QIs and both linked columns."""
    db = str(tmp_path / "w.duckdb")
    with duckdb.connect(db) as con:
        warehouse_table.build(con, 20_000)
        con.execute(f"INSERT INTO {warehouse_table.TABLE} SELECT * REPLACE ('00501' AS zip, 'Holtsville' AS city, 'NY' AS state) "
                    f"FROM {warehouse_table.TABLE} WHERE zip IS NOT NULL LIMIT 30")
        repeated = con.execute(f"SELECT count(*) FROM (SELECT city FROM {warehouse_table.TABLE} GROUP BY city HAVING count(DISTINCT state) > 1)").fetchone()[0]
    assert repeated > 0  # the premise: some city names repeat across states
    policy = str(tmp_path / "policy.yaml")
    out = runner.invoke(app, ["profile", "--input", db, "--table", warehouse_table.TABLE, "--write-policy", policy, "-q"])
    assert out.exit_code == 0, out.output
    zip_line = next(line for line in open(policy, encoding="utf-8") if line.startswith("  zip:"))
    assert "zip -> city, state (" in zip_line and ") -> state (" in zip_line, zip_line
    rows = {line.split(";")[0]: line.rstrip("\n").split(";") for line in open(tmp_path / "policy.zip.csv", encoding="utf-8")}
    assert rows["00501"] == ["00501", "Holtsville, NY", "NY", "*"]
    report = anonymized(policy)
    assert classes_under_k(db, f"{warehouse_table.TABLE}_k5", [*report["transformation"], "city", "state"], 5) == 0
