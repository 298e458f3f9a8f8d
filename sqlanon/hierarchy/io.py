"""Reading and writing hierarchies: ARX CSV (any delimiter), YAML/JSON trees."""

from __future__ import annotations

import csv
import json
import os

from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.hierarchy.model import Hierarchy
from sqlanon.files.strict_load import load_json, load_yaml, read_text
from sqlanon.files.paths import refuse_existing


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
    rows = [_csv_row(row) for row in reader if row and any(c.strip() for c in row)]
    if not rows:
        raise HierarchyError(f"hierarchy for {attribute!r} ({path}) is empty")
    return Hierarchy(attribute=attribute, rows=rows, origin=path)


def _csv_row(row: list[str]) -> list:
    """A CSV row's cells; a row whose cells are empty below its root is the NULL leaf (as
    :func:`write_csv_hierarchy` writes it: ``;;*``)."""
    cells: list = [cell.strip() for cell in row]
    if len(cells) > 1 and not any(cells[:-1]) and cells[-1]:
        return [None] * (len(cells) - 1) + cells[-1:]
    return cells


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
        # labels are text as written: no ``NO`` (Norway) read as False, no ``010`` read as 8
        tree = load_yaml(text, where, HierarchyError, kind="YAML/JSON", strings=True)
    return tree_to_hierarchy(tree, attribute, origin=path)


#: deeper trees are refused (a hierarchy has a handful of levels; this bounds the recursion)
MAX_TREE_DEPTH = 100


def tree_to_hierarchy(tree, attribute: str, origin: str = "tree") -> Hierarchy:
    """Rows (leaf first, root last) of a tree ``{root: {child: [leaf, ..], ..}}``; a key with no
    children (``x:``, ``x: []``) is a leaf. A list inside a list, a tree that contains itself (a
    YAML alias to an ancestor) or one deeper than :data:`MAX_TREE_DEPTH` is a HierarchyError."""
    where = f"hierarchy for {attribute!r} ({origin})"
    if not isinstance(tree, dict) or len(tree) != 1:
        raise HierarchyError(f"{where} must have exactly one root key")
    paths: list[list[str]] = []

    def walk(node, path: list[str], above: frozenset) -> None:
        if isinstance(node, (dict, list)):
            if id(node) in above:
                raise HierarchyError(f"{where} is not a tree: {path[0]!r} contains itself (an alias to an ancestor)")
            if len(path) > MAX_TREE_DEPTH:
                raise HierarchyError(f"{where} is deeper than {MAX_TREE_DEPTH} levels")
            above = above | {id(node)}
        if isinstance(node, dict) and node:
            for key, child in node.items():
                walk(child, [_label(key, attribute, origin)] + path, above)
        elif isinstance(node, list) and node:
            for child in node:
                if isinstance(child, dict):
                    walk(child, path, above)
                elif isinstance(child, list):
                    raise HierarchyError(f"{where}: a list inside a list under {path[0]!r}; name the group ({{group: [..]}})")
                else:
                    paths.append([_label(child, attribute, origin)] + path)
        elif node is None or node == "" or isinstance(node, (dict, list)):
            paths.append(path)  # a dict key with no children is a leaf
        else:
            paths.append([_label(node, attribute, origin)] + path)

    (root, body), = tree.items()
    walk(body, [_label(root, attribute, origin)], frozenset())
    depth = max(len(p) for p in paths)
    rows = [[p[0]] * (depth - len(p)) + p for p in paths]
    return Hierarchy(attribute=attribute, rows=rows, origin=origin)


def _label(value, attribute, origin) -> str:
    if value is None:
        raise HierarchyError(f"hierarchy for {attribute!r} ({origin}) has a NULL leaf")
    if isinstance(value, bool):  # JSON true is the text "true", not Python's "True"
        return "true" if value else "false"
    return str(value)


def write_csv_hierarchy(hierarchy: Hierarchy, path: str, delimiter: str = ";", overwrite: bool = False) -> None:
    """The hierarchy as an ARX CSV (one row per leaf); an existing file only with ``overwrite``."""
    refuse_existing(path, "hierarchy file", overwrite)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
        writer.writerows(hierarchy.rows)
