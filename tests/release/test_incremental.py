"""Incremental releases (``--like-release N``): batches released with release N's transformation.

Every batch is re-checked two ways, without sqlanon code: an **oracle** replays the lineage in plain
Python (generalize each batch row through the hierarchy files, count classes with everything the
lineage released, release, suppress or hold) and must equal what was written row for row; and the
**union of every released output of the lineage**, grouped by the QIs, must be k-anonymous.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from datetime import date, timedelta
from decimal import Decimal
import paths

import duckdb
import jsonschema
import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.errors import ConfigError, UnsatisfiableError
from sqlanon.release import lineage

runner = CliRunner()
K = 4
STAR = "*"
COLUMNS = ["zip", "age", "sex", "visit", "income", "note"]
QIS = ["zip", "age", "sex"]
ZIPS = ["00501", "00502", "00511", "00512", "02101", "02102", "02111"]  # leading zeros
SCHEMA = "zip VARCHAR, age INTEGER, sex VARCHAR, visit DATE, income DECIMAL(10,2), note VARCHAR"


def write_hierarchies(folder) -> dict[str, str]:
    """ARX-style CSVs: zip -> 4 digits -> 3 digits -> *, age -> decade -> *; sex is flat (built from the data)."""
    zips = folder / "zip.csv"
    zips.write_text("".join(f"{z};{z[:4]}*;{z[:3]}**;*\n" for z in ZIPS))
    ages = folder / "age.csv"
    ages.write_text("".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(0, 100)))
    return {"zip": str(zips), "age": str(ages), "sex": "flat"}


def hierarchy_maps(specs: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    out = {}
    for q, spec in specs.items():
        if spec == "flat":
            continue
        with open(spec, encoding="utf-8") as fh:
            out[q] = {row[0]: row for row in (line.rstrip("\n").split(";") for line in fh) if row[0]}
    return out


def make_rows(rnd: random.Random, n: int, day: int) -> list[tuple]:
    """Skewed zips and ages, NULLs in the free-text column, dates and decimals."""
    rows = []
    for _ in range(n):
        z = rnd.choices(ZIPS, weights=[30, 20, 10, 5, 3, 2, 1])[0]
        age = min(99, max(0, int(rnd.gauss(40, 14))))
        sex = rnd.choices(["F", "M"], weights=[3, 2])[0]
        visit = date(2026, 1, 1) + timedelta(days=day)
        income = Decimal(rnd.choice(["1200.50", "3400.00", "99.99"]))
        note = rnd.choice([None, "a", "b"])
        rows.append((z, age, sex, visit, income, note))
    return rows


def create_table(con, name: str, rows: list[tuple]) -> None:
    con.execute(f"CREATE TABLE {name} ({SCHEMA})")
    if rows:
        con.executemany(f"INSERT INTO {name} VALUES (?, ?, ?, ?, ?, ?)", rows)


@pytest.fixture
def warehouse(tmp_path):
    """A warehouse .duckdb with a first full table and three daily batches (one with a new sex value,
    a zip the hierarchy does not know, and a NULL age)."""
    rnd = random.Random(11)
    db = str(tmp_path / "w.duckdb")
    con = duckdb.connect(db)
    create_table(con, "day0", make_rows(rnd, 400, 0))
    batches = {}
    for day in (1, 2, 3):
        rows = make_rows(rnd, 25, day)
        if day == 2:
            rows += [("00501", 33, "X", date(2026, 1, 3), Decimal("1.00"), None)] * 6  # a sex value never seen
            rows += [("99999", 41, "F", date(2026, 1, 3), Decimal("1.00"), "z")]  # not in the zip hierarchy
            rows += [("00501", None, "F", date(2026, 1, 3), Decimal("1.00"), "n")]  # NULL QI
        create_table(con, f"day{day}", rows)
        batches[day] = rows
    con.close()
    specs = write_hierarchies(tmp_path)
    return {"db": db, "specs": specs, "batches": batches, "tmp": tmp_path}


def root_release(wh, **extra) -> dict:
    options = {"input": wh["db"], "table": "day0", "qi": dict(wh["specs"]), "k": K, "max_suppression": 0.05, "output_table": "rel0", "keep_columns": ["visit", "income", "note"], "max_level": {"sex": 0}}
    options.update(extra)
    return sqlanon.anonymize(**options)


# -- the oracle ------------------------------------------------------------------------------------
class Oracle:
    """The lineage replayed in plain Python."""

    def __init__(self, transformation: dict, specs: dict, root_rows: list[dict], k: int, check: str = "cumulative"):
        self.levels = transformation
        self.maps = hierarchy_maps(specs)
        self.k, self.check = k, check
        self.prior = Counter(tuple(str(r[q]) for q in QIS) for r in root_rows if not all(str(r[q]) == STAR for q in QIS))
        self.seen = {q: {str(r[q]) for r in root_rows if str(r[q]) != STAR} for q in QIS}
        self.held: list[tuple] = []

    def general(self, q: str, value):
        if value is None:
            return None
        level = self.levels[q]
        if q not in self.maps:  # flat, built from the data: level 0 releases the value itself
            v = str(value)
            if level == 0:
                return v if v in self.seen[q] else None
            return STAR
        row = self.maps[q].get(str(value))
        return None if row is None else row[level]

    def batch(self, rows: list[tuple], strategy: str) -> tuple[Counter, Counter, int]:
        """(released rows, held rows, unseen rows) as multisets of (QIs..., visit, income, note) text."""
        cands, unseen = [], 0
        for r in rows:
            g = tuple(self.general(q, r[COLUMNS.index(q)]) for q in QIS)
            rest = tuple(str(v) if v is not None else None for v in r[3:])
            if None in g:
                unseen += 1
                cands.append((None, rest))
            else:
                cands.append((g, rest))
        if strategy == "hold":
            cands += self.held
        counts = Counter(g for g, _ in cands if g is not None)
        ok = {g for g, n in counts.items() if (n + (self.prior[g] if self.check == "cumulative" else 0)) >= self.k}
        released = Counter(g + rest for g, rest in cands if g in ok)
        masked = Counter((STAR,) * len(QIS) + rest for g, rest in cands if g not in ok)
        for g in ok:
            self.prior[g] += counts[g]
        if strategy == "hold":
            self.held = [(g, rest) for g, rest in cands if g is not None and g not in ok]
        return released, masked, unseen


def table_rows(con, table: str) -> Counter:
    rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in COLUMNS[:3] + COLUMNS[3:])} FROM "{table}"').fetchall()
    return Counter(tuple(str(v) if v is not None else None for v in r) for r in rows)


def lineage_k(outputs: list[Counter]) -> int | None:
    """The independent re-check: the union of every released output, grouped by the QIs."""
    classes: Counter = Counter()
    for out in outputs:
        for row, n in out.items():
            if not all(v == STAR for v in row[:3]):
                classes[row[:3]] += n
    return min(classes.values()) if classes else None


def root_rows(db: str, table: str = "rel0") -> list[dict]:
    con = duckdb.connect(db, read_only=True)
    try:
        cur = con.execute(f'SELECT * FROM "{table}"')
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


# -- each strategy, the oracle and the union ---------------------------------------------------------
@pytest.mark.parametrize("strategy,suppression,check", [("suppress", "mask", "cumulative"), ("suppress", "drop", "cumulative"), ("hold", "mask", "cumulative"), ("suppress", "mask", "batch"), ("hold", "drop", "batch")])
def test_batches_match_the_oracle_and_the_lineage_stays_k_anonymous(warehouse, strategy, suppression, check):
    root = root_release(warehouse)
    oracle = Oracle(root.transformation, warehouse["specs"], root_rows(warehouse["db"]), K, check)
    outputs = []
    con = duckdb.connect(warehouse["db"], read_only=True)
    outputs.append(Counter(tuple(str(r[c]) if r[c] is not None else None for c in COLUMNS) for r in root_rows(warehouse["db"])))
    con.close()
    parent = root.release_id
    for day in (1, 2, 3):
        result = sqlanon.anonymize(input=warehouse["db"], table=f"day{day}", like_release=parent, output_table=f"rel{day}", on_break=strategy, suppression=suppression, lineage_check=check)
        released, masked, unseen = oracle.batch(warehouse["batches"][day], strategy)
        con = duckdb.connect(warehouse["db"], read_only=True)
        got = table_rows(con, f"rel{day}")
        expected = released + (masked if strategy == "suppress" and suppression == "mask" else Counter())
        assert got == expected, f"day {day}: the release differs from the oracle's"
        inc = result.extra["incremental"]
        assert inc["released_rows"] == sum(released.values()) and inc["unseen_rows"] == unseen
        if strategy == "hold":
            held = table_rows(con, lineage.held_name(root.release_id))
            assert held == Counter(g + rest for g, rest in oracle.held), f"day {day}: the holding table differs"
            assert inc["held_rows"] == sum(masked.values()) and inc["suppressed_rows"] == 0
        else:
            assert inc["suppressed_rows"] == sum(masked.values())
        con.close()
        outputs.append(got)
        smallest = lineage_k(outputs)
        assert smallest is not None and smallest >= K, f"day {day}: the lineage's union has a class of {smallest} < k"
        assert inc["lineage_meets_k"] and inc["lineage_min_class"] == smallest
        if check == "batch":
            assert min(Counter(r[:3] for r in got.elements() if r[0] != STAR).values(), default=K) >= K
        parent = result.release_id  # like the latest batch: the same lineage


def test_unseen_values_are_never_released_raw(warehouse):
    root = root_release(warehouse)
    assert root.transformation["sex"] == 0  # sex released as itself: a new value is unseen
    sqlanon.anonymize(input=warehouse["db"], table="day1", like_release=root.release_id, output_table="rel1")
    # held: not stored (they wait for a full run), not released
    held = sqlanon.anonymize(input=warehouse["db"], table="day2", like_release=root.release_id, output_table="rel2h", on_break="hold", dry_run=True)
    assert held.extra["incremental"]["unseen_rows"] == 8 and held.extra["incremental"]["held_rows"] >= 8 and held.release_id is None
    result = sqlanon.anonymize(input=warehouse["db"], table="day2", like_release=root.release_id, output_table="rel2")
    assert result.extra["incremental"]["unseen_rows"] == 8  # six X, one unknown zip, one NULL age
    con = duckdb.connect(warehouse["db"], read_only=True)
    values = {r for (r,) in con.execute('SELECT DISTINCT "sex" FROM rel2').fetchall()}
    zips = {r for (r,) in con.execute('SELECT DISTINCT "zip" FROM rel2').fetchall()}
    con.close()
    assert "X" not in values and not any("999" in z for z in zips)


def test_hold_releases_held_rows_once_their_class_reaches_k(warehouse):
    root = root_release(warehouse)
    rid = root.release_id
    con = duckdb.connect(warehouse["db"])
    # a class the root never released: 2 rows now, 2 more in the next batch
    rows = [("02111", 91, "F", date(2026, 2, 1), Decimal("5.00"), "h")] * 2
    create_table(con, "late1", rows)
    create_table(con, "late2", [("02111", 95, "F", date(2026, 2, 2), Decimal("5.00"), "i")] * 2)
    con.close()
    first = sqlanon.anonymize(input=warehouse["db"], table="late1", like_release=rid, output_table="late_rel1", on_break="hold", lineage_check="batch")
    assert first.extra["incremental"]["released_rows"] == 0 and first.extra["incremental"]["held_rows"] == 2
    second = sqlanon.anonymize(input=warehouse["db"], table="late2", like_release=first.release_id, output_table="late_rel2", on_break="hold", lineage_check="batch")
    assert second.extra["incremental"]["released_from_held"] == 2 and second.extra["incremental"]["released_rows"] == 4
    con = duckdb.connect(warehouse["db"], read_only=True)
    assert con.execute('SELECT COUNT(*) FROM "late_rel2"').fetchone()[0] == 4
    assert con.execute(f'SELECT COUNT(*) FROM "{lineage.held_name(rid)}"').fetchone()[0] == 0
    con.close()


def test_refuse_writes_nothing(warehouse):
    root = root_release(warehouse)
    with pytest.raises(UnsatisfiableError, match="breaks k=4"):
        sqlanon.anonymize(input=warehouse["db"], table="day2", like_release=root.release_id, output_table="rel2", on_break="refuse")
    con = duckdb.connect(warehouse["db"], read_only=True)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "rel2" not in tables and lineage.ledger_name(root.release_id) not in tables
    assert con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] == 1
    con.close()


def test_a_failed_write_leaves_the_lineage_as_it_was(warehouse, monkeypatch):
    root = root_release(warehouse)
    sqlanon.anonymize(input=warehouse["db"], table="day1", like_release=root.release_id, output_table="rel1")

    def broken(*args, **kwargs):
        raise ConfigError("simulated failure in the ledger")

    monkeypatch.setattr(lineage, "add_to_ledger", broken)
    with pytest.raises(ConfigError, match="simulated"):
        sqlanon.anonymize(input=warehouse["db"], table="day2", like_release=root.release_id, output_table="rel2", in_place=False)
    con = duckdb.connect(warehouse["db"], read_only=True)
    tables = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "rel2" not in tables
    assert con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] == 2
    assert con.execute(f'SELECT COUNT(DISTINCT release_id) FROM "{lineage.ledger_name(root.release_id)}"').fetchone()[0] == 2
    con.close()


# -- the registry's lineage ----------------------------------------------------------------------------
def test_the_registry_records_the_lineage_and_releases_shows_it(warehouse):
    root = root_release(warehouse)
    b1 = sqlanon.anonymize(input=warehouse["db"], table="day1", like_release=root.release_id, output_table="rel1")
    b2 = sqlanon.anonymize(input=warehouse["db"], table="day2", like_release=b1.release_id, output_table="rel2", on_break="hold")
    result = runner.invoke(sqlanon.cli.app.app, ["releases", "--database", warehouse["db"], "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r for r in json.loads(result.output)}
    assert rows[root.release_id]["parent_id"] is None
    assert rows[b1.release_id]["parent_id"] == root.release_id and rows[b1.release_id]["lineage_root"] == root.release_id
    assert rows[b2.release_id]["parent_id"] == b1.release_id and rows[b2.release_id]["lineage_root"] == root.release_id
    assert rows[b2.release_id]["batch_fingerprint"] == b2.extra["incremental"]["batch_fingerprint"] != rows[b1.release_id]["batch_fingerprint"]
    assert rows[b2.release_id]["lineage"]["strategy"] == "hold"
    assert rows[b1.release_id]["transformation"] == root.transformation
    with open(paths.ROOT / "schemas" / "report.schema.json", encoding="utf-8") as fh:
        jsonschema.validate(b2.to_dict(), json.load(fh))  # the batch's --json report is a report
    text = runner.invoke(sqlanon.cli.app.app, ["releases", "--database", warehouse["db"]])
    assert f"like={b1.release_id} lineage={root.release_id}" in text.output


def test_cli_like_release_in_place_and_to_a_file(warehouse):
    root = root_release(warehouse)
    db = warehouse["db"]
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--input", db, "--table", "day1", "--like-release", str(root.release_id), "--in-place", "-q"])
    assert result.exit_code == 0, result.output
    assert "like release   1" in result.output and "meets k" in result.output
    con = duckdb.connect(db, read_only=True)
    in_place = table_rows(con, "day1")
    con.close()
    assert all(r[0] == STAR or r[0].endswith("*") or r[0] in ZIPS for r in in_place)  # generalized
    # a file: the root released to Parquet, the batch beside it (the registry beside them both)
    out = warehouse["tmp"] / "out"
    out.mkdir()
    file_root = sqlanon.anonymize(input=db, table="day0", qi=dict(warehouse["specs"]), k=K, max_suppression=0.05, output=str(out / "r0.parquet"), keep_columns=["visit", "income", "note"], max_level={"sex": 0})
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--input", db, "--table", "day2", "--like-release", str(file_root.release_id), "--output", str(out / "r2.parquet"), "--json", "-q"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    con = duckdb.connect()
    union = Counter()
    for name in ("r0.parquet", "r2.parquet"):
        for row in con.execute(f"SELECT zip, CAST(age AS VARCHAR), sex FROM read_parquet('{out / name}')").fetchall():
            if row != (STAR, STAR, STAR):
                union[row] += 1
    con.close()
    assert min(union.values()) >= K and report["incremental"]["lineage_min_class"] == min(union.values())
    assert os.path.exists(out / "sqlanon_releases.duckdb")


# -- bad inputs: one line each ---------------------------------------------------------------------------
def _fails(args) -> str:
    result = runner.invoke(sqlanon.cli.app.app, args)
    assert result.exit_code != 0
    lines = [line for line in (result.stderr if hasattr(result, "stderr") else result.output).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_bad_inputs_are_one_line_errors(warehouse):
    root = root_release(warehouse)
    db, rid = warehouse["db"], str(root.release_id)
    con = duckdb.connect(db)
    con.execute("CREATE TABLE other (zip VARCHAR, age INTEGER, colour VARCHAR)")
    con.execute("INSERT INTO other VALUES ('00501', 30, 'red')")
    con.execute("CREATE TABLE fewer AS SELECT zip, age, sex, visit, income FROM day1")
    con.close()
    assert "release 99 not found" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", "99", "--output-table", "x"])
    assert "other columns" in _fails(["anonymize", "--input", db, "--table", "fewer", "--like-release", rid, "--output-table", "x"])
    assert "other columns" in _fails(["anonymize", "--input", db, "--table", "other", "--like-release", rid, "--output-table", "x"])
    assert "own input" in _fails(["anonymize", "--input", db, "--table", "day0", "--like-release", rid, "--output-table", "x"])
    assert "is release 1's output" in _fails(["anonymize", "--input", db, "--table", "rel0", "--like-release", rid, "--output-table", "x"])
    assert "k cannot be given" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", rid, "--k", "3", "--output-table", "x"])
    assert "--on-break must be one of" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", rid, "--on-break", "maybe", "--output-table", "x"])
    assert "give --like-release" in _fails(["anonymize", "--input", db, "--table", "day1", "--qi", "sex=flat", "--k", "2", "--on-break", "hold", "--output-table", "x"])
    assert "holding table" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", rid, "--on-break", "hold", "--output", str(warehouse["tmp"] / "h.parquet"), "--registry", db])
    assert "give --output" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", rid])
    ok = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--input", db, "--table", "day1", "--like-release", rid, "--output-table", "rel1", "-q"])
    assert ok.exit_code == 0, ok.output
    assert "already released (release 2" in _fails(["anonymize", "--input", db, "--table", "day1", "--like-release", rid, "--output-table", "rel1b"])


def test_a_root_with_other_models_is_refused(warehouse):
    root = sqlanon.anonymize(input=warehouse["db"], table="day0", qi=dict(warehouse["specs"]), k=K, l=2, sensitive_column="income", max_suppression=0.2, output_table="rel_l", keep_columns=["visit", "income", "note"])
    with pytest.raises(ConfigError, match="incremental releases keep k-anonymity only"):
        sqlanon.anonymize(input=warehouse["db"], table="day1", like_release=root.release_id, output_table="x")


def test_csv_batches_released_to_files_like_a_csv_release(tmp_path):
    """A new file a day: the root released from a CSV to Parquet, the batches (CSV files) beside it."""
    rnd = random.Random(3)
    specs = write_hierarchies(tmp_path)

    def write_csv(path, rows):
        lines = [",".join(COLUMNS)] + [",".join("" if v is None else str(v) for v in r) for r in rows]
        path.write_text("\n".join(lines) + "\n")

    write_csv(tmp_path / "day0.csv", make_rows(rnd, 300, 0))
    write_csv(tmp_path / "day1.csv", make_rows(rnd, 40, 1))
    root = sqlanon.anonymize(input=str(tmp_path / "day0.csv"), qi=dict(specs), k=K, max_suppression=0.05, output=str(tmp_path / "r0.parquet"), keep_columns=["visit", "income", "note"], max_level={"sex": 0})
    batch = sqlanon.anonymize(input=str(tmp_path / "day1.csv"), like_release=root.release_id, output=str(tmp_path / "r1.csv"), suppression="drop")
    con = duckdb.connect()
    union: Counter = Counter()
    for reader in (f"read_parquet('{tmp_path / 'r0.parquet'}')", f"read_csv('{tmp_path / 'r1.csv'}', all_varchar=true)"):
        for *key, n in con.execute(f"SELECT CAST(zip AS VARCHAR), CAST(age AS VARCHAR), CAST(sex AS VARCHAR), COUNT(*) FROM {reader} GROUP BY ALL").fetchall():
            if any(v != STAR for v in key):
                union[tuple(key)] += n
    released = con.execute(f"SELECT COUNT(*), COUNT(*) FILTER (WHERE zip LIKE '0%') FROM read_csv('{tmp_path / 'r1.csv'}', all_varchar=true)").fetchone()
    con.close()
    assert min(union.values()) >= K and batch.extra["incremental"]["lineage_meets_k"]
    assert released[0] == batch.extra["incremental"]["released_rows"] == released[1]  # leading zeros kept
    with pytest.raises(ConfigError, match="already released"):
        sqlanon.anonymize(input=str(tmp_path / "day1.csv"), like_release=batch.release_id, output=str(tmp_path / "r1b.parquet"))


def test_a_batch_of_other_column_types_than_the_held_rows_is_refused(warehouse):
    root = root_release(warehouse)
    first = sqlanon.anonymize(input=warehouse["db"], table="day1", like_release=root.release_id, output_table="rel1", on_break="hold", lineage_check="batch")
    assert first.extra["incremental"]["held_rows"] > 0
    con = duckdb.connect(warehouse["db"])
    con.execute("CREATE TABLE day2_text AS SELECT zip, age, sex, CAST(visit AS VARCHAR) AS visit, income, note FROM day2")
    con.close()
    with pytest.raises(ConfigError, match="column 'visit' of the batch is VARCHAR"):
        sqlanon.anonymize(input=warehouse["db"], table="day2_text", like_release=first.release_id, output_table="rel2", on_break="hold")
