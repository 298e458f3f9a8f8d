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
from typing import Any

from sqlanon.kernel_cache import cache_dir  # noqa: E402  (numba-free: read before numba loads)


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
