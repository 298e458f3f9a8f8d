import contextlib
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# The helpers here (checker, oracle_brute, paths, ...) and every test folder are importable by module
# name: the folders mirror the package, and a test imports another's fixtures and builders
# (``from test_oracle_search import make_stats``) as it did when the files sat side by side.
TEST_FOLDERS = sorted(
    root for root, dirs, files in os.walk(HERE) if any(f.startswith("test_") and f.endswith(".py") for f in files) and "__pycache__" not in root
)
for _folder in reversed([HERE, *TEST_FOLDERS]):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

#: the engine-parametrized suite's ``engine`` fixture (tests/engines/engine_suite.py)
pytest_plugins = ["engine_suite"]

SHARED = os.environ.get("SQLANON_SHARED", os.path.abspath(os.path.join(HERE, "..", "..", "shared")))
ADULT = os.path.join(SHARED, "datasets", "adult")
ADULT_FULL = os.path.join(SHARED, "datasets", "adult-full")
EXAMPLE = os.path.abspath(os.path.join(HERE, "..", "examples", "adult"))
ADULT_COLUMNS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"]


def adult_dir() -> str:
    """The Adult benchmark: ../shared when present, else the copy bundled in examples/."""
    if os.path.isfile(os.path.join(ADULT, "adult.csv")):
        return ADULT
    return EXAMPLE


@pytest.fixture(scope="session")
def adult():
    d = adult_dir()
    return {
        "dir": d,
        "csv": os.path.join(d, "adult.csv"),
        "columns": ADULT_COLUMNS,
        "qi": {c: os.path.join(d, f"adult_hierarchy_{c}.csv") for c in ADULT_COLUMNS},
    }


def qi_flags(qi: dict) -> list[str]:
    out = []
    for c, spec in qi.items():
        out += ["--qi", f"{c}={spec}"]
    return out


@contextlib.contextmanager
def local_postgres():
    """A PostgreSQL server from the pgserver wheel, for one test module; yields its URI. Its data
    directory is made outside pytest's base temp: pytest keeps only its last three base temps, so
    another pytest run on the machine could delete a running server's directory, and it resets them
    to mode 700 while the server runs as its own user when tests run as root."""
    pgserver = pytest.importorskip("pgserver")
    pytest.importorskip("psycopg")
    data = tempfile.mkdtemp(prefix="sqlanon-pg-")
    srv = pgserver.get_server(data, cleanup_mode="stop")
    try:
        yield srv.get_uri()
    finally:
        srv.cleanup()
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession for every Spark test module (the JVM starts once per run).
    Small-data settings: two shuffle partitions, no UI, no adaptive re-planning (each statement
    here reads kilobytes; AQE's extra stage planning costs more than it saves), the JIT limited to
    its quick tier and the serial collector (short runs on 2 cores). Managed tables live in a
    warehouse folder of this run (Spark's default, ``./spark-warehouse``, would put them in the
    checkout and keep a table's folder from an earlier or interrupted run, which makes
    ``saveAsTable`` fail with LOCATION_ALREADY_EXISTS)."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("sqlanon-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
        .config("spark.driver.extraJavaOptions", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``pytest -n N`` (pytest-xdist) schedules by group (``--dist loadgroup``) unless another
    ``--dist`` is given: see :func:`pytest_collection_modifyitems`."""
    if config.getoption("dist") != "load":
        return None
    from xdist.scheduler import LoadGroupScheduling

    return LoadGroupScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``-n auto``, scheduled by group): every test marked
    ``spark`` runs on one worker, so one JVM (the session fixture) serves them all; the tests of a
    module marked ``postgres`` run on one worker, so its module-scoped server starts once; the
    other tests spread over every worker."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))
        elif item.get_closest_marker("postgres") is not None:
            item.add_marker(pytest.mark.xdist_group("postgres-" + item.module.__name__))


@pytest.fixture(scope="session", autouse=True)
def _check_precedence_of_every_statement():
    """With ``SQLANON_CHECK_PRECEDENCE=1``, every statement rendered by a dialect during the run is
    checked to mean the tree that was built (:mod:`precedence`): slow, for a periodic sweep."""
    if os.environ.get("SQLANON_CHECK_PRECEDENCE") != "1":
        yield
        return
    import sqlglot.errors

    from precedence import assert_precedence_kept
    from sqlanon.dialect.base import Dialect

    original = Dialect.render

    def render(self, expression, pretty=False, copy=True):
        if not isinstance(expression, str):
            try:
                assert_precedence_kept(expression.copy(), lambda t: original(self, t), self.name or "duckdb")
            except sqlglot.errors.SqlglotError:
                pass  # a statement sqlglot cannot read back (COPY options, CACHE TABLE ..) is not checked
        return original(self, expression, pretty=pretty, copy=copy)

    Dialect.render = render
    try:
        yield
    finally:
        Dialect.render = original


@pytest.fixture(autouse=True)
def _other_engines_by_sql(request, monkeypatch):
    """A test on PostgreSQL or Spark compares that engine's statements with DuckDB's, so its nodes
    and genetic candidates go by SQL on both sides: once the compiled kernels of
    :mod:`sqlanon.stats.local` are loaded in a worker (by an earlier test), small base sets would
    otherwise be evaluated in-process and those engines' statements left untested. A test marked
    ``local_eval`` keeps the in-process path (tests/engines/test_postgres.py has one)."""
    node = request.node
    if (node.get_closest_marker("spark") or node.get_closest_marker("postgres")) and not node.get_closest_marker("local_eval"):
        from sqlanon.stats import local

        monkeypatch.setattr(local, "LOCAL_ROWS", 0)
    yield


@pytest.fixture
def sql_only(monkeypatch):
    """Every node by SQL statements (no in-process evaluation over the fetched base set,
    :mod:`sqlanon.stats.local`): for tests of the statements themselves or of their counts."""
    from sqlanon.stats import local

    monkeypatch.setattr(local, "LOCAL_ROWS", 0)
