"""The fetched base set and its groupings: whether the in-process path is on (:func:`enabled`,
within the memory limit), the set fetched once (:func:`local_set`, sorted by its cluster keys:
:func:`sorted_from_arrow`, :func:`radix_sorted`), the packed-key layout (:func:`layout`,
:func:`leaf_keys`) and grouping by arbitrary per-QI maps (:func:`group_by_maps`,
:func:`group_many`, :func:`threshold_many`: the genetic search's candidates)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from typing import NamedTuple

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.expr.atoms import as_bigint, col, table_ref
import sqlanon.stats.batch as batch
from sqlanon.stats.marginals import arrow_into
from sqlanon.stats.pages import small_pages
import sqlanon.stats.local.base as base
import sqlanon.stats.local.pool as pool


def enabled(stats) -> bool:
    """Whether ``stats`` may evaluate locally at all: a prepared base set whose fetched codes,
    key words, kept roll-ups and working buffers (:func:`held_bytes`) fit the memory
    :func:`budget`, no aggregate beyond the class count asked, and ``stats.local_rows`` not 0
    (a row cap, a sanity bound by default). The decision and why is kept as
    ``stats.memory.local.route`` (the report's ``local_route``)."""
    cap = int(stats.local_rows or 0)
    if cap <= 0 or not stats.qis or not stats.prepared or stats.needs.any:
        return False
    memory = stats.memory.local
    if memory.route is not None and memory.route[0] is stats.base and memory.route[1] == cap:
        return memory.route[2]
    rows, need = stats.base.rows, held_bytes(stats)
    room = budget(stats)
    fits = rows <= cap and need <= room
    why = (f"in-process: {rows:,} tuples need {_mib(need)} of a {_budget_text(stats)}" if fits
           else f"sql: {rows:,} tuples over local_rows={cap:,}" if rows > cap
           else f"sql: {rows:,} tuples need {_mib(need)}, over a {_budget_text(stats)}")
    memory.route = (stats.base, cap, fits, why)
    return fits


def route(stats) -> str | None:
    """Why the base set's nodes go in-process or by SQL (:func:`enabled`'s last decision), None
    when it was not asked (``local_rows=0``, a requirement needing more than class sizes)."""
    got = stats.memory.local.route
    return None if got is None else got[3]


def _mib(n: int) -> str:
    """Bytes as MiB, for :func:`route`.

    >>> _mib(3 * 2**20 + 1)
    '3.0 MiB'
    """
    return f"{n / 2**20:,.1f} MiB"


#: the in-process path and the engine together hold at most this share of the memory
#: available to the process (and at most the engine's memory limit)
AVAILABLE_SHARE = 0.5
#: of that room, an engine that lives in this process (DuckDB: its memory is the process's)
#: keeps at least this share for its own statements while the in-process path holds its arrays
#: (the search's saved sets, the verification, the release), and never less than it holds
ENGINE_SHARE = 0.25
#: the memory assumed available where neither psutil nor /proc/meminfo nor sysconf tells
FALLBACK_AVAILABLE = 1 << 30


class Budget(NamedTuple):
    """The in-process path's memory budget and the figures it comes from (:func:`plan_budget`)."""

    room: int  # what the run may hold: the engine's memory limit, at most a share of the available
    engine: int  # what is left to the engine (0 on a server or a cluster)
    bytes: int  # what the in-process path may hold: room - engine

    def describe(self) -> str:
        """The budget as the report's ``local_route`` says it.

        >>> Budget(1000 * 2**20, 250 * 2**20, 750 * 2**20).describe()
        '750.0 MiB budget (1,000.0 MiB room, 250.0 MiB left to the engine)'
        >>> Budget(8 * 2**20, 0, 8 * 2**20).describe()
        '8.0 MiB budget'
        """
        if not self.engine:
            return f"{_mib(self.bytes)} budget"
        return f"{_mib(self.bytes)} budget ({_mib(self.room)} room, {_mib(self.engine)} left to the engine)"


def plan_budget(limit: int | None, available: int, engine_held: int | None) -> Budget:
    """The in-process path's budget from the engine's memory ``limit`` (None: none), the memory
    ``available`` to the process and what an engine living in this process holds now
    (``engine_held``; None: the engine is a server or a cluster, its memory is not this
    process's). Both take the same memory, so the room is the limit, at most
    :data:`AVAILABLE_SHARE` of the available memory, and an in-process engine keeps
    :data:`ENGINE_SHARE` of it, never less than it holds: the rest is the budget.

    >>> MiB = 2**20
    >>> plan_budget(1000 * MiB, 16000 * MiB, 50 * MiB).bytes // MiB     # DuckDB at 1000 MiB: a quarter stays DuckDB's
    750
    >>> plan_budget(1000 * MiB, 1000 * MiB, 50 * MiB).bytes // MiB      # little available: half of it, then DuckDB's quarter
    375
    >>> plan_budget(1000 * MiB, 16000 * MiB, 400 * MiB).bytes // MiB    # DuckDB holds more than its quarter: all of that stays
    600
    >>> plan_budget(1000 * MiB, 16000 * MiB, None).bytes // MiB         # a server engine: --memory-limit bounds this process alone
    1000
    >>> plan_budget(None, 16000 * MiB, None).bytes // MiB               # no limit: half the available memory
    8000
    """
    room = int(AVAILABLE_SHARE * available)
    if limit:
        room = min(room, int(limit))
    engine = 0 if engine_held is None else min(room, max(int(engine_held), int(ENGINE_SHARE * room)))
    return Budget(room, engine, room - engine)


def budget(stats) -> int:
    """The bytes the in-process path may hold (:func:`plan_budget`): the engine's memory limit
    (DuckDB's ``memory_limit``; on PostgreSQL and Spark the ``--memory-limit`` given:
    :meth:`~sqlanon.engine.base.Engine.client_memory_bytes`), at most :data:`AVAILABLE_SHARE` of
    the memory available (:func:`available_bytes`), less what an engine in this process keeps
    (:meth:`~sqlanon.engine.base.Engine.held_bytes`); asked once per Statistics
    (``stats.memory.local.budget``, its figures as ``stats.memory.local.budget_figures``)."""
    memory = stats.memory.local
    if memory.budget is None:
        figures = plan_budget(stats.engine.client_memory_bytes(), available_bytes(), stats.engine.held_bytes())
        memory.budget, memory.budget_figures = figures.bytes, figures
    return memory.budget


def _budget_text(stats) -> str:
    """The budget as :func:`enabled`'s route says it (only the bytes when a test set them)."""
    figures = stats.memory.local.budget_figures
    if figures is None or figures.bytes != stats.memory.local.budget:
        return f"{_mib(budget(stats))} budget"
    return figures.describe()


def available_bytes() -> int:
    """The memory available to new allocations: psutil's ``available`` where psutil is
    installed, else ``MemAvailable`` of /proc/meminfo, else free pages by sysconf, else
    :data:`FALLBACK_AVAILABLE`."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return FALLBACK_AVAILABLE


def held_bytes(stats) -> int:
    """What :func:`enabled` counts against the memory budget: per base-set row its int32 codes
    and int64 count and key word, for the fetched set, its keys, the kept roll-ups and stepping
    stones, moved keys and the roll-ups' working buffers (the first thread's node buffers are
    among them)."""
    return stats.base.rows * (4 * len(stats.qis) + 16) * (3 + 2 * base.KEPT + base.STONES)


def node_slots(stats, threads: int) -> int:
    """Of ``threads``, how many may each hold node buffers (:func:`node_buffers`: a thread's key
    words, hash table, class counts and first rows, up to ~36 bytes a base-set row for one key
    word) beside what :func:`enabled` counts, within the engine's memory limit: at least one.
    Each thread keeps its buffers for the search's life, so on many cores they add up (16
    threads, 1.6M rows: ~0.9 GB); past the limit a batch's nodes use fewer threads."""
    if threads <= 1:
        return max(threads, 1)
    per_slot = stats.base.rows * (8 * layout(stats).n_words + 28)
    return max(1, min(threads, 1 + (budget(stats) - held_bytes(stats)) // max(per_slot, 1)))


def local_set(stats) -> base.LocalSet | None:
    """The base set's leaf codes and counts, fetched once (one statement) and kept on ``stats``;
    None when :func:`enabled` says no."""
    if not enabled(stats):
        return None
    memory = stats.memory.local
    if memory.set is None or memory.set[0] is not stats.base:
        with small_pages():
            memory.set = (stats.base, _fetched(stats))
    return memory.set[1]


def _fetched(stats) -> base.LocalSet:
    """The base set's leaf codes and counts by one statement, sorted when large (:data:`SORT_ROWS`)."""
    q = exp.select(*[col(stats.qcol(i)) for i in range(len(stats.qis))], exp.alias_(as_bigint(col("cnt")), "n", quoted=True), copy=False)
    held = [stats.engine.fetch_arrow(q.from_(table_ref(stats.base.table), copy=False))]
    table = held[0]
    cnt = np.empty(table.num_rows, dtype=np.int64)
    arrow_into(table.column("n"), cnt)
    del table  # the Arrow buffers go as soon as the codes are read (sorted_from_arrow lets them go)
    fetched = sorted_from_arrow(stats, held[0], cnt, let_go=held.clear) if len(cnt) > base.SORT_ROWS else None
    if fetched is None:
        table = held.pop()
        codes = np.empty((table.num_rows, len(stats.qis)), dtype=np.int32)
        for i in range(len(stats.qis)):
            arrow_into(table.column(stats.qcol(i)), codes[:, i])
        del table
        fetched = clustered(stats, codes, cnt) if len(cnt) > base.SORT_ROWS else (codes, cnt)
    stats.engine.free_memory()  # the Arrow buffers were the engine's
    return base.LocalSet(*fetched)


def clustered(stats, codes: np.ndarray, cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fetched rows sorted by their codes, QIs in :meth:`~sqlanon.stats.core.Statistics.cluster_keys`
    order (the narrowest first, the widest last; as many as fit a 63-bit sort key). The base set
    comes in the grouping's hash order; sorted, rows side by side mostly share a class, so a
    grouping finds its class's slot and first row where it just was, in the CPU's cache, rather
    than at random in tables of tens of MB (the same reason Spark stores its sets sorted:
    :meth:`~sqlanon.dialect.spark.SparkDialect.clustered`; sorting here is cheaper than DuckDB's
    ``ORDER BY``: docs/measurements.md)."""
    return base._kernels().clustered_rows(codes, cnt, np.asarray(_cluster_order(stats), dtype=np.int64))


def _cluster_order(stats) -> list[int]:
    """The QIs from the narrowest (fewest leaves) to the widest: the sort's most significant first."""
    return sorted(range(len(stats.qis)), key=lambda i: (len(stats.hierarchies[i].labels(0)), i))


def sorted_from_arrow(stats, table, cnt: np.ndarray, let_go=None) -> tuple[np.ndarray, np.ndarray] | None:
    """The fetched set as :func:`clustered` sorts it, built from the Arrow columns: each QI's codes
    go straight from the Arrow buffers into one 63-bit sort key per row (its bits from its
    hierarchy's leaves), the keys are radix-sorted with the counts alongside, and the codes are
    read back from the sorted keys (in row slices over the threads). None when the QIs need more
    than 63 bits or a code is outside its hierarchy's leaves: then :func:`clustered`. Against
    copying every column into row-major codes first (a strided write whose first column alone
    touches all of the set's codes) and sorting a copy of those: one array of codes fewer, and a
    faster fetch on one thread (the codes' first touch is now the decode's) and on two (the
    decode's slices fault their pages in on both; docs/measurements.md). Once the keys are built
    the table is not read again: ``let_go`` (when given) drops the caller's reference, so its
    buffers are freed before the sort's (one copy of the set fewer at the fetch's peak)."""
    kern, order = base._kernels(), _cluster_order(stats)
    widths = [len(stats.hierarchies[i].labels(0)) for i in order]
    used = [max(1, (w - 1).bit_length()) for w in widths]
    bits = sum(used)
    if bits > 63:
        return None
    m = len(cnt)
    key = np.zeros(m, dtype=np.int64)
    shifts = np.asarray([bits - sum(used[: t + 1]) for t in range(len(order))], dtype=np.int64)
    if not _keys_from_chunks(stats, kern, table, order, key, shifts, widths):
        return None
    del table
    if let_go is not None:
        let_go()
    key, cnt = radix_sorted(key, cnt, bits, pool.threads_for(stats))
    codes = np.empty((m, len(order)), dtype=np.int32)
    ordered, width_bits = np.asarray(order, dtype=np.int64), np.asarray(used, dtype=np.int64)
    pool.spread(m, 1, pool.threads_for(stats), lambda a, z: kern.decode_keys(key, a, z, ordered, shifts, width_bits, codes))
    return codes, cnt


def _keys_from_chunks(stats, kern, table, order: list[int], key: np.ndarray, shifts: np.ndarray, widths: list[int]) -> bool:
    """Each QI's codes or'ed into the rows' sort keys from its Arrow chunks
    (:func:`~sqlanon.stats.local.kernels.key_bits`); False when a chunk has NULLs or a code
    outside its leaves. When every column is chunked alike (DuckDB hands over record batches),
    the chunks go to the threads, each writing its own rows; otherwise one column at a time."""
    columns = [table.column(stats.qcol(i)).chunks for i in order]
    lengths = [len(chunk) for chunk in columns[0]] if columns else []
    if any([len(chunk) for chunk in chunks] != lengths for chunks in columns):
        for t, chunks in enumerate(columns):
            at = 0
            for chunk in chunks:
                values = _int32_view(chunk)
                if values is None or not kern.key_bits(key, at, values, int(shifts[t]), widths[t]):
                    return False
                at += len(chunk)
        return True
    starts = np.cumsum([0, *lengths])
    views = [[_int32_view(chunk) for chunk in chunks] for chunks in columns]
    if any(v is None for column in views for v in column):
        return False
    failed: list[int] = []

    def run(a: int, z: int) -> None:
        for c in range(a, z):
            for t, column in enumerate(views):
                if not kern.key_bits(key, int(starts[c]), column[c], int(shifts[t]), widths[t]):
                    failed.append(c)
                    return

    pool.spread(len(lengths), 1, pool.threads_for(stats), run, weights=[n * len(columns) for n in lengths])
    return not failed


def radix_sorted(key: np.ndarray, payload: np.ndarray, bits: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """``key`` (non-negative, below ``2**bits``) sorted with ``payload`` alongside, ties in row
    order, as :func:`~sqlanon.stats.local.kernels.radix_sort` sorts them, on up to ``threads``
    threads (at least :data:`THREAD_WORK` rows each): per 16-bit pass, each row slice counts its
    digits, the counts give each slice where its rows of each digit start (slices in row order:
    a stable sort, the same order on any number of threads), and the slices place their rows.

    >>> k, p = radix_sorted(np.array([5, 3, 5, 0], dtype=np.int64), np.arange(4), 3, 1)
    >>> k.tolist(), p.tolist()
    ([0, 3, 5, 5], [3, 1, 0, 2])
    """
    kern, m = base._kernels(), len(key)
    use = max(1, min(threads, base.CORES, m // base.THREAD_WORK))
    if use <= 1:
        return kern.radix_sort(key, payload, bits)
    bounds = [m * t // use for t in range(use + 1)]
    counts = np.empty((use, 65536), dtype=np.int64)
    buffers = [(np.empty(m, dtype=np.int64), np.empty(m, dtype=payload.dtype)) for _ in range(2)]
    src = (key, payload)
    for n, shift in enumerate(range(0, bits, 16)):
        dst = buffers[n % 2]

        def count(a: int, z: int, src=src, shift=shift) -> None:
            for t in range(a, z):
                kern.radix_counts(src[0], bounds[t], bounds[t + 1], shift, counts[t])

        pool.spread(use, base.THREAD_WORK, use, count)
        totals = counts.sum(axis=0)
        # where slice t's rows of digit d start: every row of a lower digit, then the slices before t
        at = (np.cumsum(totals) - totals)[None, :] + np.cumsum(counts, axis=0) - counts

        def place(a: int, z: int, src=src, dst=dst, shift=shift, at=at) -> None:
            for t in range(a, z):
                kern.radix_scatter(src[0], src[1], bounds[t], bounds[t + 1], shift, at[t], dst[0], dst[1])

        pool.spread(use, base.THREAD_WORK, use, place)
        src = dst
    return (src[0].copy(), src[1].copy()) if src[0] is key else src


def _int32_view(chunk) -> np.ndarray | None:
    """An Arrow integer chunk without NULLs as int32 values: its buffer itself when it is int32
    (no copy), else cast; None when it holds NULLs or is no integer."""
    if chunk.null_count or not pa.types.is_integer(chunk.type):
        return None
    kind = "i" if pa.types.is_signed_integer(chunk.type) else "u"
    raw = np.frombuffer(chunk.buffers()[1], dtype=np.dtype(f"<{kind}{chunk.type.bit_width // 8}"), count=chunk.offset + len(chunk))[chunk.offset:]
    if raw.dtype == np.int32:
        return raw
    if len(raw) and (int(raw.min()) < 0 or int(raw.max()) > np.iinfo(np.int32).max):
        return None  # not a leaf code; cast, it could wrap into one
    return raw.astype(np.int32)


def pack(widths: Sequence[int]) -> tuple[np.ndarray, np.ndarray, int]:
    """Mixed-radix words for codes below ``widths``: per QI its multiplier and word, and the
    number of words (each word's product of widths below :data:`WORD`).

    >>> pack([10, 10, 1 << 61])
    (array([ 1, 10,  1]), array([0, 0, 1]), 2)
    """
    mults = np.zeros(len(widths), dtype=np.int64)
    word_of = np.zeros(len(widths), dtype=np.int64)
    word, mult = 0, 1
    for i, w in enumerate(widths):
        w = max(1, int(w))
        if mult > 1 and mult * w >= base.WORD:
            word, mult = word + 1, 1
        mults[i], word_of[i] = mult, word
        mult *= w
    return mults, word_of, word + 1 if len(widths) else 1


def _flat(maps: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    arrays = [np.asarray(m, dtype=np.int64) for m in maps]
    offsets = np.zeros(len(arrays), dtype=np.int64)
    if arrays:
        offsets[1:] = np.cumsum([len(a) for a in arrays])[:-1]
    return (np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)), offsets


class MapArgs(NamedTuple):
    """Per-QI maps as the grouping kernels take them (unpacked in this order at the jit
    boundary): the maps flat with each QI's offset, and the packed key's multipliers, word per
    QI and number of words."""

    flat: np.ndarray
    offsets: np.ndarray
    mults: np.ndarray
    word_of: np.ndarray
    n_words: int


def _map_args(maps: Sequence[np.ndarray]) -> MapArgs:
    flat, offsets = _flat(maps)
    if len(flat) and int(flat.min()) < 0:
        raise ValueError("a released code is negative")
    mults, word_of, n_words = pack([int(np.max(m)) + 1 if len(m) else 1 for m in maps])
    return MapArgs(flat, offsets, mults, word_of, n_words)


def group_by_maps(local: base.LocalSet, maps: Sequence[np.ndarray]) -> base.Classes:
    """Group the fetched set by per-QI maps: ``maps[i][leaf code]`` is QI ``i``'s released code
    (any non-negative integers; rows share a class exactly when all their released codes are
    equal). One pass of the compiled kernel; the classes are numbered in first-row order.

    ``local`` is :func:`local_set` of a Statistics (its QIs' leaf codes, as the hierarchies
    number them)."""
    if len(maps) != local.codes.shape[1]:
        raise ValueError(f"{len(maps)} maps for {local.codes.shape[1]} QIs")
    row_class, cnt, rep, n = base._kernels().group_by_maps(local.codes, local.cnt, *_map_args(maps))
    return base.Classes(row_class, cnt[:n], rep[:n])


class CandidateMaps(NamedTuple):
    """Many candidates' per-QI maps as :func:`group_many` and :func:`threshold_many`'s kernels
    take them (unpacked in this order at the jit boundary): every map flat, and per candidate
    (one row each) its QIs' offsets into ``maps_flat``, the packed key's multipliers and word per QI,
    and its number of words (named as the kernels' parameters)."""

    maps_flat: np.ndarray
    maps_off: np.ndarray
    mults: np.ndarray
    word_of: np.ndarray
    n_words: np.ndarray


class Grouped(NamedTuple):
    """:func:`group_many`'s outputs, one row per candidate, filled by the kernel (unpacked in
    this order at the jit boundary): per fetched row its class, per class its rows and first
    row (padded to the rows), and the number of classes."""

    row_class: np.ndarray
    cls_cnt: np.ndarray
    rep: np.ndarray
    n: np.ndarray

    @classmethod
    def empty(cls, candidates: int, rows: int) -> Grouped:
        return cls(np.empty((candidates, rows), dtype=np.int32), np.zeros((candidates, rows), dtype=np.int64),
                   np.zeros((candidates, rows), dtype=np.int32), np.zeros(candidates, dtype=np.int64))

    def classes(self, j: int) -> base.Classes:
        """Candidate ``j``'s classes."""
        n = int(self.n[j])
        return base.Classes(self.row_class[j], self.cls_cnt[j, :n], self.rep[j, :n])


class Threshold(NamedTuple):
    """What :func:`threshold_many`'s kernel summarizes under (unpacked in this order at the jit
    boundary): the class-size threshold ``k``, and per candidate and QI a value per leaf code
    (``loss_flat`` at ``loss_off[j, i]``; ``loss_off`` has no rows when no losses are asked), read
    at the rows' leaf codes ``loss_codes_t`` (QIs x rows: column-major, :attr:`LocalSet.columns`)."""

    k: int
    loss_flat: np.ndarray
    loss_off: np.ndarray
    loss_codes_t: np.ndarray


class Summaries(NamedTuple):
    """:func:`threshold_many`'s outputs, one row per candidate, filled by the kernel: ``summary``
    (classes, smallest class, suppressed rows, classes under ``k``) and ``sums`` (per QI)."""

    summary: np.ndarray
    sums: np.ndarray


def _candidate_maps(local: base.LocalSet, candidates: Sequence[Sequence[np.ndarray]]) -> CandidateMaps:
    flats, offs, mults, words_of, n_words = [], [], [], [], []
    at = 0
    for maps in candidates:
        if len(maps) != local.codes.shape[1]:
            raise ValueError(f"{len(maps)} maps for {local.codes.shape[1]} QIs")
        one = _map_args(maps)
        flats.append(one.flat)
        offs.append(one.offsets + at)
        at += len(one.flat)
        mults.append(one.mults)
        words_of.append(one.word_of)
        n_words.append(one.n_words)
    return CandidateMaps(np.concatenate(flats), np.stack(offs), np.stack(mults), np.stack(words_of), np.asarray(n_words, dtype=np.int64))


def group_many(local: base.LocalSet, candidates: Sequence[Sequence[np.ndarray]], threads: int | None = None) -> list[base.Classes]:
    """:func:`group_by_maps` for every candidate (a list of per-QI maps each), the candidates
    spread over ``threads`` threads (default: the cores; :func:`spread`)."""
    if not candidates:
        return []
    maps = _candidate_maps(local, candidates)
    b, m = len(candidates), local.rows
    out = Grouped.empty(b, m)
    kern = base._kernels()
    pool.spread(b, m * local.codes.shape[1], threads or os.cpu_count() or 1, lambda a, z: kern.group_many(local.codes, local.cnt, *maps, a, z, *out))
    return [out.classes(j) for j in range(b)]


# ---------------------------------------------------------------------------------------------
# full-domain nodes: the key layout


class KeyLayout(NamedTuple):
    """The packed-key layout as the node kernels take it: per QI and level its part of the key
    (``kp_flat`` at ``kp_off[i, level]``) and per QI its word."""

    kp_flat: np.ndarray
    kp_off: np.ndarray
    word_of: np.ndarray


@dataclass
class Layout:
    """Per QI and level, its part of the packed key over leaf codes (``kp_flat`` at
    ``kp_off[i, level]``), and per QI its word; the batch statement's words and multipliers."""

    kp_flat: np.ndarray
    kp_off: np.ndarray
    word_of: np.ndarray
    n_words: int
    maps: list[list[np.ndarray]]

    @property
    def arrays(self) -> KeyLayout:
        """The arrays the kernels read, as one bundle."""
        return KeyLayout(self.kp_flat, self.kp_off, self.word_of)


def layout(stats) -> Layout:
    got = stats.memory.local.layout
    if got is None:
        mults = batch.multipliers(stats)
        word_of = np.zeros(len(stats.qis), dtype=np.int64)
        for w, word in enumerate(batch.words(stats)):
            for i, _ in word:
                word_of[i] = w
        levels = max(h.max_level for h in stats.hierarchies) + 1
        maps = [[np.asarray(batch._level_map(stats, i, 0, lv), dtype=np.int64) for lv in range(h.max_level + 1)] for i, h in enumerate(stats.hierarchies)]
        parts, kp_off, at = [], np.zeros((len(stats.qis), levels), dtype=np.int64), 0
        for i, per_level in enumerate(maps):
            for lv, m in enumerate(per_level):
                parts.append(m * mults[i])
                kp_off[i, lv] = at
                at += len(m)
        got = stats.memory.local.layout = Layout(np.concatenate(parts), kp_off, word_of, len(batch.words(stats)), maps)
    return got


def leaf_keys(stats, codes: np.ndarray) -> np.ndarray:
    """The key words of rows of leaf codes (every QI at level 0), in row slices over the threads."""
    lay, kern = layout(stats), base._kernels()
    keys = np.empty((len(codes), lay.n_words), dtype=np.int64)
    offsets, ones = lay.kp_off[:, 0].copy(), np.ones(len(stats.qis), dtype=np.int64)
    pool.spread(len(codes), 1, pool.threads_for(stats), lambda a, z: kern.packed_keys_into(codes[a:z], lay.kp_flat, offsets, ones, lay.word_of, keys[a:z]))
    return keys


def threshold_many(local: base.LocalSet, candidates: Sequence[Sequence[np.ndarray]], k: int, losses: Sequence[Sequence[np.ndarray]] | None = None,
                   threads: int | None = None, loss_codes: np.ndarray | base.LocalSet | None = None) -> Summaries:
    """:func:`group_many` summarized under a class-size threshold ``k`` (no per-row arrays come
    back): per candidate ``[classes, smallest class, suppressed rows, classes under k]`` (int64)
    and, with ``losses`` (per candidate, per QI a value per leaf code), per QI the sum over the
    classes under ``k`` of their rows times their value (float64; zeros without ``losses``). The
    genetic search's batches (:mod:`sqlanon.search.genetic.local`). ``loss_codes`` (rows x QIs,
    the rows of ``local`` in its order; or a :class:`LocalSet` of them, whose column-major copy it
    keeps) are the leaf codes the losses are read at when ``local``'s columns are blocks of QIs
    rather than the QIs (default: ``local.codes``). The kernel reads both column-major
    (:attr:`LocalSet.columns`, made once per set)."""
    b, q = len(candidates), local.codes.shape[1]
    if loss_codes is None or isinstance(loss_codes, base.LocalSet):  # laid out column-major once per set
        loss_t = (local if loss_codes is None else loss_codes).columns
    else:
        loss_t = np.ascontiguousarray(np.asarray(loss_codes).T)
    if loss_t.shape[1] != local.rows:
        raise ValueError(f"loss_codes have {loss_t.shape[1]} rows, the set {local.rows}")
    q_loss = loss_t.shape[0]
    out = Summaries(np.zeros((b, 4), dtype=np.int64), np.zeros((b, q_loss), dtype=np.float64))
    if not b:
        return out
    if any(len(maps) != q for maps in candidates):
        raise ValueError(f"candidates need {q} maps each")
    maps = _threshold_maps(candidates, q)
    loss_flat, loss_off = np.zeros(1, dtype=np.float64), np.zeros((0, q_loss), dtype=np.int64)
    if losses is not None:
        if any(len(per) != q_loss for per in losses):
            raise ValueError(f"losses need {q_loss} value lists per candidate")
        values = [np.asarray(v, dtype=np.float64) for per in losses for v in per]
        loss_flat = np.concatenate(values)
        loss_off = np.concatenate([[0], np.cumsum([len(v) for v in values[:-1]])]).astype(np.int64).reshape(b, q_loss)
    under = Threshold(int(k), loss_flat, loss_off, loss_t)
    codes_t = local.columns
    kern = base._kernels()
    pool.spread(b, local.rows * q, threads or os.cpu_count() or 1, lambda a, z: kern.threshold_many(codes_t, local.cnt, *maps, *under, a, z, *out))
    return out



def _threshold_maps(candidates: Sequence[Sequence[np.ndarray]], q: int) -> CandidateMaps:
    """The candidates' maps of :func:`threshold_many`, each packed by its maps' widths."""
    b = len(candidates)
    flat, offsets = _flat([m for maps in candidates for m in maps])
    if any(len(m) == 0 for maps in candidates for m in maps) or int(flat.min()) < 0:
        raise ValueError("a map is empty or a released code negative")
    widths = np.maximum.reduceat(flat, offsets) + 1
    packed = [pack(widths[j * q:(j + 1) * q].tolist()) for j in range(b)]
    return CandidateMaps(flat, offsets.reshape(b, q), np.stack([p[0] for p in packed]), np.stack([p[1] for p in packed]),
                         np.asarray([p[2] for p in packed], dtype=np.int64))
