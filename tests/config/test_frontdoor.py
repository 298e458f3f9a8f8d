"""The Python API's front doors: builder calls and Hierarchy objects as hierarchies, privacy model
objects, a DuckDB relation as the input, and the Release result (typed fields, .relation(),
.to_arrow(), .to_dict()). Every release is re-checked by tests/checker.py."""

import json
import os
import paths

import duckdb
import jsonschema
import pytest

import sqlanon
from checker import check_k, check_l_diversity
from sqlanon.errors import ConfigError
from sqlanon.hierarchy import Hierarchy

ROOT = str(paths.ROOT)


def rows_of(rel):
    cols = rel.columns
    return [dict(zip(cols, r)) for r in rel.fetchall()]


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("""CREATE TABLE patients AS SELECT (12340 + i % 7)::VARCHAR AS zip, 20 + (i * 7) % 40 AS age,
                   ['M', 'F'][1 + (i // 3) % 2] AS sex, ['flu', 'cold', 'cancer', 'asthma'][1 + (i // 7) % 4] AS disease, i AS id
                   FROM range(240) t(i)""").fetchall()
    yield con
    con.close()


@pytest.fixture
def csv_path(tmp_path, con):
    path = str(tmp_path / "patients.csv")
    con.execute(f"COPY patients TO '{path}' (HEADER)").fetchall()
    return path


def test_builders_are_the_spec_strings(csv_path):
    assert sqlanon.bands(5, 10, 20) == "bands:5,10,20" and sqlanon.bands(2.5) == "bands:2.5"
    assert (sqlanon.mask(), sqlanon.mask("#"), sqlanon.dates(), sqlanon.flat(), sqlanon.numeric(), sqlanon.stored("h")) == ("mask", "mask:#", "dates", "flat", "numeric", "table:h")
    with pytest.raises(ConfigError, match="at least one width"):
        sqlanon.bands()
    a = sqlanon.anonymize(keep_others=True, input=csv_path, qi={"zip": sqlanon.mask(), "age": sqlanon.bands(5, 10, 20)}, k=6, dry_run=True)
    b = sqlanon.anonymize(keep_others=True, input=csv_path, qi={"zip": "mask", "age": "bands:5,10,20"}, k=6, dry_run=True)
    assert a.transformation == b.transformation and a.metric == b.metric


def test_hierarchy_objects(csv_path, tmp_path):
    ages = [[str(a), f"{a // 10 * 10}s", "*"] for a in range(20, 60)]
    h = Hierarchy("whatever", ages)  # used for the column it is given to
    csv_h = tmp_path / "age.csv"
    csv_h.write_text("".join(";".join(r) + "\n" for r in ages))
    out = str(tmp_path / "o.parquet")
    a = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=csv_path, qi={"zip": "mask", "age": h}, k=8, output=out)
    b = sqlanon.anonymize(keep_others=True, input=csv_path, qi={"zip": "mask", "age": str(csv_h)}, k=8, dry_run=True)
    assert a.transformation == b.transformation and a.suppressed_rows == b.suppressed_rows
    assert a.hierarchies[1]["attribute"] == "age" and a.hierarchies[1]["origin"] == "inline"
    assert check_k(a.to_arrow().to_pylist(), ["zip", "age"], 8, 0.0)["ok"]
    registry = duckdb.connect(str(tmp_path / "sqlanon_releases.duckdb"), read_only=True)
    ((policy,),) = registry.execute("SELECT policy FROM sqlanon_releases").fetchall()
    registry.close()
    assert "hierarchy object (inline, 40 leaves)" in json.loads(policy)["qi"]["age"]


def test_privacy_model_objects(csv_path):
    qi = {"zip": "mask", "age": "bands:5,10,20"}
    a = sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, privacy=[sqlanon.KAnonymity(5), sqlanon.EntropyLDiversity(2, "disease")], dry_run=True)
    b = sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, k=5, l=2, l_diversity="entropy", sensitive_column="disease", dry_run=True)
    assert a.privacy.models == b.privacy.models == [{"model": "k-anonymity", "k": 5}, {"model": "entropy-l-diversity", "l": 2.0}]
    assert a.transformation == b.transformation
    c = sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, privacy=[sqlanon.KAnonymity(3), sqlanon.DistinctLDiversity(3, "disease"), sqlanon.TCloseness(0.5, column="disease")], dry_run=True)
    assert [m["model"] for m in c.privacy.models] == ["k-anonymity", "distinct-l-diversity", "t-closeness"]
    from sqlanon.config.frontdoor import privacy_keys

    assert privacy_keys([sqlanon.RecursiveCLDiversity(3, 2), sqlanon.KMap(4, 10000), sqlanon.DeltaPresence(0.1, 0.6)]) == {
        "l": 2, "c": 3.0, "l_diversity": "recursive", "k_map": 4, "population_size": 10000, "k_map_estimator": "poisson",
        "k_map_significance": 0.01, "delta_min": 0.1, "delta_max": 0.6}
    r = sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, privacy=[sqlanon.KAnonymity(2), sqlanon.RecursiveCLDiversity(3, 2)], sensitive_column="disease", dry_run=True)
    assert [m["model"] for m in r.privacy.models] == [m["model"] for m in sqlanon.anonymize(
        keep_others=True, input=csv_path, qi=qi, k=2, l=2, c=3, l_diversity="recursive", sensitive_column="disease", dry_run=True).privacy.models]
    with pytest.raises(ConfigError, match="disagree on sensitive_column"):
        sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, privacy=[sqlanon.KAnonymity(3), sqlanon.DistinctLDiversity(2, "disease"), sqlanon.TCloseness(0.5, column="sex")], dry_run=True)
    with pytest.raises(ConfigError, match="k=4 disagrees"):
        sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, k=4, privacy=[sqlanon.KAnonymity(3)], dry_run=True)
    with pytest.raises(ConfigError, match="cannot be given as an object"):
        sqlanon.anonymize(keep_others=True, input=csv_path, qi=qi, privacy=[object.__new__(type("Odd", (sqlanon.privacy.PrivacyModel,), {}))], dry_run=True)


def test_relation_input_returns_a_lazy_release_relation(con):
    rel = con.table("patients")
    release = sqlanon.anonymize(rel, connection=con, keep_columns=["id", "sex"], qi={"zip": sqlanon.mask(), "age": sqlanon.bands(5, 10, 20)},
                                privacy=[sqlanon.KAnonymity(5), sqlanon.DistinctLDiversity(2, "disease")], max_suppression=0.05)
    assert release.output == "relation" and release.release_id == 1
    released = rows_of(release.relation())
    assert len(released) == 240 and [c for c in release.relation().columns] == ["zip", "age", "sex", "disease", "id"]
    assert check_k(released, ["zip", "age"], 5, 0.05)["ok"]
    assert check_l_diversity(released, ["zip", "age"], "disease", 2)
    assert release.to_arrow().num_rows == 240
    # recorded (target: relation), written nowhere
    assert con.execute("SELECT source, target FROM sqlanon_releases").fetchall() == [("relation:" + " ".join(rel.sql_query().split()), "relation")]
    assert con.execute("SELECT COUNT(*) FROM duckdb_tables() WHERE NOT temporary").fetchall()[0][0] == 2  # patients, sqlanon_releases
    # a second run on the same connection while the first relation is alive
    second = sqlanon.anonymize(con.table("patients").filter("age >= 30"), connection=con, keep_columns=["id"], keep_others=True, qi={"zip": "mask"}, k=10)
    assert second.rows == con.execute("SELECT COUNT(*) FROM patients WHERE age >= 30").fetchall()[0][0]
    assert check_k(rows_of(second.relation()), ["zip"], 10, 0.0)["ok"]
    assert len(rows_of(release.relation())) == 240
    release.close()
    second.close()
    assert con.execute("SELECT COUNT(*) FROM duckdb_tables() WHERE temporary").fetchall()[0][0] == 0
    assert con.execute("SELECT COUNT(*) FROM duckdb_views() WHERE NOT internal AND temporary").fetchall()[0][0] == 0


def test_relation_input_on_the_default_connection():
    rel = duckdb.sql("SELECT (i % 5)::VARCHAR AS g, i % 3 AS h FROM range(60) t(i)")
    release = sqlanon.anonymize(rel, qi={"g": "flat", "h": "flat"}, k=4)
    assert release.rows == 60 and check_k(rows_of(release.relation()), ["g", "h"], 4, 0.0)["ok"]
    release.close()


def test_relation_input_from_arrow_and_written_to_a_table(con):
    arrow = con.table("patients").to_arrow_table()
    rel = con.from_arrow(arrow)
    release = sqlanon.anonymize(rel, connection=con, keep_columns=["id"], keep_others=True, qi={"zip": "mask", "sex": "flat"}, k=12, output_table="patients_k12")
    assert release.output == "table patients_k12"
    assert check_k(rows_of(con.table("patients_k12")), ["zip", "sex"], 12, 0.0)["ok"]
    assert release.relation().count("*").fetchall()[0][0] == 240


def test_relation_of_another_connection_is_refused(con):
    other = duckdb.connect()
    try:
        with pytest.raises(ConfigError, match="another database"):
            sqlanon.anonymize(con.table("patients"), connection=other, qi={"zip": "mask"}, k=2)
        with pytest.raises(ConfigError, match="not on DuckDB's default connection"):
            sqlanon.anonymize(con.table("patients"), qi={"zip": "mask"}, k=2)
    finally:
        other.close()
    with pytest.raises(ConfigError, match="in_place needs a table input"):
        sqlanon.anonymize(con.table("patients"), connection=con, qi={"zip": "mask"}, k=2, in_place=True)
    assert con.execute("SELECT COUNT(*) FROM duckdb_views() WHERE NOT internal AND temporary").fetchall()[0][0] == 0


def test_release_is_a_dict_and_its_json_is_the_report(csv_path, tmp_path):
    out = str(tmp_path / "r.parquet")
    release = sqlanon.anonymize(keep_others=True, keep_columns=["id"], input=csv_path, qi={"zip": "mask", "age": "bands:5,10,20"}, k=6, output=out)
    assert not isinstance(release, dict) and not hasattr(release, "pop") and release.transformation == release.to_dict()["transformation"]
    assert release.metric.name == "precision" and release.privacy.min_class_size >= 6
    data = release.to_dict()
    assert type(data) is dict and json.loads(release.to_json()) == data
    with open(os.path.join(ROOT, "schemas", "report.schema.json"), encoding="utf-8") as fh:
        jsonschema.validate(data, json.load(fh))
    table = release.to_arrow()
    assert table.num_rows == 240 and check_k(table.to_pylist(), ["zip", "age"], 6, 0.0)["ok"]
    assert release.relation().count("*").fetchall()[0][0] == 240
    release.close()
    dry = sqlanon.anonymize(keep_others=True, input=csv_path, qi={"zip": "mask"}, k=6, dry_run=True)
    with pytest.raises(ConfigError, match="nothing was released"):
        dry.relation()
