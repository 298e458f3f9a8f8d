"""The limit contract of the heuristic searches (lightning, genetic, bottom-up).

**What a time limit covers.** A run's ``--time-limit`` counts from the run's start: the search is
given what the hierarchies and the base scan left of it (:func:`sqlanon.run.api.charged_time_limit`),
and its clock starts when the search starts: everything the search does counts, its own
frequency sets (the genetic search's ``gbase``, the bottom-up search's vids), a lattice seed,
scoring the first population, every evaluation. The verification of the returned plan, the
utility/risk figures and the write come after and do not count (the write is never cut short).

**How it is kept.** The clock is read before every statement a search sends, and a statement is
sized to the time left: :meth:`Limits.room` caps the units of work (nodes, candidates) of the next
statement by the time left divided by the measured seconds per unit (the slowest of the recent
statements, so a loaded machine shrinks the batches at once). When not even one unit fits, the
search stops (``stopped_by: "time_limit"``) and returns the best it has; the overrun is one
statement's misestimate, a few percent of a limit of seconds. A search always sends its first
statement (without an answer there is nothing to release).

**What is reported.** ``stopped_by`` (``time_limit``, ``step_limit``, or how the search ended by
itself), evaluations done and seconds, in the JSON and in the search's last message.

Tests replace :data:`clock` by a fake time source:

>>> t = [0.0]
>>> limits = Limits(10.0, clock=lambda: t[0])
>>> def statement():  # a statement of 32 nodes takes 2 s
...     t[0] += 2.0
>>> limits.run(32, statement); limits.room(32)
32
>>> t[0] = 9.0; limits.room(32)  # 1 s left: 16 nodes fit
16
>>> t[0] = 9.99; limits.room(32), limits.stopped_by
(0, 'time_limit')
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import TypeVar
from collections.abc import Callable

T = TypeVar("T")

#: the time source every limit reads (tests monkeypatch it with a fake clock)
clock: Callable[[], float] = time.perf_counter
#: how many recent statements the per-unit cost is taken from
RECENT = 8


def now() -> float:
    return clock()


class Limits:
    """A time limit (seconds, ``None``: none) and a step limit (units of work, ``None``: none)."""

    def __init__(self, time_limit: float | None, step_limit: int | None = None, clock: Callable[[], float] | None = None) -> None:
        self.time_limit = time_limit
        self.step_limit = step_limit
        self._clock = clock
        self.started = self.now()
        self.steps = 0
        self.statements = 0
        self.stopped_by: str | None = None
        self._recent: deque = deque(maxlen=RECENT)  # seconds per unit of recent statements

    def now(self) -> float:
        return self._clock() if self._clock is not None else clock()

    def elapsed(self) -> float:
        return self.now() - self.started

    def left(self) -> float:
        return math.inf if self.time_limit is None else self.time_limit - self.elapsed()

    def per_unit(self) -> float | None:
        """Seconds per unit of work: the slowest of the recent statements (None before any)."""
        return max(self._recent) if self._recent else None

    def room(self, wanted: int) -> int:
        """How many of ``wanted`` units the next statement may hold (0: stop, ``stopped_by`` says
        why). The first statement of a search always runs."""
        if self.stopped_by:
            return 0
        if wanted <= 0:
            return 0
        if self.step_limit is not None:
            wanted = min(wanted, self.step_limit - self.steps)
            if wanted <= 0:
                self.stopped_by = "step_limit"
                return 0
        if self.time_limit is None or self.statements == 0:
            return wanted
        left = self.left()
        cost = self.per_unit()
        fits = wanted if not cost else int(left / cost)
        if left <= 0 or fits < 1:
            self.stopped_by = "time_limit"
            return 0
        return min(wanted, fits)

    def expired(self) -> bool:
        """Is the time (or the step budget) used up? (for work between statements)"""
        if self.stopped_by:
            return True
        if self.step_limit is not None and self.steps >= self.step_limit:
            self.stopped_by = "step_limit"
        elif self.time_limit is not None and self.statements and self.left() <= 0:
            self.stopped_by = "time_limit"
        return self.stopped_by is not None

    def run(self, units: int, work: Callable[[], T], steps: int | None = None) -> T:
        """Run one statement of ``units`` units of work, timing it; ``steps`` (default ``units``)
        count against the step limit."""
        t0 = self.now()
        out = work()
        self.record(units, self.now() - t0, steps)
        return out

    def record(self, units: int, seconds: float, steps: int | None = None) -> None:
        self.statements += 1
        self.steps += units if steps is None else steps
        if units > 0:
            self._recent.append(max(seconds, 0.0) / units)

    def describe(self) -> dict:
        return {"stopped_by": self.stopped_by, "seconds": round(self.elapsed(), 3), "time_limit": self.time_limit, "step_limit": self.step_limit}


#: a release is "near the top" when this share of its rows is suppressed, or when ARX's arithmetic
#: Loss (per QI the released values' mean domain share, normalized; 1 = every value at the root or
#: suppressed) reaches it: nearly everything is generalized away
NEAR_TOP = 0.9


def near_top_warning(report: dict) -> dict | None:
    """A warning when the plan keeps nearly nothing (``None`` otherwise), naming what caused it:
    the limit the search stopped by, or the requirement itself.

    >>> near_top_warning({"search": "lightning", "rows": 100, "suppressed_rows": 99, "stopped_by": "step_limit",
    ...                   "nodes_evaluated": 1})["message"]  # doctest: +NORMALIZE_WHITESPACE
    'the release keeps nearly nothing (99 of 100 rows suppressed): the lightning search stopped by its step_limit after 1
    evaluations; a larger --step-limit may find a better release'
    """
    rows = report.get("rows") or 0
    suppressed = report.get("suppressed_rows") or 0
    loss = (report.get("arx_quality") or {}).get("loss_arithmetic")
    if not rows or (suppressed < NEAR_TOP * rows and (loss is None or loss < NEAR_TOP)):
        return None
    what = f"{suppressed:,} of {rows:,} rows suppressed" + (f", ARX loss {loss:.3f}" if loss is not None else "")
    cause = report.get("stopped_by")
    search = report.get("search")
    if cause in ("time_limit", "step_limit"):
        evaluations = report.get("evaluations", report.get("nodes_evaluated"))
        why = (f"the {search} search stopped by its {cause} after {evaluations} evaluations; "
               f"a larger --{cause.replace('_', '-')} may find a better release")
    else:
        cause = "requirement"
        why = f"the {search} search found nothing better under the privacy model and suppression budget"
    return {"kind": "near_top", "cause": cause, "threshold": NEAR_TOP, "message": f"the release keeps nearly nothing ({what}): {why}"}
