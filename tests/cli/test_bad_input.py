"""Bad input: one clear line naming the culprit, the documented exit code, and nothing written."""

import os

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon.cli.app

runner = CliRunner()


@pytest.fixture
def small(tmp_path):
    data = tmp_path / "people.csv"
    data.write_text("zip,age,disease\n12345,31,flu\n12346,32,flu\n12355,41,cold\n12356,45,flu\n12345,33,cold\n12346,36,cold\n")
    age = tmp_path / "age.csv"
    age.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)))
    out = tmp_path / "out.parquet"
    return {"dir": tmp_path, "data": str(data), "age": str(age), "out": str(out)}


def invoke(args):
    return runner.invoke(sqlanon.cli.app.app, args)


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def nothing_written(small):
    assert not os.path.exists(small["out"])
    assert not os.path.exists(os.path.join(small["dir"], "sqlanon_releases.duckdb"))
    assert [f for f in os.listdir(small["dir"]) if f.endswith(".tmp")] == []


def base(small, *extra):
    return ["anonymize", "--keep-others", "--input", small["data"], "--qi", f"age={small['age']}", "--qi", "zip=mask", "--k", "2", "--output", small["out"], "-q", *extra]


def test_missing_input_file(small):
    result = invoke(["anonymize", "--keep-others", "--input", str(small["dir"] / "nope.csv"), "--qi", f"age={small['age']}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 2
    assert error_line(result) == f"error: input file not found: {small['dir'] / 'nope.csv'}"
    nothing_written(small)


def test_unknown_column(small):
    result = invoke(["anonymize", "--keep-others", "--input", small["data"], "--qi", f"agee={small['age']}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 2
    assert error_line(result) == f"error: unknown quasi-identifier column 'agee' in csv:{small['data']} (did you mean 'age'?); columns are: zip, age, disease"
    nothing_written(small)


def test_value_missing_from_hierarchy(small, tmp_path):
    age = tmp_path / "age_short.csv"
    age.write_text("31;30-39;*\n32;30-39;*\n33;30-39;*\n36;30-39;*\n")
    result = invoke(["anonymize", "--keep-others", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert error_line(result) == f"error: column 'age': 2 distinct value(s) in 2 row(s) are missing from its hierarchy ({age}), e.g. '41', '45'"
    nothing_written(small)


def test_ragged_hierarchy(small, tmp_path):
    age = tmp_path / "ragged.csv"
    age.write_text("31;30-39;*\n32;*\n")
    result = invoke(["anonymize", "--keep-others", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert error_line(result) == f"error: hierarchy for 'age' ({age}) is ragged: row 2 ('32') has 2 levels, row 1 has 3"
    nothing_written(small)


def test_hierarchy_not_a_tree(small, tmp_path):
    age = tmp_path / "dag.csv"
    age.write_text("31;30-39;A;*\n32;30-39;B;*\n")
    result = invoke(["anonymize", "--keep-others", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert "is not a tree: '30-39' at level 1 has parents 'A' and 'B'" in error_line(result)
    nothing_written(small)


def test_nulls_in_a_quasi_identifier(small, tmp_path):
    """NULL is a value by default; ``--nulls refuse`` stops, naming every column at once."""
    data = tmp_path / "nulls.csv"
    data.write_text("zip,age\n12345,31\n,\n12355,41\n")
    args = ["anonymize", "--input", str(data), "--qi", f"age={small['age']}", "--qi", "zip=mask", "--k", "1", "--output", small["out"]]
    result = invoke(args + ["--nulls", "refuse"])
    assert result.exit_code == 1
    assert error_line(result) == (
        "error: quasi-identifier columns 'age' (1 row), 'zip' (1 row) have NULL values (nulls: refuse); "
        "fill or filter them, or let NULL be a value (nulls: value) or suppress its rows (nulls: suppress)"
    )
    nothing_written(small)
    result = invoke(args + ["--nulls", "bogus"])
    assert result.exit_code == 2 and "bad value for nulls '*'" in error_line(result)
    nothing_written(small)
    result = invoke(args + ["--nulls", "visits=refuse"])
    assert result.exit_code == 2 and error_line(result) == "error: nulls names 'visits', which is no quasi-identifier (QIs: age, zip)"
    nothing_written(small)
    result = invoke(args + ["-q"])  # the default: NULL is a value
    assert result.exit_code == 0, result.output
    assert sorted(duckdb.sql(f"SELECT age, zip FROM read_parquet('{small['out']}')").fetchall(), key=str) == sorted([("31", "12345"), (None, None), ("41", "12355")], key=str)


def test_empty_table(small, tmp_path):
    data = tmp_path / "empty.csv"
    data.write_text("zip,age\n")
    result = invoke(["anonymize", "--keep-others", "--input", str(data), "--qi", f"age={small['age']}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 2
    assert error_line(result) == f"error: input csv:{data} has no rows"
    nothing_written(small)


def test_k_larger_than_table(small):
    result = invoke(base(small)[:-1] + ["--k", "100", "-q"])
    assert result.exit_code == 3
    assert error_line(result) == "error: k=100 is larger than the table (6 rows)"
    nothing_written(small)


def test_unsatisfiable_l_diversity(small):
    result = invoke(base(small, "--sensitive-column", "disease", "--l", "3"))
    assert result.exit_code == 3
    line = error_line(result)
    assert line.startswith("error: no transformation satisfies k-anonymity k=2; distinct-l-diversity l=3 within the suppression budget of 0 rows")
    assert "distinct-l-diversity l=3 fails (alone it suppresses 6 rows)" in line and "k-anonymity k=2 fails" not in line
    assert line.endswith("the least diverse class has 2 distinct sensitive values (l=3)")
    nothing_written(small)


def test_unknown_policy_key(small, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {small['data']}\nkk: 3\n")
    result = invoke(["anonymize", "--keep-others", "--policy", str(policy)])
    assert result.exit_code == 2
    assert error_line(result).startswith(f"error: unknown key 'kk' in policy {policy}; known keys: ")
    nothing_written(small)


def test_bad_policy_value(small, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {small['data']}\nk: three\n")
    result = invoke(["anonymize", "--keep-others", "--policy", str(policy)])
    assert result.exit_code == 2
    assert error_line(result) == f"error: bad value for 'k' in policy {policy}: 'three' is not a int"
    nothing_written(small)


def test_unknown_search_and_metric(small):
    result = invoke(base(small, "--search", "magic"))
    assert result.exit_code == 2 and "unknown search 'magic'" in error_line(result)
    result = invoke(base(small, "--metric", "beauty"))
    assert result.exit_code == 2 and "unknown metric 'beauty'" in error_line(result)
    nothing_written(small)


def test_bad_flag_type_is_usage_error(small):
    result = invoke(base(small, "--k", "abc"))
    assert result.exit_code == 2
    nothing_written(small)


def test_existing_output_is_not_overwritten(small):
    with open(small["out"], "w") as fh:
        fh.write("precious")
    result = invoke(base(small))
    assert result.exit_code == 2
    assert error_line(result) == f"error: output file already exists: {small['out']} (use --overwrite)"
    assert open(small["out"]).read() == "precious"


def test_weird_identifiers_end_to_end(tmp_path):
    """A column named with a quote, a space and SQL in it, in a table with a quote in its name."""
    db = str(tmp_path / "w.duckdb")
    col = 'zip "code"; DROP TABLE t; --'
    con = duckdb.connect(db)
    con.execute('CREATE TABLE "we""ird" ("zip ""code""; DROP TABLE t; --" VARCHAR, v INTEGER)')
    con.execute('INSERT INTO "we""ird" VALUES (\'12345\', 1), (\'12346\', 2), (\'12355\', 3), (\'12356\', 4)')
    con.close()
    result = invoke(["anonymize", "--keep-others", "--input", db, "--format", "duckdb", "--table", 'we"ird', "--qi", f"{col}=mask", "--k", "2", "--output-table", "out table", "-q"])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(db)
    rows = con.execute('SELECT "zip ""code""; DROP TABLE t; --", v FROM "out table" ORDER BY v').fetchall()
    assert rows == [("1234*", 1), ("1234*", 2), ("1235*", 3), ("1235*", 4)]
    assert con.execute('SELECT COUNT(*) FROM "we""ird"').fetchone()[0] == 4
    con.close()


def test_missing_duckdb_table(tmp_path):
    db = str(tmp_path / "x.duckdb")
    duckdb.connect(db).close()
    result = invoke(["anonymize", "--keep-others", "--input", db, "--table", "nope", "--qi", "a=mask", "--k", "2", "--in-place"])
    assert result.exit_code == 2
    assert error_line(result) == f"error: table 'nope' not found in {db}"


# =============================================================================================
# The matrix: one row per bad input -- the command line, the exit code, a fragment of the one
# error line, and "nothing written": every file in the folder (and every table of the warehouse)
# hashed before and after, no new file.

import hashlib  # noqa: E402
import re  # noqa: E402

WAREHOUSE_SQL = [
    "CREATE SCHEMA s1",
    "CREATE TABLE patients (name VARCHAR, zip VARCHAR, age VARCHAR, disease VARCHAR)",
    "INSERT INTO patients VALUES ('ann','12345','31','flu'),('bob','12346','32','flu'),('cid','12355','41','cold'),('dan','12356','45','flu'),('eve','12345','33','cold'),('fay','12346','36','cold')",
    "CREATE TABLE s1.patients AS SELECT * FROM patients",
    "CREATE TABLE released AS SELECT * FROM patients",
    "CREATE VIEW patients_v AS SELECT * FROM patients",
]

FILES = {
    "people.csv": "name,zip,age,disease\nann,12345,31,flu\nbob,12346,32,flu\ncid,12355,41,cold\ndan,12356,45,flu\neve,12345,33,cold\nfay,12346,36,cold\n",
    "empty.csv": "name,zip,age\n",
    "noheader.csv": "",
    "twice.csv": "a,a\n1,2\n",
    "ragged.csv": "name,zip\nann,12345\nbob,12346,x\n",
    "nulls.csv": "zip,age\n12345,31\n12346,\n",
    "age.csv": "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)),
    "age_short.csv": "31;30-39;*\n32;30-39;*\n",
    "age_ragged.csv": "31;30-39;*\n32;*\n",
    "age_dag.csv": "31;30-39;A;*\n32;30-39;B;*\n",
    "age_roots.csv": "".join(f"{a};{a // 10 * 10}s;{'young' if a < 40 else 'old'}\n" for a in range(20, 60)),
    "age_twice.csv": "31;30-39;*\n31;30-39;*\n",
    "age_empty.csv": "\n",
    "age_hole.csv": "31;;*\n",
    "bad.yaml": "{a: [b\n",
    "two_roots.yaml": "A: [x]\nB: [y]\n",
    "existing.parquet": "precious",
    "keep.html": "precious",
    "not_a_db.duckdb": "this is not a database\n",
    "p_missing_k.yaml": "input: people.csv\nqi:\n  zip: mask\n",
    "p_bad_yaml.yaml": "input: [people.csv\n",
    "p_list.yaml": "- input\n- k\n",
    "p_unknown.yaml": "input: people.csv\nkk: 3\n",
    "p_k_text.yaml": "input: people.csv\nqi:\n  zip: mask\nk: three\n",
    "p_k_true.yaml": "input: people.csv\nqi:\n  zip: mask\nk: true\n",
    "p_qi_scalar.yaml": "input: people.csv\nqi: 5\nk: 2\n",
    "p_qi_key.yaml": "input: people.csv\nqi:\n  zip: {hierarchy: mask, levels: 2}\nk: 2\n",
    "p_qi_none.yaml": "input: people.csv\nqi:\n  zip: {}\nk: 2\n",
    "p_options.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 2\nsearch_options: [1]\n",
    "p_long.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 2\nmax_value_length: 3\n",
    "p_ms.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 2\nmax_suppression: lots\n",
    # issue 24: a key given twice was the last one winning (k: 50 then k: 2 ran with k=2)
    "p_dup.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 50\nk: 2\n",
    "p_dup_nested.yaml": "input: people.csv\nqi:\n  zip: mask\n  zip: flat\nk: 2\n",
    "p_dup_deep.yaml": "input: people.csv\nqi:\n  zip: {hierarchy: mask, hierarchy: flat}\nk: 2\n",
    "p_dup_privacy.yaml": "input: people.csv\nqi:\n  zip: mask\nprivacy:\n  k: 5\n  k: 2\n",
    "p_output_empty.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 2\noutput: ''\n",
    "p_output_list.yaml": "input: people.csv\nqi:\n  zip: mask\nk: 2\noutput: [a.parquet, b.parquet]\n",
    "p_empty.yaml": "",
    "tree_dup.yaml": "'*':\n  resp: [flu]\n  resp: [cold]\n",
    "tree_dup.json": '{"*": {"resp": ["flu"], "resp": ["cold"]}}',
    "transformation_dup.json": '{"zip": 1, "zip": 0}',
    "case.csv": "Zip,zip,age\n1,2,3\n4,5,6\n",
    "semi.csv": "name;zip;age\nann;12345;31\nbob;12346;32\n",
    "age_bands.csv": "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 60)),
    "zero.parquet": "",
    "p_qi_tree.yaml": "input: people.csv\nqi:\n  disease: {hierarchy: {'*': [flu, cold]}}\nk: 2\n",
    "tree_nested_list.yaml": "'*':\n  - flu\n  - [cold, cough]\n",
    "tree_cycle.yaml": "'*': &a\n  resp: *a\n",
}

#: files that are not text (written as bytes)
BINARY = {
    "age_binary.csv": bytes(range(256)) * 4,
    "age_latin1.csv": "31;30-39;*\n32;30-39;*\n33;été;*\n".encode("latin-1"),
    "p_binary.yaml": b"k: 2\n\x00\x01\x02",
    "people_binary.csv": b"\x00\x01name,zip\n",
}

A = ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "zip=mask"]  # a good start
W = ["anonymize", "--input", "{db}", "--keep-others", "--qi", "zip=mask", "--k", "2"]  # the warehouse

CASES = [
    # -- inputs
    ("missing csv", ["anonymize", "--keep-others", "--input", "{dir}/nope.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "input file not found: {dir}/nope.csv"),
    ("missing parquet", ["anonymize", "--keep-others", "--input", "{dir}/nope.parquet", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "input file not found"),
    ("missing parquet glob", ["anonymize", "--keep-others", "--input", "{dir}/*.parquet.x", "--format", "parquet", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "input file not found"),
    ("missing duckdb", ["anonymize", "--keep-others", "--input", "{dir}/nope.duckdb", "--table", "t", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "input file not found"),
    ("duckdb without table", ["anonymize", "--keep-others", "--input", "{db}", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "--table is required for a .duckdb input"),
    ("postgres without table", ["anonymize", "--keep-others", "--input", "postgresql://nobody@localhost/x", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "--table is required for a postgresql:// input"),
    ("unknown format", [*A, "--k", "2", "--format", "xls", "--output", "{out}"], 2, "unknown --format 'xls'"),
    ("long delimiter", [*A, "--k", "2", "--delimiter", "ab", "--output", "{out}"], 2, "--delimiter must be one character"),
    ("empty table", ["anonymize", "--keep-others", "--input", "{dir}/empty.csv", "--qi", "age={dir}/age.csv", "--k", "2", "--output", "{out}"], 2, "has no rows"),
    ("no header", ["anonymize", "--keep-others", "--input", "{dir}/noheader.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "has no header line"),
    ("header twice", ["anonymize", "--keep-others", "--input", "{dir}/twice.csv", "--qi", "a=mask", "--k", "2", "--output", "{out}"], 2, "the header names column 'a' twice"),
    ("ragged csv", ["anonymize", "--keep-others", "--input", "{dir}/ragged.csv", "--qi", "zip=mask", "--k", "1", "--output", "{out}"], 1, "ragged.csv: line 3 has 3 field(s), the header has 2"),
    ("not a duckdb file", ["anonymize", "--keep-others", "--input", "{dir}/not_a_db.duckdb", "--table", "t", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "not_a_db.duckdb is not a DuckDB database file"),
    ("missing table", [*W, "--table", "nope", "--output", "{out}"], 2, "table 'nope' not found in {db}"),
    ("missing schema", [*W, "--table", "s9.patients", "--output", "{out}"], 2, "schema 's9' of table 's9.patients' not found"),
    ("missing table in schema", [*W, "--table", "s1.nope", "--output", "{out}"], 2, "table 's1.nope' not found"),
    ("in place on a view", [*W, "--table", "patients_v", "--in-place"], 2, "'patients_v' is a view"),
    ("in place on a csv", [*A, "--k", "2", "--in-place"], 2, "--in-place needs a table input"),
    ("value over --max-value-length", [*A, "--k", "2", "--max-value-length", "4", "--output", "{out}"], 1, "column 'zip': 6 row(s) hold values longer than 4 characters (the longest 5), too long for a 'mask' hierarchy"),
    ("value over policy max_value_length", ["anonymize", "--keep-others", "--policy", "{dir}/p_long.yaml", "--output", "{out}"], 1, "column 'zip': 6 row(s) hold values longer than 3 characters"),
    ("max value length zero", [*A, "--k", "2", "--max-value-length", "0", "--output", "{out}"], 2, "max_value_length must be at least 1"),
    ("nulls in a qi", ["anonymize", "--keep-others", "--input", "{dir}/nulls.csv", "--qi", "age={dir}/age.csv", "--k", "1", "--nulls", "refuse", "--output", "{out}"], 1, "quasi-identifier column 'age' (1 row) has NULL values (nulls: refuse)"),
    # -- columns
    ("unknown qi", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "agee={dir}/age.csv", "--k", "2", "--output", "{out}"], 2, "unknown quasi-identifier column 'agee'"),
    ("unknown qi in a table", [*W, "--table", "patients", "--qi", "zap=mask", "--output", "{out}"], 2, "unknown quasi-identifier column 'zap'"),
    ("unknown drop column", [*A, "--k", "2", "--drop-column", "nmae", "--output", "{out}"], 2, "unknown --drop-column 'nmae'"),
    ("unknown drop column in place", [*W, "--table", "patients", "--drop-column", "nmae", "--in-place"], 2, "unknown --drop-column 'nmae'"),
    ("unknown sensitive column", [*A, "--k", "2", "--sensitive-column", "dis", "--l", "2", "--output", "{out}"], 2, "unknown sensitive column 'dis'"),
    ("unknown class column", [*A, "--k", "2", "--class-column", "cls", "--search", "bottom-up", "--output", "{out}"], 2, "unknown class column 'cls'"),
    ("sensitive is a qi", [*A, "--qi", "disease=flat", "--k", "2", "--sensitive-column", "disease", "--l", "2", "--output", "{out}"], 2, "sensitive column 'disease' is also a quasi-identifier"),
    ("duplicate qi", [*A, "--qi", "zip=flat", "--k", "2", "--output", "{out}"], 2, "--qi names column 'zip' twice"),
    ("qi without hierarchy", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "zip", "--k", "2", "--output", "{out}"], 2, "--qi wants COLUMN=HIERARCHY, got 'zip'"),
    ("no qi", ["anonymize", "--keep-others", "--input", "{csv}", "--k", "2", "--output", "{out}"], 2, "no quasi-identifiers"),
    ("no input", ["anonymize", "--keep-others", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "no input"),
    # -- hierarchies
    ("hierarchy file missing", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/nope.csv", "--k", "2", "--output", "{out}"], 2, "hierarchy file not found"),
    ("value missing from hierarchy", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_short.csv", "--k", "2", "--output", "{out}"], 1, "missing from its hierarchy"),
    ("ragged hierarchy", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_ragged.csv", "--k", "2", "--output", "{out}"], 1, "is ragged: row 2 ('32') has 2 levels, row 1 has 3"),
    ("hierarchy not a tree", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_dag.csv", "--k", "2", "--output", "{out}"], 1, "is not a tree"),
    ("hierarchy with two roots", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_roots.csv", "--k", "2", "--output", "{out}"], 1, "has 2 roots ('young', 'old')"),
    ("hierarchy leaf twice", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_twice.csv", "--k", "2", "--output", "{out}"], 1, "leaf '31' appears twice"),
    ("hierarchy empty", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_empty.csv", "--k", "2", "--output", "{out}"], 1, "is empty"),
    ("hierarchy empty cell", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age_hole.csv", "--k", "2", "--output", "{out}"], 1, "empty or NULL value at level 1"),
    ("hierarchy bad yaml", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "disease={dir}/bad.yaml", "--k", "2", "--output", "{out}"], 1, "is not valid YAML/JSON"),
    ("tree with two roots", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "disease={dir}/two_roots.yaml", "--k", "2", "--output", "{out}"], 1, "must have exactly one root key"),
    ("bad band widths", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age=bands:x", "--k", "2", "--output", "{out}"], 2, "bad band widths 'x'"),
    ("bands on text", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "disease=bands:5,10", "--k", "2", "--output", "{out}"], 1, "non-numeric value"),
    ("unknown builder", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "zip=magic:3", "--k", "2", "--output", "{out}"], 2, "hierarchy file not found for 'zip': magic:3"),
    ("stored hierarchy missing", ["anonymize", "--keep-others", "--input", "{db}", "--table", "patients", "--qi", "zip=table:nope", "--k", "2", "--output", "{out}"], 2, "nope"),
    # -- privacy parameters
    ("no k", [*A, "--output", "{out}"], 2, "k is required"),
    ("k zero", [*A, "--k", "0", "--output", "{out}"], 2, "k must be at least 1, got 0"),
    ("k negative", [*A, "--k", "-3", "--output", "{out}"], 2, "k must be at least 1, got -3"),
    ("k not a number", [*A, "--k", "abc", "--output", "{out}"], 2, "Invalid value for '--k'"),
    ("k larger than the table", [*A, "--k", "100", "--output", "{out}"], 3, "k=100 is larger than the table (6 rows)"),
    ("k larger than a warehouse table", [*W[:-2], "--k", "7", "--table", "patients", "--in-place"], 3, "k=7 is larger than the table (6 rows)"),
    ("l zero", [*A, "--k", "2", "--sensitive-column", "disease", "--l", "0", "--output", "{out}"], 2, "l must be at least 1, got 0"),
    ("l without sensitive column", [*A, "--k", "2", "--l", "2", "--output", "{out}"], 2, "needs --sensitive-column"),
    ("l unsatisfiable", [*A, "--k", "2", "--sensitive-column", "disease", "--l", "3", "--output", "{out}"], 3, "no transformation satisfies"),
    ("l unsatisfiable in place", [*W, "--table", "patients", "--sensitive-column", "disease", "--l", "3", "--in-place"], 3, "no transformation satisfies"),
    ("unknown l-diversity", [*A, "--k", "2", "--sensitive-column", "disease", "--l", "2", "--l-diversity", "magic", "--output", "{out}"], 2, "l_diversity must be distinct, entropy or recursive"),
    ("t above one", [*A, "--k", "2", "--sensitive-column", "disease", "--t", "1.5", "--output", "{out}"], 2, "t must lie in [0, 1]"),
    ("unknown t distance", [*A, "--k", "2", "--sensitive-column", "disease", "--t", "0.5", "--t-distance", "far", "--output", "{out}"], 2, "t-closeness distance must be equal, ordered or hierarchical, got 'far'"),
    ("t without sensitive column", [*A, "--k", "2", "--t", "0.5", "--output", "{out}"], 2, "needs --sensitive-column"),
    ("max suppression above one", [*A, "--k", "2", "--max-suppression", "1.5", "--output", "{out}"], 2, "max_suppression must lie in [0, 1]"),
    ("max suppression negative", [*A, "--k", "2", "--max-suppression", "-0.1", "--output", "{out}"], 2, "max_suppression must lie in [0, 1]"),
    ("unknown suppression", [*A, "--k", "2", "--suppression", "hide", "--output", "{out}"], 2, "suppression must be mask or drop"),
    ("unknown metric", [*A, "--k", "2", "--metric", "beauty", "--output", "{out}"], 2, "unknown metric 'beauty'"),
    ("unknown search", [*A, "--k", "2", "--search", "magic", "--output", "{out}"], 2, "unknown search 'magic'"),
    ("threads zero", [*A, "--k", "2", "--threads", "0", "--output", "{out}"], 2, "threads must be at least 1, got 0"),
    ("memory limit too small", [*A, "--k", "2", "--memory-limit", "1KB", "--output", "{out}"], 1, "out of memory under --memory-limit 1KB"),
    ("memory limit too small in place", [*W, "--table", "patients", "--memory-limit", "1KB", "--in-place"], 1, "out of memory under --memory-limit 1KB"),
    ("memory limit nonsense", [*A, "--k", "2", "--memory-limit", "lots", "--output", "{out}"], 2, "memory_limit 'lots' is not a positive size"),
    ("weights of a non-qi", [*A, "--k", "2", "--weights", "age=2", "--output", "{out}"], 2, "weights names 'age', which is not a quasi-identifier"),
    ("level bound on a genetic interval QI", [*A, "--k", "2", "--numeric", "age", "--search", "genetic", "--max-level", "age=0", "--output", "{out}"], 2, "search genetic cuts 'age' into intervals, which have no hierarchy levels"),
    ("weights with a genetic objective without LM", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "zip=mask", "--qi", "age={dir}/age.csv", "--k", "2", "--weights", "zip=2", "--search", "genetic", "--option", "objective=regression", "--option", "regression_target=age", "--output", "{out}"], 2, "the genetic objective regression has no LM part"),
    ("min level without value", [*A, "--k", "2", "--min-level", "zip", "--output", "{out}"], 2, "min_level in flags wants COLUMN=VALUE"),
    ("max level above the hierarchy", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--k", "2", "--max-level", "age=7", "--output", "{out}"], 2, "max_level age=7 is outside its hierarchy's levels (0..2)"),
    ("unknown microaggregate", ["anonymize", "--keep-others", "--input", "{csv}", "--qi", "zip=mask", "--k", "2", "--microaggregate", "age=mode", "--output", "{out}"], 2, "the function must be one of mean, median"),
    ("local iterations alone", [*A, "--k", "2", "--local-iterations", "3", "--output", "{out}"], 2, "--local-iterations needs --local-recoding"),
    ("option without value", [*A, "--k", "2", "--option", "iterations", "--output", "{out}"], 2, "--option wants KEY=VALUE, got 'iterations'"),
    # -- outputs
    ("output exists", [*A, "--k", "2", "--output", "{dir}/existing.parquet"], 2, "output file already exists"),
    ("output is a folder", [*A, "--k", "2", "--output", "{dir}"], 2, "is a directory"),
    ("output json", [*A, "--k", "2", "--output", "{dir}/x.json"], 2, "unknown file type ('.json')"),
    ("output without suffix", [*A, "--k", "2", "--output", "{dir}/release"], 2, "unknown file type (no suffix)"),
    ("two targets", [*W, "--table", "patients", "--output", "{out}", "--in-place"], 2, "give only one of --output, --output-table, --in-place"),
    ("output table without database", [*A, "--k", "2", "--output-table", "t"], 2, "needs --database"),
    ("output table exists", [*W, "--table", "patients", "--output-table", "released"], 2, "output table 'released' already exists (use --overwrite)"),
    ("output table exists, other case", [*W, "--table", "patients", "--output-table", "RELEASED"], 2, "output table 'RELEASED' already exists"),
    ("output table in a missing schema", [*W, "--table", "patients", "--output-table", "s2.t"], 2, "schema 's2' of output table 's2.t' not found"),
    ("output table is a view", [*W, "--table", "patients", "--output-table", "patients_v", "--overwrite"], 2, "output table 'patients_v' is a view"),
    ("output table into another database", [*W, "--table", "patients", "--output-table", "t", "--database", "{dir}/other.duckdb"], 2, "--database must name the same file"),
    ("registry csv", [*A, "--k", "2", "--output", "{out}", "--registry", "{dir}/x.csv"], 2, "a registry is a DuckDB database file"),
    ("registry folder", [*A, "--k", "2", "--output", "{out}", "--registry", "{dir}/reg.duckdb"], 2, "is a directory"),
    ("registry not a database", [*A, "--k", "2", "--output", "{out}", "--registry", "{dir}/not_a_db.duckdb"], 2, "--registry {dir}/not_a_db.duckdb is not a DuckDB database file"),
    ("registry is the input", [*W, "--table", "patients", "--output", "{out}", "--registry", "{db}"], 2, "is the input database"),
    ("registry with a table release", [*W, "--table", "patients", "--output-table", "t2", "--registry", "{dir}/r.duckdb"], 2, "is where file releases are recorded"),
    ("output is the input", [*A, "--k", "2", "--output", "{csv}", "--overwrite"], 2, "--output {csv} is the input csv:"),
    ("output table is the input", [*W, "--table", "patients", "--output-table", "PATIENTS", "--overwrite"], 2, "--output-table PATIENTS is the input table; use --in-place"),
    ("output table is the input in a schema", [*W, "--table", "s1.patients", "--output-table", "s1.patients", "--overwrite"], 2, "is the input table"),
    ("report exists", [*A, "--k", "2", "--output", "{out}", "--report", "{dir}/keep.html"], 2, "report file already exists: {dir}/keep.html (use --overwrite)"),
    ("report exists, no output", [*A, "--k", "2", "--report", "{dir}/keep.html"], 2, "report file already exists"),
    ("report command output exists", ["report", "--release", "1", "--database", "{db}", "--output", "{dir}/keep.html"], 2, "report file already exists"),
    ("schema output exists", ["schema", "policy", "--output", "{dir}/keep.html"], 2, "output file already exists"),
    # -- policy files
    ("policy missing", ["anonymize", "--keep-others", "--policy", "{dir}/nope.yaml"], 2, "policy file not found"),
    ("policy bad yaml", ["anonymize", "--keep-others", "--policy", "{dir}/p_bad_yaml.yaml"], 2, "is not valid YAML"),
    ("policy a list", ["anonymize", "--keep-others", "--policy", "{dir}/p_list.yaml"], 2, "must be a mapping of keys to values"),
    ("policy unknown key", ["anonymize", "--keep-others", "--policy", "{dir}/p_unknown.yaml"], 2, "unknown key 'kk'"),
    ("policy k text", ["anonymize", "--keep-others", "--policy", "{dir}/p_k_text.yaml"], 2, "bad value for 'k'"),
    ("policy k true", ["anonymize", "--keep-others", "--policy", "{dir}/p_k_true.yaml"], 2, "bad value for 'k' in policy {dir}/p_k_true.yaml: True is not a int"),
    ("policy without k", ["anonymize", "--keep-others", "--policy", "{dir}/p_missing_k.yaml"], 2, "k is required"),
    ("policy qi scalar", ["anonymize", "--keep-others", "--policy", "{dir}/p_qi_scalar.yaml"], 2, "must map columns to hierarchies"),
    ("policy qi unknown key", ["anonymize", "--keep-others", "--policy", "{dir}/p_qi_key.yaml"], 2, "unknown key 'levels' under qi.zip"),
    ("policy qi without hierarchy", ["anonymize", "--keep-others", "--policy", "{dir}/p_qi_none.yaml"], 2, "qi.zip in policy"),
    ("policy search options", ["anonymize", "--keep-others", "--policy", "{dir}/p_options.yaml"], 2, "search_options in policy"),
    ("policy max suppression text", ["anonymize", "--keep-others", "--policy", "{dir}/p_ms.yaml"], 2, "bad value for 'max_suppression'"),
    ("policy k zero from flag", ["anonymize", "--keep-others", "--policy", "{dir}/p_missing_k.yaml", "--k", "0"], 2, "k must be at least 1, got 0"),
    # -- other commands
    ("check unknown column", ["check", "--input", "{csv}", "--qi", "zap"], 2, "unknown quasi-identifier column 'zap'"),
    ("check missing input", ["check", "--input", "{dir}/nope.csv", "--qi", "zip"], 2, "input file not found"),
    ("check ragged", ["check", "--input", "{dir}/ragged.csv", "--qi", "zip"], 1, "line 3 has 3 field(s)"),
    ("check missing table", ["check", "--input", "{db}", "--table", "nope", "--qi", "zip"], 2, "table 'nope' not found"),
    ("sql unknown dialect", ["sql", "--input", "{csv}", "--qi", "zip=mask", "--k", "2", "--dialect", "klingon"], 2, "unknown --dialect 'klingon'"),
    ("sql k zero", ["sql", "--input", "{csv}", "--qi", "zip=mask", "--k", "0"], 2, "k must be at least 1, got 0"),
    ("releases missing database", ["releases", "--database", "{dir}/nope.duckdb"], 2, "registry database not found"),
    ("releases of a csv", ["releases", "--database", "{csv}"], 2, "is not a DuckDB database file"),
    ("hierarchy show missing", ["hierarchy", "show", "{dir}/nope.csv"], 2, "hierarchy file not found"),
    ("hierarchy show builder without input", ["hierarchy", "show", "bands:5"], 2, "needs --input"),
    ("hierarchy show two roots", ["hierarchy", "show", "{dir}/age_roots.csv"], 1, "has 2 roots"),
    ("hierarchy import ragged", ["hierarchy", "import", "{dir}/age_ragged.csv", "--column", "age", "--database", "{db}"], 1, "is ragged"),
    # -- issue 24: keys given twice, at every level of every YAML/JSON read
    ("policy key twice", ["anonymize", "--keep-others", "--policy", "{dir}/p_dup.yaml"], 2, "policy {dir}/p_dup.yaml: key 'k' is given twice (line 5; first on line 4)"),
    ("policy qi column twice", ["anonymize", "--keep-others", "--policy", "{dir}/p_dup_nested.yaml"], 2, "key 'zip' is given twice (line 4; first on line 3)"),
    ("policy key twice in a flow mapping", ["anonymize", "--keep-others", "--policy", "{dir}/p_dup_deep.yaml"], 2, "key 'hierarchy' is given twice (line 3; first on line 3)"),
    ("policy key twice under privacy", ["anonymize", "--keep-others", "--policy", "{dir}/p_dup_privacy.yaml"], 2, "key 'k' is given twice (line 6; first on line 5)"),
    ("tree hierarchy key twice", [*A, "--k", "2", "--qi", "disease={dir}/tree_dup.yaml", "--output", "{out}"], 1, "hierarchy {dir}/tree_dup.yaml: key 'resp' is given twice (line 3; first on line 2)"),
    ("json hierarchy key twice", [*A, "--k", "2", "--qi", "disease={dir}/tree_dup.json", "--output", "{out}"], 1, "hierarchy {dir}/tree_dup.json: key 'resp' is given twice"),
    ("hierarchy show key twice", ["hierarchy", "show", "{dir}/tree_dup.yaml"], 1, "key 'resp' is given twice"),
    ("transformation key twice", ["check", "--input", "{csv}", "--qi", "zip=mask", "--transformation", "{dir}/transformation_dup.json"], 2, "--transformation: key 'zip' is given twice"),
    # -- issue 24: engine text and internal errors that were shown raw
    ("binary hierarchy", [*A, "--k", "2", "--qi", "age={dir}/age_binary.csv", "--output", "{out}"], 1, "hierarchy for 'age' ({dir}/age_binary.csv) is a binary file, not text"),
    ("latin-1 hierarchy", [*A, "--k", "2", "--qi", "age={dir}/age_latin1.csv", "--output", "{out}"], 1, "is not UTF-8 text (line 3: byte 0xe9)"),
    ("hierarchy show binary", ["hierarchy", "show", "{dir}/age_binary.csv"], 1, "is a binary file, not text"),
    ("check binary hierarchy", ["check", "--input", "{csv}", "--qi", "age={dir}/age_binary.csv", "--k", "2"], 1, "is a binary file, not text"),
    ("empty hierarchy delimiter", [*A, "--k", "2", "--qi", "age={dir}/age.csv", "--hierarchy-delimiter", "", "--output", "{out}"], 2, "--hierarchy-delimiter is empty"),
    ("quote hierarchy delimiter", [*A, "--k", "2", "--qi", "age={dir}/age.csv", "--hierarchy-delimiter", '"', "--output", "{out}"], 2, "--hierarchy-delimiter must be one character"),
    ("hierarchy show empty delimiter", ["hierarchy", "show", "{dir}/age.csv", "--hierarchy-delimiter", ""], 2, "--hierarchy-delimiter must be one character"),
    ("header names differing in case", ["anonymize", "--keep-others", "--input", "{dir}/case.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "the header names columns 'Zip' and 'zip', one column to the engine"),
    ("check header names differing in case", ["check", "--input", "{dir}/case.csv", "--qi", "zip"], 2, "names columns 'Zip' and 'zip'"),
    ("csv format on parquet", [*W[:2], "{dir}/p.parquet", *W[3:], "--format", "csv", "--output", "{out}"], 2, "input {dir}/p.parquet is not a CSV file (a Parquet file); give --format parquet"),
    ("csv format on duckdb", [*W, "--format", "csv", "--output", "{out}"], 2, "is not a CSV file (a DuckDB database); give --format duckdb and --table"),
    ("check csv format on parquet", ["check", "--input", "{dir}/p.parquet", "--format", "csv", "--qi", "zip"], 2, "is not a CSV file (a Parquet file)"),
    ("binary csv", ["anonymize", "--keep-others", "--input", "{dir}/people_binary.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "is not a CSV file (a binary file)"),
    ("parquet format on csv", [*A, "--k", "2", "--format", "parquet", "--output", "{out}"], 2, "{csv} is not a Parquet file (give --format csv for a CSV)"),
    ("empty parquet file", ["anonymize", "--keep-others", "--input", "{dir}/zero.parquet", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "zero.parquet is not a Parquet file (it is empty)"),
    ("wrong csv delimiter", ["anonymize", "--keep-others", "--input", "{dir}/semi.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "is the delimiter ';'? give --delimiter ';'"),
    ("tab delimiter on a comma csv", [*A, "--k", "2", "--delimiter", "\\t", "--output", "{out}"], 2, "is the delimiter ','?"),
    ("policy binary", ["anonymize", "--keep-others", "--policy", "{dir}/p_binary.yaml"], 2, "policy {dir}/p_binary.yaml is a binary file, not text"),
    ("output under /sys", [*A, "--k", "2", "--output", "/sys/sqlanon-out.parquet"], 1, "cannot write /sys/sqlanon-out.parquet: "),
    ("output inside a file", [*A, "--k", "2", "--output", "{csv}/out.parquet"], 2, "cannot write output file {csv}/out.parquet: {csv} is a file, not a folder"),
    ("empty output", [*A, "--k", "2", "--output", ""], 2, "--output is empty"),
    ("empty output table", [*W, "--table", "patients", "--output-table", ""], 2, "--output-table is empty"),
    ("empty table flag", [*W, "--table", "", "--output", "{out}"], 2, "--table is empty"),
    ("empty format", [*A, "--k", "2", "--format", "", "--output", "{out}"], 2, "--format is empty"),
    ("policy empty output", ["anonymize", "--keep-others", "--policy", "{dir}/p_output_empty.yaml"], 2, "output in policy {dir}/p_output_empty.yaml is empty"),
    ("policy output a list", ["anonymize", "--keep-others", "--policy", "{dir}/p_output_list.yaml"], 2, "bad value for 'output' in policy"),
    ("policy empty", ["anonymize", "--keep-others", "--policy", "{dir}/p_empty.yaml"], 2, "no input"),
    ("l infinite", [*A, "--k", "2", "--sensitive-column", "disease", "--l", "inf", "--output", "{out}"], 2, "bad value for --l: inf is not a finite number"),
    ("max suppression nan", [*A, "--k", "2", "--max-suppression", "nan", "--output", "{out}"], 2, "bad value for --max-suppression: nan is not a finite number"),
    ("table name with an empty part", [*W, "--table", "main..patients", "--output", "{out}"], 2, "bad table name 'main..patients'"),
    ("table name with four parts", [*W, "--table", "a.b.c.patients", "--output", "{out}"], 2, "bad table name 'a.b.c.patients'"),
    ("output table name with an empty part", [*W, "--table", "patients", "--output-table", "s1..x"], 2, "bad table name 's1..x'"),
    ("dates on a non-date column", [*A, "--k", "2", "--qi", "name=dates", "--output", "{out}"], 1, "column 'name' has 'ann', which is not an ISO date"),
    ("bands that do not divide", [*A, "--k", "2", "--qi", "age=bands:7,10", "--output", "{out}"], 2, "band widths for 'age' must grow and each divide the next"),
    ("hierarchy a folder", [*A, "--k", "2", "--qi", "age={dir}", "--output", "{out}"], 2, "hierarchy file not found for 'age'"),
    ("csv input a folder", ["anonymize", "--keep-others", "--input", "{dir}/", "--format", "csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 2, "input file not found"),
    ("hierarchy import bad name", ["hierarchy", "import", "{dir}/age.csv", "--column", "age", "--database", "{db}", "--name", "a..b"], 2, "bad table name 'a..b'"),
    ("hierarchy import missing schema", ["hierarchy", "import", "{dir}/age.csv", "--column", "age", "--database", "{db}", "--name", "s9.h"], 2, "schema 's9' of table 's9.h' not found"),
    ("hierarchy import onto a view", ["hierarchy", "import", "{dir}/age.csv", "--column", "age", "--database", "{db}", "--name", "patients_v", "--overwrite"], 2, "'patients_v' in {db} is a view, not a table"),
    ("hierarchy import onto a table", ["hierarchy", "import", "{dir}/age.csv", "--column", "age", "--database", "{db}", "--name", "s1.patients"], 2, "table 's1.patients' already exists"),
    ("schema to /sys", ["schema", "policy", "--output", "/sys/sqlanon-policy.json"], 1, "cannot write /sys/sqlanon-policy.json: "),
    ("transformation a string", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": "x"}}'], 2, "the transformation of 'age' must be a level (an integer) or a list of released values, got 'x'"),
    ("transformation null", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": null}}'], 2, "got None"),
    ("transformation a float", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": 1.5}}'], 2, "got 1.5"),
    ("transformation true", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": true}}'], 2, "got True"),
    ("cut naming unknown values", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": [1, 2]}}'], 2, "the cut of 'age' names '1', which is not a value of its hierarchy"),
    ("check k zero", ["check", "--input", "{csv}", "--qi", "age", "--k", "0"], 2, "k must be at least 1, got 0"),
    ("check plan k zero", ["check", "--input", "{csv}", "--qi", "age={dir}/age.csv", "--transformation", '{{"age": 1}}', "--k", "0"], 2, "k must be at least 1, got 0"),
    ("tree with a list inside a list", [*A, "--k", "2", "--qi", "disease={dir}/tree_nested_list.yaml", "--output", "{out}"], 1, "a list inside a list under '*'"),
    ("tree containing itself", ["hierarchy", "show", "{dir}/tree_cycle.yaml"], 1, "found unconstructable recursive node"),
    ("policy qi an inline tree", ["anonymize", "--keep-others", "--policy", "{dir}/p_qi_tree.yaml"], 2, "qi.disease in policy {dir}/p_qi_tree.yaml: a hierarchy is text"),
    ("sql empty dialect", ["sql", "--input", "{csv}", "--qi", "zip=mask", "--k", "2", "--dialect", ""], 2, "unknown --dialect ''"),
    ("header only", ["anonymize", "--keep-others", "--input", "{dir}/empty.csv", "--qi", "zip=mask", "--k", "2", "--output", "{out}"], 1, "column 'zip' has no values"),
]


RAW_ENGINE_TEXT = re.compile(r"\b(Binder|Catalog|Parser|IO|Invalid Input|Conversion|Out of Memory) Error\b|\[[A-Z_]{4,}\]")


def _snapshot(folder) -> dict:
    """Every file's hash; for DuckDB databases, every table's rows (the bytes of a database
    file may change on a mere open)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in files + [d + "/" for d in dirs]:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            if name.endswith("/"):
                out[rel] = "dir"
            elif name.endswith(".duckdb") and name != "not_a_db.duckdb":
                con = duckdb.connect(path, read_only=True)
                try:
                    tables = con.execute("SELECT table_schema, table_name, table_type FROM information_schema.tables ORDER BY ALL").fetchall()
                    digest = hashlib.sha256(repr(tables).encode())
                    for schema, table, _ in tables:
                        rows = con.execute(f'SELECT * FROM "{schema}"."{table}" ORDER BY ALL').fetchall()
                        types = con.execute(f'DESCRIBE "{schema}"."{table}"').fetchall()
                        digest.update(repr((types, rows)).encode())
                    out[rel] = digest.hexdigest()
                finally:
                    con.close()
            else:
                with open(path, "rb") as fh:
                    out[rel] = hashlib.sha256(fh.read()).hexdigest()
    return out


@pytest.fixture
def bad(tmp_path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    for name, data in BINARY.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "reg.duckdb").mkdir()
    db = tmp_path / "warehouse.duckdb"
    con = duckdb.connect(str(db))
    for statement in WAREHOUSE_SQL:
        con.execute(statement)
    con.execute(f"COPY patients TO '{tmp_path / 'p.parquet'}' (FORMAT parquet)")
    con.close()
    return {"dir": str(tmp_path), "csv": str(tmp_path / "people.csv"), "db": str(db), "out": str(tmp_path / "out.parquet")}


@pytest.mark.parametrize("args, exit_code, fragment", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_matrix(bad, args, exit_code, fragment):
    before = _snapshot(bad["dir"])
    argv = [a.format(**bad) for a in args]
    result = invoke(argv + (["-q"] if argv[0] == "anonymize" else []))
    assert result.exit_code == exit_code, result.output
    fragment = fragment.format(**bad)
    if fragment.startswith("Invalid value"):  # a usage error of the flag parser itself
        assert fragment in result.stderr
    else:
        line = error_line(result)
        assert fragment in line, line
        assert "internal error" not in line and "Traceback" not in result.output
        assert not RAW_ENGINE_TEXT.search(line), line  # the driver's class of error says nothing to a user
    assert _snapshot(bad["dir"]) == before  # nothing written, nothing left behind


def test_matrix_size():
    assert len(CASES) >= 80 and len({c[0] for c in CASES}) == len(CASES)


# =============================================================================================
# Issue 24: what the matrix cannot say in one row.

import json  # noqa: E402

USAGE_ERRORS = [
    ("k not an integer", ["anonymize", "--keep-others", "--input", "x.csv", "--qi", "zip=mask", "--k", "2.5"], "'--k'"),
    ("unknown flag", ["anonymize", "--keep-others", "--input", "x.csv", "--bogus"], "No such option: --bogus"),
    ("missing required option", ["releases"], "Missing option '--database'"),
    ("unknown command", ["anonymise"], "No such command 'anonymise'"),
    ("hierarchy sub-command", ["hierarchy", "show"], "Missing argument"),
]


@pytest.mark.parametrize("args, fragment", [c[1:] for c in USAGE_ERRORS], ids=[c[0] for c in USAGE_ERRORS])
def test_usage_errors_under_json_are_json(args, fragment):
    """``--json`` makes a usage error of the flag parser one JSON object on stdout (and one
    ``error:`` line on stderr), with the exit code it has without ``--json``."""
    plain = invoke(args)
    result = invoke([*args, "--json"])
    assert plain.exit_code == result.exit_code == 2
    assert "Usage:" in plain.stderr and not plain.stdout  # without --json: the parser's own text
    doc = json.loads(result.stdout)  # exactly one JSON object, nothing else on stdout
    assert doc["exit_code"] == 2 and fragment in doc["error"], doc
    assert error_line(result) == f"error: {doc['error']}" and "Usage:" not in result.stderr


def test_json_flag_changes_nothing_else():
    """--help under --json is still the help; a good run is unchanged (one JSON object)."""
    result = invoke(["anonymize", "--keep-others", "--help", "--json"])
    assert result.exit_code == 0 and "--qi" in result.stdout


def test_yaml_merge_keys_may_override(tmp_path):
    """A ``<<`` merge is not a key given twice: the mapping's own key wins, as YAML says."""
    from sqlanon.config.policy import Policy

    path = tmp_path / "p.yaml"
    path.write_text("base: &b {k: 5, max_suppression: 0.1}\n")
    from sqlanon.files.strict_load import load_yaml

    assert load_yaml("a: &a {k: 5, l: 2}\nb:\n  <<: *a\n  k: 3\n", "x")["b"] == {"k": 3, "l": 2}
    path.write_text("input: x.csv\nqi: {zip: mask}\nk: 5\nk: 3\n")
    with pytest.raises(sqlanon.ConfigError, match=r"key 'k' is given twice \(line 4; first on line 3\)"):
        Policy.from_file(str(path))


def test_duplicate_keys_from_the_api(tmp_path):
    """The Python API reads the same files the same way: a tree hierarchy with a key twice and a
    cost matrix with a class twice are errors, not the last one winning."""
    from sqlanon.hierarchy import load_hierarchy
    from sqlanon.search.genetic.objective import read_cost_matrix

    tree = tmp_path / "d.yaml"
    tree.write_text("'*':\n  resp: [flu]\n  other: [cold]\n  resp: [cough]\n")
    with pytest.raises(sqlanon.HierarchyError, match=r"key 'resp' is given twice \(line 4; first on line 2\)"):
        load_hierarchy(str(tree), "disease", None, None)
    with pytest.raises(sqlanon.ConfigError, match=r"cost_matrix: key 'a' is given twice"):
        read_cost_matrix('{"a": {"b": 1}, "a": {"b": 2}}', ["a", "b"])


def test_read_only_file_system_names_the_output(small, monkeypatch):
    """EROFS cannot be had without a mount, so the final rename meets one; the line names the
    output the user gave (not its temporary file), exit 1, and the temporary file is gone."""
    import errno

    import sqlanon.release.write

    def refuse(src, dst):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), src)

    monkeypatch.setattr(sqlanon.release.write.os, "replace", refuse)
    result = invoke(base(small))
    assert result.exit_code == 1
    assert error_line(result) == f"error: cannot write {small['out']}: Read-only file system"
    nothing_written(small)


def test_report_that_cannot_be_written_is_one_line(small):
    """A report under /sys (no file can be created there, not even by root): one line naming it."""
    result = invoke(base(small, "--report", "/sys/sqlanon-report.html"))
    assert result.exit_code == 1
    assert error_line(result).startswith("error: cannot write /sys/sqlanon-report.html: ")


def test_engine_errors_are_mapped_in_one_place(tmp_path):
    """The real driver exceptions, through :func:`engine_error`: known shapes in the user's
    terms, any other without the driver's class of error."""
    from sqlanon.engine.base import engine_error
    from sqlanon.errors import ConfigError, EngineError, EngineInputError

    con = duckdb.connect()
    try:
        def raised(sql):
            with pytest.raises(duckdb.Error) as info:
                con.execute(sql)
            return engine_error(info.value, sql, "DuckDB")

        err = raised("SELECT * FROM nope")
        assert type(err) is EngineError and str(err).startswith("DuckDB: Table with name nope does not exist")
        err = raised("SELEC 1")
        assert str(err).startswith("DuckDB: syntax error at or near") and "Parser Error" not in str(err)
        csv = tmp_path / "a.csv"
        csv.write_text("a,b\n1,2\n")
        err = raised(f"SELECT * FROM read_parquet('{csv}')")
        assert isinstance(err, EngineInputError) and isinstance(err, ConfigError) and err.exit_code == 2
        assert str(err) == f"{csv} is not a Parquet file (give --format csv for a CSV)"
        err = raised(f"COPY (SELECT 1) TO '{csv}/x/.out.parquet.42-0123abcd.tmp'")
        assert type(err) is EngineError and str(err).startswith(f"cannot write {csv}/x/out.parquet: ")
    finally:
        con.close()


def test_hierarchy_import_into_a_schema_is_read_back(bad):
    """``--name s1.h`` stores table h in schema s1 (it stored one table named "s1.h" in main),
    which ``--qi age=table:s1.h`` then reads."""
    result = invoke(["hierarchy", "import", f"{bad['dir']}/age.csv", "--column", "age", "--database", bad["db"], "--name", "s1.h"])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(bad["db"], read_only=True)
    try:
        assert con.execute("SELECT COUNT(*) FROM s1.h").fetchone()[0] == 40
    finally:
        con.close()
    result = invoke(["anonymize", "--keep-others", "--input", bad["db"], "--table", "patients", "--qi", "age=table:s1.h", "--k", "2", "-q", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["transformation"] == {"age": 1}


def test_csv_column_names_with_quotes_unicode_and_spaces(tmp_path):
    """Not errors: a CSV header naming ``zi"p``, ``åge`` and ``a b`` reads, generalizes and writes
    each column under its own name."""
    import pyarrow.parquet as pq

    data = tmp_path / "w.csv"
    data.write_text('"zi""p",åge,a b\n12345,31,x\n12346,32,x\n12355,41,y\n12356,45,y\n', encoding="utf-8")
    out = tmp_path / "o.parquet"
    result = invoke(["anonymize", "--keep-others", "--input", str(data), "--qi", 'zi"p=mask', "--qi", "åge=bands:10", "--qi", "a b=flat", "--k", "2", "--output", str(out), "-q", "--json"])
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert table.column_names == ['zi"p', "åge", "a b"]
    assert sorted(table.column('zi"p').to_pylist()) == ["1234*", "1234*", "1235*", "1235*"]


def test_tree_labels_are_the_text_as_written(tmp_path):
    """YAML 1.1 reads ``NO`` as False and ``010`` as 8: a tree of country codes lost Norway.
    Labels are the text as written; a JSON ``true`` is ``true``."""
    from sqlanon.hierarchy import load_hierarchy

    tree = tmp_path / "c.yaml"
    tree.write_text("'*':\n  Europe: [NO, SE, 010, on]\n  Other:\n  Nowhere: null\n")
    h = load_hierarchy(str(tree), "country", None, None)
    assert [r[0] for r in h.rows] == ["NO", "SE", "010", "on", "Other", "Nowhere"]
    tree = tmp_path / "c.json"
    tree.write_text('{"*": {"t": [true, 5]}}')
    assert [r[0] for r in load_hierarchy(str(tree), "flag", None, None).rows] == ["true", "5"]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_csv_header_with_any_line_ending(tmp_path, newline):
    """The header is read as bytes now (to tell a binary file): every line ending still ends it."""
    data = tmp_path / "p.csv"
    data.write_bytes(newline.join(["name,zip", "ann,12345", "bob,12346", ""]).encode())
    result = invoke(["anonymize", "--keep-others", "--input", str(data), "--qi", "zip=mask", "--k", "2", "-q", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["transformation"] == {"zip": 1}
