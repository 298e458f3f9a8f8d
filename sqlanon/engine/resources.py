"""The resource limits a user gives (``--threads``, ``--memory-limit``), checked by every engine
before it opens or changes a connection, and by the policy checks before anything is opened."""

from __future__ import annotations

import os
import re

from sqlanon.errors import ConfigError

#: threads above this many per core are refused: ``--threads 100000`` once started ~32,000 OS
#: threads and took the machine down
THREADS_PER_CORE = 4
#: size units a memory limit may carry (DuckDB's: 1000^i and 1024^i), case-insensitive
_MEMORY_UNITS = {"B": 1, "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9, "T": 10**12, "TB": 10**12,
                 "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def threads_cap() -> tuple[int, int]:
    """``(cap, cores)``: at most :data:`THREADS_PER_CORE` threads per core of this machine."""
    cores = os.cpu_count() or 1
    return THREADS_PER_CORE * cores, cores


def check_threads(threads: int | None) -> None:
    """``threads`` (``--threads``, the policy key, ``threads=``) is at least 1 and at most
    :func:`threads_cap`.

    >>> check_threads(10**5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    sqlanon.errors.ConfigError: threads 100000 is above the cap of ... (4 per core, ... cores on this machine)
    """
    if threads is None:
        return
    if threads < 1:
        raise ConfigError(f"threads must be at least 1, got {threads}")
    cap, cores = threads_cap()
    if threads > cap:
        raise ConfigError(f"threads {threads} is above the cap of {cap} ({THREADS_PER_CORE} per core, {cores} cores on this machine)")


def memory_bytes(limit: str) -> int:
    """The bytes of a memory limit (``--memory-limit``, the policy key, ``memory_limit=``):
    a positive number and a unit (``500MB``, ``2GB``, ``1.5GiB``), or a percentage of the RAM
    (``50%``, DuckDB only). Anything else, zero and negative sizes (DuckDB reads ``-1GB`` as no
    limit) are refused naming the value.

    >>> memory_bytes("1GB"), memory_bytes("1.5 GiB"), memory_bytes("512mb")
    (1000000000, 1610612736, 512000000)
    >>> memory_bytes("-1GB")
    Traceback (most recent call last):
    ...
    sqlanon.errors.ConfigError: memory_limit '-1GB' is not a positive size: write e.g. 500MB or 2GB
    """
    text = str(limit).strip()
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*|%)", text)
    unit = m.group(2).upper() if m else ""
    if m and unit == "%":
        share = float(m.group(1))
        if 0 < share <= 100:
            total = _ram_bytes()
            return max(1, int(total * share / 100)) if total else 1
    elif m and unit in _MEMORY_UNITS:
        size = float(m.group(1)) * _MEMORY_UNITS[unit]
        if size >= 1:
            return int(size)
    raise ConfigError(f"memory_limit {str(limit)!r} is not a positive size: write e.g. 500MB or 2GB")


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_resources(memory_limit: str | None, threads: int | None) -> None:
    """The resource limits a user gives, checked before any engine is opened."""
    if memory_limit is not None:
        memory_bytes(memory_limit)
    check_threads(threads)
