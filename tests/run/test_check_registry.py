"""The checker iterates the privacy registry: a model that declares a measured figure
(:mod:`sqlanon.privacy.figure`) is a keyword of :func:`sqlanon.check`, measured over the
released classes and given a verdict, with no edit of the checker; the signature of ``check``
and the flags of ``sqlanon check`` are the registry's check keys."""

from __future__ import annotations

import inspect

import duckdb
import pytest
from sqlglot import exp

import sqlanon
from sqlanon.cli.app import check as check_command
from sqlanon.cli.flags import flag_paths
from sqlanon.expr.atoms import col
from sqlanon.privacy import registry
from sqlanon.privacy.base import PrivacyModel
from sqlanon.privacy.figure import Figure, released
from sqlanon.privacy.keys import PolicyKey
from sqlanon.run import by_release
from sqlanon.run.check import check


class _LargestClass(Figure):
    def aggregates(self, stats, not_star, opts):
        return [(self.out, exp.Max(this=released(not_star, col("cnt"))))]


class ToyMaxClass(PrivacyModel):
    """A toy model: every released class holds at most ``toy_max`` rows."""

    name = "toy-max-class"
    policy_keys = (PolicyKey("toy_max", int, help="toy: the largest class allowed."),)
    asks = ("toy_max",)
    figure = _LargestClass(("toy_max",), "m", "toy_largest_class", at_most=True, stored={"m": "toy_max"})


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(registry.MODELS, ToyMaxClass.name, ToyMaxClass)
    return ToyMaxClass


@pytest.fixture
def table(tmp_path):
    db = str(tmp_path / "t.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE t AS SELECT (i % 3)::VARCHAR AS a, (i % 2)::VARCHAR AS b FROM range(25) r(i)")
    largest = con.execute("SELECT max(n) FROM (SELECT count(*) AS n FROM t GROUP BY a, b)").fetchone()[0]
    con.close()
    return db, largest


def test_a_registered_figure_is_a_check_keyword(toy, table):
    db, largest = table
    assert "toy_max" in registry.check_keys() and registry.figures()[toy.name] is toy.figure
    got = check(db, ["a", "b"], table="t", toy_max=largest)
    assert got["toy_largest_class"] == largest  # the figure, measured by its own aggregate (an independent GROUP BY above)
    assert "toy_largest_class" not in check(db, ["a", "b"], table="t")  # not asked: not measured


def test_a_registered_figure_gets_its_verdict(toy, table):
    db, largest = table
    out = check(db, ["a", "b"], table="t", toy_max=largest)
    opts = {key: None for key in registry.check_keys()}
    held, _ = by_release.verdicts(out, {**opts, "toy_max": largest}, 0, [{"model": toy.name, "m": largest}])
    failed, _ = by_release.verdicts(out, {**opts, "toy_max": largest - 1}, 0, [{"model": toy.name, "m": largest - 1}])
    assert held == [{"model": toy.name, "required": f"m={largest}", "measured": largest, "ok": True}]
    assert failed[0]["ok"] is False
    assert toy.figure.from_release({"model": toy.name, "m": 4}) == {"toy_max": 4}


def test_a_keyword_no_figure_reads_is_refused(table):
    db, _ = table
    with pytest.raises(TypeError, match="toy_max"):
        check(db, ["a", "b"], table="t", toy_max=3)  # not registered here


def test_the_signature_and_the_flags_are_the_check_keys():
    keys = list(registry.check_keys())
    params = inspect.signature(sqlanon.run.check.check).parameters
    assert [name for name in params if name in keys] == keys
    assert all(params[name].kind is inspect.Parameter.KEYWORD_ONLY and params[name].default is None for name in keys)
    paths = flag_paths(check_command)
    assert sorted(name for name, path in paths.items() if path.startswith("privacy.")) == sorted(keys)


def test_a_registered_figures_flag_is_read_by_the_check_command(toy):
    """``sqlanon check`` refuses flags its kind of check does not read; a registered figure's
    flag is read (the set comes from the registry's check keys), an unregistered one refused."""
    from sqlanon.cli.app import _refuse_unused_check_flags
    from sqlanon.errors import ConfigError

    _refuse_unused_check_flags({"--toy-max": 3, "--k": 2}, None, None, False)
    with pytest.raises(ConfigError, match="--toy-max not used by --transformation"):
        _refuse_unused_check_flags({"--toy-max": 3}, None, "a:1", False)
    registry.MODELS.pop(toy.name)
    with pytest.raises(ConfigError, match="--toy-max not used by this check"):
        _refuse_unused_check_flags({"--toy-max": 3}, None, None, False)
