"""Dates, times and ages as quasi-identifiers, and exact band edges: the spec syntax (and its
refusals, one line naming the column), the builders against slow pure-Python oracles on random
values, the reference date of an age recorded so a release can be made again, and the profile's
proposals for a hospital-like table (birth dates as age bands, admissions as month/quarter/year,
never an identifier for a timestamp with repeats)."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import sqlanon
from sqlanon.cli.app import app
from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy import dates, load_hierarchy
from sqlanon.hierarchy.builders import numeric_bands

runner = CliRunner()


def _con_table(sql: str):
    """An engine and source over a one-table DuckDB database built by ``sql``."""
    from sqlanon.engine import connect
    from sqlanon.engine.source import Source

    engine = connect()
    engine.execute(sql)
    return engine, Source(kind="table", table="t")


# -- exact bands -------------------------------------------------------------------------------


@pytest.mark.parametrize("sql_type", ["DECIMAL(4,1)", "DOUBLE", "REAL"])
def test_ten_values_make_ten_bands_of_one(sql_type):
    """``bands:0.1,0.2`` on 0.0 .. 0.9: ten bands of one value, then five of two (floats made 8
    bands, ``0.6`` under ``[0.5, 0.6[``)."""
    engine, source = _con_table(f"CREATE TABLE t AS SELECT CAST(i / 10 AS {sql_type}) AS x FROM range(10) r(i)")
    h = load_hierarchy("bands:0.1,0.2", "x", engine, source)
    pairs = {r[0]: r[1] for r in h.rows}
    assert len(h.labels(1)) == 10 and len(h.labels(2)) == 5, h.rows
    assert pairs["0.6"] == "[0.6, 0.7[" and pairs["0.3"] == "[0.3, 0.4[" and pairs["0.9"] == "[0.9, 1["
    assert {r[2] for r in h.rows} == {"[0, 0.2[", "[0.2, 0.4[", "[0.4, 0.6[", "[0.6, 0.8[", "[0.8, 1["}


def test_bigint_near_its_limits_in_its_own_digits():
    engine, source = _con_table("CREATE TABLE t AS SELECT * FROM (VALUES (9223372036854775807), (9223372036854775800), (-9223372036854775808), (9223372036854775799)) v(x)")
    h = load_hierarchy("bands:10,100", "x", engine, source)
    got = {r[0]: r[1:] for r in h.rows}
    assert got["9223372036854775807"] == ["[9223372036854775800, 9223372036854775810[", "[9223372036854775800, 9223372036854775900[", "*"]
    assert got["9223372036854775799"][0] == "[9223372036854775790, 9223372036854775800["
    assert got["-9223372036854775808"][0] == "[-9223372036854775810, -9223372036854775800["
    assert [r[0] for r in h.rows] == ["-9223372036854775808", "9223372036854775799", "9223372036854775800", "9223372036854775807"]


def test_wide_decimals_stay_exact():
    """DECIMAL(38, 10): 38 digits, more than a default decimal context holds (28)."""
    h = numeric_bands(["1234567890123456789012345678.9012345678", "-0.0000000001"], ["0.0000000002", "0.1"], "x")
    assert h.rows[1] == ["1234567890123456789012345678.9012345678", "[1234567890123456789012345678.9012345678, 1234567890123456789012345678.901234568[", "[1234567890123456789012345678.9, 1234567890123456789012345679[", "*"]
    assert h.rows[0][1:3] == ["[-0.0000000002, 0[", "[-0.1, 0["]


def _oracle_band(value: Decimal, width: Decimal) -> tuple[Decimal, Decimal]:
    """The band by search: the n with n * width <= value < (n + 1) * width, stepped to."""
    n = int(value / width)  # near it (exact decimals: at most one step off)
    while n * width > value:
        n -= 1
    while (n + 1) * width <= value:
        n += 1
    return n * width, (n + 1) * width


def test_bands_against_an_oracle_on_random_decimals_integers_and_doubles():
    rnd = random.Random(5)
    for _ in range(200):
        scale = rnd.choice([0, 1, 2, 3])
        base = rnd.choice(["1", "2", "5", "25"])
        widths = [Decimal(base).scaleb(-scale) * m for m in (1, 2, 4)]
        texts = [str(Decimal(rnd.randint(-10**6, 10**6)).scaleb(-rnd.choice([0, 1, 2, 3, 4]))) for _ in range(12)]
        h = numeric_bands(texts, [str(w) for w in widths], "x")
        for row in h.rows:
            for w, label in zip(widths, row[1:]):
                lo, hi = _oracle_band(Decimal(row[0]), w)
                assert label == f"[{lo.normalize():f}, {hi.normalize():f}[".replace("[-0,", "[0,").replace(" -0[", " 0["), (row[0], w, label)
    doubles = [repr(rnd.uniform(-1e6, 1e6)) for _ in range(300)] + ["0.30000000000000004", "0.6", "-0.0", "1e-05", "1.5E7"]
    h = numeric_bands(doubles, ["0.1", "0.5"], "x", double=True)
    for row in h.rows:
        for label in row[1:-1]:
            lo, hi = (float(x) for x in label[1:-1].split(", "))
            assert lo <= float(row[0]) < hi, (row[0], label)


def test_a_band_width_below_double_precision_is_refused():
    with pytest.raises(ConfigError, match=r"band width 0.1 for 'x' is below the precision of its DOUBLE values"):
        numeric_bands(["1e+20", "3.5"], ["0.1"], "x", double=True)
    assert numeric_bands(["1e+20"], ["0.1"], "x").rows[0][1] == "[" + "1" + "0" * 20 + ", " + "1" + "0" * 20 + ".1["  # exact as a decimal


# -- dates ---------------------------------------------------------------------------------------


def _calendar_oracle(day: dt.date, level: str) -> str:
    if level == "month":
        return day.strftime("%Y-%m")
    if level == "quarter":
        return f"{day.year}-Q{[1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4][day.month - 1]}"
    if level == "year":
        return str(day.year)
    if level == "decade":
        return f"{day.year - day.year % 10}s"
    n = int(level[:-1])
    start = day.year - day.year % n
    return f"[{start}, {start + n}["


def test_date_levels_against_an_oracle():
    rnd = random.Random(9)
    days = sorted({dt.date(1900, 1, 1) + dt.timedelta(days=rnd.randint(0, 60_000)) for _ in range(300)})
    levels = ["month", "quarter", "year", "2y", "4y", "20y", "100y"]
    h = dates.date_levels([d.isoformat() for d in days], levels, "d")
    assert h.origin == "dates:month,quarter,year,2y,4y,20y,100y"
    for row, day in zip(h.rows, days):
        assert row == [day.isoformat(), *(_calendar_oracle(day, lv) for lv in levels), "*"]


def _anniversary_age(born: dt.date, on: dt.date) -> int:
    """Age by counting birthdays (29 February: kept on 1 March in other years)."""
    age, year = 0, born.year + 1
    while True:
        try:
            birthday = born.replace(year=year)
        except ValueError:
            birthday = dt.date(year, 3, 1)
        if birthday > on:
            return age
        age, year = age + 1, year + 1


def test_age_is_exact_against_counting_birthdays():
    rnd = random.Random(3)
    reference = dt.date(2024, 2, 28)
    born = {reference - dt.timedelta(days=rnd.randint(0, 36_000)) for _ in range(500)} | {dt.date(2000, 2, 29), dt.date(2000, 2, 28), dt.date(2000, 3, 1), reference}
    h = dates.age_bands(sorted(d.isoformat() for d in born), reference, [5, 10], "dob")
    for row in h.rows:
        age = _anniversary_age(dt.date.fromisoformat(row[0]), reference)
        assert row[1] == str(age) and row[2] == f"[{age - age % 5}, {age - age % 5 + 5}[" and row[3] == f"[{age - age % 10}, {age - age % 10 + 10}["
    leap = {r[0]: r[1] for r in dates.age_bands(["2000-02-29"], dt.date(2023, 2, 28), [5], "dob").rows}
    assert leap == {"2000-02-29": "22"} and dates.age_bands(["2000-02-29"], dt.date(2023, 3, 1), [5], "dob").rows[0][1] == "23"


def test_birth_year_and_timestamps():
    h = load_hierarchy("birth_year:5,10", "t", *_con_table("CREATE TABLE t AS SELECT * FROM (VALUES (DATE '1984-12-31'), (DATE '1985-01-01'), (NULL)) v(t)"))
    assert h.rows == [["1984-12-31", "1984", "[1980, 1985[", "[1980, 1990[", "*"], ["1985-01-01", "1985", "[1985, 1990[", "[1980, 1990[", "*"]]
    engine, source = _con_table("CREATE TABLE t AS SELECT * FROM (VALUES (TIMESTAMP '2024-03-31 23:59:59.5'), (TIMESTAMP '2024-04-01 00:00:00')) v(t)")
    h = load_hierarchy("dates:hour,day,month,quarter", "t", engine, source)
    assert h.rows == [["2024-03-31 23:59:59.5", "2024-03-31 23:00", "2024-03-31", "2024-03", "2024-Q1", "*"], ["2024-04-01 00:00:00", "2024-04-01 00:00", "2024-04-01", "2024-04", "2024-Q2", "*"]]
    # a TIMESTAMPTZ is read as the engine prints it (the session's time zone); noon UTC is the same day anywhere near
    engine, source = _con_table("SET TimeZone = 'UTC'; CREATE TABLE t AS SELECT * FROM (VALUES (TIMESTAMPTZ '2024-06-30 12:00:00+00')) v(t)")
    assert load_hierarchy("dates:day,month,year", "t", engine, source).rows == [["2024-06-30 12:00:00+00", "2024-06-30", "2024-06", "2024", "*"]]


@pytest.mark.parametrize(("spec", "message"), [
    ("dates:week", "bad dates level 'week' for 'd'"),
    ("dates:year,month", "dates levels for 'd' must go from fine to coarse, each inside the next: 'month' cannot follow 'year'"),
    ("dates:3y,decade", "'decade' cannot follow '3y'"),
    ("dates:month,,year", "empty level in dates spec"),
    ("dates:day,month", "dates level 'day' for 'd' is its values themselves"),
    ("dates:hour,day", "dates level 'hour' for 'd' needs times"),
    ("dates:1y", "bad dates level '1y'"),
    ("age:2026-13-01", "bad reference date '2026-13-01' in age spec for 'd'"),
    ("age:today,5,7", "age widths for 'd' must grow and each divide the next"),
    ("age:today,1,5", "bad age widths '1,5' for 'd'"),
    ("birth_year:x", "bad birth_year widths 'x' for 'd'"),
    ("bands:0.1,0.25", "band widths for 'd' must grow and each divide the next, got 0.1,0.25"),
    ("bands:0,1", "band widths for 'd' must be positive numbers"),
])
def test_bad_specs_are_one_line_naming_the_column(tmp_path, spec, message):
    src = tmp_path / "t.csv"
    src.write_text("id,d\n" + "".join(f"{i},19{50 + i % 40}-0{1 + i % 9}-1{i % 10}\n" for i in range(40)))
    out = runner.invoke(app, ["anonymize", "--keep-others", "--input", str(src), "--qi", f"d={spec}", "--keep-column", "id", "--k", "2", "--output", str(tmp_path / "o.parquet")])
    assert out.exit_code == 2, out.output
    lines = [x for x in out.output.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0], out.output
    assert not (tmp_path / "o.parquet").exists()


def test_birth_after_the_reference_date_is_refused_without_its_value():
    with pytest.raises(HierarchyError) as err:
        dates.age_bands(["1990-01-01", "2031-05-17"], dt.date(2026, 1, 1), [5], "dob")
    assert str(err.value) == "column 'dob' has 1 birth date(s) after the reference date 2026-01-01 of its age hierarchy"


def test_python_api_builders():
    assert sqlanon.dates("month", "quarter", "year", "5y", "decade") == "dates:month,quarter,year,5y,decade"
    assert sqlanon.age(dt.date(2026, 1, 1), 5, 10) == "age:2026-01-01,5,10" and sqlanon.age() == "age:today"
    assert sqlanon.birth_year(5, 10) == "birth_year:5,10"
    with pytest.raises(ConfigError):
        sqlanon.dates("month", decade=True)
    with pytest.raises(ConfigError):
        sqlanon.age("today", 2.5)


# -- the reference date is recorded --------------------------------------------------------------


def test_age_today_is_recorded_as_the_date_it_was(tmp_path):
    rnd = random.Random(1)
    rows = [(i, dt.date(1950, 1, 1) + dt.timedelta(days=rnd.randint(0, 18_000)), rnd.choice(["F", "M"])) for i in range(300)]
    path = str(tmp_path / "p.parquet")
    pq.write_table(pa.table({"id": [r[0] for r in rows], "dob": pa.array([r[1] for r in rows], pa.date32()), "sex": [r[2] for r in rows]}), path)
    out = str(tmp_path / "out.parquet")
    report = sqlanon.anonymize(input=path, qi={"dob": sqlanon.age(), "sex": "flat"}, keep_columns=["id"], k=5, output=out, keep_others=True)
    today = dt.datetime.now(dt.UTC).date()
    origin = next(h["origin"] for h in report.to_dict()["hierarchies"] if h["attribute"] == "dob")
    assert origin in (f"age:{today.isoformat()},5,10,20", f"age:{(today + dt.timedelta(days=1)).isoformat()},5,10,20")
    with duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb")) as con:
        policy, stored = con.execute("SELECT policy, report FROM sqlanon_releases").fetchone()
    assert json.loads(policy)["qi"]["dob"] == origin
    assert origin in [h["origin"] for h in json.loads(stored)["hierarchies"]]
    # the recorded policy makes the same release again
    again = sqlanon.anonymize(input=path, qi={"dob": origin, "sex": "flat"}, keep_columns=["id"], k=5, output=str(tmp_path / "again.parquet"), keep_others=True)
    assert again.to_dict()["transformation"] == report.to_dict()["transformation"]
    assert sorted(pq.read_table(out).to_pylist(), key=lambda r: r["id"]) == sorted(pq.read_table(str(tmp_path / "again.parquet")).to_pylist(), key=lambda r: r["id"])


# -- the profile ---------------------------------------------------------------------------------


@pytest.fixture
def hospital(tmp_path):
    """2,000 admissions: a date of birth, sex, a postal code, the admission TIMESTAMP (nearly
    unique, with repeats) and a diagnosis."""
    rnd = random.Random(4)
    n = 2000
    start = dt.datetime(2025, 1, 1)
    admitted = [start + dt.timedelta(minutes=rnd.randint(0, 60 * 24 * 365)) for _ in range(n - 40)]
    admitted += rnd.sample(admitted, 40)
    table = pa.table({
        "patient_id": list(range(n)),
        "date_of_birth": pa.array([dt.date(1935, 1, 1) + dt.timedelta(days=rnd.randint(0, 32_000)) for _ in range(n)], pa.date32()),
        "sex": [rnd.choice(["F", "M"]) for _ in range(n)],
        "zip": [f"0{rnd.randint(1000, 1099)}" for _ in range(n)],
        "admitted_at": pa.array(admitted, pa.timestamp("us")),
        "diagnosis": [rnd.choice(["flu", "asthma", "fracture", "sepsis"]) for _ in range(n)],
    })
    path = str(tmp_path / "hospital.parquet")
    pq.write_table(table, path)
    return path


def test_profile_proposes_age_bands_and_event_months(hospital, tmp_path):
    result = sqlanon.profile(hospital)
    cols = {c["name"]: c for c in result["columns"]}
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert cols["date_of_birth"]["role"] == "qi" and cols["date_of_birth"]["hierarchy"]["spec"] == f"age:{today},5,10,20"
    assert cols["admitted_at"]["role"] == "qi", cols["admitted_at"]["reason"]
    assert cols["admitted_at"]["hierarchy"]["spec"] == "dates:month,quarter,year"
    assert cols["patient_id"]["role"] == "identifier"


def test_profiled_policy_keeps_ages_at_k5_and_k10(hospital, tmp_path):
    """The policy the profile writes releases ages in bands, not ``*`` (``dates:decade`` went to
    ``*`` at k=5 and k=10 on such a table)."""
    policy = str(tmp_path / "policy.yaml")
    out = runner.invoke(app, ["profile", "--input", hospital, "--write-policy", policy, "--k", "5"])
    assert out.exit_code == 0, out.output
    for k in (5, 10):
        ran = runner.invoke(app, ["anonymize", "--keep-others", "--policy", policy, "--k", str(k), "--output", str(tmp_path / f"out{k}.parquet"), "--overwrite", "--json", "-q"])
        assert ran.exit_code == 0, ran.output
        report = json.loads(ran.output.strip().splitlines()[-1])
        h = next(h for h in report["hierarchies"] if h["attribute"] == "date_of_birth")
        level = report["transformation"]["date_of_birth"]
        assert 0 < level < h["levels"] - 1, (k, report.to_dict()["transformation"])
        released = duckdb.sql(f"SELECT DISTINCT date_of_birth FROM '{tmp_path / f'out{k}.parquet'}'").fetchall()
        assert all(v == "*" or v.startswith("[") or v.isdigit() for (v,) in released)
