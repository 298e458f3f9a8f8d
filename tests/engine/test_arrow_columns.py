"""Small tables registered from Arrow arrays built from their buffers
(sqlanon/engine/arrow_columns.py): the same rows as from bound lists (NULLs, multi-byte text, every
integer width, a hierarchy's code table with its NULL leaf), read back by SQL; columns it cannot
build go the bound lists' way; and it imports no pandas."""

from __future__ import annotations

import random
import subprocess
import sys

import pyarrow as pa
import pytest

from sqlanon.engine import DuckDBEngine
from sqlanon.engine.arrow_columns import arrow_table
from sqlanon.engine.duckdb import list_select
from sqlanon.hierarchy.builders import masking


def _rows(engine: DuckDBEngine, name: str) -> list[tuple]:
    """The table's rows, sorted in Python (NULLs first)."""
    from sqlglot import exp

    rows = engine.fetch_all(exp.select("*").from_(exp.Table(this=exp.to_identifier(name, quoted=True))))
    return sorted(rows, key=lambda r: [(v is not None, v) for v in r])


def _by_lists(engine: DuckDBEngine, name: str, columns) -> None:
    """The table loaded from bound lists (the way before, and the fallback)."""
    from sqlglot import exp

    stmt = exp.Create(this=exp.Table(this=exp.to_identifier(name, quoted=True)), kind="TABLE", expression=list_select(columns))
    engine.execute(stmt, [values for _, values in columns.values()])


@pytest.mark.parametrize("seed", range(4))
def test_buffers_give_the_rows_bound_lists_give(seed):
    rng = random.Random(seed)
    n = rng.randint(0, 300)
    words = ["", "a", "zip 12", "ünïcode", "日本", "x" * 40, "it's", "\x1fsqlanon:NULL\x1f"]
    columns = {
        "code": (pa.int32(), list(range(n))),
        "small": (pa.int8(), [rng.choice([None, -128, 0, 127]) for _ in range(n)]),
        "wide": (pa.int64(), [rng.choice([None, -(2**63), 2**63 - 1, 5]) for _ in range(n)]),
        "label": (pa.string(), [rng.choice([None, *words]) for _ in range(n)]),
    }
    engine = DuckDBEngine()
    try:
        if n:
            assert arrow_table(columns) is not None
            engine.register_columns("by_buffers", columns)
            _by_lists(engine, "by_lists", columns)
            assert _rows(engine, "by_buffers") == _rows(engine, "by_lists")
            kinds = engine.fetch_all("SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'by_buffers' ORDER BY ordinal_position")
            assert [k for _, k in kinds] == ["INTEGER", "TINYINT", "BIGINT", "VARCHAR"]
    finally:
        engine.close()


def test_a_code_table_with_its_null_leaf(monkeypatch):
    import sqlanon.engine.duckdb as duckdb_engine

    def no_lists(columns):
        raise AssertionError("a code table went by bound lists")

    monkeypatch.setattr(duckdb_engine, "list_select", no_lists)
    h = masking([f"{i:05d}" for i in range(0, 3000, 7)], "zip").with_null_leaf()
    columns = h.mapping_columns()
    engine = DuckDBEngine()
    try:
        engine.register_columns("codes", columns)
        got = sorted(_rows(engine, "codes"))
        assert got == [tuple([i, *row]) for i, row in enumerate(h.rows)]
        assert got[-1][1] is None and got[-1][-1] == "*"
    finally:
        engine.close()


def test_what_buffers_cannot_hold_goes_by_lists():
    assert arrow_table({"x": (pa.float64(), [0.5, None])}) is None
    assert arrow_table({"x": (pa.int8(), [300])}) is None  # does not fit
    assert arrow_table({"x": (pa.int32(), ["1"])}) is None  # not an int
    assert arrow_table({"x": (pa.int32(), [1.5])}) is None
    assert arrow_table({"x": (pa.string(), [1])}) is None  # not a text
    assert arrow_table({"x": (pa.string(), ["\ud800"])}) is None  # no UTF-8
    engine = DuckDBEngine()
    try:
        engine.register_columns("floats", {"x": (pa.float64(), [0.5, None]), "n": (pa.int32(), [1, 2])})
        assert _rows(engine, "floats") == [(None, 2), (0.5, 1)]
    finally:
        engine.close()


def test_no_pandas_imported():
    code = (
        "import sys\n"
        "import pyarrow as pa\n"
        "from sqlanon.engine import DuckDBEngine\n"
        "e = DuckDBEngine()\n"
        "e.register_columns('t', {'code': (pa.int32(), [0, 1]), 'v': (pa.string(), ['a', None])})\n"
        "assert e.fetch_all('SELECT COUNT(*) FROM \"t\"') == [(2,)]\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
