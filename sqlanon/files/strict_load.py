"""YAML and JSON readers that refuse duplicate keys, at every nesting level.

PyYAML and ``json`` keep the last of two equal keys: a policy with ``k: 50`` and later ``k: 2``
ran with k=2. Every YAML or JSON text sqlanon reads from a user goes through these two functions.

>>> load_yaml("k: 50\\nqi: {zip: mask}\\n", "policy p.yaml")
{'k': 50, 'qi': {'zip': 'mask'}}
>>> load_yaml("k: 50\\nk: 2\\n", "policy p.yaml")
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: policy p.yaml: key 'k' is given twice (line 2; first on line 1)
>>> load_json('{"A": {"x": 1, "x": 2}}', "hierarchy h.json")
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: hierarchy h.json: key 'x' is given twice in one object
"""

from __future__ import annotations

import json
import os
import re
from typing import IO, Any

import yaml

from sqlanon.errors import ConfigError, SqlanonError


class DuplicateKey(ValueError):
    """Raised inside the parsers; turned into the caller's error class with the caller's wording."""


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` whose mappings refuse a key given twice (``<<`` merges may override)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            _refuse_duplicates(self, node)
        return super().construct_mapping(node, deep=deep)


class _StrictTextLoader(yaml.BaseLoader):
    """Every scalar is the text as written (``NO`` stays ``NO``, ``010`` stays ``010``); a key
    given twice is refused. For hierarchy labels, which are matched against the data's text."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        _refuse_duplicates(self, node)
        return super().construct_mapping(node, deep=deep)


# YAML's null (``x:``, ``x: null``, ``~``) stays None: "no children", not the text "null"
_StrictTextLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""])
_StrictTextLoader.add_constructor("tag:yaml.org,2002:null", lambda loader, node: None)


def _refuse_duplicates(loader: yaml.BaseLoader | yaml.SafeLoader, node: yaml.MappingNode) -> None:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: PyYAML itself refuses it
            continue
        line = key_node.start_mark.line + 1
        if first is not None:
            raise DuplicateKey(f"key {key!r} is given twice (line {line}; first on line {first})")
        seen[key] = line


def load_yaml(text: str | IO[str], where: str, error: type[SqlanonError] = ConfigError, kind: str = "YAML", strings: bool = False) -> Any:
    """Parse YAML (safe types only; with ``strings``, every scalar as its text); a duplicate key
    or a syntax error is ``error`` naming ``where``."""
    try:
        return yaml.load(text, Loader=_StrictTextLoader if strings else _StrictLoader)  # noqa: S506 - safe loaders
    except DuplicateKey as err:
        raise error(f"{where}: {err}") from None
    except yaml.YAMLError as err:
        raise error(f"{where} is not valid {kind}: {str(err).splitlines()[0]}") from None


def read_text(path: str, what: str, error: type[SqlanonError] = ConfigError) -> str:
    """A user's text file (UTF-8, a BOM dropped); a binary or otherwise encoded file is ``error``
    naming it (``what`` says which file it is, e.g. ``hierarchy for 'age' (age.csv)``)."""
    with open(path, "rb") as fh:
        data = fh.read()
    kind = binary_kind(data[:8192])
    if kind is not None:
        raise error(f"{what} is {kind}, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise error(f"{what} is not UTF-8 text (line {line}: byte 0x{data[err.start]:02x}); save it as UTF-8") from None


def binary_kind(head: bytes) -> str | None:
    """What a file starting with ``head`` is, when it is not text: ``a Parquet file``, ``a DuckDB
    database``, ... or ``a binary file`` (a NUL byte); None for text."""
    if head[:4] == b"PAR1":
        return "a Parquet file"
    if head[8:12] == b"DUCK":
        return "a DuckDB database"
    if head[:2] == b"PK":
        return "a zip or xlsx file"
    if head[:2] == b"\x1f\x8b":
        return "a gzip file"
    if b"\x00" in head:
        return "a binary file"
    return None


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"key {key!r} is given twice in one object")
        out[key] = value
    return out


def load_json(text: str, where: str, error: type[SqlanonError] = ConfigError) -> Any:
    """Parse JSON; a duplicate key in any object is ``error`` naming ``where``. A syntax error
    is left to the caller (``json.JSONDecodeError``), who knows whether the text may be other
    than JSON."""
    try:
        return json.loads(text, object_pairs_hook=_pairs)
    except DuplicateKey as err:
        raise error(f"{where}: {err}") from None


def load_json_spec(spec: str, where: str) -> Any:
    """JSON given as a file path or as the text itself (``--transformation``, ``cost_matrix``):
    the file's text when ``spec`` names a file. A duplicate key or text that is not JSON is a
    ConfigError naming ``where``."""
    text = spec
    if os.path.isfile(spec):
        with open(spec, encoding="utf-8") as fh:
            text = fh.read()
    try:
        return load_json(text, where)  # a key twice is an error, not the last one wins
    except json.JSONDecodeError as err:
        raise ConfigError(f"{where} is neither a JSON file nor JSON text ({err}): {spec[:60]!r}") from None
