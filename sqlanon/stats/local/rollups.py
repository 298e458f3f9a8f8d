"""Roll-ups of the fetched set: the set a node is grouped from (:func:`source_set`: the leaves, a
kept roll-up or a stepping stone), keys moved between levels (:func:`move_keys`, :func:`keyed`),
grouping by key on the threads (:func:`rolled_up`, :func:`_group_in_parts`), the working buffers
(:class:`Scratch`) and the search's memory let go (:func:`drop_search_memory`)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

import sqlanon.stats.local.base as base
import sqlanon.stats.local.pool as pool
import sqlanon.stats.local.sets as sets


def source_set(stats, levels: tuple[int, ...], roll: bool = True) -> tuple[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A set to group nodes generalizing ``levels`` from, and its levels: with ``roll``, the
    fetched set rolled up to ``levels`` (kept: :data:`MEETS` of them); else the smallest kept
    roll-up ``levels`` generalizes (the fetched set at the leaves always qualifies). A set is
    its classes' first rows' leaf codes, the classes' counts and their key words.

    A source of more than :data:`STONE_ROWS` rows is first rolled up to a *stepping stone*
    (:func:`stepping_stone`) and kept, as the SQL path saves its sets (:meth:`Statistics.pick_set`):
    without them most nodes were grouped from the whole fetched set, slower than by SQL
    (docs/measurements.md)."""
    local = sets.local_set(stats)
    assert local is not None
    memory = stats.memory.local
    kept: dict = memory.meets
    if levels in kept:
        kept[levels] = kept.pop(levels)  # most recent last
        return levels, kept[levels]
    leaves = tuple(0 for _ in levels)
    if memory.leaves is None or memory.leaves[0] is not local:
        memory.leaves = (local, (local.codes, local.cnt, sets.leaf_keys(stats, local.codes)))
    src_levels, src = leaves, memory.leaves[1]
    stones: dict = memory.stones
    for at, got in [*stones.items(), *kept.items()]:
        if all(a <= b for a, b in zip(at, levels)) and len(got[1]) < len(src[1]):
            src_levels, src = at, got
    if src_levels != levels and len(src[1]) > base.STONE_ROWS:
        stone = stepping_stone(stats, levels, src_levels, len(src[1]))
        if stone is not None and stone in kept:
            src_levels, src = stone, kept[stone]
        elif stone is not None:
            # kept apart, never evicted by the roll-ups: every later set at its QI's level (or
            # generalizing the evaluated node) goes through it; at most STONES times the fetched bytes
            budget = base.STONES * _bytes((local.codes, local.cnt)) - sum(_bytes(v) for v in stones.values())
            if budget > 0:
                src_levels, src = stone, _roll_up(stats, local, stones, src_levels, src, stone, evict=False)
    if src_levels == levels or not roll:
        return src_levels, src
    return levels, _roll_up(stats, local, kept, src_levels, src, levels)


def drop_search_memory(stats) -> None:
    """The search's roll-ups, stepping stones, moved key words and working buffers let go (the
    fetched set stays: a later node is grouped from it, the rest made again if asked). They were
    held through the verification, the report and the write (the RSS after the search halves:
    docs/measurements.md); the run's peak is then the search's."""
    stats.memory.local.drop_search()


class _Levels(NamedTuple):
    levels: tuple[int, ...]


def stepping_stone(stats, levels: tuple[int, ...], src_levels: tuple[int, ...], src_rows: int) -> tuple[int, ...] | None:
    """Levels between ``src_levels`` and ``levels`` to roll a large source up to first (and keep):
    an evaluated node that ``levels`` generalizes whose classes are under a quarter of the
    source's rows (its set's second use, as :meth:`Statistics.pick_set`), the fewest classes
    first; else the source with its most shrinking QI at the target's level
    (:meth:`Statistics.partial_levels`); None when neither applies."""
    best = None
    for seen, classes in stats.sets.seen.items():
        if classes * 4 < src_rows and seen != levels and (best is None or classes < best[1]) \
                and all(a <= b <= c for a, b, c in zip(src_levels, seen, levels)):
            best = (seen, classes)
    if best is not None:
        del stats.sets.seen[best[0]]
        return tuple(int(v) for v in best[0])
    partial = stats.partial_levels(levels, _Levels(src_levels))
    return None if partial is None or partial == src_levels else tuple(int(v) for v in partial)


def _roll_up(stats, local: base.LocalSet, kept: dict, src_levels: tuple[int, ...], src, levels: tuple[int, ...], evict: bool = True):
    """``src`` (at ``src_levels``) rolled up to ``levels``, kept: at most :data:`MEETS` sets, and
    together at most :data:`KEPT` times the fetched set's bytes (oldest out; none with ``evict``)."""
    got = rolled_up(stats, src, src_levels, levels)
    kept[levels] = got
    while evict and len(kept) > 1 and (len(kept) > base.MEETS or sum(_bytes(v) for v in kept.values()) > base.KEPT * _bytes((local.codes, local.cnt))):
        kept.pop(next(iter(kept)))
    return got


def _table(rows: int) -> np.ndarray:
    """A hash table for grouping ``rows`` rows (:func:`~sqlanon.stats.local.kernels.count_classes`)
    of :func:`~sqlanon.stats.local.kernels.table_size` slots."""
    return np.empty(base._kernels().table_size(rows), dtype=np.int32)


def move_keys(stats, codes: np.ndarray, keys: np.ndarray, src_levels, levels, scratch_out: bool = False) -> np.ndarray:
    """The key words ``keys`` of a set's rows (leaf codes ``codes``) at ``src_levels`` moved to
    ``levels``: row slices over the threads. With ``scratch_out``, into ``stats``' working
    buffer for moved keys (valid until the next such move: a roll-up's or a split node's)."""
    lay, kern = sets.layout(stats), base._kernels()
    ref, node = np.asarray(src_levels, dtype=np.int64), np.asarray(levels, dtype=np.int64)
    if scratch_out:
        held = scratch(stats)
        words = keys.shape[1]
        out = held.get("moved_keys", keys.size, np.int64, max(held.rows, len(keys)) * words).reshape(keys.shape)
    else:
        out = np.empty(keys.shape, dtype=np.int64)
    pool.spread(len(codes), 1, pool.threads_for(stats),
           lambda a, z: kern.move_keys_into(codes[a:z], keys[a:z], ref, node, lay.kp_flat, lay.kp_off, lay.word_of, out[a:z]))
    return out


def rolled_up(stats, src, src_levels, levels):
    """A set ``src`` (first rows' leaf codes, counts, key words at ``src_levels``) rolled up to
    ``levels``, the same way: its key words moved, its rows grouped, the classes' first rows.

    On the threads: each thread groups the rows whose key hashes to its part
    (:func:`~sqlanon.stats.local.kernels.group_part`; a class's rows are all in one part, so
    nothing is merged), then the parts' classes are put in first-row order
    (:func:`~sqlanon.stats.local.kernels.first_row_order`): the same classes in the same order
    as one grouping, so the answer does not depend on the threads. Roll-ups were what stayed one
    thread's in a 10M-row search (docs/measurements.md; split by rows and merged instead, the
    merge cost what the split saved)."""
    codes, cnt, keys = src
    kern, threads = base._kernels(), pool.threads_for(stats)
    keys = move_keys(stats, codes, keys, src_levels, levels, scratch_out=True)
    n, cls_cnt, rep = _grouped(stats, keys, cnt)
    out_codes = np.empty((n, codes.shape[1]), dtype=codes.dtype)
    out_keys = np.empty((n, keys.shape[1]), dtype=np.int64)
    pool.spread(n, 1, threads, lambda a, z: kern.gather_rows(codes, keys, rep, a, z, out_codes, out_keys))
    return out_codes, cls_cnt[:n].copy(), out_keys


class Scratch:
    """Working buffers a Statistics' roll-ups and split nodes reuse, one per name, grown when a
    larger one is asked for (never shrunk; kept for the search's life): their hash tables,
    per-part classes and class buffers were fresh arrays each time, and a first touch of memory
    is page faults (reused, the groupings are faster: docs/measurements.md).

    A buffer grows at once to ``room`` (its size for the largest set the search can group:
    ``rows``, the fetched set's): memory is only touched, and paid for in page faults and RSS,
    where a grouping writes, so the room costs nothing until used, while growing in steps paid
    the faults again at every larger set (docs/measurements.md).

    >>> held = Scratch()
    >>> a = held.get("t", 8, np.int32); b = held.get("t", 4, np.int32)
    >>> b.base is a.base, b.shape, held.get("t", 16, np.int32).base is a.base
    (True, (4,), False)
    >>> c = held.get("u", 4, np.int64, room=100); c.shape, held.get("u", 90, np.int64).base is c.base
    ((4,), True)
    """

    def __init__(self, rows: int = 0) -> None:
        self._held: dict[str, np.ndarray] = {}
        self.rows = rows

    def get(self, name: str, size: int, dtype, room: int = 0) -> np.ndarray:
        """``size`` values of ``dtype`` named ``name``: the held buffer when it is large enough,
        else a new one of at least ``room`` values."""
        held = self._held.get(name)
        if held is None or held.shape[0] < size or held.dtype != np.dtype(dtype):
            held = self._held[name] = np.empty(max(size, room, 1), dtype=dtype)
        return held[:size]


def scratch(stats) -> Scratch:
    """The working buffers of ``stats`` (one search's: one caller at a time), with room for its
    base set's rows."""
    memory = stats.memory.local
    if memory.scratch is None:
        memory.scratch = Scratch(int(stats.base.rows or 0))
    return memory.scratch


def _grouped(stats, keys: np.ndarray, cnt: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """A set's rows grouped by their key words on all the threads (:func:`_group_in_parts`), on
    ``stats``' working buffers: the classes' number, counts and first rows (valid until the next
    grouping on those buffers)."""
    held, m = scratch(stats), max(len(cnt), 1)
    cls_cnt, rep = held.get("classes", m, np.int64, held.rows), held.get("first_rows", m, np.int32, held.rows)
    return _group_in_parts(keys, cnt, pool.threads_for(stats), cls_cnt, rep, held), cls_cnt, rep


def _group_in_parts(keys: np.ndarray, cnt: np.ndarray, threads: int, cls_cnt: np.ndarray, rep: np.ndarray, buffers: Scratch | None = None) -> int:
    """Rows grouped by their key words (counts into ``cls_cnt``, first rows into ``rep``, in
    first-row order; returns the classes), on up to ``threads`` threads, each the rows whose key
    hashes to its part (:func:`~sqlanon.stats.local.kernels.group_part`: a class's rows are all
    in one part, nothing is merged; the rows' hashes computed once first, in row slices), at
    least :data:`THREAD_WORK` rows a part; then the parts' classes in first-row order
    (:func:`~sqlanon.stats.local.kernels.first_row_order`), as one grouping gives them."""
    kern, m = base._kernels(), len(cnt)
    # every part's thread reads all the rows: no more parts than cores, whatever the engine's threads
    parts = max(1, min(threads, base.CORES, m // base.THREAD_WORK))
    if parts > 1:
        got: list = [None] * parts
        held = buffers or Scratch()
        slots = int(kern.table_size(-(-m // parts)))
        size = min(m, slots // 2 + slots // 4)  # group_part's limit
        most = max(held.rows, m)
        room = int(kern.table_size(-(-most // parts)))
        tables = [held.get(f"table{p}", slots, np.int32, room) for p in range(parts)]
        p_cnts = [held.get(f"cnt{p}", size, np.int64, most) for p in range(parts)]
        p_reps = [held.get(f"rep{p}", size, np.int32, most) for p in range(parts)]
        hashes = held.get("hashes", m, np.uint64, most)
        pool.spread(m, 1, parts, lambda a, z: kern.hash_rows(keys, a, z, hashes))

        def group(a: int, z: int) -> None:
            for p in range(a, z):
                got[p] = (kern.group_part(keys, cnt, hashes, p, parts, tables[p], p_cnts[p], p_reps[p]), p_cnts[p], p_reps[p])

        pool.spread(parts, m // parts, threads, group)
        if all(g[0] >= 0 for g in got):  # else a part overfilled its table (a skewed hash): whole
            n = sum(g[0] for g in got)
            reps, cnts = held.get("part_reps", n, np.int32, most), held.get("part_cnts", n, np.int64, most)
            at = 0
            for g in got:
                reps[at:at + g[0]], cnts[at:at + g[0]] = g[2][:g[0]], g[1][:g[0]]
                at += g[0]
            return in_first_row_order(m, reps, cnts, rep, cls_cnt, threads, held.get("first_row_marks", m, np.int32, most))
    table = _table(m) if buffers is None else buffers.get("table0", int(kern.table_size(m)), np.int32, int(kern.table_size(max(buffers.rows, m))))
    return int(kern.count_classes(keys, cnt, table, cls_cnt, rep, base._NO_ROWS))


def in_first_row_order(m: int, reps: np.ndarray, cnts: np.ndarray, rep: np.ndarray, cls_cnt: np.ndarray, threads: int, marks: np.ndarray | None = None) -> int:
    """:func:`~sqlanon.stats.local.kernels.first_row_order` on up to ``threads`` threads: the
    classes marked at their first rows (in slices of the classes; on ``marks``, ``m`` int32
    values, when given), then per row slice its classes counted, and placed after the slices
    before it (the same order on any number of threads). Returns the classes."""
    kern = base._kernels()
    use = max(1, min(threads, base.CORES, m // base.THREAD_WORK))
    if use <= 1:
        return int(kern.first_row_order(m, reps, cnts, rep, cls_cnt))
    if marks is None:
        at = np.zeros(m, dtype=np.int32)
    else:
        at = marks[:m]
        pool.spread(m, 1, use, lambda a, z: at[a:z].fill(0))
    pool.spread(len(reps), 1, use, lambda a, z: kern.first_rows_marked(reps, a, z, at))
    bounds = [m * t // use for t in range(use + 1)]
    counts = np.zeros(use, dtype=np.int64)

    def count(a: int, z: int) -> None:
        for t in range(a, z):
            counts[t] = kern.first_rows_counted(at, bounds[t], bounds[t + 1])

    pool.spread(use, base.THREAD_WORK, use, count)
    starts = np.cumsum(counts) - counts

    def place(a: int, z: int) -> None:
        for t in range(a, z):
            kern.first_rows_placed(at, cnts, bounds[t], bounds[t + 1], int(starts[t]), rep, cls_cnt)

    pool.spread(use, base.THREAD_WORK, use, place)
    return int(counts.sum())


def _bytes(arrays) -> int:
    return sum(a.nbytes for a in arrays)


def clusters(nodes: np.ndarray, reach: int = 2) -> list[list[int]]:
    """The batch's nodes (rows of ``nodes``) in groups, each grouped from its own reference: a
    node joins the first group whose first node is within ``reach`` levels of it (summed over
    the QIs), else it opens one. The successors of one node (a lightning expansion: one QI a
    level up each) are one group, and so are its predecessors (a descent); several expansions
    in one batch are several groups, each of whose nodes then moves one QI from its reference,
    where a whole batch's meet is far below most of its nodes (w24: 9 QIs a node, against 1).

    >>> clusters(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [3, 3, 3], [3, 4, 3], [2, 1, 3]]))
    [[0, 1, 2], [3, 4], [5]]
    """
    seeds: list[np.ndarray] = []
    groups: list[list[int]] = []
    for j, node in enumerate(nodes):
        for g, seed in enumerate(seeds):
            if int(np.abs(node - seed).sum()) <= reach:
                groups[g].append(j)
                break
        else:
            seeds.append(node)
            groups.append([j])
    return groups


def reference(group: np.ndarray) -> np.ndarray:
    """Per QI the level most of the group's nodes have (the lowest of a tie): the levels its
    key words are moved to once, each node then moving only where it differs."""
    return np.asarray([int(np.bincount(column).argmax()) for column in group.T], dtype=np.int64)


def keyed(stats, at: tuple[int, ...], codes: np.ndarray, keys: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The key words of a set (at the levels ``at``: its ``codes`` and ``keys``) moved to the
    levels ``ref``, from the kept moved keys of the same set closest to ``ref`` when that moves
    fewer QIs (a descent's batches: each one QI below the last, against ~20 from the set)."""
    cache: list = stats.memory.local.keyed
    target = tuple(int(v) for v in ref)
    best_levels, best = np.asarray(at, dtype=np.int64), keys
    moves = sum(a != b for a, b in zip(at, target))
    for src_codes, levels, moved in cache:
        if src_codes is codes:
            d = sum(a != b for a, b in zip(levels, target))
            if d < moves:
                best_levels, best, moves = np.asarray(levels, dtype=np.int64), moved, d
    out = move_keys(stats, codes, best, best_levels, ref)
    cache.append((codes, target, out))
    while len(cache) > 1 and (len(cache) > base.KEYED or sum(k.nbytes for _, _, k in cache) > base.KEPT * codes.nbytes):
        cache.pop(0)
    return out
