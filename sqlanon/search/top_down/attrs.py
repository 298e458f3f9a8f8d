"""Top-down's per-attribute cut state (:mod:`sqlanon.search.top_down.planner`): a categorical
attribute's cut of its taxonomy tree (:class:`CatAttr`), a continuous one's intervals
(:class:`NumAttr`), their candidates' information gain."""

from __future__ import annotations

import math

from sqlanon.search.top_down.join import Tree


def merge_class_hist(class_hist, leaves) -> dict:
    """Class counts of a set of leaves (summed per class value)."""
    out: dict = {}
    for leaf in leaves:
        for c, n in class_hist[leaf].items():
            out[c] = out.get(c, 0) + n
    return out

class CatAttr:
    """A categorical attribute: a cut of its taxonomy tree."""

    numeric = False

    def __init__(self, qi: int, tree: Tree, freq: list[int], class_hist: list[dict], bounds: tuple[int, int] | None = None) -> None:
        self.qi, self.tree, self.freq, self.class_hist = qi, tree, freq, class_hist
        self.cut = {0}
        self.leaf_node = [0] * len(freq)
        self.lo = 0
        if bounds is not None:
            # level bounds: start from the max-level cut, never specialize a node whose children
            # would all lie below the min level (its lowest level is <= lo)
            h = tree.hierarchy
            self.lo, hi = int(bounds[0]), int(bounds[1])
            up = h.leaf_to_level(hi)
            members: dict[int, set] = {}
            for leaf, code in enumerate(up):
                members.setdefault(code, set()).add(leaf)
            self.leaf_node = [tree.by_set[frozenset(members[up[leaf]])] for leaf in range(len(freq))]
            self.cut = set(self.leaf_node)

    def top_level(self, node: int) -> int:
        """The highest hierarchy level holding this node's leaf set (its chain's top)."""
        n = self.tree.nodes[node]
        if node == 0:
            return self.tree.hierarchy.max_level
        assert n.parent is not None  # only the root has no parent
        return self.tree.nodes[n.parent].level - 1

    def rows(self, node: int) -> int:
        return sum(self.freq[l] for l in self.tree.nodes[node].leaves)

    def hist(self, leaves) -> dict:
        return merge_class_hist(self.class_hist, leaves)

    def children(self, node: int) -> list[frozenset]:
        return [self.tree.nodes[c].leaves for c in self.tree.nodes[node].children]

    def child_ids(self, node: int) -> list[int]:
        return list(self.tree.nodes[node].children)

    def candidates(self) -> list[int]:
        return sorted(v for v in self.cut if self.tree.nodes[v].children and self.rows(v) > 0 and self.tree.nodes[v].level > self.lo)

    def spec_map(self, cands) -> list[int]:
        m = list(self.leaf_node)
        for v in cands:
            for c in self.tree.nodes[v].children:
                for l in self.tree.nodes[c].leaves:
                    m[l] = c
        return m

    def specialize(self, v: int) -> None:
        self.cut.discard(v)
        for c in self.tree.nodes[v].children:
            self.cut.add(c)
            for l in self.tree.nodes[c].leaves:
                self.leaf_node[l] = c

    def label(self, node: int) -> str:
        n = self.tree.nodes[node]
        level = self.released_level(node)
        if level != n.level:  # a chain reaching the min level: its label there
            return self.tree.hierarchy.rows[next(iter(n.leaves))][level]
        return n.label

    def distortion(self) -> float:
        """Paper's distortion: one unit per generalization step (value -> parent value), per record;
        a shallow branch padded to the hierarchy's height counts its real steps, not its level."""
        return float(sum(self.freq[l] * self.tree.depth_steps(self.leaf_node[l], l, self.released_level(self.leaf_node[l])) for l in range(len(self.freq)) if self.freq[l]))

    def released_level(self, node: int) -> int:
        """The level whose label is released for ``node`` (its lowest, or the min level on a chain)."""
        n = self.tree.nodes[node]
        return self.lo if n.level < self.lo <= self.top_level(node) else n.level


class NumAttr:
    """A continuous attribute: intervals of its sorted distinct values, split on the fly at the
    InfoGain-best point (the median of the rows when there is no class column)."""

    numeric = True

    def __init__(self, qi: int, values: list[str], freq: list[int], class_hist: list[dict], has_class: bool) -> None:
        self.qi, self.freq, self.class_hist, self.has_class = qi, freq, class_hist, has_class
        self.values = values
        self.nums = [float(v) for v in values]
        self.order = sorted(range(len(values)), key=lambda i: self.nums[i])  # position -> leaf
        self.intervals: dict[int, tuple[int, int]] = {0: (0, len(values))}
        self.cut = {0}
        self.leaf_node = [0] * len(values)
        self._split: dict[int, list[int]] = {}
        self._next = 1

    def _leaves(self, node: int):
        lo, hi = self.intervals[node]
        return [self.order[p] for p in range(lo, hi)]

    def rows(self, node: int) -> int:
        return sum(self.freq[l] for l in self._leaves(node))

    def hist(self, leaves) -> dict:
        return merge_class_hist(self.class_hist, leaves)

    def child_ids(self, node: int) -> list[int]:
        if node not in self._split:
            lo, hi = self.intervals[node]
            best, best_gain = None, -1.0
            present = [p for p in range(lo, hi) if self.freq[self.order[p]] > 0]
            total = sum(self.freq[self.order[p]] for p in present)
            left_rows = 0
            left_hist: dict = {}
            whole = self.hist(self._leaves(node))
            for idx, p in enumerate(present[:-1]):
                leaf = self.order[p]
                left_rows += self.freq[leaf]
                for c, n in self.class_hist[leaf].items():
                    left_hist[c] = left_hist.get(c, 0) + n
                split = present[idx + 1]
                if self.has_class:
                    right = {c: whole[c] - left_hist.get(c, 0) for c in whole}
                    gain = entropy(whole) - (left_rows / total) * entropy(left_hist) - ((total - left_rows) / total) * entropy(right)
                else:
                    gain = -abs(2 * left_rows - total)  # the median split
                if gain > best_gain + 1e-12:
                    best, best_gain = split, gain
            if best is None:
                self._split[node] = []
            else:
                a, b = self._next, self._next + 1
                self._next += 2
                self.intervals[a], self.intervals[b] = (lo, best), (best, hi)
                self._split[node] = [a, b]
        return self._split[node]

    def children(self, node: int) -> list[list[int]]:
        return [self._leaves(c) for c in self.child_ids(node)]

    def candidates(self) -> list[int]:
        return sorted(v for v in self.cut if self.child_ids(v))

    def spec_map(self, cands) -> list[int]:
        m = list(self.leaf_node)
        for v in cands:
            for c in self.child_ids(v):
                for l in self._leaves(c):
                    m[l] = c
        return m

    def specialize(self, v: int) -> None:
        self.cut.discard(v)
        for c in self.child_ids(v):
            self.cut.add(c)
            for l in self._leaves(c):
                self.leaf_node[l] = c

    def label(self, node: int) -> str:
        if node == 0:
            return "*"
        lo, hi = self.intervals[node]
        a = self.values[self.order[lo]]
        if hi >= len(self.order):
            return f"[{a}, {self.values[self.order[-1]]}]"
        return f"[{a}, {self.values[self.order[hi]]}["

    def distortion(self) -> float:
        full = (self.nums[self.order[-1]] - self.nums[self.order[0]]) or 1.0
        out = 0.0
        for l in range(len(self.freq)):
            node = self.leaf_node[l]
            lo, hi = self.intervals[node]
            top = self.nums[self.order[hi]] if hi < len(self.order) else self.nums[self.order[-1]]
            width = top - self.nums[self.order[lo]]
            out += self.freq[l] * (width / full if node != 0 else 1.0)
        return out


def entropy(hist: dict) -> float:
    total = sum(hist.values())
    if total <= 0:
        return 0.0
    return -sum((n / total) * math.log2(n / total) for n in hist.values() if n > 0)
