"""Running real dbt from the tests (dbt-core 1.11 with dbt-duckdb and dbt-postgres): the ``dbt``
command beside this Python, an environment without usage stats, and a PostgreSQL profile for the
server of ``conftest.local_postgres``. dbt is an optional dependency: tests skip without it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

_BESIDE = os.path.join(os.path.dirname(sys.executable), "dbt")
DBT = shutil.which("dbt") or (_BESIDE if os.path.exists(_BESIDE) else None)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def has_adapter(name: str) -> bool:
    import importlib.util

    return DBT is not None and importlib.util.find_spec(f"dbt.adapters.{name}") is not None


def env(uri: str | None = None) -> dict:
    """The environment of a dbt run: this checkout's sqlanon first on the path; with a
    PostgreSQL URI, the PG* variables the example's ``pg`` profile reads."""
    out = dict(os.environ, DBT_SEND_ANONYMOUS_USAGE_STATS="false", DBT_NO_VERSION_CHECK="true", PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    if uri:
        u = urlparse(uri)
        out.update(PGHOST=u.hostname or parse_qs(u.query)["host"][0], PGPORT=str(u.port or 5432), PGUSER=u.username or "postgres", PGPASSWORD=u.password or "", PGDATABASE=u.path.lstrip("/") or "postgres")
    return out


def run(project, *args, uri: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([DBT, *args, "--profiles-dir", str(project), "--project-dir", str(project)], cwd=project, capture_output=True, text=True, env=env(uri))
    if ok:
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return proc


def results(project) -> dict[str, dict]:
    """The last invocation's results by node name (``run_results.json``)."""
    with open(os.path.join(project, "target", "run_results.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    return {r["unique_id"].split(".")[2]: r for r in data["results"]}


def use_package(project) -> None:
    """Point the project's ``packages.yml`` at this checkout's sqlanon_dbt (a copied project's
    relative path no longer reaches it)."""
    path = os.path.join(project, "packages.yml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"packages:\n  - local: {json.dumps(os.path.join(ROOT, 'dbt', 'sqlanon_dbt'))}\n")
