"""The in-process kernels' fresh arrays on small memory pages.

NumPy asks Linux for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every array of 4 MiB
or more. The in-process evaluation (:mod:`sqlanon.stats.local`) makes many such arrays and writes
each once, in order (a roll-up's classes, moved key words, the fetched set's codes), and on the
2-core VM the benchmarks run on a first touch of huge pages costs several times that of small
ones (``python bench/thread_scaling.py`` prints both; docs/measurements.md).
(The arrays the compiled kernels allocate themselves, the nodes' hash tables among them, come
from numba's allocator, which never asked for huge pages.)

Small pages made the in-process search faster on one and on two threads (``bench/scale_spine.py
--huge-pages`` compares by CLI; docs/measurements.md).

:func:`small_pages` turns NumPy's advice off while a kernel call runs and back on after (a
process-wide NumPy setting: nested and concurrent callers are counted, and the setting is put
back when the last leaves). Set :data:`SMALL` false to keep NumPy's default. Where Linux gives
huge pages to every large allocation (``/sys/kernel/mm/transparent_hugepage/enabled`` is
``always``; here it is ``madvise``), NumPy's advice changes nothing and neither does this.

>>> with small_pages():
...     inside = _state["depth"]
>>> inside, _state["depth"]
(1, 0)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: fresh arrays on small pages while the kernels run (False: NumPy's default, huge pages)
SMALL = True

_lock = threading.Lock()
_state: dict = {"depth": 0, "before": True}


def _setter() -> Callable[[bool], bool] | None:
    """NumPy's switch of its huge-page advice (it returns the previous setting), or None where
    this NumPy has none (then nothing is changed)."""
    try:
        from numpy._core.multiarray import _set_madvise_hugepage  # type: ignore[attr-defined]  # NumPy 2
    except ImportError:  # pragma: no cover - NumPy 1
        try:
            from numpy.core.multiarray import _set_madvise_hugepage  # type: ignore[no-redef]
        except ImportError:
            return None
    return _set_madvise_hugepage


@contextmanager
def small_pages() -> Iterator[None]:
    """NumPy's huge-page advice off inside (when :data:`SMALL`), as it was after."""
    setter = _setter() if SMALL else None
    if setter is None:
        yield
        return
    with _lock:
        if _state["depth"] == 0:
            _state["before"] = setter(False)
        _state["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                setter(_state["before"])
