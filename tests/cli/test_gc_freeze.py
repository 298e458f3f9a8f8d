"""The CLI's process freezes its objects out of the cyclic garbage collector (``gc.freeze``): at
its start, and again once the compiled kernels have loaded (``sqlanon.stats.local.FREEZE_GC``);
a library call (the flag off) leaves the host's collector alone. The CLI also loads the kernels
without SciPy's linear algebra (``sqlanon.stats.local.HIDE_SCIPY_BLAS``)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from sqlanon.stats import local


def test_the_kernels_load_then_freeze_when_asked(monkeypatch):
    calls: list[tuple[bool, bool]] = []  # per freeze: kernels ready, collector on
    monkeypatch.setattr(gc, "freeze", lambda: calls.append((bool(local._WARM.get("ready")), gc.isenabled())))
    during: list[bool] = []
    load = local._load
    monkeypatch.setattr(local, "_load", lambda: during.append(gc.isenabled()) or load())
    monkeypatch.setattr(local, "FREEZE_GC", False)
    local._warm()
    assert local._WARM.get("ready") and calls == [] and during == [True]  # a library call: the host's collector untouched
    monkeypatch.setattr(local, "FREEZE_GC", True)
    local._warm()
    assert calls == [(True, False)] and during == [True, False] and gc.isenabled()  # loaded with it off, frozen, on again
    gc.disable()  # a collector the host had turned off stays off
    try:
        local._warm()
        assert not gc.isenabled() and calls[-1] == (True, False)
    finally:
        gc.enable()


CLI = """
import atexit, gc
from sqlanon.stats import local
real = gc.freeze
gc.freeze = lambda: print("frozen", local.FREEZE_GC) or real()
atexit.register(lambda: print("flag", local.FREEZE_GC, "frozen objects", gc.get_freeze_count() > 1000))
from sqlanon.cli.app import main
main()
"""


def test_the_cli_freezes_at_start_and_asks_for_it_after_the_load():
    run = subprocess.run([sys.executable, "-c", CLI, "--version"], capture_output=True, text=True)
    lines = run.stdout.splitlines()
    assert run.returncode == 0, run.stderr
    assert lines[0] == "frozen False" and lines[1].startswith("sqlanon ") and lines[-1] == "flag True frozen objects True", lines


HIDDEN = """
import sys
from sqlanon.stats import local
local.HIDE_SCIPY_BLAS = {hide}
assert local.warm_up(wait=True), local._WARM.get("error")
print("numba", "numba" in sys.modules, "linalg", "scipy.linalg" in sys.modules)
import scipy.linalg  # importable as usual after the load
print("after", scipy.linalg.__name__)
"""


def test_the_kernels_load_without_scipys_linear_algebra_when_asked():
    """numba's import checks for SciPy's BLAS by importing scipy.linalg (0.25-0.3 s): with
    ``HIDE_SCIPY_BLAS`` (the CLI's) the kernels load without it, and SciPy imports after."""
    pytest.importorskip("scipy.linalg")  # the test extra's scikit-learn brings SciPy
    for hide, linalg in ((True, False), (False, True)):
        run = subprocess.run([sys.executable, "-c", HIDDEN.format(hide=hide)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["numba", "True", "linalg", str(linalg), "after", "scipy.linalg"], (hide, run.stdout)


def test_hiding_scipy_leaves_a_scipy_already_loaded_alone():
    pytest.importorskip("scipy.linalg")
    import scipy.linalg

    with local._scipy_blas_hidden(True):
        assert sys.modules["scipy.linalg"] is scipy.linalg
    assert sys.modules["scipy.linalg"] is scipy.linalg
    with local._scipy_blas_hidden(False):
        assert sys.modules["scipy.linalg"] is scipy.linalg


def test_the_cli_asks_for_the_kernels_without_scipy():
    run = subprocess.run([sys.executable, "-c", CLI.replace('print("flag", local.FREEZE_GC', 'print("flag", local.FREEZE_GC and local.HIDE_SCIPY_BLAS'), "--version"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "flag True frozen objects True", run.stdout
