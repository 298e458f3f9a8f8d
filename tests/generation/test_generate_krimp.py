"""KRIMP and the SQL itemset miner against brute force, and the reference code tables."""

from __future__ import annotations

import itertools
import math
import os
import random

import numpy as np
import pytest

from sqlanon.engine import connect
from sqlanon.generation import itemsets as its
from sqlanon.generation.krimp import WeightedDatabase, encoded_size_bruteforce, krimp
from sqlanon.engine.source import Source

from conftest import SHARED  # noqa: E402

UCI = os.path.join(SHARED, "datasets", "uci-krimp")


def _csv(tmp_path, rows, name="t.csv"):
    path = tmp_path / name
    m = len(rows[0])
    path.write_text(",".join(f"a{j}" for j in range(m)) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    return str(path)


def _random_rows(seed, n, domains):
    rnd = random.Random(seed)
    # correlated: a few "patterns" repeated, plus noise
    proto = [[rnd.randrange(d) for d in domains] for _ in range(3)]
    out = []
    for _ in range(n):
        base = list(rnd.choice(proto))
        for j, d in enumerate(domains):
            if rnd.random() < 0.3:
                base[j] = rnd.randrange(d)
        out.append([f"v{j}_{x}" for j, x in enumerate(base)])
    return out


def _brute_itemsets(rows, min_sup, closed):
    """Every (column, value) itemset with its support, by enumeration."""
    m = len(rows[0])
    sup = {}
    for r in rows:
        for k in range(1, m + 1):
            for S in itertools.combinations(range(m), k):
                key = tuple((j, r[j]) for j in S)
                sup[key] = sup.get(key, 0) + 1
    freq = {k: s for k, s in sup.items() if s >= min_sup}
    if closed:
        def is_closed(k):
            cols = {j for j, _ in k}
            for j in range(m):
                if j in cols:
                    continue
                vals = {r[j] for r in rows if all(r[c] == v for c, v in k)}
                if len(vals) == 1:
                    return False
            return True
        freq = {k: s for k, s in freq.items() if is_closed(k)}
    return freq


@pytest.mark.parametrize("closed", [False, True])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_miner_equals_enumeration(tmp_path, seed, closed):
    """The compiled miner (closed: LCM's closure extension) against enumerating every itemset of
    every row and keeping the closed ones by their definition."""
    domains = [3, 2, 4, 3] if seed < 3 else [2, 3, 2, 4, 2, 3]
    rows = _random_rows(seed, 40 + 10 * seed, domains)
    engine = connect()
    cols = [f"a{j}" for j in range(len(domains))]
    src = Source.open(_csv(tmp_path, rows), "csv")
    enc = its.encode(engine, src, cols)
    for min_sup in (1, 2, 3, 7):
        got = its.mine(engine, enc, min_sup, "closed" if closed else "all", min_length=1)
        labelled = {tuple((int(enc.item_column[i]), enc.item_labels[i]) for i in s): int(n) for s, n in zip(got.items, got.support)}
        want = _brute_itemsets(rows, min_sup, closed)
        assert labelled == want
        assert len(got.items) == len(set(got.items))  # each itemset once
        # item ids inside an itemset are sorted (lexicographic order is on sorted tuples)
        assert all(list(s) == sorted(s) for s in got.items)
        two = its.mine(engine, enc, min_sup, "closed" if closed else "all", min_length=2, max_length=3)
        assert two.as_dict() == {k: n for k, n in got.as_dict().items() if 2 <= len(k) <= 3}
    assert enc.n_rows == len(rows)


def test_item_order_is_natural():
    assert sorted(["i10", "i2", "i1"], key=its.natural_key) == ["i1", "i2", "i10"]


# ---------------------------------------------------------------------------------------------
# brute-force KRIMP: the same definitions, one candidate at a time, full re-cover every time, and
# the authors' pruning as their C++ does it (Algo::PrunePostAccept, CCCPCodeTable)


def _bubble_after(plist, start, usage):
    """The authors' SortPostPruneList: a bubble pass per start position, stopping at the first
    pass without a swap (so not always a full sort)."""
    if start >= len(plist) - 1:
        return
    for a in range(start, len(plist) - 1):
        changed = False
        for b in range(a, len(plist) - 1):
            if usage[plist[b]] > usage[plist[b + 1]]:
                plist[b], plist[b + 1] = plist[b + 1], plist[b]
                changed = True
        if not changed:
            break


def _brute_krimp(rows, cands, sups, item_sup):
    supports = {(i,): n for i, n in item_sup.items()}
    supports.update(zip(cands, sups))
    singles = [(i,) for i in item_sup]

    def size(t):
        ct, d, usage = encoded_size_bruteforce(rows, t + singles, supports)
        return ct + d, usage

    order = sorted(range(len(cands)), key=lambda k: (-sups[k], -len(cands[k]), cands[k]))
    table: list[tuple] = []  # non-singletons in cover order: length desc, then insertion order
    cur, usage = size(table)
    for k in order:
        x = cands[k]
        if len(x) < 2:
            continue
        pos = sum(1 for y in table if len(y) >= len(x))
        t2 = table[:pos] + [x] + table[pos:]
        new, nu = size(t2)
        if not new < cur - 1e-7:
            continue
        before = usage
        table, cur, usage = t2, new, nu
        plist = [y for y in table[pos + 1 :] if usage[y] < before[y]]  # in code-table order
        i = 0
        while i < len(plist):
            p = plist[i]
            if usage[p] == 0:
                table.remove(p)
            else:
                q = table.index(p)
                t3 = table[:q] + table[q + 1 :]
                new, nu = size(t3)
                if new <= cur + 1e-7:
                    before = usage
                    table, cur, usage = t3, new, nu
                    _bubble_after(plist, i + 1, usage)
                    for y in table[q + 1 :]:  # the removed one's successor is not looked at
                        if usage[y] < before[y] and y not in plist[i + 1 :]:
                            j = i + 1
                            while j < len(plist) and usage[plist[j]] <= usage[y]:
                                j += 1
                            plist.insert(j, y)
            i += 1
    return table, usage, cur


@pytest.mark.parametrize("seed", [3, 4, 5, 6, 7, 8, 9, 10])
def test_krimp_equals_bruteforce(tmp_path, seed):
    rows = _random_rows(seed, 30 + 5 * (seed % 4), [3, 3, 2, 4, 2][: 4 + seed % 2])
    engine = connect()
    cols = [f"a{j}" for j in range(len(rows[0]))]
    enc = its.encode(engine, Source.open(_csv(tmp_path, rows), "csv"), cols)
    cands = its.mine(engine, enc, 1, "all")
    ct = krimp(enc.db, cands)
    # the database as item ids, one row per row (expanded from the weighted frequency set)
    item_rows = [tuple(r) for r, w in zip(enc.db.rows.tolist(), enc.db.weights.tolist()) for _ in range(w)]
    item_sup = {i: int(s) for i, s in enumerate(enc.db.item_support())}
    want, want_usage, want_size = _brute_krimp(item_rows, cands.items, cands.support.tolist(), item_sup)
    got = [s for s in ct.itemsets if len(s) > 1]
    assert got == want  # the same elements in the same cover order (zero-usage ones included)
    assert [int(u) for s, u in zip(ct.itemsets, ct.usage) if len(s) > 1] == [want_usage[s] for s in want]
    assert ct.total_bits == pytest.approx(want_size, rel=1e-12)
    # sizes and usages of the final table recomputed from first principles
    supports = {(i,): n for i, n in item_sup.items()}
    supports.update(zip(cands.items, cands.support.tolist()))
    t, d, usage = encoded_size_bruteforce(item_rows, [s for s in ct.itemsets], supports)
    assert (t, d) == (pytest.approx(ct.table_bits), pytest.approx(ct.data_bits))
    assert all(usage[s] == u for s, u in zip(ct.itemsets, ct.usage.tolist()))
    assert ct.non_singletons >= 1  # the data is correlated: something compresses


def test_standard_size_by_hand():
    # two columns, rows (x, y) x3 and (x, z) x1: ST lengths -log2(4/8), -log2(3/8), -log2(1/8)
    db = WeightedDatabase(np.array([[0, 1], [0, 2]]), np.array([3, 1]), np.array([0, 1, 1]))
    ct = krimp(db, [], [])
    lx, ly, lz = 1.0, -math.log2(3 / 8), 3.0
    assert ct.standard_data_bits == pytest.approx(4 * lx + 3 * ly + lz)
    assert ct.standard_table_bits == pytest.approx(2 * (lx + ly + lz))
    assert ct.compression_ratio == pytest.approx(100.0)


@pytest.mark.skipif(not os.path.isdir(UCI), reason="uci-krimp data not present")
@pytest.mark.parametrize(
    "name,cands,min_sup,n_cands,size,lpct,bits",
    [
        ("iris", "all", 1, None, 13, 45.65, (1475, 3231)),
        ("pima", "all", 1, None, 58, 34.09, None),
        ("pima", "closed", 1, None, 50, 34.30, (9199, 26822)),
        ("led7", "all", 1, None, 152, 28.53, None),
        ("nursery", "all", 1, None, 260, 45.47, None),
        ("mushroom", "closed", 20, 109_304, 202, 24.96, (277_931, 1_113_312)),
    ],
)
def test_reference_code_tables(name, cands, min_sup, n_cands, size, lpct, bits):
    """The code tables of the KRIMP authors' C++ (the data's README): elements, L% and bits."""
    engine = connect()
    src = Source.open(os.path.join(UCI, f"{name}.csv"), "csv")
    enc = its.encode(engine, src, src.column_names(engine))
    c = its.mine(engine, enc, min_sup, cands, min_length=1)
    if n_cands is not None:
        assert len(c) == n_cands  # the reference counts every closed itemset, singletons too
    ct = krimp(enc.db, c)
    assert ct.non_singletons == size
    assert round(ct.compression_ratio, 2) == lpct
    if bits is not None:
        assert (round(ct.total_bits), round(ct.standard_bits)) == bits


# ---------------------------------------------------------------------------------------------
# time limit, progress, pattern comparison in arrays


def test_time_limit_returns_the_code_table_so_far(tmp_path, monkeypatch):
    """With a clock past the deadline after a few slices, KRIMP stops and its code table is exactly
    KRIMP's over the candidates it got to (in candidate order), labelled as cut short."""
    from sqlanon.generation.krimp import candidate_permutation
    from sqlanon.search import limits

    rows = _random_rows(11, 60, [3, 3, 2, 4, 3])
    engine = connect()
    enc = its.encode(engine, Source.open(_csv(tmp_path, rows), "csv"), [f"a{j}" for j in range(5)])
    cands = its.mine(engine, enc, 1, "all")
    full = krimp(enc.db, cands)
    assert not full.time_limited and full.candidates_tried == full.candidates_total
    t = [0.0]

    def clock():  # every read moves the clock on by 1 s
        t[0] += 1.0
        return t[0]

    monkeypatch.setattr(limits, "clock", clock)
    cut = krimp(enc.db, cands, deadline=limits.now() + 2.5)  # the check before the sort, one slice, then past it
    assert cut.time_limited and 0 < cut.candidates_tried < cut.candidates_total
    c = cands.candidates
    order = candidate_permutation(c)
    order = order[c.lengths[order] > 1][: cut.candidates_tried]
    prefix = krimp(enc.db, c.select(order))
    assert not prefix.time_limited
    assert prefix.itemsets == cut.itemsets and prefix.usage.tolist() == cut.usage.tolist()
    assert prefix.total_bits == pytest.approx(cut.total_bits)


def test_generate_time_limit_labelled(tmp_path, monkeypatch):
    """``generate --time-limit``: rows come from the code table so far, the JSON says so, and the
    message says so too."""
    from sqlanon.cli.generate import run_generate
    from sqlanon.search import limits

    path = _csv(tmp_path, _random_rows(12, 80, [3, 3, 2, 4, 3]))
    t = [0.0]

    def clock():
        t[0] += 1.0
        return t[0]

    monkeypatch.setattr(limits, "clock", clock)
    said: list[str] = []
    out = run_generate(path, format="csv", seed=1, time_limit=3, progress=said.append, dissimilarity=False)
    assert out["stopped_by"] == "time_limit" and out["code_table_complete"] is False
    assert any("time limit" in m for m in said)
    monkeypatch.undo()
    done = run_generate(path, format="csv", seed=1, progress=said.append, dissimilarity=False)
    assert done["stopped_by"] is None and done["code_table_complete"] is True
    assert done["candidates_considered"] == done["candidate_count"]
    with pytest.raises(Exception, match="--time-limit"):
        run_generate(path, format="csv", time_limit=0)


def test_progress_messages_off_a_terminal(tmp_path, monkeypatch):
    """Off a terminal, long phases report at most every few seconds: mining (branches and
    itemsets so far) and KRIMP (candidates of total, code-table size, bits so far)."""
    from sqlanon.generation import pipeline

    monkeypatch.setattr(pipeline, "PROGRESS_EVERY", 0.0)
    said: list[str] = []
    pipeline.run(connect(), Source.open(_csv(tmp_path, _random_rows(13, 80, [3, 3, 2, 4])), "csv"), seed=1, progress=said.append, scores=False, risk=False)
    assert any(m.startswith("mining: ") and "itemsets so far" in m for m in said)
    assert any(m.startswith("krimp: ") and " candidates, " in m and "bits (L% " in m for m in said)


@pytest.mark.parametrize("seed", [21, 22])
def test_pattern_comparison_arrays_equal_dicts(tmp_path, seed):
    """The frequent-pattern comparison on integer matrices equals the one on labelled dicts,
    with a released table whose values the original partly lacks."""
    from sqlanon.generation.scores import compare_tables, labelled, pattern_comparison

    a = _random_rows(seed, 50, [3, 3, 2, 4])
    b = _random_rows(seed + 100, 40, [4, 3, 2, 4])  # v0_3 never occurs in a
    engine = connect()
    cols = ["a0", "a1", "a2", "a3"]
    sa, sb = Source.open(_csv(tmp_path, a, "a.csv"), "csv"), Source.open(_csv(tmp_path, b, "b.csv"), "csv")
    got = compare_tables(engine, sb, sa, cols, 2, dissimilarity_measure=False)
    ea, eb = its.encode(engine, sa, cols), its.encode(engine, sb, cols)
    want = pattern_comparison(labelled(ea, its.mine(engine, ea, 2, "all", min_length=1)), 50,
                              labelled(eb, its.mine(engine, eb, 2, "all", min_length=1)), 40)
    for k, v in want.items():
        assert got[k] == pytest.approx(v), k


def test_generate_time_limit_shares_between_code_table_and_rows(tmp_path, monkeypatch):
    """The run's --time-limit counts from its start: mining and KRIMP stop at half of it, the
    generation at all of it (after its first block); a generation the limit cuts short writes
    nothing (no output file, ``written`` false) and says which phase stopped and what was kept."""
    from sqlanon.cli.generate import run_generate
    from sqlanon.search import limits
    from sqlanon.generation import generator, pipeline

    path = _csv(tmp_path, _random_rows(5, 120, [3, 3, 2, 4, 3]))
    t = [100.0]
    monkeypatch.setattr(limits, "clock", lambda: t[0])
    seen: dict = {}
    build = pipeline.build_code_table

    def timed_build(*args, **kwargs):
        seen["code_table_deadline"] = kwargs["deadline"]
        out = build(*args, **kwargs)
        t[0] += 3.0  # mining and KRIMP took 3 s of the fake clock
        return out

    monkeypatch.setattr(pipeline, "build_code_table", timed_build)
    monkeypatch.setattr(generator, "GENERATE_BLOCK", 100)
    blocks = generator._generate_block

    def timed_block(*args, **kwargs):
        t[0] += 3.0  # each block of 100 rows takes 3 s
        return blocks(*args, **kwargs)

    monkeypatch.setattr(generator, "_generate_block", timed_block)
    said: list[str] = []
    target = tmp_path / "gen.csv"
    out = run_generate(path, format="csv", seed=1, rows=1000, time_limit=10, progress=said.append, dissimilarity=False, output=str(target))
    assert seen["code_table_deadline"] == pytest.approx(100.0 + 5.0)
    # 3 s of code table, then blocks ending at 6, 9, 12 s: the third block ends past the 10 s limit
    assert out["rows"] == 300 and out["rows_asked"] == 1000 and out["stopped_by"] == "time_limit"
    assert out["stopped_in"] == "generate" and out["written"] is False and out["output"] is None
    assert out["code_table_complete"] is True  # the code table itself was finished
    assert "nas" not in out and "risk" not in out  # no phase after the one stopped ran
    assert not target.exists() and not list(tmp_path.glob("gen*"))
    assert any("generate phase" in m and "300 of 1,000 rows generated" in m for m in said)


def test_past_the_deadline_krimp_does_not_sort_the_candidates(tmp_path, monkeypatch):
    """A deadline already past when KRIMP starts: the standard code table, and the candidates are
    never put in KRIMP's order (that sort takes seconds at 2M candidates); the code table says how
    many candidates it did not try."""
    from sqlanon.generation import krimp as kr
    from sqlanon.search import limits

    rows = _random_rows(12, 60, [3, 3, 2, 4])
    engine = connect()
    enc = its.encode(engine, Source.open(_csv(tmp_path, rows), "csv"), [f"a{j}" for j in range(4)])
    cands = its.mine(engine, enc, 1, "all")
    monkeypatch.setattr(limits, "clock", lambda: 10.0)
    sorted_: list[int] = []
    real = kr.candidate_permutation
    monkeypatch.setattr(kr, "candidate_permutation", lambda c: (sorted_.append(len(c)), real(c))[1])
    cut = krimp(enc.db, cands, deadline=5.0)
    assert sorted_ == [0] and cut.time_limited and cut.candidates_tried == 0
    assert cut.candidates_total == int((cands.candidates.lengths > 1).sum()) > 0
    assert all(len(s) == 1 for s in cut.itemsets) and cut.total_bits == pytest.approx(cut.standard_bits)
