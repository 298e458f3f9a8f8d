"""Where numba caches the package's compiled kernels, read without importing numba (the CLI's
start and the base scan ask whether the cache is filled before numba loads).

numba caches a module's kernels in the ``__pycache__`` beside it, or, with ``NUMBA_CACHE_DIR``
set, in a folder of that directory named after the module's folder and a SHA-1 of its path
(numba's ``_CacheLocator.get_suitable_cache_subpath``): one index file (``.nbi``) per kernel,
one data file (``.nbc``) per compiled specialisation. Where the package's ``__pycache__`` is not
writable (a read-only site-packages) and ``NUMBA_CACHE_DIR`` is not set, :mod:`sqlanon.jit`
points numba at ``$TMPDIR/sqlanon-numba-<uid>`` (:func:`cache_dir`).
"""

from __future__ import annotations

import glob
import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Mapping

#: the package's folder
PACKAGE = os.path.dirname(os.path.abspath(__file__))

#: the packages whose modules hold ``@njit(cache=True)`` kernels
KERNEL_DIRS = tuple(os.path.join(PACKAGE, *parts) for parts in (("stats", "local"), ("generation",)))
#: the modules of ``@njit(cache=True)`` kernels, by name: the files whose compiled code numba caches
KERNEL_MODULES = {name: os.path.join(PACKAGE, *name.split(".")[1:]) + ".py" for name in (
    "sqlanon.stats.local.kernels", "sqlanon.stats.local.histogram_kernels", "sqlanon.generation.kernels")}


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


def root(env: Mapping[str, str] = os.environ) -> str | None:
    """The ``NUMBA_CACHE_DIR`` numba uses (set by the user, or by :mod:`sqlanon.jit` for a
    read-only install, or what it will set when imported), None: beside the modules."""
    return env.get("NUMBA_CACHE_DIR") or cache_dir(env)


def module_dir(module_file: str, env: Mapping[str, str] = os.environ) -> str:
    """The folder where numba caches the kernels of the module at ``module_file``.

    >>> module_dir("/a/b/kernels.py", {"NUMBA_CACHE_DIR": "/c"}).startswith("/c/b_")
    True
    """
    top = root(env)
    folder = os.path.dirname(os.path.abspath(module_file))
    if top is None:
        return os.path.join(folder, "__pycache__")
    return os.path.join(top, "_".join([os.path.basename(folder), hashlib.sha1(folder.encode()).hexdigest()]))


def index_files(module_file: str, env: Mapping[str, str] = os.environ) -> list[str]:
    """The index files numba keeps for the kernels of the module at ``module_file`` (one per
    kernel compiled at least once), sorted."""
    stem = os.path.splitext(os.path.basename(module_file))[0]
    return sorted(glob.glob(os.path.join(glob.escape(module_dir(module_file, env)), f"{glob.escape(stem)}.*.nbi")))


def compiled(kernel: str, module: str = "sqlanon.stats.local.kernels", env: Mapping[str, str] = os.environ) -> bool:
    """Whether the cache holds an index of the kernel named ``kernel`` of ``module`` (compiled
    once by this install or its warm-up; numba still checks it against the source when loading)."""
    stem = os.path.splitext(os.path.basename(KERNEL_MODULES[module]))[0]
    return any(os.path.basename(f).startswith(f"{stem}.{kernel}-") for f in index_files(KERNEL_MODULES[module], env))
