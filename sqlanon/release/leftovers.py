"""Temporary files beside an output: named so that a later run can tell ours, and stale ones, apart.

A release file is written to a hidden ``.NAME.<pid>-<hex>.tmp`` beside ``NAME`` and renamed into
place when complete. A run that is killed (``kill -9``, a power cut) cannot remove it; the next run
to the same target removes every such file whose writer is gone and says so. A file of the older
naming (``.NAME.<hex>.tmp``, no process id) is stale once it has not changed for
:data:`STALE_AFTER` seconds.

>>> import re
>>> bool(_pattern("out.parquet").match(".out.parquet.4242-0123abcd.tmp"))
True
>>> bool(_pattern("out.parquet").match(".other.parquet.4242-0123abcd.tmp"))
False
"""

from __future__ import annotations

import contextlib
import os
import re
import time
import uuid
from collections.abc import Callable

STALE_AFTER = 15 * 60


def temp_path(final: str) -> str:
    """Where the file for ``final`` is written before it is renamed into place."""
    folder = os.path.dirname(os.path.abspath(final))
    return os.path.join(folder, f".{os.path.basename(final)}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")


def _pattern(final: str) -> re.Pattern:
    return re.compile(r"^\." + re.escape(os.path.basename(final)) + r"\.(?:(\d+)-)?[0-9a-f]{8}\.tmp$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def stale_temp_files(final: str) -> list[str]:
    folder = os.path.dirname(os.path.abspath(final))
    pattern = _pattern(final)
    out = []
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    for name in sorted(names):
        m = pattern.match(name)
        if not m:
            continue
        path = os.path.join(folder, name)
        if m.group(1) is not None:
            stale = not _alive(int(m.group(1)))
        else:
            with contextlib.suppress(FileNotFoundError):
                stale = time.time() - os.path.getmtime(path) > STALE_AFTER
        if stale:
            out.append(path)
    return out


def clean_stale_temp_files(final: str, say: Callable[[str], None] | None = None) -> list[str]:
    """Remove the stale temporary files of earlier runs to ``final``; returns their paths."""
    removed = []
    for path in stale_temp_files(final):
        with contextlib.suppress(FileNotFoundError):
            size = os.path.getsize(path)
            os.remove(path)
            removed.append(path)
            if say:
                say(f"removed {os.path.basename(path)} ({size:,} bytes), left beside {os.path.basename(final)} by an interrupted run")
    return removed
