"""Progress and logging of a run.

* ``logging``: messages of a run go to the logger ``sqlanon`` (INFO); every SQL statement an
  engine executes goes to ``sqlanon.sql`` (DEBUG). sqlanon installs no handler (a library must
  not); the CLI turns them on with ``SQLANON_LOG=INFO`` or ``SQLANON_LOG=DEBUG``.
* :class:`Reporter`: what :func:`sqlanon.anonymize` reports to. Its ``progress=`` argument may
  be a callable taking a message (as before) or a Reporter. A run has three phases: the base
  scan, the search and the write; :meth:`Reporter.phase` marks them.
* :class:`RichReporter`: the CLI's on a terminal: a live line per phase on stderr (spinner,
  bar, counts, elapsed time) with the messages above it. The base scan and the write are one
  statement each: their bar is DuckDB's own progress of that statement (``query_progress``,
  polled from a thread; DuckDB's printing stays off so stdout is never touched). The CLI uses it
  only when stderr is a TTY and neither ``--json`` nor ``--quiet`` is given; otherwise it is
  silent.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from sqlanon.errors import SqlanonError

log = logging.getLogger("sqlanon")
#: seconds between the lines a plain reporter prints while a phase lasts (0: none)
HEARTBEAT = 5.0


class Phase:
    """A handle on a running phase: ``update(completed, total, note)`` (a count, e.g. nodes;
    ``note``: a short state shown beside the bar, e.g. a code table's size so far)."""

    def update(self, completed: float, total: float | None = None, note: str | None = None) -> None:
        pass


class Reporter:
    """Messages to a callback (and the ``sqlanon`` logger); phases are logged at DEBUG."""

    def __init__(self, say: Callable[[str], None] | None = None) -> None:
        self._say = say

    def message(self, text: str) -> None:
        log.info("%s", text)
        if self._say is not None:
            self._say(text)

    @contextlib.contextmanager
    def phase(self, name: str, total: float | None = None, engine=None) -> Iterator[Phase]:
        """A phase; with a callback, a line every :data:`HEARTBEAT` seconds while it lasts
        (a long base scan or write is one statement: without it, nothing would say it runs)."""
        log.debug("phase %s: start", name)
        stop = threading.Event()
        beat = None
        if self._say is not None and HEARTBEAT:
            started = time.perf_counter()

            def run() -> None:
                while not stop.wait(HEARTBEAT):
                    self.message(f"{name}: still running ({time.perf_counter() - started:.0f} s)")

            beat = threading.Thread(target=run, daemon=True, name="sqlanon-heartbeat")
            beat.start()
        try:
            yield Phase()
        finally:
            stop.set()
            if beat is not None:
                beat.join()
            log.debug("phase %s: end", name)


def as_reporter(progress) -> Reporter:
    if isinstance(progress, Reporter):
        return progress
    return Reporter(progress)


class _RichPhase(Phase):
    def __init__(self, bar, task, name: str = "") -> None:
        self.bar, self.task, self.name = bar, task, name

    def update(self, completed: float, total: float | None = None, note: str | None = None) -> None:
        extra: dict[str, float | str] = {"total": total} if total is not None else {}
        if note is not None:
            extra["description"] = f"{self.name} ({note})"
        self.bar.update(self.task, completed=completed, **extra)


class RichReporter(Reporter):
    """Live progress on stderr with rich (the CLI, on a terminal)."""

    def __init__(self, console=None) -> None:
        super().__init__(None)
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = console if console is not None else Console(stderr=True)
        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=self.console, transient=False)

    def message(self, text: str) -> None:
        log.info("%s", text)
        self.console.print(f"sqlanon: {text}", markup=False, highlight=False)

    @contextlib.contextmanager
    def phase(self, name: str, total: float | None = None, engine=None) -> Iterator[Phase]:
        poll = _query_progress(engine)
        self.bar.start()
        task = self.bar.add_task(name, total=100 if poll else total)
        handle = _RichPhase(self.bar, task, name)
        stop = threading.Event()
        thread = None
        if poll:
            def run() -> None:
                while not stop.wait(0.2):
                    with contextlib.suppress(Exception):
                        pct = poll()
                        if pct is not None and pct >= 0:
                            self.bar.update(task, completed=min(100.0, pct))

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
        try:
            yield handle
            if poll:
                self.bar.update(task, completed=100)
            elif self.bar.tasks[task].total is None:
                self.bar.update(task, total=1, completed=1)
            else:
                self.bar.update(task, completed=self.bar.tasks[task].total)
        finally:
            stop.set()
            if thread is not None:
                thread.join()
            self.bar.stop()


def _query_progress(engine):
    """DuckDB's progress of the running statement (percent), when the engine is an embedded
    DuckDB of sqlanon's own (a borrowed connection's settings are left alone)."""
    if engine is None or engine.con is None or engine.dialect != "duckdb" or engine.borrowed or not hasattr(engine.con, "query_progress"):
        return None
    if not engine.progress_tracking:
        try:  # track progress without DuckDB printing its own bar (on stdout)
            engine.set_option("enable_progress_bar_print", "false")
            engine.set_option("enable_progress_bar", "true")
        except SqlanonError:
            return None
        engine.progress_tracking = True
    return engine.con.query_progress


class _EnvHandler(logging.StreamHandler):
    """The stderr handler ``SQLANON_LOG`` installs (once, however often it is configured). It
    writes to the ``sys.stderr`` of the moment, as :data:`logging.lastResort` does: a caller that
    swaps stderr (a test runner, a notebook) and closes its stream leaves no handler on a closed
    file."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def configure_logging_from_env(environ) -> None:
    """``SQLANON_LOG=INFO|DEBUG``: log the run (DEBUG: every SQL statement) on stderr."""
    level = str(environ.get("SQLANON_LOG", "")).strip().upper()
    if not level:
        return
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        level = "INFO"
    root = logging.getLogger("sqlanon")
    if not any(isinstance(h, _EnvHandler) for h in root.handlers):
        handler = _EnvHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        root.addHandler(handler)
    root.setLevel(level)
