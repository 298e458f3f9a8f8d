"""Incremental releases on PostgreSQL: the ledger, the holding table and the registry's lineage in
the target database, written in the release's transaction; the lineage's union re-checked by SQL
of our own through psycopg (no sqlanon code)."""

from __future__ import annotations

import random
import uuid
from collections import Counter

import pytest

pgserver = pytest.importorskip("pgserver")
psycopg = pytest.importorskip("psycopg")

pytestmark = pytest.mark.postgres

import sqlanon  # noqa: E402
from conftest import local_postgres  # noqa: E402
from sqlanon.errors import ConfigError  # noqa: E402
from sqlanon.release import lineage  # noqa: E402
from test_incremental import K, QIS, SCHEMA, make_rows, write_hierarchies  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with local_postgres() as uri:
        yield uri


def _with_db(uri: str, db: str) -> str:
    head, _, query = uri.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{db}" + (f"?{query}" if query else "")


@pytest.fixture
def warehouse(server, tmp_path):
    db = "inc_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as con:
        con.execute("CREATE DATABASE " + db)
    url = _with_db(server, db)
    rnd = random.Random(5)
    with psycopg.connect(url, autocommit=True) as con:
        for name, rows in (("day0", make_rows(rnd, 300, 0)), ("day1", make_rows(rnd, 30, 1)), ("day2", make_rows(rnd, 30, 2) + [("00501", 30, "X", None, None, None)] * 5)):
            con.execute(f"CREATE TABLE {name} ({SCHEMA.replace('DECIMAL', 'NUMERIC')})")
            with con.cursor().copy(f"COPY {name} FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
    return {"url": url, "specs": write_hierarchies(tmp_path)}


def _classes(con, table: str) -> Counter:
    cols = ", ".join(f"CAST({q} AS TEXT)" for q in QIS)
    return Counter({row[:-1]: row[-1] for row in con.execute(f"SELECT {cols}, COUNT(*) FROM {table} GROUP BY {cols}").fetchall()})


def test_postgres_batches_to_a_table_with_hold_then_in_place(warehouse):
    url = warehouse["url"]
    root = sqlanon.anonymize(input=url, table="day0", qi=dict(warehouse["specs"]), k=K, max_suppression=0.05, output_table="rel0", keep_columns=["visit", "income", "note"], max_level={"sex": 0})
    b1 = sqlanon.anonymize(input=url, table="day1", like_release=root.release_id, output_table="rel1", on_break="hold")
    b2 = sqlanon.anonymize(input=url, table="day2", like_release=b1.release_id, in_place=True, on_break="hold")
    assert b2.extra["incremental"]["unseen_rows"] == 5
    with psycopg.connect(url) as con:
        union: Counter = Counter()
        for table in ("rel0", "rel1", "day2"):
            union.update(_classes(con, table))
        union.pop(("*",) * len(QIS), None)
        assert min(union.values()) >= K == b2.k
        assert b2.extra["incremental"]["lineage_min_class"] == min(union.values()) and b2.extra["incremental"]["lineage_meets_k"]
        assert "X" not in {r[0] for r in con.execute("SELECT DISTINCT sex FROM day2").fetchall()}
        ledger = con.execute(f"SELECT release_id, SUM(rows) FROM {lineage.ledger_name(root.release_id)} GROUP BY release_id ORDER BY release_id").fetchall()
        assert [r[0] for r in ledger] == [root.release_id, b1.release_id, b2.release_id]
        assert int(ledger[1][1]) == b1.extra["incremental"]["released_rows"] and int(ledger[2][1]) == b2.extra["incremental"]["released_rows"]
        held = con.execute(f"SELECT COUNT(*) FROM {lineage.held_name(root.release_id)}").fetchone()[0]
        assert held == b2.extra["incremental"]["held_rows"] - b2.extra["incremental"]["unseen_rows"]
        lin = con.execute("SELECT id, parent_id, lineage_root FROM sqlanon_releases ORDER BY id").fetchall()
        assert lin[1:] == [(b1.release_id, root.release_id, root.release_id), (b2.release_id, b1.release_id, root.release_id)]
    with pytest.raises(ConfigError, match="not found in registry"):
        sqlanon.anonymize(input=url, table="day1", like_release=77, output_table="x")


def test_postgres_batch_to_a_file_keeps_the_lineage_in_the_registry_beside_it(warehouse, tmp_path):
    """The registry is a DuckDB file beside the outputs: the lineage's classes cross engines as
    small aggregates; a view of a WHERE is the batch."""
    url = warehouse["url"]
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE VIEW day2_adults AS SELECT * FROM day2 WHERE age >= 18")
    root = sqlanon.anonymize(input=url, table="day0", qi=dict(warehouse["specs"]), k=K, max_suppression=0.05, output=str(tmp_path / "r0.parquet"), keep_columns=["visit", "income", "note"], max_level={"sex": 0})
    b1 = sqlanon.anonymize(input=url, table="day1", like_release=root.release_id, output=str(tmp_path / "r1.parquet"))
    b2 = sqlanon.anonymize(input=url, table="day2_adults", like_release=b1.release_id, output=str(tmp_path / "r2.csv"), suppression="drop")
    import duckdb

    con = duckdb.connect()
    union: Counter = Counter()
    for name in ("r0.parquet", "r1.parquet", "r2.csv"):
        path = str(tmp_path / name)
        reader = f"read_parquet('{path}')" if name.endswith("parquet") else f"read_csv('{path}', all_varchar=true)"
        for *key, n in con.execute(f"SELECT CAST(zip AS VARCHAR), CAST(age AS VARCHAR), CAST(sex AS VARCHAR), COUNT(*) FROM {reader} GROUP BY ALL").fetchall():
            if any(v != "*" for v in key):
                union[tuple(key)] += n
    con.close()
    assert min(union.values()) >= K and b2.extra["incremental"]["lineage_min_class"] == min(union.values())
    assert b2.extra["incremental"]["unseen_rows"] == 5 and b2.extra["incremental"]["batch_rows"] < 35
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"), read_only=True)
    assert reg.execute(f"SELECT COUNT(DISTINCT release_id) FROM {lineage.ledger_name(root.release_id)}").fetchone()[0] == 3
    reg.close()
