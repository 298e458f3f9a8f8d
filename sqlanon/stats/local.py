"""Local evaluation: lattice nodes answered in-process over a small fetched base frequency set.

**Why.** A node answered by SQL costs a statement: on DuckDB ~1.5-2.4 ms of grouping a 30K-row
keyed set, ~0.65 ms per ``UNION ALL`` branch and the planning, about 3 ms a node at best (~300
nodes/s for any per-statement shape; issue 26 wants 500/s on w24). The statement's fixed cost is
the bottleneck, not the work: grouping 30K rows of integer codes is well under a millisecond in
compiled code. So, as :mod:`sqlanon.search.generate.kernels` does for the miner, when the *base
frequency set* is bounded (at most :data:`LOCAL_ROWS` rows and :data:`LOCAL_CELLS` codes, and
within the engine's memory limit with the kept roll-ups: :func:`enabled`), its
integer leaf codes (one column per QI) and counts are fetched **once** per
:class:`~sqlanon.stats.core.Statistics` (Arrow -> numpy) and every full-domain node is grouped
by a numba kernel (:mod:`sqlanon.stats.local_kernels`), several nodes in parallel over the cores.

**Not a divergence from the house's one idea** (DESIGN.md: "the data never comes into Python"):
what is fetched is a bounded aggregate the database already computed (distinct code tuples with
their counts, the same integers the batch statement reads; the codes of the hierarchies' leaves,
never a value of the source), and only when it is bounded; larger sets, and every requirement
whose classes need more than their row count, stay SQL, which is also the oracle
(``tests/test_local_eval.py``: every node of random lattices gives the same
:class:`~sqlanon.privacy.needs.NodeStats` both ways).

**Exactness.** A class key is the batch statement's packed key (the same code numbering and
mixed-radix words, :func:`sqlanon.stats.batch.words`), one or more int64 words; rows are grouped
by a hash table that confirms every hit on all words. The requirement's ``ok`` predicate and the
metric's final aggregates (``metric.batch_terms``, the lattice's ``extra_finals``) are sqlglot
expressions; they are compiled (:func:`compile_program`) into sums over the classes of an atom
(1, ``cnt``, ``cnt * cnt`` or a metric part) under a condition on ``cnt`` (an interval, or its
complement; ``ok`` is one). Anything else (another column, another aggregate, a nested ``CASE``,
``OR``) is refused and the node goes to SQL: the fallback is automatic. Sums are taken in float64
in a fixed order (the same answer on any number of threads; to SQL's within float rounding).

**What stays SQL** (the fallback, decided per call by :func:`applies`): a Recoding (not a level
per QI), a requirement needing sensitive, class-column, population or ranked aggregates
(``stats.needs.any``), a metric without batch terms, an ``ok`` or final outside the compiled
shapes, a base set over the caps, and ``stats.local_rows = 0`` (the search option
``local_rows``, e.g. to compare with SQL or to test SQL statements).

**For other searches**: :func:`group_by_maps` groups the fetched set by arbitrary per-QI maps
(leaf code -> released code), the genetic search's candidates; :func:`group_many` does many
candidates in parallel.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
from sqlglot import exp

from sqlanon.expr.atoms import as_bigint, col, table_ref
from sqlanon.privacy.needs import NodeStats
import sqlanon.stats.batch as batch
import sqlanon.stats.store as store
from sqlanon.stats.marginals import arrow_into
from sqlanon.stats.pages import small_pages

#: a base frequency set of at most this many rows is fetched and its nodes grouped in-process
#: (250,000 until large sets went through stepping stones: :func:`source_set`)
LOCAL_ROWS = 2_000_000
#: ... and of at most this many codes (rows x QIs; int32 each: 80 MB)
LOCAL_CELLS = 20_000_000
#: rolled-up sets (a group's meet) kept per Statistics
MEETS = 16
#: the kept roll-ups (and, apart, the kept moved key words) hold at most this many times the
#: fetched set's bytes (250K rows of 24 QIs: 25 MB fetched, 50 MB of roll-ups)
KEPT = 2
#: a group of at least this many nodes is grouped from its meet, rolled up first (and kept);
#: a smaller one from the smallest kept set it generalizes
ROLL_NODES = 2
#: a packed key word stays below this (as the batch statement's, :data:`sqlanon.stats.batch.WORD`)
WORD = batch.WORD
#: an unbounded side of a condition on ``cnt``
INF = 1 << 62
#: a batch is spread over threads only when it holds at least this much work per thread (nodes
#: x rows of the set they are grouped from): a thread's hand-off costs ~50 us
THREAD_WORK = 100_000
#: no per-row classes wanted (:func:`~sqlanon.stats.local_kernels.count_classes`)
_NO_ROWS = np.empty(0, dtype=np.int32)


@dataclass
class LocalSet:
    """The fetched base frequency set: leaf codes (rows x QIs, int32) and counts (int64)."""

    codes: np.ndarray
    cnt: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.cnt.shape[0])


class Classes(NamedTuple):
    """A grouping of the fetched set: per fetched row its class, per class its rows (summed
    ``cnt``) and its first fetched row (whose leaf codes give the class's released codes)."""

    row_class: np.ndarray
    cnt: np.ndarray
    rep: np.ndarray


def _kernels():
    from sqlanon.stats import local_kernels

    return local_kernels


#: load the compiled kernels in a background thread, nodes answered by SQL until they are
#: ready: a fresh process pays ~1-1.5 s of CPU to import numba and load the cached kernels.
#: False: load them on first use, waiting.
BACKGROUND = True
#: ... and start loading them only once a Statistics has asked for nodes this many seconds (its
#: first in-process-able node then), unless they are loaded already: a search on Adult takes
#: 0.05-0.3 s, and a process whose search is over waits for the load at exit (the loading thread
#: is not a daemon: one stopped inside LLVM at exit aborts the process). At 1 s, a CLI run whose
#: search took ~2 s by SQL (Adult, entropy k=5 4 %: 517 nodes) paid the load without using it
#: (CPU 3.9 -> 5.3 s, wall +0.1-1.3 s); at 3 s a search that starts loading has time to use them
#: (w24 lightning, 20 s: ~17 s in-process)
WARM_SECONDS = 3.0
#: the kernels load with Python's cyclic garbage collector off, and once loaded their objects
#: (~86K of numba's and LLVM's) and every older one are frozen out of it (:func:`gc.freeze`): a
#: full collection then scans only what came after. 10M rows, two threads
#: (``bench/phase_breakdown.py --freeze``): the load's ~210 collections cost 0.05-0.08 s of the
#: base scan, and the one full collection the search met 0.066-0.067 s (0.002 s frozen). Set by
#: the CLI (its process is sqlanon's own: cyclic garbage already there when freezing is never
#: collected); a library call leaves its host's collector alone.
FREEZE_GC = False
#: numba's import checks whether SciPy's BLAS is there (``numba.np.arraymath`` imports
#: ``scipy.linalg.cython_blas``, for ``np.dot`` and the like), which loads all of
#: ``scipy.linalg`` (and ``numpy.f2py`` through SciPy's array-API shim): 0.25-0.3 s of a 0.56-0.59 s
#: load where SciPy is installed (scikit-learn brings it), GIL-bound, while the base scan wants
#: the cores. The kernels use no linear algebra, so with this flag the load runs with
#: ``scipy.linalg`` marked unimportable (numba then uses its own inner product, the only thing
#: the check decides) and unmarked after: :func:`_scipy_blas_hidden`. Set by the CLI: another
#: thread importing SciPy during the load would fail, which only the CLI can rule out.
HIDE_SCIPY_BLAS = False
_WARM: dict[str, Any] = {}
_WARM_LOCK = threading.Lock()


def warm_up(wait: bool = False) -> bool:
    """Whether the kernels are loaded; the first call starts loading them (importing numba and
    running each kernel once on a tiny input, so its cached machine code is loaded) in a
    background thread. ``wait`` (or not :data:`BACKGROUND`): until they are. A failure (numba
    missing or broken) leaves every node to SQL."""
    with _WARM_LOCK:
        thread = _WARM.get("thread")
        if thread is None:
            thread = _WARM["thread"] = threading.Thread(target=_warm, name="sqlanon-local-warm-up")
            thread.start()
    if wait or not BACKGROUND:
        thread.join()
    return bool(_WARM.get("ready"))


def ready(stats) -> bool:
    """Whether the kernels are loaded for ``stats``: yes when loaded in this process; else the
    load starts once ``stats`` has asked for nodes :data:`WARM_SECONDS` (a long search), and
    its nodes go to SQL until it is done."""
    if _WARM.get("ready"):
        return True
    now = time.perf_counter()
    memory = stats.memory.local
    if memory.asked is None:
        memory.asked = now
    first = memory.asked
    if now - first >= WARM_SECONDS or not BACKGROUND or stats.base.rows > STONE_ROWS:
        return warm_up()
    return False


#: the kernels start loading once the base scan has taken this many seconds: a source that
#: takes so long to scan makes a search of seconds (10M Adult-like rows: 2-3 s of scan, a
#: 1.6M-row base set), whose first nodes would otherwise go by SQL while they load
SCAN_SECONDS = 0.5


def warm_up_during(seconds: float = SCAN_SECONDS) -> threading.Timer:
    """A timer that starts loading the kernels (:func:`warm_up`) after ``seconds``: started
    before the base scan and cancelled after it. The load (importing numba, mostly Python) then
    runs while the database scans, with the GIL free."""
    timer = threading.Timer(seconds, warm_up)
    timer.daemon = True
    timer.start()
    return timer


def _warm() -> None:
    collecting = FREEZE_GC and gc.isenabled()
    if collecting:  # the load makes ~86K objects, few of them cyclic garbage: no collections meanwhile
        gc.disable()
    try:
        with _scipy_blas_hidden(HIDE_SCIPY_BLAS):
            _load()
    finally:
        if FREEZE_GC:
            gc.freeze()
        if collecting:
            gc.enable()


class _scipy_blas_hidden:
    """Inside, ``import scipy.linalg`` fails (``None`` in :data:`sys.modules`) when ``hide`` and
    neither SciPy's linear algebra nor numba is loaded yet (:data:`HIDE_SCIPY_BLAS`); the mark
    is taken away after, so SciPy imports as usual. Elsewhere it does nothing.

    >>> import sys
    >>> with _scipy_blas_hidden("scipy.linalg" not in sys.modules and "numba" not in sys.modules):
    ...     try:
    ...         import scipy.linalg.cython_blas  # noqa: F401
    ...     except ImportError:
    ...         hidden = True
    ...     else:
    ...         hidden = "scipy.linalg" in sys.modules and "numba" in sys.modules  # loaded before
    >>> hidden, sys.modules.get("scipy.linalg", "absent") is not None
    (True, True)
    """

    def __init__(self, hide: bool) -> None:
        self.hide = hide and "scipy.linalg" not in sys.modules and "numba" not in sys.modules

    def __enter__(self) -> None:
        if self.hide:
            sys.modules["scipy.linalg"] = None  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        if self.hide and "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None:
            del sys.modules["scipy.linalg"]


def _load() -> None:
    try:
        kern = _kernels()
        codes, cnt = np.zeros((2, 1), dtype=np.int32), np.ones(2, dtype=np.int64)
        one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        flat, off2 = np.zeros(2, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
        keys = kern.packed_keys(codes, flat, zero, one, zero, 1)
        kern.group_keys(keys, cnt)
        kern.group_by_maps(codes, cnt, flat, zero, one, zero, 1)
        kern.move_keys_into(codes, keys, zero, zero, flat, off2, zero, np.empty_like(keys))
        table, cls_cnt, rep = np.full(16, -1, dtype=np.int32), np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int32)
        n = kern.count_classes(keys, cnt, table, cls_cnt, rep, _NO_ROWS)
        hashes = np.empty(2, dtype=np.uint64)
        kern.hash_rows(keys, 0, 2, hashes)
        n = kern.group_part(keys, cnt, hashes, 0, 1, table, cls_cnt, rep)
        n = kern.first_row_order(2, rep[:n].copy(), cls_cnt[:n].copy(), rep, cls_cnt)
        marks = np.zeros(2, dtype=np.int32)
        kern.first_rows_marked(rep[:n].copy(), 0, n, marks)
        kern.first_rows_counted(marks, 0, 2)
        kern.first_rows_placed(marks, cls_cnt[:n].copy(), 0, 2, 0, rep, cls_cnt)
        kern.packed_keys_into(codes, flat, zero, one, zero, np.empty((2, 1), dtype=np.int64))
        kern.clustered_rows(codes, cnt, zero)
        kern.key_bits(np.zeros(2, dtype=np.int64), 0, codes[:, 0].copy(), 0, 1)
        kern.decode_keys(np.zeros(2, dtype=np.int64), 0, 2, zero, zero, one, codes)
        digits = np.zeros(65536, dtype=np.int64)
        kern.radix_counts(zero, 0, 1, 0, digits)
        kern.radix_scatter(zero, zero, 0, 1, 0, digits, np.empty(1, dtype=np.int64), np.empty(1, dtype=np.int64))
        kern.table_size(2)
        kern.gather_rows(codes, keys, rep, 0, n, np.empty((n, 1), dtype=np.int32), np.empty((n, 1), dtype=np.int64))
        spec = np.zeros((1, 2), dtype=np.int64)
        program = (np.zeros((1, 3), dtype=np.int64), spec, np.zeros(3, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(2), off2)
        summary, sums = np.zeros((1, 6), dtype=np.int64), np.zeros((1, 1))
        kern.evaluate_nodes_on(codes, cnt, keys, zero, off2.copy(), flat, off2, zero, *program, 0, 1, summary, sums, np.empty_like(keys), table, cls_cnt, rep)
        kern.summarize(cls_cnt, rep, n, codes, off2[0], *program, summary[0], sums[0])
        kern.threshold_many(codes, cnt, flat, off2, off2 + 1, off2.copy(), one, 1, np.zeros(2), off2.copy(), 0, 1, np.zeros((1, 4), dtype=np.int64), np.zeros((1, 1)))
        _WARM["ready"] = True
    except Exception as err:  # pragma: no cover - numba missing or broken: SQL answers
        _WARM["error"] = f"{type(err).__name__}: {err}"


CORES = os.cpu_count() or 1
_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def threads_for(stats) -> int:
    """The threads a batch may use: the engine's ``threads`` setting when given, else the cores."""
    return max(1, int(stats.engine.threads or CORES))


def _pool(workers: int) -> ThreadPoolExecutor:
    """The kernels' thread pool, with at least ``workers`` threads (made again when smaller)."""
    with _POOL_LOCK:
        if not _POOL or _POOL[0]._max_workers < workers:
            _POOL[:] = [ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sqlanon-local")]
        return _POOL[0]


def spread(n: int, work: int, threads: int, run: Callable[[int, int], None], weights: Sequence[int] | None = None) -> None:
    """``run(start, stop)`` over slices of ``0..n`` (the kernels release the GIL), on at most
    ``threads`` threads and only as many as the work (``work`` per item, or each item's
    ``weights``) pays for (:data:`THREAD_WORK`), the slices of about equal work; the calling
    thread takes the first slice. The slices write disjoint rows of the outputs: the answer does
    not depend on the threads."""
    total = n * max(work, 1) if weights is None else int(sum(weights))
    use = max(1, min(threads, n, total // THREAD_WORK))
    if use <= 1:
        if n:
            run(0, n)
        return
    pool = _pool(use - 1)
    if weights is None:
        bounds = [n * t // use for t in range(use + 1)]
    else:
        cum = np.cumsum(np.asarray(weights, dtype=np.float64))
        bounds = [0, *[int(np.searchsorted(cum, cum[-1] * t / use)) + 1 for t in range(1, use)], n]
        bounds = [min(max(b, a), n) for a, b in zip([0, *bounds[:-1]], bounds)]
    jobs = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]
    futures = [pool.submit(run, a, b) for a, b in jobs[1:]]
    run(*jobs[0])
    for f in futures:
        f.result()


def enabled(stats) -> bool:
    """Whether ``stats`` may evaluate locally at all: a prepared base set within the caps, no
    aggregate beyond the class count asked, and ``stats.local_rows`` not 0."""
    cap = int(stats.local_rows or 0)
    if cap <= 0 or not stats.qis or not stats.prepared or stats.needs.any:
        return False
    rows = stats.base.rows
    if rows > cap or rows * len(stats.qis) > LOCAL_CELLS:
        return False
    # the fetched set, its key words, the kept roll-ups and stones, moved keys and the roll-ups'
    # working buffers (Scratch, about one set's bytes): within the engine's memory limit when
    # one is set (asked once per Statistics)
    memory = stats.memory.local
    if not memory.budget_asked:
        memory.budget, memory.budget_asked = (stats.engine.memory_bytes() if rows > STONE_ROWS else None), True
    budget = memory.budget
    return not budget or _held_bytes(stats) <= budget


def _held_bytes(stats) -> int:
    """What :func:`enabled` counts against the memory limit (the first thread's node buffers are
    the roll-ups' working buffers, among them)."""
    return stats.base.rows * (4 * len(stats.qis) + 16) * (3 + 2 * KEPT + STONES)


def node_slots(stats, threads: int) -> int:
    """Of ``threads``, how many may each hold node buffers (:func:`node_buffers`: a thread's key
    words, hash table, class counts and first rows, up to ~36 bytes a base-set row for one key
    word) beside what :func:`enabled` counts, within the engine's memory limit: at least one.
    Each thread keeps its buffers for the search's life, so on many cores they add up (16
    threads, 1.6M rows: ~0.9 GB); past the limit a batch's nodes use fewer threads."""
    budget = stats.memory.local.budget
    if not budget or threads <= 1:
        return max(threads, 1)
    per_slot = stats.base.rows * (8 * layout(stats).n_words + 28)
    return max(1, min(threads, 1 + (budget - _held_bytes(stats)) // max(per_slot, 1)))


def local_set(stats) -> LocalSet | None:
    """The base set's leaf codes and counts, fetched once (one statement) and kept on ``stats``;
    None when :func:`enabled` says no."""
    if not enabled(stats):
        return None
    memory = stats.memory.local
    if memory.set is None or memory.set[0] is not stats.base:
        with small_pages():
            memory.set = (stats.base, _fetched(stats))
    return memory.set[1]


def _fetched(stats) -> LocalSet:
    """The base set's leaf codes and counts by one statement, sorted when large (:data:`SORT_ROWS`)."""
    q = exp.select(*[col(stats.qcol(i)) for i in range(len(stats.qis))], exp.alias_(as_bigint(col("cnt")), "n", quoted=True), copy=False)
    table = stats.engine.fetch_arrow(q.from_(table_ref(stats.base.table), copy=False))
    cnt = np.empty(table.num_rows, dtype=np.int64)
    arrow_into(table.column("n"), cnt)
    fetched = sorted_from_arrow(stats, table, cnt) if len(cnt) > SORT_ROWS else None
    if fetched is None:
        codes = np.empty((table.num_rows, len(stats.qis)), dtype=np.int32)
        for i in range(len(stats.qis)):
            arrow_into(table.column(stats.qcol(i)), codes[:, i])
        fetched = clustered(stats, codes, cnt) if len(cnt) > SORT_ROWS else (codes, cnt)
    return LocalSet(*fetched)


# ---------------------------------------------------------------------------------------------
# the generic grouping (any per-QI maps)


#: a fetched set of more rows than this is sorted (:func:`clustered`)
SORT_ROWS = 100_000


def clustered(stats, codes: np.ndarray, cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fetched rows sorted by their codes, QIs in :meth:`~sqlanon.stats.core.Statistics.cluster_keys`
    order (the narrowest first, the widest last; as many as fit a 63-bit sort key). The base set
    comes in the grouping's hash order; sorted, rows side by side mostly share a class, so a
    grouping finds its class's slot and first row where it just was, in the CPU's cache, rather
    than at random in tables of tens of MB (the same reason Spark stores its sets sorted:
    :meth:`~sqlanon.dialect.spark.SparkDialect.clustered`). 10M Adult-like rows (a 1.6M-row
    base set), k=10, one thread: the in-process evaluation 1.6-2.2 -> 1.3 s at 0 %, 3.7-4.7 ->
    3.7 s at 5 % (sorted by DuckDB's ORDER BY the fetch cost 0.8 s more; here ~0.15 s)."""
    return _kernels().clustered_rows(codes, cnt, np.asarray(_cluster_order(stats), dtype=np.int64))


def _cluster_order(stats) -> list[int]:
    """The QIs from the narrowest (fewest leaves) to the widest: the sort's most significant first."""
    return sorted(range(len(stats.qis)), key=lambda i: (len(stats.hierarchies[i].labels(0)), i))


def sorted_from_arrow(stats, table, cnt: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The fetched set as :func:`clustered` sorts it, built from the Arrow columns: each QI's codes
    go straight from the Arrow buffers into one 63-bit sort key per row (its bits from its
    hierarchy's leaves), the keys are radix-sorted with the counts alongside, and the codes are
    read back from the sorted keys (in row slices over the threads). None when the QIs need more
    than 63 bits or a code is outside its hierarchy's leaves: then :func:`clustered`. Against
    copying every column into row-major codes first (a strided write whose first column alone
    touched all 58 MB of a 1.6M-row set's codes: 0.1 s of page faults on this VM) and sorting
    a copy of those: one array of codes fewer, and at 10M Adult-like rows the fetch takes
    0.25-0.28 -> ~0.22 s on one thread (the codes' first touch is now the decode's) and ~0.15 s
    on two (the decode's slices fault their pages in on both)."""
    kern, order = _kernels(), _cluster_order(stats)
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
    key, cnt = radix_sorted(key, cnt, bits, threads_for(stats))
    codes = np.empty((m, len(order)), dtype=np.int32)
    ordered, width_bits = np.asarray(order, dtype=np.int64), np.asarray(used, dtype=np.int64)
    spread(m, 1, threads_for(stats), lambda a, z: kern.decode_keys(key, a, z, ordered, shifts, width_bits, codes))
    return codes, cnt


def _keys_from_chunks(stats, kern, table, order: list[int], key: np.ndarray, shifts: np.ndarray, widths: list[int]) -> bool:
    """Each QI's codes or'ed into the rows' sort keys from its Arrow chunks
    (:func:`~sqlanon.stats.local_kernels.key_bits`); False when a chunk has NULLs or a code
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

    spread(len(lengths), 1, threads_for(stats), run, weights=[n * len(columns) for n in lengths])
    return not failed


def radix_sorted(key: np.ndarray, payload: np.ndarray, bits: int, threads: int) -> tuple[np.ndarray, np.ndarray]:
    """``key`` (non-negative, below ``2**bits``) sorted with ``payload`` alongside, ties in row
    order, as :func:`~sqlanon.stats.local_kernels.radix_sort` sorts them, on up to ``threads``
    threads (at least :data:`THREAD_WORK` rows each): per 16-bit pass, each row slice counts its
    digits, the counts give each slice where its rows of each digit start (slices in row order:
    a stable sort, the same order on any number of threads), and the slices place their rows.

    >>> k, p = radix_sorted(np.array([5, 3, 5, 0], dtype=np.int64), np.arange(4), 3, 1)
    >>> k.tolist(), p.tolist()
    ([0, 3, 5, 5], [3, 1, 0, 2])
    """
    kern, m = _kernels(), len(key)
    use = max(1, min(threads, CORES, m // THREAD_WORK))
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

        spread(use, THREAD_WORK, use, count)
        totals = counts.sum(axis=0)
        # where slice t's rows of digit d start: every row of a lower digit, then the slices before t
        at = (np.cumsum(totals) - totals)[None, :] + np.cumsum(counts, axis=0) - counts

        def place(a: int, z: int, src=src, dst=dst, shift=shift, at=at) -> None:
            for t in range(a, z):
                kern.radix_scatter(src[0], src[1], bounds[t], bounds[t + 1], shift, at[t], dst[0], dst[1])

        spread(use, THREAD_WORK, use, place)
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
        if mult > 1 and mult * w >= WORD:
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


def _map_args(maps: Sequence[np.ndarray]):
    flat, offsets = _flat(maps)
    if len(flat) and int(flat.min()) < 0:
        raise ValueError("a released code is negative")
    mults, word_of, n_words = pack([int(np.max(m)) + 1 if len(m) else 1 for m in maps])
    return flat, offsets, mults, word_of, n_words


def group_by_maps(local: LocalSet, maps: Sequence[np.ndarray]) -> Classes:
    """Group the fetched set by per-QI maps: ``maps[i][leaf code]`` is QI ``i``'s released code
    (any non-negative integers; rows share a class exactly when all their released codes are
    equal). One pass of the compiled kernel; the classes are numbered in first-row order.

    ``local`` is :func:`local_set` of a Statistics (its QIs' leaf codes, as the hierarchies
    number them)."""
    if len(maps) != local.codes.shape[1]:
        raise ValueError(f"{len(maps)} maps for {local.codes.shape[1]} QIs")
    flat, offsets, mults, word_of, n_words = _map_args(maps)
    row_class, cnt, rep, n = _kernels().group_by_maps(local.codes, local.cnt, flat, offsets, mults, word_of, n_words)
    return Classes(row_class, cnt[:n], rep[:n])


def group_many(local: LocalSet, candidates: Sequence[Sequence[np.ndarray]], threads: int | None = None) -> list[Classes]:
    """:func:`group_by_maps` for every candidate (a list of per-QI maps each), the candidates
    spread over ``threads`` threads (default: the cores; :func:`spread`)."""
    if not candidates:
        return []
    flats, offs, mults, words_of, n_words = [], [], [], [], []
    base = 0
    for maps in candidates:
        if len(maps) != local.codes.shape[1]:
            raise ValueError(f"{len(maps)} maps for {local.codes.shape[1]} QIs")
        flat, offsets, m, w, nw = _map_args(maps)
        flats.append(flat)
        offs.append(offsets + base)
        base += len(flat)
        mults.append(m)
        words_of.append(w)
        n_words.append(nw)
    b, m = len(candidates), local.rows
    row_class, cnt, rep, n = np.empty((b, m), dtype=np.int32), np.zeros((b, m), dtype=np.int64), np.zeros((b, m), dtype=np.int32), np.zeros(b, dtype=np.int64)
    args = (local.codes, local.cnt, np.concatenate(flats), np.stack(offs), np.stack(mults), np.stack(words_of), np.asarray(n_words, dtype=np.int64))
    kern = _kernels()
    spread(b, m * local.codes.shape[1], threads or os.cpu_count() or 1, lambda a, z: kern.group_many(*args, a, z, row_class, cnt, rep, n))
    return [Classes(row_class[j], cnt[j, : n[j]], rep[j, : n[j]]) for j in range(len(candidates))]


# ---------------------------------------------------------------------------------------------
# full-domain nodes: the key layout


@dataclass
class Layout:
    """Per QI and level, its part of the packed key over leaf codes (``kp_flat`` at
    ``kp_off[i, level]``), and per QI its word; the batch statement's words and multipliers."""

    kp_flat: np.ndarray
    kp_off: np.ndarray
    word_of: np.ndarray
    n_words: int
    maps: list[list[np.ndarray]]


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


# ---------------------------------------------------------------------------------------------
# the requirement and the finals, compiled into sums of atoms under conditions on cnt

#: a condition on a class's ``cnt``: ``lo <= cnt <= hi``, negated when the flag is set
Cond = tuple[int, int, bool]
#: a term of a linear per-class expression: coefficient, condition (None: always), atom
Term = tuple[float, Cond | None, str]
TRUE: Cond = (-INF, INF, False)


def _number(e: exp.Expr) -> tuple[float, bool] | None:
    """A numeric literal's value and whether it is a float."""
    if isinstance(e, exp.Paren):
        return _number(e.this)
    if isinstance(e, exp.Neg):
        got = _number(e.this)
        return None if got is None else (-got[0], got[1])
    if isinstance(e, exp.Literal) and not e.is_string:
        text = str(e.this)
        try:
            return float(text), any(ch in text for ch in ".eE")
        except ValueError:
            return None
    return None


def _is_cnt(e: exp.Expr) -> bool:
    while isinstance(e, (exp.Paren, exp.Cast)):
        if isinstance(e, exp.Cast) and not _numeric_type(e):
            return False
        e = e.this
    return isinstance(e, exp.Column) and e.name == "cnt" and not e.table


def _numeric_type(e: exp.Cast) -> bool:
    to = e.args.get("to")
    return isinstance(to, exp.DataType) and to.is_type(*exp.DataType.NUMERIC_TYPES)


def _bound(op, value: float) -> tuple[int, int] | None:
    """``cnt <op> value`` as an integer interval."""
    if op is exp.GTE:
        return math.ceil(value), INF
    if op is exp.GT:
        return math.floor(value) + 1, INF
    if op is exp.LTE:
        return -INF, math.floor(value)
    if op is exp.LT:
        return -INF, math.ceil(value) - 1
    if op is exp.EQ:
        return (int(value), int(value)) if float(value).is_integer() else (1, 0)
    return None


FLIP = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT, exp.EQ: exp.EQ}


def condition(e: exp.Expr, ok: Cond | None = None) -> Cond | None:
    """A predicate over the class count as a :data:`Cond` (``ok``: the column ``ok``'s, when it
    may appear); None for anything else: comparisons of ``cnt`` with a number, ``AND``, ``NOT``,
    ``TRUE``, parentheses.

    >>> from sqlglot import parse_one
    >>> condition(parse_one("cnt >= 5 AND NOT cnt > 9")) is None, condition(parse_one("(cnt >= 5) AND cnt <= 9"))
    (True, (5, 9, False))
    """
    if isinstance(e, exp.Paren):
        return condition(e.this, ok)
    if isinstance(e, exp.Boolean):
        return TRUE if e.this else (1, 0, False)
    if isinstance(e, exp.Column) and e.name == "ok" and not e.table:
        return ok
    if isinstance(e, exp.Not):
        inner = condition(e.this, ok)
        return None if inner is None else (inner[0], inner[1], not inner[2])
    if isinstance(e, exp.And):
        a, b = condition(e.this, ok), condition(e.expression, ok)
        if a is None or b is None or a[2] or b[2]:
            return None
        return max(a[0], b[0]), min(a[1], b[1]), False
    op = type(e)
    if op in FLIP:
        left, right = e.this, e.expression
        if _is_cnt(left) and _number(right) is not None:
            got = _bound(op, _number(right)[0])  # type: ignore[index]
        elif _is_cnt(right) and _number(left) is not None:
            got = _bound(FLIP[op], _number(left)[0])  # type: ignore[index]
        else:
            return None
        return None if got is None else (got[0], got[1], False)
    return None


def _cases(e: exp.Case, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    ifs = e.args.get("ifs") or []
    default = e.args.get("default")
    if e.this is not None or len(ifs) != 1 or default is None:
        return None
    cond = condition(ifs[0].this, ok)
    then = linear(ifs[0].args.get("true"), ok, parts)
    other = linear(default, ok, parts)
    if cond is None or then is None or other is None:
        return None
    out: list[Term] = []
    for terms, c in ((then[0], cond), (other[0], (cond[0], cond[1], not cond[2]))):
        for coef, tc, atom in terms:
            if tc is not None:
                return None  # a condition inside a condition
            out.append((coef, c, atom))
    return out, then[1] or other[1]


def _product(a: tuple[list[Term], bool], b: tuple[list[Term], bool]) -> tuple[list[Term], bool] | None:
    for x, y in ((a, b), (b, a)):
        if all(atom == "1" and c is None for _, c, atom in x[0]):
            factor = sum(coef for coef, _, _ in x[0])
            return [(factor * coef, c, atom) for coef, c, atom in y[0]], x[1] or y[1]
    if len(a[0]) == 1 and len(b[0]) == 1 and a[0][0][1] is None and b[0][0][1] is None and a[0][0][2] == b[0][0][2] == "cnt":
        return [(a[0][0][0] * b[0][0][0], None, "cnt2")], a[1] or b[1]
    return None


def linear(e: exp.Expr | None, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """A per-class numeric expression as a sum of :data:`Term` and whether it is a float; None
    when it is not of the compiled shapes (numbers, ``cnt``, the metric's ``parts``, ``+ - *``,
    ``/`` by a number, numeric casts, one-branch ``CASE WHEN <condition on cnt> ..``)."""
    if e is None:
        return None
    num = _number(e)
    if num is not None:
        return [(num[0], None, "1")], num[1]
    if isinstance(e, exp.Paren):
        return linear(e.this, ok, parts)
    if isinstance(e, exp.Column) and not e.table and (e.name == "cnt" or e.name in parts):
        return [(1.0, None, e.name)], e.name != "cnt"
    if isinstance(e, exp.Case):
        return _cases(e, ok, parts)
    rule = ARITHMETIC.get(type(e))
    return None if rule is None else rule(e, ok, parts)


def _cast(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """A numeric cast: to a float type, or to an integer type of an integer expression."""
    assert isinstance(e, exp.Cast)
    inner = linear(e.this, ok, parts)
    if inner is None or not _numeric_type(e):
        return None
    to_float = not e.args["to"].is_type(*exp.DataType.INTEGER_TYPES)
    return (inner[0], inner[1] or to_float) if to_float or not inner[1] else None


def _add(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    a, b = linear(e.this, ok, parts), linear(e.expression, ok, parts)
    if a is None or b is None:
        return None
    sign = -1.0 if isinstance(e, exp.Sub) else 1.0
    return a[0] + [(sign * coef, c, atom) for coef, c, atom in b[0]], a[1] or b[1]


def _mul(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    a, b = linear(e.this, ok, parts), linear(e.expression, ok, parts)
    return None if a is None or b is None else _product(a, b)


def _div(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[list[Term], bool] | None:
    """Division by a non-zero number (a float: an integer division would truncate)."""
    a, d = linear(e.this, ok, parts), _number(e.expression)
    if a is None or d is None or d[0] == 0 or not (a[1] or d[1]):
        return None
    return [(coef / d[0], c, atom) for coef, c, atom in a[0]], True


#: the arithmetic :func:`linear` compiles, by node type
ARITHMETIC: dict[type, Callable[[exp.Expr, Cond, set[str]], tuple[list[Term], bool] | None]] = {exp.Cast: _cast, exp.Add: _add, exp.Sub: _add, exp.Mul: _mul, exp.Div: _div}


def final(e: exp.Expr, ok: Cond, parts: set[str]) -> tuple[str, Any] | None:
    """A final aggregate over a node's classes: ``("sum", (terms, float))``, ``("count", None)``,
    ``("min", None)``, ``("max", None)``; None when not compiled."""
    if isinstance(e, exp.Paren):
        return final(e.this, ok, parts)
    if isinstance(e, exp.Count) and isinstance(e.this, exp.Star) and not e.args.get("distinct"):
        return "count", None
    if isinstance(e, (exp.Min, exp.Max)) and _is_cnt(e.this) and not isinstance(e.this, exp.Cast):
        return ("min" if isinstance(e, exp.Min) else "max"), None
    if isinstance(e, exp.Sum) and not e.args.get("distinct"):
        got = linear(e.this, ok, parts)
        return None if got is None else ("sum", got)
    return None


ATOMS = {"1": 0, "cnt": 1, "cnt2": 2}


@dataclass
class Program:
    """A requirement and a metric's finals compiled for :func:`local_kernels.evaluate_nodes_on`."""

    conds: np.ndarray
    spec: np.ndarray
    #: the sums of condition ``ci`` (-1: none) are ``spec[cond_ptr[ci + 1]:cond_ptr[ci + 2]]``
    cond_ptr: np.ndarray
    #: per final: ``(kind, [(coef, sum index)], float)``
    finals: list[tuple[str, list[tuple[float, int]], bool]]
    #: finals x sums: a sum final's coefficients (its value: the node's sums times its row)
    matrix: np.ndarray
    #: the finals that are integers (rounded from their float64 sums, exact below 2**53)
    integral: list[int]
    #: the finals read from the node's summary: ``(final, summary column)`` (COUNT(*), MIN, MAX)
    from_summary: list[tuple[int, int]]
    part_ptr: np.ndarray
    part_qi: np.ndarray
    pv_flat: np.ndarray
    pv_off: np.ndarray


def compile_program(stats, ok: exp.Expr, metric, extra_finals=()) -> Program | None:
    """``ok`` and the finals (``metric.batch_terms(stats)``'s, then ``extra_finals``) as sums the
    kernel takes, with the metric's part values per leaf code; None when a piece is not of the
    compiled shapes (the caller falls back to SQL)."""
    okc = condition(ok)
    if okc is None:
        return None
    got = metric.batch_terms(stats) if metric is not None else ([], [])
    if got is None:
        return None
    terms, finals = got
    part_names = [name for name, _ in terms]
    atoms = dict(ATOMS, **{name: 3 + p for p, name in enumerate(part_names)})
    conds: list[Cond] = [okc]
    spec: list[tuple[int, int]] = []
    out: list[tuple[str, list[tuple[float, int]], bool]] = []
    for _, e in [*finals, *extra_finals]:
        f = final(e, okc, set(part_names))
        if f is None:
            return None
        kind, body = f
        if kind != "sum":
            out.append((kind, [], False))
            continue
        refs = []
        for coef, c, atom in body[0]:
            if coef == 0.0:
                continue
            if c is None or c == TRUE:
                ci = -1
            else:
                if c not in conds:
                    conds.append(c)
                ci = conds.index(c)
            if (ci, atoms[atom]) not in spec:
                spec.append((ci, atoms[atom]))
            refs.append((coef, spec.index((ci, atoms[atom]))))
        out.append(("sum", refs, body[1]))
    return _package(stats, terms, conds, spec, out)


def _package(stats, terms, conds: list[Cond], spec: list[tuple[int, int]], out: list) -> Program:
    """The compiled pieces as the kernel's arrays: the sums sorted by condition (the kernel
    tests each condition once per class), the finals as a matrix over them."""
    order = sorted(range(len(spec)), key=lambda j: (spec[j][0], j))
    where = {old: new for new, old in enumerate(order)}
    out = [(kind, [(coef, where[j]) for coef, j in refs], is_float) for kind, refs, is_float in out]
    spec = [spec[j] for j in order]
    cond_ptr = np.searchsorted(np.asarray([ci for ci, _ in spec], dtype=np.int64), np.arange(-1, len(conds) + 1), side="left").astype(np.int64)
    matrix = np.zeros((len(out), len(spec)), dtype=np.float64)
    for f, (_, refs, _) in enumerate(out):
        for coef, j in refs:
            matrix[f, j] += coef
    column = {"count": 0, "min": 2, "max": 3}
    return Program(
        np.asarray([(lo, hi, int(neg)) for lo, hi, neg in conds], dtype=np.int64).reshape(-1, 3),
        np.asarray(spec, dtype=np.int64).reshape(-1, 2),
        cond_ptr,
        out,
        matrix,
        [f for f, (kind, _, is_float) in enumerate(out) if kind == "sum" and not is_float],
        [(f, column[kind]) for f, (kind, _, _) in enumerate(out) if kind in column],
        *part_values(stats, terms),
    )


def part_values(stats, terms) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The metric's parts for the kernel: per part its entries (``part_ptr``), per entry its QI
    and, per level, the offset of its values over the QI's leaf codes in ``pv_flat``."""
    lay = layout(stats)
    levels = lay.kp_off.shape[1]
    ptr, qis, offs, flat, at = [0], [], [], [np.zeros(0)], 0
    for _, per_qi in terms:
        for i, per_level in per_qi:
            row = np.zeros(levels, dtype=np.int64)
            for lv, m in enumerate(lay.maps[i]):
                values = np.asarray([float(v) for v in per_level(lv)], dtype=np.float64)
                flat.append(values[m])
                row[lv] = at
                at += len(m)
            qis.append(i)
            offs.append(row)
        ptr.append(len(qis))
    return (np.asarray(ptr, dtype=np.int64), np.asarray(qis, dtype=np.int64), np.concatenate(flat).astype(np.float64),
            np.asarray(offs, dtype=np.int64).reshape(-1, levels))


def program(stats, ok: exp.Expr, metric, extra_finals=()) -> Program | None:
    """:func:`compile_program`, cached on ``stats`` per predicate, metric and extra finals."""
    cache = stats.memory.local.programs
    key = (ok.sql(), batch.metric_key(metric), tuple((name, e.sql()) for name, e in extra_finals))
    if key not in cache:
        if len(cache) > 64:
            cache.clear()
        cache[key] = compile_program(stats, ok, metric, extra_finals)
    return cache[key]


# ---------------------------------------------------------------------------------------------
# evaluation


def applies(stats, nodes, ok: exp.Expr, metric, extra_finals=()) -> bool:
    """Whether :func:`evaluate` answers these nodes (see the module's doc for what stays SQL)."""
    if not nodes or not enabled(stats) or not all(isinstance(n, tuple) for n in nodes):
        return False
    return program(stats, ok, metric, extra_finals) is not None and ready(stats)


def source_set(stats, levels: tuple[int, ...], roll: bool = True) -> tuple[tuple[int, ...], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """A set to group nodes generalizing ``levels`` from, and its levels: with ``roll``, the
    fetched set rolled up to ``levels`` (kept: :data:`MEETS` of them); else the smallest kept
    roll-up ``levels`` generalizes (the fetched set at the leaves always qualifies). A set is
    its classes' first rows' leaf codes, the classes' counts and their key words.

    A source of more than :data:`STONE_ROWS` rows is first rolled up to a *stepping stone*
    (:func:`stepping_stone`) and kept, as the SQL path saves its sets (:meth:`Statistics.pick_set`):
    at 10M Adult-like rows (a 1.6M-row base set), k=10, 0 %, most nodes were grouped from the
    whole fetched set, 65M rows for 325 nodes and a search of 6.0 s (by SQL 3.5 s); through the
    stones 9M rows and 1.4-1.8 s."""
    local = local_set(stats)
    assert local is not None
    memory = stats.memory.local
    kept: dict = memory.meets
    if levels in kept:
        kept[levels] = kept.pop(levels)  # most recent last
        return levels, kept[levels]
    leaves = tuple(0 for _ in levels)
    if memory.leaves is None or memory.leaves[0] is not local:
        memory.leaves = (local, (local.codes, local.cnt, leaf_keys(stats, local.codes)))
    src_levels, src = leaves, memory.leaves[1]
    stones: dict = memory.stones
    for at, got in [*stones.items(), *kept.items()]:
        if all(a <= b for a, b in zip(at, levels)) and len(got[1]) < len(src[1]):
            src_levels, src = at, got
    if src_levels != levels and len(src[1]) > STONE_ROWS:
        stone = stepping_stone(stats, levels, src_levels, len(src[1]))
        if stone is not None and stone in kept:
            src_levels, src = stone, kept[stone]
        elif stone is not None:
            # kept apart, never evicted by the roll-ups: every later set at its QI's level (or
            # generalizing the evaluated node) goes through it; at most STONES times the fetched bytes
            budget = STONES * _bytes((local.codes, local.cnt)) - sum(_bytes(v) for v in stones.values())
            if budget > 0:
                src_levels, src = stone, _roll_up(stats, local, stones, src_levels, src, stone, evict=False)
    if src_levels == levels or not roll:
        return src_levels, src
    return levels, _roll_up(stats, local, kept, src_levels, src, levels)


#: the fields of :class:`sqlanon.stats.memory.LocalMemory` that are the search's (:func:`drop_search_memory`)
SEARCH_MEMORY = ("meets", "stones", "keyed", "scratch")


def drop_search_memory(stats) -> None:
    """The search's roll-ups, stepping stones, moved key words and working buffers let go (the
    fetched set stays: a later node is grouped from it, the rest made again if asked). They were
    held through the verification, the report and the write: 10M Adult-like rows, k=10, 5 %, two
    threads, in-process, RSS after the search 951 -> 466 MB; the run's peak is then the search's."""
    stats.memory.local.drop_search()


def leaf_keys(stats, codes: np.ndarray) -> np.ndarray:
    """The key words of rows of leaf codes (every QI at level 0), in row slices over the threads."""
    lay, kern = layout(stats), _kernels()
    keys = np.empty((len(codes), lay.n_words), dtype=np.int64)
    offsets, ones = lay.kp_off[:, 0].copy(), np.ones(len(stats.qis), dtype=np.int64)
    spread(len(codes), 1, threads_for(stats), lambda a, z: kern.packed_keys_into(codes[a:z], lay.kp_flat, offsets, ones, lay.word_of, keys[a:z]))
    return keys


#: a source set of more than this many rows is first rolled up to a stepping stone
STONE_ROWS = 100_000
#: the stepping stones hold at most this many times the fetched set's bytes
STONES = 1


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


def _roll_up(stats, local: LocalSet, kept: dict, src_levels: tuple[int, ...], src, levels: tuple[int, ...], evict: bool = True):
    """``src`` (at ``src_levels``) rolled up to ``levels``, kept: at most :data:`MEETS` sets, and
    together at most :data:`KEPT` times the fetched set's bytes (oldest out; none with ``evict``)."""
    got = rolled_up(stats, src, src_levels, levels)
    kept[levels] = got
    while evict and len(kept) > 1 and (len(kept) > MEETS or sum(_bytes(v) for v in kept.values()) > KEPT * _bytes((local.codes, local.cnt))):
        kept.pop(next(iter(kept)))
    return got


def _table(rows: int) -> np.ndarray:
    """A hash table for grouping ``rows`` rows (:func:`~sqlanon.stats.local_kernels.count_classes`)
    of :func:`~sqlanon.stats.local_kernels.table_size` slots."""
    return np.empty(_kernels().table_size(rows), dtype=np.int32)


def move_keys(stats, codes: np.ndarray, keys: np.ndarray, src_levels, levels, scratch_out: bool = False) -> np.ndarray:
    """The key words ``keys`` of a set's rows (leaf codes ``codes``) at ``src_levels`` moved to
    ``levels``: row slices over the threads. With ``scratch_out``, into ``stats``' working
    buffer for moved keys (valid until the next such move: a roll-up's or a split node's)."""
    lay, kern = layout(stats), _kernels()
    ref, node = np.asarray(src_levels, dtype=np.int64), np.asarray(levels, dtype=np.int64)
    if scratch_out:
        held = scratch(stats)
        words = keys.shape[1]
        out = held.get("moved_keys", keys.size, np.int64, max(held.rows, len(keys)) * words).reshape(keys.shape)
    else:
        out = np.empty(keys.shape, dtype=np.int64)
    spread(len(codes), 1, threads_for(stats),
           lambda a, z: kern.move_keys_into(codes[a:z], keys[a:z], ref, node, lay.kp_flat, lay.kp_off, lay.word_of, out[a:z]))
    return out


def rolled_up(stats, src, src_levels, levels):
    """A set ``src`` (first rows' leaf codes, counts, key words at ``src_levels``) rolled up to
    ``levels``, the same way: its key words moved, its rows grouped, the classes' first rows.

    On the threads: each thread groups the rows whose key hashes to its part
    (:func:`~sqlanon.stats.local_kernels.group_part`; a class's rows are all in one part, so
    nothing is merged), then the parts' classes are put in first-row order
    (:func:`~sqlanon.stats.local_kernels.first_row_order`): the same classes in the same order
    as one grouping, so the answer does not depend on the threads. Roll-ups were what stayed one
    thread's in a 10M-row search (0.8 of 1.5 s at k=10, 0 %; 1.3 of 3.5 s at 5 %, where they
    shrink a set by a third at most: split by rows and merged, the merge cost what the split
    saved)."""
    codes, cnt, keys = src
    kern, threads = _kernels(), threads_for(stats)
    keys = move_keys(stats, codes, keys, src_levels, levels, scratch_out=True)
    n, cls_cnt, rep = _grouped(stats, keys, cnt)
    out_codes = np.empty((n, codes.shape[1]), dtype=codes.dtype)
    out_keys = np.empty((n, keys.shape[1]), dtype=np.int64)
    spread(n, 1, threads, lambda a, z: kern.gather_rows(codes, keys, rep, a, z, out_codes, out_keys))
    return out_codes, cls_cnt[:n].copy(), out_keys


class Scratch:
    """Working buffers a Statistics' roll-ups and split nodes reuse, one per name, grown when a
    larger one is asked for (never shrunk; kept for the search's life): their hash tables,
    per-part classes and class buffers were fresh arrays each time (~45 MB at 1.6M rows), and a
    first touch of memory is page faults (on this 2-core VM up to ~1.8 ms a MB). 10M Adult-like
    rows, k=10, 5 %, two threads, alternated four times with the fresh arrays: the groupings
    0.53-0.61 -> 0.43-0.47 s, the in-process evaluation 1.64-1.73 -> 1.53-1.67 s.

    A buffer grows at once to ``room`` (its size for the largest set the search can group:
    ``rows``, the fetched set's): memory is only touched, and paid for in page faults and RSS,
    where a grouping writes, so the room costs nothing until used, while growing in steps paid
    the faults again at every larger set (10M Adult-like rows, k=10, 5 %: the groupings' buffers
    faulted 198 MB in one search).

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
    return _group_in_parts(keys, cnt, threads_for(stats), cls_cnt, rep, held), cls_cnt, rep


def _group_in_parts(keys: np.ndarray, cnt: np.ndarray, threads: int, cls_cnt: np.ndarray, rep: np.ndarray, buffers: Scratch | None = None) -> int:
    """Rows grouped by their key words (counts into ``cls_cnt``, first rows into ``rep``, in
    first-row order; returns the classes), on up to ``threads`` threads, each the rows whose key
    hashes to its part (:func:`~sqlanon.stats.local_kernels.group_part`: a class's rows are all
    in one part, nothing is merged; the rows' hashes computed once first, in row slices), at
    least :data:`THREAD_WORK` rows a part; then the parts' classes in first-row order
    (:func:`~sqlanon.stats.local_kernels.first_row_order`), as one grouping gives them."""
    kern, m = _kernels(), len(cnt)
    # every part's thread reads all the rows: no more parts than cores, whatever the engine's threads
    parts = max(1, min(threads, CORES, m // THREAD_WORK))
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
        spread(m, 1, parts, lambda a, z: kern.hash_rows(keys, a, z, hashes))

        def group(a: int, z: int) -> None:
            for p in range(a, z):
                got[p] = (kern.group_part(keys, cnt, hashes, p, parts, tables[p], p_cnts[p], p_reps[p]), p_cnts[p], p_reps[p])

        spread(parts, m // parts, threads, group)
        if all(g[0] >= 0 for g in got):  # else a part overfilled its table (a skewed hash): whole
            n = sum(g[0] for g in got)
            reps, cnts = held.get("part_reps", n, np.int32, most), held.get("part_cnts", n, np.int64, most)
            at = 0
            for g in got:
                reps[at:at + g[0]], cnts[at:at + g[0]] = g[2][:g[0]], g[1][:g[0]]
                at += g[0]
            return in_first_row_order(m, reps, cnts, rep, cls_cnt, threads, held.get("first_row_marks", m, np.int32, most))
    table = _table(m) if buffers is None else buffers.get("table0", int(kern.table_size(m)), np.int32, int(kern.table_size(max(buffers.rows, m))))
    return int(kern.count_classes(keys, cnt, table, cls_cnt, rep, _NO_ROWS))


def in_first_row_order(m: int, reps: np.ndarray, cnts: np.ndarray, rep: np.ndarray, cls_cnt: np.ndarray, threads: int, marks: np.ndarray | None = None) -> int:
    """:func:`~sqlanon.stats.local_kernels.first_row_order` on up to ``threads`` threads: the
    classes marked at their first rows (in slices of the classes; on ``marks``, ``m`` int32
    values, when given), then per row slice its classes counted, and placed after the slices
    before it (the same order on any number of threads). Returns the classes."""
    kern = _kernels()
    use = max(1, min(threads, CORES, m // THREAD_WORK))
    if use <= 1:
        return int(kern.first_row_order(m, reps, cnts, rep, cls_cnt))
    if marks is None:
        at = np.zeros(m, dtype=np.int32)
    else:
        at = marks[:m]
        spread(m, 1, use, lambda a, z: at[a:z].fill(0))
    spread(len(reps), 1, use, lambda a, z: kern.first_rows_marked(reps, a, z, at))
    bounds = [m * t // use for t in range(use + 1)]
    counts = np.zeros(use, dtype=np.int64)

    def count(a: int, z: int) -> None:
        for t in range(a, z):
            counts[t] = kern.first_rows_counted(at, bounds[t], bounds[t + 1])

    spread(use, THREAD_WORK, use, count)
    starts = np.cumsum(counts) - counts

    def place(a: int, z: int) -> None:
        for t in range(a, z):
            kern.first_rows_placed(at, cnts, bounds[t], bounds[t + 1], int(starts[t]), rep, cls_cnt)

    spread(use, THREAD_WORK, use, place)
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


#: key words moved to a reference kept per Statistics (a descent's next batch moves from the last)
KEYED = 8


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
    while len(cache) > 1 and (len(cache) > KEYED or sum(k.nbytes for _, _, k in cache) > KEPT * codes.nbytes):
        cache.pop(0)
    return out


def evaluate(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list[NodeStats]:
    """Every node's :class:`NodeStats` (the finals in ``extra`` by name, as the batch statement
    gives them), computed in-process, its fresh arrays on small pages (:mod:`sqlanon.stats.pages`).
    Call only when :func:`applies`."""
    with small_pages():
        return _evaluate(stats, nodes, ok, metric, extra_finals)


def _evaluate(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list[NodeStats]:
    prog = program(stats, ok, metric, extra_finals)
    assert prog is not None
    names = [*batch.final_names(stats, metric), *[name for name, _ in extra_finals]]
    nodes = [tuple(int(v) for v in n) for n in nodes]
    arr = np.asarray(nodes, dtype=np.int64).reshape(len(nodes), len(stats.qis))
    summary = np.zeros((len(nodes), 6), dtype=np.int64)
    sums = np.zeros((len(nodes), len(prog.spec)), dtype=np.float64)
    lay = layout(stats)
    tasks = []  # per cluster: its nodes and the kernel's arguments
    for members in clusters(arr):
        group = arr[members]
        meet, ref = group.min(axis=0), reference(group)
        # rolled up to the meet when that is where the nodes move from (an expansion's successors)
        at, (codes, cnt, base_keys) = source_set(stats, tuple(int(v) for v in meet), len(members) >= ROLL_NODES and bool((meet == ref).all()))
        if at != tuple(int(v) for v in ref):
            base_keys = keyed(stats, at, codes, base_keys, ref)
        args = (codes, cnt, base_keys, ref, group, lay.kp_flat, lay.kp_off, lay.word_of, prog.conds, prog.spec, prog.cond_ptr, prog.part_ptr, prog.part_qi, prog.pv_flat, prog.pv_off)
        tasks.append((members, args, np.zeros((len(members), 6), dtype=np.int64), np.zeros((len(members), len(prog.spec)), dtype=np.float64)))
    # every node of every cluster grouped whole on a thread, the threads taking the next node as
    # they finish one (nodes_on_threads); a node that would keep its thread busy long after the
    # others, and what is left over a multiple of the threads (a binary search's one node), each
    # over them all (_split_items)
    items = [(t, i) for t, task in enumerate(tasks) for i in range(len(task[0]))]
    threads = threads_for(stats)
    split = _split_items(items, [len(tasks[t][1][1]) for t, _ in items], threads)
    for t, i in split:
        _evaluate_split(stats, tasks[t][1], i, tasks[t][2][i], tasks[t][3][i])
    whole = set(items) - set(split)
    nodes_on_threads(stats, tasks, [item for item in items if item in whole], threads)
    for members, _, got, got_sums in tasks:
        summary[members] = got
        sums[members] = got_sums
    out = []
    values = (sums @ prog.matrix.T).tolist() if len(prog.finals) else [[] for _ in nodes]
    for j, node in enumerate(nodes):
        s = summary[j].tolist()
        row = values[j]
        for f in prog.integral:
            row[f] = int(round(row[f]))
        for f, column in prog.from_summary:
            row[f] = s[column]
        out.append(NodeStats(node, s[0], s[1], s[2], s[3], s[4], s[5], dict(zip(names, row))))
    stats.nodes_evaluated += len(nodes)
    stats.nodes_local = stats.nodes_local + len(nodes)
    store.remember(stats, [(n, stats.base, ns.classes) for n, ns in zip(nodes, out)])
    return out



def nodes_on_threads(stats, tasks: list, items: list, threads: int) -> None:
    """The batch's nodes ``items`` ((task, node) pairs of :func:`evaluate`'s clusters ``tasks``)
    each grouped whole on one thread, the threads taking the next node as they finish it, the
    largest first (by the rows it groups), each thread on its own buffers kept on ``stats``
    (:func:`node_buffers`). Slices fixed in advance by rows left a thread idle up to 0.08 s of a
    0.24 s batch (10M Adult-like rows, k=10, 5 %): nodes of the same rows take different times
    (the QIs they move, the classes they make). At most as many threads as the work pays for
    (:data:`THREAD_WORK`); each node writes only its own rows of the outputs, so the answer does
    not depend on the threads."""
    if not items:
        return
    kern = _kernels()
    rows = [len(tasks[t][1][1]) for t, _ in items]
    order = sorted(range(len(items)), key=lambda j: -rows[j])
    use = max(1, min(node_slots(stats, threads), len(items), sum(rows) // THREAD_WORK))
    cells = max(rows[j] * tasks[t][1][2].shape[1] for j, (t, _) in enumerate(items))
    held = [node_buffers(stats, slot, max(rows), cells) for slot in range(use)]
    sizes = {t: int(kern.table_size(len(tasks[t][1][1]))) for t, _ in items}
    taken = [0]
    lock = threading.Lock()

    def work(slot: int) -> None:
        keys, table, cls_cnt, rep = held[slot]
        while True:
            with lock:
                at = taken[0]
                taken[0] += 1
            if at >= len(order):
                return
            t, j = items[order[at]]
            args, summary, sums = tasks[t][1], tasks[t][2], tasks[t][3]
            m, words = len(args[1]), args[2].shape[1]
            kern.evaluate_nodes_on(*args, j, j + 1, summary, sums, keys[:m * words].reshape(m, words), table[:sizes[t]], cls_cnt[:m], rep[:m])

    if use == 1:  # one kernel call per cluster's run of nodes (a wide table's batches: many small nodes)
        keys, table, cls_cnt, rep = held[0]
        at = 0
        while at < len(items):
            t, j = items[at]
            stop = at
            while stop < len(items) and items[stop][0] == t and items[stop][1] == j + stop - at:
                stop += 1
            args, m, words = tasks[t][1], len(tasks[t][1][1]), tasks[t][1][2].shape[1]
            kern.evaluate_nodes_on(*args, j, j + stop - at, tasks[t][2], tasks[t][3], keys[:m * words].reshape(m, words), table[:sizes[t]], cls_cnt[:m], rep[:m])
            at = stop
        return
    pool = _pool(use - 1)
    futures = [pool.submit(work, slot) for slot in range(1, use)]
    work(0)
    for f in futures:
        f.result()


def node_buffers(stats, slot: int, rows: int, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thread ``slot``'s buffers for grouping nodes of sets of up to ``rows`` rows and ``cells``
    key words (rows x words; :func:`nodes_on_threads`): flat key words, a hash table, class
    counts and first rows, on ``stats``' working buffers (:func:`scratch`), kept for the search's
    life. The first thread's are the roll-ups' own (:func:`rolled_up`, :func:`_grouped`: a
    batch's roll-ups are done before its nodes start), one set of buffers less to hold."""
    held, m = scratch(stats), max(rows, 1)
    most = max(held.rows, m)
    names = ("moved_keys", "table0", "classes", "first_rows") if slot == 0 else (f"node_keys{slot}", f"node_table{slot}", f"node_classes{slot}", f"node_first_rows{slot}")
    words = -(-max(cells, 1) // m)
    table_size = _kernels().table_size
    return (held.get(names[0], max(cells, 1), np.int64, most * words), held.get(names[1], int(table_size(m)), np.int32, int(table_size(most))),
            held.get(names[2], m, np.int64, most), held.get(names[3], m, np.int32, most))


def _split_items(items: list, rows: list[int], threads: int) -> list:
    """The nodes of a batch (``items``, grouping ``rows`` rows each) to group each over all the
    threads (:func:`_evaluate_split`) rather than one thread each. First, largest first, a node
    of at least 2 x :data:`THREAD_WORK` rows with over twice the rows the other threads would
    group meanwhile: its thread would finish long after them (10M rows, 5 %: a batch of a
    1.6M-row node and a 278K-row one kept one thread 77 ms and the other 12). Nodes of like size
    stay whole: two side by side gain ~1.9x on two threads, one grouping split ~1.5x. Then, of
    what is left over a multiple of the threads (a binary search's one node), the last ones.

    >>> _split_items(list("abc"), [1_600_000, 280_000, 250_000], 2)
    ['a']
    >>> _split_items(list("abcd"), [300_000] * 4, 2), _split_items(list("ab"), [900_000, 5], 1)
    ([], [])
    >>> _split_items(list("abc"), [300_000, 290_000, 280_000], 2)
    ['c']
    """
    if threads <= 1:
        return []
    chosen: set[int] = set()
    rest = sum(rows)  # the rows of the nodes not chosen
    for j in sorted(range(len(items)), key=lambda j: -rows[j]):
        rest -= rows[j]
        if rows[j] < 2 * THREAD_WORK or rows[j] * (threads - 1) <= 2 * rest:
            break
        chosen.add(j)
    kept = [j for j in range(len(items)) if j not in chosen]
    left = len(kept) % threads
    while left and rows[kept[-left]] < 2 * THREAD_WORK:
        left -= 1
    chosen.update(kept[len(kept) - left:])
    return [items[j] for j in sorted(chosen)]


def _evaluate_split(stats, args: tuple, j: int, summary: np.ndarray, sums: np.ndarray) -> None:
    """Node ``j`` of a cluster's kernel arguments (:func:`evaluate`) over all the threads: its
    key words moved in row slices, its rows grouped in hash parts (as :func:`rolled_up`), its
    classes in first-row order and summarized, so the answer is the node kernel's."""
    codes, cnt, base_keys, ref, group = args[:5]
    node = group[j]
    n, cls_cnt, rep = _grouped(stats, move_keys(stats, codes, base_keys, ref, node, scratch_out=True), cnt)
    _kernels().summarize(cls_cnt, rep, n, codes, node, *args[8:], summary, sums)


def threshold_many(local: LocalSet, candidates: Sequence[Sequence[np.ndarray]], k: int, losses: Sequence[Sequence[np.ndarray]] | None = None,
                   threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_many` summarized under a class-size threshold ``k`` (no per-row arrays come
    back): per candidate ``[classes, smallest class, suppressed rows, classes under k]`` (int64)
    and, with ``losses`` (per candidate, per QI a value per leaf code), per QI the sum over the
    classes under ``k`` of their rows times their value (float64; zeros without ``losses``). The
    genetic search's batches (:mod:`sqlanon.search.genetic.local`)."""
    b, q = len(candidates), local.codes.shape[1]
    summary, sums = np.zeros((b, 4), dtype=np.int64), np.zeros((b, q), dtype=np.float64)
    if not b:
        return summary, sums
    if any(len(maps) != q for maps in candidates):
        raise ValueError(f"candidates need {q} maps each")
    flat, offsets = _flat([m for maps in candidates for m in maps])
    if any(len(m) == 0 for maps in candidates for m in maps) or int(flat.min()) < 0:
        raise ValueError("a map is empty or a released code negative")
    widths = np.maximum.reduceat(flat, offsets) + 1
    packed = [pack(widths[j * q:(j + 1) * q].tolist()) for j in range(b)]
    loss_flat, loss_off = np.zeros(1, dtype=np.float64), np.zeros((0, q), dtype=np.int64)
    if losses is not None:
        values = [np.asarray(v, dtype=np.float64) for per in losses for v in per]
        loss_flat = np.concatenate(values)
        loss_off = np.concatenate([[0], np.cumsum([len(v) for v in values[:-1]])]).astype(np.int64).reshape(b, q)
    args = (local.codes, local.cnt, flat, offsets.reshape(b, q), np.stack([p[0] for p in packed]), np.stack([p[1] for p in packed]),
            np.asarray([p[2] for p in packed], dtype=np.int64), int(k), loss_flat, loss_off)
    kern = _kernels()
    spread(b, local.rows * q, threads or os.cpu_count() or 1, lambda a, z: kern.threshold_many(*args, a, z, summary, sums))
    return summary, sums
