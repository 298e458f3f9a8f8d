"""The engine-parametrized suite's fixtures (a pytest plugin named by tests/conftest.py): one
``engine`` fixture over DuckDB, PostgreSQL and Spark, as ibis runs one suite on every backend.

A test takes ``engine`` (an :class:`EngineUnderTest`) and runs the same options and the same
assertions on each: ``engine.source("research")`` reads the shared data set's table on that engine,
``engine.reference("research")`` is what DuckDB reads to give the answer to compare with,
``engine.output(tmp_path)`` is where that engine writes a release. Parametrize with
:func:`on_engines` (``indirect``) to choose engines or mark a case slow on one of them::

    @pytest.mark.parametrize("engine", on_engines(slow=("spark",)), indirect=True)

Each engine's parameter carries its marker (``postgres``, ``spark``): ``-m "not spark"`` leaves
Spark out, tests/conftest.py groups Spark's cases on one xdist worker (one JVM) and PostgreSQL's by
module (one server per module, started when a module's first PostgreSQL case runs), and an engine
whose client or server is missing skips its cases, as the engine-specific modules do.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import local_postgres

ENGINES = ("duckdb", "postgres", "spark")
MARKS = {"duckdb": (), "postgres": (pytest.mark.postgres,), "spark": (pytest.mark.spark,)}

#: the shared data set: a 400-row population and its research subset (two thirds), typed; and
#: ``people``, 300 other rows, as text in Parquet (the lattice searches' table)
COLUMNS = ["id", "zip", "age", "disease", "buys"]
QI = {"zip": "mask", "age": "bands:5,10,20"}
DISEASE_TREE = [["flu", "respiratory", "*"], ["cold", "respiratory", "*"], ["hiv", "serious", "*"], ["cancer", "serious", "*"]]
TABLES = ("population", "research", "people")


def on_engines(*names: str, slow: tuple[str, ...] = ()) -> list[Any]:
    """``engine`` parameters for ``names`` (every engine when none are given), each with its
    engine's marker, and ``slow`` on the engines named in ``slow``."""
    return [pytest.param(name, marks=[*MARKS[name], *([pytest.mark.slow] if name in slow else [])], id=name) for name in names or ENGINES]


@dataclass
class EngineUnderTest:
    """One engine holding the shared data set."""

    name: str
    data: dict[str, Any]
    url: str | None = None  # PostgreSQL: the database holding the data set's tables
    session: Any = None  # Spark: the SparkSession
    catalog: dict[str, str] = field(default_factory=dict)  # Spark: the data set's tables in its catalog

    def source(self, table: str) -> dict[str, Any]:
        """``anonymize`` keywords that read ``table`` of the data set on this engine."""
        if self.name == "postgres":
            return {"input": self.url, "table": table}
        if self.name == "spark":
            return {"input": self.data["parquet"][table], "connection": self.session}
        return {"input": self.data["parquet"][table]}

    def reference(self, table: str) -> dict[str, Any]:
        """``anonymize`` keywords with which DuckDB reads ``table``, for the answer to compare with
        (PostgreSQL's tests compared with DuckDB reading a CSV copy, Spark's with the Parquet file
        Spark reads: kept so)."""
        return {"input": self.data["csv" if self.name == "postgres" else "parquet"][table]}

    def population(self) -> str:
        """The population as the ``population`` option names it on this engine."""
        if self.name == "postgres":
            return "population"
        if self.name == "spark":
            return self.catalog["population"]
        return self.data["parquet"]["population"]

    def output(self, tmp_path: Path, stem: str = "release") -> str:
        """Where this engine writes a release (Spark writes a directory of Parquet files)."""
        return str(tmp_path / (f"{self.name}_{stem}" if self.name == "spark" else f"{self.name}_{stem}.parquet"))

    def fetch_one(self, sql: str) -> tuple:
        """The first row of a query of this engine's dialect."""
        if self.name == "postgres":
            import psycopg

            with psycopg.connect(self.url) as con:
                return con.execute(sql).fetchone()
        if self.name == "spark":
            return tuple(self.session.sql(sql).collect()[0])
        with duckdb.connect() as con:
            return con.execute(sql).fetchone()


def released(path: str) -> list[dict]:
    """A release's rows, every value as text (NULL as None)."""
    return [{k: (None if v is None else str(v)) for k, v in r.items()} for r in pq.read_table(path).to_pylist()]


def as_dicts(rows) -> list[dict]:
    return [dict(zip(COLUMNS, map(str, r))) for r in rows]


def _parquet(con, rows, path: str) -> None:
    con.execute("CREATE OR REPLACE TABLE t (id INTEGER, zip VARCHAR, age INTEGER, disease VARCHAR, buys VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("COPY t TO '" + path.replace("'", "''") + "' (FORMAT PARQUET)")


@pytest.fixture(scope="session")
def engine_data(tmp_path_factory) -> dict[str, Any]:
    """The shared data set as Parquet files and CSV copies, and a disease tree."""
    d = tmp_path_factory.mktemp("engine-suite")
    rnd = random.Random(11)
    rows = [(i, rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59), rnd.choice(["flu", "cold", "hiv", "cancer"]), rnd.choice(["yes", "no"])) for i in range(400)]
    parts = {"population": rows, "research": [r for r in rows if r[0] % 3 != 0]}
    out: dict[str, Any] = {"dir": d, "rows": rows, "research": parts["research"], "parquet": {}, "csv": {}}
    con = duckdb.connect()
    for name, part in parts.items():
        out["parquet"][name] = str(d / f"{name}.parquet")
        _parquet(con, part, out["parquet"][name])
        out["csv"][name] = str(d / f"{name}.csv")
        Path(out["csv"][name]).write_text("\n".join([",".join(COLUMNS)] + [",".join(map(str, r)) for r in part]) + "\n")
    rnd = random.Random(7)
    people = [[i, rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59), rnd.choice(["flu", "cold", "hiv", "cancer"]), rnd.choice(["yes", "no"])] for i in range(300)]
    out["people"] = people
    out["csv"]["people"], out["parquet"]["people"] = str(d / "people.csv"), str(d / "people.parquet")
    Path(out["csv"]["people"]).write_text("\n".join([",".join(COLUMNS)] + [",".join(map(str, r)) for r in people]) + "\n")
    con.execute("COPY (SELECT * FROM read_csv(?, all_varchar=true)) TO '" + out["parquet"]["people"].replace("'", "''") + "' (FORMAT PARQUET)", [out["csv"]["people"]])
    con.close()
    tree = d / "disease.csv"
    tree.write_text("\n".join(";".join(r) for r in DISEASE_TREE) + "\n")
    out["tree"] = str(tree)
    return out


@pytest.fixture(scope="module")
def postgres_with_data(engine_data) -> Iterator[str]:
    """A PostgreSQL server for the module and a database holding the data set's tables; its URL."""
    psycopg = pytest.importorskip("psycopg")
    with local_postgres() as uri:
        db = "m_" + uuid.uuid4().hex[:10]
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("CREATE DATABASE " + db)
        head, _, query = uri.partition("?")
        url = head.rsplit("/", 1)[0] + "/" + db + (f"?{query}" if query else "")
        with psycopg.connect(url, autocommit=True) as con:
            for name in TABLES:
                part = engine_data["rows"] if name == "population" else engine_data[name]
                con.execute("CREATE TABLE " + name + " (id INTEGER, zip TEXT, age INTEGER, disease TEXT, buys TEXT)")
                with con.cursor().copy("COPY " + name + " FROM STDIN") as copy:
                    for r in part:
                        copy.write_row(r)
        yield url


_CATALOG_TABLES = itertools.count()


@pytest.fixture(scope="module")
def spark_with_data(spark, engine_data) -> Iterator[dict[str, str]]:
    """The population as a table of the Spark catalog (a new name each time the fixture is set up:
    pytest may tear a module fixture down and set it up again when the scheduler interleaves
    modules, and a dropped table's folder need not be gone by then)."""
    name = f"sqlanon_population_{next(_CATALOG_TABLES)}"
    spark.read.parquet(engine_data["parquet"]["population"]).write.saveAsTable(name)
    yield {"population": name}
    spark.sql("DROP TABLE IF EXISTS " + name)


@pytest.fixture(params=on_engines())
def engine(request, engine_data) -> EngineUnderTest:
    """The engine under test, holding the shared data set (see the module's docstring)."""
    name = request.param
    if name == "postgres":
        return EngineUnderTest(name, engine_data, url=request.getfixturevalue("postgres_with_data"))
    if name == "spark":
        catalog = request.getfixturevalue("spark_with_data")
        return EngineUnderTest(name, engine_data, session=request.getfixturevalue("spark"), catalog=catalog)
    return EngineUnderTest(name, engine_data)
