"""numba's ``njit`` for the package's compiled kernels (:mod:`sqlanon.stats.local.kernels`,
:mod:`sqlanon.generation.kernels`), imported here once with the settings they need.

numba's error highlighting calls colorama's init()/deinit() while it compiles (even while it
only loads cached kernels: importing its list implementation builds an error message), which
rebind sys.stdout and sys.stderr process-wide; from the background thread that loads the kernels
that swapped an embedding caller's streams mid-run (a CLI test runner's stdout was closed under
it). Plain messages instead when numba is first imported here; when the host imported numba
before sqlanon with highlighting on, its colours are kept but colorama's stream rebinding is
switched off (:func:`keep_streams`).

**Where the compiled kernels are cached.** numba caches them in ``__pycache__`` beside the
kernel modules. Where that is not writable (a read-only site-packages, a container image) and
``NUMBA_CACHE_DIR`` is not set, the cache goes to ``$TMPDIR/sqlanon-numba-<uid>``
(:func:`cache_dir`), said once on the ``sqlanon`` logger: the first run there compiles the
kernels (what a fresh install's first run pays, docs/measurements.md), the later ones load them
as a warm install does, for as long as that directory is kept.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

#: the packages whose modules hold ``@njit(cache=True)`` kernels
KERNEL_DIRS = tuple(os.path.join(os.path.dirname(__file__), *parts) for parts in (("stats", "local"), ("generation",)))


def writable(path: str) -> bool:
    """Whether numba could write its cache files into the directory ``path`` (made if absent)."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def cache_dir(env: Mapping[str, str], dirs=KERNEL_DIRS, can_write: Callable[[str], bool] = writable) -> str | None:
    """The directory to give numba as ``NUMBA_CACHE_DIR``: None when it is set already or every
    kernel package's ``__pycache__`` is writable (numba's own place), else
    ``$TMPDIR/sqlanon-numba-<uid>``.

    >>> cache_dir({"NUMBA_CACHE_DIR": "/x"}, can_write=lambda p: False) is None
    True
    >>> cache_dir({}, can_write=lambda p: True) is None
    True
    >>> os.path.basename(cache_dir({}, can_write=lambda p: False)).startswith("sqlanon-numba-")
    True
    """
    if env.get("NUMBA_CACHE_DIR") or all(can_write(os.path.join(d, "__pycache__")) for d in dirs):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    return private_dir(os.path.join(tempfile.gettempdir(), f"sqlanon-numba-{uid}"))


def private_dir(path: str) -> str:
    """``path`` when it is (or is made) a directory of this user's only, not a link, writable by
    no one else; else a fresh private directory beside it: numba's cache files are pickles, so a
    cache another user could write into must not be loaded.

    >>> import stat, tempfile
    >>> d = tempfile.mkdtemp()
    >>> private_dir(os.path.join(d, "c")) == os.path.join(d, "c")
    True
    >>> os.chmod(os.path.join(d, "c"), 0o777)
    >>> private_dir(os.path.join(d, "c")) != os.path.join(d, "c")
    True
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return tempfile.mkdtemp(prefix=os.path.basename(path) + "-")
    info = os.lstat(path)
    uid = os.getuid() if hasattr(os, "getuid") else info.st_uid
    if stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o022:
        return path
    return tempfile.mkdtemp(prefix=os.path.basename(path) + "-", dir=os.path.dirname(path))


os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")
#: where the kernels are cached when not beside them (:func:`cache_dir`), None: beside them
CACHE_DIR = cache_dir(os.environ)
if CACHE_DIR is not None:
    os.environ["NUMBA_CACHE_DIR"] = CACHE_DIR
    logging.getLogger("sqlanon").warning(
        "the package's kernel cache is not writable: compiled kernels are cached in %s (the first run there compiles them)", CACHE_DIR)

from numba import njit  # noqa: E402


def keep_streams(errors: Any) -> bool:
    """Switch off the stream rebinding of numba's error highlighting in its ``errors`` module
    (numba imported with highlighting on, before this module set it off); True when it was on.

    >>> import types
    >>> shell = types.SimpleNamespace(ColorShell=object)
    >>> keep_streams(shell), shell.ColorShell is contextlib.nullcontext
    (True, True)
    >>> keep_streams(types.SimpleNamespace())  # highlighting off: numba has no ColorShell
    False
    """
    if getattr(errors, "ColorShell", None) in (None, contextlib.nullcontext):
        return False
    errors.ColorShell = contextlib.nullcontext  # ColorShell() without colorama's init/deinit
    return True


import numba.core.errors  # noqa: E402

keep_streams(numba.core.errors)

if CACHE_DIR is not None:  # numba imported earlier by the host reads its settings once
    import numba.core.config

    numba_config: Any = numba.core.config  # CACHE_DIR is set from the environment, unseen by mypy
    numba_config.CACHE_DIR = CACHE_DIR  # read by the cache locator at each compile

__all__ = ["njit"]
