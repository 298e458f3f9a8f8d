"""Linked columns (:mod:`sqlanon.release.linked`, :mod:`sqlanon.profiling.links`): a column that
is a function of a quasi-identifier is found by SQL, refused in clear, and released no finer than
its QI; every release is re-checked by an independent checker grouping it by the QIs *and* the
linked columns."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import duckdb
import pytest
import yaml

import sqlanon
from sqlanon.engine import connect
from sqlanon.errors import ConfigError
from sqlanon.release.linked import dependencies
from sqlglot import exp

#: states and the 2-digit zip prefixes they hold (a zip's state follows from its first digits)
STATES = {"MA": ["01", "02"], "NY": ["10", "11"], "IL": ["60", "62"], "MO": ["63", "64"], "OH": ["43", "44"]}
#: city names some states share (a city does not determine its state)
SHARED = ["Springfield", "Franklin", "Clinton"]
CHAPTERS = {"E": "E00-E89", "I": "I00-I99", "J": "J00-J99", "C": "C00-D49"}


def hospital(seed: int, rows: int = 3000, code_nulls: float = 0.03):
    """Rows of a hospital table: zip (leading zeros), its city and state, a date of birth and its
    year, sex, an ICD-10 code and its chapter (a few NULLs), a length of stay."""
    rng = random.Random(seed)
    zips = {}
    for state, prefixes in STATES.items():
        for p in prefixes:
            for i in range(rng.randint(4, 7)):
                z = f"{p}{rng.randint(0, 9)}{rng.randint(0, 99):02d}"
                city = rng.choice(SHARED) if rng.random() < 0.3 else f"{state}-town-{p}{i % 3}"
                zips[z] = (city, state)
    codes = [f"{ch}{rng.randint(0, 99):02d}.{rng.randint(0, 9)}" for ch in CHAPTERS for _ in range(6)]
    out = []
    zip_list = sorted(zips)
    no_city = set(rng.sample(zip_list, 3))  # a city missing (NULL) for every row of a few zips: NULL is a value
    for _ in range(rows):
        z = rng.choice(zip_list[: len(zip_list) // 3]) if rng.random() < 0.5 else rng.choice(zip_list)  # skew
        city, state = zips[z]
        year = rng.randint(1940, 2005)
        dob = f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        code = None if rng.random() < code_nulls else rng.choice(codes)
        chapter = None if code is None else CHAPTERS[code[0]]
        out.append((z, None if z in no_city else city, state, dob, year, rng.choice("MF"), code, chapter, rng.randint(1, 30)))
    return out


COLUMNS = "zip VARCHAR, city VARCHAR, state VARCHAR, dob VARCHAR, birth_year INTEGER, sex VARCHAR, icd VARCHAR, chapter VARCHAR, stay INTEGER"


def make_db(path, rows):
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE patients ({COLUMNS})")
    con.executemany("INSERT INTO patients VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    return str(path)


def release_rows(path):
    con = duckdb.connect()
    rel = con.execute(f"SELECT * FROM read_parquet('{path}')")
    names = [d[0] for d in rel.description]
    return [dict(zip(names, r)) for r in rel.fetchall()]


def check_release(released, source_rows, qis, linked, k, budget):
    """The independent checker: classes over the QIs plus the linked columns (rows with every QI
    ``*`` are the suppressed ones) hold k rows each; suppression within budget; a linked column is
    its source value or ``*``, and ``*`` wherever its QI is ``*``."""
    assert len(released) == len(source_rows)
    suppressed = [r for r in released if all(r[q] == "*" for q in qis)]
    assert len(suppressed) <= budget
    groups = Counter(tuple(str(r[c]) for c in [*qis, *linked]) for r in released if r not in suppressed)
    assert min(groups.values()) >= k, min(groups.items(), key=lambda kv: kv[1])
    # the same classes as over the QIs alone: a linked column splits none
    assert len(groups) == len(Counter(tuple(str(r[c]) for c in qis) for r in released if r not in suppressed))
    for column, qi in linked.items():
        values = {str(v) for v in (s[list(COLUMNS_ORDER).index(column)] for s in source_rows)}
        for r in released:
            assert r[column] is None or r[column] == "*" or str(r[column]) in values
            if r[qi] == "*":
                assert r[column] == "*"


COLUMNS_ORDER = [c.split()[0] for c in COLUMNS.split(", ")]


def test_dependencies_count_by_sql_with_nulls_as_values():
    rng = random.Random(3)
    rows = [(f"{i % 40:05d}", None if i % 40 == 7 else f"c{i % 40 // 3}", "A" if i % 40 < 20 else "B", str(rng.randint(0, 9))) for i in range(400)]
    con = duckdb.connect()
    con.execute("CREATE TABLE t (zip VARCHAR, city VARCHAR, state VARCHAR, noise VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    eng = connect(connection=con)
    found = dependencies(eng, exp.to_table("t"), [("zip", "city"), ("zip", "state"), ("city", "state"), ("zip", "noise"), ("state", "city")])
    # the oracle: distinct keys and distinct (key, column) pairs, in Python
    names = ["zip", "city", "state", "noise"]
    for (key, column), d in found.items():
        a, b = names.index(key), names.index(column)
        assert d.keys == len({r[a] for r in rows})
        assert d.pairs == len({(r[a], r[b]) for r in rows})
    assert found[("zip", "city")].exact and found[("zip", "state")].exact
    assert not found[("zip", "noise")].exact and not found[("state", "city")].exact
    # c2 (zips 6, 7, 8) holds a NULL city for zip 7: city still follows zip, and c6 spans A and B
    assert not found[("city", "state")].exact


@pytest.fixture(scope="module")
def patients(tmp_path_factory):
    rows = hospital(11)
    return make_db(tmp_path_factory.mktemp("linked") / "h.duckdb", rows), rows


QI = {"zip": "mask", "dob": "dates", "sex": "flat"}


def test_a_function_of_a_qi_in_clear_is_refused(patients, tmp_path):
    db, _ = patients
    with pytest.raises(ConfigError, match=r"column 'city' is a function of the quasi-identifier 'zip'.*--linked city=zip.*--keep-linked city"):
        sqlanon.anonymize(input=db, table="patients", qi=QI, k=5, max_suppression=0.05, output=str(tmp_path / "o.parquet"), drop_columns=["icd", "chapter"], keep_others=True)
    with pytest.raises(ConfigError, match=r"'birth_year' is a function of the quasi-identifier 'dob'"):
        sqlanon.anonymize(input=db, table="patients", qi=QI, k=5, max_suppression=0.05, output=str(tmp_path / "o.parquet"),
                          drop_columns=["icd", "chapter"], linked={"city": "zip", "state": "zip"}, keep_others=True)


def test_keep_linked_releases_in_clear_knowingly(patients, tmp_path):
    db, rows = patients
    out = str(tmp_path / "kept.parquet")
    sqlanon.anonymize(input=db, table="patients", qi=QI, k=5, max_suppression=0.05, output=out, drop_columns=["icd", "chapter", "birth_year"],
                      linked={"city": "zip"}, keep_linked=["state"], keep_others=True)
    released = release_rows(out)
    assert sorted(r["state"] for r in released) == sorted(r[2] for r in rows)  # as it is


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("suppression", ["mask", "drop"])
def test_release_is_k_anonymous_over_qis_and_linked_columns(tmp_path, seed, suppression):
    rows = hospital(seed, code_nulls=0.0)  # NULLs in a QI are refused (another change makes them a value)
    db = make_db(tmp_path / "h.duckdb", rows)
    out = str(tmp_path / "o.parquet")
    linked = {"city": "zip", "state": "zip", "birth_year": "dob", "chapter": "icd"}
    qi = {**QI, "icd": "mask"}
    k = 5
    report = sqlanon.anonymize(input=db, table="patients", qi=qi, k=k, max_suppression=0.05, output=out, linked=linked, suppression=suppression, keep_others=True)
    released = release_rows(out)
    if suppression == "drop":
        assert len(released) == len(rows) - report.to_dict()["suppressed_rows"]
        released += [{c: "*" for c in COLUMNS_ORDER}] * report.to_dict()["suppressed_rows"]
    check_release(released, rows, list(qi), linked, k, int(0.05 * len(rows)))
    # where the QI keeps enough, a linked column is shown: state where zip's release determines it
    by_zip = defaultdict(set)
    for r in released:
        if r["zip"] != "*":
            by_zip[r["zip"]].add(r["state"])
    assert all(len(v) == 1 for v in by_zip.values())


def test_linked_checks_name_the_culprit(patients, tmp_path):
    db, _ = patients
    base = dict(input=db, table="patients", qi=QI, k=5, max_suppression=0.05, output=str(tmp_path / "x.parquet"), drop_columns=["icd", "chapter", "birth_year"])
    with pytest.raises(ConfigError, match="'town' is not a quasi-identifier"):
        sqlanon.anonymize(**base, linked={"city": "town", "state": "zip"}, keep_others=True)
    with pytest.raises(ConfigError, match="unknown column 'nope'"):
        sqlanon.anonymize(**base, linked={"nope": "zip", "city": "zip", "state": "zip"}, keep_others=True)
    with pytest.raises(ConfigError, match="'sex' is also a quasi-identifier"):
        sqlanon.anonymize(**base, linked={"sex": "zip", "city": "zip", "state": "zip"}, keep_others=True)
    with pytest.raises(ConfigError, match="'city' is also kept as it is"):
        sqlanon.anonymize(**base, linked={"city": "zip", "state": "zip"}, keep_linked=["city"], keep_others=True)


def test_cli_linked_flags(patients, tmp_path):
    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    db, rows = patients
    out = tmp_path / "cli.parquet"
    args = ["anonymize", "--keep-others", "--input", db, "--table", "patients", "--qi", "zip=mask", "--qi", "dob=dates", "--qi", "sex=flat", "--k", "5",
            "--max-suppression", "0.05", "--drop-column", "icd", "--drop-column", "chapter", "-o", str(out), "-q"]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code != 0 and "'city' is a function of the quasi-identifier 'zip'" in refused.output
    ok = CliRunner().invoke(app, [*args, "--linked", "city=zip,state=zip", "--linked", "birth_year=dob"])
    assert ok.exit_code == 0, ok.output
    check_release(release_rows(out), rows, ["zip", "dob", "sex"], {"city": "zip", "state": "zip", "birth_year": "dob"}, 5, int(0.05 * len(rows)))
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({"input": db, "table": "patients", "qi": {"zip": "mask", "dob": "dates", "sex": "flat"}, "k": 5, "max_suppression": 0.05,
                                      "drop_columns": ["icd", "chapter"], "release": {"linked": {"city": "zip", "state": "zip"}, "keep_linked": ["birth_year"]},
                                      "output": str(tmp_path / "pol.parquet")}))
    ran = CliRunner().invoke(app, ["anonymize", "--keep-others", "--policy", str(policy), "-q"])
    assert ran.exit_code == 0, ran.output


def test_profile_finds_links_and_proposes_one_hierarchy(patients, tmp_path):
    db, rows = patients
    policy_path = tmp_path / "p.yaml"
    result = sqlanon.profile(db, table="patients", write_policy=str(policy_path), k=5)
    assert result["links"] == {"city": "zip", "state": "zip", "birth_year": "dob"}
    assert "city" not in result["roles"]["qi"] and "state" not in result["roles"]["qi"] and result["roles"]["linked"] == ["city", "state", "birth_year"]
    zip_entry = next(c for c in result["columns"] if c["name"] == "zip")
    assert zip_entry["hierarchy"]["kind"] == "linked" and "state" in zip_entry["hierarchy"]["reason"]
    text = policy_path.read_text()
    policy = yaml.safe_load(text)
    assert policy["linked"] == {"city": "zip", "state": "zip", "birth_year": "dob"}
    # the hierarchy file: leaves with their leading zeros, a tree whose levels come from the data
    from sqlanon.hierarchy import read_csv_hierarchy

    h = read_csv_hierarchy(str(tmp_path / policy["qi"]["zip"]), "zip")
    assert {r[0] for r in h.rows} == {r[0] for r in rows} and any(r[0].startswith("0") for r in h.rows)
    state_of = {r[0]: r[2] for r in rows}
    level = next(j for j in range(1, h.max_level) if {r[j] for r in h.rows} == set(STATES))
    assert all(r[level] == state_of[r[0]] for r in h.rows)
    # levels ordered by how many values each keeps
    sizes = [len({r[j] for r in h.rows}) for j in range(h.max_level + 1)]
    assert sizes == sorted(sizes, reverse=True)
    # the policy runs as it is, and its release is k-anonymous over the QIs and the linked columns
    sqlanon.anonymize(str(policy_path), keep_others=True)
    con = duckdb.connect(db, read_only=True)
    rel = con.execute("SELECT * FROM patients_k5")
    names = [d[0] for d in rel.description]
    released = [dict(zip(names, r)) for r in rel.fetchall()]
    con.close()
    check_release(released, rows, list(policy["qi"]), policy["linked"], 5, int(0.05 * len(rows)))


def test_profile_reports_a_near_link_and_links_nothing_on_noise(tmp_path):
    rng = random.Random(5)
    rows = []
    for _i in range(2000):
        z = f"{rng.randint(0, 199):05d}"
        city = f"c{int(z) // 4}" if rng.random() > 0.001 else "elsewhere"
        rows.append((z, city, rng.choice("MF"), rng.randint(1, 9)))
    con = duckdb.connect(str(tmp_path / "n.duckdb"))
    con.execute("CREATE TABLE t (zip VARCHAR, city VARCHAR, sex VARCHAR, score INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)
    con.close()
    result = sqlanon.profile(str(tmp_path / "n.duckdb"), table="t")
    assert result["links"] == {}
    assert [n["column"] for n in result["near_links"]] == ["city"] and result["near_links"][0]["of"] == "zip"


def test_postgres_finds_the_same_links_and_releases_the_same_rows(tmp_path):
    pytest.importorskip("pgserver")
    psycopg = pytest.importorskip("psycopg")
    from conftest import local_postgres

    rows = hospital(13, rows=1500, code_nulls=0.0)
    db = make_db(tmp_path / "h.duckdb", rows)
    linked = {"city": "zip", "state": "zip", "birth_year": "dob", "chapter": "icd"}
    qi = {**QI, "icd": "mask"}
    out = str(tmp_path / "d.parquet")
    sqlanon.anonymize(input=db, table="patients", qi=qi, k=5, max_suppression=0.05, output=out, linked=linked, keep_others=True)
    with local_postgres() as url:
        with psycopg.connect(url, autocommit=True) as con:
            con.execute(f"CREATE TABLE patients ({COLUMNS.replace('VARCHAR', 'TEXT')})")
            with con.cursor().copy("COPY patients FROM STDIN") as copy:
                for r in rows:
                    copy.write_row(r)
        found = sqlanon.profile(url, table="patients")
        assert found["links"] == {"city": "zip", "state": "zip", "birth_year": "dob"}
        with pytest.raises(ConfigError, match="'city' is a function of the quasi-identifier 'zip'"):
            sqlanon.anonymize(input=url, table="patients", qi=qi, k=5, max_suppression=0.05, output_table="nope", keep_others=True)
        sqlanon.anonymize(input=url, table="patients", qi=qi, k=5, max_suppression=0.05, output_table="released", linked=linked, keep_others=True)
        with psycopg.connect(url) as con, con.cursor() as cur:
            cur.execute("SELECT * FROM released")
            names = [d.name for d in cur.description]
            pg = [dict(zip(names, r)) for r in cur.fetchall()]
    check_release(pg, rows, list(qi), linked, 5, int(0.05 * len(rows)))
    as_text = lambda rs: sorted(tuple("" if r[c] is None else str(r[c]) for c in COLUMNS_ORDER) for r in rs)  # noqa: E731
    assert as_text(pg) == as_text(release_rows(out))


def test_spark_refuses_and_releases_like_duckdb(spark, tmp_path):
    rows = hospital(14, rows=800, code_nulls=0.0)
    db = make_db(tmp_path / "h.duckdb", rows)
    parquet = str(tmp_path / "h.parquet")
    con = duckdb.connect(db)
    con.execute(f"COPY patients TO '{parquet}' (FORMAT parquet)")
    con.close()
    linked = {"city": "zip", "state": "zip", "birth_year": "dob", "chapter": "icd"}
    qi = {**QI, "icd": "mask"}
    opts = dict(qi=qi, k=4, max_suppression=0.05)
    with pytest.raises(ConfigError, match="'city' is a function of the quasi-identifier 'zip'"):
        sqlanon.anonymize(input=parquet, output=str(tmp_path / "no"), connection=spark, **opts, keep_others=True)
    sqlanon.anonymize(input=parquet, output=str(tmp_path / "duck.parquet"), linked=linked, **opts, keep_others=True)
    sqlanon.anonymize(input=parquet, output=str(tmp_path / "spark"), connection=spark, linked=linked, **opts, keep_others=True)
    spark_rows = release_rows(str(tmp_path / "spark" / "*.parquet"))
    check_release(spark_rows, rows, list(qi), linked, 4, int(0.05 * len(rows)))
    as_text = lambda rs: sorted(tuple("" if r[c] is None else str(r[c]) for c in COLUMNS_ORDER) for r in rs)  # noqa: E731
    assert as_text(spark_rows) == as_text(release_rows(str(tmp_path / "duck.parquet")))


def test_sql_script_releases_linked_columns_as_anonymize_does(patients, tmp_path):
    """``sqlanon sql``: the script's release holds the same rows as the written release."""
    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    db, rows = patients
    opts = ["--input", db, "--table", "patients", "--qi", "zip=mask", "--qi", "dob=dates", "--qi", "sex=flat", "--k", "5", "--max-suppression", "0.05",
            "--drop-column", "icd", "--drop-column", "chapter", "--linked", "city=zip,state=zip,birth_year=dob"]
    out = tmp_path / "w.parquet"
    assert CliRunner().invoke(app, ["anonymize", "--keep-others", *opts, "-o", str(out), "-q"]).exit_code == 0
    script = CliRunner().invoke(app, ["sql", "--keep-others", *opts])
    assert script.exit_code == 0, script.output
    assert "sqlanon_linked0" in script.output
    con = duckdb.connect(db, read_only=True)
    statements = [s for s in script.output.split(";") if s.strip()]
    for s in statements[:-1]:
        con.execute(s)
    got = con.execute(statements[-1])
    names = [d[0] for d in got.description]
    from_script = [dict(zip(names, r)) for r in got.fetchall()]
    con.close()
    as_text = lambda rs: sorted(tuple("" if r[c] is None else str(r[c]) for c in names) for r in rs)  # noqa: E731
    assert as_text(from_script) == as_text(release_rows(str(out)))
