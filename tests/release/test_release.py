"""Release targets, atomicity, the registry, and the check / sql / releases commands."""

import json
import os
import subprocess
import sys

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from checker import check_k, check_l_diversity, read_rows
from sqlanon.errors import SqlanonError

runner = CliRunner()


@pytest.fixture
def people(tmp_path):
    """A small table with a zip code, an age, a sensitive disease and a class."""
    import random

    rnd = random.Random(7)
    lines = ["id,zip,age,disease,buys"]
    for i in range(300):
        lines.append(f"{i},{rnd.choice(['12345', '12346', '12355', '12356', '13001', '13002'])},{rnd.randint(20, 59)},{rnd.choice(['flu', 'cold', 'hiv', 'cancer'])},{rnd.choice(['yes', 'no'])}")
    data = tmp_path / "people.csv"
    data.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "people.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE people AS SELECT * FROM read_csv(?, all_varchar=true)", [str(data)])
    con.close()
    return {"dir": tmp_path, "csv": str(data), "db": db, "qi": {"zip": "mask", "age": "bands:5,10,20"}}


def table_rows(db, table):
    con = duckdb.connect(db)
    try:
        cols = [r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()]
        return [dict(zip(cols, r)) for r in con.execute(f'SELECT * FROM "{table}"').fetchall()]
    finally:
        con.close()


def test_parquet_and_csv_outputs_are_valid(people, tmp_path):
    for name in ("out.parquet", "out.csv"):
        out = str(tmp_path / name)
        report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=5, max_suppression=0.02, output=out)
        rows = read_rows(out)
        assert len(rows) == 300 and list(rows[0]) == ["id", "zip", "age", "disease", "buys"]
        verdict = check_k(rows, ["zip", "age"], 5, 0.02)
        assert verdict["ok"], verdict["problems"]
        assert verdict["suppressed"] == report.suppressed_rows
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"))
    assert reg.execute("SELECT COUNT(*), MIN(rows) FROM sqlanon_releases").fetchone() == (2, 300)
    reg.close()


@pytest.mark.parametrize("suppression,literal_labels", [("mask", 1024), ("mask", 3), ("mask", 0), ("drop", 1024)])
def test_parquet_release_of_labels_and_keys_equals_the_text_release(people, tmp_path, monkeypatch, suppression, literal_labels):
    """A Parquet release on DuckDB writes ENUM labels and finds suppressed rows by a packed key
    (``Dialect.label_type``, ``Statistics.bad_class_keys_create``); a CSV release keeps text labels
    and the label join: the same rows, read back as text. A masked ENUM label is a typed constant
    for a QI of at most ``MASK_LITERAL_LABELS`` labels (its released values and ``*``), else the
    mapping table's column."""
    from sqlanon.release import write

    monkeypatch.setattr(write, "MASK_LITERAL_LABELS", literal_labels)
    kinds: list[list[bool]] = []
    masked_labels = write.masked_labels
    monkeypatch.setattr(write, "masked_labels", lambda *a: kinds.append([m is not None for m in masked_labels(*a)]) or masked_labels(*a))
    qi = {**people["qi"], "buys": "flat"}  # buys stays ungeneralized: a text column through its mapping
    releases = {}
    for name in ("out.parquet", "out.csv"):
        out = str(tmp_path / name)
        report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=qi, k=6, max_suppression=0.1, suppression=suppression, output=out)
        assert report.suppressed_rows > 0
        releases[name] = sorted(tuple(str(v) for v in r.values()) for r in read_rows(out))
    assert releases["out.parquet"] == releases["out.csv"]
    if suppression == "drop":
        assert kinds == []  # no masked labels
    else:  # zip, age, buys: at 3 labels some QIs are constants and some columns (both ways in one release)
        assert len(kinds) == 1 and len(kinds[0]) == 3, kinds
        assert set(kinds[0]) == {1024: {True}, 3: {True, False}, 0: {False}}[literal_labels], kinds
    con = duckdb.connect()
    assert {t for _, t, *_ in con.execute(f"DESCRIBE SELECT * FROM '{tmp_path / 'out.parquet'}'").fetchall()} <= {"VARCHAR", "BIGINT"}
    con.close()


def test_drop_suppression_removes_rows(people, tmp_path):
    out = str(tmp_path / "drop.parquet")
    # six zips of ~50 rows: with k=50 suppressing the small ones beats generalizing zip to *
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi={"zip": "flat"}, k=50, max_suppression=0.9, suppression="drop", output=out)
    rows = read_rows(out)
    assert report.transformation == {"zip": 0}
    assert 0 < report.suppressed_rows < 300
    assert len(rows) == 300 - report.suppressed_rows
    assert check_k(rows, ["zip"], 50, 0.0)["ok"]


def test_l_diversity_release(people, tmp_path):
    out = str(tmp_path / "l.parquet")
    sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=3, l=3, sensitive_column="disease", max_suppression=0.05, output=out)
    rows = read_rows(out)
    assert check_k(rows, ["zip", "age"], 3, 0.05)["ok"]
    assert check_l_diversity(rows, ["zip", "age"], "disease", 3)


def test_in_place_replaces_table_and_records_release(people):
    before = table_rows(people["db"], "people")
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--keep-column", "id", "--input", people["db"], "--table", "people", "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "5", "--in-place", "--json", "-q"])
    assert result.exit_code == 0, result.output
    after = table_rows(people["db"], "people")
    assert len(after) == len(before) and sorted(r["id"] for r in after) == sorted(r["id"] for r in before)
    assert check_k(after, ["zip", "age"], 5, 0.0)["ok"]
    con = duckdb.connect(people["db"])
    assert con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] == 1
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"people", "sqlanon_releases"}
    listed = runner.invoke(sqlanon.cli.app.app, ["releases", "--database", people["db"], "--json"])
    assert listed.exit_code == 0 and json.loads(listed.stdout)[0]["target"] == "table people"


def test_in_place_failure_leaves_original(people):
    before = table_rows(people["db"], "people")
    with pytest.raises(SqlanonError, match="simulated failure"):
        sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["db"], table="people", qi=people["qi"], k=5, in_place=True, _fail_after_write=True)
    assert table_rows(people["db"], "people") == before
    con = duckdb.connect(people["db"])
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"people"}  # no half-written table, no registry entry


def test_in_place_crash_mid_transaction_leaves_original(people):
    """The process dies inside the transaction (after the new table and registry row were
    written, before COMMIT): on reopening, DuckDB has the original table and nothing else."""
    before = table_rows(people["db"], "people")
    env = dict(os.environ, SQLANON_TEST_CRASH="in-transaction")
    proc = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", "--keep-others", "--keep-column", "id", "--input", people["db"], "--table", "people", "--qi", "zip=mask", "--k", "5", "--in-place", "-q"], env=env, capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    assert table_rows(people["db"], "people") == before
    con = duckdb.connect(people["db"])
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"people"}


def test_file_failure_leaves_nothing(people, tmp_path):
    out = str(tmp_path / "never.parquet")
    with pytest.raises(SqlanonError):
        sqlanon.run.api.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=5, output=out, _fail_after_write=True)
    assert sorted(os.listdir(tmp_path)) == sorted([os.path.basename(people["csv"]), os.path.basename(people["db"])])


def test_output_table_from_file_input(people, tmp_path):
    db = str(tmp_path / "target.duckdb")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=4, output_table="people_k4", database=db)
    assert report.release_id == 1
    assert check_k(table_rows(db, "people_k4"), ["zip", "age"], 4, 0.0)["ok"]


def test_drop_columns(people, tmp_path):
    out = str(tmp_path / "no_id.parquet")
    sqlanon.anonymize(keep_others=True, input=people["csv"], qi=people["qi"], k=4, output=out, drop_columns=["id"])
    assert list(read_rows(out)[0]) == ["zip", "age", "disease", "buys"]


def test_check_command(people, tmp_path):
    out = str(tmp_path / "c.parquet")
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi={"zip": "mask", "age": "flat"}, k=5, max_suppression=0.1, output=out, sensitive_column="disease", l=2)
    result = runner.invoke(sqlanon.cli.app.app, ["check", "--input", out, "--qi", "zip", "--qi", "age", "--k", "5", "--max-suppression", "0.1", "--sensitive-column", "disease", "--l", "2", "--class-column", "buys", "--json"])
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout)
    assert measured["k"] >= 5 and measured["k_anonymous"] is True
    assert measured["suppressed_rows"] == report.suppressed_rows
    assert measured["l_distinct"] >= 2
    hist = measured["class_size_histogram"]
    assert sum(size * count for size, count in hist) == 300  # every row in exactly one class
    assert sum(count for _, count in hist) == measured["classes"] + (1 if measured["suppressed_rows"] else 0)
    assert 0.0 <= measured["metrics"]["cm"] <= 1.0
    # the raw input is not 5-anonymous: exit 3
    raw = runner.invoke(sqlanon.cli.app.app, ["check", "--input", people["csv"], "--qi", "zip", "--qi", "age", "--k", "5"])
    assert raw.exit_code == 3


def test_sql_command_prints_portable_sql(people):
    args = ["sql", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "5", "--max-suppression", "0.05"]
    duck = runner.invoke(sqlanon.cli.app.app, args)
    assert duck.exit_code == 0, duck.output
    assert "-- base frequency set" in duck.stdout and "-- release" in duck.stdout and "READ_CSV" in duck.stdout.upper()
    for dialect in ("spark", "postgres"):
        other = runner.invoke(sqlanon.cli.app.app, args + ["--dialect", dialect])
        assert other.exit_code == 0, other.output
        text = other.stdout.upper()
        assert "LIST_EXTRACT" not in text and "READ_CSV" not in text and "CASE" in text
    bad = runner.invoke(sqlanon.cli.app.app, args + ["--dialect", "klingon"])
    assert bad.exit_code == 2


def test_sql_command_honours_drop_column_weights_and_level_bounds(people):
    """`sqlanon sql` takes anonymize's --drop-column, --weights and --min/--max-level: the script is
    the one the API renders for the same policy (so the bounded node is searched), and a dropped
    column is not in the release."""
    base = ["sql", "--keep-others", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--k", "5", "--max-suppression", "0.05"]
    plain = runner.invoke(sqlanon.cli.app.app, base)
    assert plain.exit_code == 0, plain.output
    flags = ["--drop-column", "id", "--weights", "zip=2,age=1", "--min-level", "age=2", "--max-level", "zip=3"]
    got = runner.invoke(sqlanon.cli.app.app, base + flags)
    assert got.exit_code == 0, got.output
    policy = dict(keep_others=True, input=people["csv"], qi=people["qi"], k=5, max_suppression=0.05, drop_columns=["id"], weights={"zip": 2, "age": 1}, min_level={"age": 2}, max_level={"zip": 3})
    expected = "".join(f"-- {title}\n{text};\n\n" for title, text in sqlanon.run.api.plan_sql(policy))
    assert got.stdout == expected
    assert got.stdout != plain.stdout
    release = got.stdout.split("-- release")[-1]
    assert '"id"' not in release and '"id"' in plain.stdout.split("-- release")[-1]
    bad = runner.invoke(sqlanon.cli.app.app, base + ["--min-level", "agee=1"])
    assert bad.exit_code == 2 and "agee" in bad.output


def test_html_report(people, tmp_path):
    html = tmp_path / "reports" / "r.html"  # its folder is created
    sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=4, report=str(html))
    text = html.read_text()
    assert "sqlanon release report" in text and "transformation" in text.lower()
    assert os.listdir(tmp_path / "reports") == ["r.html"]


def test_version_flag():
    result = runner.invoke(sqlanon.cli.app.app, ["--version"])
    assert result.exit_code == 0 and result.stdout.startswith("sqlanon ")


def test_engine_keeps_stdout_clean_and_memory_limited():
    """DuckDB draws a progress bar on stdout for long queries; it must be off so --json output
    stays one JSON object. The memory limit given is the one in force."""
    from sqlanon.engine import connect

    engine = connect(memory_limit="1GB")
    bar, limit = engine.fetch_one("SELECT current_setting('enable_progress_bar'), current_setting('memory_limit')")
    engine.close()
    assert bar is False
    assert limit.replace(" ", "").upper().startswith(("953.6MIB", "1.0GB", "1GB", "1000.0MB", "953MIB"))


def test_check_transformation_remeasures_a_plan(people, tmp_path):
    """A plan's transformation (levels, or a flexible cut with intervals) measured on the original
    by `check --transformation` gives the numbers the search reported."""
    qi = {"zip": "mask", "age": "bands:5,10,20"}
    report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=qi, k=8, max_suppression=0.1, metric="lm")
    path = tmp_path / "report.json"
    path.write_text(report.to_json())
    args = ["check", "--input", people["csv"], "--qi", "zip=mask", "--qi", "age=bands:5,10,20", "--transformation", str(path), "--k", "8", "--max-suppression", "0.1", "--json"]
    result = runner.invoke(sqlanon.cli.app.app, args)
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout)
    assert measured["suppressed_rows"] == report.suppressed_rows and measured["within_budget"]
    assert measured["min_class_size"] >= 8
    assert measured["metrics"]["lm"] == pytest.approx(report.metric.value, abs=1e-12)
    # a budget the plan does not fit: exit 3
    tight = runner.invoke(sqlanon.cli.app.app, args[:-5] + ["--k", "50", "--max-suppression", "0.0", "--json"])
    assert tight.exit_code == 3

    flexible = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi={"zip": "mask"}, k=8, max_suppression=0.1, metric="cm", class_column="buys", search="genetic",
                                 search_options={"numeric": ["age"], "iterations": 150, "population": 16, "seed": 3})
    measured = sqlanon.run.api.check_plan(people["csv"], {"zip": "mask", "age": "numeric"}, flexible, k=8, max_suppression=0.1, class_column="buys", numeric=["age"])
    assert measured["suppressed_rows"] == flexible.suppressed_rows
    assert measured["metrics"]["cm"] == pytest.approx(flexible.extra['cm'], abs=1e-12)
    assert measured["metrics"]["lm"] == pytest.approx(flexible.extra['lm'], abs=1e-9)


def test_parquet_folder_and_glob_inputs(people, tmp_path):
    """A folder of Parquet files and a glob are one source (read by the engine, never by pandas)."""
    folder = tmp_path / "parts"
    folder.mkdir()
    con = duckdb.connect()
    for part in range(3):
        con.execute(f"COPY (SELECT * FROM read_csv('{people['csv']}', all_varchar=true) WHERE CAST(id AS INTEGER) % 3 = {part}) TO '{folder}/part{part}.parquet' (FORMAT PARQUET)")
    con.close()
    for source in (str(folder), str(folder / "part*.parquet")):
        out = str(tmp_path / f"out_{len(source)}.parquet")
        report = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=source, qi=people["qi"], k=5, output=out)
        assert report.rows == 300
        rows = read_rows(out)
        assert len(rows) == 300 and check_k(rows, ["zip", "age"], 5, 0.0)["ok"]
    missing = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--keep-others", "--input", str(tmp_path / "nothing*.parquet"), "--qi", "zip=mask", "--k", "2"])
    assert missing.exit_code == 2 and "input file not found" in missing.stderr


@pytest.mark.parametrize("columns", [["zip", "age"], ["age", "zip", "disease"]])
def test_input_hash_over_groups_is_the_full_scan_hash(people, tmp_path, monkeypatch, columns):
    """When every input column is a text QI, the input hash is taken over the base set's groups
    (a group of ``cnt`` equal rows XORs to its hash when ``cnt`` is odd): it equals the per-row
    hash of a full scan, in the input's column order. A non-QI column keeps the per-row hash."""
    from sqlanon.release import write as release
    from sqlanon.engine import connect
    from sqlanon.engine.source import Source
    from sqlanon.stats import Statistics

    path = str(tmp_path / "text.parquet")
    con = duckdb.connect()
    con.execute("COPY (SELECT " + ", ".join(columns) + " FROM read_csv(?, all_varchar=true)) TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)", [people["csv"]])
    con.close()
    engine = connect()
    expected = release.input_hash(engine, Source.open(path))
    engine.close()
    grouped = []
    group_hash = Statistics._group_hash
    monkeypatch.setattr(Statistics, "_group_hash", lambda self, *args: grouped.append(1) or group_hash(self, *args))
    qi = {c: people["qi"][c] for c in ("zip", "age")}
    sqlanon.anonymize(keep_others=True, input=path, qi=qi, k=5, output=str(tmp_path / "g.parquet"))
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"))
    recorded = reg.execute("SELECT input_hash FROM sqlanon_releases").fetchone()[0]
    reg.close()
    assert recorded == expected and recorded.startswith("300:")
    assert bool(grouped) == (len(columns) == 2)


def test_input_hash_comes_from_the_base_scan(people, tmp_path, monkeypatch):
    """The registry's input hash equals an independent full-scan hash of the input, yet the release
    does not scan the source for it (the base frequency set carries per-group XORs)."""
    from sqlanon.release import write as release
    from sqlanon.engine import connect
    from sqlanon.engine.source import Source

    engine = connect()
    expected = release.input_hash(engine, Source.open(people["csv"]))
    engine.close()

    def no_rescan(*args, **kwargs):
        raise AssertionError("the release scanned the source again for its input hash")

    monkeypatch.setattr(release, "input_hash", no_rescan)
    out = str(tmp_path / "h.parquet")
    sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=people["csv"], qi=people["qi"], k=5, max_suppression=0.05, output=out)
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"))
    recorded = reg.execute("SELECT input_hash FROM sqlanon_releases").fetchone()[0]
    reg.close()
    assert recorded == expected and recorded.startswith("300:")


def _all_qi_table(tmp_path, seed: int) -> str:
    """A CSV whose columns are all text QIs but ``id`` (a row key, dropped by the runs)."""
    import random

    rnd = random.Random(seed)
    lines = ["id,zip,age,buys"]
    for i in range(rnd.randint(150, 400)):
        lines.append(f"{i},{rnd.choice(['12345', '12346', '12355', '12356', '13001', '13002', '13011'])},{rnd.randint(18, 70)},{rnd.choice(['yes', 'no', 'maybe'])}")
    for _ in range(rnd.randint(3, 6)):  # rare zips: suppressed rather than every zip masked
        lines.append(f"{len(lines)},{rnd.randint(90000, 99999)},{rnd.randint(18, 70)},{rnd.choice(['yes', 'no'])}")
    data = tmp_path / f"all_qi_{seed}.csv"
    data.write_text("\n".join(lines) + "\n")
    return str(data)


@pytest.mark.parametrize("seed", range(3))
def test_a_release_of_text_qis_rebuilt_from_the_base_set_has_the_source_releases_rows(tmp_path, monkeypatch, seed):
    """Every released column a text QI (``id`` dropped): the release is rebuilt from the base
    frequency set (``release.write.from_base_set``), and it holds the same rows, as many times,
    as the release read from the source (``FROM_BASE`` off), for Parquet, CSV and table targets,
    masked or dropped suppression; k-anonymity holds on it."""
    from collections import Counter

    from sqlanon.release import write

    data = _all_qi_table(tmp_path, seed)
    qi = {"zip": "mask", "age": "bands:5,10,20", "buys": "flat"}
    taken: list[bool] = []
    decide = write.from_base_set
    monkeypatch.setattr(write, "from_base_set", lambda *a: taken.append(decide(*a)) or taken[-1])
    for target in ("parquet", "csv", "table"):
        for suppression in ("mask", "drop"):
            releases, reports = {}, {}
            for from_base in (True, False):
                monkeypatch.setattr(write, "FROM_BASE", from_base)
                name = f"{target}_{suppression}_{from_base}"
                where = {"output": str(tmp_path / f"{name}.{target}")} if target != "table" else {"output_table": name, "database": str(tmp_path / "out.duckdb")}
                taken.clear()
                report = sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=6, max_suppression=0.08, suppression=suppression, drop_columns=["id"], **where)
                assert taken == ([True] if from_base else []), (target, suppression, from_base, taken)
                rows = table_rows(where["database"], name) if target == "table" else read_rows(where["output"])
                assert [list(r) for r in rows[:1]] == [["zip", "age", "buys"]]
                releases[from_base] = Counter(tuple(str(v) for v in r.values()) for r in rows)
                reports[from_base] = report
                assert check_k(rows, ["zip", "age", "buys"], 6, 0.08 if suppression == "mask" else 0.0)["ok"]
            assert reports[True].suppressed_rows == reports[False].suppressed_rows > 0, (target, suppression)
            assert releases[True] == releases[False], (target, suppression)
            kept = sum(releases[True].values())
            assert kept == (reports[True].rows if suppression == "mask" else reports[True].rows - reports[True].suppressed_rows)


def test_a_release_with_a_column_that_is_no_text_qi_is_read_from_the_source(tmp_path, monkeypatch):
    """A released column that is not a QI (``id`` kept), or a QI that is no text column (an
    integer Parquet column), keeps the release on the source: its values and types as they are."""
    from sqlanon.release import write

    taken: list[bool] = []
    decide = write.from_base_set
    monkeypatch.setattr(write, "from_base_set", lambda *a: taken.append(decide(*a)) or taken[-1])
    data = _all_qi_table(tmp_path, 5)
    qi = {"zip": "mask", "age": "bands:5,10,20", "buys": "flat"}
    sqlanon.anonymize(keep_others=True, input=data, qi=qi, k=6, max_suppression=0.08, keep_columns=["id"], output=str(tmp_path / "kept.parquet"))
    assert taken == [False]
    typed = str(tmp_path / "typed.parquet")
    con = duckdb.connect()
    con.execute(f"COPY (SELECT zip, CAST(age AS INTEGER) AS age, buys FROM read_csv('{data}', all_varchar=true)) TO '{typed}' (FORMAT PARQUET)")
    con.close()
    taken.clear()
    out = str(tmp_path / "typed_out.parquet")
    sqlanon.anonymize(keep_others=True, input=typed, qi={"zip": "mask", "age": "flat", "buys": "flat"}, k=2, max_suppression=0.5, output=out)
    assert taken == [False]
    con = duckdb.connect()
    kinds = dict((r[0], r[1]) for r in con.execute(f"DESCRIBE SELECT * FROM '{out}'").fetchall())
    con.close()
    assert list(kinds) == ["zip", "age", "buys"]


def test_an_in_place_release_of_text_qis_rebuilt_from_the_base_set(tmp_path, monkeypatch):
    """In place, the table of text QIs is replaced by the release rebuilt from its base set: the
    rows of the release read from the source, in one transaction with its registry entry."""
    from collections import Counter

    from sqlanon.release import write

    data = _all_qi_table(tmp_path, 11)
    db = str(tmp_path / "people.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE people AS SELECT zip, age, buys FROM read_csv(?, all_varchar=true)", [data])
    con.close()
    qi = {"zip": "mask", "age": "bands:5,10,20", "buys": "flat"}
    monkeypatch.setattr(write, "FROM_BASE", False)
    read = sqlanon.anonymize(keep_others=True, input=db, table="people", qi=qi, k=6, max_suppression=0.08, output_table="from_source")
    taken: list[bool] = []
    decide = write.from_base_set
    monkeypatch.setattr(write, "from_base_set", lambda *a: taken.append(decide(*a)) or taken[-1])
    monkeypatch.setattr(write, "FROM_BASE", True)
    rebuilt = sqlanon.anonymize(keep_others=True, input=db, table="people", qi=qi, k=6, max_suppression=0.08, in_place=True)
    assert taken == [True] and rebuilt.suppressed_rows == read.suppressed_rows > 0
    rows = table_rows(db, "people")
    assert Counter(tuple(r.values()) for r in rows) == Counter(tuple(r.values()) for r in table_rows(db, "from_source"))
    con = duckdb.connect(db)
    assert con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] == 2
    con.close()
