"""The in-process kernels' fresh arrays on small pages (sqlanon/stats/pages.py): NumPy's huge-page
advice is off while an evaluation or the fetch runs, and as it was afterwards, also when calls
nest, run side by side or raise."""

from __future__ import annotations

import threading

import pytest

from sqlanon.stats import local, pages
from sqlanon.stats.memory import Memory

setter = pages._setter()
pytestmark = pytest.mark.skipif(setter is None, reason="this NumPy has no huge-page switch")


def advised() -> bool:
    """NumPy's huge-page advice now (read by setting it back at once)."""
    assert setter is not None
    now = setter(True)
    setter(now)
    return bool(now)


@pytest.fixture(autouse=True)
def advice_on():
    before = setter(True)
    yield
    setter(before)
    assert pages._state["depth"] == 0


def test_off_inside_and_back_after_nesting_and_errors():
    with pages.small_pages():
        assert not advised()
        with pages.small_pages():
            assert not advised()
        assert not advised()  # the outer caller still runs
    assert advised()
    with pytest.raises(KeyError):
        with pages.small_pages():
            raise KeyError("x")
    assert advised()


def test_a_setting_the_caller_made_is_kept():
    setter(False)
    with pages.small_pages():
        assert not advised()
    assert not advised()
    setter(True)


def test_switched_off_leaves_numpy_alone(monkeypatch):
    monkeypatch.setattr(pages, "SMALL", False)
    with pages.small_pages():
        assert advised()
    assert pages._state["depth"] == 0


def test_side_by_side_callers_put_it_back_when_the_last_leaves():
    inside, leave = threading.Event(), threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with pages.small_pages():
            inside.set()
            leave.wait(5)
            seen.append(advised())

    t = threading.Thread(target=other)
    with pages.small_pages():
        t.start()
        assert inside.wait(5)
    assert not advised()  # the other thread is still inside
    leave.set()
    t.join(5)
    assert seen == [False] and advised()


def test_evaluation_and_fetch_run_on_small_pages(monkeypatch):
    seen: list[tuple[str, bool]] = []
    monkeypatch.setattr(local, "_evaluate", lambda *a, **k: seen.append(("evaluate", advised())) or [])
    assert local.evaluate(None, [], None) == []

    class Stats:
        base = object()
        memory = Memory()

    monkeypatch.setattr(local.sets, "enabled", lambda stats: True)
    monkeypatch.setattr(local.sets, "_fetched", lambda stats: seen.append(("fetch", advised())) or "set")
    assert local.sets.local_set(Stats()) == "set"
    assert seen == [("evaluate", False), ("fetch", False)] and advised()
