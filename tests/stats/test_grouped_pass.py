"""The grouped pass (sqlanon/stats/grouped_pass.py): the source grouped once on its raw key
columns, read by the hierarchy builders and the base scan instead of the source.

On small random tables (NULLs, skew, a date, an integer, extra columns, a sensitive column read or
only named, NULLs suppressed) the base set, the input hash, the row and withheld counts equal the
source's own base scan; a run reads the source once before the release write (the statements
that name it, counted), releases the same rows and plan as without the pass, says the same
refusals, and leaves no table of its own behind (after a run, and after a refused one).
"""

from __future__ import annotations

import random

import duckdb
import pyarrow.parquet as pq
import pytest
from sqlglot import exp

import sqlanon
import sqlanon.stats.grouped_pass as grouped_pass
from sqlanon.engine import base as engine_base, connect
from sqlanon.engine.source import Source
from sqlanon.errors import HierarchyError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement
from sqlanon.release.write import input_hash
from sqlanon.stats import Statistics

QI = {"zip": "mask", "birth": "dates:month,year", "n": "flat"}


def _table(path: str, rng: random.Random) -> list[tuple]:
    """Rows of (zip text, birth date, n integer, s text, x text) with NULLs and skew, as text."""
    zips = [f"{rng.randint(0, 99):05d}" for _ in range(rng.randint(1, 8))]
    rows = []
    for _ in range(rng.randint(30, 300)):
        z = rng.choice(zips + [None]) if rng.random() < 0.9 else zips[0]
        b = None if rng.random() < 0.1 else f"19{rng.randint(50, 53)}-0{rng.randint(1, 3)}-1{rng.randint(0, 2)}"
        rows.append((z, b, rng.choice([None, 1, 2, 3, -4]), rng.choice(["flu", "cold", None]), rng.choice(["a", "b", "c"])))
    con = duckdb.connect()
    con.execute("CREATE TABLE t (zip VARCHAR, birth DATE, n INTEGER, s VARCHAR, x VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("COPY t TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")
    got = con.execute("SELECT zip, CAST(birth AS VARCHAR), CAST(n AS VARCHAR), s, x FROM t").fetchall()
    con.close()
    return got


def _stats(engine, path: str, rows, sensitive_read: bool, nulls, grouped) -> Statistics:
    names = ["zip", "birth", "n"]
    hierarchies = [Hierarchy(attribute=q, rows=[[v, "*"] for v in sorted({r[i] for r in rows if r[i] is not None})]) for i, q in enumerate(names)]
    req = Requirement([KAnonymity(2)] + ([DistinctLDiversity(2)] if sensitive_read else []))
    return Statistics(engine, Source.open(path), names, hierarchies, sensitive="s", needs=req.needs, row_hash=True, nulls=nulls, grouped=grouped)


def _figures(stats: Statistics) -> tuple:
    base = sorted(stats.engine.fetch_all(exp.select("*").from_(stats.base.table)), key=repr)
    return base, stats.input_hash, stats.rows, stats.withheld, stats.null_rows


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", ["sensitive read", "sensitive only named", "nulls suppressed"])
def test_the_base_set_from_the_groups_is_the_sources(tmp_path, seed, shape):
    path = str(tmp_path / "t.parquet")
    rows = _table(path, random.Random(seed))
    nulls = "suppress" if shape == "nulls suppressed" else None
    engine = connect()
    try:
        source = Source.open(path)
        keys = grouped_pass.key_columns(["zip", "birth", "n"], "s", None)
        hashed = grouped_pass.hashed(engine, source, ["zip", "birth", "n"], True, nulls)
        groups = grouped_pass.create(engine, source, keys, hashed)
        assert groups is not None and groups.hashed == (nulls is None)
        with_groups = _stats(engine, path, rows, shape == "sensitive read", nulls, groups)
        assert with_groups.grouped is groups
        with_groups.prepare()
        assert with_groups.grouped is None  # read by the base scan alone, then dropped
        assert engine.fetch_all(exp.select("*").from_("duckdb_tables").where(exp.column("table_name").like(exp.Literal.string(grouped_pass.PREFIX + "%")))) == []
        from_source = _stats(engine, path, rows, shape == "sensitive read", nulls, None)
        from_source.prepare()
        assert _figures(with_groups) == _figures(from_source)
        if nulls is None:
            assert with_groups.input_hash == input_hash(engine, source)
        else:  # the withheld rows counted from the groups: the Python count
            assert with_groups.withheld == sum(1 for r in rows if None in r[:3])
    finally:
        engine.close()


def test_groups_that_do_not_serve_the_scan_are_not_read(tmp_path):
    """Groups without the input hash's parts (or without a key the base set reads) leave the
    base scan to the source."""
    path = str(tmp_path / "t.parquet")
    rows = _table(path, random.Random(3))
    engine = connect()
    try:
        groups = grouped_pass.create(engine, Source.open(path), ["zip", "birth", "n"], False)
        assert groups is not None
        assert _stats(engine, path, rows, False, None, groups).grouped is None  # the hash is asked for
        assert grouped_pass.create(engine, Source.open(path), ["zip", "nothere"], False) is None  # a key not in the source
    finally:
        engine.close()


@pytest.fixture
def statements(monkeypatch):
    """Every statement run, as its text."""
    seen: list[str] = []
    record = engine_base.Engine._record

    def spy(self, expression):
        sql = record(self, expression)
        seen.append(sql)
        return sql

    monkeypatch.setattr(engine_base.Engine, "_record", spy)
    return seen


def _reads(seen: list[str], path: str) -> list[str]:
    """The statements reading the source's rows before the release write (a DESCRIBE reads its
    schema only)."""
    out = []
    for sql in seen:
        if sql.lstrip().upper().startswith("COPY"):
            break
        if path in sql and not sql.lstrip().upper().startswith("DESCRIBE"):
            out.append(sql)
    return out


def _run(tmp_path, name: str, path: str, **kw):
    out = str(tmp_path / f"{name}.parquet")
    r = sqlanon.anonymize(input=path, qi=QI, k=3, max_suppression=0.2, output=out, **kw)
    return r, sorted(pq.read_table(out).to_pylist(), key=repr)


@pytest.mark.parametrize("seed", range(3))
def test_the_source_is_read_once_before_the_write_and_the_release_is_the_same(tmp_path, monkeypatch, statements, seed):
    path = str(tmp_path / "t.parquet")
    _table(path, random.Random(seed))
    r, released = _run(tmp_path, "with", path, sensitive_column="s", drop_columns=["x"])
    reads = _reads(statements, path)
    assert len(reads) == 1 and grouped_pass.PREFIX in reads[0], reads
    assert r.timings["hierarchies"] >= 0 and r.timings["base_scan"] >= 0
    statements.clear()
    monkeypatch.setattr(grouped_pass, "create", lambda *a, **kw: None)  # today's path: the source read per built hierarchy and by the base scan
    before, released_before = _run(tmp_path, "without", path, sensitive_column="s", drop_columns=["x"])
    assert len(_reads(statements, path)) == 2 + len(QI)  # the sketch of the sensitive column, one per built hierarchy, the base scan
    assert released == released_before
    for key in ("transformation", "suppressed_rows", "rows", "metric", "hierarchies", "risk", "utility", "arx_quality"):
        assert r.to_dict().get(key) == before.to_dict().get(key), key
    listing = dict(r.to_dict().get("sql") or r._report.get("sql") or [])
    if listing:  # the report's base set: the grouped pass's statement, then the coding of its groups
        assert grouped_pass.PREFIX in listing["base frequency set"]


def test_the_pass_leaves_no_table_on_a_borrowed_connection(tmp_path):
    path = str(tmp_path / "t.parquet")
    _table(path, random.Random(4))
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT zip, birth, n FROM read_parquet('" + path.replace("'", "''") + "')")
    sqlanon.anonymize(connection=con, table="people", qi=QI, k=3, max_suppression=0.2)
    # a refused run (a value missing from a given hierarchy) too
    with pytest.raises(HierarchyError):
        sqlanon.anonymize(connection=con, table="people", qi={**QI, "n": Hierarchy(attribute="n", rows=[["1", "*"]])}, k=3, max_suppression=0.2)
    left = con.execute("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'sqlanon_grouped_%'").fetchall()
    assert left == []
    con.close()


def test_an_unmapped_value_is_said_as_before(tmp_path, monkeypatch):
    path = str(tmp_path / "t.parquet")
    _table(path, random.Random(5))
    spec = {**QI, "zip": Hierarchy(attribute="zip", rows=[["00001", "*"]])}
    with pytest.raises(HierarchyError) as with_groups:
        sqlanon.anonymize(input=path, qi=spec, k=3, drop_columns=["s", "x"], output=str(tmp_path / "a.parquet"))
    monkeypatch.setattr(grouped_pass, "create", lambda *a, **kw: None)
    with pytest.raises(HierarchyError) as from_source:
        sqlanon.anonymize(input=path, qi=spec, k=3, drop_columns=["s", "x"], output=str(tmp_path / "b.parquet"))
    assert str(with_groups.value) == str(from_source.value) and "missing from its hierarchy" in str(with_groups.value)


def test_a_value_too_long_is_counted_in_rows_as_before(tmp_path, monkeypatch):
    path = str(tmp_path / "t.csv")
    with open(path, "w") as f:
        f.write("zip,n\n" + "".join(f"{'9' * 20},{i % 3}\n" for i in range(7)) + "".join(f"123,{i % 3}\n" for i in range(7)))
    kw = dict(input=path, qi={"zip": "mask", "n": "flat"}, k=2, max_value_length=10, output=str(tmp_path / "a.parquet"))
    with pytest.raises(HierarchyError) as with_groups:
        sqlanon.anonymize(**kw)
    monkeypatch.setattr(grouped_pass, "create", lambda *a, **kw: None)
    with pytest.raises(HierarchyError) as from_source:
        sqlanon.anonymize(**kw)
    assert str(with_groups.value) == str(from_source.value) and "7 row(s)" in str(with_groups.value)


def test_a_unique_kept_column_is_refused_before_the_grouped_pass(tmp_path, monkeypatch):
    """A kept column is no key of the groups: its sketch reads the source first, so a refused run
    stops after that one pass, the grouped pass not made."""
    from sqlanon.errors import ConfigError

    path = str(tmp_path / "t.csv")
    with open(path, "w") as f:
        f.write("id,zip,n\n" + "".join(f"{i},{12340 + i % 8},{i % 3}\n" for i in range(400)))
    made: list = []
    create = grouped_pass.create
    monkeypatch.setattr(grouped_pass, "create", lambda *a, **kw: made.append(1) or create(*a, **kw))
    with pytest.raises(ConfigError, match="unique per row"):
        sqlanon.anonymize(input=path, qi={"zip": "mask", "n": "flat"}, k=3, keep_others=True, output=str(tmp_path / "o.parquet"))
    assert made == []


def test_a_timestamp_qi_takes_the_pass_and_releases_the_same(tmp_path, monkeypatch, statements):
    """A TIMESTAMP QI (admissions on the hour, some to the microsecond, NULLs) beside a zip with
    leading zeros: the run reads the source once before the write, and releases what the source's
    own base scan releases."""
    rng = random.Random(7)
    rows = [(f"{rng.randint(0, 30):05d}" if rng.random() > 0.05 else None,
             None if rng.random() < 0.05 else f"2021-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} {rng.randint(10, 12)}:00:00" + (".000123" if rng.random() < 0.1 else ""),
             rng.choice(["F", "M", None])) for _ in range(400)]
    path = str(tmp_path / "ts.parquet")
    con = duckdb.connect()
    con.execute("CREATE TABLE t (zip VARCHAR, admitted TIMESTAMP, g VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
    con.execute("COPY t TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")
    con.close()
    qi = {"zip": "mask", "admitted": "dates:month,year", "g": "flat"}

    def run(name):
        out = str(tmp_path / f"{name}.parquet")
        r = sqlanon.anonymize(input=path, qi=qi, k=3, max_suppression=0.2, output=out)
        return r, sorted(pq.read_table(out).to_pylist(), key=repr)

    r, released = run("with")
    reads = _reads(statements, path)
    assert len(reads) == 1 and grouped_pass.PREFIX in reads[0], reads
    statements.clear()
    monkeypatch.setattr(grouped_pass, "create", lambda *a, **kw: None)
    before, released_before = run("without")
    assert len(_reads(statements, path)) > 1
    assert released == released_before
    for key in ("transformation", "suppressed_rows", "rows", "hierarchies"):
        assert r.to_dict().get(key) == before.to_dict().get(key), key
