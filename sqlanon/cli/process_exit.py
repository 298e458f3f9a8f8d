"""The CLI process's end: once a command is done, the process leaves without the interpreter's
teardown.

Python's teardown frees every module and object one by one; with the compiled kernels loaded
(:mod:`sqlanon.stats.local.kernels`, numba and LLVM) that took a noticeable share of every run
that used them, after its last output was written (docs/measurements.md). All
the teardown has to do for sqlanon is done here, in the order Python does it: the threads that
are not daemons are joined, thread pools told to stop first (the kernels' loading thread: one stopped inside LLVM aborts the
process), the ``atexit`` functions run (``logging``'s flush, ``weakref.finalize``, numba's and
pyspark's hooks), the standard streams are flushed, and then :func:`os._exit`. Files and
databases are closed before this (each command closes its engine and its registry in a
``finally``), so nothing depends on objects' finalizers. mypy ends its process the same way.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

#: the exit status when a standard stream cannot be flushed at the end (a closed pipe): Python's
STREAM_ERROR = 120


def _join_threads() -> None:
    """What Python does first at exit: the thread pools told to stop (their exit hooks), then
    every thread that is not a daemon joined (``threading._shutdown``; joined here one by one
    where that is missing)."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
        return
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()


def leave(code: object) -> NoReturn:
    """End the process with ``code`` (a :class:`SystemExit`'s: None is 0) without the interpreter's
    teardown. A code that is a message (not an int) is left to Python, which prints it."""
    if code is not None and not isinstance(code, int):
        raise SystemExit(code)
    status = int(code or 0)
    try:
        _join_threads()
        atexit._run_exitfuncs()
    except KeyboardInterrupt:  # a SIGTERM or Ctrl-C after the command's work: it ends with its code
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = status or STREAM_ERROR
    os._exit(status)
