"""PostgreSQL's bad cases (issue 41): a database that does not exist, a session terminated by an
administrator, a deadlock, and ``sqlanon report --release`` on a PostgreSQL registry. One line,
the documented exit code, nothing half-written."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest

pgserver = pytest.importorskip("pgserver")
psycopg = pytest.importorskip("psycopg")

from conftest import local_postgres  # noqa: E402
from test_bad_input import error_line, invoke  # noqa: E402
from sqlanon.engine import connect  # noqa: E402
from sqlanon.engine.urls import redact  # noqa: E402
from sqlanon.errors import EngineError  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with local_postgres() as uri:
        yield uri


def _with_db(uri: str, db: str) -> str:
    head, _, query = uri.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{db}" + (f"?{query}" if query else "")


@pytest.fixture
def people(server):
    """A table with a value only one row has (zip 99917) in a fresh database."""
    rnd = random.Random(11)
    rows = [(rnd.choice(["01053", "01068"]), rnd.choice("mf"), rnd.randint(20, 70)) for _ in range(300)] + [("99917", "m", 33)]
    db = "t_" + uuid.uuid4().hex[:10]
    with psycopg.connect(server, autocommit=True) as con:
        con.execute("CREATE DATABASE " + db)
    url = _with_db(server, db)
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE people (zip TEXT, sex TEXT, age INTEGER)")
        with con.cursor().copy("COPY people FROM STDIN") as copy:
            for r in rows:
                copy.write_row(r)
    return url


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as con:
        return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").fetchall()}


def _args(url, *extra):
    return ["anonymize", "--input", url, "--table", "people", "--qi", "zip=mask", "--qi", "sex=flat", "--qi", "age=bands:10,20", "--k", "3",
            "--max-suppression", "0.05", *extra]


@pytest.mark.parametrize("command", ["anonymize", "releases", "report"])
def test_a_database_that_does_not_exist_is_named(server, tmp_path, command):
    url = _with_db(server, "nodb")
    args = {
        "anonymize": _args(url, "--output-table", "people_k3", "-q"),
        "releases": ["releases", "--database", url],
        "report": ["report", "--release", "1", "--database", url, "-o", str(tmp_path / "r.html")],
    }[command]
    result = invoke(args)
    assert result.exit_code == 2, result.output
    assert error_line(result) == f"error: cannot connect to {redact(url)}: database 'nodb' does not exist on that server (check the URL's database name)"
    assert not (tmp_path / "r.html").exists()


def test_report_again_from_a_postgresql_registry(people, tmp_path):
    result = invoke(_args(people, "--output-table", "people_k3", "--json", "-q"))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert isinstance(report["privacy"]["min_class_size"], int) and report["privacy"]["min_class_size"] >= 3
    html = tmp_path / "again.html"
    result = invoke(["report", "--release", str(report["release_id"]), "--database", people, "-o", str(html)])
    assert result.exit_code == 0, result.output
    page = html.read_text(encoding="utf-8")
    assert f'<b class="ok">{report["privacy"]["min_class_size"]}</b>' in page  # k met, shown as a count
    assert "99917" not in page and "99917" not in json.dumps(report)  # the suppressed row's zip


def test_a_session_terminated_by_an_administrator_writes_nothing(people, monkeypatch):
    """``pg_terminate_backend`` from a second connection just before the registry row is
    inserted: the release's transaction is gone with its session, nothing half-written."""
    import sqlanon.release.registry as registry

    record = registry.record

    def terminated_first(engine, entry):
        pid = engine.scalar("SELECT pg_backend_pid()")
        with psycopg.connect(people, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)
        return record(engine, entry)

    monkeypatch.setattr(registry, "record", terminated_first)
    result = invoke(_args(people, "--output-table", "people_k3", "-q"))
    assert result.exit_code == 1, result.output
    line = error_line(result)
    assert line.startswith(f"error: PostgreSQL {redact(people)}: ")
    assert "terminating connection due to administrator command" in line or "connection to the server was lost" in line
    assert "99917" not in result.output
    assert _tables(people) == {"people"}  # no release table, no registry


def test_a_deadlock_names_the_table_and_rolls_back(people):
    with psycopg.connect(people, autocommit=True) as con:
        con.execute("CREATE TABLE dl (id INTEGER PRIMARY KEY, v INTEGER)")
        con.execute("INSERT INTO dl VALUES (1, 0), (2, 0)")
    engine = connect(database=people)
    other = psycopg.connect(people)
    started = threading.Event()

    def rival():
        with other.transaction():
            other.execute("UPDATE dl SET v = 1 WHERE id = 2")
            started.set()
            time.sleep(0.3)  # waits on us before our wait's deadlock check (deadlock_timeout, 1 s): we are the victim
            other.execute("UPDATE dl SET v = 1 WHERE id = 1")

    thread = threading.Thread(target=rival)
    try:
        with pytest.raises(EngineError) as caught:
            with engine.transaction():
                engine.execute("UPDATE dl SET v = 2 WHERE id = 1")
                thread.start()
                started.wait(5)
                engine.execute("UPDATE dl SET v = 2 WHERE id = 2")
    finally:
        thread.join()
        other.close()
    message = str(caught.value)
    assert message.startswith(f"PostgreSQL {redact(people)}, table dl: deadlock with another session (the server rolled back the open transaction)")
    assert "\n" not in message
    rows = dict(engine.fetch_all("SELECT id, v FROM dl"))
    engine.close()
    assert rows == {1: 1, 2: 1}  # the rival's writes; ours were rolled back
