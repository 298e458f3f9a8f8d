"""Every registered privacy model, from its own declarations: its example keys
(``PrivacyModel.example``) read through the policy, its SQL predicate against its Python twin, its
page, its flags. On small random tables (skewed, some leaves never used) for every model of the
registry: every lattice node's suppressed rows from SQL equal the Python twin's over classes
grouped row by row in Python (``Requirement.released``: ``class_ok``, ``refine``), the optimal
search's node satisfies the twin within the budget, and (DuckDB) the written release, read back,
is re-checked by the twin class by class. On DuckDB, PostgreSQL (pgserver) and Spark. A new
model with an ``example`` is tested here without an edit."""

from __future__ import annotations

import os
import random
import sys
import uuid
from collections import Counter

import pyarrow.parquet as pq
import paths
import pytest

sys.path.insert(0, os.path.dirname(__file__))

import oracle_brute as brute  # noqa: E402
import test_models_arx  # noqa: E402
import sqlanon  # noqa: E402
from sqlanon.cli import app as cli  # noqa: E402
from sqlanon.cli.flags import flag_paths  # noqa: E402
from sqlanon.config.policy import Policy  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.source import Source  # noqa: E402
from sqlanon.errors import UnsatisfiableError  # noqa: E402
from sqlanon.hierarchy.model import Hierarchy  # noqa: E402
from sqlanon.metrics import METRICS  # noqa: E402
from sqlanon.privacy.registry import MODELS, POLICY_KEYS, requirement_from_policy  # noqa: E402
from sqlanon.search.lattice.run import LATTICE_SEARCHES  # noqa: E402
from sqlanon.search.lattice.lattice import Lattice  # noqa: E402
from sqlanon.stats import Statistics  # noqa: E402

DOCS = os.path.join(str(paths.ROOT), "docs", "models")
#: the models an example asks for on a table alone (delta-presence needs a population table)
#: the PostgreSQL server and the loader the ARX model tests use
pg_url = test_models_arx.pg_url
_load_pg = test_models_arx._load_pg

EXAMPLES = [name for name, model in MODELS.items() if model.example]
STAR = "*"


def test_every_model_has_its_page_and_every_page_a_model_or_a_reason():
    pages = {name[:-3] for name in os.listdir(DOCS) if name.endswith(".md")}
    assert set(MODELS) <= pages, f"models without a page docs/models/<name>.md: {sorted(set(MODELS) - pages)}"
    # pages beside the registry: the l-diversity overview, and guarantees that are no class predicate
    assert pages - set(MODELS) == {"l-diversity", "safepub", "xy-privacy"}


def test_every_declared_key_is_a_policy_key_and_a_flag():
    paths = set(flag_paths(cli.anonymize).values())
    fields = Policy.model_fields["privacy"].annotation.model_fields
    for name, model in MODELS.items():
        for key in model.policy_keys:
            assert key.name in fields, f"{name}: {key.name} is not in the policy's privacy section"
            assert f"privacy.{key.name}" in paths or key.name == "seed", f"{name}: --{key.name} is not a flag of anonymize"
        assert set(model.asks) <= {k.name for k in model.policy_keys}, f"{name} asks by keys it does not declare"
    assert list(POLICY_KEYS) == list(fields)


def test_every_model_but_delta_presence_has_an_example():
    assert set(MODELS) - set(EXAMPLES) == {"delta-presence"}


# ------------------------------------------------------------------------------------------------
# the oracle


def _policy(name: str, max_suppression: float) -> Policy:
    keys = {"k": 1, "sensitive_column": "disease", "max_suppression": max_suppression, **MODELS[name].example}
    return Policy.from_dict({"input": "x.csv", "qi": {"a": "flat"}, **keys})


def _requirement(name: str, max_suppression: float):
    requirement, extras = requirement_from_policy(_policy(name, max_suppression))
    assert name in [m.name for m in requirement.models] and not extras
    return requirement


def _classes(case, node) -> list[dict]:
    return [{"cnt": len(m), "s_counts": Counter(r[case.sensitive] for r in m), "key": key} for key, m in brute.group(case, node).items()]


def _twin_suppressed(case, node, requirement) -> int:
    classes = _classes(case, node)
    return sum(c["cnt"] for c, good in zip(classes, requirement.released(classes)) if not good)


def _stats(engine, case, source, needs) -> Statistics:
    hierarchies = [Hierarchy(attribute=q, rows=[list(r) for r in h]) for q, h in zip(case.qis, case.hier_rows)]
    stats = Statistics(engine, source, case.qis, hierarchies, sensitive=case.sensitive, needs=needs, keep_sets=4, materialize_rows=0)
    stats.prepare()
    if needs.sensitive:  # the twin's view of the table
        assert Counter(dict(stats.sensitive_domain)) == Counter(r[case.sensitive] for r in case.rows)
    return stats


def check_model(case, engine, source, name, fractions=(0.0, 0.25)):
    """Every node: SQL's suppressed rows are the twin's; the optimum satisfies the twin. Returns
    the last requirement and the optimum's node (None: unsatisfiable)."""
    stats = _stats(engine, case, source, _requirement(name, 0.0).needs)
    found = None
    for fraction in fractions:
        requirement = _requirement(name, fraction)
        requirement.bind(stats)
        satisfying = set()
        for node in case.all_nodes():
            expected = _twin_suppressed(case, node, requirement)
            assert stats.evaluate(node, requirement.predicate()).suppressed == expected, f"{name} budget={requirement.budget} node={node}"
            if expected <= requirement.budget and expected < case.n:
                satisfying.add(node)
        lattice = Lattice(stats, requirement, METRICS["precision"]())
        if not satisfying:
            with pytest.raises(UnsatisfiableError):
                LATTICE_SEARCHES["optimal"](lattice)
            continue
        found = LATTICE_SEARCHES["optimal"](lattice).node
        assert found in satisfying, f"{name} budget={requirement.budget}: the optimum {found} does not satisfy the twin"
    return found


def _case(rng, tmp_path, n_rows, plain_names=False):
    """A random table; ``plain_names``: no quote in a column name (Spark's CSV header reader
    keeps a name's quotes)."""
    while True:
        case = brute.random_case(rng, tmp_path, n_qi=2, n_rows=n_rows, depths=[rng.randint(1, 2), rng.randint(1, 2)], weird=False)
        if not plain_names or not any('"' in q for q in case.qis):
            return case


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_node_and_the_optimum_on_duckdb(seed, name, tmp_path):
    rng = random.Random(31337 * seed + sum(map(ord, name)))
    case = _case(rng, tmp_path, rng.randint(30, 150))
    engine = connect(threads=1)
    try:
        check_model(case, engine, Source.open(case.path), name)
    finally:
        engine.close()


def _hierarchy_files(case, tmp_path) -> dict:
    specs = {}
    for q, rows in zip(case.qis, case.hier_rows):
        path = tmp_path / f"h_{q}.csv"
        path.write_text("\n".join(";".join(r) for r in rows) + "\n", encoding="utf-8")
        specs[q] = str(path)
    return specs


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_release_meets_the_twin_class_by_class(name, tmp_path):
    """The written release read back: its classes (all QIs ``*``: suppressed) each pass the
    model's twin, a table-level one refines none away, the suppressed rows fit the budget."""
    rng = random.Random(4242 + sum(map(ord, name)))
    case = _case(rng, tmp_path, 120)
    keys = {"k": 1, "sensitive_column": "disease", "max_suppression": 0.3, **MODELS[name].example}
    out = str(tmp_path / "out.parquet")
    try:
        sqlanon.anonymize(input=case.path, qi=_hierarchy_files(case, tmp_path), keep_others=True, drop_columns=["id"], output=out, search="optimal", metric="precision", **keys)
    except UnsatisfiableError:
        pytest.skip("no transformation satisfies the example here")
    rows = pq.read_table(out).to_pylist()
    released = [r for r in rows if not all(str(r[q]) == STAR for q in case.qis)]
    groups: dict[tuple, list[dict]] = {}
    for r in released:
        groups.setdefault(tuple(str(r[q]) for q in case.qis), []).append(r)
    classes = [{"cnt": len(m), "s_counts": Counter(r[case.sensitive] for r in m), "key": key} for key, m in groups.items()]
    engine = connect(threads=1)
    try:
        requirement = _requirement(name, 0.3)
        requirement.bind(_stats(engine, case, Source.open(case.path), requirement.needs))
    finally:
        engine.close()
    assert all(requirement.released(classes)), f"{name}: a released class fails the twin"
    assert len(rows) - len(released) <= requirement.budget


# ------------------------------------------------------------------------------------------------
# PostgreSQL and Spark




@pytest.mark.postgres
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_node_and_the_optimum_on_postgres(pg_url, name, tmp_path):
    rng = random.Random(7 + sum(map(ord, name)))
    case = _case(rng, tmp_path, rng.randint(30, 100))
    table = "o_" + uuid.uuid4().hex[:10]
    _load_pg(pg_url, case, table)
    engine = connect(database=pg_url)
    try:
        check_model(case, engine, Source(kind="table", table=table, database=pg_url), name)
    finally:
        engine.close()


@pytest.mark.spark
@pytest.mark.parametrize("name", EXAMPLES)
def test_every_node_and_the_optimum_on_spark(spark, name, tmp_path):
    from sqlanon.engine.spark import SparkEngine  # pyspark is optional

    rng = random.Random(11 + sum(map(ord, name)))
    case = _case(rng, tmp_path, 50, plain_names=True)
    view = "o_" + uuid.uuid4().hex[:10]
    spark.read.option("header", True).csv(case.path).createOrReplaceTempView(view)
    check_model(case, SparkEngine(connection=spark), Source(kind="table", table=view), name, fractions=(0.25,))
