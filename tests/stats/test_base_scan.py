"""The base scan groups the source's rows before coding them (sqlanon/stats/base_scan.py): on
small random tables (NULLs, skew, a date, an integer, extra columns) its base set and input hash
equal the row-by-row shape's and an independent full-scan hash, and the set equals a pure-Python
count of the coded rows; a float key keeps the row-by-row shape."""

from __future__ import annotations

import random
from collections import Counter

import duckdb
import pytest
from sqlglot import exp

import sqlanon.stats.base_scan as base_scan
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.privacy import DistinctLDiversity, KAnonymity, Requirement
from sqlanon.release.write import input_hash
from sqlanon.stats import Statistics


def _table(path: str, rng: random.Random, extra: bool, float_qi: bool) -> list[tuple]:
    """Rows of (zip text, birth date, n integer, s text, x float) with NULLs and skew, as text;
    the Parquet file holds the first three and ``s`` (``extra``) and ``x`` (``float_qi``)."""
    n = rng.randint(30, 300)
    zips = [f"{rng.randint(0, 9):05d}" for _ in range(rng.randint(1, 6))]
    rows = []
    for _ in range(n):
        z = rng.choice(zips + [None]) if rng.random() < 0.9 else zips[0]
        b = None if rng.random() < 0.1 else f"19{rng.randint(50, 53)}-0{rng.randint(1, 3)}-1{rng.randint(0, 2)}"
        i = rng.choice([None, 1, 2, 3, -4])
        s = rng.choice(["flu", "cold", None])
        x = rng.choice([0.5, -0.0, 0.0, 1.25])
        rows.append((z, b, i, s, x))
    con = duckdb.connect()
    con.execute("CREATE TABLE t (zip VARCHAR, birth DATE, n INTEGER, s VARCHAR, x DOUBLE)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    cols = ["zip", "birth", "n"] + (["s"] if extra else []) + (["x"] if float_qi else [])
    con.execute("COPY (SELECT " + ", ".join(cols) + " FROM t) TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")
    got = con.execute("SELECT zip, CAST(birth AS VARCHAR), CAST(n AS VARCHAR), s, CAST(x AS VARCHAR) FROM t").fetchall()
    con.close()
    return got


def _hierarchy(name: str, values: list) -> Hierarchy:
    leaves = sorted({v for v in values if v is not None})
    return Hierarchy(attribute=name, rows=[[v, "*"] for v in leaves])


def _stats(path: str, rows: list[tuple], qis: list[str], sensitive: str | None) -> Statistics:
    names = ["zip", "birth", "n", "s", "x"]
    hierarchies = [_hierarchy(q, [r[names.index(q)] for r in rows]) for q in qis]
    req = Requirement([KAnonymity(2)] + ([DistinctLDiversity(2)] if sensitive else []))
    return Statistics(connect(), Source.open(path), qis, hierarchies, sensitive=sensitive, needs=req.needs, row_hash=True)


def _base(stats: Statistics) -> list[tuple]:
    return sorted(stats.engine.fetch_all(exp.select("*").from_(stats.base.table)), key=repr)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("shape", ["all keys", "extra column", "sensitive", "float key"])
def test_grouped_base_set_is_the_row_by_row_one(tmp_path, monkeypatch, seed, shape):
    rng = random.Random(seed)
    path = str(tmp_path / "t.parquet")
    rows = _table(path, rng, extra=shape in ("extra column", "sensitive"), float_qi=shape == "float key")
    qis = ["zip", "birth", "n"] + (["x"] if shape == "float key" else [])
    sensitive = "s" if shape == "sensitive" else None
    stats = _stats(path, rows, qis, sensitive)
    assert base_scan.groups_first(stats) == (shape != "float key")
    stats.prepare()
    grouped, grouped_hash = _base(stats), stats.input_hash
    expected_hash = input_hash(stats.engine, stats.source)
    stats.engine.close()

    monkeypatch.setattr(base_scan, "groups_first", lambda stats: False)
    row_by_row = _stats(path, rows, qis, sensitive)
    row_by_row.prepare()
    assert _base(row_by_row) == grouped
    assert row_by_row.input_hash == grouped_hash == expected_hash
    # the set is the coded rows counted in Python (codes: leaf order, NULL after the leaves)
    names = ["zip", "birth", "n", "s", "x"]
    counts: Counter = Counter()
    for r in rows:
        key = []
        for q, h in zip(qis, row_by_row.hierarchies):
            v = r[names.index(q)]
            key.append(h.leaves.index(v) if v is not None else row_by_row.null_code(qis.index(q)))
        counts[tuple(key)] += 1
    got = Counter()
    for row in grouped:
        got[tuple(row[:len(qis)])] += row[len(qis) + (1 if sensitive else 0)]
    assert got == counts
    row_by_row.engine.close()


def test_the_groups_are_not_grouped_again(tmp_path):
    """The grouped shape codes the groups and groups nothing more: one GROUP BY in the statement
    (the row-by-row shape groups its coded rows)."""
    path = str(tmp_path / "t.parquet")
    rows = _table(path, random.Random(1), extra=False, float_qi=False)
    stats = _stats(path, rows, ["zip", "birth", "n"], None)
    stats.prepare()
    text = stats.engine.sql_text(stats.base_query())
    assert text.count("GROUP BY") == 1 and "COUNT(*) % 2 = 1" in text
    stats.engine.close()


def test_the_statement_is_built_before_the_kernels_load_beside_it(tmp_path, monkeypatch):
    """The kernels' load (started for the base scan) holds the GIL while it imports: the base
    statement is built before it starts, and only the scan runs beside it."""
    import sqlanon.stats.core as core

    path = str(tmp_path / "t.parquet")
    rows = _table(path, random.Random(2), extra=False, float_qi=False)
    stats = _stats(path, rows, ["zip", "birth", "n"], None)
    stats.needs = KAnonymity(2).needs  # k-anonymity alone: the kernels may run its nodes
    stats.local_rows = 10**6
    order = []
    built = stats.base_query_create

    class Timer:
        def cancel(self):
            order.append("cancelled")

    def timer():
        order.append("load started")
        return Timer()

    def create():
        order.append("statement built")
        return built()

    monkeypatch.setattr(core.local, "AFTER_SCAN", False)  # the load beside the scan (by default it starts after: memory)
    monkeypatch.setattr(core.local, "warm_up_during", timer)
    monkeypatch.setattr(stats, "base_query_create", create)
    stats.prepare()
    assert order == ["statement built", "load started", "cancelled"]
    assert stats.base.rows > 0
    stats.engine.close()
