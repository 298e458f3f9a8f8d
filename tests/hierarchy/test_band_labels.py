"""Every released band holds the values released under it: an oracle over DECIMAL, DOUBLE,
BIGINT near its limits, DATE and TIMESTAMP (calendar levels, age at a reference date, birth
years), on DuckDB, PostgreSQL (``local_postgres``) and Spark (``spark``).

The table is small and random, each row repeated two to five times (every class of every level
then holds at least two rows, so a release at any level suppresses nothing and every label is
checked). Each run releases every column at one level (``min_level = max_level``) with the row id
kept; the checker reads each label with its own parser (no sqlanon code) and checks it against
the row's source value in the source's own type: exact decimals for DECIMAL, Python ints for
BIGINT, DOUBLE comparisons for DOUBLE, band edges whole multiples of the width, ages counted by
anniversaries (not by the formula the builder uses).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlanon
from conftest import local_postgres

REFERENCE = dt.date(2026, 3, 1)
#: column -> (hierarchy spec, what its levels are: one entry per level above the leaf)
QI = {
    "dec": ("bands:0.1,0.2,1", [("band", Decimal("0.1")), ("band", Decimal("0.2")), ("band", Decimal(1))]),
    "dbl": ("bands:0.1,0.2,1", [("band", Decimal("0.1")), ("band", Decimal("0.2")), ("band", Decimal(1))]),
    "big": ("bands:10,100,1000", [("band", Decimal(10)), ("band", Decimal(100)), ("band", Decimal(1000))]),
    "d": ("dates:month,quarter,year,5y,decade", [("month",), ("quarter",), ("year",), ("span", 5), ("decade",)]),
    "ts": ("dates:hour,day,month,year", [("hour",), ("day",), ("month",), ("year",)]),
    "dob": (f"age:{REFERENCE.isoformat()},5,10,20", [("age",), ("ageband", 5), ("ageband", 10), ("ageband", 20)]),
    "born": ("birth_year:5,10", [("year",), ("span", 5), ("span", 10)]),
}
TOP = max(len(levels) for _, levels in QI.values()) + 1
DOUBLES = [0.3, 0.6, 0.7, 0.1 + 0.2, -0.05, 0.0, 2.5, 9.95, -1.1, 39.99]


def _row(rnd: random.Random, i: int) -> dict:
    born = dt.date(1940, 1, 1) + dt.timedelta(days=rnd.randint(0, 30_000))
    if i % 7 == 0:
        born = rnd.choice([dt.date(1996, 2, 29), dt.date(2000, 3, 1), dt.date(1990, REFERENCE.month, REFERENCE.day), dt.date(1990, 2, 28)])
    return {
        "dec": Decimal(rnd.randint(-400, 999)) / 10,
        "dbl": rnd.choice(DOUBLES) if i % 2 else rnd.randint(-400, 400) / 10,
        "big": 2**63 - 1 - rnd.randint(0, 2500) if i % 2 else -(2**63) + rnd.randint(0, 2500),
        "d": dt.date(1979, 1, 1) + dt.timedelta(days=rnd.randint(0, 20_000)),
        "ts": dt.datetime(2019, 12, 31, 22) + dt.timedelta(minutes=rnd.randint(0, 900_000)),
        "dob": born,
        "born": born,
    }


def make_rows(seed: int = 11, distinct: int = 40) -> list[dict]:
    rnd = random.Random(seed)
    base = [_row(rnd, i) for i in range(distinct)]
    rows = [dict(r) for r in base for _ in range(rnd.randint(2, 5))]
    return [{"id": i, **r} for i, r in enumerate(rows)]


ARROW = {"id": pa.int32(), "dec": pa.decimal128(4, 1), "dbl": pa.float64(), "big": pa.int64(), "d": pa.date32(), "ts": pa.timestamp("us"), "dob": pa.date32(), "born": pa.date32()}
PG_TYPES = {"id": "INTEGER", "dec": "NUMERIC(4,1)", "dbl": "DOUBLE PRECISION", "big": "BIGINT", "d": "DATE", "ts": "TIMESTAMP", "dob": "DATE", "born": "DATE"}


def write_parquet(rows: list[dict], path: str) -> str:
    pq.write_table(pa.table({c: pa.array([r[c] for r in rows], t) for c, t in ARROW.items()}), path)
    return path


# -- the checker (its own parsing; no sqlanon code) --------------------------------------------

_BAND = re.compile(r"^\[(-?[0-9]+(?:\.[0-9]+)?), (-?[0-9]+(?:\.[0-9]+)?)\[$")


def _band(label: str) -> tuple[Decimal, Decimal]:
    m = _BAND.match(label)
    assert m, f"not a band label: {label!r}"
    return Decimal(m.group(1)), Decimal(m.group(2))


def _anniversary(born: dt.date, years: int) -> dt.date:
    try:
        return born.replace(year=born.year + years)
    except ValueError:  # 29 February in a year without one: the day after 28 February
        return dt.date(born.year + years, 3, 1)


def age_at(born: dt.date, on: dt.date) -> int:
    years = 0
    while _anniversary(born, years + 1) <= on:
        years += 1
    return years


def _holds_number(label: str, value, width: Decimal) -> bool:
    lo, hi = _band(label)
    if hi - lo != width or lo % width != 0:
        return False
    if isinstance(value, float):
        return float(lo) <= value < float(hi)
    return lo <= Decimal(value) < hi


def _day(value) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def _holds_calendar(level: tuple, label: str, value) -> bool:
    day = _day(value)
    kind = level[0]
    if kind == "hour":
        return label == value.strftime("%Y-%m-%d %H:00")
    if kind == "day":
        return label == day.isoformat()
    if kind == "month":
        return label == f"{day.year:04d}-{day.month:02d}"
    if kind == "quarter":
        return label == f"{day.year}-Q{(day.month + 2) // 3}"
    if kind == "year":
        return label == str(day.year)
    if kind == "decade":
        return label == f"{day.year - day.year % 10}s"
    lo, hi = _band(label)
    return hi - lo == level[1] and lo % level[1] == 0 and lo <= day.year < hi


def holds(level: tuple, label: str, value) -> bool:
    """The label at ``level`` holds the source ``value`` (``*`` holds everything)."""
    if label == "*":
        return True
    if level[0] == "band":
        return _holds_number(label, value, level[1])
    if level[0] == "age":
        return label == str(age_at(value, REFERENCE))
    if level[0] == "ageband":
        lo, hi = _band(label)
        return hi - lo == level[1] and lo % level[1] == 0 and lo <= age_at(value, REFERENCE) < hi
    return _holds_calendar(level, label, value)


def check_release(rows: list[dict], released: list[dict], level: int) -> int:
    """Every released value holds its row's source value; returns the labels checked."""
    by_id = {r["id"]: r for r in rows}
    assert sorted(r["id"] for r in released) == sorted(by_id)
    checked = 0
    for out in released:
        src = by_id[out["id"]]
        for column, (_, levels) in QI.items():
            at = min(level, len(levels) + 1)
            if at == 0:
                assert out[column] == src[column], (column, out[column], src[column])
            elif at <= len(levels):
                assert isinstance(out[column], str) and holds(levels[at - 1], out[column], src[column]), (column, at, out[column], src[column])
            else:
                assert out[column] == "*"
            checked += 1
    return checked


def release_at(level: int, out: str, **where) -> list[dict]:
    specs = {c: spec for c, (spec, _) in QI.items()}
    bounds = {c: min(level, len(levels) + 1) for c, (_, levels) in QI.items()}
    report = sqlanon.anonymize(qi=specs, k=2, max_suppression=0.0, min_level=bounds, max_level=bounds, keep_columns=["id"], output=out, **where, keep_others=True)
    assert report.to_dict()["suppressed_rows"] == 0
    origins = {h["attribute"]: h["origin"] for h in report.to_dict()["hierarchies"]}
    assert origins["dob"] == f"age:{REFERENCE.isoformat()},5,10,20"
    return pq.read_table(out).to_pylist()


@pytest.fixture(scope="module")
def rows():
    return make_rows()


def test_checker_refuses_wrong_labels():
    """The checker is no rubber stamp: the labels of the issue are caught."""
    assert not holds(("band", Decimal("0.1")), "[0.5, 0.6[", Decimal("0.6"))
    assert not holds(("band", Decimal("0.1")), "[0.2, 0.30000000000000004[", 0.3)
    assert not holds(("band", Decimal(10)), "[9223372036854774784, 9223372036854774784[", 2**63 - 1)
    assert not holds(("age",), "36", dt.date(1990, 3, 2)) and holds(("age",), "35", dt.date(1990, 3, 2))
    assert holds(("age",), "30", dt.date(1996, 2, 29)) and not holds(("age",), "30", dt.date(1996, 3, 2))
    assert holds(("band", Decimal("0.1")), "[0.6, 0.7[", 0.6) and holds(("span", 5), "[1980, 1985[", dt.date(1984, 12, 31))


@pytest.mark.parametrize("level", range(TOP + 1))
def test_every_band_holds_its_values_on_duckdb(rows, tmp_path, level):
    src = write_parquet(rows, str(tmp_path / "src.parquet"))
    released = release_at(level, str(tmp_path / "out.parquet"), input=src)
    assert check_release(rows, released, level) == len(rows) * len(QI)


@pytest.fixture(scope="module")
def pg_table(rows):
    psycopg = pytest.importorskip("psycopg")
    with local_postgres() as uri:
        head, _, query = uri.partition("?")
        db = "t_" + uuid.uuid4().hex[:10]
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("CREATE DATABASE " + db)
        url = head.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("CREATE TABLE labels (" + ", ".join(f"{c} {t}" for c, t in PG_TYPES.items()) + ")")
            with con.cursor().copy("COPY labels FROM STDIN") as copy:
                for r in rows:
                    copy.write_row([r[c] for c in PG_TYPES])
        yield url


@pytest.mark.postgres
@pytest.mark.parametrize("level", [1, 2, 3, TOP])
def test_every_band_holds_its_values_on_postgres(rows, pg_table, tmp_path, level):
    released = release_at(level, str(tmp_path / "out.parquet"), input=pg_table, table="labels")
    assert check_release(rows, released, level) == len(rows) * len(QI)


@pytest.mark.spark
@pytest.mark.parametrize("level", [1, 2, 3])
def test_every_band_holds_its_values_on_spark(rows, spark, tmp_path, level):
    src = write_parquet(rows, str(tmp_path / "src.parquet"))
    released = release_at(level, str(tmp_path / "out"), input=src, connection=spark)
    assert check_release(rows, released, level) == len(rows) * len(QI)
