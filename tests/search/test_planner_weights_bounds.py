"""Attribute weights and per-QI level bounds in the flexible planners (bottom-up, top-down, genetic).

Oracles in plain Python on small random tables (hierarchies with single-child chains, repeated
labels and leaves that hold no row):

* **bounds**: every released value of every row lies between its QI's min and max level on the
  row's own hierarchy path (a leaf is released at least at its min-level ancestor, nothing above
  the max level); every release re-checked by tests/checker.py; a planner fails (exit 3 path)
  exactly when the most general cut within the bounds (every QI at its max level) fails the
  requirement;
* **weights**: the reported weighted LM (genetic; bottom-up without a class column) equals
  ``sum_i w_i LM_i / n`` recomputed from the released rows; a heavy weight on one QI makes each
  planner generalize the other on a table where generalizing either one suffices; weights of 1
  reproduce the unweighted run exactly.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import sys
from collections import Counter

import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))

import checker  # noqa: E402
import oracle_brute as brute  # noqa: E402
from test_oracle_search import write_hierarchy_csvs  # noqa: E402

import sqlanon.run.api  # noqa: E402
import sqlanon.cli.app  # noqa: E402
from sqlanon.errors import ConfigError, UnsatisfiableError  # noqa: E402

PLANNERS = ["bottom-up", "top-down", "genetic"]
GENETIC_FAST = {"iterations": 150, "population": 30, "seed": 3}


def planner_options(search: str, k: int, frac: float) -> dict:
    if search == "top-down":  # (X, Y)-anonymity with Y = the row id: every X class holds >= k rows
        return {"search": search, "k": k, "search_options": {"y": "id"}}
    opts = {"search": search, "k": k, "max_suppression": frac}
    if search == "genetic":
        opts.update(metric="lm", search_options=dict(GENETIC_FAST))
    return opts


def read_release(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def level_range(case, i, mins, maxs) -> tuple[int, int]:
    q = case.qis[i]
    return mins.get(q, 0), maxs.get(q, case.maxes[i])


def out_of_bounds(case, released, mins, maxs) -> list[str]:
    """Released values outside their QI's level range, on the row's own hierarchy path."""
    original = {str(i): r for i, r in enumerate(case.rows)}
    bad = []
    for row in released:
        if checker.is_suppressed(row, case.qis):
            continue
        src = original[row["id"]]
        for i, q in enumerate(case.qis):
            lo, hi = level_range(case, i, mins, maxs)
            path = case.maps[i][src[q]]
            if row[q] not in path[lo : hi + 1]:
                bad.append(f"row {row['id']}: {q}={src[q]!r} released as {row[q]!r}, path {path}, levels {lo}..{hi}")
    return bad


def most_general_suppressed(case, k, mins, maxs) -> int:
    """Rows in classes under k when every QI is at its max level (plain Python)."""
    key = lambda r: tuple(case.maps[i][r[q]][level_range(case, i, mins, maxs)[1]] for i, q in enumerate(case.qis))  # noqa: E731
    sizes = Counter(key(r) for r in case.rows)
    return sum(n for n in sizes.values() if n < k)


def weighted_lm(case, released, weights) -> float:
    """``sum_i w_i LM_i / n`` from the released rows, weights normalized to the largest; a released
    label's M_P is the number of hierarchy leaves whose path holds it; a suppressed row costs 1."""
    top = max(weights.get(q, 1.0) for q in case.qis)
    w = [weights.get(q, 1.0) / top for q in case.qis]
    total = 0.0
    for i, q in enumerate(case.qis):
        h = case.hier_rows[i]
        m = len(h)
        col = 0.0
        for row in released:
            if checker.is_suppressed(row, case.qis):
                col += 1.0
                continue
            mp = sum(1 for r in h if row[q] in r)
            col += (mp - 1) / (m - 1) if m > 1 else 0.0
        total += w[i] * col / len(released)
    return total / len(case.qis)


# ------------------------------------------------------------------------------------------------
# level bounds


@pytest.mark.parametrize("search", PLANNERS)
@pytest.mark.parametrize("seed", range(4))
def test_planners_release_nothing_outside_the_level_bounds(search, seed, tmp_path):
    rng = random.Random(1009 * seed + 17)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=rng.randint(80, 200), depths=[3, rng.randint(1, 3), rng.randint(2, 3)])
    qi = write_hierarchy_csvs(case, tmp_path)
    mins, maxs = {}, {}
    for i, q in enumerate(case.qis):
        lo = rng.randint(0, case.maxes[i])
        hi = rng.randint(lo, case.maxes[i])
        if lo or rng.random() < 0.5:
            mins[q] = lo
        if hi < case.maxes[i] or rng.random() < 0.5:
            maxs[q] = hi
    if not mins and not maxs:
        maxs[case.qis[0]] = case.maxes[0] - 1
    if all(mins.get(q, 0) == case.maxes[i] for i, q in enumerate(case.qis)):
        mins.pop(case.qis[0])  # all at the root: a release the checker cannot tell from suppression
    k, frac = rng.randint(2, 4), rng.choice([0.0, 0.05])
    if search == "top-down":
        frac = 0.0
    opts = planner_options(search, k, frac)
    if rng.random() < 0.5 and search != "genetic":
        opts["class_column"] = case.class_column
    out = tmp_path / "out.csv"
    budget = math.floor(frac * case.n + 1e-9)
    worst = most_general_suppressed(case, k, mins, maxs)
    satisfiable = worst <= budget and worst < case.n
    tag = f"{search} seed={seed} k={k} budget={budget} min={mins} max={maxs}"
    if not satisfiable:
        with pytest.raises(UnsatisfiableError):
            sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, min_level=mins, max_level=maxs, output=str(out), **opts)
        assert not out.exists()
        return
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, min_level=mins, max_level=maxs, output=str(out), **opts)
    released = read_release(out)
    assert len(released) == case.n
    assert out_of_bounds(case, released, mins, maxs) == [], tag
    check = checker.check_k(released, case.qis, k, frac)
    assert check["ok"], f"{tag}: {check['problems']}"
    assert report.suppressed_rows == check["suppressed"], tag
    assert report.extra['level_bounds'] == {q: list(level_range(case, i, mins, maxs)) for i, q in enumerate(case.qis)}, tag


@pytest.mark.parametrize("search", PLANNERS)
def test_min_level_everywhere_releases_the_min_level_cut_or_above(search, tmp_path):
    """min = max on every QI: the only cut within the bounds is that level; each planner must
    release exactly the full-domain node (relabelled chains included)."""
    rng = random.Random(77)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=120, depths=[3, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    node = {case.qis[0]: 1, case.qis[1]: 1}
    out = tmp_path / "out.csv"
    k = 2
    sizes = Counter(tuple(case.maps[i][r[q]][1] for i, q in enumerate(case.qis)) for r in case.rows)
    frac = 0.0 if search == "top-down" else 0.5
    if search == "top-down" and min(sizes.values()) < k:
        pytest.skip("level-1 node not 2-anonymous for this table")
    sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, min_level=node, max_level=node, output=str(out), **planner_options(search, k, frac))
    released = read_release(out)
    for row in released:
        if checker.is_suppressed(row, case.qis):
            continue
        src = case.rows[int(row["id"])]
        for i, q in enumerate(case.qis):
            assert row[q] == case.maps[i][src[q]][1], (search, q, src[q], row[q])


def test_bounded_bands_qi_is_cut_along_its_tree_by_genetic(tmp_path):
    """A numeric QI with a bands hierarchy and a bound: the genetic search cuts its tree (band
    labels within the levels) instead of free intervals."""
    rng = random.Random(4)
    path = tmp_path / "t.csv"
    rows = [(rng.randint(18, 80), rng.choice("abc")) for _ in range(300)]
    path.write_text("id,age,g\n" + "".join(f"{i},{a},{g}\n" for i, (a, g) in enumerate(rows)))
    out = tmp_path / "out.csv"
    sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=str(path), qi={"age": "bands:5,10,20", "g": "flat"}, k=5, max_suppression=0.02, search="genetic", metric="lm",
                          min_level={"age": 1}, max_level={"age": 2}, search_options=dict(GENETIC_FAST), output=str(out))
    released = read_release(out)
    check = checker.check_k(released, ["age", "g"], 5, 0.02)
    assert check["ok"], check["problems"]
    for row in released:
        if checker.is_suppressed(row, ["age", "g"]):
            continue
        a = rows[int(row["id"])][0]
        lo5 = a // 5 * 5
        lo10 = a // 10 * 10
        assert row["age"] in (f"[{lo5}, {lo5 + 5}[", f"[{lo10}, {lo10 + 10}["), (a, row["age"])


# ------------------------------------------------------------------------------------------------
# weights


def either_one_table(tmp_path, copies: int = 2):
    """Two symmetric QIs A and B (leaves a1, a2 / b1, b2 under A1 / B1, then *): generalizing
    either one to level 1 makes every class 4 rows; a class column equally informative on both.
    (No empty sibling branch: its zero-gain split would tie and let top-down's QI order decide.)"""
    rows = []
    base = [("a1", "b1", "yes"), ("a1", "b1", "yes"), ("a2", "b2", "no"), ("a2", "b2", "no"),
            ("a1", "b2", "yes"), ("a1", "b2", "no"), ("a2", "b1", "yes"), ("a2", "b1", "no")]
    for _ in range(copies):
        rows += base
    path = tmp_path / "either.csv"
    path.write_text("id,A,B,y\n" + "".join(f"{i},{a},{b},{y}\n" for i, (a, b, y) in enumerate(rows)))
    qi = {}
    for name, p in (("A", "a"), ("B", "b")):
        h = tmp_path / f"{name}.csv"
        h.write_text("".join(f"{p}{j};{p.upper()}1;*\n" for j in (1, 2)))  # A1 and * hold the same leaves: one node
        qi[name] = str(h)
    return str(path), qi, rows


@pytest.mark.parametrize("search,with_class", [("bottom-up", True), ("bottom-up", False), ("top-down", False), ("top-down", True), ("genetic", False)])
def test_a_heavy_weight_makes_the_planner_generalize_the_other_qi(search, with_class, tmp_path):
    """Bottom-up with a class column: w_a I(G) ranks; without one (I = 0) the lighter QI goes
    first among equal gains; top-down: w_a InfoGain (rows, or entropy with a class); genetic:
    weighted LM."""
    path, qi, rows = either_one_table(tmp_path)
    k = 8  # each (a, b) pair holds 4 rows: one QI must go to level 1
    for heavy, light in (("A", "B"), ("B", "A")):
        opts = planner_options(search, k, 0.0)
        if with_class:
            opts["class_column"] = "y"  # I(G) / InfoGain > 0, equal for A and B
        if search == "genetic":
            opts["search_options"] = {**GENETIC_FAST, "seed_lattice": False}
        out = tmp_path / f"out_{search}_{with_class}_{heavy}.csv"
        report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=path, qi=qi, weights={heavy: 10}, output=str(out), **opts)
        released = read_release(out)
        assert checker.check_k(released, ["A", "B"], k, 0.0)["ok"]
        heavy_values = {r[heavy] for r in released}
        light_values = {r[light] for r in released}
        assert heavy_values == {f"{heavy.lower()}1", f"{heavy.lower()}2"}, (search, heavy, heavy_values)
        assert light_values == {f"{light}1"}, (search, heavy, light_values)
        assert report.weights == {heavy: 1.0, light: 0.1}


@pytest.mark.parametrize("search", ["genetic", "bottom-up"])
@pytest.mark.parametrize("seed,bounded", [(31, False), (32, True), (33, True)])
def test_weighted_lm_equals_the_oracle(search, seed, bounded, tmp_path):
    """The weighted LM the planner reports (genetic's objective; bottom-up's stopping metric
    without a class column) equals sum_i w_i LM_i / n recomputed from the released rows (with
    min levels: a chain released at its min-level label counts that node's leaves)."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150, depths=[3, 2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    weights = {case.qis[0]: 4.0, case.qis[1]: 1.0, case.qis[2]: 0.5}
    mins = {case.qis[0]: 1, case.qis[1]: 1} if bounded else {}
    if most_general_suppressed(case, 3, mins, {}) > math.floor(0.05 * case.n):
        pytest.skip("unsatisfiable table")
    out = tmp_path / "out.csv"
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, weights=weights, min_level=mins, output=str(out), **planner_options(search, 3, 0.05))
    released = read_release(out)
    assert checker.check_k(released, case.qis, 3, 0.05)["ok"]
    assert out_of_bounds(case, released, mins, {}) == []
    assert report.metric.value == pytest.approx(weighted_lm(case, released, weights), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("search", PLANNERS)
def test_weights_of_one_reproduce_the_unweighted_run(search, tmp_path):
    rng = random.Random(12)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150, depths=[3, 2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    opts = planner_options(search, 3, 0.05)
    if search != "genetic":
        opts["class_column"] = case.class_column
    plain = sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, dry_run=True, **opts)
    ones = sqlanon.run.api.anonymize(keep_others=True, input=case.path, qi=qi, dry_run=True, weights={q: 1 for q in case.qis}, **opts)
    assert ones.transformation == plain.transformation
    assert ones.metric == plain.metric
    assert ones.suppressed_rows == plain.suppressed_rows


# ------------------------------------------------------------------------------------------------
# CLI, policy file, refusals


def test_cli_and_policy_file_bounds_and_weights_agree(tmp_path):
    rng = random.Random(8)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=150, depths=[3, 2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    a, b = case.qis[0], case.qis[1]
    import yaml

    for search in PLANNERS:
        keys = {"min_level": {a: 1}, "max_level": {a: 2, b: 1}, "weights": {b: 2}}
        extra = {"y": "id"} if search == "top-down" else dict(GENETIC_FAST) if search == "genetic" else {}
        policy = tmp_path / f"p_{search}.yaml"
        doc = {"input": case.path, "qi": qi, "k": 2, "search": search, **keys, "search_options": extra}
        if search != "top-down":
            doc["max_suppression"] = 0.1
        if search == "genetic":
            doc["metric"] = "lm"
        policy.write_text(yaml.safe_dump(doc))
        from_file = sqlanon.run.api.anonymize(str(policy), dry_run=True)
        flags = []
        for c, spec in qi.items():
            flags += ["--qi", f"{c}={spec}"]
        for key, value in extra.items():
            flags += ["--option", f"{key}={value}"]
        if search != "top-down":
            flags += ["--max-suppression", "0.1"]
        if search == "genetic":
            flags += ["--metric", "lm"]
        res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", case.path, *flags, "--k", "2", "--search", search, "--min-level", f"{a}=1",
                                                   "--max-level", f"{a}=2", "--max-level", f"{b}=1", "--weights", f"{b}=2", "--dry-run", "--json", "-q"])
        assert res.exit_code == 0, res.output
        cli = json.loads(res.stdout)
        assert cli["transformation"] == from_file.transformation, search
        # the value as well, but for its last bits: a genetic run whose best cut ties its lattice seed
        # answers with the seed's node, whose value is a sum the engine's threads take in any order
        assert cli["metric"]["name"] == from_file.to_dict()["metric"]["name"], search
        assert cli["metric"]["value"] == pytest.approx(from_file.to_dict()["metric"]["value"], rel=1e-12), search
        assert cli["level_bounds"][a] == [1, 2] and cli["level_bounds"][b] == [0, 1], search
        assert cli["weights"][b] == 1.0 and cli["weights"][a] == 0.5, search


def test_cli_bounds_write_a_checked_release(tmp_path):
    rng = random.Random(9)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=120, depths=[3, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    a = case.qis[0]
    out = tmp_path / "out.csv"
    flags = [x for c, spec in qi.items() for x in ("--qi", f"{c}={spec}")]
    res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", case.path, *flags, "--k", "2", "--max-suppression", "0.1", "--search", "bottom-up",
                                               "--min-level", f"{a}=1", "--max-level", f"{a}=2", "--class-column", case.class_column, "--output", str(out), "-q"])
    assert res.exit_code == 0, res.output
    released = read_release(out)
    assert out_of_bounds(case, released, {a: 1}, {a: 2}) == []
    assert checker.check_k(released, case.qis, 2, 0.1)["ok"]


def test_cli_unsatisfiable_within_bounds_exits_3_naming_the_model(tmp_path):
    rng = random.Random(10)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=60, depths=[2, 2])
    qi = write_hierarchy_csvs(case, tmp_path)
    flags = [x for c, spec in qi.items() for x in ("--qi", f"{c}={spec}")]
    out = tmp_path / "out.csv"
    bounds = [x for q in case.qis for x in ("--max-level", f"{q}=0")]
    assert most_general_suppressed(case, 30, {}, {q: 0 for q in case.qis}) > 0  # the leaves are not 30-anonymous
    for search in ("bottom-up", "genetic"):
        extra = ["--metric", "lm"] if search == "genetic" else []
        res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", case.path, *flags, "--k", "30", "--search", search, *bounds, *extra, "--output", str(out), "-q"])
        assert res.exit_code == 3, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), res.output
        assert "k-anonymity" in lines[0], lines[0]
        assert not out.exists()
    # top-down: Corollary 4.2 checked at the max-level cut
    res = CliRunner().invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "-i", case.path, *flags, "--k", "30", "--search", "top-down", "--y", "id", *bounds, "--output", str(out), "-q"])
    assert res.exit_code == 3, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "most general current release within --max-level" in lines[0] and "k = 30" in lines[0], res.output
    assert not out.exists()


@pytest.mark.parametrize(
    "search,options,message",
    [
        ("bottom-up", {"qi": {"A": "numeric", "B": "flat"}, "max_level": {"A": 0}}, "search bottom-up cuts 'A' into intervals"),
        ("top-down", {"qi": {"A": "numeric", "B": "flat"}, "min_level": {"A": 1}, "search_options": {"y": "id"}}, "search top-down cuts 'A' into intervals"),
        ("genetic", {"qi": {"A": "numeric", "B": "flat"}, "min_level": {"A": 1}, "metric": "lm"}, "search genetic cuts 'A' into intervals"),
        ("top-down", {"qi": {"A": "bands:2,4", "B": "flat"}, "min_level": {"B": 1}, "search_options": {"y": "id", "x": "A"}}, "top-down releases 'B' unchanged"),
        ("genetic", {"qi": {"A": "bands:2,4", "B": "flat"}, "weights": {"A": 2}, "class_column": "c", "metric": "cm"}, "metric cm scores equivalence classes"),
        ("genetic", {"qi": {"A": "bands:2,4", "B": "flat"}, "weights": {"A": 2}, "class_column": "c", "search_options": {"objective": "cm"}}, "objective cm has no LM part"),
    ],
)
def test_planner_refusals_name_the_culprit(tmp_path, search, options, message):
    path = tmp_path / "t.csv"
    path.write_text("id,A,B,c\n" + "\n".join(f"{i},{i % 4},{i % 3},{i % 2}" for i in range(40)) + "\n")
    with pytest.raises(ConfigError, match=message):
        sqlanon.run.api.anonymize(keep_others=True, input=str(path), k=2, search=search, dry_run=True, **options)


@pytest.mark.parametrize("flag,value", [("--weights", "a=2"), ("--min-level", "a=1"), ("--max-level", "a=0")])
def test_generate_refuses_weights_and_bounds_with_the_reason(tmp_path, flag, value):
    """Generation models exact values (no hierarchy levels, no per-attribute loss): refused."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "\n".join(f"{i % 3},{i % 2}" for i in range(20)) + "\n")
    out = tmp_path / "g.parquet"
    res = CliRunner().invoke(sqlanon.cli.app.app, ["generate", "-i", str(path), flag, value, "--output", str(out), "-q"])
    assert res.exit_code == 2, res.output
    assert f"error: {flag} does not apply to generate" in res.output
    assert "no hierarchy levels" in res.output
    assert not out.exists()
    from sqlanon.cli.generate import run_generate

    with pytest.raises(ConfigError, match="does not apply to generate"):
        run_generate(input=str(path), output=str(out), **{flag[2:].replace("-", "_"): {"a": 1}})


def test_a_bounded_bands_cut_reads_back_for_sqlanon_check(tmp_path):
    """The genetic search's bounded bands cut (band labels, not intervals) is a transformation
    ``sqlanon check --transformation`` measures: the same suppressed rows as the run."""
    rng = random.Random(6)
    path = tmp_path / "t.csv"
    path.write_text("id,age,g\n" + "".join(f"{i},{rng.randint(18, 80)},{rng.choice('abc')}\n" for i in range(300)))
    qi = {"age": "bands:5,10,20", "g": "flat"}
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=str(path), qi=qi, k=6, max_suppression=0.03, search="genetic", metric="lm",
                                   min_level={"age": 1}, search_options=dict(GENETIC_FAST, seed_lattice=False), dry_run=True)  # a cut, not a tie with a seed node
    assert all(not label.startswith("[") or label.endswith("[") for label in report.transformation["age"])  # band labels
    plan = tmp_path / "plan.json"
    plan.write_text(report.to_json())
    res = CliRunner().invoke(sqlanon.cli.app.app, ["check", "-i", str(path), "--qi", "age=bands:5,10,20", "--qi", "g=flat", "--transformation", str(plan),
                                               "--k", "6", "--max-suppression", "0.03", "--json"])
    assert res.exit_code == 0, res.output
    measured = json.loads(res.stdout)
    assert measured["suppressed_rows"] == report.suppressed_rows, measured


def entropy_bits(counts: Counter) -> float:
    n = sum(counts.values())
    return -sum(c / n * math.log2(c / n) for c in counts.values() if c)


@pytest.mark.parametrize("seed", [61, 62, 63])
def test_bottom_up_information_loss_with_bounds_and_weights_equals_the_oracle(seed, tmp_path):
    """Bottom-up's reported information loss, from the leaves: per QI ``sum_p (|Rp| Info(Rp) -
    sum_{leaf in p} |Rl| Info(Rl))`` over the released cut (the min-level start included), times its
    weight, plus suppressed rows x ``sum_i w_i I_i(leaves -> root)``, over N (plain Python)."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=3, n_rows=160, depths=[3, 2, 3])
    qi = write_hierarchy_csvs(case, tmp_path)
    mins = {case.qis[0]: 1, case.qis[2]: rng.randint(0, 2)}
    weights = {case.qis[0]: 2.0, case.qis[1]: rng.choice([0.5, 1.0]), case.qis[2]: 1.0}
    if most_general_suppressed(case, 3, mins, {}) > math.floor(0.05 * case.n):
        pytest.skip("unsatisfiable table")
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, k=3, max_suppression=0.05, search="bottom-up", class_column=case.class_column,
                                   min_level=mins, weights=weights, dry_run=True)
    if report.metric.name != "information_loss":
        pytest.skip("the class carries no information here")
    top = max(weights.values())
    total, per_row = 0.0, 0.0
    n = case.n
    for i, q in enumerate(case.qis):
        w = weights[q] / top
        cut = report.transformation[q]
        by_leaf = {}
        for row in case.hier_rows[i]:
            by_leaf[row[0]] = next(label for label in row if label in cut) if any(label in cut for label in row) else row[-1]
        leaf_cls = {}
        for r in case.rows:
            leaf_cls.setdefault(r[q], Counter())[r[case.class_column]] += 1
        groups = {}
        for leaf, c in leaf_cls.items():
            groups.setdefault(by_leaf[leaf], []).append(c)
        for members in groups.values():
            whole = sum(members, Counter())
            total += w * (sum(whole.values()) * entropy_bits(whole) - sum(sum(c.values()) * entropy_bits(c) for c in members))
        everything = sum(leaf_cls.values(), Counter())
        per_row += w * (entropy_bits(everything) - sum(sum(c.values()) / n * entropy_bits(c) for c in leaf_cls.values()))
    expected = (total + report.suppressed_rows * per_row) / n
    assert report.metric.value == pytest.approx(expected, rel=1e-9, abs=1e-12), (mins, weights, report.transformation)


@pytest.mark.parametrize("seed", [71, 75, 86])
def test_top_down_weighted_distortion_with_bounds_equals_the_oracle(seed, tmp_path):
    """Top-down's distortion (one unit per change of value on the way up a row's path, up to the
    released value's level), times each QI's weight, over N, recomputed from the written rows."""
    rng = random.Random(seed)
    case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=150, depths=[3, 3])
    qi = write_hierarchy_csvs(case, tmp_path)
    mins, maxs = {case.qis[0]: 1}, {case.qis[1]: 2}
    weights = {case.qis[0]: 3.0, case.qis[1]: 1.0}
    if most_general_suppressed(case, 2, mins, maxs):
        pytest.skip("unsatisfiable table")
    out = tmp_path / "out.csv"
    report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=case.path, qi=qi, k=2, search="top-down", search_options={"y": "id"}, min_level=mins, max_level=maxs,
                                   weights=weights, output=str(out))
    released = read_release(out)
    assert out_of_bounds(case, released, mins, maxs) == []
    top = max(weights.values())
    total = 0.0
    for row in released:
        src = case.rows[int(row["id"])]
        for i, q in enumerate(case.qis):
            path = case.maps[i][src[q]]
            lo, hi = level_range(case, i, mins, maxs)
            level = next(lv for lv in range(lo, hi + 1) if path[lv] == row[q])
            total += weights[q] / top * sum(1 for j in range(1, level + 1) if path[j] != path[j - 1])
    assert report.metric.name == "distortion"
    assert report.metric.value == pytest.approx(total / case.n, rel=1e-9, abs=1e-12)
