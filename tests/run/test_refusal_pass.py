"""The refusals that need one pass (:mod:`sqlanon.run.refusals`): a kept column unique per row and
a function of a QI kept in clear are refused from one statement of sketches, before any hierarchy
is built; the message is the release's own check's, and only what the sketch flags is counted
exactly (a column near the threshold is not refused on an estimate)."""

from __future__ import annotations

import pytest

import sqlanon
from sqlanon.engine import connect
from sqlanon.engine.source import Source
from sqlanon.errors import ConfigError
from sqlanon.release import write as release_write
from sqlanon.run import refusals
from sqlanon.run.session import Session

QI = {"zip": "mask", "age": "bands:10,20"}


def _csv(tmp_path, n: int = 400, near: bool = False):
    """``id`` unique per row (or, ``near``, 85 % of its values distinct: between the sketch's
    flag and the exact count's refusal of a column ``keep_others`` keeps), zip/age QIs, ``note``
    of three values."""
    lines = ["id,zip,age,note"] + [f"{i if not near or i < 340 else i - 340},{12340 + i % 8},{20 + i % 40},n{i % 3}" for i in range(n)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.fixture
def spied(monkeypatch):
    """Records the hierarchy step, the statements that count exactly and the one-pass sketches."""
    seen: list[str] = []
    hierarchies = Session.hierarchies
    monkeypatch.setattr(Session, "hierarchies", lambda self, qis, *rows: seen.append("hierarchies") or hierarchies(self, qis, *rows))
    row_keys = refusals.refuse_row_keys
    monkeypatch.setattr(refusals, "refuse_row_keys", lambda *a, **kw: seen.append("exact") or row_keys(*a, **kw))
    sketch = refusals.sketch
    monkeypatch.setattr(refusals, "sketch", lambda *a, **kw: seen.append("sketch") or sketch(*a, **kw))
    return seen


def _message_of_the_release_check(path: str) -> str:
    """What :func:`sqlanon.release.write.refuse_row_keys` alone says of the same table."""
    engine = connect(database=":memory:")
    try:
        with pytest.raises(ConfigError) as err:
            release_write.refuse_row_keys(engine, Source.open(path), list(QI), kept_others=["id", "note"])
        return str(err.value)
    finally:
        engine.close()


def test_a_unique_column_is_refused_before_the_hierarchies_with_the_same_message(tmp_path, spied):
    path = _csv(tmp_path)
    with pytest.raises(ConfigError) as err:
        sqlanon.anonymize(input=path, qi=QI, k=5, keep_others=True, output=str(tmp_path / "out.parquet"), dry_run=True)
    assert str(err.value) == _message_of_the_release_check(path)
    assert str(err.value).startswith("column 'id' is (nearly) unique per row (400 rows)")
    assert spied == ["sketch", "exact"]  # one pass of sketches, the exact check of 'id', no hierarchy


def test_a_column_near_the_threshold_is_decided_exactly_and_released(tmp_path, spied):
    """340 distinct of 400: the sketch flags it (at least 0.8 of the values), the exact count
    (under 0.9) keeps it."""
    path = _csv(tmp_path, near=True)
    out = tmp_path / "out.parquet"
    sqlanon.anonymize(input=path, qi=QI, k=5, keep_others=True, output=str(out))
    assert spied[:3] == ["sketch", "exact", "hierarchies"]
    assert out.exists()


def test_no_flagged_column_asks_no_exact_count(tmp_path, spied):
    path = _csv(tmp_path)
    sqlanon.anonymize(input=path, qi=QI, k=5, keep_others=True, drop_columns=["id"], output=str(tmp_path / "out.parquet"))
    assert spied[:2] == ["sketch", "hierarchies"] and "exact" not in spied


def test_a_function_of_a_qi_in_clear_is_refused_before_the_hierarchies(tmp_path, spied):
    lines = ["zip,age,city"] + [f"{12340 + i % 8},{20 + i % 40},c{i % 8}" for i in range(400)]
    path = tmp_path / "c.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"column 'city' is a function of the quasi-identifier 'zip'.*--linked city=zip"):
        sqlanon.anonymize(input=str(path), qi=QI, k=5, keep_others=True, output=str(tmp_path / "out.parquet"), dry_run=True)
    assert "hierarchies" not in spied and spied.count("sketch") == 1


def test_the_sketch_is_one_statement(tmp_path, monkeypatch):
    path = _csv(tmp_path)
    engine = connect(database=":memory:")
    calls = []
    fetch = engine.fetch_one
    monkeypatch.setattr(engine, "fetch_one", lambda q: calls.append(q) or fetch(q))
    try:
        rows, counts, nonnull = refusals.sketch(engine, Source.open(path), ["id", "zip", "note"], ["note"])
    finally:
        engine.close()
    assert len(calls) == 1 and rows == 400 and nonnull == {"note": 400}
    assert counts["zip"] == 8 and counts["note"] == 3 and refusals.flagged(counts["id"], rows, None)


def test_a_column_without_a_role_is_said_before_it_is_refused_as_unique(tmp_path, spied):
    """The release's refusals keep their order: a unique column nobody named is a column without
    a role first (as before the one pass), still before any hierarchy."""
    with pytest.raises(ConfigError, match=r"^1 column without a role, released in clear otherwise: 'id'"):
        sqlanon.anonymize(input=_csv(tmp_path), qi=QI, k=5, keep_columns=["note"], output=str(tmp_path / "out.parquet"), dry_run=True)
    assert spied == ["sketch"]
