"""Flexible cuts (sqlanon.search.genetic.cut): the paper's Figure 1/5 taxonomy and chromosome bits, repair, intervals."""

from __future__ import annotations

import itertools
import random

import pytest

from sqlanon.search.genetic.cut import IntervalCoder, Layout, TreeCoder, recoding_from_transformation
from sqlanon.errors import ConfigError
from sqlanon.hierarchy.model import Hierarchy

# Figure 1: leaves left to right are the in-order traversal
WORK = [
    ["Self-emp-inc", "Self-employed", "*"],
    ["Self-emp-not-inc", "Self-employed", "*"],
    ["Federal-gov", "Government", "*"],
    ["State-gov", "Government", "*"],
    ["Local-gov", "Government", "*"],
    ["Private", "Private", "*"],
    ["Without-pay", "Unemployed", "*"],
    ["Never-worked", "Unemployed", "*"],
]


def all_bits(n):
    return [list(b) for b in itertools.product([0, 1], repeat=n)]


def test_figure5_bits():
    c = TreeCoder(Hierarchy("workclass", WORK))
    assert c.nbits == 7  # D - 1 bits for D = 8 leaves
    assert [WORK[leaf][0] for leaf in c.order] == [r[0] for r in WORK]
    valid = [b for b in all_bits(7) if c.is_valid(b)]
    # b3 (between Federal and State, index 2) set forces b2, b4, b5, b6
    for b in valid:
        if b[2]:
            assert b[1] and b[3] and b[4] and b[5]
    # and the paper's example cut is valid
    cut = ["Self-employed", "Federal-gov", "State-gov", "Local-gov", "Private", "Unemployed"]
    bits = c.bits_from_labels(cut)
    assert bits == [0, 1, 1, 1, 1, 1, 0]
    assert c.labels_of(bits) == cut
    # the number of valid cuts of this tree: root, or any choice per child (2*2*1*2 + ... )
    # children of the root: Self-employed (2 ways), Government (2), Private (1), Unemployed (2) -> 8, plus root
    assert len(valid) == 9
    # b3 alone: the nearest valid cut drops it (1 flip) rather than adding b2, b4, b5, b6 (4 flips)
    assert c.repair([0, 0, 1, 0, 0, 0, 0]) == [0] * 7


def test_lm_loss_of_state_government_is_2_over_7():
    c = TreeCoder(Hierarchy("workclass", WORK))
    groups = c.groups(c.bits_from_labels(["Self-employed", "Government", "Private", "Unemployed"]))
    loss = {label: l for label, l, _ in groups}
    assert loss["Government"] == pytest.approx(2 / 7)
    assert loss["Private"] == 0.0


def test_education_interval_loss_2_over_15():
    # Figure 3: Doctorate = 1 ... Preschool = 16; {Doctorate, Masters} = [1, 3]
    h = Hierarchy("education", [[str(v), "*"] for v in range(1, 17)], numeric=True)
    c = IntervalCoder(h)
    assert c.nbits == 15
    bits = [0] * 15
    bits[2] = 1  # end point between 3 and 4
    groups = c.groups(bits)
    assert groups[0][0] == "[1, 3]"
    assert groups[0][1] == pytest.approx(2 / 15)
    assert groups[1][0] == "[4, 16]"


def random_tree(rng: random.Random, leaves: int, depth: int) -> Hierarchy:
    # build a proper tree: groups nested level by level
    rows = [[f"v{i}"] for i in range(leaves)]
    labels = list(range(leaves))
    for level in range(1, depth):
        n_groups = max(1, len(set(labels)) // rng.choice([2, 3]))
        mapping = {}
        distinct = sorted(set(labels))
        for j, lab in enumerate(distinct):
            mapping[lab] = min(j * n_groups // len(distinct), n_groups - 1) if rng.random() < 0.7 else rng.randrange(n_groups)
        # keep it a tree: a child maps to one parent (mapping is a function), parents may be empty
        labels = [mapping[lab] for lab in labels]
        for r, lab in zip(rows, labels):
            r.append(f"L{level}_{lab}")
    for r in rows:
        r.append("*")
    rng.shuffle(rows)
    return Hierarchy("x", rows)


def hamming(a, b):
    return sum(x != y for x, y in zip(a, b))


@pytest.mark.parametrize("seed", range(12))
def test_repair_is_valid_and_nearest(seed):
    rng = random.Random(seed)
    h = random_tree(rng, rng.randint(2, 9), rng.randint(1, 3))
    c = TreeCoder(h)
    valid = [b for b in all_bits(c.nbits) if c.is_valid(b)]
    assert valid
    for _ in range(30):
        bits = [rng.randint(0, 1) for _ in range(c.nbits)]
        fixed = c.repair(bits)
        assert c.is_valid(fixed)
        assert hamming(bits, fixed) == min(hamming(bits, v) for v in valid)
    for v in valid:
        assert c.repair(v) == v
        # every leaf has exactly one ancestor in the cut
        labels = set(c.labels_of(v))
        for row in h.rows:
            assert len(labels & set(row)) == 1


def test_unused_leaves_are_pruned_but_mapped():
    h = Hierarchy("workclass", WORK)
    freq = [5, 5, 5, 5, 5, 5, 5, 0]  # Never-worked holds no row
    c = TreeCoder(h, freq)
    assert c.nbits == 6
    bits = c.bits_from_labels(["Self-emp-inc", "Self-emp-not-inc", "Government", "Private", "Without-pay"])
    groups = c.groups(bits)
    by_leaf = {leaf: label for label, _, leaves in groups for leaf in leaves}
    # Never-worked goes to the root: its nearest used ancestor (Unemployed) is not in the cut
    assert by_leaf[7] == "*"
    # Unemployed is left with one used child: the chain is released by its lowest node
    with pytest.raises(ConfigError):
        c.bits_from_labels(["Self-employed", "Government", "Private", "Unemployed"])
    bits = c.bits_from_labels(["Self-employed", "Government", "Private", "Without-pay"])
    by_leaf = {leaf: label for label, _, leaves in c.groups(bits) for leaf in leaves}
    assert by_leaf[7] == "*" and by_leaf[0] == "Self-employed"
    # without pruning every leaf has a bit and Unemployed is a node of the cut
    c = TreeCoder(h, freq, prune_unused=False)
    bits = c.bits_from_labels(["Self-employed", "Government", "Private", "Unemployed"])
    by_leaf = {leaf: label for label, _, leaves in c.groups(bits) for leaf in leaves}
    assert by_leaf[7] == "Unemployed"


def test_numeric_discretization_and_roundtrip():
    h = Hierarchy("n", [[str(v), "*"] for v in range(100)], numeric=True)
    c = IntervalCoder(h, [1] * 100, max_endpoints=9)
    assert c.nbits == 9
    bits = [1, 0, 1, 0, 0, 0, 0, 0, 1]
    labels = c.labels_of(bits)
    assert c.bits_from_labels(labels) == bits
    ivs = c.intervals(bits)
    assert ivs[0][0] == 0 and ivs[-1][1] == 99
    assert all(a[1] < b[0] for a, b in zip(ivs, ivs[1:]))


def test_layout_transformation_roundtrip_and_recoding():
    rng = random.Random(3)
    hs = [Hierarchy("w", WORK), Hierarchy("n", [[str(v), "*"] for v in (3, 1, 2, 10, 7)], numeric=True)]
    layout = Layout.build(["w", "n"], hs, [[1] * 8, [1] * 5])
    for _ in range(20):
        bits = layout.repair([rng.randint(0, 1) for _ in range(layout.nbits)])
        t = layout.transformation(bits)
        assert layout.bits_from_transformation(t) == bits
        rec = layout.recoding(bits)
        back = recoding_from_transformation(t, ["w", "n"], hs)
        assert [rec.values(i) for i in range(2)] == [back.values(i) for i in range(2)]


def test_invalid_transformation_is_rejected():
    hs = [Hierarchy("w", WORK)]
    with pytest.raises(ConfigError):
        recoding_from_transformation({"w": ["Government", "State-gov", "*"]}, ["w"], hs)
    c = TreeCoder(hs[0])
    with pytest.raises(ConfigError):
        c.bits_from_labels(["Self-employed", "Government"])


def test_bottom_up_repair_dp_equals_the_recursive_one():
    """The repair's prefix-sum DP (``_best_cut``) picks the same cut as the recursive tree DP
    (``_best``) on random trees, bit strings and kept (mutated) bits, unused leaves included."""
    import random as _random

    from sqlanon.search.genetic.cut import TreeCoder as _TreeCoder
    from sqlanon.hierarchy.model import Hierarchy as _Hierarchy

    rng = _random.Random(0)
    for _ in range(120):
        d = rng.choice([3, 8, 20, 64])
        w1 = rng.choice([2, 3, 4])
        w2 = w1 * rng.choice([2, 3])
        rows = [[str(v), f"{v // w1}", f"{v // w2}", "*"] for v in range(d)]
        coder = _TreeCoder(_Hierarchy("a", rows), [rng.choice([0, 1, 2]) for _ in range(d)])
        for _ in range(10):
            bits = tuple(int(rng.random() < rng.random()) for _ in range(coder.nbits))
            weight = [1] * coder.nbits
            for j in rng.sample(range(coder.nbits), min(coder.nbits, rng.randint(0, 2))):
                weight[j] = coder.nbits + 1
            recursive: list[int] = []
            coder._best(coder.root, (bits, weight), recursive)
            assert sorted(coder._best_cut(bits, weight)) == sorted(recursive), (rows, bits)
