"""A QI with more released labels than the dialect's label type holds (DuckDB's ``ENUM``, capped
at :data:`DuckDBDialect.MAX_LABELS`) is released as text: the Parquet and the table releases
are written, and equal an oracle computed in Python from the source rows."""

from collections import Counter

import duckdb
import pytest

import sqlanon
from checker import check_k, read_rows
from sqlanon.dialect.duckdb import DuckDBDialect
from sqlanon.release.write import MASK_LITERAL_LABELS

CAP = DuckDBDialect.MAX_LABELS
K = 3


def _source(tmp_path, zips: int, lonely: int) -> tuple[str, list[dict]]:
    """``zips`` zip codes of ``K`` rows each (their class large enough at level 0) and ``lonely``
    zip codes of one row (suppressed), with a kept random column."""
    import random

    rnd = random.Random(zips + lonely)
    rows = [{"zip": f"z{z:06d}", "sex": "f" if z % 2 else "m", "v": rnd.randint(0, 99)} for z in range(zips) for _ in range(K)]
    rows += [{"zip": f"y{z:06d}", "sex": "m", "v": rnd.randint(0, 99)} for z in range(lonely)]
    rnd.shuffle(rows)
    db = str(tmp_path / "src.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE t (zip VARCHAR, sex VARCHAR, v INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", [(r["zip"], r["sex"], r["v"]) for r in rows])
    con.close()
    return db, rows


def _oracle(rows: list[dict]) -> Counter:
    """The release at level 0 with every class under ``K`` masked: the rows as they are, the
    QIs of a small class's rows ``*``."""
    sizes = Counter((r["zip"], r["sex"]) for r in rows)
    out: Counter = Counter()
    for r in rows:
        small = sizes[(r["zip"], r["sex"])] < K
        out[("*" if small else r["zip"], "*" if small else r["sex"], r["v"])] += 1
    return out


def _released(rows: list[dict]) -> Counter:
    return Counter((r["zip"], r["sex"], int(r["v"])) for r in rows)


@pytest.mark.parametrize("lonely", [0, 40])
def test_more_labels_than_the_type_holds(tmp_path, lonely):
    zips = CAP + 500
    assert zips + lonely > CAP and zips + lonely > MASK_LITERAL_LABELS  # the text path, and the masked column
    db, rows = _source(tmp_path, zips, lonely)
    budget = (lonely + 1) / len(rows)
    common = {"input": db, "table": "t", "qi": {"zip": "mask", "sex": "mask"}, "keep_columns": ["v"], "k": K, "max_suppression": budget}
    out = str(tmp_path / "out.parquet")
    report = sqlanon.anonymize(output=out, **common)
    assert report.to_dict()["transformation"] == {"zip": 0, "sex": 0}
    parquet_rows = read_rows(out)
    assert _released(parquet_rows) == _oracle(rows)
    assert check_k(parquet_rows, ["zip", "sex"], K, budget)["ok"]
    sqlanon.anonymize(output_table="released", **common)
    con = duckdb.connect(db)
    try:
        table_rows = [dict(zip(("zip", "sex", "v"), r)) for r in con.execute("SELECT zip, sex, v FROM released").fetchall()]
    finally:
        con.close()
    assert _released(table_rows) == _oracle(rows)


def test_text_labels_write_what_enum_labels_write(tmp_path, monkeypatch):
    """The same release through the ENUM type (the cap raised above the labels) and as text."""
    db, rows = _source(tmp_path, 300, 7)
    common = {"input": db, "table": "t", "qi": {"zip": "mask", "sex": "mask"}, "keep_columns": ["v"], "k": K, "max_suppression": 0.01}
    outs = []
    for cap in (10 * CAP, 10):
        monkeypatch.setattr(DuckDBDialect, "MAX_LABELS", cap)
        out = str(tmp_path / f"out{cap}.parquet")
        sqlanon.anonymize(output=out, **common)
        outs.append(_released(read_rows(out)))
    assert outs[0] == outs[1] == _oracle(rows)
