"""Hierarchies: ARX CSV import, quoted comma CSVs, YAML/JSON trees, the builders, validation errors
and the ``sqlanon hierarchy`` CLI."""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from paths import DATA

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon.cli.app
from sqlanon.engine import connect
from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy import load_hierarchy, read_csv_hierarchy, tree_to_hierarchy, write_csv_hierarchy
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.engine.source import Source

from conftest import SHARED, adult_dir  # noqa: E402

# ../shared when present, else the copies bundled with the repository (a fresh clone has no ../shared)
ADULT = Path(adult_dir())
ADULT_FULL = Path(SHARED) / "datasets" / "adult-full" / "hierarchies"
if not ADULT_FULL.is_dir():
    ADULT_FULL = DATA / "adult-full-hierarchies"

# (leaves, levels) per ARX file, from the dataset README
ADULT_SHAPES = {
    "age": (100, 5),
    "education": (16, 4),
    "marital-status": (7, 3),
    "native-country": (None, 3),
    "occupation": (14, 3),
    "race": (5, 2),
    "salary-class": (2, 2),
    "sex": (2, 2),
    "workclass": (8, 3),
}


# ---------------------------------------------------------------------------------------------
# ARX CSVs


@pytest.mark.parametrize("attribute", sorted(ADULT_SHAPES))
def test_adult_arx_hierarchies_validate(attribute):
    path = ADULT / f"adult_hierarchy_{attribute}.csv"
    h = load_hierarchy(str(path), attribute)
    leaves, levels = ADULT_SHAPES[attribute]
    if leaves is not None:
        assert len(h.leaves) == leaves
    assert h.max_level + 1 == levels
    assert h.labels(h.max_level) == ["*"]
    assert len(set(h.leaves)) == len(h.leaves)
    # every leaf is one row of the file, unchanged
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    assert [ln.split(";") for ln in lines] == h.rows


def test_adult_age_shape():
    h = load_hierarchy(str(ADULT / "adult_hierarchy_age.csv"), "age")
    assert h.describe()["distinct_per_level"] == [100, 20, 10, 5, 1]
    row = h.rows[h.leaf_index["39"]]
    assert row == ["39", "35-39", "30-39", "20-39", "*"]
    assert h.leaves_under(1)[h.labels(1).index("35-39")] == 5
    # the mapping table: code, level_0 .. level_4
    t = h.mapping_table()
    assert t.column_names == ["code", "level_0", "level_1", "level_2", "level_3", "level_4"]
    assert t.num_rows == 100 and t.column("level_0").to_pylist()[38] == "39"


@pytest.mark.parametrize("path", sorted(glob.glob(str(ADULT_FULL / "*.csv"))))
def test_adult_full_comma_hierarchies_with_quoted_labels(path):
    h = load_hierarchy(path, Path(path).stem)
    assert h.labels(h.max_level) == ["*"]
    for row in h.rows:
        assert all(cell and cell == cell.strip() for cell in row)


def test_quoted_interval_is_one_cell():
    h = load_hierarchy(str(ADULT_FULL / "age.csv"), "age")
    assert h.rows[0] == ["17", "[15, 20[", "[10, 20[", "[0, 20[", "[0, 40[", "[0, 80[", "*"]
    assert h.max_level == 6
    assert "[15, 20[" in h.labels(1)


def test_delimiter_sniffing_and_override(tmp_path):
    semi = tmp_path / "semi.csv"
    semi.write_text("a, b;X;*\nc;X;*\n", encoding="utf-8")
    h = read_csv_hierarchy(str(semi), "v")
    assert h.rows == [["a, b", "X", "*"], ["c", "X", "*"]]
    comma = tmp_path / "comma.csv"
    comma.write_text('"a;b", X,*\nc,X,*\n', encoding="utf-8")
    h = read_csv_hierarchy(str(comma), "v")
    assert h.rows == [["a;b", "X", "*"], ["c", "X", "*"]]
    # forced delimiter
    h = read_csv_hierarchy(str(comma), "v", delimiter=",")
    assert h.leaves == ["a;b", "c"]


def test_csv_round_trip(tmp_path):
    h = load_hierarchy(str(ADULT_FULL / "age.csv"), "age")
    out = tmp_path / "age_out.csv"
    write_csv_hierarchy(h, str(out))
    again = read_csv_hierarchy(str(out), "age")
    assert again.rows == h.rows


# ---------------------------------------------------------------------------------------------
# YAML / JSON trees


def test_yaml_tree_with_uneven_depth_is_padded(tmp_path):
    path = tmp_path / "edu.yaml"
    path.write_text(
        "'*':\n"
        "  Higher:\n"
        "    Grad: [Masters, Doctorate]\n"
        "    Undergrad: [Bachelors]\n"
        "  Secondary: [HS-grad, 11th]\n"
        "  Preschool:\n",
        encoding="utf-8",
    )
    h = load_hierarchy(str(path), "edu")
    assert h.max_level == 3
    by_leaf = {r[0]: r for r in h.rows}
    assert by_leaf["Masters"] == ["Masters", "Grad", "Higher", "*"]
    assert by_leaf["Bachelors"] == ["Bachelors", "Undergrad", "Higher", "*"]
    assert by_leaf["HS-grad"] == ["HS-grad", "HS-grad", "Secondary", "*"]  # padded: leaf repeated
    assert by_leaf["Preschool"] == ["Preschool", "Preschool", "Preschool", "*"]
    assert sorted(h.leaves) == sorted(["Masters", "Doctorate", "Bachelors", "HS-grad", "11th", "Preschool"])


def test_json_tree(tmp_path):
    path = tmp_path / "sex.json"
    path.write_text(json.dumps({"*": {"person": ["M", "F"], "other": ["X"]}}), encoding="utf-8")
    h = load_hierarchy(str(path), "sex")
    assert h.rows == [["M", "person", "*"], ["F", "person", "*"], ["X", "other", "*"]]
    # numbers become text
    h = tree_to_hierarchy({"*": [1, 2, 3]}, "n")
    assert h.rows == [["1", "*"], ["2", "*"], ["3", "*"]]


def test_tree_errors(tmp_path):
    with pytest.raises(HierarchyError, match=r"must have exactly one root key"):
        tree_to_hierarchy({"a": [1], "b": [2]}, "x")
    with pytest.raises(HierarchyError, match=r"has a NULL leaf"):
        tree_to_hierarchy({"*": ["a", None]}, "x")
    bad = tmp_path / "bad.yaml"
    bad.write_text("'*': [a, b\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"is not valid YAML/JSON"):
        load_hierarchy(str(bad), "x")
    with pytest.raises(ConfigError, match=r"hierarchy file not found"):
        load_hierarchy(str(tmp_path / "missing.yaml"), "x")
    with pytest.raises(ConfigError, match=r"hierarchy file not found"):
        load_hierarchy(str(tmp_path / "missing.csv"), "x")


# ---------------------------------------------------------------------------------------------
# validation errors


def test_ragged_rows(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a;X;*\nb;*\n", encoding="utf-8")
    with pytest.raises(HierarchyError) as err:
        load_hierarchy(str(path), "col")
    assert str(err.value) == f"hierarchy for 'col' ({path}) is ragged: row 2 ('b') has 2 levels, row 1 has 3"


def test_leaf_twice():
    with pytest.raises(HierarchyError) as err:
        Hierarchy("c", [["a", "X", "*"], ["b", "X", "*"], ["a", "Y", "*"]], origin="t")
    assert str(err.value) == "hierarchy for 'c' (t): leaf 'a' appears twice (rows 1 and 3)"


@pytest.mark.parametrize("row", [["b", "", "*"], ["b", None, "*"]])
def test_empty_or_null_cell(row):
    with pytest.raises(HierarchyError) as err:
        Hierarchy("c", [["a", "X", "*"], row], origin="t")
    assert str(err.value) == "hierarchy for 'c' (t): row 2 has an empty or NULL value at level 1"


def test_empty_cell_in_csv(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("a;X;*\nb;;*\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"row 2 has an empty or NULL value at level 1"):
        load_hierarchy(str(path), "c")


def test_not_a_tree():
    rows = [["a", "X", "P", "*"], ["b", "X", "Q", "*"]]
    with pytest.raises(HierarchyError) as err:
        Hierarchy("c", rows, origin="t")
    assert str(err.value) == "hierarchy for 'c' (t) is not a tree: 'X' at level 1 has parents 'P' and 'Q'"


def test_empty_hierarchy(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(HierarchyError, match=r"is empty"):
        load_hierarchy(str(path), "c")


# ---------------------------------------------------------------------------------------------
# builders on a small CSV source


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src.csv"
    path.write_text(
        "age,day,zip,score,color\n"
        "3,2020-01-15,12345,1.5,red\n"
        "7,2020-01-31,12346,10,blue\n"
        "12,2020-02-01,12399,2.25,red\n"
        "17,2021-12-31,13000,-4,green\n"
        "23,2021-06-01,12345,10,blue\n",
        encoding="utf-8",
    )
    engine = connect(threads=1)
    yield engine, Source.open(str(path))
    engine.close()


def build(spec, column, source):
    engine, src = source
    return load_hierarchy(spec, column, engine, src)


def test_bands(source):
    h = build("bands:5,10", "age", source)
    assert h.numeric and h.max_level == 3
    assert h.rows == [
        ["3", "[0, 5[", "[0, 10[", "*"],
        ["7", "[5, 10[", "[0, 10[", "*"],
        ["12", "[10, 15[", "[10, 20[", "*"],
        ["17", "[15, 20[", "[10, 20[", "*"],
        ["23", "[20, 25[", "[20, 30[", "*"],
    ]
    # nested: each 5-band lies in exactly one 10-band (validated as a tree)
    assert h.level_to_level(1, 2) == [0, 0, 1, 1, 2]


def test_bands_fractional_and_negative(source):
    h = build("bands:2.5,5", "score", source)
    by_leaf = {r[0]: r for r in h.rows}
    assert by_leaf["1.5"] == ["1.5", "[0, 2.5[", "[0, 5[", "*"]
    assert by_leaf["-4"] == ["-4", "[-5, -2.5[", "[-5, 0[", "*"]
    assert by_leaf["10"] == ["10", "[10, 12.5[", "[10, 15[", "*"]
    assert [r[0] for r in h.rows] == ["-4", "1.5", "2.25", "10"]  # sorted numerically


@pytest.mark.parametrize("spec", ["bands:5,7", "bands:10,5", "bands:5,5", "bands:a,b", "bands:", "bands:0", "bands:-5", "bands:0,5", "bands:nan"])
def test_bad_band_widths(spec, source):
    with pytest.raises(ConfigError, match=r"age"):
        build(spec, "age", source)


def test_bands_on_text_is_a_hierarchy_error(source):
    with pytest.raises(HierarchyError, match=r"non-numeric value 'blue'"):  # the smallest bad value, whatever the engine's order
        build("bands:5", "color", source)


def test_dates(source):
    h = build("dates", "day", source)
    assert h.max_level == 3
    by_leaf = {r[0]: r for r in h.rows}
    assert by_leaf["2020-01-15"] == ["2020-01-15", "2020-01", "2020", "*"]
    assert by_leaf["2021-12-31"] == ["2021-12-31", "2021-12", "2021", "*"]
    assert h.labels(1) == ["2020-01", "2020-02", "2021-06", "2021-12"]
    with pytest.raises(HierarchyError, match=r"not an ISO date"):
        build("dates", "color", source)


def test_builders_name_the_same_culprit_in_any_order():
    """The engine's SELECT DISTINCT order varies under load (a multi-threaded scan); the error
    must not: each builder names the smallest value it cannot take."""
    import itertools

    from sqlanon.hierarchy.builders import date_parts, flat_numeric, numeric_bands

    cases = [
        (lambda v: date_parts(v, "name"), ["2020-01-15", "bob", "2021-12-31", "ann", "zed"], "column 'name' has 'ann', which is not an ISO date (YYYY-MM-DD)"),
        (lambda v: numeric_bands(v, [5.0], "age"), ["31", "bob", "4.5", "ann", "zed"], "column 'age' has non-numeric value 'ann' for a numeric band hierarchy"),
        (lambda v: flat_numeric(v, "age"), ["31", "bob", "4.5", "ann", "zed"], "column 'age' is marked numeric but has value 'ann'"),
    ]
    for build_it, values, message in cases:
        seen = set()
        for order in itertools.permutations(values):
            with pytest.raises(HierarchyError) as info:
                build_it(list(order))
            seen.add(str(info.value))
        assert seen == {message}


def test_mask(source):
    h = build("mask", "zip", source)
    assert h.rows[0] == ["12345", "1234*", "123**", "12***", "1****", "*"]
    assert h.leaves == ["12345", "12346", "12399", "13000"]
    assert h.labels(2) == ["123**", "130**"]
    h = build("mask:#", "zip", source)
    assert h.rows[0] == ["12345", "1234#", "123##", "12###", "1####", "#"]


def test_numeric_and_flat(source):
    h = build("numeric", "score", source)
    assert h.numeric and h.rows == [["-4", "*"], ["1.5", "*"], ["2.25", "*"], ["10", "*"]]
    h = build("flat", "color", source)
    assert h.rows == [["blue", "*"], ["green", "*"], ["red", "*"]]
    with pytest.raises(HierarchyError, match=r"marked numeric but has value 'blue'|non-numeric"):  # the smallest bad value
        build("numeric", "color", source)


def test_builder_needs_source_and_known_column(source):
    with pytest.raises(ConfigError, match=r"needs the source"):
        load_hierarchy("bands:5", "age")
    with pytest.raises(ConfigError, match=r"unknown .*'nope'"):
        build("flat", "nope", source)


# ---------------------------------------------------------------------------------------------
# CLI


runner = CliRunner()


def test_cli_show():
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", str(ADULT / "adult_hierarchy_age.csv"), "--column", "age"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0].startswith("age: 100 leaves, 5 levels, distinct per level [100, 20, 10, 5, 1]")
    assert "39 -> 35-39 -> 30-39 -> 20-39 -> *" not in r.output  # only the first 10 rows
    assert "1 -> 0-4 -> 0-9 -> 0-19 -> *" in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", str(ADULT_FULL / "age.csv"), "--json", "--rows", "2"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["leaves"] == 73 and data["levels"] == 7 and data["rows"][0][1] == "[15, 20["


def test_cli_show_builder(tmp_path):
    src = tmp_path / "s.csv"
    src.write_text("zip\n12345\n12399\n", encoding="utf-8")
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", "mask", "--column", "zip", "--input", str(src)])
    assert r.exit_code == 0, r.output
    assert "12345 -> 1234* -> 123** -> 12*** -> 1**** -> *" in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", "mask", "--column", "zip"])
    assert r.exit_code == 2
    assert "needs --input" in r.output


def test_cli_show_errors(tmp_path):
    ragged = tmp_path / "r.csv"
    ragged.write_text("a;X;*\nb;*\n", encoding="utf-8")
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", str(ragged)])
    assert r.exit_code == 1
    assert re.search(r"error: hierarchy for 'value' \(.*r\.csv\) is ragged: row 2 \('b'\) has 2 levels, row 1 has 3", r.output)
    assert "Traceback" not in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2
    assert "hierarchy file not found" in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "show"])
    assert r.exit_code == 2  # usage


def test_cli_import(tmp_path):
    db = tmp_path / "h.duckdb"
    path = str(ADULT / "adult_hierarchy_age.csv")
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", path, "--column", "age", "--database", str(db)])
    assert r.exit_code == 0, r.output
    assert "sqlanon_hierarchy_age" in r.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        cols = [c[0] for c in con.execute("DESCRIBE sqlanon_hierarchy_age").fetchall()]
        assert cols == ["code", "level_0", "level_1", "level_2", "level_3", "level_4"]
        assert con.execute("SELECT count(*), count(DISTINCT level_1) FROM sqlanon_hierarchy_age").fetchall() == [(100, 20)]
        assert con.execute("SELECT level_0, level_1, level_2, level_3, level_4 FROM sqlanon_hierarchy_age WHERE level_0 = '39'").fetchall() == [
            ("39", "35-39", "30-39", "20-39", "*")
        ]
    finally:
        con.close()
    # again: the table exists -> usage error; --overwrite replaces it
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", path, "--column", "age", "--database", str(db)])
    assert r.exit_code == 2 and "already exists" in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", str(ADULT / "adult_hierarchy_sex.csv"), "--column", "age", "--database", str(db), "--overwrite"])
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT level_0, level_1 FROM sqlanon_hierarchy_age ORDER BY code").fetchall() == [("Male", "*"), ("Female", "*")]
    finally:
        con.close()
    # a custom name
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", path, "--column", "age", "--database", str(db), "--name", "age map"])
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute('SELECT count(*) FROM "age map"').fetchall() == [(100,)]
    finally:
        con.close()


def test_cli_import_errors(tmp_path):
    db = tmp_path / "h.duckdb"
    bad = tmp_path / "tree.csv"
    bad.write_text("a;X;P;*\nb;X;Q;*\n", encoding="utf-8")
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", str(bad), "--column", "c", "--database", str(db)])
    assert r.exit_code == 1
    assert "is not a tree: 'X' at level 1 has parents 'P' and 'Q'" in r.output
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", str(bad), "--database", str(db)])
    assert r.exit_code == 2  # --column is required
    if db.exists():  # nothing was stored
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name LIKE 'sqlanon_hierarchy_%'").fetchall() == [(0,)]
        finally:
            con.close()


def test_stored_hierarchy_is_usable_as_table_spec(tmp_path):
    """``hierarchy import`` then ``--qi age=table:NAME``: the same plan as from the CSV, and a clear
    error for a missing table or one without level columns."""
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE people AS SELECT * FROM read_csv(?, delim=';', all_varchar=true)", [str(ADULT / "adult.csv")])
    con.execute("CREATE TABLE not_a_hierarchy (a VARCHAR)")
    con.close()
    path = str(ADULT / "adult_hierarchy_age.csv")
    r = runner.invoke(sqlanon.cli.app.app, ["hierarchy", "import", path, "--column", "age", "--database", str(db), "--name", "age map"])
    assert r.exit_code == 0 and "--qi age=table:age map" in r.output, r.output
    base = ["anonymize", "--input", str(db), "--table", "people", "--k", "10", "--dry-run", "--json", "-q", "--qi", f"sex={ADULT / 'adult_hierarchy_sex.csv'}"]
    from_csv = runner.invoke(sqlanon.cli.app.app, base + ["--qi", f"age={path}"])
    from_table = runner.invoke(sqlanon.cli.app.app, base + ["--qi", "age=table:age map"])
    assert from_csv.exit_code == 0 and from_table.exit_code == 0, from_table.output
    a, b = (json.loads(x.stdout.strip().splitlines()[-1]) for x in (from_csv, from_table))
    assert a["transformation"] == b["transformation"] and a["metric"] == b["metric"]
    assert b["hierarchies"][1]["origin"] == "table age map" and b["hierarchies"][1]["leaves"] == 100
    # the same from a policy file in another folder: table:NAME is not a path to resolve
    policy = tmp_path / "policies" / "p.yaml"
    policy.parent.mkdir()
    policy.write_text(f"input: {db}\ntable: people\nk: 10\nqi:\n  sex: {ADULT / 'adult_hierarchy_sex.csv'}\n  age: 'table:age map'\n")
    from_policy = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--policy", str(policy), "--dry-run", "--json", "-q"])
    assert from_policy.exit_code == 0, from_policy.output
    assert json.loads(from_policy.stdout.strip().splitlines()[-1])["transformation"] == b["transformation"]
    missing = runner.invoke(sqlanon.cli.app.app, base + ["--qi", "age=table:nope"])
    assert missing.exit_code == 2 and "hierarchy table 'nope' for 'age' not found" in missing.output
    wrong = runner.invoke(sqlanon.cli.app.app, base + ["--qi", "age=table:not_a_hierarchy"])
    assert wrong.exit_code == 1 and "has no level_0 .. level_N columns (columns: a)" in wrong.output
