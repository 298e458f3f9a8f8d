"""NULL is a value (issue 41): in every QI and hierarchy kind, in the statistics, every search, the
release, check and the report; ``nulls: suppress`` and ``nulls: refuse``; NULL as a sensitive value.

Oracles: random tables with NULLs (skewed, several QIs, some without NULLs) whose statistics equal
a slow pure-Python computation where NULL is one more leaf (``oracle_brute``), and every release is
re-read and re-checked in plain Python (k, budget, NULL released as NULL below the root, ``*`` at
the root and on suppressed rows only).
"""

from __future__ import annotations

import math
import os
import random
import sys
from collections import Counter

import duckdb
import pytest
from typer.testing import CliRunner

sys.path.insert(0, os.path.dirname(__file__))
import oracle_brute as brute  # noqa: E402
from checker import read_rows  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.cli.app import app  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.errors import ConfigError, HierarchyError, UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy import load_hierarchy, read_csv_hierarchy, write_csv_hierarchy  # noqa: E402
from sqlanon.hierarchy.model import NULL_KEY, Hierarchy  # noqa: E402
from sqlanon.hierarchy.store import store_hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy import DistinctLDiversity, EntropyLDiversity, KAnonymity, Requirement, TCloseness  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

runner = CliRunner()
STAR = "*"


# ----------------------------------------------------------------------------- the model


def test_null_leaf_is_added_last_and_stays_null_to_the_root():
    h = Hierarchy("zip", [["01234", "0123*", "*"], ["01299", "0129*", "*"]])
    assert not h.has_null and h.null_code is None
    n = h.with_null_leaf()
    assert n is not h and not h.has_null  # a copy
    assert n.rows[-1] == [None, None, "*"] and n.null_code == 2
    assert n.leaf_to_level(0) == [0, 1, 2] and n.labels(1) == ["0123*", "0129*", None] and n.labels(2) == ["*"]
    assert n.with_null_leaf() is n and n.without_null_leaf().rows == h.rows
    assert n.leaves_under(1) == [1, 1, 1]


@pytest.mark.parametrize("rows, message", [
    ([["a", "*"], [None, "x", "*"]], "ragged"),
    ([["a", "A", "*"], [None, "A", "*"]], "must stay NULL at every level below the root"),
    ([["a", "*"], [None, None]], "must stay NULL"),
    ([["a", "*"], [None, "*"], [None, "*"]], "appears twice"),
    ([["a", None, "*"]], "empty or NULL value at level 1"),
    ([[NULL_KEY, "*"]], "NULL key"),
])
def test_bad_null_rows_are_refused(rows, message):
    with pytest.raises(HierarchyError, match=message):
        Hierarchy("x", rows)


def test_null_leaf_round_trips_through_arx_csv_and_a_stored_table(tmp_path):
    h = Hierarchy("zip", [["01234", "0123*", "*"], ["01299", "0129*", "*"]]).with_null_leaf()
    path = str(tmp_path / "zip.csv")
    write_csv_hierarchy(h, path)
    assert open(path).read().splitlines()[-1] == ";;*"
    assert read_csv_hierarchy(path, "zip").rows == h.rows
    db = str(tmp_path / "h.duckdb")
    store_hierarchy(db, h, "zip_h")
    engine = connect(database=db)
    try:
        assert load_hierarchy("table:zip_h", "zip", engine).rows == h.rows
    finally:
        engine.close()


def test_a_hierarchy_object_given_to_a_run_is_not_changed(tmp_path):
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('a'), ('a'), (NULL), (NULL)) v(x)")
    h = Hierarchy("x", [["a", "*"]])
    out = str(tmp_path / "o.parquet")
    sqlanon.anonymize(input=db, table="t", qi={"x": h}, k=2, output=out, keep_others=True)
    assert h.rows == [["a", "*"]]
    assert sorted(read_rows(out), key=str) == sorted([{"x": "a"}] * 2 + [{"x": None}] * 2, key=str)


# ----------------------------------------------------------------------------- statistics oracle


def with_nulls(rng: random.Random, case: brute.Case, tmp_path, sensitive: bool) -> brute.Case:
    """``case`` with NULLs in a random non-empty subset of its QIs (skewed shares) and, with
    ``sensitive``, in the sensitive column; the brute hierarchies get the NULL leaf where the
    column holds NULL (as sqlanon adds it)."""
    chosen = rng.sample(case.qis, rng.randint(1, len(case.qis)))
    for q in chosen:
        share = rng.choice([0.02, 0.1, 0.4])
        for r in case.rows:
            if rng.random() < share:
                r[q] = None
    if sensitive:
        for r in case.rows:
            if rng.random() < 0.15:
                r[case.sensitive] = None
    hier = []
    for q, h in zip(case.qis, case.hier_rows):
        has = any(r[q] is None for r in case.rows)
        hier.append(h + [[None] * (len(h[0]) - 1) + ["*"]] if has else h)
    out = brute.Case(case.qis, hier, case.rows)
    out.path = brute.write_csv(tmp_path / f"nulls_{rng.randrange(10**9)}.csv", out)  # None -> empty -> NULL
    return out


REQUIREMENTS = {
    "k": lambda k, l: (Requirement([KAnonymity(k)]), brute.Spec(k=k)),
    "distinct": lambda k, l: (Requirement([KAnonymity(k), DistinctLDiversity(l)]), brute.Spec(k=k, l_distinct=l)),
    "entropy": lambda k, l: (Requirement([EntropyLDiversity(l)]), brute.Spec(l_entropy=l)),
    "t-equal": lambda k, l: (Requirement([TCloseness(0.2, "equal")]), brute.Spec(t_equal=0.2)),
}


@pytest.mark.parametrize("seed", range(8))
def test_statistics_with_nulls_equal_brute_force(seed, tmp_path):
    rng = random.Random(4242 + seed)
    name = list(REQUIREMENTS)[seed % len(REQUIREMENTS)]
    case = with_nulls(rng, brute.random_case(rng, tmp_path, weird=False), tmp_path, sensitive=name != "k")
    req, spec = REQUIREMENTS[name](rng.randint(2, 6), rng.randint(2, 3))
    hierarchies = [Hierarchy(q, [list(r) for r in h if r[0] is not None]) for q, h in zip(case.qis, case.hier_rows)]
    engine = connect()
    stats = Statistics(engine, Source.open(case.path), case.qis, hierarchies, sensitive=case.sensitive if req.needs.sensitive else None,
                       needs=req.needs, keep_sets=rng.choice([0, 3]))
    try:
        stats.prepare()
        assert stats.rows == case.n
        assert [h.rows for h in stats.hierarchies] == case.hier_rows  # the NULL leaf, last, only where NULLs are
        assert stats.null_rows == [sum(r[q] is None for r in case.rows) for q in case.qis]
        metrics = {m: METRICS[m]() for m in METRICS if m != "cm"}
        for node in rng.sample(case.all_nodes(), min(6, len(case.all_nodes()))) + [tuple(case.maxes)]:
            aggs = [a for m in metrics.values() for a in m.aggregates(stats, node)] if not any(callable(m.aggregates(stats, node)) for m in metrics.values()) else []
            ns = stats.evaluate(node, req.predicate(), aggs)
            b = brute.evaluate(case, node, spec)
            where = f"seed={seed} {name} node={node}"
            assert (ns.classes, ns.min_class, ns.max_class, ns.suppressed, ns.bad_classes) == (b.classes, b.min_class, b.max_class, b.suppressed, b.bad_classes), where
            assert stats.class_histogram(node) == b.histogram, where
            if aggs:
                for mname, metric in metrics.items():
                    assert metric.value(stats, node, ns) == pytest.approx(b.metrics[mname], rel=1e-9, abs=1e-9), f"{where} {mname}"
    finally:
        engine.close()


# ----------------------------------------------------------------------------- release oracle


def expected_value(h: Hierarchy, value, level: int):
    """The released value of a source value at ``level``, in plain Python: NULL stays NULL below
    the root, the root label at the root."""
    if value is None:
        return h.rows[0][-1] if level == h.max_level else None
    return next(r[level] for r in h.rows if r[0] == str(value))


def recheck(source_rows: list[dict], released: list[dict], qis: list[str], hierarchies: dict, levels: dict, k: int, budget: int, withheld=lambda r: False):
    """Independent re-check of a full-domain release: every row is its source row generalized
    (or suppressed: every QI ``*``), classes of released rows have >= k rows (NULL a value),
    suppressed rows within the budget, NULL released as NULL below the root."""
    assert len(released) <= len(source_rows)
    expect = Counter(tuple(expected_value(hierarchies[q], r[q], levels[q]) for q in qis) for r in source_rows if not withheld(r))
    suppressed = [r for r in released if all(r[q] == STAR for q in qis)]
    classes = Counter(tuple(r[q] for q in qis) for r in released if not all(r[q] == STAR for q in qis))
    assert all(n >= k for n in classes.values()), classes
    assert len(source_rows) - sum(classes.values()) <= budget  # suppressed (masked or dropped) rows
    assert len(released) in (len(source_rows), sum(classes.values()))  # masked, or dropped
    if len(released) == len(source_rows):
        assert len(source_rows) - sum(classes.values()) == len(suppressed)
    for key, n in classes.items():
        assert expect[key] == n, key  # a released class is a whole class of the generalization
    for key, n in expect.items():
        assert classes.get(key, 0) in (0, n), key
        for q, v in zip(qis, key):
            if v is None:
                assert levels[q] < hierarchies[q].max_level


def random_table(rng: random.Random, tmp_path, n: int = 400):
    """A production-looking table with NULLs: zip (leading zeros, skewed), age INTEGER, a DATE,
    sex with many NULLs, a DECIMAL income (kept), a sensitive diagnosis with NULLs."""
    db = str(tmp_path / f"t{rng.randrange(10**6)}.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE t (zip VARCHAR, age INTEGER, dob DATE, sex VARCHAR, income DECIMAL(10,2), diagnosis VARCHAR)")
    zips = ["01234", "01235", "01299", "02345", "02399"]
    rows = []
    for _ in range(n):
        zip_ = None if rng.random() < 0.08 else rng.choices(zips, [8, 4, 2, 1, 1])[0]
        age = None if rng.random() < 0.05 else rng.randint(18, 80)
        dob = None if rng.random() < 0.1 else f"{rng.randint(1950, 1999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        sex = None if rng.random() < 0.3 else rng.choice(["F", "M"])
        diag = None if rng.random() < 0.2 else rng.choice(["flu", "cold", "asthma"])
        rows.append((zip_, age, dob, sex, round(rng.uniform(0, 9999), 2), diag))
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.close()
    names = ["zip", "age", "dob", "sex", "income", "diagnosis"]
    return db, [dict(zip(names, r)) for r in rows]


def _table(tmp_path, create: str) -> str:
    db = str(tmp_path / "x.duckdb")
    con = duckdb.connect(db)
    con.execute(create)
    con.close()
    return db


def _hier(release, column):
    return next(Hierarchy(h["attribute"], h["rows"]) for h in release)


QI = {"zip": "mask", "age": "bands:10,20", "dob": "dates", "sex": "flat"}


def _as_text(rows):
    return [{**r, "age": None if r["age"] is None else str(r["age"]), "dob": None if r["dob"] is None else str(r["dob"])} for r in rows]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("search", ["optimal", "lightning"])
def test_release_with_nulls_rechecked(seed, search, tmp_path):
    rng = random.Random(seed)
    db, rows = random_table(rng, tmp_path)
    k, ms = rng.choice([2, 5, 10]), rng.choice([0.0, 0.05, 0.1])
    out = str(tmp_path / ("o.parquet" if seed % 2 else "o.csv"))
    r = sqlanon.anonymize(input=db, table="t", qi=QI, k=k, max_suppression=ms, output=out, search=search, keep_columns=["income"], drop_columns=["diagnosis"], keep_others=True)
    report = r.to_dict()
    levels = report["transformation"]
    engine = connect(database=db)
    try:
        hierarchies = {q: load_hierarchy(spec, q, engine, Source(kind="table", table="t", database=db)).with_null_leaf() for q, spec in QI.items()}
    finally:
        engine.close()
    released = read_rows(out)
    if out.endswith(".csv"):  # CSV has no NULL: an empty cell is one
        released = [{q: (None if v == "" else v) for q, v in row.items()} for row in released]
    recheck(_as_text(rows), released, list(QI), hierarchies, levels, k, math.floor(ms * len(rows) + 1e-9))
    assert report["nulls"]["sex"] == {"mode": "value", "rows": sum(r["sex"] is None for r in rows)}
    assert all(hierarchies[q].rows[-1][0] is None for q in QI)


def test_null_released_as_null_below_the_root_and_root_label_at_the_root(tmp_path):
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES (1, '01234', 31), (2, '01234', 31), (3, NULL, NULL), (4, NULL, NULL), (5, '01299', 45), (6, '01299', 45)) v(id, zip, age)")
    for levels, want in (({"zip": 0, "age": 0}, None), ({"zip": 1, "age": 1}, None), ({"zip": 4, "age": 2}, None), ({"zip": 5, "age": 3}, STAR)):
        out = str(tmp_path / "o.parquet")
        sqlanon.anonymize(input=db, table="t", qi={"zip": "mask", "age": "bands:10,20"}, k=2, output=out, overwrite=True, min_level=levels, max_level=levels, keep_columns=["id"], keep_others=True)
        nulls = [row for row in read_rows(out) if row["id"] in (3, 4)]
        assert all(row["zip"] == want and row["age"] == want for row in nulls), (levels, nulls)
        others = [row for row in read_rows(out) if row["id"] not in (3, 4)]
        assert all(row["zip"] is not None and row["age"] is not None for row in others)


# ----------------------------------------------------------------------------- every hierarchy kind


def test_every_hierarchy_kind_gets_the_null_leaf(tmp_path):
    db = _table(tmp_path, """CREATE TABLE t AS SELECT * FROM (VALUES
        ('01234', 31, DATE '1970-01-02', 'F', 'a', 1.5),
        ('01234', 31, DATE '1970-01-02', 'F', 'a', 1.5),
        (NULL, NULL, NULL, NULL, NULL, NULL),
        (NULL, NULL, NULL, NULL, NULL, NULL)) v(zip, age, dob, sex, code, x)""")
    csv_h = tmp_path / "code.csv"
    csv_h.write_text("a;A;*\nb;A;*\n")
    tree = tmp_path / "sex.yaml"
    tree.write_text("'*':\n  - F\n  - M\n")
    store_hierarchy(db, Hierarchy("code", [["a", "A", "*"], ["b", "A", "*"]]), "code_h")
    for qi, leaves in (({"zip": "mask", "age": "bands:10,20", "dob": "dates", "x": "numeric"}, [2, 2, 2, 2]),
                       ({"sex": str(tree), "code": str(csv_h)}, [3, 3]),
                       ({"sex": "flat", "code": "table:code_h"}, [2, 3])):
        out = str(tmp_path / "o.parquet")
        for level in (0, "top"):
            levels = {q: 0 for q in qi} if level == 0 else None
            r = sqlanon.anonymize(input=db, table="t", qi=qi, k=2, output=out, overwrite=True, min_level=levels, max_level=levels,
                                  metric="height", search="optimal", keep_others=True)
            released = read_rows(out)
            if level == 0:  # NULL released as NULL, every other value as itself
                assert sum(all(row[q] is None for q in qi) for row in released) == 2, (qi, released)
                assert sum(all(row[q] is not None for q in qi) for row in released) == 2, (qi, released)
            assert [s["leaves"] for s in r.to_dict()["hierarchies"]] == leaves  # the NULL leaf counted


def test_hierarchy_show_and_stored_tables_keep_working_without_nulls(tmp_path):
    """A table without NULLs: hierarchies get no NULL leaf (metrics, LM, as before)."""
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('01234'), ('01234'), ('01299'), ('01299')) v(zip)")
    r = sqlanon.anonymize(input=db, table="t", qi={"zip": "mask"}, k=2, output=str(tmp_path / "o.parquet"), keep_others=True)
    assert r.to_dict()["hierarchies"][0]["leaves"] == 2
    assert "nulls" not in r.to_dict()


# ----------------------------------------------------------------------------- suppress, refuse


def test_suppress_masks_null_rows_and_counts_them_against_the_budget(tmp_path):
    rng = random.Random(5)
    db, rows = random_table(rng, tmp_path)
    n_null = sum(r["zip"] is None for r in rows)
    for suppression in ("mask", "drop"):
        out = str(tmp_path / f"o_{suppression}.parquet")
        r = sqlanon.anonymize(input=db, table="t", qi=QI, k=3, max_suppression=0.2, output=out, nulls={"zip": "suppress"},
                              suppression=suppression, keep_columns=["income"], drop_columns=["diagnosis"], keep_others=True).to_dict()
        released = read_rows(out)
        assert r["null_suppressed_rows"] == n_null and r["nulls"]["zip"] == {"mode": "suppress", "rows": n_null}
        assert r["rows"] == len(rows) and r["suppressed_rows"] >= n_null
        assert r["suppressed_rows"] <= r["suppression_budget"] == math.floor(0.2 * len(rows) + 1e-9)
        assert not any(row["zip"] is None for row in released)  # no NULL zip is released
        masked = [row for row in released if all(row[q] == STAR for q in QI)]
        if suppression == "mask":
            assert len(released) == len(rows) and len(masked) == r["suppressed_rows"]
            assert sorted(float(row["income"]) for row in released) == sorted(float(x["income"]) for x in rows)  # every row, kept columns intact
        else:
            assert len(released) == len(rows) - r["suppressed_rows"] and not masked
        engine = connect(database=db)
        try:
            hierarchies = {q: load_hierarchy(spec, q, engine, Source(kind="table", table="t", database=db)).with_null_leaf() for q, spec in QI.items()}
        finally:
            engine.close()
        recheck(_as_text(rows), released, list(QI), hierarchies, r["transformation"], 3, r["suppression_budget"],
                withheld=lambda x: x["zip"] is None)


def test_suppress_beyond_the_budget_is_unsatisfiable(tmp_path):
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('a'), ('a'), ('a'), (NULL)) v(x)")
    with pytest.raises(UnsatisfiableError, match="1 rows have NULL in a quasi-identifier whose NULLs are suppressed"):
        sqlanon.anonymize(input=db, table="t", qi={"x": "flat"}, k=2, nulls="suppress", output=str(tmp_path / "o.parquet"), keep_others=True)
    assert not os.path.exists(tmp_path / "o.parquet")
    r = sqlanon.anonymize(input=db, table="t", qi={"x": "flat"}, k=2, nulls="suppress", max_suppression=0.25, output=str(tmp_path / "o.parquet"), keep_others=True)
    assert sorted(row["x"] for row in read_rows(str(tmp_path / "o.parquet"))) == ["*", "a", "a", "a"]
    assert r.to_dict()["suppressed_rows"] == 1


def test_refuse_names_every_column_at_once_before_writing(tmp_path):
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('a', NULL, 1), (NULL, NULL, 2), ('b', 'x', NULL)) v(x, y, z)")
    out = str(tmp_path / "o.parquet")
    with pytest.raises(HierarchyError) as err:
        sqlanon.anonymize(input=db, table="t", qi={"x": "flat", "y": "flat", "z": "flat"}, k=1, nulls="refuse,z=value", output=out, keep_others=True)
    assert str(err.value).startswith("quasi-identifier columns 'x' (1 row), 'y' (2 rows) have NULL values (nulls: refuse)")
    assert not os.path.exists(out)
    with pytest.raises(ConfigError, match="no quasi-identifier"):
        sqlanon.anonymize(input=db, table="t", qi={"x": "flat"}, k=1, nulls={"y": "refuse"}, drop_columns=["y", "z"], output=out, keep_others=True)


def test_policy_file_and_flag(tmp_path):
    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('a'), ('a'), (NULL), (NULL)) v(x)")
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {db}\ntable: t\nqi:\n  x: flat\nk: 2\nhierarchies:\n  nulls: {{x: refuse}}\noutput: {tmp_path / 'o.parquet'}\n")
    ran = runner.invoke(app, ["anonymize", "--keep-others", "--policy", str(policy), "-q"])
    assert ran.exit_code == 1 and "'x' (2 rows) has NULL values" in ran.output
    ran = runner.invoke(app, ["anonymize", "--keep-others", "--policy", str(policy), "--nulls", "x=value", "-q"])  # the flag wins
    assert ran.exit_code == 0, ran.output
    assert sorted(read_rows(str(tmp_path / "o.parquet")), key=str) == sorted([{"x": None}] * 2 + [{"x": "a"}] * 2, key=str)


# ----------------------------------------------------------------------------- sensitive NULLs, check


def test_null_is_a_sensitive_value_of_its_own(tmp_path):
    """l-diversity counts NULL as one more sensitive value (a class {flu, NULL} is 2-diverse):
    an attacker learns "no diagnosis recorded" like any diagnosis."""
    db = _table(tmp_path, """CREATE TABLE t AS SELECT * FROM (VALUES
        ('a', 'flu'), ('a', NULL), ('b', 'flu'), ('b', 'flu'), ('c', NULL), ('c', NULL)) v(x, d)""")
    out = str(tmp_path / "o.parquet")
    r = sqlanon.anonymize(input=db, table="t", qi={"x": "flat"}, k=2, l=2, sensitive_column="d", max_suppression=1.0, output=out, keep_others=True).to_dict()
    released = read_rows(out)
    kept = Counter(row["x"] for row in released if row["x"] != STAR)
    assert kept == {"a": 2} and r["suppressed_rows"] == 4
    assert sorted((row["d"] for row in released if row["x"] == "a"), key=str) == sorted(["flu", None], key=str)  # NULL released as NULL
    checked = sqlanon.check(db, ["x"], table="t", k=2, l=2, sensitive_column="d", max_suppression=1.0)
    assert checked["k"] == 2 and checked["l_distinct"] == 1  # b has only flu, c only NULL
    again = sqlanon.check(out, ["x"], k=2, l=2, sensitive_column="d", max_suppression=1.0)  # the release: class a is {flu, NULL}
    assert again["l_distinct"] == 2 and again["suppressed_rows"] == 4 and again["k"] == 2
    with pytest.raises(ConfigError, match="no place in the order"):
        sqlanon.anonymize(input=db, table="t", qi={"x": "flat"}, k=2, t=0.5, t_distance="ordered", sensitive_column="d", output=out, overwrite=True, keep_others=True)


def test_check_counts_null_as_a_value(tmp_path):
    rng = random.Random(9)
    db, rows = random_table(rng, tmp_path, n=200)
    got = sqlanon.check(db, ["zip", "sex"], table="t", k=2)
    classes = Counter((r["zip"], r["sex"]) for r in rows)
    assert got["k"] == min(classes.values())
    assert got.get("classes", len(classes)) == len(classes)


# ----------------------------------------------------------------------------- every search


def flexible_recheck(rows: list[dict], released: list[dict], qis: list[str], k: int, budget: int) -> None:
    """For any plan (cuts, intervals, local recoding): classes >= k, suppressed within the budget,
    and a QI is released as NULL exactly where its source is NULL (unless generalized further)."""
    by_id = {r["id"]: r for r in rows}
    assert sorted(r["id"] for r in released) == sorted(by_id)  # masked: every row released once
    suppressed = [r for r in released if all(r[q] == STAR for q in qis)]
    classes = Counter(tuple(r[q] for q in qis) for r in released if r not in suppressed)
    assert all(n >= k for n in classes.values()), classes
    assert len(suppressed) <= budget
    for r in released:
        for q in qis:
            if r[q] is None:
                assert by_id[r["id"]][q] is None, (q, r)  # a NULL released is a NULL of the input


@pytest.mark.parametrize("search", ["auto", "optimal", "samarati", "incognito", "lightning", "bottom-up", "top-down", "genetic"])
def test_every_search_releases_nulls(search, tmp_path):
    rng = random.Random(17)
    db, rows = random_table(rng, tmp_path, n=300)
    con = duckdb.connect(db)
    con.execute("ALTER TABLE t ADD COLUMN id INTEGER")
    con.execute("UPDATE t SET id = rowid")
    ids = [r[0] for r in con.execute("SELECT id FROM t ORDER BY rowid").fetchall()]
    con.close()
    for r, i in zip(rows, ids):
        r["id"] = i
    qi = {"zip": "mask", "sex": "flat", "age": "bands:10,20"}
    out = str(tmp_path / "o.parquet")
    options: dict = {"drop_columns": ["dob", "diagnosis"]}
    if search == "genetic":  # intervals hold no NULL: the numeric QI suppresses its NULLs' rows
        with pytest.raises(ConfigError, match="'age' holds NULLs, which no interval"):
            sqlanon.anonymize(input=db, table="t", qi=qi, k=4, max_suppression=0.1, output=out, search=search, keep_columns=["id", "income"], drop_columns=["dob", "diagnosis"], keep_others=True)
        options.update(search_options={"iterations": 20, "seed": 3}, nulls={"age": "suppress"})
    if search == "top-down":
        options = {"drop_columns": ["dob"], "search_options": {"x": ["zip", "sex", "age"], "y": ["diagnosis"]}}
    r = sqlanon.anonymize(input=db, table="t", qi=qi, k=4, max_suppression=0.1, output=out, search=search,
                          keep_columns=["id", "income"], **options, keep_others=True).to_dict()
    released = read_rows(out)
    flexible_recheck(_as_text(rows), [{**x, "age": x["age"]} for x in released], list(qi), 4, math.floor(0.1 * len(rows) + 1e-9))
    withheld = [x for x in rows if search == "genetic" and x["age"] is None]  # counted once, as withheld
    assert r["nulls"]["sex"]["rows"] == sum(x["sex"] is None for x in rows if x not in withheld)
    assert r.get("null_suppressed_rows", 0) == len(withheld)


# ----------------------------------------------------------------------------- PostgreSQL, Spark


def test_nulls_on_postgres(tmp_path):
    """The same NULL handling on PostgreSQL: the release equals DuckDB's (value and suppress)."""
    psycopg = pytest.importorskip("psycopg")
    from conftest import local_postgres

    rng = random.Random(23)
    db, rows = random_table(rng, tmp_path, n=250)
    with local_postgres() as uri:
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("CREATE TABLE t (zip TEXT, age INTEGER, dob DATE, sex TEXT, income NUMERIC(10,2), diagnosis TEXT)")
            with con.cursor().copy("COPY t FROM STDIN") as copy:
                for r in rows:
                    copy.write_row([r[c] for c in ("zip", "age", "dob", "sex", "income", "diagnosis")])
        for nulls in ("value", "zip=suppress"):
            opts = dict(qi={"zip": "mask", "sex": "flat", "age": "bands:10,20"}, k=3, max_suppression=0.15, nulls=nulls,
                        keep_columns=["income"], drop_columns=["dob"], sensitive_column="diagnosis", l=2, search="optimal")
            duck = sqlanon.anonymize(input=db, table="t", output=str(tmp_path / "d.parquet"), overwrite=True, **opts, keep_others=True).to_dict()
            pg = sqlanon.anonymize(input=uri, table="t", output=str(tmp_path / "p.parquet"), overwrite=True, **opts, keep_others=True).to_dict()
            assert (pg["transformation"], pg["suppressed_rows"]) == (duck["transformation"], duck["suppressed_rows"])
            columns = ["zip", "sex", "age", "diagnosis"]
            assert Counter(tuple(r[c] for c in columns) for r in read_rows(str(tmp_path / "p.parquet"))) == \
                Counter(tuple(r[c] for c in columns) for r in read_rows(str(tmp_path / "d.parquet")))


@pytest.mark.spark
def test_nulls_on_spark(spark, tmp_path):
    rng = random.Random(29)
    db, rows = random_table(rng, tmp_path, n=250)
    parquet = str(tmp_path / "t.parquet")
    con = duckdb.connect(db)
    con.execute(f"COPY t TO '{parquet}' (FORMAT parquet)")
    con.close()
    for nulls in ("value", "zip=suppress"):
        opts = dict(qi={"zip": "mask", "sex": "flat", "age": "bands:10,20"}, k=3, max_suppression=0.15, nulls=nulls,
                    keep_columns=["income"], drop_columns=["dob", "diagnosis"], search="optimal")
        duck = sqlanon.anonymize(input=parquet, output=str(tmp_path / "d.parquet"), overwrite=True, **opts, keep_others=True).to_dict()
        on_spark = sqlanon.anonymize(input=parquet, output=str(tmp_path / f"s_{nulls}"), connection=spark, **opts, keep_others=True).to_dict()
        assert (on_spark["transformation"], on_spark["suppressed_rows"]) == (duck["transformation"], duck["suppressed_rows"])
        import pyarrow.parquet as pq

        columns = ["zip", "sex", "age"]
        got = Counter(tuple(r[c] for c in columns) for r in pq.read_table(str(tmp_path / f"s_{nulls}")).to_pylist())
        assert got == Counter(tuple(r[c] for c in columns) for r in read_rows(str(tmp_path / "d.parquet")))


@pytest.mark.parametrize("nulls", ["value", "p=suppress"])
def test_the_registry_ties_the_release_to_every_input_row(nulls, tmp_path):
    """The input hash covers every row, the withheld ones too (and NULLs hash alike per row and
    per group: every column here is a text QI, so the base set's groups give the hash)."""
    from sqlanon.release.write import input_hash

    db = _table(tmp_path, "CREATE TABLE t AS SELECT * FROM (VALUES ('a','x'),('a','x'),(NULL,'x'),(NULL,'x'),('b',NULL),('b',NULL),(NULL,NULL),('c',NULL)) v(p,q)")
    out = str(tmp_path / "o.parquet")
    sqlanon.anonymize(input=db, table="t", qi={"p": "flat", "q": "flat"}, k=2, max_suppression=0.5, nulls=nulls, output=out, keep_others=True)
    engine = connect(database=db)
    try:
        expected = input_hash(engine, Source(kind="table", table="t", database=db))
    finally:
        engine.close()
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"), read_only=True)
    try:
        assert reg.sql("SELECT input_hash, rows FROM sqlanon_releases").fetchall() == [(expected, 8)]
    finally:
        reg.close()


@pytest.mark.parametrize("sample_nulls", [True, False])
def test_k_map_population_with_nulls(sample_nulls, tmp_path):
    """k-map against a population table: NULL is a value there too (its own population class),
    whether or not the sample holds NULLs; a class's population count, brute force."""
    rng = random.Random(31)
    pop = [(rng.choice(["01234", "01299", None]), rng.choice(["F", "M"])) for _ in range(200)]
    sample = [r for r in pop if (sample_nulls or r[0] is not None) and rng.random() < 0.4]
    db = str(tmp_path / "k.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE pop (zip VARCHAR, sex VARCHAR)")
    con.executemany("INSERT INTO pop VALUES (?, ?)", pop)
    con.execute("CREATE TABLE t (zip VARCHAR, sex VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?)", sample)
    con.close()
    out = str(tmp_path / "o.parquet")
    k = 30
    r = sqlanon.anonymize(input=db, table="t", qi={"zip": "mask", "sex": "flat"}, k_map=k, population="pop", max_suppression=0.5,
                          output=out, min_level={"zip": 0, "sex": 0}, max_level={"zip": 0, "sex": 0}, keep_others=True).to_dict()
    pop_classes = Counter(pop)
    expect_kept = sum(1 for row in sample if pop_classes[row] >= k)
    released = read_rows(out)
    assert sum(1 for row in released if row["zip"] != STAR) == expect_kept
    assert r["suppressed_rows"] == len(sample) - expect_kept
    for row in released:
        if row["zip"] != STAR:
            assert pop_classes[(row["zip"], row["sex"])] >= k


def test_hierarchy_show_prints_the_null_leaf(tmp_path):
    path = tmp_path / "zip.csv"
    path.write_text("01234;0123*;*\n;;*\n")
    ran = runner.invoke(app, ["hierarchy", "show", str(path), "--column", "zip"])
    assert ran.exit_code == 0, ran.output
    assert ran.stdout.splitlines()[-1] == "  NULL -> NULL -> *"
