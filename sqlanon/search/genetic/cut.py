"""Flexible cuts (Iyengar 2002, section 2 and 4): what one QI attribute releases, and its chromosome.

* A **categorical** attribute is generalized by any *valid cut* of its taxonomy tree: a set of
  nodes such that the path from every leaf to the root meets exactly one of them. Values may sit at
  different depths (``{Self-employed, Federal, State, Local, Private, Unemployed}``).
* A **numeric** attribute is generalized by disjoint *intervals* whose end points are chosen among
  potential end points: one between each pair of neighbouring distinct values when there are few,
  otherwise from an equal-frequency discretization (scalar quantization) of the value space.

The chromosome of a solution is the concatenation of one bit string per attribute:

* categorical: the ``D`` leaves (distinct values) in the order of an in-order traversal of the tree,
  one bit between each pair of neighbours (``D - 1`` bits); ``1`` = the two are separated. Only some
  bit strings are valid cuts (in the paper's Figure 5, ``b3`` set forces ``b2, b4, b5, b6``):
  :meth:`TreeCoder.repair` turns any bit string into the valid cut at the least Hamming distance;
* numeric: one bit per potential end point, in value order; ``1`` = the end point is used. Every
  bit string is valid.

Everything here is metadata (a few hundred leaves at most): pure Python, no SQL. A cut is rendered
as a :class:`sqlanon.plan.Recoding` (leaf code -> released code -> label), which the statistics
module turns into inline lookups and the release writer into mapping tables.

>>> from sqlanon.hierarchy.model import Hierarchy
>>> h = Hierarchy("work", [["inc", "self", "*"], ["not-inc", "self", "*"], ["fed", "gov", "*"],
...                        ["state", "gov", "*"]])
>>> c = TreeCoder(h)
>>> c.nbits
3
>>> c.repair([0, 1, 0])  # separate self | gov only
[0, 1, 0]
>>> c.labels_of(c.repair([1, 1, 0]))  # inc | not-inc, self | gov
['inc', 'not-inc', 'gov']
>>> c.repair([1, 0, 0])  # one bit off a valid cut either way: the more general one is kept
[0, 0, 0]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np

from sqlanon.hierarchy.builders import is_number
from sqlanon.errors import ConfigError, HierarchyError
from sqlanon.plan import Recoding

# ---------------------------------------------------------------------------------------------
# categorical: valid cuts of a taxonomy tree


@dataclass
class Node:
    label: str
    level: int
    children: list[int] = field(default_factory=list)
    parent: int | None = None
    lo: int = 0  # first in-order position (over active leaves)
    hi: int = 0  # last in-order position
    leaves: int = 0  # M_P: leaves of the *hierarchy* below (for LM)


class TreeCoder:
    """The chromosome part of one categorical attribute.

    ``freq`` (rows per leaf code) lets leaves that hold no row be left out of the chromosome
    (``prune_unused``): a bit between two values that never occur only adds noise to the search.
    Such leaves are still mapped (to the lowest cut node above them, else the root label).
    """

    numeric = False

    def __init__(self, hierarchy, freq: Sequence[int] | None = None, prune_unused: bool = True) -> None:
        self.hierarchy = hierarchy
        #: :meth:`_dp_plan`, made on first use
        self._plan: list[tuple] | None = None
        rows = hierarchy.rows
        self.n_leaves = len(rows)  # M for LM: all leaves of the taxonomy tree
        active = [True] * len(rows)
        if freq is not None and prune_unused:
            active = [f > 0 for f in freq]
            if not any(active):
                active = [True] * len(rows)
        self.active = active
        width = len(rows[0])
        # nodes keyed by (level, label); a tree is validated by Hierarchy
        index: dict[tuple[int, str], int] = {}
        nodes: list[Node] = []
        leaf_path: list[list[int]] = []  # per leaf: node ids from leaf (level 0) to root
        for leaf, row in enumerate(rows):
            path = []
            for level in range(width):
                key = (level, row[level]) if level > 0 else (0, f"\x00{leaf}")
                nid = index.get(key)
                if nid is None:
                    nid = len(nodes)
                    index[key] = nid
                    nodes.append(Node(row[level], level))
                path.append(nid)
            for a, b in zip(path, path[1:]):
                if nodes[a].parent is None:
                    nodes[a].parent = b
                    nodes[b].children.append(a)
            leaf_path.append(path)
        roots = {p[-1] for p in leaf_path}
        if len(roots) != 1:
            raise HierarchyError(f"hierarchy for {hierarchy.attribute!r} has {len(roots)} roots; a cut needs one tree")
        self.root_full = next(iter(roots))
        for path in leaf_path:
            for nid in path:
                nodes[nid].leaves += 1
        self._all_nodes = nodes
        self.leaf_path = leaf_path
        # in-order traversal over active leaves; collapse single-child chains (keep the lowest)
        self.order: list[int] = []  # leaf codes in in-order
        self.cnodes: list[dict] = []  # collapsed nodes: label, lo, hi, leaves, children, full id
        self.full_to_c: dict[int, int] = {}
        leaf_of_node = {path[0]: leaf for leaf, path in enumerate(leaf_path)}

        def has_active(nid: int) -> bool:
            if nid in leaf_of_node:
                return active[leaf_of_node[nid]]
            return any(has_active(c) for c in nodes[nid].children)

        memo_active: dict[int, bool] = {}

        def act(nid: int) -> bool:
            if nid not in memo_active:
                memo_active[nid] = has_active(nid)
            return memo_active[nid]

        def visit(nid: int, covered: list[int]) -> int:
            """Returns the collapsed id of ``nid`` (its lowest single-child descendant)."""
            kids = [c for c in nodes[nid].children if act(c)]
            covered = covered + [nid]
            if len(kids) == 1:
                return visit(kids[0], covered)
            cid = len(self.cnodes)
            entry: dict[str, Any] = {"label": nodes[nid].label, "lo": len(self.order), "hi": 0, "leaves": nodes[nid].leaves,
                     "children": [], "full": covered}
            self.cnodes.append(entry)
            for f in covered:
                self.full_to_c[f] = cid
            if not kids:
                self.order.append(leaf_of_node[nid])
            else:
                for k in kids:
                    entry["children"].append(visit(k, []))
            entry["hi"] = len(self.order) - 1
            # a collapsed chain is labelled by its lowest node (the value itself for a leaf chain)
            entry["label"] = nodes[covered[-1]].label if not kids else nodes[nid].label
            entry["leaves"] = nodes[covered[-1]].leaves if not kids else nodes[nid].leaves
            return cid

        self.root = visit(self.root_full, [])
        self.position = {leaf: p for p, leaf in enumerate(self.order)}
        self.nbits = max(len(self.order) - 1, 0)
        self.attribute = hierarchy.attribute
        self._repair_cache: dict[tuple, list[int]] = {}
        for entry in self.cnodes:
            entry["released"] = entry["full"][-1]  # the full node whose label is released
        self.bounds: tuple[int, int] | None = None
        self._allowed = ([True] * len(self.cnodes), [True] * len(self.cnodes))

    def set_bounds(self, lo: int, hi: int) -> None:
        """Restrict cuts to nodes between levels ``lo`` and ``hi`` (``--min-level``/``--max-level``).

        A collapsed node stands for a chain of full nodes (same active leaves) from level ``low`` to
        ``top``; it may be *kept* in a cut when ``low <= hi`` and ``top >= lo`` (released under its
        full node at level ``max(low, lo)``, whose hierarchy leaves its LM counts), and *split* when
        its children (top level ``low - 1``) may be: ``low > lo``. :meth:`repair` then returns the
        nearest cut within the bounds; the level-``lo`` cut is the most specific such cut and the
        level-``hi`` cut the most general.
        """
        nodes = self._all_nodes
        keep_ok, split_ok = [], []
        for entry in self.cnodes:
            chain = entry["full"]  # top of the chain first
            top, low = nodes[chain[0]].level, nodes[chain[-1]].level
            keep_ok.append(low <= hi and top >= lo)
            split_ok.append(bool(entry["children"]) and low > lo)
            if keep_ok[-1]:
                released = next(f for f in reversed(chain) if nodes[f].level >= lo)
                entry["released"] = released
                entry["label"] = nodes[released].label
                entry["leaves"] = nodes[released].leaves
        self.bounds = (int(lo), int(hi))
        self._allowed = (keep_ok, split_ok)
        self._repair_cache.clear()

    # -- cuts <-> bits ----------------------------------------------------------------------------
    def cut_nodes(self, bits: Sequence[int]) -> list[int]:
        """Collapsed node ids of a *valid* bit string, in in-order; raises on an invalid one."""
        out: list[int] = []
        self._collect(self.root, bits, out)
        return out

    def _collect(self, cid: int, bits, out: list[int]) -> None:
        node = self.cnodes[cid]
        inside = [bits[j] for j in range(node["lo"], node["hi"])]
        if not any(inside):
            out.append(cid)
            return
        if not node["children"]:
            out.append(cid)
            return
        kids = node["children"]
        for a in kids[:-1]:
            if not bits[self.cnodes[a]["hi"]]:
                raise ConfigError(f"invalid cut bits for {self.attribute!r}")
        for a in kids:
            self._collect(a, bits, out)

    def is_valid(self, bits: Sequence[int]) -> bool:
        try:
            cut = self.cut_nodes(bits)
        except ConfigError:
            return False
        return all(self._allowed[0][c] for c in cut)

    def bits_of(self, cut: Sequence[int]) -> list[int]:
        """The bit string of a cut given as collapsed node ids."""
        bits = [1] * self.nbits
        for cid in cut:
            node = self.cnodes[cid]
            for j in range(node["lo"], node["hi"]):
                bits[j] = 0
        return bits

    def repair(self, bits: Sequence[int]) -> list[int]:
        """The valid cut nearest to ``bits`` (least Hamming distance; ties keep the more general node).

        Tree DP: a node kept in the cut costs the 1-bits inside its range (they must become 0); a
        node split costs its children's costs plus the 0-bits between its children (they must
        become 1).
        """
        return self.repair_keeping(bits, ())

    def repair_keeping(self, bits: Sequence[int], keep: Sequence[int] = ()) -> list[int]:
        """Like :meth:`repair`, but the bits at positions ``keep`` (a mutation) are changed only
        when no valid cut has them: a mutated bit is the new characteristic the child should keep."""
        key = tuple(map(int, bits))
        keep = tuple(sorted(set(keep)))
        hit = self._repair_cache.get((key, keep))
        if hit is not None:
            return list(hit)
        weight = [1] * self.nbits
        for j in keep:
            weight[j] = self.nbits + 1
        out = self.bits_of(self._best_cut(key, weight))
        if len(self._repair_cache) < 200_000:
            self._repair_cache[(key, keep)] = out
        return list(out)

    def _best_cut(self, bits: Sequence[int], weight: Sequence[int]) -> list[int]:
        """The tree DP of :meth:`repair` bottom-up over a post-order of the collapsed nodes, with
        range sums from a prefix sum (same answer as :meth:`_best`, ties keep the node)."""
        plan = self._dp_plan()
        prefix = [0]
        for b, w in zip(bits, weight):
            prefix.append(prefix[-1] + (w if b else 0))
        cost: list[float] = [0] * len(self.cnodes)
        kept = [True] * len(self.cnodes)
        keep_ok, split_ok = self._allowed  # level bounds (all True without them)
        for cid, lo, hi, kids, gaps in plan:
            keep = prefix[hi] - prefix[lo] if keep_ok[cid] else math.inf
            if kids and split_ok[cid]:
                split = sum(weight[h] for h in gaps if not bits[h]) + sum(cost[a] for a in kids)
                if split < keep:
                    cost[cid], kept[cid] = split, False
                    continue
            cost[cid] = keep
        out, stack = [], [self.root]
        while stack:
            cid = stack.pop()
            if kept[cid]:
                out.append(cid)
            else:
                stack.extend(reversed(self.cnodes[cid]["children"]))
        return out

    def _dp_plan(self) -> list[tuple]:
        """Collapsed nodes children first: (id, lo, hi, children, bit positions between children)."""
        plan = self._plan
        if plan is None:
            plan, stack = [], [(self.root, False)]
            while stack:
                cid, done = stack.pop()
                node = self.cnodes[cid]
                if done:
                    kids = node["children"]
                    plan.append((cid, node["lo"], node["hi"], list(kids), [self.cnodes[a]["hi"] for a in kids[:-1]]))
                    continue
                stack.append((cid, True))
                stack.extend((a, False) for a in node["children"])
            self._plan = plan
        return plan

    def _cost(self, cid: int, bits, memo: dict) -> tuple[int, bool]:
        if cid in memo:
            return memo[cid]
        node = self.cnodes[cid]
        bits, w = bits
        keep = sum(w[j] for j in range(node["lo"], node["hi"]) if bits[j])
        if not node["children"]:
            memo[cid] = (keep, True)
            return memo[cid]
        kids = node["children"]
        split = sum(w[self.cnodes[a]["hi"]] for a in kids[:-1] if not bits[self.cnodes[a]["hi"]])
        bits = (bits, w)
        split += sum(self._cost(a, bits, memo)[0] for a in kids)
        memo[cid] = (keep, True) if keep <= split else (split, False)
        return memo[cid]

    def _best(self, cid: int, bits, out: list[int], memo: dict | None = None) -> None:
        memo = {} if memo is None else memo
        _, keep = self._cost(cid, bits, memo)
        if keep:
            out.append(cid)
            return
        for a in self.cnodes[cid]["children"]:
            self._best(a, bits, out, memo)

    # -- what a cut releases ----------------------------------------------------------------------
    def labels_of(self, bits: Sequence[int]) -> list[str]:
        return [self.cnodes[c]["label"] for c in self.cut_nodes(bits)]

    def groups(self, bits: Sequence[int]) -> list[tuple[str, float, list[int]]]:
        """Per released value: ``(label, LM loss (M_P - 1)/(M - 1), leaf codes)``; every leaf of the
        hierarchy is in exactly one group (unused leaves go to the lowest cut node above them, or to
        the root's group when the cut is below their nearest used ancestor)."""
        cut = self.cut_nodes(bits)
        m = self.n_leaves
        out = []
        pos_group = {}
        for g, cid in enumerate(cut):
            node = self.cnodes[cid]
            loss = (node["leaves"] - 1) / (m - 1) if m > 1 else 0.0
            out.append([node["label"], loss, []])
            for p in range(node["lo"], node["hi"] + 1):
                pos_group[p] = g
        in_cut = {}
        for g, cid in enumerate(cut):
            in_cut[self.cnodes[cid]["released"]] = g  # the node whose label is released
        root_group = None
        for leaf in range(self.n_leaves):
            if leaf in self.position:
                out[pos_group[self.position[leaf]]][2].append(leaf)
                continue
            grp = next((in_cut[f] for f in self.leaf_path[leaf] if f in in_cut), None)
            if grp is None:
                if root_group is None:
                    root_group = len(out)
                    root_label = self._all_nodes[self.root_full].label
                    out.append([root_label, 1.0 if m > 1 else 0.0, []])
                grp = root_group
            out[grp][2].append(leaf)
        return [tuple(x) for x in out]

    def bits_from_labels(self, labels: Sequence[str]) -> list[int]:
        """Bits of a cut given by its released values (from a transformation JSON)."""
        wanted = list(labels)
        cut = []
        for label in wanted:
            cands = [i for i, n in enumerate(self.cnodes) if n["label"] == label]
            if not cands:
                raise ConfigError(f"{label!r} is not a value of the taxonomy of {self.attribute!r}")
            cut.append(cands[0] if len(cands) == 1 else min(cands, key=lambda i: self.cnodes[i]["hi"] - self.cnodes[i]["lo"]))
        covered = [0] * len(self.order)
        for cid in cut:
            for p in range(self.cnodes[cid]["lo"], self.cnodes[cid]["hi"] + 1):
                covered[p] += 1
        if any(c != 1 for c in covered):
            bad = [self.hierarchy.rows[self.order[p]][0] for p, c in enumerate(covered) if c != 1][:3]
            raise ConfigError(
                f"{list(labels)} is not a valid cut of {self.attribute!r}: value(s) {bad} are covered "
                "by no or several of its nodes"
            )
        return self.bits_of(cut)


# ---------------------------------------------------------------------------------------------
# numeric: intervals over potential end points


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


INTERVAL = re.compile(r"^\s*\[\s*([^,\]]+?)\s*,\s*([^\]]+?)\s*\]\s*$")


class IntervalCoder:
    """The chromosome part of one numeric attribute.

    Leaves are the hierarchy's leaves read as numbers, sorted. Potential end point ``j`` sits between
    the ``j``-th and ``j+1``-th distinct value (values holding no row are skipped). With more than
    ``max_endpoints + 1`` distinct values, ``max_endpoints`` end points are chosen by equal-frequency
    quantization (Iyengar's "discretization procedure"). An interval is released as ``[lo, hi]``,
    the smallest and largest value it holds; its LM loss is ``(hi - lo) / (U - L)``.
    """

    numeric = True

    def __init__(self, hierarchy, freq: Sequence[int] | None = None, max_endpoints: int = 128) -> None:
        self.hierarchy = hierarchy
        self.attribute = hierarchy.attribute
        if hierarchy.has_null:
            raise ConfigError(
                f"column {self.attribute!r} holds NULLs, which no interval of the genetic search can hold; "
                f"suppress their rows (--nulls {self.attribute}=suppress) or cut it along a tree (--qi {self.attribute}=bands:W1,W2 with --min-level/--max-level)"
            )
        try:
            vals = [float(r[0]) for r in hierarchy.rows]
        except ValueError:
            bad = next(r[0] for r in hierarchy.rows if not is_number(r[0]))
            raise HierarchyError(f"column {self.attribute!r} is marked numeric but has value {bad!r}") from None
        if any(math.isnan(v) for v in vals):
            raise HierarchyError(f"column {self.attribute!r} has NaN, which no interval can hold")
        self.n_leaves = len(vals)
        self.value = vals
        freq = list(freq) if freq is not None else [1] * len(vals)
        used = sorted({v for v, f in zip(vals, freq) if f > 0} or set(vals))
        self.distinct = used  # sorted distinct values that hold rows
        self.L, self.U = used[0], used[-1]
        weight = {v: 0 for v in used}
        for v, f in zip(vals, freq):
            if v in weight:
                weight[v] += f
        n = len(used) - 1  # all possible end points
        if n <= max_endpoints:
            self.endpoints = list(range(n))
        else:
            total = sum(weight.values())
            cum, acc, chosen = [], 0, []
            for v in used[:-1]:
                acc += weight[v]
                cum.append(acc)
            import numpy as np

            cums = np.asarray(cum, dtype=np.float64)
            for q in range(1, max_endpoints + 1):
                target = total * q / (max_endpoints + 1)
                chosen.append(int(np.abs(cums - target).argmin()))  # the first nearest, as min() picks
            # and every band edge of a hierarchy level with at most max_endpoints edges: its
            # full-domain level (a lattice node's, the seed's) is then a cut of the chromosome
            self.endpoints = sorted(set(chosen) | set(self.level_edges(hierarchy, max_endpoints)))
        self.nbits = len(self.endpoints)
        self._rank: Any = None  # per leaf its rank among the distinct values (group_arrays)
        self._distinct: Any = None

    def level_edges(self, hierarchy, max_endpoints: int) -> list[int]:
        """The end points (between the ``j``-th and next distinct value) where a level of the
        hierarchy (``bands``) parts two neighbouring values, for every level with at most
        ``max_endpoints`` such edges (a finer level's are left to the quantization)."""
        out: list[int] = []
        rank = {v: j for j, v in enumerate(self.distinct)}
        for level in range(1, hierarchy.max_level):
            group = hierarchy.leaf_to_level(level)
            band: dict[int, int] = {}
            for leaf, value in enumerate(self.value):
                if value in rank:
                    band.setdefault(rank[value], group[leaf])
            edges = [j for j in range(len(self.distinct) - 1) if band[j] != band[j + 1]]
            if len(edges) <= max_endpoints:
                out.extend(edges)
        return out

    def repair(self, bits: Sequence[int]) -> list[int]:
        return [int(b) for b in bits]

    def repair_keeping(self, bits: Sequence[int], keep: Sequence[int] = ()) -> list[int]:
        return [int(b) for b in bits]

    def is_valid(self, bits: Sequence[int]) -> bool:
        return len(bits) == self.nbits

    def intervals(self, bits: Sequence[int]) -> list[tuple[float, float]]:
        """``(lo, hi)`` value pairs of the released intervals, in value order."""
        cuts = [self.endpoints[j] for j, b in enumerate(bits) if b]
        out, start = [], 0
        for c in cuts:
            out.append((self.distinct[start], self.distinct[c]))
            start = c + 1
        out.append((self.distinct[start], self.distinct[-1]))
        return out

    def labels_of(self, bits: Sequence[int]) -> list[str]:
        return [f"[{_fmt(lo)}, {_fmt(hi)}]" for lo, hi in self.intervals(bits)]

    def groups(self, bits: Sequence[int]) -> list[tuple[str, float, list[int]]]:
        return self._groups(self.intervals(bits))

    def _groups(self, ivs: list[tuple[float, float]]) -> list[tuple[str, float, list[int]]]:
        span = self.U - self.L
        out: list[list[Any]] = [[f"[{_fmt(lo)}, {_fmt(hi)}]", (hi - lo) / span if span > 0 else 0.0, []] for lo, hi in ivs]
        for leaf, i in enumerate(interval_indices(ivs, self.value)):
            out[i][2].append(leaf)
        return [tuple(x) for x in out]

    def group_arrays(self, bits: Sequence[int]):
        """What :meth:`groups` gives, as arrays, with no per-leaf Python loop: per leaf its
        interval (``codes``, int64), per interval its LM loss and its number of leaves. The same
        assignment as :meth:`groups` (a leaf's value in a gap goes to the interval on its right):
        a value's interval is the number of cuts before its rank among the distinct values.

        >>> from sqlanon.hierarchy.model import Hierarchy
        >>> c = IntervalCoder(Hierarchy("a", [[str(v), "*"] for v in (1, 2, 3, 5)]))
        >>> codes, loss, sizes = c.group_arrays([0, 1, 0])
        >>> codes.tolist(), loss.tolist(), sizes.tolist()
        ([0, 0, 1, 1], [0.25, 0.5], [2, 2])
        """
        import numpy as np

        if self._rank is None:  # once per coder: each leaf's rank among the distinct values
            self._rank = np.searchsorted(np.asarray(self.distinct, dtype=np.float64), np.asarray(self.value, dtype=np.float64), side="left")
            self._distinct = np.asarray(self.distinct, dtype=np.float64)
        cuts = np.array([e for e, b in zip(self.endpoints, bits) if b], dtype=np.int64)
        # at most len(cuts): every leaf's interval, no clipping needed
        codes = np.searchsorted(cuts, self._rank, side="left").astype(np.int64, copy=False)
        lo = self._distinct[np.concatenate(([0], cuts + 1))]
        hi = self._distinct[np.concatenate((cuts, [len(self.distinct) - 1]))]
        span = self.U - self.L
        loss = (hi - lo) / span if span > 0 else np.zeros(len(cuts) + 1, dtype=np.float64)
        return codes, loss, np.bincount(codes, minlength=len(cuts) + 1)

    def bits_from_labels(self, labels: Sequence[str]) -> list[int]:
        """End point ``j`` is used when its two neighbouring values fall in different intervals."""
        ivs = parse_intervals(labels, self.attribute)
        where = interval_indices(ivs, self.distinct)
        bits = [1 if where[j] != where[j + 1] else 0 for j in self.endpoints]
        endpoints = set(self.endpoints)  # once, not per value
        for j in range(len(self.distinct) - 1):
            if where[j] != where[j + 1] and j not in endpoints:
                raise ConfigError(f"intervals {list(labels)} of {self.attribute!r} split values between two potential end points")
        return bits


def interval_indices(ivs: Sequence[tuple[float, float]], values: Sequence[float]) -> list[int]:
    """Per value, the interval holding it (a value in a gap goes to the next interval to its right:
    intervals are ``(previous hi, hi]`` on the real line; beyond the last, the last): a binary
    search over the intervals' upper ends (in order), not a scan of the intervals per value."""
    import numpy as np

    his = np.asarray([hi for _, hi in ivs], dtype=np.float64)
    at = np.searchsorted(his, np.asarray(values, dtype=np.float64), side="left")
    return np.minimum(at, len(ivs) - 1).tolist()


def parse_intervals(labels: Sequence[str], attribute: str) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for label in labels:
        m = INTERVAL.match(str(label))
        if not m:
            raise ConfigError(f"{label!r} is not an interval '[lo, hi]' for numeric column {attribute!r}")
        lo, hi = float(m.group(1)), float(m.group(2))
        if hi < lo or (out and lo <= out[-1][1]):
            raise ConfigError(f"intervals of {attribute!r} must be disjoint and in order, got {list(labels)}")
        out.append((lo, hi))
    if not out:
        raise ConfigError(f"no interval given for {attribute!r}")
    return out


# ---------------------------------------------------------------------------------------------
# a whole solution


def chromosome_key(chromosome: Sequence[int]) -> bytes:
    """A chromosome (a tuple of 0/1 bits) as a dict key: its bits packed 8 to a byte (every
    chromosome of a layout has the same length, so distinct chromosomes get distinct keys). The
    memo and the set of unique solutions hold one per solution scored: on t24 (1,196 bits) 150
    bytes instead of ``bytes(chromosome)``'s 1,196.

    >>> chromosome_key((1, 0, 0, 0, 0, 0, 0, 1, 1)), len(chromosome_key((0,) * 1196))
    (b'\\x81\\x80', 150)
    """
    return np.packbits(np.frombuffer(bytes(chromosome), dtype=np.uint8)).tobytes()


class Layout:
    """The chromosome: per-attribute bit strings concatenated in QI order."""

    def __init__(self, qis: Sequence[str], coders: Sequence) -> None:
        self.qis = list(qis)
        self.coders = list(coders)
        self.offsets = []
        pos = 0
        for c in self.coders:
            self.offsets.append((pos, pos + c.nbits))
            pos += c.nbits
        self.nbits = pos

    @classmethod
    def build(cls, qis, hierarchies, freqs, numeric: Sequence[str] = (), prune_unused: bool = True,
              max_endpoints: int = 128, bounds: Sequence[tuple[int, int]] | None = None,
              bounded: Sequence[str] = ()) -> Layout:
        """``bounds`` (per QI ``(lo, hi)`` levels) restrict the tree cuts; a numeric QI named in
        ``bounded`` whose hierarchy has levels (``bands``) is then cut along that tree instead of
        into free intervals; one without levels raises a :class:`ConfigError` naming it."""
        coders: list[IntervalCoder | TreeCoder] = []
        for i, (name, h, f) in enumerate(zip(qis, hierarchies, freqs)):
            is_numeric = name in set(numeric) or h.numeric
            if is_numeric and name in set(bounded):
                if name in set(numeric) or h.max_level < 2:
                    raise ConfigError(
                        f"--min-level/--max-level {name}: search genetic cuts {name!r} into intervals, which have "
                        f"no hierarchy levels; give it a hierarchy with levels (e.g. --qi {name}=bands:5,10,20) or drop the bound"
                    )
                is_numeric = False  # a bounded bands hierarchy: cuts of its tree
            if is_numeric:
                coders.append(IntervalCoder(h, f, max_endpoints=max_endpoints))
            else:
                coder = TreeCoder(h, f, prune_unused=prune_unused)
                if bounds is not None:
                    coder.set_bounds(*bounds[i])
                coders.append(coder)
        return cls(qis, coders)

    def split(self, bits: Sequence[int]) -> list[tuple[int, ...]]:
        """Per QI its part of ``bits`` (a chromosome, a tuple of ints as the search keeps them, is
        sliced as it is; any other sequence is read as ints first)."""
        if type(bits) is not tuple:
            bits = tuple(map(int, bits))
        return [bits[a:b] for a, b in self.offsets]

    def join(self, parts: Sequence[Sequence[int]]) -> tuple[int, ...]:
        out: list[int] = []
        for p in parts:
            out.extend(map(int, p))
        return tuple(out)

    def repair(self, bits: Sequence[int], keep: Sequence[int] = ()) -> tuple[int, ...]:
        """Every categorical part repaired to its nearest valid cut; positions in ``keep`` (global
        bit indices, e.g. mutated bits) are kept when a valid cut has them. A numeric part is any
        bit string (:meth:`IntervalCoder.repair` keeps it): sliced, not rebuilt."""
        bits = tuple(map(int, bits))
        out: list[int] = []
        for c, (a, b) in zip(self.coders, self.offsets):
            if c.numeric:
                out.extend(bits[a:b])
                continue
            local = [j - a for j in keep if a <= j < b]
            out.extend(map(int, c.repair_keeping(bits[a:b], local) if local else c.repair(bits[a:b])))
        return tuple(out)

    def is_valid(self, bits: Sequence[int]) -> bool:
        return all(c.is_valid(p) for c, p in zip(self.coders, self.split(bits)))

    def transformation(self, bits: Sequence[int]) -> dict[str, list[str]]:
        return {q: c.labels_of(p) for q, c, p in zip(self.qis, self.coders, self.split(bits))}

    def recoding(self, bits: Sequence[int]):
        codes, labels = [], []
        for c, p in zip(self.coders, self.split(bits)):
            groups = c.groups(p)
            per_leaf = [0] * c.n_leaves
            for g, (_, _, leaves) in enumerate(groups):
                for leaf in leaves:
                    per_leaf[leaf] = g
            codes.append(per_leaf)
            labels.append([label for label, _, _ in groups])
        return Recoding(codes, labels)

    def bits_from_transformation(self, transformation: dict) -> tuple[int, ...]:
        parts = []
        for q, c in zip(self.qis, self.coders):
            if q not in transformation:
                raise ConfigError(f"the transformation has no cut for quasi-identifier {q!r}")
            parts.append(c.bits_from_labels(transformation[q]))
        return self.join(parts)


def _interval_codes(q: str, h, cut: list[str]) -> tuple[list[int], list[str]]:
    """A numeric QI's leaves mapped to the interval of ``cut`` holding each."""
    ivs = parse_intervals(cut, q)
    values = []
    for row in h.rows:
        try:
            values.append(float(row[0]))
        except ValueError:
            raise HierarchyError(f"column {q!r} is cut into intervals but has value {row[0]!r}") from None
    return interval_indices(ivs, values), cut


def _cut_codes(q: str, h, cut: list[str]) -> tuple[list[int], list[str]]:
    """A categorical QI's leaves mapped to the value of ``cut`` on each one's path to the root."""
    index = {label: i for i, label in enumerate(cut)}
    if len(index) != len(cut):
        raise ConfigError(f"the cut of {q!r} lists a value twice: {cut}")
    known = {v for row in h.rows for v in row}
    unknown = [v for v in cut if v not in known]
    if unknown:  # it used to release every row as the root, silently
        raise ConfigError(f"the cut of {q!r} names {unknown[0]!r}, which is not a value of its hierarchy")
    per_leaf = []
    extra: list[str] = []
    for row in h.rows:
        hits = list(dict.fromkeys(index[v] for v in row if v in index))
        if len(hits) > 1:
            raise ConfigError(f"{cut} is not a valid cut of {q!r}: leaf {row[0]!r} has several ancestors in it")
        if not hits:
            # a value that held no row when the cut was made (left out of the chromosome):
            # it is released as the root
            if not extra:
                extra.append(row[-1])
            hits = [len(cut)]
        per_leaf.append(hits[0])
    return per_leaf, cut + extra


def recoding_from_transformation(transformation: dict, qis, hierarchies, numeric: Sequence[str] = ()):
    """A :class:`sqlanon.plan.Recoding` from a ``--json`` transformation of the genetic search
    (``{column: [released values or "[lo, hi]" intervals]}``), e.g. for ``sqlanon check``.

    Categorical: each leaf maps to the listed value on its path to the root (exactly one must be).
    Numeric (listed in ``numeric``, or every value an interval ``[lo, hi]``): each leaf
    maps to the interval holding it (a value in a gap goes to the next interval to its right).
    """
    codes, labels = [], []
    for q, h in zip(qis, hierarchies):
        if q not in transformation:
            raise ConfigError(f"the transformation has no cut for quasi-identifier {q!r}")
        cut = [str(v) for v in transformation[q]]
        # intervals "[lo, hi]" (a bands hierarchy cut along its tree releases its band labels)
        is_num = q in set(numeric) or bool(cut and all(INTERVAL.match(v) for v in cut))
        per_leaf, released = _interval_codes(q, h, cut) if is_num else _cut_codes(q, h, cut)
        codes.append(per_leaf)
        labels.append(released)
    return Recoding(codes, labels)
