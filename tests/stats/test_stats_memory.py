"""The memory of :class:`sqlanon.stats.Statistics` is one typed object (:mod:`sqlanon.stats.memory`).

* A prepared Statistics run through every way a node is evaluated (one node, several by SQL, the
  batch statement, the in-process path) and an optimal and a lightning search holds exactly the
  attributes :data:`sqlanon.stats.core.FIELDS` declares: a cache set on the object fails here
  (give it a field of :class:`sqlanon.stats.memory.Memory` instead).
* No module of ``sqlanon`` keeps a cache in an object's ``__dict__`` (the allow-list says why
  the legitimate uses are).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_lightning import _bounds  # noqa: E402
from test_oracle_search import make_stats  # noqa: E402

from sqlanon.engine import connect  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import KAnonymity, Requirement  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.search.lightning import planner as lightning  # noqa: E402
from sqlanon.stats import core, local  # noqa: E402
from sqlanon.stats.memory import Memory  # noqa: E402

ROOT = Path(__file__).resolve().parents[2] / "sqlanon"

#: file -> why its ``__dict__`` use is not a cache
ALLOWED = {
    "hierarchy/model.py": "invalidates the hierarchy's functools.cached_property values when its rows change",
}


def test_statistics_hold_only_their_declared_attributes(tmp_path):
    assert local.warm_up(wait=True)
    case = brute.random_case(random.Random(3), tmp_path, n_qi=3, n_rows=250)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        assert set(vars(stats)) == set(core.FIELDS)
        assert isinstance(stats.memory, Memory)
        req = Requirement([KAnonymity(2)], budget=5)
        ok, metric = req.predicate(), METRICS["loss"]()
        nodes = [(0, 0, 0), (1, 0, 0), (0, 1, 1), (1, 1, 1)]
        stats.evaluate(nodes[0], ok)  # one node by SQL
        stats.evaluate_many(nodes, ok)  # several by SQL (a UNION ALL)
        keep, stats.local_rows = stats.local_rows, 0
        stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)  # the batch statement
        stats.local_rows = keep
        stats.evaluate_many(nodes, ok, lambda n: metric.aggregates(stats, n), metric=metric)  # in-process
        assert stats.nodes_local > 0
        LATTICE_SEARCHES["optimal"](Lattice(stats, req, metric))
        lightning.run(stats, req, METRICS["lm"](), _bounds(stats), {"time_limit": 600})
        stats.keep_final(nodes[-1])
        stats.search_done()
        undeclared = set(vars(stats)) - set(core.FIELDS)
        assert not undeclared, f"Statistics gained undeclared attributes {sorted(undeclared)}: give them a field of stats.memory or declare them in core.FIELDS"
        assert set(vars(stats)) == set(core.FIELDS)
    finally:
        engine.close()


def test_no_module_keeps_a_cache_in_an_objects_dict():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ".__dict__" in line:
                found.append(f"sqlanon/{rel}:{n}: {line.strip()}")
    assert not found, "a __dict__ cache (use a field of sqlanon.stats.memory.Memory, a cached_property or a declared attribute):\n" + "\n".join(found)
