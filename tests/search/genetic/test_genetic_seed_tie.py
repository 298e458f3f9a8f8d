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
    rnd = random.Random(7)
    lines = ["id,zip,age,disease"]
    for i in range(300):
        lines.append(f"{i},{rnd.choice(['12345', '12346', '12355', '12356', '13001', '13002'])},{rnd.randint(20, 59)},{rnd.choice(['flu', 'cold', 'hiv', 'cancer'])}")
    path = tmp_path / "people.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("nudge", [-1, 0, 1])
def test_a_tie_within_rounding_is_the_seed_node(tmp_path, monkeypatch, nudge):
    """The best cut scored one ulp below, equal to or one ulp above the seed: the same answer, the
    seed's full-domain node (levels), and the report still says how the genetic search ran."""
    score = objective.FlexibleEvaluator.score

    def nudged(self, chromosomes, per_column=False):
        out = score(self, chromosomes, per_column)
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
