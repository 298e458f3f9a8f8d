"""The lattice's cones as boxes of the grid of levels (``Lattice.cone``): every node's box of
generalizations and of specializations holds exactly the nodes of its ``above`` and ``below``
masks (which compare every node), on random hierarchies with and without level bounds."""

from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402


@pytest.mark.parametrize("seed", range(4))
def test_cone_boxes_are_the_above_and_below_masks(seed, tmp_path):
    np = pytest.importorskip("numpy")
    rng = random.Random(9901 * seed + 3)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(30, 80), depths=[rng.randint(1, 3) for _ in range(3)])
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        full = [(0, h.max_level) for h in stats.hierarchies]
        bounded = [(rng.randint(0, hi), hi) for _, hi in full]
        bounded = [(lo, rng.randint(lo, hi)) for lo, hi in bounded]
        for bounds in (full, bounded):
            lattice = Lattice(stats, Requirement([KAnonymity(2)], budget=0), METRICS["precision"](), bounds=bounds)
            for idx in range(len(lattice)):
                node = lattice.node(idx)
                for up, mask in ((True, lattice.above(idx)), (False, lattice.below(idx))):
                    marks = np.zeros(len(lattice), dtype=np.int8)
                    lattice.cone(marks, node, up)[...] = 1
                    assert (marks.astype(bool) == mask).all(), (bounds, node, up)
                    expect = [j for j in range(len(lattice)) if all((a >= b) if up else (a <= b) for a, b in zip(lattice.node(j), node))]
                    assert np.flatnonzero(marks).tolist() == expect
            # prune_above leaves the node itself as it was, its strict generalizations pruned
            idx = rng.randrange(len(lattice))
            lattice.prune_above(idx)
            strict = lattice.above(idx)
            strict[idx] = False
            assert (lattice.pruned == strict).all()
    finally:
        engine.close()
