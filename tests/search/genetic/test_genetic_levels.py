"""The genetic search on the lattice's moves (issue 44): a banded numeric QI's coarse levels are
cuts of its chromosome (their band edges are potential end points), and the level mutation sets
one QI of a child to one of its full-domain levels (ARX's GA mutation).

Checked: every band edge of a level with at most ``max_endpoints`` edges is an end point, so a
full-domain node's chromosome releases exactly the node's bands; level-mutated children are
valid and carry a level part; ``level_mutation`` 0 draws nothing (the run is the one without the
operator); a bad rate is refused naming the option; a seeded run with the operator on is
deterministic and never worse than its seed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sqlanon.errors import ConfigError
from sqlanon.hierarchy.builders import numeric_bands
from sqlanon.search.genetic import planner
from sqlanon.search.genetic.cut import IntervalCoder, Layout
from sqlanon.search.genetic.seeding import level_parts, node_chromosome


def banded(n=900, widths=(10, 100, 300), seed=1):
    rng = random.Random(seed)
    values = sorted({rng.randrange(3000) for _ in range(n)})
    h = numeric_bands([str(v) for v in values], [str(w) for w in widths], "x")
    return h, [rng.randint(1, 4) for _ in values]


def test_coarse_levels_are_cuts_of_the_chromosome():
    h, freq = banded()
    coder = IntervalCoder(h, freq, max_endpoints=32)
    layout = Layout(["x"], [coder])
    for level in range(h.max_level + 1):
        group = h.leaf_to_level(level)
        n_bands = len(set(group))
        bits = node_chromosome(layout, [h], (level,))
        codes, _, _ = coder.group_arrays(bits)
        if n_bands - 1 <= 32:  # every edge is an end point: the node's bands exactly
            pairs = set(zip(codes.tolist(), group))
            assert len(pairs) == n_bands == len(set(codes.tolist()))
    assert coder.nbits > 32  # the quantization's end points and the coarse levels' edges


def test_level_mutation_sets_a_qi_to_a_level():
    h, freq = banded()
    h2, freq2 = banded(seed=2, widths=(50, 500))
    coders = [IntervalCoder(h, freq, max_endpoints=16), IntervalCoder(h2, freq2, max_endpoints=16)]
    layout = Layout(["x", "y"], coders)
    ga = planner.GA.__new__(planner.GA)
    ga.layout, ga.opts, ga.rng = layout, {"level_mutation": 1.0}, np.random.default_rng(0)
    ga.level_parts = level_parts(layout, [h, h2])
    child = tuple(int(b) for b in np.random.default_rng(1).random(layout.nbits) < 0.5)
    hit = 0
    for _ in range(50):
        got = ga.level_mutate(child)
        assert layout.is_valid(got) and len(got) == len(child)
        parts = layout.split(got)
        changed = [i for i, (a, b) in enumerate(zip(parts, layout.split(child))) if a != b]
        assert len(changed) <= 1
        for i in changed:
            assert parts[i] in ga.level_parts[i]
            hit += 1
    assert hit
    ga.opts = {"level_mutation": 0.0}
    state = ga.rng.bit_generator.state
    assert ga.level_mutate(child) == child and ga.rng.bit_generator.state == state  # no draw


def test_level_mutation_is_checked():
    with pytest.raises(ConfigError, match="level_mutation"):
        planner.parse_options({"level_mutation": 1.5})


def test_a_run_with_level_mutation_is_deterministic_and_never_worse_than_its_seed(tmp_path):
    import sqlanon
    from test_lightning import wide_table

    data, qi, _, _ = wide_table(tmp_path, n_qi=12, n_rows=300, seed=8)
    runs = [sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=4, max_suppression=0.1, metric="loss", search="genetic", dry_run=True,
                              search_options={"step_limit": 500, "seed": 3, "level_mutation": 0.5, "iterations": 10**6}) for _ in range(2)]
    assert runs[0].transformation == runs[1].transformation and runs[0].metric.value == runs[1].metric.value
    assert runs[0].metric.value <= runs[0].extra["seed_node"]["value"] + 1e-12


def test_level_mutation_from_the_cli(tmp_path):
    import json

    from typer.testing import CliRunner

    from sqlanon.cli.app import app
    from test_lightning import wide_table

    data, qi, _, _ = wide_table(tmp_path, n_qi=12, n_rows=300, seed=8)
    args = ["anonymize", "--keep-others", "-i", data, *[a for q in qi for a in ("--qi", q)], "--k", "4", "--max-suppression", "0.1",
            "--metric", "loss", "--search", "genetic", "--step-limit", "300", "--seed", "2", "--dry-run", "--json", "-q"]
    ok = CliRunner().invoke(app, [*args, "--option", "level_mutation=0.5"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["search"] == "genetic"
    bad = CliRunner().invoke(app, [*args, "--option", "level_mutation=2"])
    first = bad.output.strip().splitlines()[0]
    assert bad.exit_code != 0 and first.startswith("error:") and "level_mutation" in first
