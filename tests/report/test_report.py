"""The HTML report: content, escaping, self-containment, `sqlanon report --release`, utility figures
against independent computations, and rendering in a real headless chromium (no console errors,
every plot drawn). Chromium is required under CI=true; elsewhere the browser tests skip without it."""

import os
import random
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

import sqlanon
import sqlanon.cli.app
from browser import find_chromium, inspect_page
from checker import is_suppressed, read_rows
from sqlanon.run.check import check, check_plan
from sqlanon.hierarchy.builders import date_parts, masking, numeric_bands
from sqlanon.hierarchy.io import read_csv_hierarchy
from sqlanon.report.utility import level_meaning

runner = CliRunner()
CHROMIUM = find_chromium()
IN_CI = os.environ.get("CI", "").lower() == "true"


def need_chromium():
    if CHROMIUM is None:
        if IN_CI:
            pytest.fail("chromium is required under CI=true (.ci/run installs Debian's chromium)")
        pytest.skip("chromium not installed (apt-get install chromium)")


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    rnd = random.Random(3)
    lines = ["zip,age,job,income"]
    for _ in range(500):
        lines.append(f"{rnd.choice(['13053', '13068', '13102', '14850', '14853', '14867'])},{rnd.randint(18, 80)},{rnd.choice(['<b>nurse</b>', 'clerk', 'engineer', 'teacher'])},{rnd.randint(1, 9) * 1000}")
    data = tmp / "people.csv"
    data.write_text("\n".join(lines) + "\n")
    out, html = tmp / "out.csv", tmp / "report.html"
    qi = {"zip": "mask", "age": "bands:5,10,20", "job": "flat"}
    report = sqlanon.anonymize(keep_others=True, input=str(data), qi=qi, k=4, max_suppression=0.05, output=str(out), report=str(html))
    return {"dir": tmp, "data": str(data), "out": str(out), "html": str(html), "report": report.to_dict(), "qi": qi}


def test_report_content_is_self_contained_and_escaped(release):
    page = open(release["html"], encoding="utf-8").read()
    assert "<script" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing from the network
    assert "<b>nurse</b>" not in page and "&lt;b&gt;nurse&lt;/b&gt;" in page  # autoescaped data value
    r = release["report"]
    for needle in (f"Release <b>{r['release_id']}</b>", "people.csv", "Re-identification risk", "Records by the size of their equivalence class",
                   "Information loss per quasi-identifier", "bands of width 5" if r["transformation"]["age"] == 1 else "age", "<details>", "base frequency set", "CREATE TEMPORARY TABLE"):
        assert needle in page, needle
    assert page.count("<svg") == 3 + 2 * len(release["qi"])  # risk, classes, loss, 2 per QI
    assert len(page) < 200_000


def test_utility_matches_independent_computations(release):
    r = release["report"]
    u = r["utility"]
    # LM per column as check_plan computes it (a separate implementation, over the same plan)
    plan = check_plan(release["data"], release["qi"], r["transformation"], k=4, max_suppression=0.05)
    for c in release["qi"]:
        assert u[c]["lm"] == pytest.approx(plan["metrics"]["lm_per_column"][c])
        assert u[c]["level"] == r["transformation"][c]
    # value distributions after = the released file's values
    rows = read_rows(release["out"])
    for c in release["qi"]:
        counts = Counter("* (suppressed)" if is_suppressed(row, list(release["qi"])) else row[c] for row in rows)
        for entry in u[c]["after"]:
            if not entry.get("other"):
                assert counts[entry["value"]] == entry["rows"], (c, entry)
        before = Counter(row[c] for row in read_rows(release["data"]))
        shown = [e for e in u[c]["before"] if not e.get("other")]
        assert [e["rows"] for e in shown] == [n for _, n in before.most_common(len(shown))]
        assert all(before[e["value"]] == e["rows"] for e in shown)


def test_level_meanings(adult):
    assert level_meaning(numeric_bands(["3", "17", "42"], [5, 10, 20], "age"), 2) == "bands of width 10"
    assert level_meaning(masking(["13053", "14850"], "zip"), 2) == "2 characters masked"
    assert level_meaning(date_parts(["2020-01-05"], "d"), 1) == "month (YYYY-MM)"
    age = read_csv_hierarchy(adult["qi"]["age"], "age")
    assert level_meaning(age, 0) == "original values"
    assert level_meaning(age, 1).startswith("ranges of width 5")
    assert level_meaning(age, age.max_level) == "fully generalized (*)"


def test_report_of_a_past_release(release, tmp_path):
    reg = str(release["dir"] / "sqlanon_releases.duckdb")
    out = str(tmp_path / "again.html")
    res = runner.invoke(sqlanon.cli.app.app, ["report", "--release", str(release["report"]["release_id"]), "--database", reg, "--output", out])
    assert res.exit_code == 0, res.output
    page = open(out, encoding="utf-8").read()
    first = open(release["html"], encoding="utf-8").read()
    strip = lambda p: re.sub(r"\d{4}-\d{2}-\d{2}[ T][\d:]+( UTC|\+00:00)?", "", p)  # noqa: E731
    # same figures; the past release shows its recorded creation time and id
    assert strip(page).count("<rect class=\"bar\"") == strip(first).count("<rect class=\"bar\"")
    assert "base frequency set" in page and f"Release <b>{release['report']['release_id']}</b>" in page
    res = runner.invoke(sqlanon.cli.app.app, ["report", "--release", "999", "--database", reg, "--output", out, "--overwrite"])
    assert res.exit_code == 2 and "release 999" in res.output
    res = runner.invoke(sqlanon.cli.app.app, ["report", "--release", "1", "--database", str(tmp_path / "nope.duckdb")])
    assert res.exit_code == 2 and "not found" in res.output


def test_report_renders_in_chromium(release, tmp_path):
    need_chromium()
    facts = inspect_page(release["html"], screenshot=str(tmp_path / "shot.png"), executable=CHROMIUM)
    assert facts["errors"] == []
    assert all(u.startswith("file:") for u in facts["urls"]), facts["urls"]
    assert len(facts["charts"]) == 3 + 2 * len(release["qi"])
    for chart in facts["charts"]:
        assert chart["width"] > 100 and chart["height"] > 40, chart
        assert any(w > 0 and h > 0 for w, h in chart["bars"]), chart  # something is drawn
    labels = [c["label"] for c in facts["charts"]]
    assert "Re-identification risk" in labels and "Records by the size of their equivalence class" in labels
    assert os.path.getsize(tmp_path / "shot.png") > 10_000


def test_browser_check_can_fail(tmp_path):
    """The chromium check sees console errors and empty plots (a page built to fail)."""
    need_chromium()
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html><body><svg class='chart' width='10' height='10'></svg>"
                   "<script>console.error('broken'); undefined_function();</script></body></html>")
    facts = inspect_page(str(bad), executable=CHROMIUM)
    assert len(facts["errors"]) >= 2
    assert facts["charts"][0]["bars"] == [] and facts["charts"][0]["width"] == 0


def test_generate_report_has_risk_and_scores(tmp_path):
    from sqlanon.cli.generate import run_generate

    rnd = random.Random(1)
    data = tmp_path / "g.csv"
    data.write_text("\n".join(["a,b,c"] + [f"{rnd.choice('xyz')},{rnd.randint(1, 5)},{rnd.choice(['p', 'q'])}" for _ in range(300)]) + "\n")
    html = tmp_path / "g.html"
    r = run_generate(input=str(data), min_sup=5, seed=1, output=str(tmp_path / "g.parquet"), report=str(html))
    # the generated table's risk, re-measured by check on the written file
    again = check(str(tmp_path / "g.parquet"), ["a", "b", "c"], risk=True)["risk"]
    assert r["risk"]["after"]["prosecutor"] == again["prosecutor"]
    before = check(str(data), ["a", "b", "c"], risk=True)["risk"]
    assert r["risk"]["before"]["class_sizes"] == before["class_sizes"]
    page = html.read_text(encoding="utf-8")
    assert "NAS (normalized anonymity score)" in page and "equal frequent itemsets" in page
    if CHROMIUM or IN_CI:
        need_chromium()
        facts = inspect_page(str(html), executable=CHROMIUM)
        assert facts["errors"] == [] and len(facts["charts"]) == 2
        assert all(any(w > 0 and h > 0 for w, h in c["bars"]) for c in facts["charts"])


def test_report_size_does_not_grow_with_rows():
    """Aggregates only: a histogram with thousands of class sizes is cut to 100 entries (the tail
    summed with its records), top values to 10 per QI; the page stays small."""
    from sqlanon.report import render
    from sqlanon.report.charts import class_size_buckets
    from sqlanon.risk.measure import compact_histogram, figures_from

    hist = [(s, 3) for s in range(1, 5001)]
    risk = figures_from((15000, sum(s * c for s, c in hist), 1.0, 1 / 5000, 10, 3), hist, 0.2, 0.1)
    assert len(risk["class_sizes"]) <= 100 and risk["class_sizes"][-1][0] == "5000-9999"
    assert sum(x[2] if isinstance(x[0], str) else x[0] * x[1] for x in risk["class_sizes"]) == sum(s * c for s, c in hist)
    assert class_size_buckets(risk["class_sizes"]) == pytest.approx(class_size_buckets(hist))
    assert compact_histogram([[1, 2]]) == [[1, 2]]
    page = render({"k": 5, "rows": 10**7, "risk": {"before": risk, "after": risk}, "transformation": {}})
    assert len(page) < 60_000


def test_flexible_release_utility(release, tmp_path):
    """A flexible plan (bottom-up cuts): per-column LM equals check_plan's over the same cuts, and
    levels are reported as flexible cuts."""
    qi = {"zip": "mask", "job": "flat"}
    r = sqlanon.anonymize(keep_others=True, input=release["data"], qi=qi, k=4, search="bottom-up", output=str(tmp_path / "flex.csv"), report=str(tmp_path / "flex.html"))
    u = r.utility
    assert all(v["level"] is None and v["precision"] is None and v["meaning"].startswith("flexible cut") for v in u.values())
    plan = check_plan(release["data"], qi, r.transformation, k=4)
    for c in qi:
        assert u[c]["lm"] == pytest.approx(plan["metrics"]["lm_per_column"][c])
    assert r.risk["after"]["prosecutor"]["highest"] <= 0.25
    assert "flexible" in (tmp_path / "flex.html").read_text(encoding="utf-8")
