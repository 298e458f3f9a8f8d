"""Bad input: one clear line naming the culprit, the documented exit code, and nothing written."""

import os

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon.cli

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
    return runner.invoke(sqlanon.cli.app, args)


def error_line(result) -> str:
    lines = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(lines) == 1, result.output
    return lines[0]


def nothing_written(small):
    assert not os.path.exists(small["out"])
    assert not os.path.exists(os.path.join(small["dir"], "sqlanon_releases.duckdb"))
    assert [f for f in os.listdir(small["dir"]) if f.endswith(".tmp")] == []


def base(small, *extra):
    return ["anonymize", "--input", small["data"], "--qi", f"age={small['age']}", "--qi", "zip=mask", "--k", "2", "--output", small["out"], "-q", *extra]


def test_missing_input_file(small):
    result = invoke(["anonymize", "--input", str(small["dir"] / "nope.csv"), "--qi", f"age={small['age']}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 2
    assert error_line(result) == f"error: input file not found: {small['dir'] / 'nope.csv'}"
    nothing_written(small)


def test_unknown_column(small):
    result = invoke(["anonymize", "--input", small["data"], "--qi", f"agee={small['age']}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 2
    assert error_line(result) == f"error: unknown quasi-identifier column 'agee' in csv:{small['data']}; columns are: zip, age, disease"
    nothing_written(small)


def test_value_missing_from_hierarchy(small, tmp_path):
    age = tmp_path / "age_short.csv"
    age.write_text("31;30-39;*\n32;30-39;*\n33;30-39;*\n36;30-39;*\n")
    result = invoke(["anonymize", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert error_line(result) == f"error: column 'age': 2 distinct value(s) in 2 row(s) are missing from its hierarchy ({age}), e.g. '41', '45'"
    nothing_written(small)


def test_ragged_hierarchy(small, tmp_path):
    age = tmp_path / "ragged.csv"
    age.write_text("31;30-39;*\n32;*\n")
    result = invoke(["anonymize", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert error_line(result) == f"error: hierarchy for 'age' ({age}) is ragged: row 2 ('32') has 2 levels, row 1 has 3"
    nothing_written(small)


def test_hierarchy_not_a_tree(small, tmp_path):
    age = tmp_path / "dag.csv"
    age.write_text("31;30-39;A;*\n32;30-39;B;*\n")
    result = invoke(["anonymize", "--input", small["data"], "--qi", f"age={age}", "--k", "2", "--output", small["out"]])
    assert result.exit_code == 1
    assert "is not a tree: '30-39' at level 1 has parents 'A' and 'B'" in error_line(result)
    nothing_written(small)


def test_nulls_in_a_quasi_identifier(small, tmp_path):
    data = tmp_path / "nulls.csv"
    data.write_text("zip,age\n12345,31\n12346,\n12355,41\n")
    result = invoke(["anonymize", "--input", str(data), "--qi", f"age={small['age']}", "--k", "1", "--output", small["out"]])
    assert result.exit_code == 1
    assert error_line(result) == "error: column 'age' has 1 NULL value(s); fill or filter them before anonymizing"
    nothing_written(small)


def test_empty_table(small, tmp_path):
    data = tmp_path / "empty.csv"
    data.write_text("zip,age\n")
    result = invoke(["anonymize", "--input", str(data), "--qi", f"age={small['age']}", "--k", "2", "--output", small["out"]])
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
    result = invoke(["anonymize", "--policy", str(policy)])
    assert result.exit_code == 2
    assert error_line(result).startswith(f"error: unknown key 'kk' in policy {policy}; known keys: ")
    nothing_written(small)


def test_bad_policy_value(small, tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {small['data']}\nk: three\n")
    result = invoke(["anonymize", "--policy", str(policy)])
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
    result = invoke(["anonymize", "--input", db, "--format", "duckdb", "--table", 'we"ird', "--qi", f"{col}=mask", "--k", "2", "--output-table", "out table", "-q"])
    assert result.exit_code == 0, result.output
    con = duckdb.connect(db)
    rows = con.execute('SELECT "zip ""code""; DROP TABLE t; --", v FROM "out table" ORDER BY v').fetchall()
    assert rows == [("1234*", 1), ("1234*", 2), ("1235*", 3), ("1235*", 4)]
    assert con.execute('SELECT COUNT(*) FROM "we""ird"').fetchone()[0] == 4
    con.close()


def test_missing_duckdb_table(tmp_path):
    db = str(tmp_path / "x.duckdb")
    duckdb.connect(db).close()
    result = invoke(["anonymize", "--input", db, "--table", "nope", "--qi", "a=mask", "--k", "2", "--in-place"])
    assert result.exit_code == 2
    assert error_line(result) == f"error: table 'nope' not found in {db}"
