"""``SQLANON_LOG=DEBUG`` logs every statement with its literals as ``?``: no value of the table
(a hierarchy's leaves inlined in a mapping table, a value compared against) reaches the log
unless ``SQLANON_LOG_SQL=full`` asks for statements verbatim (sqlanon/engine/statement_log.py)."""

import logging
import os
import subprocess
import sys
import paths

import pytest
from sqlglot import exp

import sqlanon
from engine_suite import on_engines
from sqlanon.engine.statement_log import logged_text

ROOT = str(paths.ROOT)
#: values only the table holds: each must stay out of a redacted log
CITIES = ["Xanthippeville", "Quuxburg-on-Wold"]
ZIP = "98765"


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "people.csv"
    rows = [f"{ZIP if i % 3 == 0 else 10000 + (i * 7919) % 90},{18 + (i * 31) % 70},{CITIES[i % 2]}\n" for i in range(600)]
    path.write_text("zip,age,city\n" + "".join(rows))
    return tmp_path, str(path)


def run_cli(tmp, path, **env):
    args = [sys.executable, "-m", "sqlanon", "anonymize", "--input", path, "--qi", "zip=mask", "--qi", "age=bands:5,10,20",
            "--qi", "city=flat", "--k", "5", "--output", str(tmp / "out.parquet"), "--overwrite", "--json", "-q"]
    environ = {k: v for k, v in os.environ.items() if k != "SQLANON_LOG_SQL"}
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, env={**environ, "SQLANON_LOG": "DEBUG", "PYTHONPATH": ROOT, **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    sql = [line for line in proc.stderr.splitlines() if " sqlanon.sql DEBUG " in line]
    assert len(sql) > 5, proc.stderr[-2000:]
    return "\n".join(sql)


def test_debug_log_names_no_value_of_the_table(table):
    tmp, path = table
    log = run_cli(tmp, path)
    for value in [*CITIES, ZIP]:
        assert value not in log
    assert "?" in log and "GROUP BY" in log.upper()


def test_full_opt_in_logs_statements_verbatim(table):
    """The opt-in is what puts the values back: the redacted run above is not blind by accident."""
    tmp, path = table
    log = run_cli(tmp, path, SQLANON_LOG_SQL="full")
    assert any(c in log for c in CITIES) and ZIP in log


def test_literals_of_a_tree_and_of_a_text_are_hidden():
    tree = exp.select("a").from_("t").where(exp.column("b").isin(exp.Literal.string("Quuxburg"), exp.Literal.number(42)))
    assert logged_text(tree, "postgres", environ={}) == "SELECT a FROM t WHERE b IN (?, ?)"
    assert "Quuxburg" in tree.sql()  # the tree logged is left as it was
    assert logged_text("SELECT 'x' || name FROM t LIMIT 3", "duckdb", environ={}) == "SELECT ? || name FROM t LIMIT ?"
    assert "withheld" in logged_text("SELEC 'Quuxburg' FRM", "duckdb", environ={})
    assert "Quuxburg" not in logged_text("SELEC 'Quuxburg' FRM", "duckdb", environ={})


@pytest.fixture
def where(request, table):
    """The table on the engine of the parameter (PostgreSQL: a server of the test's own, the rows
    copied in; the release a table there), as ``anonymize`` keywords."""
    tmp, path = table
    if request.param == "duckdb":
        yield {"input": path, "output": str(tmp / "api.parquet")}
        return
    from conftest import local_postgres

    import psycopg

    with local_postgres() as url:
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute("CREATE TABLE people (zip text, age integer, city text)")
            with pg.cursor() as cur, cur.copy("COPY people FROM STDIN") as copy:
                for line in open(path, encoding="utf-8").read().splitlines()[1:]:
                    z, a, c = line.split(",")
                    copy.write_row((z, int(a), c))
        yield {"input": url, "table": "people", "output_table": "people_k5"}


@pytest.mark.parametrize("where", on_engines("duckdb", "postgres"), indirect=True)
def test_python_api_log_names_no_value_of_the_table(where, caplog, monkeypatch):
    """The Python API's statement log is redacted too; PostgreSQL runs its own statements (mapping
    tables copied in, suppressed classes, the release): none of them shows a value of the table."""
    monkeypatch.delenv("SQLANON_LOG_SQL", raising=False)
    with caplog.at_level(logging.DEBUG, logger="sqlanon.sql"):
        release = sqlanon.anonymize(qi={"zip": "mask", "age": "bands:5,10,20", "city": "flat"}, k=5, max_suppression=0.1, **where)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "sqlanon.sql")
    assert release.rows == 600 and text.count("\n") > 5
    assert not any(v in text for v in [*CITIES, ZIP])
