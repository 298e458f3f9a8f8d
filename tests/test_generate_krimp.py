"""KRIMP and the SQL itemset miner against brute force, and the reference code tables."""

from __future__ import annotations

import itertools
import math
import os
import random

import numpy as np
import pytest

from sqlanon.engine import connect
from sqlanon.generate import itemsets as its
from sqlanon.generate.krimp import WeightedDatabase, encoded_size_bruteforce, krimp
from sqlanon.source import Source

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
@pytest.mark.parametrize("seed", [1, 2])
def test_sql_miner_equals_enumeration(tmp_path, seed, closed):
    rows = _random_rows(seed, 40, [3, 2, 4, 3])
    engine = connect()
    src = Source.open(_csv(tmp_path, rows), "csv")
    enc = its.encode(engine, src, ["a0", "a1", "a2", "a3"])
    for min_sup in (1, 3):
        got = its.mine(engine, enc, min_sup, "closed" if closed else "all", min_length=1)
        labelled = {tuple((int(enc.item_column[i]), enc.item_labels[i]) for i in s): int(n) for s, n in zip(got.items, got.support)}
        want = _brute_itemsets(rows, min_sup, closed)
        assert labelled == want
        # item ids inside an itemset are sorted (lexicographic order is on sorted tuples)
        assert all(list(s) == sorted(s) for s in got.items)
    assert enc.n_rows == 40


def test_item_order_is_natural():
    assert sorted(["i10", "i2", "i1"], key=its.natural_key) == ["i1", "i2", "i10"]


# ---------------------------------------------------------------------------------------------
# brute-force KRIMP: the same definitions, one candidate at a time, full re-cover every time


def _brute_krimp(rows, cands, sups, item_sup):
    supports = {(i,): n for i, n in item_sup.items()}
    supports.update(zip(cands, sups))
    table = [(i,) for i in item_sup]

    def size(t):
        ct, d, usage = encoded_size_bruteforce(rows, t, supports)
        return ct + d, usage

    order = sorted(range(len(cands)), key=lambda k: (-sups[k], -len(cands[k]), cands[k]))
    cur, usage = size(table)
    for k in order:
        x = cands[k]
        if len(x) < 2:
            continue
        new, nu = size(table + [x])
        if not new < cur - 1e-9:
            continue
        table.append(x)
        prune = {y for y in table if len(y) > 1 and nu[y] < usage.get(y, 0)}
        cur, usage = new, nu
        rank = {y: (-len(y), -supports[y], y) for y in table}
        while prune:
            p = min(prune, key=lambda y: (usage[y], rank[y]))
            prune.discard(p)
            if usage[p] == 0:
                table.remove(p)
                continue
            t2 = [y for y in table if y != p]
            new, nu = size(t2)
            if new < cur - 1e-9:
                prune |= {y for y in t2 if len(y) > 1 and nu[y] < usage[y]}
                table, cur, usage = t2, new, nu
    return {y for y in table if len(y) > 1 and usage[y] > 0}, cur


@pytest.mark.parametrize("seed", [3, 4, 5, 6])
def test_krimp_equals_bruteforce(tmp_path, seed):
    rows = _random_rows(seed, 30, [3, 3, 2, 4])
    engine = connect()
    enc = its.encode(engine, Source.open(_csv(tmp_path, rows), "csv"), ["a0", "a1", "a2", "a3"])
    cands = its.mine(engine, enc, 1, "all")
    ct = krimp(enc.db, cands.items, cands.support)
    # the database as item ids, one row per row (expanded from the weighted frequency set)
    item_rows = [tuple(r) for r, w in zip(enc.db.rows.tolist(), enc.db.weights.tolist()) for _ in range(w)]
    item_sup = {i: int(s) for i, s in enumerate(enc.db.item_support())}
    want, want_size = _brute_krimp(item_rows, cands.items, cands.support.tolist(), item_sup)
    got = {s for s, u in zip(ct.itemsets, ct.usage) if len(s) > 1 and u > 0}
    assert got == want
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
    "name,cands,size,lpct,bits",
    [("iris", "all", 13, 45.65, (1475, 3231)), ("pima", "closed", 50, 34.30, (9199, 26822))],
)
def test_reference_code_tables(name, cands, size, lpct, bits):
    engine = connect()
    src = Source.open(os.path.join(UCI, f"{name}.csv"), "csv")
    enc = its.encode(engine, src, src.column_names(engine))
    c = its.mine(engine, enc, 1, cands)
    ct = krimp(enc.db, c.items, c.support)
    assert ct.non_singletons == size
    assert round(ct.compression_ratio, 2) == lpct
    assert (round(ct.total_bits), round(ct.standard_bits)) == bits
