"""A release with no suppressed class writes a QI the plan leaves as it is as its source column:
its mapping table is neither registered nor joined. The released rows equal the source's (an
oracle in Python), each column keeps its type (a date stays a date, an integer an integer, a
text of more labels than the label type holds stays text), and a QI of few text labels is still
released through its mapping as labels."""

from __future__ import annotations

import random
from collections import Counter

import duckdb
import pytest
from sqlglot import exp

import sqlanon
from sqlanon.dialect.duckdb import DuckDBDialect
import sqlanon.release.write as release

K = 2


def _source(tmp_path, seed: int, zips: int) -> tuple[str, list[tuple]]:
    """Every (zip, birth, n, sex) tuple ``K`` or more times: the plan is level 0, nothing suppressed."""
    rnd = random.Random(seed)
    tuples = [(f"z{i * 7 % 100003:06d}", f"19{rnd.randint(50, 99)}-0{rnd.randint(1, 9)}-1{rnd.randint(0, 9)}", rnd.randint(-5, 500), rnd.choice(["f", "m"])) for i in range(zips)]
    rows = [t for t in tuples for _ in range(K + rnd.randint(0, 2))]
    rnd.shuffle(rows)
    path = str(tmp_path / "src.parquet")
    con = duckdb.connect()
    con.execute("CREATE TABLE t (zip VARCHAR, birth DATE, n INTEGER, sex VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    con.execute("COPY t TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")
    got = con.execute("SELECT zip, CAST(birth AS VARCHAR), n, sex FROM t").fetchall()
    con.close()
    return path, got


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("zips", [40, DuckDBDialect.MAX_LABELS + 100])
def test_level_zero_release_reads_the_source_columns(tmp_path, monkeypatch, seed, zips):
    path, rows = _source(tmp_path, seed, zips)
    queries: list = []
    registered: list = []
    write_file = release._write_file
    monkeypatch.setattr(release, "_write_file", lambda engine, query, *a, **kw: queries.append(query) or write_file(engine, query, *a, **kw))
    tables = release.mapping_tables
    monkeypatch.setattr(release, "mapping_tables", lambda *a, **kw: registered.append(out := tables(*a, **kw)) or out)
    out = str(tmp_path / "out.parquet")
    qi = {"zip": "mask", "birth": "dates:month,year", "n": "bands:100,1000", "sex": "flat"}
    report = sqlanon.anonymize(input=path, qi=qi, k=K, max_suppression=0.0, output=out)
    assert report.to_dict()["transformation"] == {"zip": 0, "birth": 0, "n": 0, "sex": 0}
    con = duckdb.connect()
    types = dict(con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet(?))", [out]).fetchall())
    released = con.execute("SELECT zip, CAST(birth AS VARCHAR), n, CAST(sex AS VARCHAR) FROM read_parquet(?)", [out]).fetchall()
    con.close()
    assert Counter(released) == Counter(rows)
    assert (types["birth"], types["n"], types["zip"]) == ("DATE", "INTEGER", "VARCHAR")
    (query,) = queries
    joined = {j.this.name for j in query.find_all(exp.Join)}
    (maps,) = registered
    few_labels = zips <= DuckDBDialect.MAX_LABELS
    # the text QIs of few labels go through their mapping (as labels); the others are not joined
    assert maps[1] is None and maps[2] is None and (maps[0] is None) == (not few_labels)
    assert joined == {m for m in maps if isinstance(m, str)}
    assert isinstance(maps[3], str)
