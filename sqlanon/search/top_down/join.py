"""The join semantics of sequential releases (Wang & Fung 2006, Section 3.3 and Section 7).

A record of the current release T1 *matches* a record of a previous release Ti when

* **consistency predicate**: for every common categorical attribute A, ``t1.A`` and ``ti.A`` lie on
  one generalization path of A's taxonomy (one is an ancestor of the other). In a tree this is
  "their leaf sets intersect"; with several releases holding A (a star join), all their values
  must share a leaf;
* **inconsistency predicate**: for user-declared pairs ``(T1.A = a, Ti.B = b)`` that can never
  match (Male / Pregnant), ``t1.A`` and ``ti.B`` do not both specialize the pair: ``t1.A`` under
  (or equal to) ``a`` *and* ``ti.B`` under ``b`` excludes the match. A generalization of ``a``
  (``Person``) still matches.

Everything here is metadata (taxonomy trees, a handful of values): the planner uses it to build
the small match tables that the SQL in :mod:`sqlanon.search.top_down.stats` joins on, and the tests use
:func:`records_match` as the slow reference.

Inconsistency specs (``--inconsistent``, repeatable, or the policy's ``inconsistent:`` list) are
written ``COLUMN_A=VALUE_A|COLUMN_B=VALUE_B`` (either side may be the current release's column), or
as a mapping ``{COLUMN_A: VALUE_A, COLUMN_B: VALUE_B}``.

>>> from sqlanon.hierarchy.model import Hierarchy
>>> t = Tree(Hierarchy("sex", [["Male", "*"], ["Female", "*"]]))
>>> t.consistent("*", "Male"), t.consistent("Female", "Male")
(True, False)
>>> parse_inconsistent("sex=Male|pregnant=Yes")
(('sex', 'Male'), ('pregnant', 'Yes'))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlanon.errors import ConfigError, HierarchyError


@dataclass
class Node:
    id: int
    leaves: frozenset
    label: str
    level: int
    parent: int | None = None
    children: list[int] = field(default_factory=list)


class Tree:
    """The taxonomy tree of a hierarchy, with chains of equal leaf sets collapsed into one node.

    ``nodes[0]`` is the root. A node's label is the label of its lowest level (a single leaf keeps
    its own label, so a fully specialized value is the source value).
    """

    def __init__(self, hierarchy) -> None:
        self.hierarchy = hierarchy
        h = hierarchy
        n_leaves = len(h.rows)
        by_set: dict[frozenset, int] = {}
        self.nodes: list[Node] = []
        all_leaves = frozenset(range(n_leaves))
        top = h.max_level
        # the root: the top level when it has one value, else a synthetic "*"
        if len(h.labels(top)) == 1:
            root_label = h.labels(top)[0]
        else:
            root_label = "*"
        self._add(by_set, all_leaves, root_label, top + (0 if len(h.labels(top)) == 1 else 1))
        # levels from top to bottom: a node's parent is the smallest set above it
        set_at: list[list[frozenset]] = []
        for level in range(top + 1):
            groups: dict[int, list[int]] = {}
            for leaf, code in enumerate(h.leaf_to_level(level)):
                groups.setdefault(code, []).append(leaf)
            set_at.append([frozenset(groups.get(c, ())) for c in range(len(h.labels(level)))])
        for level in range(top, -1, -1):
            labels = h.labels(level)
            for code, leaves in enumerate(set_at[level]):
                if leaves in by_set:
                    node = self.nodes[by_set[leaves]]
                    node.label, node.level = labels[code], level  # keep the lowest level's label
                else:
                    self._add(by_set, leaves, labels[code], level)
        # parents: walk up from the node's lowest level until the set grows
        for node in self.nodes[1:]:
            rep = next(iter(node.leaves))
            parent = 0
            for level in range(node.level + 1, top + 1):
                s = set_at[level][h.leaf_to_level(level)[rep]]
                if s != node.leaves:
                    parent = by_set[s]
                    break
            node.parent = parent
            self.nodes[parent].children.append(node.id)
        self.by_set = by_set
        self.leaf_node = [by_set[frozenset([leaf])] if frozenset([leaf]) in by_set else None for leaf in range(n_leaves)]
        # every label at any level -> the leaves it covers (released values of previous releases)
        self.label_leaves: dict[str, set] = {}
        for level in range(top + 1):
            labels = h.labels(level)
            for code, leaves in enumerate(set_at[level]):
                self.label_leaves.setdefault(labels[code], set()).update(leaves)
        self.label_leaves.setdefault(root_label, set()).update(all_leaves)

    def _add(self, by_set, leaves, label, level) -> int:
        node = Node(len(self.nodes), leaves, label, level)
        self.nodes.append(node)
        by_set[leaves] = node.id
        return node.id

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def leaves_of(self, value: str, where: str = "") -> frozenset:
        """Leaves covered by a released value (a label at any level of the hierarchy)."""
        try:
            return frozenset(self.label_leaves[value])
        except KeyError:
            raise HierarchyError(
                f"value {value!r}{where} is not in the hierarchy of {self.hierarchy.attribute!r} "
                f"({self.hierarchy.origin})"
            ) from None

    def consistent(self, *values: str) -> bool:
        """Do released values of one attribute lie on one generalization path (share a leaf)?"""
        common = None
        for v in values:
            s = self.leaves_of(v)
            common = s if common is None else common & s
        return bool(common)

    def depth_steps(self, node_id: int, leaf: int, level: int | None = None) -> int:
        """Generalization steps from ``leaf`` up to ``node_id``: how many times the value changes
        on the way up the leaf's row (the paper's distortion, "one unit each time a value is
        generalized to the parent value"). A tree written with a leaf repeated to pad a shallow
        branch (``Never-married, Never-married, *``) counts one step to ``*``, not the padded level.

        >>> from sqlanon.hierarchy.model import Hierarchy
        >>> t = Tree(Hierarchy("m", [["civ", "Married", "*"], ["af", "Married", "*"], ["never", "never", "*"]]))
        >>> t.depth_steps(0, 0), t.depth_steps(0, 2), t.depth_steps(t.by_set[frozenset([0, 1])], 0)
        (2, 1, 1)
        """
        row = self.hierarchy.rows[leaf]
        level = self.nodes[node_id].level if level is None else level  # a chain released higher up
        top = len(row) - 1
        steps = sum(1 for i in range(1, min(level, top) + 1) if row[i] != row[i - 1])
        return steps + (1 if level > top else 0)  # a synthetic root above several top values


def parse_inconsistent(spec) -> tuple[tuple[str, str], tuple[str, str]]:
    """``"A=a|B=b"`` or ``{"A": "a", "B": "b"}`` -> ``(("A", "a"), ("B", "b"))``."""
    if isinstance(spec, dict):
        items = list(spec.items())
        if len(items) != 2:
            raise ConfigError(f"an inconsistency predicate names exactly two columns, got {spec!r}")
        return (str(items[0][0]), str(items[0][1])), (str(items[1][0]), str(items[1][1]))
    text = str(spec)
    parts = text.split("|")
    if len(parts) != 2:
        raise ConfigError(f"bad inconsistency predicate {text!r}; write COLUMN_A=VALUE_A|COLUMN_B=VALUE_B")
    out = []
    for part in parts:
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"bad inconsistency predicate {text!r}; write COLUMN_A=VALUE_A|COLUMN_B=VALUE_B")
        out.append((name.strip(), value.strip()))
    return out[0], out[1]


def covers(tree: Tree | None, general: str, value: str) -> bool:
    """Is ``value`` equal to or a specialization of ``general`` (leaf-set inclusion)?"""
    if tree is None:
        return value == general
    return tree.leaves_of(value) <= tree.leaves_of(general)


def records_match(records: list[dict], trees: dict[str, Tree], inconsistent: list[tuple[int, str, str, int, str, str]]) -> bool:
    """Slow reference: do records ``(t1, t2, ..., tp)`` (dicts of released values) form a match?

    ``trees`` gives the taxonomy of each common attribute; ``inconsistent`` lists
    ``(release_a, column_a, value_a, release_b, column_b, value_b)``.
    """
    for attr, tree in trees.items():
        vals = [r[attr] for r in records if attr in r]
        if len(vals) > 1 and not tree.consistent(*vals):
            return False
    for ra, ca, va, rb, cb, vb in inconsistent:
        if covers(trees.get(ca), va, records[ra][ca]) and covers(trees.get(cb), vb, records[rb][cb]):
            return False
    return True
