"""DuckDB's memory in this process (issue 43, "Memory grew"): what it holds is read for the
in-process budget, and what its statements let go is handed back to the system after the base
scan and the fetch, so the scan's hash tables do not stay beside the in-process path's arrays."""

from __future__ import annotations

import sys

import pytest

from sqlanon.engine.duckdb import DuckDBEngine, _jemalloc_control


def _rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmRSS:")) / 1024


def test_duckdb_says_what_it_holds():
    """``held_bytes``: DuckDB's buffer memory, more with a table of a million rows than without."""
    engine = DuckDBEngine()
    try:
        before = engine.held_bytes()
        engine.execute("CREATE TABLE t AS SELECT range AS a, range * 2 AS b FROM range(1000000)")
        assert before is not None and engine.held_bytes() >= before + 8 * 1_000_000
    finally:
        engine.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DuckDB links jemalloc on Linux only")
def test_the_memory_a_statement_let_go_goes_back_to_the_system():
    """After a grouping whose hash table is freed, ``free_memory`` asks DuckDB's jemalloc to
    hand the freed pages back: the process's RSS falls (it did not without the call: DuckDB keeps
    them for its next statements)."""
    assert _jemalloc_control() is not None  # the Linux wheels export it: the feature is on
    engine = DuckDBEngine(threads=1)
    try:
        engine.free_memory()
        engine.fetch_one("SELECT COUNT(*) FROM (SELECT 'value number ' || (range % 1500000) AS v, COUNT(*) FROM range(3000000) GROUP BY 1)")
        kept = _rss_mib()
        assert engine.free_memory()
        assert _rss_mib() < kept - 16
    finally:
        engine.close()
