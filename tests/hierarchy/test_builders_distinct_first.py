"""Hierarchy builders over integer, DATE and BOOLEAN columns take the distinct values first and
cast only those to text (:func:`sqlanon.hierarchy.builder_values`): on random small tables with
NULLs, the values and every built hierarchy equal the text-first path's, and the distinct-first
statement is the one that ran."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pytest

import sqlanon.hierarchy as hierarchy
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.errors import HierarchyError

SPECS = {
    "i": ["bands:5,10", "mask", "flat", "numeric"],
    "b": ["bands:100,1000", "mask", "flat"],
    "s": ["bands:3,6", "flat"],
    "d": ["dates", "dates:decade", "dates:month,quarter,year", "age:2020-01-01,10,20", "birth_year:5,10", "mask", "flat"],
    "f": ["flat", "mask"],
}


def _table(tmp_path, seed: int) -> str:
    rng = random.Random(seed)
    n = rng.randint(1, 60)
    rows = []
    for _ in range(n):
        rows.append((
            None if rng.random() < 0.2 else rng.randint(-30, 90),
            None if rng.random() < 0.2 else rng.randint(-(10**12), 10**12),
            None if rng.random() < 0.2 else rng.randint(0, 20),
            None if rng.random() < 0.2 else dt.date(1930, 1, 1) + dt.timedelta(days=rng.randint(0, 30000)),
            None if rng.random() < 0.3 else rng.random() < 0.5,
        ))
    if all(r[4] is None for r in rows):  # a boolean column with a value
        rows[0] = (*rows[0][:4], True)
    path = tmp_path / f"t{seed}.parquet"
    con = duckdb.connect()
    con.execute("CREATE TABLE t (i INTEGER, b BIGINT, s SMALLINT, d DATE, f BOOLEAN)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    con.close()
    return str(path)


def _built(engine, path: str, column: str, spec: str):
    try:
        return hierarchy.load_hierarchy(spec, column, engine, Source.open(path)).rows
    except HierarchyError as err:  # e.g. no value at all: the same error both ways
        return str(err)


@pytest.mark.parametrize("seed", range(8))
def test_distinct_first_equals_text_first(tmp_path, seed, monkeypatch):
    path = _table(tmp_path, seed)
    engine = connect(database=":memory:")
    try:
        source = Source.open(path)
        types = dict(source.columns(engine))
        assert all(hierarchy.distinct_first(types[c]) for c in SPECS)
        statements: list[str] = []
        fetch_all = engine.fetch_all
        monkeypatch.setattr(engine, "fetch_all", lambda q: statements.append(q.sql()) or fetch_all(q))
        for column, specs in SPECS.items():
            new = sorted(hierarchy.builder_values(engine, source, column, "built", 4096, types[column]))
            old = sorted(hierarchy.builder_values(engine, source, column, "built", 4096))
            assert new == old, column
            assert "SELECT DISTINCT" in statements[-2] and statements[-2].count("SELECT") == 2  # distinct values, then text
            assert statements[-1].count("SELECT") == 1
            for spec in specs:
                with monkeypatch.context() as m:
                    new_rows = _built(engine, path, column, spec)
                    m.setattr(hierarchy, "distinct_first", lambda sql_type: False)
                    old_rows = _built(engine, path, column, spec)
                assert new_rows == old_rows, (column, spec)
    finally:
        engine.close()


def test_a_value_too_long_is_refused_the_same_way(tmp_path):
    path = _table(tmp_path, 3)
    engine = connect(database=":memory:")
    try:
        source = Source.open(path)
        messages = []
        for sql_type in ("BIGINT", ""):
            with pytest.raises(HierarchyError) as err:
                hierarchy.builder_values(engine, source, "b", "mask", 5, sql_type)
            messages.append(str(err.value))
        assert messages[0] == messages[1] and "longer than 5 characters" in messages[0]
    finally:
        engine.close()
