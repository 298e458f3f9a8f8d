"""Unsatisfiable requirements: exit 3, one line naming the model at fault and what came closest,
with the closest node's figures checked against a plain-Python count; nothing written."""

from __future__ import annotations

import os
import random
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
from test_oracle_search import make_stats, write_hierarchy_csvs  # noqa: E402

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.errors import UnsatisfiableError  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import EntropyLDiversity, KAnonymity, Requirement  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.privacy.needs import ClassNeeds  # noqa: E402


def classes_at(case, node):
    groups: dict[tuple, list[dict]] = {}
    for r in case.rows:
        key = tuple(case.maps[i][r[q]][lv] for i, (q, lv) in enumerate(zip(case.qis, node)))
        groups.setdefault(key, []).append(r)
    return list(groups.values())


@pytest.mark.parametrize("seed", range(4))
def test_k_too_large_names_k_and_the_top_nodes_smallest_class(seed, tmp_path):
    rng = random.Random(seed + 500)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(60, 150))
    top = tuple(case.maxes)
    engine = connect(threads=1)
    try:
        stats = make_stats(engine, case, ClassNeeds())
        # k above the most general node's one class of n rows, a budget below n: the top node
        # suppresses every row (the API refuses k > n earlier; the lattice must still say why)
        k = case.n + 1
        budget = rng.randint(0, case.n - 1)
        req = Requirement([KAnonymity(k)], budget=budget, max_suppression=budget / case.n)
        for _name, search in LATTICE_SEARCHES.items():
            with pytest.raises(UnsatisfiableError) as info:
                search(Lattice(stats, req, METRICS["precision"]()))
            err = info.value
            msg = str(err)
            assert "\n" not in msg
            assert f"k-anonymity k={k} fails (alone it suppresses" in msg
            assert err.details["closest"]["transformation"] == dict(zip(case.qis, top))
            smallest = min(len(c) for c in classes_at(case, top))
            assert msg.endswith(f"the smallest class has {smallest} rows (k={k})")
            assert err.details["closest"]["suppressed_rows"] == sum(len(c) for c in classes_at(case, top) if len(c) < k)
    finally:
        engine.close()


def test_non_monotone_requirement_reports_the_fewest_suppressing_node(tmp_path):
    """Entropy l-diversity with a budget: no node's failure says anything about others, so the
    closest node is the evaluated one that suppresses the fewest rows; its figures are recounted."""
    for seed in range(40):
        rng = random.Random(seed)
        case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=rng.randint(40, 90))
        distinct = len({r[case.sensitive] for r in case.rows})
        engine = connect(threads=1)
        try:
            stats = make_stats(engine, case, ClassNeeds(entropy_s=True))
            req = Requirement([EntropyLDiversity(distinct + 0.5)], budget=case.n // 3, max_suppression=(case.n // 3) / case.n)
            lattice = Lattice(stats, req, METRICS["precision"]())
            with pytest.raises(UnsatisfiableError) as info:
                LATTICE_SEARCHES["optimal"](lattice)
        finally:
            engine.close()
        closest = info.value.details["closest"]
        node = tuple(closest["transformation"][q] for q in case.qis)
        brute_supp = {n: sum(len(c) for c in classes_at(case, n) if brute.entropy_nat(Counter(r[case.sensitive] for r in c)) < __import__("math").log(distinct + 0.5) - 1e-9) for n in case.all_nodes()}
        assert closest["suppressed_rows"] == brute_supp[node]
        assert closest["suppressed_rows"] == min(brute_supp[n] for n in case.all_nodes() if stats_evaluated(lattice, n))
        return
    pytest.fail("no case")


def stats_evaluated(lattice, node) -> bool:
    return lattice.idx(node) in lattice.evaluated


def test_cli_exit_3_one_line_and_nothing_written(tmp_path):
    rng = random.Random(5)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=80, weird=False)
    qi = write_hierarchy_csvs(case, tmp_path)
    out = tmp_path / "out.parquet"
    args = ["anonymize", "--keep-others", "--input", case.path, "--k", "3", "--sensitive-column", case.sensitive, "--l", "9", "--output", str(out), "-q"]
    for c, spec in qi.items():
        args += ["--qi", f"{c}={spec}"]
    result = CliRunner().invoke(sqlanon.cli.app.app, args)
    assert result.exit_code == 3
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: no transformation satisfies")
    assert "distinct-l-diversity l=9 fails" in lines[0] and "distinct sensitive values (l=9)" in lines[0]
    assert not out.exists()


def test_level_bounds_scope_in_the_message(tmp_path):
    rng = random.Random(8)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60, depths=[2, 2], weird=False)
    qi = write_hierarchy_csvs(case, tmp_path)
    q0 = case.qis[0]
    with pytest.raises(UnsatisfiableError, match=r"no transformation within the level bounds satisfies k-anonymity k=60 .*Closest: .*=0, .*=2 suppresses"):
        sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, k=60, max_level={q0: 0}, dry_run=True)
