"""Hundreds of columns (issue 41): hierarchies, base scan and release linear in the columns.

With more than ``INLINE_QIS`` QIs, a short hierarchy's leaves are coded inline in the base scan and
its released values looked up inline in the release (no join per QI: DuckDB planned 300 joins in
tens of seconds); the builders' distinct values come from one scan. Every test here runs the same
release both ways (inline, and every QI joined as below the threshold) and asks for the same rows,
and re-checks k-anonymity of what was written."""

from __future__ import annotations

import collections
import random

import duckdb
import pytest

import sqlanon
import sqlanon.progress
import sqlanon.release.write as write_mod
import sqlanon.stats.core as core
from checker import check_k, read_rows
from sqlanon.hierarchy import builder_values, builder_values_many
from sqlanon.engine.source import Source
from sqlanon.errors import HierarchyError

COLUMNS = 16


def wide_table(tmp_path, seed: int, rows: int = 400) -> tuple[str, dict[str, str]]:
    """``COLUMNS`` text QIs: most of 2-4 values, one of 100 (above ``INLINE_LEAVES``: joined), a
    few values only some rows have (suppressed), and an integer QI (bands) that is not text."""
    rnd = random.Random(seed)
    db = str(tmp_path / f"wide{seed}.duckdb")
    con = duckdb.connect(db)
    names = [f"c{j}" for j in range(COLUMNS)]
    con.execute("CREATE TABLE t (" + ", ".join(f'"{n}" VARCHAR' for n in names) + ', "big" VARCHAR, "n" INTEGER)')
    data = []
    for _ in range(rows):
        row = [rnd.choice("ab") if j % 2 else rnd.choice(["x", "y", "z", "w" if rnd.random() < 0.02 else "x"]) for j in range(COLUMNS)]
        data.append(row + [f"v{rnd.randrange(100):03d}", rnd.randrange(90)])
    con.executemany("INSERT INTO t VALUES (" + ", ".join("?" for _ in range(COLUMNS + 2)) + ")", data)
    con.close()
    qi = {n: "flat" for n in names}
    qi["big"] = "mask"
    qi["n"] = "bands:10,30"
    return db, qi


def fixed_node(db: str, qi: dict, monkeypatch) -> dict:
    """The options that make the optimal search release one node (its level bounds): the node
    lightning finds inline, so both ways release the same plan (lightning's path may differ
    between runs where nodes tie)."""
    monkeypatch.setattr(core, "INLINE_QIS", 0)
    # a few steps are enough for a node to release (lightning's default 30 s would be spent whole)
    found = sqlanon.anonymize(input=db, table="t", qi=qi, k=3, max_suppression=0.2, search="lightning", search_options={"step_limit": 400}, report=None).transformation
    return {"search": "optimal", "min_level": dict(found), "max_level": dict(found)}


def multiset(path: str) -> collections.Counter:
    return collections.Counter(tuple(sorted(r.items())) for r in read_rows(path))


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("suppression,name", [("mask", "out.parquet"), ("mask", "out.csv"), ("drop", "out.parquet")])
def test_a_wide_release_inline_has_the_joined_releases_rows(tmp_path, monkeypatch, seed, suppression, name):
    db, qi = wide_table(tmp_path, seed)
    node = fixed_node(db, qi, monkeypatch)
    got = {}
    for way, threshold in (("inline", 0), ("joined", 10_000)):
        monkeypatch.setattr(core, "INLINE_QIS", threshold)
        out = str(tmp_path / way / name)
        report = sqlanon.anonymize(input=db, table="t", qi=qi, k=3, max_suppression=0.2, suppression=suppression, output=out, report=None, **node)
        got[way] = (report.transformation, report.suppressed_rows, multiset(out))
        rows = read_rows(out)
        verdict = check_k(rows, list(qi), 3, 0.2 if suppression == "mask" else 1.0)
        assert verdict["ok"], verdict["problems"]
    assert got["inline"][0] == got["joined"][0] and got["inline"][1] == got["joined"][1]
    assert got["inline"][1] > 0  # suppressed rows, so the suppressed classes' join ran
    assert got["inline"][2] == got["joined"][2]


def test_a_wide_release_rebuilt_from_the_base_set_inline_has_the_source_releases_rows(tmp_path, monkeypatch):
    db, qi = wide_table(tmp_path, 5)
    del qi["n"]  # every released column a text QI: the release may come from the base set
    con = duckdb.connect(db)
    con.execute("ALTER TABLE t DROP COLUMN n")
    con.close()
    got = {}
    node = fixed_node(db, qi, monkeypatch)
    for way, from_base in (("base", True), ("source", False)):
        monkeypatch.setattr(write_mod, "FROM_BASE", from_base)
        out = str(tmp_path / way / "out.parquet")
        report = sqlanon.anonymize(input=db, table="t", qi=qi, k=3, max_suppression=0.2, output=out, report=None, **node)
        got[way] = (report.transformation, multiset(out))
    assert got["base"] == got["source"]


def test_a_wide_in_place_release_inline_has_the_joined_releases_rows(tmp_path, monkeypatch):
    got = {}
    for way, threshold in (("inline", 0), ("joined", 10_000)):
        (tmp_path / way).mkdir()
        db, qi = wide_table(tmp_path / way, 3)
        node = fixed_node(db, qi, monkeypatch)
        monkeypatch.setattr(core, "INLINE_QIS", threshold)
        sqlanon.anonymize(input=db, table="t", qi=qi, k=3, max_suppression=0.2, in_place=True, report=None, **node)
        con = duckdb.connect(db)
        got[way] = collections.Counter(con.execute("SELECT * FROM t").fetchall())
        con.close()
    assert got["inline"] == got["joined"]


def test_the_distinct_values_of_many_columns_come_from_one_scan(tmp_path):
    db, qi = wide_table(tmp_path, 1)
    with duckdb.connect(db) as con:
        con.execute("UPDATE t SET c3 = NULL WHERE c1 = 'a'")
    from sqlanon.engine.duckdb import DuckDBEngine

    engine = DuckDBEngine(db)
    try:
        source = Source(kind="table", table="t")
        columns = [*qi]
        before = engine.queries
        many = builder_values_many(engine, source, columns, 4096)
        assert engine.queries - before == 1
        for c in columns:
            assert sorted(many[c]) == sorted(builder_values(engine, source, c, "flat", 4096)), c
        with pytest.raises(HierarchyError, match="'big'"):
            builder_values_many(engine, source, columns, 3)  # 'v012' is 4 characters
    finally:
        engine.close()


def test_a_wide_base_scan_joins_no_code_table_of_a_short_hierarchy(tmp_path, monkeypatch):
    db, qi = wide_table(tmp_path, 2)
    node = fixed_node(db, qi, monkeypatch)
    queries = {}
    for way, threshold in (("inline", 0), ("joined", 10_000)):
        monkeypatch.setattr(core, "INLINE_QIS", threshold)
        queries[way] = sqlanon.anonymize(input=db, table="t", qi=qi, k=3, max_suppression=0.2, output=str(tmp_path / f"{way}.parquet"), report=None, **node).to_dict()["queries"]
    # statements per QI are gone: the builders' values in one scan; code and mapping tables
    # only for 'big' and 'n' (17 short hierarchies: 17 values scans, code and mapping tables fewer)
    assert queries["inline"] <= queries["joined"] - 3 * (COLUMNS - 1)


def test_a_plain_reporter_says_a_long_phase_is_still_running(monkeypatch):
    import threading

    heard = threading.Event()
    said = []

    def say(text):
        said.append(text)
        heard.set()

    monkeypatch.setattr(sqlanon.progress, "HEARTBEAT", 0.01)
    with sqlanon.progress.Reporter(say).phase("base scan"):
        assert heard.wait(10)
    assert said and all(s.startswith("base scan: still running (") for s in said)
    n = len(said)
    assert len(said) == n  # nothing after the phase ended (its thread was joined)


def test_the_time_limit_counts_from_the_runs_start(monkeypatch):
    from sqlanon.config.policy import Policy
    from sqlanon.run.api import LEAST_SEARCH_SECONDS, charged_time_limit
    from sqlanon.search import limits

    monkeypatch.setattr(limits, "clock", lambda: 1000.0)  # the limits' clock, fixed: no wall time read
    plain = Policy(qi={"a": "flat"}, k=2)
    assert charged_time_limit(plain, 1000.0 - 100) is plain  # no limit: none charged
    limited = Policy(qi={"a": "flat"}, k=2, search="lightning", search_options={"time_limit": 20})
    spent = charged_time_limit(limited, 1000.0 - 100)
    assert spent.strategy.search_options["time_limit"] == LEAST_SEARCH_SECONDS
    assert limited.strategy.search_options["time_limit"] == 20  # the run's own policy is unchanged
    fresh = charged_time_limit(limited, 1000.0)
    assert 19 < fresh.strategy.search_options["time_limit"] <= 20
