"""Shapes: what runs after the search (utility, risk, report, check) and while building
hierarchies stays linear in a column's distinct values, and values too long for a hierarchy built
from the data are refused before memory grows (issue 24). Costs are counted (list builds, label
scans, levels), never timed."""

import json
import math
import random

import duckdb
import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy import MAX_VALUE_LENGTH, builders
from sqlanon.hierarchy.io import write_csv_hierarchy
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.config.policy import Policy
from sqlanon.report.model import validate_report
from sqlanon.report.utility import _column_figures, _top, level_meaning, other_label

runner = CliRunner()


class CountingRows(list):
    """A hierarchy's rows that count how often they are walked (each walk is O(leaves))."""

    walks = 0

    def __iter__(self):
        CountingRows.walks += 1
        return super().__iter__()


def zip_table(path, distinct: int, rows: int) -> str:
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT lpad(CAST((i * 7919) % $d AS VARCHAR), 5, '0') AS zip, 18 + CAST(i % 50 AS INTEGER) AS age "
        "FROM range($n) t(i)) TO '" + str(path) + "' (FORMAT parquet)",
        {"d": distinct, "n": rows},
    )
    con.close()
    return str(path)


def zips_of(path) -> list[str]:
    return [r[0] for r in duckdb.sql(f"SELECT DISTINCT zip FROM '{path}'").fetchall()]


# -- the leaves are built once, not once per leaf --------------------------------------------------


@pytest.mark.parametrize("distinct", [300, 600])
def test_a_run_walks_the_leaves_a_constant_number_of_times(tmp_path, distinct):
    """The utility step read ``h.leaves[j]`` per leaf and ``leaves`` rebuilt the list each time:
    ``distinct`` walks of the rows (O(M^2)). Now the whole run walks them a few times, however many
    leaves there are."""
    data = zip_table(tmp_path / "z.parquet", distinct, 2 * distinct)
    h = builders.masking(zips_of(data), "zip")
    h.rows = CountingRows(h.rows)
    CountingRows.walks = 0
    r = sqlanon.anonymize(input=data, qi={"zip": h, "age": "bands:5,10,20"}, k=2, dry_run=True)
    assert r.utility["zip"]["distinct_before"] == distinct
    assert CountingRows.walks < 40, CountingRows.walks  # was > distinct


def test_leaves_are_cached_and_rebuilt_when_the_rows_change():
    h = Hierarchy("zip", [["1", "*"], ["2", "*"]])
    assert h.leaves is h.leaves and h.leaf_index == {"1": 0, "2": 1} and h.level_of("2") == 0
    h.rows = [["3", "x", "*"], ["4", "x", "*"]]
    assert h.leaves == ["3", "4"] and h.leaf_index == {"3": 0, "4": 1}
    assert h.labels(1) == ["x"] and h.level_of("x") == 1 and h.level_of("2") is None and h.label_code(1, "x") == 0


def test_check_reads_levels_once_not_once_per_value(tmp_path, monkeypatch):
    """``check`` with hierarchies read each released value's level by building a set of every
    level's labels, and its loss by ``labels.index``: O(values x leaves). Count the label reads."""
    data = zip_table(tmp_path / "z.parquet", 500, 1000)
    hier = tmp_path / "zip.csv"
    write_csv_hierarchy(builders.masking(zips_of(data), "zip"), str(hier))
    calls = {"labels": 0}
    original = Hierarchy.labels

    def counted(self, level):
        calls["labels"] += 1
        return original(self, level)

    monkeypatch.setattr(Hierarchy, "labels", counted)
    out = sqlanon.check(data, {"zip": str(hier)})
    assert out["metrics"]["lm"] == 0.0 and out["metrics"]["precision"] == 0.0
    assert calls["labels"] < 100, calls  # was thousands (per value and level)


def test_level_meaning_example_is_found_without_scanning_the_leaves(monkeypatch):
    rows = [[f"{i:05d}", f"g{i // 10}", "*"] for i in range(2000)]
    h = Hierarchy("code", rows)
    _ = h.leaf_index  # built once here (from the leaves)
    monkeypatch.setattr(Hierarchy, "leaves", property(lambda self: pytest.fail("leaves scanned per label")))
    assert level_meaning(h, 1) == "200 groups (e.g. 'g0')"


# -- the vectorized figures equal the loops they replace ------------------------------------------


def _top_oracle(pairs, total, limit):
    pairs = sorted((p for p in pairs if p[1]), key=lambda p: (-p[1], p[0]))
    top = [{"value": v, "rows": n, "share": n / total if total else 0.0} for v, n in pairs[:limit]]
    rest = sum(n for _, n in pairs[limit:])
    if rest:
        top.append({"value": other_label(len(pairs) - limit, rest), "rows": rest, "share": rest / total if total else 0.0, "other": True})
    return top


@pytest.mark.parametrize("seed", range(30))
def test_top_values_equal_a_full_sort(seed):
    rnd = random.Random(seed)
    m = rnd.choice([0, 1, 5, 10, 11, 40, 300])
    values = [f"v{rnd.randrange(10**6)}" for _ in range(m)]
    values = list(dict.fromkeys(values))
    counts = [rnd.choice([0, 0, 1, 1, 1, 2, 3, 7]) for _ in values]  # many ties and zeros
    limit = rnd.choice([1, 3, 10])
    extra = [("* (suppressed)", rnd.choice([0, 1, 2, 50]))]
    total = sum(counts) + extra[0][1]
    assert _top(values, counts, total, limit, extra) == _top_oracle(list(zip(values, counts)) + extra, total, limit)
    assert _top(values, counts, total, limit) == _top_oracle(list(zip(values, counts)), total, limit)


@pytest.mark.parametrize("seed", range(20))
def test_column_figures_equal_the_per_leaf_loops(seed):
    import numpy as np

    rnd = random.Random(seed)
    m = rnd.randint(1, 60)
    n_labels = rnd.randint(1, m)
    codes = [rnd.randrange(n_labels) for _ in range(m)]
    freq = [rnd.choice([0, 1, 2, 5]) for _ in range(m)]
    released = [rnd.randint(0, 9) for _ in range(n_labels)]
    n, suppressed = max(sum(freq), 1), rnd.randint(0, 3)
    under, gen_all = [0] * n_labels, [0] * n_labels
    for leaf, code in enumerate(codes):
        under[code] += 1
        gen_all[code] += freq[leaf]
    loss = [(u - 1) / (m - 1) if m > 1 else 0.0 for u in under]
    entropy = -sum(f * math.log2(f / gen_all[codes[j]]) for j, f in enumerate(freq) if f)
    got = _column_figures(np.array(freq), np.array(codes), n_labels, np.array(released), suppressed, n)
    assert got["lm"] == pytest.approx((sum(r * l for r, l in zip(released, loss)) + suppressed) / n)
    assert got["entropy"] == pytest.approx(entropy / n)
    assert got["distinct_before"] == sum(1 for f in freq if f) and got["distinct_after"] == sum(1 for r in released if r)


# -- values too long for a hierarchy built from the data -------------------------------------------


@pytest.fixture
def long_values(tmp_path):
    """5 rows over the bound (2 distinct values, 4,100 and 5,000 characters) and 3 short ones."""
    path = tmp_path / "long.parquet"
    con = duckdb.connect()
    con.execute(
        "COPY (SELECT * FROM (VALUES (repeat('a', 4100), 1), (repeat('a', 4100), 2), (repeat('b', 5000), 3), (repeat('b', 5000), 4), "
        "(repeat('b', 5000), 5), ('12345', 6), ('12346', 7), ('12345', 8)) t(zip, id)) TO '" + str(path) + "' (FORMAT parquet)"
    )
    con.close()
    return str(path)


@pytest.mark.parametrize("spec", ["mask", "flat", "dates", "numeric", "bands:5"])
def test_long_values_are_refused_by_every_builder(long_values, tmp_path, spec):
    with pytest.raises(HierarchyError) as err:
        sqlanon.anonymize(input=long_values, qi={"zip": spec}, k=2, output=str(tmp_path / "o.parquet"))
    kind = spec.split(":")[0]
    assert str(err.value).startswith(f"column 'zip': 5 row(s) hold values longer than {MAX_VALUE_LENGTH:,} characters (the longest 5,000), too long for a '{kind}' hierarchy")
    assert "\n" not in str(err.value) and not (tmp_path / "o.parquet").exists()


def test_max_value_length_from_api_policy_file_and_cli(long_values, tmp_path):
    r = sqlanon.anonymize(input=long_values, qi={"zip": "flat"}, k=2, max_suppression=1.0, max_value_length=5000, dry_run=True)
    assert r.hierarchies[0]["leaves"] == 4
    with pytest.raises(HierarchyError, match="3 row\\(s\\) hold values longer than 4,100"):
        sqlanon.anonymize(input=long_values, qi={"zip": "flat"}, k=2, max_value_length=4100, dry_run=True)
    policy = tmp_path / "p.yaml"
    policy.write_text(f"input: {long_values}\nqi:\n  zip: flat\nk: 2\nmax_suppression: 1\nmax_value_length: 5000\n")
    assert sqlanon.anonymize(str(policy), dry_run=True).hierarchies[0]["leaves"] == 4
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--policy", str(policy), "--max-value-length", "4099", "--dry-run", "--json", "-q"])
    assert result.exit_code == 1 and "5 row(s) hold values longer than 4,099 characters" in result.output
    result = runner.invoke(sqlanon.cli.app.app, ["anonymize", "--policy", str(policy), "--dry-run", "--json", "-q"])
    assert result.exit_code == 0 and json.loads(result.stdout)["hierarchies"][0]["leaves"] == 4
    with pytest.raises(ConfigError, match="max_value_length must be at least 1"):
        Policy(input="x.csv", qi={"zip": "mask"}, k=2, max_value_length=0).validate()


def test_policy_default_is_the_hierarchy_bound():
    assert Policy().max_value_length == MAX_VALUE_LENGTH


# -- the mask builder's shape ----------------------------------------------------------------------


def test_short_values_mask_one_character_per_level():
    h = builders.masking(["13053", "1306"], "zip")
    assert h.rows == [["13053", "1305*", "130**", "13***", "1****", "*"], ["1306", "130*", "13**", "1***", "****", "*"]]
    assert h.origin == "mask" and level_meaning(h, 2) == "2 characters masked"


def test_long_values_mask_several_characters_per_level():
    """A level per character made a value of W characters W labels of W characters (W^2 per
    value: 19 GB for 300 values of 100,000): now at most MASK_LEVELS levels, linear in W."""
    values = ["x" * 4000 + str(i) for i in range(3)] + ["short"]
    h = builders.masking(values, "text")
    assert h.max_level <= builders.MASK_LEVELS
    assert sum(len(c) for row in h.rows for c in row) <= (builders.MASK_LEVELS + 1) * sum(len(v) for v in values)
    step = builders.mask_step(4001)
    assert step == 126 and h.origin == "mask (126 characters per level)"
    row = next(r for r in h.rows if r[0].endswith("1"))
    assert row[1] == "x" * (4001 - step) + "*" * step and row[-1] == "*"
    assert level_meaning(h, 3) == f"{3 * step} characters masked"
    short = next(r for r in h.rows if r[0] == "short")
    assert short[1:] == ["*****"] * (h.max_level - 1) + ["*"]  # fully masked from the first level


def test_a_mask_too_large_in_all_is_refused(monkeypatch):
    monkeypatch.setattr(builders, "MASK_CHARS", 1000)
    with pytest.raises(HierarchyError, match="column 'zip': a mask hierarchy of its 200 distinct values would hold 5,000 characters"):
        builders.masking([f"{i:05d}" for i in range(200)], "zip")


# -- timings per phase in the report ---------------------------------------------------------------


def test_report_has_seconds_per_phase(tmp_path):
    data = zip_table(tmp_path / "z.parquet", 50, 200)
    r = sqlanon.anonymize(input=data, qi={"zip": "mask", "age": "bands:5,10,20"}, k=2, output=str(tmp_path / "o.parquet"), report=str(tmp_path / "r.html"))
    assert list(r.timings) == ["hierarchies", "base_scan", "search", "verify", "report", "write"]
    assert all(v >= 0 for v in r.timings.values()) and sum(r.timings.values()) <= r.seconds + 0.01
    assert list(r.cpu_timings) == list(r.timings) and all(v >= 0 for v in r.cpu_timings.values())
    validate_report(r.to_dict())


# -- statements after the search do not spell out per-value lists ---------------------------------


def test_statements_and_listing_do_not_grow_with_distinct_values(tmp_path, monkeypatch):
    """Utility's released counts, the risk histogram and the report's SQL listing spelled every
    code list out as literals (5,000 zips: tens of thousands of characters per statement, each
    built, copied and parsed, and the listing kept in the HTML page and the registry): now the
    lists are bound parameters, as in the search's statements."""
    from sqlanon.engine.base import Engine

    texts: list[str] = []
    original = Engine.sql_text

    def recorded(self, expression):
        text = original(self, expression)
        texts.append(text)
        return text

    monkeypatch.setattr(Engine, "sql_text", recorded)
    data = zip_table(tmp_path / "z.parquet", 5000, 10000)
    html = tmp_path / "r.html"
    r = sqlanon.anonymize(input=data, qi={"zip": "mask", "age": "bands:5,10,20"}, k=5, max_suppression=0.1, dry_run=True, report=str(html))
    assert r.transformation["zip"] > 0
    assert r.utility["zip"]["distinct_before"] == 5000
    assert max(len(t) for t in texts) < 8000, sorted(len(t) for t in texts)[-3:]
    assert html.stat().st_size < 120_000
    assert "lists of codes bound as parameters" in html.read_text(encoding="utf-8")


def test_input_hash_statement_binds_the_leaf_labels(tmp_path, monkeypatch):
    """With every input column a text QI the input hash is taken over the base set's groups by
    their leaf labels: those lists were spelled out (24 QIs x 20K leaves: 9.5 s of the base scan
    to build and parse); now they are bound, and the hash is the full scan's."""
    from sqlanon.release import write as release
    from sqlanon.engine import connect
    from sqlanon.engine.base import Engine
    from sqlanon.engine.source import Source

    texts: list[str] = []
    original = Engine.sql_text
    monkeypatch.setattr(Engine, "sql_text", lambda self, e: texts.append(original(self, e)) or texts[-1])
    path = tmp_path / "t.parquet"
    duckdb.execute(f"COPY (SELECT lpad(CAST(i % 3000 AS VARCHAR), 5, '0') AS zip, CAST(i % 7 AS VARCHAR) AS grp FROM range(6000) t(i)) TO '{path}' (FORMAT parquet)")
    r = sqlanon.anonymize(input=str(path), qi={"zip": "mask", "grp": "flat"}, k=2, output=str(tmp_path / "o.parquet"))
    totals = [t for t in texts if "bit_xor" in t.lower()]
    assert totals and max(len(t) for t in totals) < 3000, [len(t) for t in totals]
    engine = connect()
    try:
        expected = release.input_hash(engine, Source.open(str(path)))
    finally:
        engine.close()
    reg = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"), read_only=True)
    assert reg.execute("SELECT input_hash FROM sqlanon_releases WHERE id = ?", [r.release_id]).fetchone()[0] == expected
    reg.close()


def test_level_frequencies_are_counted_once_per_level(monkeypatch):
    """The metrics' bounds ask ``leaf_level_freq`` per node; it walked every leaf in Python each
    time. Now it counts once per QI and level (and again for a subset's new frequencies)."""
    from sqlanon.stats import Statistics
    from sqlanon.stats.memory import Memory

    h = builders.masking([f"{i:05d}" for i in range(500)], "zip")
    stats = Statistics.__new__(Statistics)
    stats.memory = Memory()
    stats.hierarchies = [h]
    stats.column_freqs = [[i % 4 for i in range(500)]]
    walks = {"n": 0}
    original = Hierarchy.leaf_to_level

    def counted(self, level):
        walks["n"] += 1
        return original(self, level)

    monkeypatch.setattr(Hierarchy, "leaf_to_level", counted)
    for level in range(h.max_level + 1):
        expected = [0] * len(h.labels(level))
        for leaf, code in enumerate(original(h, level)):
            expected[code] += stats.column_freqs[0][leaf]
        for _ in range(5):
            assert stats.leaf_level_freq(0, level) == expected
    assert walks["n"] == h.max_level + 1
    stats.column_freqs = [[1] * 500]  # a subset's frequencies: counted again
    assert stats.leaf_level_freq(0, h.max_level) == [500] and walks["n"] == h.max_level + 2


def test_leaves_under_is_counted_once_per_level(monkeypatch):
    h = builders.masking([f"{i:05d}" for i in range(300)], "zip")
    expected = {lv: [sum(1 for c in h.leaf_to_level(lv) if c == code) for code in range(len(h.labels(lv)))] for lv in range(h.max_level + 1)}
    walks = {"n": 0}
    original = Hierarchy.leaf_to_level
    monkeypatch.setattr(Hierarchy, "leaf_to_level", lambda self, lv: walks.__setitem__("n", walks["n"] + 1) or original(self, lv))
    for _ in range(4):
        assert {lv: h.leaves_under(lv) for lv in range(h.max_level + 1)} == expected
    assert walks["n"] == h.max_level + 1
    h.rows = [["a", "*"], ["b", "*"]]
    assert h.leaves_under(1) == [2]


# -- intervals: a binary search, not a scan of the intervals per value ------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_interval_indices_equal_the_scan(seed):
    from sqlanon.search.genetic.cut import interval_indices

    rnd = random.Random(seed)
    his = sorted(rnd.sample(range(-50, 200), rnd.randint(1, 30)))
    ivs = [(hi - rnd.randint(0, 3), float(hi)) for hi in his]
    values = [rnd.uniform(-60, 210) for _ in range(200)] + [float(h) for h in his] + [math.nan]

    def scan(v):
        return next((i for i, (_, hi) in enumerate(ivs) if v <= hi), len(ivs) - 1)

    assert interval_indices(ivs, values) == [scan(v) for v in values]


def test_interval_groups_do_not_scan_the_intervals_per_leaf(monkeypatch):
    """A numeric cut's groups (per genetic individual, and ``check --transformation``) looked each
    leaf's interval up by scanning the intervals: O(leaves x intervals)."""
    from sqlanon.search.genetic.cut import IntervalCoder, recoding_from_transformation

    h = builders.flat_numeric([str(v) for v in range(2000)], "age")
    c = IntervalCoder(h, max_endpoints=500)
    assert not hasattr(IntervalCoder, "interval_index")  # the per-value lookup is gone: interval_indices, vectorized
    bits = [1] * c.nbits
    groups = c.groups(bits)
    assert sum(len(g[2]) for g in groups) == 2000 and len(groups) == c.nbits + 1
    assert c.bits_from_labels(c.labels_of(bits)) == bits
    r = recoding_from_transformation({"age": c.labels_of(bits)}, ["age"], [h], ["age"])
    assert sorted(set(r.codes[0])) == list(range(len(groups)))


@pytest.mark.parametrize("output", ["o.parquet", "o.csv"])
def test_suppressed_classes_table_binds_its_lists(tmp_path, monkeypatch, output):
    """The release's table of suppressed classes (packed keys for Parquet, labels for CSV)
    spelled every code and label list out: 90K zips took 12 s to build and parse."""
    from sqlanon.engine.base import Engine

    texts: list[str] = []
    original = Engine.sql_text
    monkeypatch.setattr(Engine, "sql_text", lambda self, e: texts.append(original(self, e)) or texts[-1])
    data = str(tmp_path / "z.parquet")  # 5,000 zips twice each, and 3 rows alone under 9****
    duckdb.execute(
        "COPY (SELECT lpad(CAST((i * 7919) % 5000 AS VARCHAR), 5, '0') AS zip, 20 AS age FROM range(10000) t(i) "
        f"UNION ALL SELECT '9999' || CAST(i AS VARCHAR), 20 FROM range(3) t(i)) TO '{data}' (FORMAT parquet)"
    )
    r = sqlanon.anonymize(input=data, qi={"zip": "mask", "age": "bands:5,10,20"}, k=5, max_suppression=0.1, output=str(tmp_path / output))
    assert r.suppressed_rows == 3 and r.transformation["zip"] > 0
    creates = [t for t in texts if "flagged" in t and t.lstrip().upper().startswith("CREATE")]
    assert creates and max(len(t) for t in creates) < 8000, [len(t) for t in creates]
    released = duckdb.sql(f"SELECT count(*) FILTER (zip = '*') FROM '{tmp_path / output}'").fetchall()[0][0]
    assert released == r.suppressed_rows


def test_max_value_length_in_check_and_hierarchy_commands(long_values, tmp_path):
    def run(*args):
        return runner.invoke(sqlanon.cli.app.app, [*args])

    result = run("check", "--input", long_values, "--qi", "zip", "--json")
    assert result.exit_code == 1 and "5 row(s) hold values longer than 4,096 characters" in result.output
    result = run("check", "--input", long_values, "--qi", "zip", "--max-value-length", "5000", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["classes"] == 4
    assert sqlanon.check(long_values, ["zip"], max_value_length=5000)["k"] == 1
    result = run("hierarchy", "show", "flat", "--column", "zip", "--input", long_values)
    assert result.exit_code == 1 and "too long for a 'flat' hierarchy" in result.output
    result = run("hierarchy", "show", "flat", "--column", "zip", "--input", long_values, "--max-value-length", "5000", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["leaves"] == 4
    hier = tmp_path / "h.csv"
    hier.write_text("a;*\n")
    result = run("hierarchy", "show", str(hier), "--max-value-length", "10")
    assert result.exit_code == 2 and "--max-value-length bounds hierarchies built from the data" in result.output
    result = run("check", "--input", long_values, "--qi", "zip", "--max-value-length", "0")
    assert result.exit_code == 2 and "--max-value-length must be at least 1" in result.output


def test_max_value_length_without_a_builder_is_refused(tmp_path):
    data = zip_table(tmp_path / "z.parquet", 50, 200)
    hier = tmp_path / "zip.csv"
    write_csv_hierarchy(builders.masking(zips_of(data), "zip"), str(hier))
    with pytest.raises(ConfigError, match="--max-value-length 100 bounds hierarchies built from the data"):
        sqlanon.anonymize(input=data, qi={"zip": str(hier)}, k=2, max_value_length=100, dry_run=True)
    assert sqlanon.anonymize(input=data, qi={"zip": str(hier), "age": "bands:10"}, k=2, max_value_length=100, dry_run=True).rows == 200
    assert sqlanon.anonymize(input=data, qi={"zip": str(hier)}, k=2, dry_run=True).rows == 200  # the default is no flag
