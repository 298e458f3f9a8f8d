"""numba's ``njit`` for the package's compiled kernels (:mod:`sqlanon.stats.local.kernels`,
:mod:`sqlanon.generation.kernels`), imported here once with the settings they need.

numba's error highlighting calls colorama's init()/deinit() while it compiles, which rebind
sys.stdout and sys.stderr process-wide; from the background thread that loads the kernels that
swapped an embedding caller's streams mid-run (a CLI test runner's stdout was closed under it).
Plain messages instead, unless the caller chose otherwise before numba was imported.
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_DISABLE_ERROR_MESSAGE_HIGHLIGHTING", "1")

from numba import njit  # noqa: E402

__all__ = ["njit"]
