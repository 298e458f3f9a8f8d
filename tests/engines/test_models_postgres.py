"""Recursive (c,l)-diversity, hierarchical t-closeness, k-map and delta-presence on PostgreSQL
(a real server from the pgserver wheel): the same plan as DuckDB on the same data, the population
held as a table in the server's database, the release re-checked by tests/checker.py."""

from __future__ import annotations

import random
import uuid

import pytest

pgserver = pytest.importorskip("pgserver")
psycopg = pytest.importorskip("psycopg")

pytestmark = pytest.mark.postgres

import sqlanon.run.api  # noqa: E402
from conftest import local_postgres  # noqa: E402
from checker import check_delta_presence, check_k_map, check_recursive_cl, check_t_hierarchical, read_rows  # noqa: E402

COLUMNS = ["id", "zip", "age", "disease", "buys"]
DISEASE_TREE = [["flu", "respiratory", "*"], ["cold", "respiratory", "*"], ["hiv", "serious", "*"], ["cancer", "serious", "*"]]


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pgmodels")
    with local_postgres() as uri:
        yield from _population(uri, tmp)


def _population(uri, tmp):
    rnd = random.Random(11)
    rows = [[i, rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59), rnd.choice(["flu", "cold", "hiv", "cancer"]), rnd.choice(["yes", "no"])] for i in range(400)]
    research = [r for r in rows if r[0] % 3 != 0]
    db = "m_" + uuid.uuid4().hex[:10]
    with psycopg.connect(uri, autocommit=True) as con:
        con.execute("CREATE DATABASE " + db)
    head, _, query = uri.partition("?")
    url = head.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
    with psycopg.connect(url, autocommit=True) as con:
        for name, data in (("population", rows), ("research", research)):
            con.execute("CREATE TABLE " + name + " (id INTEGER, zip TEXT, age INTEGER, disease TEXT, buys TEXT)")
            with con.cursor().copy("COPY " + name + " FROM STDIN") as copy:
                for r in data:
                    copy.write_row(r)
    files = {}
    for name, data in (("population", rows), ("research", research)):
        path = tmp / f"{name}.csv"
        path.write_text("\n".join([",".join(COLUMNS)] + [",".join(map(str, r)) for r in data]) + "\n")
        files[name] = str(path)
    tree = tmp / "disease.csv"
    tree.write_text("\n".join(";".join(r) for r in DISEASE_TREE) + "\n")
    yield {"url": url, "files": files, "dir": tmp, "rows": rows, "research": research, "tree": str(tree)}


def as_dicts(rows):
    return [dict(zip(COLUMNS, map(str, r))) for r in rows]


QI = {"zip": "mask", "age": "bands:5,10,20"}


@pytest.mark.parametrize(
    "name,options",
    [
        ("recursive", dict(k=2, l_diversity="recursive", l=2, c=3.0, sensitive_column="disease", max_suppression=0.02)),
        ("hierarchical", dict(k=2, t=0.15, t_distance="hierarchical", sensitive_column="disease")),
        ("k-map", dict(k_map=6, max_suppression=0.02)),
        ("delta", dict(delta_min=0.3, delta_max=0.8, max_suppression=0.05)),
        # the genetic search rolls the population up by its candidates' class keys
        ("k-map", dict(k_map=6, max_suppression=0.02, search="genetic", metric="lm", search_options={"iterations": 60, "population": 12, "seed": 3})),
        ("delta", dict(delta_min=0.3, delta_max=0.8, max_suppression=0.05, search="genetic", metric="lm", search_options={"iterations": 60, "population": 12, "seed": 3})),
    ],
)
def test_same_plan_as_duckdb_and_rechecked(pg, name, options):
    options = dict(options)
    if name == "hierarchical":
        options["t_hierarchy"] = pg["tree"]
    duck_opts, pg_opts = dict(options), dict(options)
    if name in ("k-map", "delta"):
        duck_opts["population"] = pg["files"]["population"]
        pg_opts["population"] = "population"
    duck_out, pg_out = str(pg["dir"] / f"d_{name}.parquet"), str(pg["dir"] / f"p_{name}.parquet")
    duck = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=pg["files"]["research"], qi=QI, output=duck_out, overwrite=True, **duck_opts)
    post = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=pg["url"], table="research", qi=QI, output=pg_out, overwrite=True, **pg_opts)
    assert post.transformation == duck.transformation
    assert post.suppressed_rows == duck.suppressed_rows
    assert post.metric.value == pytest.approx(duck.metric.value, rel=1e-9, abs=1e-12)
    released = [{k: str(v) for k, v in r.items()} for r in read_rows(pg_out)]
    assert len(released) == len(pg["research"])
    qis = list(QI)
    if name == "recursive":
        assert not check_recursive_cl(released, qis, "disease", 3.0, 2)
    elif name == "hierarchical":
        assert not check_t_hierarchical(released, qis, "disease", 0.15, DISEASE_TREE, as_dicts(pg["research"]))
    else:
        # generalize the population by the released labels: the release's own hierarchies, rebuilt
        # from the original -> released value pairs of the research rows (every population value
        # of a QI occurs in research here, which the check below asserts)
        by_id = {str(r[0]): r for r in pg["research"]}
        maps = {q: {} for q in qis}
        for r in released:
            if r["zip"] == "*" and r["age"] == "*":
                continue
            orig = by_id[r["id"]]
            maps["zip"][str(orig[1])] = r["zip"]
            maps["age"][str(orig[2])] = r["age"]
        population = [r for r in as_dicts(pg["rows"]) if r["zip"] in maps["zip"] and r["age"] in maps["age"]]
        hier = {q: {v: [v, lab] for v, lab in maps[q].items()} for q in qis}
        levels = {q: 1 for q in qis}
        if name == "k-map":
            assert not check_k_map(released, qis, population, hier, levels, 6)
        else:
            assert not check_delta_presence(released, qis, population, hier, levels, 0.3, 0.8)


def test_safepub_sampling_and_release_on_postgres(pg):
    """SafePub's SQL sample on PostgreSQL (hashtextextended shape): a seeded run is repeatable,
    keeps about beta of the rows, and every released class has at least the derived k rows."""
    import math

    from checker import check_k

    from sqlanon.search.lattice import safepub

    outs = []
    for i in range(2):
        out = str(pg["dir"] / f"sp{i}.parquet")
        report = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=pg["url"], table="population", qi=QI, epsilon=1.0, delta=1e-3, seed=5, safepub_steps=10, output=out, overwrite=True)
        rows = [{k: str(v) for k, v in r.items()} for r in read_rows(out)]
        outs.append(sorted(r["id"] for r in rows))
        sp = report.extra['safepub']
        assert sp["input_rows"] == 400 and len(rows) == sp["sample_rows"]
        b = safepub.beta(0.9)
        assert abs(sp["sample_rows"] - 400 * b) <= 4 * math.sqrt(400 * b * (1 - b))
        assert check_k(rows, list(QI), safepub.derive_k(0.9, 1e-3), 1.0)["ok"]
    assert outs[0] == outs[1]


def test_sampling_uniform_is_uniform_on_postgres(pg):
    """PostgreSQL's sampling number ((hashtextextended + 2^63) / 2^64) over 20,000 integers: in
    [0, 1), mean 1/2, below b for about b of them (400-row SafePub runs cannot tell a rate of 0.5
    from SafePub's 0.593)."""
    from unit_hash_check import assert_uniform, rates_query

    with psycopg.connect(pg["url"]) as con:
        assert_uniform(con.execute(rates_query("postgres", "SELECT g AS id FROM generate_series(1, 20000) AS g")).fetchone())


def _normalized(rows):
    """Released rows as comparable tuples: numbers printed alike whatever type the engine gave."""
    out = []
    for r in rows:
        values = []
        for c in COLUMNS:
            v = r[c]
            try:
                values.append(None if v is None else f"{float(v):.6f}")
            except ValueError:
                values.append(str(v))
        out.append(tuple(values))
    return sorted(out, key=repr)


@pytest.mark.parametrize("fn", ["mean", "median"])
def test_local_recoding_and_microaggregation_same_as_duckdb(pg, fn):
    """Local recoding with a microaggregated QI on PostgreSQL: DuckDB's two rounds, suppressed rows
    and released multiset; the release re-checked (every class at least k, each class's age its
    mean or median, suppressed rows hold no age)."""
    from checker import check_k, check_microaggregation

    options = dict(k=4, max_suppression=0.1, local_recoding=True, microaggregate={"age": fn})
    duck_out, pg_out = str(pg["dir"] / f"lr_d_{fn}.parquet"), str(pg["dir"] / f"lr_p_{fn}.parquet")
    duck = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=pg["files"]["research"], qi=QI, output=duck_out, overwrite=True, **options)
    post = sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=pg["url"], table="research", qi=QI, output=pg_out, overwrite=True, **options)
    assert post.suppressed_rows == duck.suppressed_rows
    assert post.extra['local_recoding']["rounds"] == duck.extra['local_recoding']["rounds"]
    assert len(duck.extra['local_recoding']["rounds"]) == 2  # a second round releases rows the first suppressed
    released = read_rows(pg_out)
    assert _normalized(released) == _normalized(read_rows(duck_out))
    assert len(released) == len(pg["research"])
    original = as_dicts(pg["research"])
    verdict = check_microaggregation(original, released, "id", list(QI), "age", fn)
    assert verdict["ok"] and verdict["classes"] > 1, verdict
    assert check_k([{k: str(v) for k, v in r.items()} for r in released], list(QI), 4, 1.0)["ok"]
