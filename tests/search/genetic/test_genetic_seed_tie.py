"""The genetic search's answer against its full-domain seed when the two score the same: the
seed's node is the answer whatever the last bits of the two sums (the seed's value and the best
cut's are sums taken in different orders, in-process or in SQL, so they differ by an ulp from run
to run: a PostgreSQL run once released the seed's very partition as value lists, a DuckDB run as
levels)."""

from __future__ import annotations

import math
import random

import pytest

import sqlanon.run.api
from sqlanon.search.genetic import objective


def _people(tmp_path):
    """The PostgreSQL engine test's table (tests/engines/test_postgres.py), as a CSV."""
    rnd = random.Random(7)
    zips, diseases = ["12345", "12346", "12355", "12356", "13001", "13002"], ["flu", "cold", "hiv", "cancer"]
    rows = [f"{i},{rnd.choice(zips)},{rnd.randint(20, 59)},{rnd.choice(diseases)}" for i in range(300)]
    (tmp_path / "people.csv").write_text("\n".join(["id,zip,age,disease", *rows]) + "\n")
    return str(tmp_path / "people.csv")


@pytest.mark.parametrize("nudge", [-1, 0, 1])
def test_a_tie_within_rounding_is_the_seed_node(tmp_path, monkeypatch, nudge):
    """The best cut scored one ulp below, equal to or one ulp above the seed: the same answer, the
    seed's full-domain node (levels), and the report still says how the genetic search ran."""
    score = objective.FlexibleEvaluator.score

    def nudged(self, chromosomes, per_column=False, keys=None):
        out = score(self, chromosomes, per_column, keys)
        if per_column and nudge:  # the final scoring of the best solution
            out = [dict(a, value=math.nextafter(float(a["value"]), -math.inf if nudge < 0 else math.inf)) for a in out]
        return out

    monkeypatch.setattr(objective.FlexibleEvaluator, "score", nudged)
    qi = {"zip": "mask", "age": "bands:5,10,20", "disease": "flat"}
    release = sqlanon.run.api.anonymize(keep_others=True, input=_people(tmp_path), dry_run=True, qi=qi, k=6, max_suppression=0.02, search="genetic", metric="lm",
                                        min_level={"zip": 1, "age": 1, "disease": 1}, max_level={"age": 2}, weights={"zip": 3},
                                        search_options={"iterations": 100, "population": 20, "seed": 4})
    assert release.transformation == {"zip": 1, "age": 1, "disease": 1}
    assert release.extra["answer_from"] != "genetic" and release.extra["population"] == 20 and release.extra["genetic_value"] is not None
    assert math.isclose(release.extra["genetic_value"], release.metric.value, rel_tol=1e-9)
