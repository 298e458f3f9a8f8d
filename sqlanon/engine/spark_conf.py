"""``--spark-conf KEY=VALUE`` parsing (no pyspark import: policies are read without it)."""

from __future__ import annotations

import re

from sqlanon.errors import ConfigError

#: Spark's size suffixes (``spark.driver.maxResultSize=1g``): powers of 1024, a bare number bytes
_SPARK_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}


def parse_conf(items) -> dict[str, str]:
    """``KEY=VALUE`` strings (``--spark-conf``) or a mapping, as a dict; a bad item is refused."""
    if not items:
        return {}
    if isinstance(items, dict):
        return {str(k): str(v) for k, v in items.items()}
    out = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"bad --spark-conf {item!r}: write KEY=VALUE, e.g. spark.driver.memory=4g")
        out[key.strip()] = value.strip()
    return out


def spark_bytes(text) -> int | None:
    """The bytes of a Spark size setting read in bytes (``spark.driver.maxResultSize``): ``1g``,
    ``512m``, ``2048k``, ``1gb``, a bare number of bytes; None when it is not a size.

    >>> spark_bytes("1g"), spark_bytes("512M"), spark_bytes("4096"), spark_bytes("2gb"), spark_bytes("0")
    (1073741824, 536870912, 4096, 2147483648, 0)
    >>> spark_bytes("lots") is None
    True
    """
    m = re.fullmatch(r"\s*([0-9]+)\s*([bkmgtp]?)b?\s*", str(text).lower())
    return None if m is None else int(m.group(1)) * _SPARK_UNITS[m.group(2)]
