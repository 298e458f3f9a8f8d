"""``sqlanon generate --time-limit`` covers every phase: a fake clock that runs out in the scores
or the risk phase stops the run there, with nothing written (no file, no registry entry, no
report), ``stopped_in`` naming the phase; the CLI exits 1 with one line; the scores' optional
parts end at their share of the limit and say so (``scores_time_limited``)."""

from __future__ import annotations

import json
import random

import pytest
from typer.testing import CliRunner

from sqlanon.cli.app import app
from sqlanon.cli.generate import run_generate
from sqlanon.generation import pipeline
from sqlanon.search import limits


def _csv(tmp_path, n=150, seed=3):
    rnd = random.Random(seed)
    rows = [",".join(f"v{rnd.randrange(d)}" for d in (3, 2, 4, 3)) for _ in range(n)]
    path = tmp_path / "t.csv"
    path.write_text("a0,a1,a2,a3\n" + "\n".join(rows) + "\n")
    return str(path)


class _Clock:
    """A fake clock that jumps ``by`` seconds when the named phase of the run starts."""

    def __init__(self, monkeypatch, phase: str, by: float = 1000.0) -> None:
        self.t = 0.0
        monkeypatch.setattr(limits, "clock", lambda: self.t)
        original = getattr(pipeline, phase) if phase != "risk" else pipeline.measure_counts

        def jumped(*args, **kwargs):
            self.t += by
            return original(*args, **kwargs)

        monkeypatch.setattr(pipeline, phase if phase != "risk" else "measure_counts", jumped)


@pytest.mark.parametrize("phase, stopped_in", [("compare_tables", "scores"), ("risk", "risk")])
def test_time_limit_in_scores_or_risk_writes_nothing(tmp_path, monkeypatch, phase, stopped_in):
    _Clock(monkeypatch, phase)
    out_path, report = tmp_path / "gen.parquet", tmp_path / "r.html"
    said: list[str] = []
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=60, output=str(out_path), report=str(report), progress=said.append)
    assert got["stopped_by"] == "time_limit" and got["stopped_in"] == stopped_in
    assert got["written"] is False and got["output"] is None and got["release_id"] is None
    assert got["rows"] == got["rows_asked"] == 150  # the rows were generated, then discarded
    assert not out_path.exists() and not report.exists() and not list(tmp_path.glob("gen*"))
    assert ("risk" in got) is False
    assert any(f"{stopped_in} phase" in m and "nothing written" in m for m in said)


def test_no_time_limit_writes(tmp_path):
    out_path = tmp_path / "gen.parquet"
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=600, output=str(out_path))
    assert got["stopped_by"] is None and got["stopped_in"] is None and got["written"] is True
    assert out_path.exists() and got["scores_time_limited"] is False


def test_cli_exit_1_and_json_when_stopped(tmp_path, monkeypatch):
    _Clock(monkeypatch, "compare_tables")
    out_path = tmp_path / "gen.csv"
    res = CliRunner().invoke(app, ["generate", "-i", _csv(tmp_path), "--seed", "1", "--time-limit", "60", "--json", "-o", str(out_path)])
    assert res.exit_code == 1, res.output
    body = json.loads(res.stdout.strip().splitlines()[-1])
    assert body["stopped_in"] == "scores" and body["exit_code"] == 1 and body["written"] is False
    assert not out_path.exists()


def test_scores_share_cuts_the_optional_parts(tmp_path, monkeypatch):
    """A soft deadline already past when the scores start: the NAS is computed on all rows, the
    pattern comparison is skipped and the released table's KRIMP run is cut short, and the run
    (whose hard limit has not passed) still writes."""
    t = [0.0]
    monkeypatch.setattr(limits, "clock", lambda: t[0])
    original = pipeline.compare_tables

    def late(*args, **kwargs):
        t[0] += 95.0  # past 90 % of the 100 s limit, before it
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compare_tables", late)
    out_path = tmp_path / "gen.parquet"
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=100, output=str(out_path))
    assert got["scores_time_limited"] is True and got["pct_equal_itemsets"] is None
    assert got["dissimilarity_time_limited"] is True and got["dissimilarity"] is None and 0.0 <= got["nas"] <= 1.0
    assert got["stopped_in"] is None and got["written"] is True and out_path.exists()
    monkeypatch.undo()
    free = run_generate(_csv(tmp_path), format="csv", seed=1)
    assert got["nas"] == free["nas"] and got["as"] == free["as"]  # the NAS is the full-data one


# ------------------------------------------------------------------------------------------------
# generation in blocks: the same rows; the scores against a slow pure-Python oracle


def _model(seed=0):
    import numpy as np

    from sqlanon.generation.generator import GeneratorModel

    rnd = np.random.default_rng(seed)
    item_column = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
    sets = [(i,) for i in range(9)] + [(0, 3), (1, 4, 6), (2, 8), (4, 5)]
    return GeneratorModel.from_code_table(sets, rnd.integers(0, 9, len(sets)), item_column, 3, 0.5)


@pytest.mark.parametrize("block", [1, 7, 64, 10_000])
def test_blocks_are_the_generated_rows(monkeypatch, block):
    """The blocks of :func:`generate_blocks`, concatenated, are :func:`generate`'s rows for the
    seed, at every block size; the pipeline's dictionary-encoded Arrow blocks decode to the same
    values as the plain (string) Arrow of all rows at once."""
    import numpy as np
    import pyarrow as pa

    from sqlanon.generation import generator as g
    from sqlanon.generation.pipeline import generated_arrow

    monkeypatch.setattr(g, "GENERATE_BLOCK", block)
    m = _model()
    whole = g.generate(m, 300, seed=9)
    parts = list(g.generate_blocks(m, 300, seed=9))
    assert [lo for lo, _ in parts] == list(range(0, 300, block))
    assert (np.concatenate([b for _, b in parts]) == whole).all() and (whole >= 0).all()

    class Enc:
        item_labels = ["a", "b", None, 1, 2, "x", "y", "z", 3.5]
        columns = ["c0", "c1", "c2"]

    plain = generated_arrow(Enc(), whole)
    chunked = pa.concat_tables([generated_arrow(Enc(), b, dictionary=True) for _, b in parts])
    assert {k: [None if v is None else str(v) for v in vs] for k, vs in chunked.to_pydict().items()} == plain.to_pydict()


def test_written_rows_are_the_seeded_generation(tmp_path, monkeypatch):
    """End to end, in tiny blocks: the released rows are those of generating the whole table at
    once from the same code table and seed (labels of :func:`generate`'s item ids)."""
    import pyarrow.parquet as pq

    from sqlanon.engine import connect
    from sqlanon.engine.source import Source
    from sqlanon.generation import generator as g, itemsets as its
    from sqlanon.generation.generator import GeneratorModel
    from sqlanon.release.write import Target

    src_path = _csv(tmp_path, 90)
    monkeypatch.setattr(g, "GENERATE_BLOCK", 16)
    out = tmp_path / "gen.parquet"
    got = pipeline.run(connect(), Source.open(src_path, "csv"), seed=4, scores=False, risk=False, target=Target.from_options(output=str(out)))
    released = pq.read_table(out).to_pylist()
    engine = connect()
    enc = its.encode(engine, Source.open(src_path, "csv"), ["a0", "a1", "a2", "a3"])
    ct, _, _ = pipeline.build_code_table(engine, enc, 1, "all", pipeline.as_reporter(None))
    rows = g.generate(GeneratorModel.from_code_table(ct.itemsets, ct.usage, enc.item_column, 4, 0.001), enc.n_rows, seed=4)
    want = [{c: str(enc.item_labels[i]) for c, i in zip(enc.columns, r)} for r in rows.tolist()]

    def as_multiset(table: list[dict]) -> list[tuple]:  # DuckDB writes the blocks' chunks in parallel (insertion order off)
        return sorted(tuple(sorted(row.items())) for row in table)

    assert got["rows"] == 90 and as_multiset(released) == as_multiset(want)


def _nas_oracle(original: list[tuple], released: list[tuple]) -> float:
    """Definitions 1-2 by counting, row by row."""
    support: dict[tuple, int] = {}
    for r in original:
        support[r] = support.get(r, 0) + 1
    rel = set(released)
    as_p = as_o = 0.0
    for s in sorted(set(support.values())):
        ts = [t for t, n in support.items() if n == s]
        as_p += sum(t in rel for t in ts) / len(ts) / s
        as_o += 1.0 / s
    return as_p / as_o


def _patterns_oracle(rows: list[tuple], min_sup: int) -> dict[frozenset, int]:
    """Every frequent itemset ((column, value) pairs) by enumerating each row's subsets."""
    from itertools import combinations

    counts: dict[frozenset, int] = {}
    for r in rows:
        items = list(enumerate(r))
        for k in range(1, len(items) + 1):
            for sub in combinations(items, k):
                counts[frozenset(sub)] = counts.get(frozenset(sub), 0) + 1
    return {k: v for k, v in counts.items() if v >= min_sup}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_a_pure_python_oracle(tmp_path, seed):
    """NAS and the frequent-pattern comparison of a generated table against its original equal
    the pure-Python counts on the written rows."""
    import pyarrow.parquet as pq

    src = _csv(tmp_path, 60, seed=seed)
    out = tmp_path / "gen.parquet"
    got = run_generate(src, format="csv", seed=seed, min_sup=3, output=str(out), dissimilarity=False)
    lines = open(src).read().split()[1:]
    original = [tuple(line.split(",")) for line in lines]
    released = [tuple(r.values()) for r in pq.read_table(out).to_pylist()]
    assert got["nas"] == pytest.approx(_nas_oracle(original, released))
    po, pr = _patterns_oracle(original, 3), _patterns_oracle(released, 3)
    shared = [k for k in po if k in pr]
    assert got["original_itemsets"] == len(po) and got["released_itemsets"] == len(pr)
    assert got["pct_equal_itemsets"] == pytest.approx(100.0 * len(shared) / len(po))
    diff = sum(abs(po[k] / 60 - pr[k] / len(released)) for k in shared) / len(shared)
    assert got["avg_support_diff_pct"] == pytest.approx(100.0 * diff)
    new = [pr[k] / len(released) for k in pr if k not in po]
    assert got["avg_support_new_pct"] == pytest.approx(100.0 * sum(new) / len(new) if new else 0.0)


@pytest.mark.parametrize("seed", [5, 6])
def test_encode_codes_equals_encode_of_the_text(tmp_path, seed):
    """The scores' encoding of generated item ids equals the SQL encoding of the same rows as
    text: the same alphabet in the same order, the same distinct rows with the same counts."""
    import numpy as np

    from sqlanon.engine import connect
    from sqlanon.engine.source import Source
    from sqlanon.generation import itemsets as its
    from sqlanon.generation.pipeline import generated_arrow

    engine = connect()
    enc = its.encode(engine, Source.open(_csv(tmp_path, 80, seed=seed), "csv"), ["a0", "a1", "a2", "a3"])
    rnd = np.random.default_rng(seed)
    by_col = [np.nonzero(enc.item_column == c)[0] for c in range(4)]
    rows = np.stack([rnd.choice(ids[: max(1, len(ids) - 1)], 200) for ids in by_col], axis=1).astype(np.int32)  # some value never drawn
    got = its.encode_codes(engine, enc, rows)
    engine.register_arrow("gen_text", generated_arrow(enc, rows))
    want = its.encode(engine, Source(kind="table", table="gen_text"), ["a0", "a1", "a2", "a3"])
    assert got.item_labels == want.item_labels and got.item_column.tolist() == want.item_column.tolist()
    assert got.db.n_items == want.db.n_items < enc.db.n_items
    key = lambda db: sorted(zip(map(tuple, db.rows.tolist()), db.weights.tolist()))  # noqa: E731
    assert key(got.db) == key(want.db) and got.n_rows == 200


def test_code_table_deadline_leaves_the_rows_their_time():
    """Mining and KRIMP end at half the limit, or earlier when ROWS_SCANS input scans (scaled by
    the rows asked) would not fit after them; never before the start."""
    d = pipeline.code_table_deadline
    assert d(100.0, None, 1.0, 10, 10) is None
    assert d(100.0, 60.0, 1.0, 10, 10) == 130.0  # half of 60 s; 8 s of reserve fit
    assert d(100.0, 10.0, 1.0, 10, 10) == 102.0  # 10 - 8 x 1 s scan
    assert d(100.0, 10.0, 0.1, 70, 10) == pytest.approx(104.4)  # 7x the rows: 7 x 8 x 0.1 s
    assert d(100.0, 10.0, 1.0, 100, 10) == 100.0  # the rows alone need more than the limit


def test_no_time_for_a_code_table_still_writes_every_row(tmp_path, monkeypatch):
    """When the rows need the whole limit (ROWS_SCANS made huge), mining stops at once: the rows
    come from the standard code table, all of them, and are written."""
    monkeypatch.setattr(pipeline, "ROWS_SCANS", 1e9)
    out_path = tmp_path / "gen.parquet"
    got = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=600, output=str(out_path))
    assert got["stopped_in"] == "mining" and got["code_table_complete"] is False and got["code_table_size"] == 0
    assert got["rows"] == got["rows_asked"] == 150 and got["written"] is True and out_path.exists()
    monkeypatch.setattr(pipeline, "ROWS_SCANS", 0.0)
    free = run_generate(_csv(tmp_path), format="csv", seed=1, time_limit=600)
    assert free["stopped_in"] is None and free["code_table_complete"] is True and free["code_table_size"] > 0
