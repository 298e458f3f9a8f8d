"""``sqlanon profile``: roles with reasons, hierarchies from the data, the risk before
anonymization, and a written policy that anonymizes as it is (CLI and API) into a release the
independent checker accepts; nothing of the table's values in the policy but hierarchy labels."""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import json
import math
import random
import re
from collections import Counter

import duckdb
import pytest
import yaml
from checker import check_k, read_rows
from typer.testing import CliRunner

import sqlanon
from sqlanon.cli.app import app
from sqlanon.errors import ConfigError

runner = CliRunner()

DIAGNOSES = ["flu", "asthma", "diabetes", "migraine", "bronchitis", "gastritis", "anemia", "eczema"]
WORDS = ["patient", "reports", "mild", "pain", "since", "monday", "called", "back", "later", "seen", "by", "doctor", "again", "today", "with", "family"]


def synthetic_rows(n: int = 400, seed: int = 3) -> list[dict]:
    rnd = random.Random(seed)
    zips = [f"{rnd.randint(10000, 99999)}" for _ in range(60)]
    rows = []
    for i in range(n):
        born = dt.date(1940, 1, 1) + dt.timedelta(days=rnd.randint(0, 60 * 365))
        rows.append({
            "id": str(1000 + i),
            "contact": f"user{i}.{rnd.choice(['x', 'y', 'z'])}@example{rnd.randint(1, 9)}.org",
            "callback": f"+1 {rnd.randint(200, 999)} {rnd.randint(100, 999)} {rnd.randint(1000, 9999)}",
            "zip": rnd.choice(zips),
            "dob": born.isoformat(),
            "diagnosis": rnd.choice(DIAGNOSES),
            "notes": " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(5, 9))),
            "ref": f"R{rnd.randint(0, 9)}{i:05d}",
            "visits": str(rnd.randint(0, 4)),
        })
    return rows


EXPECTED = {
    "id": ("identifier", None), "contact": ("identifier", None), "callback": ("identifier", None),
    "zip": ("qi", "mask"), "dob": ("qi", "age"), "diagnosis": ("sensitive", None), "notes": ("identifier", None),
    "ref": ("identifier", None), "visits": ("insensitive", None),
}


@pytest.fixture
def synthetic(tmp_path):
    rows = synthetic_rows()
    path = tmp_path / "people.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return {"csv": str(path), "rows": rows, "dir": tmp_path}


def roles_of(result: dict) -> dict:
    return {c["name"]: (c["role"], (c.get("hierarchy") or {}).get("kind")) for c in result["columns"]}


def table_values(rows: list[dict]) -> set[str]:
    return {str(v) for r in rows for v in r.values() if len(str(v)) >= 4}


def read(path) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def assert_no_values(policy_path: str, rows: list[dict], labels: set[str] = frozenset()) -> None:
    text = read(policy_path)
    leaked = sorted(v for v in table_values(rows) - set(labels) if re.search(r"(?<![A-Za-z0-9])" + re.escape(v) + r"(?![A-Za-z0-9])", text))
    assert not leaked, f"table values in the policy: {leaked[:5]}"


def test_synthetic_roles_and_hierarchies(synthetic):
    result = sqlanon.profile(synthetic["csv"])
    assert roles_of(result) == EXPECTED
    reasons = {c["name"]: c["reason"] for c in result["columns"]}
    assert "e-mail" in reasons["contact"] and "phone" in reasons["callback"]
    assert "free text" in reasons["notes"] and "unique" in reasons["ref"]
    assert result["roles"]["qi"] == ["zip", "dob"]
    dob = next(c for c in result["columns"] if c["name"] == "dob")
    assert dob["hierarchy"]["spec"] == f"age:{dt.datetime.now(dt.UTC).date().isoformat()},5,10,20"
    # the risk before anonymization is the class-size histogram of (zip, dob), in plain Python
    sizes = Counter((r["zip"], r["dob"]) for r in synthetic["rows"])
    uniques = sum(1 for s in sizes.values() if s == 1)
    assert result["risk"]["sample_uniques"]["records"] == uniques
    assert result["risk"]["prosecutor"]["average"] == pytest.approx(len(sizes) / len(synthetic["rows"]))
    assert result["sample"] is None


def test_synthetic_policy_anonymizes_cli_and_api(synthetic):
    policy = str(synthetic["dir"] / "policy.yaml")
    out = runner.invoke(app, ["profile", "--input", synthetic["csv"], "--write-policy", policy, "--k", "4"])
    assert out.exit_code == 0, out.output
    assert "policy written to" in out.output
    assert_no_values(policy, synthetic["rows"])
    data = yaml.safe_load(read(policy))
    assert data["qi"] == {"zip": "mask", "dob": f"age:{dt.datetime.now(dt.UTC).date().isoformat()},5,10,20"} and data["k"] == 4
    assert set(data["drop_columns"]) == {"id", "contact", "callback", "notes", "ref"}
    # the CLI runs it as it is
    ran = runner.invoke(app, ["anonymize", "--policy", policy, "--json", "-q"])
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.output.strip().splitlines()[-1])
    # the release and its report go beside the policy
    assert report["output"] == str(synthetic["dir"] / "people_k4.parquet")
    assert (synthetic["dir"] / "people_k4.html").is_file()
    released = read_rows(report["output"])
    assert set(released[0]) == {"zip", "dob", "diagnosis", "visits"}
    verdict = check_k(released, ["zip", "dob"], 4, data["max_suppression"])
    assert verdict["ok"], verdict["problems"]
    assert sqlanon.check(report["output"], ["zip", "dob"], k=4, max_suppression=data["max_suppression"])["k_anonymous"]
    # and so does the API (a second release beside the first)
    again = sqlanon.anonymize(policy, output=str(synthetic["dir"] / "api.parquet"), overwrite=True)
    assert check_k(read_rows(str(synthetic["dir"] / "api.parquet")), ["zip", "dob"], 4, data["max_suppression"])["ok"]
    assert again.transformation == report["transformation"]


def test_written_policy_refused_when_it_exists(synthetic):
    policy = synthetic["dir"] / "policy.yaml"
    policy.write_text("k: 2\n")
    out = runner.invoke(app, ["profile", "--input", synthetic["csv"], "--write-policy", str(policy)])
    assert out.exit_code == 2 and "already exists" in out.output
    assert policy.read_text() == "k: 2\n"
    assert runner.invoke(app, ["profile", "--input", synthetic["csv"], "--write-policy", str(policy), "--overwrite"]).exit_code == 0
    assert "qi:" in policy.read_text()


def test_adult_roles_policy_and_release(adult, tmp_path):
    policy = str(tmp_path / "adult.yaml")
    result = sqlanon.profile(adult["csv"], write_policy=policy)
    roles = roles_of(result)
    assert roles["salary-class"] == ("sensitive", None)
    assert roles["age"] == ("qi", "bands")
    assert roles["native-country"] == ("qi", "frequency")
    for c in ("sex", "race", "marital-status", "education", "workclass", "occupation"):
        assert roles[c] == ("qi", "flat"), c
    age = next(c for c in result["columns"] if c["name"] == "age")
    widths = [float(w) for w in age["hierarchy"]["spec"].split(":")[1].split(",")]
    assert all(b % a == 0 for a, b in itertools.pairwise(widths))
    assert widths[-1] * 4 > age["max"] - age["min"]  # the top bands cover the range
    # the risk before anonymization equals plain Python over the CSV
    with open(adult["csv"], newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter=";"))
    sizes = Counter(tuple(r[q] for q in result["roles"]["qi"]) for r in rows)
    assert result["risk"]["classes"] == len(sizes)
    assert result["risk"]["sample_uniques"]["records"] == sum(1 for s in sizes.values() if s == 1)
    # the grouping by frequency went to a file beside the policy, not into it
    assert result["hierarchy_files"] == [str(tmp_path / "adult.native-country.csv")]
    labels = {row.split(";")[1] for row in read(result["hierarchy_files"][0]).splitlines()}
    assert_no_values(policy, rows)
    assert "other" in labels
    # oracles in plain Python: the grouping by frequency (kept where at least max(k, 1 %) rows,
    # most frequent first) and the first band width (a quarter of the interquartile range, as
    # PERCENTILE_CONT interpolates, rounded up to 1, 2 or 5 times a power of ten)
    counts = Counter(r["native-country"] for r in rows)
    cut = max(5, math.ceil(0.01 * len(rows)))
    grouped = [f"{v};{v if n >= cut else 'other'};*" for v, n in sorted(counts.items(), key=lambda vn: (-vn[1], vn[0]))]
    assert read(result["hierarchy_files"][0]).splitlines() == grouped
    ages = sorted(float(r["age"]) for r in rows)

    def percentile_cont(q):
        at = q * (len(ages) - 1)
        lo = math.floor(at)
        return ages[lo] + (ages[min(lo + 1, len(ages) - 1)] - ages[lo]) * (at - lo)

    quarter = (percentile_cont(0.75) - percentile_cont(0.25)) / 4
    first = min(m * 10.0**e for m in (1, 2, 5) for e in range(-3, 6) if m * 10.0**e >= quarter)
    assert widths[0] == max(first, 1.0) and widths == [widths[0] * 2**i for i in range(len(widths))]
    assert math.floor(age["max"] / widths[-2]) - math.floor(age["min"] / widths[-2]) + 1 > 3  # no level too many
    assert "United-States" not in read(policy)
    report = sqlanon.anonymize(policy, output=str(tmp_path / "adult.parquet"))
    released = read_rows(str(tmp_path / "adult.parquet"))
    assert check_k(released, result["roles"]["qi"], 5, 0.05)["ok"]
    assert report.rows == len(rows)


def test_large_table_is_sampled_and_says_so(adult):
    result = sqlanon.profile(adult["csv"], sample_rows=3000)
    assert result["sample"]["percent"] == pytest.approx(100 * 3000 / 30162, rel=1e-3)
    assert 2000 < result["sample"]["rows_read"] < 4000
    assert all(c["distinct_in"] == "sample" for c in result["columns"])
    assert roles_of(result)["age"] == ("qi", "bands")
    out = runner.invoke(app, ["profile", "--input", adult["csv"], "--sample-rows", "3000"])
    assert out.exit_code == 0 and "measured on a sample of about" in out.output


def test_json_is_one_object(synthetic):
    out = runner.invoke(app, ["profile", "--input", synthetic["csv"], "--json", "-q"])
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert roles_of(data) == EXPECTED and data["policy"] is None


def test_text_output_is_aligned(synthetic):
    out = runner.invoke(app, ["profile", "--input", synthetic["csv"], "-q"])
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    header = next(line for line in lines if line.startswith("column"))
    at = header.index("role")
    for name, (role, _) in EXPECTED.items():
        line = next(line for line in lines if line.startswith(name + " "))
        assert line[at:].startswith(role), line


def test_duckdb_table_and_bad_inputs(synthetic, tmp_path):
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE people AS SELECT * FROM read_csv(?, all_varchar=true)", [synthetic["csv"]])
    con.execute("CREATE TABLE empty (a INTEGER, b VARCHAR)")
    con.close()
    assert roles_of(sqlanon.profile(db, table="people")) == EXPECTED
    for args, needle in (
        (["--input", str(tmp_path / "missing.csv")], "input file not found"),
        (["--input", db, "--table", "nope"], "table 'nope' not found"),
        (["--input", db, "--table", "empty"], "has no rows"),
        (["--input", synthetic["csv"], "--sample-rows", "0"], "--sample-rows"),
    ):
        out = runner.invoke(app, ["profile", *args])
        assert out.exit_code == 2, (args, out.output)
        errors = [line for line in out.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and needle in errors[0], out.output
        assert "Traceback" not in out.output
    with pytest.raises(ConfigError, match="has no rows"):
        sqlanon.profile(db, table="empty")


def test_policy_of_a_database_table_releases_a_table_beside_it(synthetic, tmp_path):
    """Profiled in a .duckdb file, the table is released as a new table of that file, with its
    registry row there (``sqlanon releases`` / ``report --release`` find it); the report beside
    the policy."""
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE people AS SELECT * FROM read_csv(?, all_varchar=true)", [synthetic["csv"]])
    con.close()
    policy = str(tmp_path / "out" / "policy.yaml")
    result = sqlanon.profile(db, table="people", write_policy=policy)
    data = yaml.safe_load(read(policy))
    assert data["output_table"] == "people_k5" and "output" not in data and data["report"] == "people_k5.html"
    assert data["input"] == "../w.duckdb" and data["table"] == "people"
    report = sqlanon.anonymize(policy)
    assert (tmp_path / "out" / "people_k5.html").is_file()
    con = duckdb.connect(db, read_only=True)
    found = con.execute("SELECT * FROM people_k5")
    names = [d[0] for d in found.description]
    released = [dict(zip(names, r)) for r in found.fetchall()]
    registry = con.execute("SELECT id, target FROM sqlanon_releases").fetchall()
    con.close()
    assert check_k(released, result["roles"]["qi"], 5, 0.05)["ok"]
    assert registry == [(report.release_id, "table people_k5")]
    out = runner.invoke(app, ["report", "--release", str(report.release_id), "--database", db, "--output", str(tmp_path / "again.html")])
    assert out.exit_code == 0, out.output


def test_dates_decade_builder():
    from sqlanon.hierarchy.builders import date_parts

    h = date_parts(["1975-03-04", "1969-12-31"], "dob", decade=True)
    assert h.rows == [["1969-12-31", "1969-12", "1969", "1960s", "*"], ["1975-03-04", "1975-03", "1975", "1970s", "*"]]
    assert sqlanon.dates(decade=True) == "dates:decade"


def test_check_text_output_is_aligned(adult):
    out = runner.invoke(app, ["check", "--input", adult["csv"], "--delimiter", ";", "--qi", "sex", "--qi", "age"])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.stdout.splitlines() if line and not line.startswith(" ")]
    # a label may hold a space ("class sizes"); it ends where two spaces start
    starts = {re.match(r"^(.*?\S)\s{2,}\S", line).end() - 1 for line in lines}
    assert len(starts) == 1, lines  # every value starts in one column
    assert not any("{" in line for line in lines), lines  # no raw JSON in the table
    assert next(line for line in lines if line.startswith("quasi_identifiers")).startswith("quasi_identifiers  ")


def test_release_relation_after_close_says_it_was_closed(synthetic):
    con = duckdb.connect()
    con.execute("CREATE TABLE people AS SELECT zip, diagnosis, visits FROM read_csv(?, all_varchar=true)", [synthetic["csv"]])
    release = sqlanon.anonymize(con.table("people"), connection=con, qi={"zip": "mask"}, k=2, keep_columns=["diagnosis", "visits"])
    assert release.relation().count("*").fetchall()[0][0] == len(synthetic["rows"])
    release.close()
    with pytest.raises(ConfigError, match="the release was closed"):
        release.relation()
    con.close()


def test_nulls_in_a_qi_are_counted_said_and_named_by_anonymize(tmp_path):
    """NULLs in a quasi-identifier: the profile counts them (as plain Python does), says that
    anonymize treats NULL as a value (text, JSON, a comment in the policy), and the written policy
    runs as it is, its release passing the checker; with nulls: refuse it stops with one error
    line naming both columns, writing nothing."""
    rows = synthetic_rows()
    rnd = random.Random(11)
    for r in rows:
        if rnd.random() < 0.08:
            r["zip"] = ""
        if rnd.random() < 0.04:
            r["dob"] = ""
    path = tmp_path / "people.csv"

    def write(selected):
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(selected)

    write(rows)
    expected = {"zip": sum(r["zip"] == "" for r in rows), "dob": sum(r["dob"] == "" for r in rows)}
    assert all(expected.values())
    result = sqlanon.profile(str(path))
    assert roles_of(result) == EXPECTED  # NULLs change no role nor hierarchy
    assert {c["name"]: c["nulls"] for c in result["columns"] if c["nulls"]} == expected
    assert result["nulls_in_qis"] == expected
    policy = str(tmp_path / "policy.yaml")
    out = runner.invoke(app, ["profile", "--input", str(path), "--write-policy", policy, "-q"])
    assert out.exit_code == 0, out.output
    said = next(line for line in out.stdout.splitlines() if line.startswith("NULLs in quasi-identifiers"))
    assert said == f"NULLs in quasi-identifiers: zip ({expected['zip']}), dob ({expected['dob']})"
    assert "anonymize treats NULL as a value of its own" in out.stdout
    text = read(policy)
    assert f"# NULLs in quasi-identifiers: zip ({expected['zip']}), dob ({expected['dob']})." in text
    assert f"{expected['zip']} NULLs: a value of their own (nulls)" in next(line for line in text.splitlines() if line.startswith("  zip:"))
    assert "# nulls: suppress" in text
    assert_no_values(policy, rows)
    # the proposed policy runs as it is: NULL is a value (released as NULL below the root)
    ran = runner.invoke(app, ["anonymize", "--policy", policy, "--json", "-q"])
    assert ran.exit_code == 0, ran.output
    report = json.loads(ran.output.strip().splitlines()[-1])
    assert report["rows"] == len(rows)
    assert report["nulls"]["zip"] == {"mode": "value", "rows": expected["zip"]}
    released = read_rows(report["output"])
    assert check_k(released, ["zip", "dob"], 5, 0.05)["ok"]
    assert sum(r["zip"] is None for r in released) in (0, expected["zip"])  # all NULLs stay NULL, or are generalized/suppressed
    # nulls: refuse stops, naming both columns, writing nothing more
    out_before = sorted(p.name for p in tmp_path.iterdir())
    ran = runner.invoke(app, ["anonymize", "--policy", policy, "--nulls", "refuse", "--overwrite", "-q"])
    assert ran.exit_code == 1, ran.output
    errors = [line for line in ran.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"'zip' ({expected['zip']} rows), 'dob' ({expected['dob']} rows) have NULL values" in errors[0], ran.output
    assert "Traceback" not in ran.output
    assert sorted(p.name for p in tmp_path.iterdir()) == out_before


# ---------------------------------------------------------------- every engine: the same profile

#: a typed table for the engine comparisons (the synthetic columns, plus an age, a country of many
#: values with a grouping by frequency, and a sex with NULLs): column -> SQL type (DuckDB and
#: PostgreSQL both read these names; Spark gets the table as Parquet written by DuckDB)
TYPED_COLUMNS = {
    "id": "INTEGER", "contact": "VARCHAR", "callback": "VARCHAR", "zip": "VARCHAR", "dob": "DATE", "diagnosis": "VARCHAR",
    "notes": "VARCHAR", "ref": "VARCHAR", "visits": "INTEGER", "age": "INTEGER", "country": "VARCHAR", "sex": "VARCHAR",
}
TYPED_EXPECTED = {**EXPECTED, "age": ("qi", "bands"), "country": ("qi", "frequency"), "sex": ("qi", "flat")}


def typed_rows(n: int = 400, seed: int = 3) -> list[tuple]:
    """The synthetic rows as typed tuples in :data:`TYPED_COLUMNS` order (dob a date, ints ints,
    sex NULL in some rows)."""
    rnd = random.Random(seed + 1)
    countries = [f"Land{'ia' * (i % 4)}{i}" for i in range(30)]  # of several lengths: not a code
    out = []
    for r in synthetic_rows(n, seed):
        country = rnd.choice(countries[:4]) if rnd.random() < 0.7 else rnd.choice(countries)
        sex = None if rnd.random() < 0.05 else rnd.choice(["F", "M"])
        out.append((int(r["id"]), r["contact"], r["callback"], r["zip"], dt.date.fromisoformat(r["dob"]), r["diagnosis"],
                    r["notes"], r["ref"], int(r["visits"]), rnd.randint(18, 90), country, sex))
    return out


def duckdb_typed_table(path: str, rows: list[tuple], table: str = "people") -> None:
    con = duckdb.connect(path)
    con.execute(f"CREATE TABLE {table} (" + ", ".join(f"{c} {t}" for c, t in TYPED_COLUMNS.items()) + ")")
    con.executemany(f"INSERT INTO {table} VALUES (" + ", ".join("?" for _ in TYPED_COLUMNS) + ")", rows)
    con.close()


def postgres_typed_table(server_url: str, rows: list[tuple], prefix: str = "p") -> str:
    """A fresh database of the PostgreSQL server at ``server_url`` holding ``rows`` as the typed
    table ``people`` (VARCHAR as TEXT, loaded by COPY); the new database's URL."""
    import uuid

    import psycopg

    db = prefix + "_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server_url, autocommit=True) as con:
        con.execute("CREATE DATABASE " + db)
    head, _, query = server_url.partition("?")
    url = head.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
    pg_types = {"VARCHAR": "TEXT"}
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE people (" + ", ".join(f"{c} {pg_types.get(t, t)}" for c, t in TYPED_COLUMNS.items()) + ")")
        with con.cursor().copy("COPY people FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
    return url


def profile_signature(result: dict, policy: str | None = None) -> dict:
    """What must not depend on the engine: per column its role, NULLs, distinct count and proposed
    hierarchy (spec and levels), the QIs' NULLs, the risk before anonymization; with the written
    policy, its drop/qi lines and the rows of its hierarchy files (sorted: ties in frequency may
    come in another order under another collation)."""
    out: dict = {
        "columns": {c["name"]: (c["role"], c["nulls"], c["distinct"], (c.get("hierarchy") or {}).get("spec"),
                                (c.get("hierarchy") or {}).get("levels")) for c in result["columns"]},
        "roles": result["roles"], "nulls_in_qis": result["nulls_in_qis"],
        "risk": {k: result["risk"][k] for k in ("classes", "sample_uniques", "prosecutor")},
    }
    if policy:
        text = read(policy).splitlines()
        start = text.index("qi:") if "drop_columns:" not in text else text.index("drop_columns:")
        out["policy"] = [line for line in text[start:] if not line.startswith(("output", "report"))]
        out["files"] = {f.rsplit("/", 1)[-1]: sorted(read(f).splitlines()) for f in result["hierarchy_files"]}
    return out


def test_typed_table_on_duckdb(tmp_path):
    """The typed table the engine tests compare with: its roles and hierarchies on DuckDB."""
    db = str(tmp_path / "w.duckdb")
    duckdb_typed_table(db, typed_rows())
    result = sqlanon.profile(db, table="people")
    assert roles_of(result) == TYPED_EXPECTED
    assert result["nulls_in_qis"] == {"sex": sum(r[-1] is None for r in typed_rows())}
