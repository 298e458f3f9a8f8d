"""The genetic search optimizes the lattice's share metrics and starts from the lattice's best node
(issue 44).

* ARX's Loss (``loss``, geometric mean), its arithmetic mean (``loss-arithmetic``) and
  ``granularity``: the genetic result's metric value equals the metric computed in plain Python
  from the released file (every row's released label, the share of its hierarchy's leaves it
  covers), by SQL and in-process; the release passes the independent k check;
* seeded: the population starts from lightning's best node (a lattice too large for the optimal
  search) or the optimal search's (a small one), so the genetic result is never worse than that
  search's on the same metric;
* the metrics defined by levels or class sizes are refused before anything runs, naming them.
"""

from __future__ import annotations

import math
import os
import random
import sys
import paths

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from checker import check_k, read_rows  # noqa: E402
from test_packed_keys import wide_table  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.errors import ConfigError  # noqa: E402
from sqlanon.search.genetic import seeding  # noqa: E402

QIS = ["a", "b", "c", "d"]


def _tree(path, leaves: int, fanout: list[int]) -> tuple[str, list[list[str]]]:
    """An ARX CSV hierarchy over leaves ``{name}0..``: groups of each fanout (labels unique across
    levels), then ``*``."""
    name = os.path.basename(path)[0]
    rows = []
    for v in range(leaves):
        row = [f"{name}{v}"]
        for level, f in enumerate(fanout, start=1):
            row.append(f"{name}L{level}_{v // f}")
        row.append("*")
        rows.append(row)
    with open(path, "w") as fh:
        fh.write("".join(";".join(r) + "\n" for r in rows))
    return str(path), rows


def small_table(tmp_path, rows: int = 400, seed: int = 3):
    shapes = {"a": (12, [2, 6]), "b": (8, [4]), "c": (16, [2, 4, 8]), "d": (6, [3])}
    qi, trees = {}, {}
    for q, (leaves, fanout) in shapes.items():
        qi[q], trees[q] = _tree(tmp_path / f"{q}.csv", leaves, fanout)
    rng = random.Random(seed)
    lines = ["id," + ",".join(QIS)]
    for r in range(rows):
        # skewed and correlated: the optimum generalizes some QIs and suppresses a few rows
        base = rng.random()
        values = [f"{q}{min(n - 1, int(n * (0.6 * base + 0.4 * rng.random()) ** 1.5))}" for q, (n, _) in shapes.items()]
        lines.append(f"{r}," + ",".join(values))
    path = tmp_path / "small.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path), qi, trees


def metric_of_release(rows: list[dict], trees: dict[str, list[list[str]]], metric: str) -> float:
    """The metric from the released rows alone: a released label covers the leaves whose
    hierarchy row holds it (``*``: all of them, as a suppressed row); its share is their number
    over the hierarchy's leaves. Loss (gs 0.5): per QI ``(sum of shares - N/M) / (N - N/M)``,
    then the geometric or arithmetic mean; granularity: the mean share per QI, normalized by the
    mean of ``1/M`` (ARX's ``1 - quality``)."""
    n = len(rows)
    sums, mins = [], []
    for q, tree in trees.items():
        m = len(tree)
        covers: dict[str, int] = {}
        for row in tree:
            for label in set(row):
                covers[label] = covers.get(label, 0) + 1
        sums.append(sum(covers[str(r[q])] / m for r in rows))
        mins.append(1.0 / m)
    if metric == "granularity":
        lo = sum(mins) / len(mins)
        return min(1.0, max(0.0, (sum(s / n for s in sums) / len(sums) - lo) / (1.0 - lo)))
    cols = [max(0.0, (s - n * lo) / (n - n * lo)) for s, lo in zip(sums, mins)]
    if metric == "loss":
        return math.prod((c + 1.0) ** (1.0 / len(cols)) for c in cols) - 1.0
    return sum(cols) / len(cols)


@pytest.mark.parametrize("by_sql", [True, False], ids=["sql", "in-process"])
@pytest.mark.parametrize("metric", ["loss", "loss-arithmetic", "granularity"])
def test_genetic_metric_equals_the_release_s(tmp_path, metric, by_sql):
    path, qi, trees = small_table(tmp_path)
    out = str(tmp_path / "g.parquet")
    opts = {"iterations": 60, "population": 24, "seed": 5, "seed_lattice": False, **({"local_rows": 0} if by_sql else {})}
    report = sqlanon.anonymize(input=path, qi=qi, k=4, max_suppression=0.1, search="genetic", metric=metric, search_options=opts, output=out, keep_columns=["id"])
    assert report.metric.name == metric
    rows = read_rows(out)
    check = check_k(rows, QIS, 4, 0.1)
    assert check["ok"], check["problems"]
    assert report.suppressed_rows == check["suppressed"]
    assert report.metric.value == pytest.approx(metric_of_release(rows, trees, metric), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("metric", ["loss", "lm"])
def test_seeded_from_lightning_never_worse(tmp_path, metric):
    """16 QIs of 36 leaves (a 4^16 lattice: lightning seeds): the genetic result is at most
    lightning's with the seed's step limit, and the seed is reported."""
    path, qi, qis = wide_table(tmp_path)
    common = dict(input=path, qi=qi, k=4, max_suppression=0.5, metric=metric, dry_run=True)
    light = sqlanon.anonymize(search="lightning", search_options={"step_limit": seeding.LIGHTNING_STEPS}, **common)
    gen = sqlanon.anonymize(search="genetic", search_options={"iterations": 30, "population": 16, "seed": 2}, **common)
    seed = gen.extra["seed_node"]
    assert seed["search"] == "lightning"
    assert seed["value"] == pytest.approx(light.metric.value, rel=1e-12)
    assert gen.metric.value <= light.metric.value + 1e-12
    assert gen.extra["answer_from"] in ("lightning", "genetic")


@pytest.mark.parametrize("metric", ["loss", "granularity"])
def test_seeded_from_the_optimum_never_worse(tmp_path, metric):
    """A 144-node lattice: the optimal search seeds; the genetic result is at most the optimum."""
    path, qi, _ = small_table(tmp_path)
    common = dict(input=path, qi=qi, k=4, max_suppression=0.1, metric=metric, dry_run=True)
    best = sqlanon.anonymize(search="optimal", **common)
    gen = sqlanon.anonymize(search="genetic", search_options={"iterations": 20, "population": 12, "seed": 9}, **common)
    assert gen.extra["seed_node"]["search"] == "optimal"
    assert gen.extra["seed_node"]["node"] == [best.transformation[q] for q in QIS]
    assert gen.metric.value <= best.metric.value + 1e-12


@pytest.mark.parametrize("metric", ["precision", "height", "discernibility", "aecs", "entropy"])
def test_metrics_without_a_flexible_form_are_refused(tmp_path, metric):
    path, qi, _ = small_table(tmp_path, rows=40)
    with pytest.raises(ConfigError, match=metric):
        sqlanon.anonymize(input=path, qi=qi, k=2, search="genetic", metric=metric, dry_run=True)


def test_seeded_never_worse_with_banded_numeric_columns(tmp_path):
    """bench/wide_table.py's shape at 3,000 rows (24 integer QIs under ``bands``, cut into
    intervals): a wide column's finest band edges are more than ``max_endpoints`` (no flexible
    cut releases a node using them: the genetic search then answers with lightning's node); its
    coarser levels' edges are end points, so a node using those is the seed chromosome's exact
    partition. Either way its value is never above lightning's with the seed's step limit."""
    sys.path.insert(0, str(paths.BENCH))
    import wide_table

    path = wide_table.write(str(tmp_path / "t24.parquet"), rows=3_000)
    common = dict(input=path, qi=wide_table.qi_specs(), k=5, max_suppression=1.0, metric="loss")
    light = sqlanon.anonymize(search="lightning", search_options={"step_limit": seeding.LIGHTNING_STEPS}, dry_run=True, **common)
    out = str(tmp_path / "g.parquet")
    gen = sqlanon.anonymize(search="genetic", search_options={"iterations": 10, "population": 12, "seed": 4}, output=out, keep_columns=["id", "s"], **common)
    assert gen.extra["seed_node"]["value"] == pytest.approx(light.metric.value, rel=1e-12)
    assert gen.metric.value <= light.metric.value + 1e-12
    if gen.extra["answer_from"] == "lightning":  # lightning's node (its coarse bands are cuts now): the same release
        assert gen.metric.value == pytest.approx(light.metric.value, rel=1e-12) and gen.suppressed_rows == light.suppressed_rows
    rows = read_rows(out)
    check = check_k(rows, [f"c{i}" for i in range(24)], 5, 1.0)
    assert check["ok"], check["problems"]
