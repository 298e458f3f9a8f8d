"""The scores and risk figures of ``sqlanon generate`` from the two integer-coded frequency sets
(no scan of either table): equal to the SQL statements they replace on random tables with NULLs,
values only one side has, and repeated rows; the dissimilarity not started when the input's own
KRIMP run says it cannot end before the scores' share of ``--time-limit`` (a fake clock)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.generation import itemsets as its, scores
from sqlanon.generation.pipeline import generated_arrow
from sqlanon.risk.measure import measure_counts, measure_table
from sqlanon.search import limits


def _table(engine, name: str, rnd: random.Random, n: int, domains=(3, 2, 4, 5)) -> Source:
    """Rows with NULLs, skew (value 0 most often) and one column that repeats another."""
    cols: dict[str, list] = {f"a{j}": [] for j in range(len(domains) + 1)}
    for _ in range(n):
        vals = [None if rnd.random() < 0.1 else f"v{min(rnd.randrange(d), rnd.randrange(d))}" for d in domains]
        for j, v in enumerate(vals):
            cols[f"a{j}"].append(v)
        cols[f"a{len(domains)}"].append(vals[0])
    engine.register_arrow(name, pa.table(cols))
    return Source(kind="table", table=name)


@pytest.mark.parametrize("seed", range(6))
def test_nas_from_frequency_sets_equals_the_sql(seed):
    rnd = random.Random(seed)
    engine = connect()
    orig = _table(engine, "o", rnd, rnd.randrange(1, 120))
    rel = _table(engine, "r", rnd, rnd.randrange(1, 120), domains=(4, 2, 3, 5))  # some values the original never has
    cols = ["a0", "a1", "a2", "a3", "a4"]
    enc_o, enc_r = its.encode(engine, orig, cols), its.encode(engine, rel, cols)
    want = engine.fetch_all(scores.anonymity_query(engine, rel, orig, cols))
    got = scores.anonymity_levels(enc_o, enc_r)
    assert got == [(int(s), int(n), int(f or 0)) for s, n, f in want]
    assert scores.anonymity_from_levels(got) == pytest.approx(scores.anonymity_scores(engine, rel, orig, cols))
    self_levels = scores.anonymity_levels(enc_o, enc_o)
    assert all(f == n for _, n, f in self_levels)  # a table against itself: every row found


@pytest.mark.parametrize("seed", range(3))
def test_nas_of_generated_codes_equals_the_sql(seed):
    """The generator's path: the released table encoded from item ids (:func:`its.encode_codes`)."""
    rnd = random.Random(seed)
    engine = connect()
    orig = _table(engine, "o", rnd, 90)
    cols = ["a0", "a1", "a2", "a3", "a4"]
    enc = its.encode(engine, orig, cols)
    gen = np.random.default_rng(seed)
    by_col = [np.nonzero(enc.item_column == c)[0] for c in range(len(cols))]
    rows = np.stack([gen.choice(ids, 150) for ids in by_col], axis=1).astype(np.int32)
    rows[:40] = enc.db.rows[gen.integers(0, len(enc.db.rows), 40)]  # some copies of original rows
    engine.register_arrow("g", generated_arrow(enc, rows))
    want = scores.anonymity_scores(engine, Source(kind="table", table="g"), orig, cols)
    got = scores.anonymity_from_levels(scores.anonymity_levels(enc, its.encode_codes(engine, enc, rows)))
    assert got == pytest.approx(want) and got["nas"] > 0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fraction", [None, 0.3])
def test_risk_from_counts_equals_measure_table(seed, fraction):
    rnd = random.Random(seed)
    engine = connect()
    src = _table(engine, "t", rnd, rnd.randrange(1, 200))
    cols = ["a0", "a1", "a2", "a3", "a4"]
    enc = its.encode(engine, src, cols)
    assert measure_counts(enc.db.weights, population_fraction=fraction) == measure_table(engine, src, cols, population_fraction=fraction)


# ------------------------------------------------------------------------------------------------
# the dissimilarity under the scores' deadline


def _encoded(tmp_path, n=150, seed=3):
    rnd = random.Random(seed)
    path = tmp_path / "t.csv"
    path.write_text("a0,a1,a2\n" + "\n".join(",".join(f"v{rnd.randrange(d)}" for d in (3, 2, 4)) for _ in range(n)) + "\n")
    engine = connect()
    src = Source.open(str(path), "csv")
    enc = its.encode(engine, src, ["a0", "a1", "a2"])
    from sqlanon.generation.krimp import krimp

    return engine, src, enc, krimp(enc.db, its.mine(engine, enc, 1, "all"))


@pytest.mark.parametrize("krimp_seconds, left, started", [(50.0, 40.0, False), (30.0, 40.0, True), (None, 40.0, True), (1.0, 0.0, False)])
def test_dissimilarity_started_only_if_it_can_end(tmp_path, monkeypatch, krimp_seconds, left, started):
    """On a fake clock: the input's mining and KRIMP took ``krimp_seconds``; ``left`` seconds
    remain before the scores' deadline. A run estimated past the deadline is not begun (None,
    ``dissimilarity_time_limited``, and the message says why); one that fits runs."""
    monkeypatch.setattr(limits, "clock", lambda: 100.0)
    engine, src, enc, ct = _encoded(tmp_path)
    calls: list[int] = []
    real = scores._dissimilarity_into
    monkeypatch.setattr(scores, "_dissimilarity_into", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    said: list[str] = []
    out = scores.compare_tables(engine, src, src, enc.columns, 1, original=(enc, ct), released=its.encode(engine, src, enc.columns),
                                deadline=100.0 + left, krimp_seconds=krimp_seconds, say=said.append)
    assert bool(calls) is started
    if started:
        assert out["dissimilarity"] == pytest.approx(0.0, abs=1e-12) and not out.get("dissimilarity_time_limited")
    else:
        assert out["dissimilarity"] is None and out["dissimilarity_time_limited"] is True and out["scores_time_limited"] is True
        assert any(m.startswith("dissimilarity skipped:") for m in said)
    assert out["nas"] == pytest.approx(1.0)  # computed whatever the clock says


@pytest.mark.parametrize("values", [(3, 1, 7, 2), (10,) * 20])  # packed keys; too wide for a key: byte strings
def test_distinct_rows_counts_every_row(values):
    """:func:`its.distinct_rows` equals counting the rows as tuples, on both of its paths."""
    from collections import Counter

    gen = np.random.default_rng(len(values))
    item_column = np.concatenate([[j] * v for j, v in enumerate(values)])
    gen.shuffle(item_column)  # a column's items need not be contiguous ids
    by_col = [np.nonzero(item_column == j)[0] for j in range(len(values))]
    rows = np.stack([gen.choice(ids, 500) for ids in by_col], axis=1).astype(np.int32)
    rows[250:] = rows[:250]  # repeats
    distinct, counts = its.distinct_rows(rows, item_column)
    assert dict(zip(map(tuple, distinct.tolist()), counts.tolist())) == Counter(map(tuple, rows.tolist()))
