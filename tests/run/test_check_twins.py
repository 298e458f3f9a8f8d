"""``sqlanon check`` of a release by its own policy gives a verdict for every model of the registry
whose Python twin can decide it from the released classes, the models it has no figure for (the
two ARX criteria added last among them) included: the model is rebuilt from the release's stored
policy and its twin (``class_ok``, ``refine``) runs over classes the checker groups itself. A
release tampered with after it was written fails the verdict."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlanon

QIS = ["age", "zip"]


@pytest.fixture
def table(tmp_path):
    rng = random.Random(3)
    rows = [{"age": str(rng.choice(range(20, 40))), "zip": f"{rng.choice(range(100, 108)):05d}", "disease": rng.choice(["a", "b", "c", "d"])} for _ in range(400)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def _release(table, tmp_path, **privacy):
    out = tmp_path / "out.parquet"
    sqlanon.anonymize(input=str(table), qi={"age": "bands:5,10,20", "zip": "mask"}, sensitive_column="disease", output=str(out), overwrite=True, max_suppression=0.05, **privacy)
    return out


def _verdict(result: dict, model: str) -> dict:
    return next(v for v in result["verdicts"] if v["model"] == model)


def _tamper(out, sensitive_all_one: bool = False, extra_unique: int = 0) -> None:
    """Rewrite the release: every released row's sensitive value the same, or rows of new QI values."""
    rows = pq.read_table(out).to_pylist()
    if sensitive_all_one:
        rows = [{**r, "disease": "a"} for r in rows]
    rows += [{**rows[0], "age": f"unique-{i}", "zip": f"z{i}"} for i in range(extra_unique)]
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(out)), out)


def test_grassberger_l_diversity_is_checked_by_its_twin(table, tmp_path):
    out = _release(table, tmp_path, k=2, l=1.5, l_diversity="entropy", l_estimator="grassberger")
    got = sqlanon.check(str(out))
    assert _verdict(got, "grassberger-l-diversity")["ok"] is True
    assert "not_checked" not in got
    _tamper(out, sensitive_all_one=True)
    assert _verdict(sqlanon.check(str(out)), "grassberger-l-diversity")["ok"] is False


def test_sample_uniqueness_is_checked_by_its_twin(table, tmp_path):
    out = _release(table, tmp_path, k=1, sample_uniqueness=0.02)
    got = sqlanon.check(str(out))
    assert _verdict(got, "sample-uniqueness")["ok"] is True
    rows = pq.read_metadata(out).num_rows
    _tamper(out, extra_unique=int(0.05 * rows) + 1)  # more records alone in their class than 2 %
    assert _verdict(sqlanon.check(str(out)), "sample-uniqueness")["ok"] is False


def test_recursive_cl_diversity_is_checked_by_its_twin(table, tmp_path):
    out = _release(table, tmp_path, k=2, l=2, c=3.0, l_diversity="recursive")
    got = sqlanon.check(str(out))
    assert _verdict(got, "recursive-cl-diversity")["ok"] is True
    _tamper(out, sensitive_all_one=True)
    assert _verdict(sqlanon.check(str(out)), "recursive-cl-diversity")["ok"] is False


def test_estimated_k_map_is_checked_by_its_twin(table, tmp_path):
    """Estimated k-map (a population size, no population table): its twin holds every released
    class to the class-size floor k' derived from the table's rows; a table of a population
    (k-map with --population, delta-presence) or hierarchical t stays not checked."""
    out = _release(table, tmp_path, k_map=3, population_size=4000)
    got = sqlanon.check(str(out))
    verdict = _verdict(got, "k-map")
    assert verdict["ok"] is True and "derived_k=" in verdict["required"] and "not_checked" not in got
    floor = int(verdict["required"].split("derived_k=")[1])
    assert floor > 1 and got["k"] >= floor  # the smallest released class meets the floor the twin read
    _tamper(out, extra_unique=1)  # a class of one row: under any floor above 1
    assert _verdict(sqlanon.check(str(out)), "k-map")["ok"] is False
