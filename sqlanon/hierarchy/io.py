"""Reading and writing hierarchies: ARX CSV (any delimiter), YAML/JSON trees."""

from __future__ import annotations

import csv
import json
import os

from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.strict_load import load_json, load_yaml, read_text


def read_csv_hierarchy(path: str, attribute: str, delimiter: str | None = None) -> Hierarchy:
    """ARX's format: no header, one row per leaf, leaf first, root last.

    The delimiter is sniffed (``;`` or ``,``) when not given; quoted labels such as
    ``"[15, 20["`` are read as one cell; a space after the delimiter is dropped.
    """
    if not os.path.isfile(path):
        raise ConfigError(f"hierarchy file not found: {path}")
    if delimiter == "\\t":
        delimiter = "\t"
    if delimiter is not None and (len(delimiter) != 1 or delimiter in "\r\n\""):
        raise ConfigError(f"--hierarchy-delimiter must be one character (not a quote or a line break), got {delimiter!r}")
    # a BOM is not part of the first leaf; a binary file is not a hierarchy
    text = read_text(path, f"hierarchy for {attribute!r} ({path})", HierarchyError)
    if delimiter is None:
        first = text.splitlines()[0] if text else ""
        delimiter = ";" if first.count(";") >= first.count(",") and ";" in first else ","
    reader = csv.reader(text.splitlines(), delimiter=delimiter, skipinitialspace=True)
    rows = [[cell.strip() for cell in row] for row in reader if row and any(c.strip() for c in row)]
    if not rows:
        raise HierarchyError(f"hierarchy for {attribute!r} ({path}) is empty")
    return Hierarchy(attribute=attribute, rows=rows, origin=path)


def read_tree_hierarchy(path: str, attribute: str) -> Hierarchy:
    """A YAML or JSON tree: ``{root: {child: [leaf, leaf], child2: {..}}}``.

    Leaves shallower than the deepest one are repeated downwards (``[leaf, leaf, parent, root]``),
    the usual way to make a tree full-domain.
    """
    if not os.path.isfile(path):
        raise ConfigError(f"hierarchy file not found: {path}")
    where = f"hierarchy {path}"
    text = read_text(path, where, HierarchyError)
    if path.lower().endswith(".json"):
        try:
            tree = load_json(text, where, HierarchyError)  # a key twice is an error, at any depth
        except json.JSONDecodeError as err:
            raise HierarchyError(f"{where} is not valid YAML/JSON: {str(err).splitlines()[0]}") from None
    else:
        tree = load_yaml(text, where, HierarchyError, kind="YAML/JSON")
    return tree_to_hierarchy(tree, attribute, origin=path)


def tree_to_hierarchy(tree, attribute: str, origin: str = "tree") -> Hierarchy:
    if not isinstance(tree, dict) or len(tree) != 1:
        raise HierarchyError(f"hierarchy for {attribute!r} ({origin}) must have exactly one root key")
    paths: list[list[str]] = []

    def walk(node, path):
        if isinstance(node, dict):
            for key, child in node.items():
                walk(child, [str(key)] + path)
        elif isinstance(node, list):
            for child in node:
                if isinstance(child, dict):
                    walk(child, path)
                else:
                    paths.append([_label(child, attribute, origin)] + path)
        elif node is None:
            paths.append(path)  # a dict key with no children is a leaf
        else:
            paths.append([_label(node, attribute, origin)] + path)

    (root, body), = tree.items()
    walk(body, [str(root)])
    depth = max(len(p) for p in paths)
    rows = [[p[0]] * (depth - len(p)) + p for p in paths]
    return Hierarchy(attribute=attribute, rows=rows, origin=origin)


def _label(value, attribute, origin) -> str:
    if value is None:
        raise HierarchyError(f"hierarchy for {attribute!r} ({origin}) has a NULL leaf")
    return str(value)


def write_csv_hierarchy(hierarchy: Hierarchy, path: str, delimiter: str = ";") -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
        writer.writerows(hierarchy.rows)
