"""``--spark-conf KEY=VALUE`` parsing (no pyspark import: policies are read without it)."""

from __future__ import annotations

from sqlanon.errors import ConfigError


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
