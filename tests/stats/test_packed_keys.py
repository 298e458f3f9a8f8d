"""Packed class keys past 2^31 and 2^63 (issue 44): no statement overflows.

A class key packs every QI's code in mixed radix (:func:`sqlanon.stats.batch.words`), one BIGINT
word while the product of the QIs' widths stays below 2^62. Each QI's part is a list lookup; a
list whose values all fit INT32 binds (DuckDB) or types (a PostgreSQL array literal) as INT32, so
two parts summed before either was a BIGINT overflowed (``Overflow in addition of INT32``) as
soon as a word's prefix passed 2^31: lightning, optimal and the genetic search's lattice seed
crashed on such tables. The tables here are built at exactly those widths:

* ``narrow``: 4 QIs of 1,000, 1,000, 2,000 and 2 leaves: the third part reaches 1.999e9 and the
  fourth 2e9, each an INT32, their sum 4e9 (the joined batch statement; a 3^4 lattice, so the
  optimal search runs too);
* ``wide``: 16 QIs of 36 leaves each (every hierarchy short: coded inline in the base scan and
  the release): the packed key is 36^16 > 2^82, two words, and the first six parts of word 0 are
  INT32s summing to 36^6 - 1 > 2^31 (the joined statement, the branch-per-node statement of
  :mod:`sqlanon.stats.deltas` and the release's suppressed-class keys).

Every search that packs keys runs on both, by SQL and in-process, and its release is re-checked
by the independent checker (k-anonymity, suppression within budget).
"""

from __future__ import annotations

import os
import random
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from checker import check_k, read_rows  # noqa: E402

import sqlanon  # noqa: E402
from sqlanon.stats import deltas  # noqa: E402

INT32_MAX = 2**31 - 1


def _hierarchy(path, leaves: int, widths: list[int]) -> str:
    """An ARX CSV hierarchy over ``0..leaves-1``: bands of each width, then ``*``."""
    with open(path, "w") as fh:
        for v in range(leaves):
            fh.write(";".join([str(v), *[f"{v // w * w}-{v // w * w + w - 1}" for w in widths], "*"]) + "\n")
    return str(path)


def narrow_table(tmp_path) -> tuple[str, dict[str, str], list[str]]:
    """4 QIs of 1,000 / 1,000 / 2,000 / 2 leaves, every row on the highest codes."""
    sizes = {"a": (1000, [10]), "b": (1000, [10]), "c": (2000, [2]), "d": (2, [])}
    qi = {name: _hierarchy(tmp_path / f"{name}.csv", n, widths) for name, (n, widths) in sizes.items()}
    # the parts: c's largest is 1999 x 1e6, d's 1 x 2e9; each fits INT32, their sum does not
    assert 1999 * 1000 * 1000 <= INT32_MAX and 2000 * 1000 * 1000 <= INT32_MAX < 1999 * 10**6 + 2 * 10**9
    rng = random.Random(44)
    lines = ["id,a,b,c,d"]
    for r in range(300):
        lines.append(f"{r},{rng.choice([998, 999])},{rng.choice([998, 999])},{rng.choice([1998, 1999])},{rng.choice([0, 1])}")
    path = tmp_path / "narrow.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path), qi, list(sizes)


WIDE_QIS = [f"c{i}" for i in range(16)]


def wide_table(tmp_path, rows: int = 400) -> tuple[str, dict[str, str], list[str]]:
    """16 QIs of 36 leaves (0..35, bands of 6 and 18, then ``*``); the first six mostly on their
    highest code (35), the others spread over the top few codes."""
    h = _hierarchy(tmp_path / "h36.csv", 36, [6, 18])
    # word 0's first six parts: 35 x 36^5 fits INT32; the six summed reach 36^6 - 1, which does not
    assert 35 * 36**5 <= INT32_MAX < 36**6 - 1 and 36**16 > 2**63
    rng = random.Random(4444)
    lines = ["id," + ",".join(WIDE_QIS)]
    for r in range(rows):
        values = [35 if rng.random() < 0.9 else 34 for _ in range(6)] + [rng.choice([32, 33, 34, 35]) for _ in range(10)]
        lines.append(f"{r}," + ",".join(map(str, values)))
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path), {q: h for q in WIDE_QIS}, WIDE_QIS


def _options(search: str, by_sql: bool) -> dict:
    opts: dict = {}
    if search == "lightning":
        opts = {"step_limit": 300}
    elif search == "genetic":
        opts = {"iterations": 40, "population": 20, "seed": 3}
    if by_sql and search != "bottom-up":
        opts["local_rows"] = 0
    return opts


def _release_checked(tmp_path, path, qi, qis, search, by_sql, k=3, max_suppression=1.0, **extra):
    out = str(tmp_path / f"{search}-{'sql' if by_sql else 'local'}.parquet")
    metric = "lm" if search in ("genetic", "bottom-up") else "loss"
    report = sqlanon.anonymize(input=path, qi=qi, k=k, max_suppression=max_suppression, search=search, metric=metric,
                               search_options=_options(search, by_sql), output=out, keep_columns=["id"], **extra)
    rows = read_rows(out)
    assert len(rows) == 300 if "narrow" in path else len(rows) == 400
    check = check_k(rows, qis, k, max_suppression)
    assert check["ok"], check["problems"]
    assert check["suppressed"] == report.suppressed_rows
    return report


@pytest.mark.parametrize("by_sql", [True, False], ids=["sql", "in-process"])
@pytest.mark.parametrize("search", ["lightning", "optimal", "bottom-up", "genetic"])
def test_narrow_table_past_int32(tmp_path, search, by_sql):
    path, qi, qis = narrow_table(tmp_path)
    _release_checked(tmp_path, path, qi, qis, search, by_sql)


@pytest.mark.parametrize("branches", [True, False], ids=["branch-per-node", "joined"])
@pytest.mark.parametrize("search", ["lightning", "bottom-up", "genetic"])
def test_wide_table_past_int32_and_two_words(tmp_path, monkeypatch, search, branches):
    """By SQL: the joined batch statement, or (``branches``) the branch-per-node statement of
    :mod:`sqlanon.stats.deltas` taken on this small set too; the release finds its suppressed
    rows by their packed keys (inline maps)."""
    monkeypatch.setattr(deltas, "DELTA_ROWS", 0 if branches else 10**18)
    path, qi, qis = wide_table(tmp_path)
    _release_checked(tmp_path, path, qi, qis, search, True, k=4, max_suppression=0.5)


def test_wide_table_in_process(tmp_path):
    path, qi, qis = wide_table(tmp_path)
    _release_checked(tmp_path, path, qi, qis, "lightning", False, k=4, max_suppression=0.5)


@pytest.mark.postgres
def test_narrow_and_wide_tables_on_postgres(tmp_path):
    """The same statements on PostgreSQL (whose ``integer`` overflows too): the table copied
    into a fresh database, lightning by SQL, the release re-checked."""
    psycopg = pytest.importorskip("psycopg")
    pytest.importorskip("pgserver")
    from conftest import local_postgres

    with local_postgres() as uri:
        for make, k, sup in ((narrow_table, 3, 1.0), (wide_table, 4, 0.5)):
            sub = tmp_path / make.__name__
            sub.mkdir()
            path, qi, qis = make(sub)
            lines = open(path).read().split()
            header = lines[0].split(",")
            table = make.__name__
            with psycopg.connect(uri, autocommit=True) as con:
                con.execute("CREATE TABLE " + table + " (" + ", ".join(f"{c} INTEGER" for c in header) + ")")
                with con.cursor().copy("COPY " + table + " FROM STDIN") as copy:
                    for line in lines[1:]:
                        copy.write_row([int(v) for v in line.split(",")])
            out = str(sub / "pg.parquet")
            report = sqlanon.anonymize(input=uri, table=table, qi=qi, k=k, max_suppression=sup, search="lightning", metric="loss",
                                       search_options={"step_limit": 200, "local_rows": 0}, output=out, keep_columns=["id"])
            rows = read_rows(out)
            check = check_k([{q: str(r[q]) for q in qis} for r in rows], qis, k, sup)
            assert check["ok"], check["problems"]
            assert check["suppressed"] == report.suppressed_rows
