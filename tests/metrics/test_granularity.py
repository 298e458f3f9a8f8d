"""ARX's granularity, exactly (issue 24): ``StatisticsQuality.getGranularity().getArithmeticMean()``.

Oracle: a slow pure-Python computation from the released file itself (ARX's
``QualityDomainShareRaw`` label -> share map built level by level, a suppressed row counting 1,
the QIs averaged before normalizing, the quality ``1 - L`` reported), on random data whose
hierarchies differ in size and repeat a label across levels (the cases where the old figure, the
arithmetic Loss, differed from ARX's)."""

from __future__ import annotations

import csv
import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402

import sqlanon  # noqa: E402


def _hierarchies(tmp_path):
    """QI -> rows (leaf first): a (6 leaves; level 1 reuses the leaf label a1), b (3), c (10)."""
    h = {
        "a": [["a1", "a1", "*"], ["a2", "a1", "*"], ["a3", "a3x", "*"], ["a4", "a3x", "*"], ["a5", "a5x", "*"], ["a6", "a5x", "*"]],
        "b": [["b1", "*"], ["b2", "*"], ["b3", "*"]],
        "c": [[f"c{v}", f"c{v // 5}x", "*"] for v in range(10)],
    }
    specs = {}
    for q, rows in h.items():
        path = tmp_path / f"{q}.csv"
        path.write_text("".join(";".join(r) + "\n" for r in rows))
        specs[q] = str(path)
    return h, specs


def _arx_granularity(released: list[dict], hier: dict) -> float:
    means, mins = [], []
    for q, rows in hier.items():
        m = len(rows)
        share: dict = {}
        for level in range(len(rows[0])):
            for label in {r[level] for r in rows}:
                share[label] = sum(1 for r in rows if r[level] == label) / m
        total = 0.0
        for row in released:
            suppressed = all(row[x] == "*" for x in hier)
            value = row[q]
            total += 1.0 if suppressed else share.get(value, 1.0 if value == "*" else 1.0 / m)
        means.append(total / len(released))
        mins.append(1.0 / m)
    agg, low = sum(means) / len(means), sum(mins) / len(mins)
    loss = min(1.0, max(0.0, (agg - low) / (1 - low)))
    return 1.0 - loss


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_granularity_is_arxs_on_the_released_rows(tmp_path, seed):
    rng = random.Random(seed)
    hier, specs = _hierarchies(tmp_path)
    data = tmp_path / "d.csv"
    with open(data, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "c"])
        for _ in range(rng.randint(60, 160)):
            w.writerow([rng.choice(hier["a"][: rng.randint(2, 6)])[0], rng.choice(hier["b"])[0], f"c{min(int(rng.expovariate(0.4)), 9)}"])
    for search, k, sup in (("optimal", rng.choice([2, 3, 5]), rng.choice([0.0, 0.05, 0.2])), ("bottom-up", 3, 0.1)):
        out = tmp_path / f"out_{search}.csv"
        report = sqlanon.anonymize(input=str(data), qi=specs, k=k, max_suppression=sup, search=search, output=str(out), overwrite=out.exists())
        released = checker.read_rows(str(out))
        assert report.loss["granularity"] == pytest.approx(_arx_granularity(released, hier), abs=1e-12), (search, report.transformation)
    # the metric minimized is ARX's loss L = 1 - granularity
    report = sqlanon.anonymize(input=str(data), qi=specs, k=2, max_suppression=0.1, metric="granularity", dry_run=True)
    assert report.metric.value == pytest.approx(1 - report.loss["granularity"], abs=1e-12)


def test_granularity_differs_from_the_arithmetic_loss_when_domains_differ(tmp_path):
    hier, specs = _hierarchies(tmp_path)
    data = tmp_path / "d.csv"
    data.write_text("a,b,c\n" + "".join(f"a{1 + i % 6},b{1 + i % 3},c{i % 10}\n" for i in range(60)))
    report = sqlanon.anonymize(input=str(data), qi=specs, k=6, dry_run=True)
    u = report.loss
    assert u["granularity"] != pytest.approx(1 - u["loss_arithmetic"], abs=1e-6)  # the old figure was the arithmetic Loss
