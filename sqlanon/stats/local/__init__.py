"""Local evaluation: lattice nodes answered in-process over a small fetched base frequency set.

**Why.** A node answered by SQL costs a statement: its grouping, its ``UNION ALL`` branch and
the planning, a few milliseconds a node at best for any per-statement shape (docs/measurements.md;
issue 26 wants 500 nodes/s on w24). The statement's fixed cost is the bottleneck, not the work:
grouping the same rows of integer codes in compiled code takes a fraction of it. So, as :mod:`sqlanon.generation.kernels` does for the miner, when the *base
frequency set* fits the memory budget with its kept roll-ups and working buffers (the engine's
memory limit, else half the memory available: :func:`enabled`, :func:`sets.budget`), its
integer leaf codes (one column per QI) and counts are fetched **once** per
:class:`~sqlanon.stats.core.Statistics` (Arrow -> numpy) and every full-domain node is grouped
by a numba kernel (:mod:`sqlanon.stats.local.kernels`), several nodes in parallel over the cores.

**Not a divergence from the house's one idea** (DESIGN.md: "the data never comes into Python"):
what is fetched is a bounded aggregate the database already computed (distinct code tuples with
their counts, the same integers the batch statement reads; the codes of the hierarchies' leaves,
never a value of the source), and only when it is bounded; larger sets, and every requirement
whose classes need more than their row count, stay SQL, which is also the oracle
(``tests/stats/test_local_eval.py``: every node of random lattices gives the same
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
shapes, a base set over the memory budget, and ``stats.local_rows = 0`` (the search option
``local_rows``, e.g. to compare with SQL or to test SQL statements).

**For other searches**: :func:`group_by_maps` groups the fetched set by arbitrary per-QI maps
(leaf code -> released code), the genetic search's candidates; :func:`group_many` does many
candidates in parallel.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from sqlglot import exp

import sqlanon.kernel_cache as kernel_cache
from sqlanon.privacy.needs import NodeStats
import sqlanon.stats.batch as batch
import sqlanon.stats.store as store
from sqlanon.stats.pages import small_pages
import sqlanon.stats.local.base as base
import sqlanon.stats.local.pool as pool
import sqlanon.stats.local.sets as sets
import sqlanon.stats.local.program as program
import sqlanon.stats.local.rollups as rollups

# read by the searches, the CLI and bench/ as ``sqlanon.stats.local.NAME`` (patch a limit where
# it is defined: ``sqlanon.stats.local.base``)
from sqlanon.stats.local.base import LocalSet  # noqa: F401
from sqlanon.stats.local.pool import threads_for  # noqa: F401
from sqlanon.stats.local.sets import clustered, enabled, group_by_maps, group_many, local_set, radix_sorted, threshold_many  # noqa: F401
from sqlanon.stats.local.rollups import drop_search_memory, rolled_up  # noqa: F401

#: a base frequency set of at most this many rows may be fetched and its nodes grouped
#: in-process: only a sanity bound; what decides is the memory its tuples need against the
#: memory budget (:func:`sqlanon.stats.local.sets.enabled`, :func:`~sqlanon.stats.local.sets.budget`)
LOCAL_ROWS = 1_000_000_000


#: load the compiled kernels in a background thread (started by the base scan,
#: :func:`warm_up_during`), so the load overlaps the scan; a node that may go in-process waits for
#: it (:func:`ready`), so the route never depends on how fast the load is.
#: False: load them on first use, waiting.
BACKGROUND = True
#: the kernels load with Python's cyclic garbage collector off, and once loaded their objects
#: (~86K of numba's and LLVM's) and every older one are frozen out of it (:func:`gc.freeze`): a
#: full collection then scans only what came after (``bench/phase_breakdown.py --freeze``;
#: docs/measurements.md). Set by
#: the CLI (its process is sqlanon's own: cyclic garbage already there when freezing is never
#: collected); a library call leaves its host's collector alone.
FREEZE_GC = False
#: numba's import checks whether SciPy's BLAS is there (``numba.np.arraymath`` imports
#: ``scipy.linalg.cython_blas``, for ``np.dot`` and the like), which loads all of
#: ``scipy.linalg`` (and ``numpy.f2py`` through SciPy's array-API shim): about half of the
#: load where SciPy is installed (docs/measurements.md) (scikit-learn brings it), GIL-bound, while the base scan wants
#: the cores. The kernels use no linear algebra, so with this flag the load runs with
#: ``scipy.linalg`` marked unimportable (numba then uses its own inner product, the only thing
#: the check decides) and unmarked after: :func:`_scipy_blas_hidden`. Set by the CLI: another
#: thread importing SciPy during the load would fail, which only the CLI can rule out.
HIDE_SCIPY_BLAS = False
#: the kernels the load leaves to their first call (numba's lazy dispatch: nothing is compiled
#: before a run calls it): not called by the optimal search's node evaluation (a 1M-row Adult-like
#: run calls none of them), about half of what compiling every kernel costs (docs/measurements.md,
#: ``bench/kernel_compile.py``). Either way the same machine code runs.
LAZY = ("clustered_rows", "count_classes_t", "first_row_order", "group_by_maps", "group_keys", "group_many", "packed_keys", "packed_keys_t", "radix_sort",
        "threshold_many")
_WARM: dict[str, Any] = {}
_WARM_LOCK = threading.Lock()


def warm_up(wait: bool = False) -> bool:
    """Whether the kernels are loaded; the first call starts loading them (importing numba and
    running each kernel every in-process node evaluation calls once on a tiny input, so its
    cached machine code is loaded, or compiled on an emptied cache) in a background thread; the
    kernels only some runs call (:data:`LAZY`) load or compile on their first call instead. ``wait`` (or not :data:`BACKGROUND`): until they are. A failure (numba
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
    """Whether the kernels are loaded for ``stats``, waiting for the load (started by the base
    scan, or now): a node that may go in-process goes in-process on every run, on a fresh install
    (whose first load compiles the kernels into numba's cache) as on a warm one. False only when
    the kernels cannot load (numba missing or broken): then SQL."""
    del stats  # the same answer for every Statistics: kept for the callers' one signature
    return warm_up(wait=True)


#: the kernels start loading this many seconds into the base scan (0: at its start; a node that
#: may go in-process waits for them anyway, so the earlier the load starts, the less is waited)
SCAN_SECONDS = 0.0
#: the kernels start loading when the base scan's statement ends, not during it: loaded, they
#: are a large part of the process (numba, LLVM and their machine code), which during the scan
#: came on top of the scan's hash tables, the run's peak (docs/measurements.md,
#: ``bench/memory_5m.py``); after it they take the memory the scan let go. The load then
#: overlaps the statements that read the base set (totals, column counts) and the search's
#: set-up. False: during the scan (:data:`SCAN_SECONDS`).
AFTER_SCAN = True


def compiled() -> bool:
    """Whether the kernel cache holds the node kernels (:mod:`sqlanon.kernel_cache`, read without
    importing numba): when it does not (a fresh install without ``sqlanon warm-up``), the load
    compiles them, a few CPU seconds the base scan's statement overlaps (the load starts with the
    scan, not after it, whatever :data:`AFTER_SCAN`): the compile then runs while the database
    scans, and the nodes wait less for it."""
    return kernel_cache.compiled("evaluate_nodes_on")


def warm_up_during(seconds: float = SCAN_SECONDS) -> threading.Timer:
    """A timer that starts loading the kernels (:func:`warm_up`) after ``seconds``: started
    before the base scan and cancelled after it (a load once started goes on). The load
    (importing numba, mostly Python) then runs while the database scans, with the GIL free."""
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

    def __exit__(self, *_: object) -> None:
        if self.hide and "scipy.linalg" in sys.modules and sys.modules["scipy.linalg"] is None:
            del sys.modules["scipy.linalg"]


def _read_only(values: np.ndarray) -> np.ndarray:
    """``values`` marked read-only, as the Arrow buffers a run hands to the kernels are: numba
    compiles one specialisation per writability, so the load calls with the one the runs use."""
    values.setflags(write=False)
    return values


def _load() -> None:
    try:
        kern = base._kernels()
        codes, cnt = np.zeros((2, 1), dtype=np.int32), np.ones(2, dtype=np.int64)
        one, zero = np.ones(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
        flat, off2 = np.zeros(2, dtype=np.int64), np.zeros((1, 1), dtype=np.int64)
        keys = np.zeros((2, 1), dtype=np.int64)
        kern.packed_keys_into(codes, flat, zero, one, zero, keys)
        kern.move_keys_into(codes, keys, zero, zero, flat, off2, zero, np.empty_like(keys))
        table, cls_cnt, rep = np.full(16, -1, dtype=np.int32), np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int32)
        n = kern.count_classes(keys, cnt, table, cls_cnt, rep, base._NO_ROWS)
        hashes = np.empty(2, dtype=np.uint64)
        kern.hash_rows(keys, 0, 2, hashes)
        n = kern.group_part(keys, cnt, hashes, 0, 1, table, cls_cnt, rep)
        marks = np.zeros(2, dtype=np.int32)
        kern.first_rows_marked(rep[:n].copy(), 0, n, marks)
        kern.first_rows_counted(marks, 0, 2)
        kern.first_rows_placed(marks, cls_cnt[:n].copy(), 0, 2, 0, rep, cls_cnt)
        kern.key_bits(np.zeros(2, dtype=np.int64), 0, _read_only(codes[:, 0].copy()), 0, 1)  # as an Arrow chunk's buffer
        kern.decode_keys(np.zeros(2, dtype=np.int64), 0, 2, zero, zero, one, codes)
        digits = np.zeros(65536, dtype=np.int64)
        kern.radix_counts(zero, 0, 1, 0, digits)
        kern.radix_scatter(zero, zero, 0, 1, 0, digits, np.empty(1, dtype=np.int64), np.empty(1, dtype=np.int64))
        kern.table_size(2)
        kern.gather_rows(codes, keys, rep, 0, n, np.empty((n, 1), dtype=np.int32), np.empty((n, 1), dtype=np.int64))
        spec = np.zeros((1, 2), dtype=np.int64)
        prog = program.ProgramArrays(np.zeros((1, 3), dtype=np.int64), spec, np.zeros(3, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(2), off2)
        summary, sums = np.zeros((1, 6), dtype=np.int64), np.zeros((1, 1))
        args = NodeArgs(codes, cnt, keys, zero, off2.copy(), sets.KeyLayout(flat, off2, zero), prog)
        kern.evaluate_nodes_on(*args.flat(), 0, 1, summary, sums, np.empty_like(keys), table, cls_cnt, rep)
        kern.summarize(cls_cnt, rep, n, codes, off2[0], *prog, summary[0], sums[0])
        _WARM["ready"] = True
    except Exception as err:  # pragma: no cover - numba missing or broken: SQL answers
        _WARM["error"] = f"{type(err).__name__}: {err}"


# ---------------------------------------------------------------------------------------------
# evaluation


def applies(stats, nodes, ok: exp.Expr, metric, extra_finals=()) -> bool:
    """Whether :func:`evaluate` answers these nodes (see the module's doc for what stays SQL)."""
    if not nodes or not sets.enabled(stats) or not all(isinstance(n, tuple) for n in nodes):
        return False
    return program.program(stats, ok, metric, extra_finals) is not None and ready(stats)


def evaluate(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list[NodeStats]:
    """Every node's :class:`NodeStats` (the finals in ``extra`` by name, as the batch statement
    gives them), computed in-process, its fresh arrays on small pages (:mod:`sqlanon.stats.pages`).
    Call only when :func:`applies`."""
    with small_pages():
        return _evaluate(stats, nodes, ok, metric, extra_finals)


class NodeArgs(NamedTuple):
    """A cluster's arguments of the node kernels (``evaluate_nodes_on``; ``summarize`` takes the
    program's), by role: the set its nodes are grouped from (leaf ``codes``, ``cnt`` and its key
    words at ``ref``), the nodes, the key layout and the program. Unpacked at the jit boundary
    (:meth:`flat`: numba takes arrays, not bundles) in this order."""

    codes: np.ndarray
    cnt: np.ndarray
    keys: np.ndarray
    ref: np.ndarray
    nodes: np.ndarray
    layout: sets.KeyLayout
    program: program.ProgramArrays

    def flat(self) -> tuple:
        """The arguments as the kernel takes them, positionally."""
        return (self.codes, self.cnt, self.keys, self.ref, self.nodes, *self.layout, *self.program)


def _evaluate(stats, nodes: Sequence[tuple[int, ...]], ok: exp.Expr, metric=None, extra_finals=()) -> list[NodeStats]:
    prog = program.program(stats, ok, metric, extra_finals)
    assert prog is not None
    nodes = [tuple(int(v) for v in n) for n in nodes]
    arr = np.asarray(nodes, dtype=np.int64).reshape(len(nodes), len(stats.qis))
    tasks = _tasks(stats, arr, prog)
    # every node of every cluster grouped whole on a thread, the threads taking the next node as
    # they finish one (nodes_on_threads); a node that would keep its thread busy long after the
    # others, and what is left over a multiple of the threads (a binary search's one node), each
    # over them all (_split_items)
    items = [(t, i) for t, task in enumerate(tasks) for i in range(len(task[0]))]
    threads = pool.threads_for(stats)
    split = _split_items(items, [len(tasks[t][1].cnt) for t, _ in items], threads)
    for t, i in split:
        _evaluate_split(stats, tasks[t][1], i, tasks[t][2][i], tasks[t][3][i])
    whole = set(items) - set(split)
    nodes_on_threads(stats, tasks, [item for item in items if item in whole], threads)
    summary = np.zeros((len(nodes), 6), dtype=np.int64)
    sums = np.zeros((len(nodes), len(prog.spec)), dtype=np.float64)
    for members, _, got, got_sums in tasks:
        summary[members] = got
        sums[members] = got_sums
    names = [*batch.final_names(stats, metric), *[name for name, _ in extra_finals]]
    out = _node_stats(nodes, summary, sums, prog, names)
    stats.nodes_evaluated += len(nodes)
    stats.nodes_local = stats.nodes_local + len(nodes)
    store.remember(stats, [(n, stats.base, ns.classes) for n, ns in zip(nodes, out)])
    return out


def _tasks(stats, arr: np.ndarray, prog: program.Program) -> list[tuple[list[int], NodeArgs, np.ndarray, np.ndarray]]:
    """Per cluster of the nodes ``arr`` (:func:`rollups.clusters`): its members, the kernel's
    arguments (the set it is grouped from, its keys moved to the cluster's reference) and its
    summary and sums to fill."""
    lay = sets.layout(stats).arrays
    tasks = []
    for members in rollups.clusters(arr):
        group = arr[members]
        meet, ref = group.min(axis=0), rollups.reference(group)
        # rolled up to the meet when that is where the nodes move from (an expansion's successors)
        at, (codes, cnt, base_keys) = rollups.source_set(stats, tuple(int(v) for v in meet), len(members) >= base.ROLL_NODES and bool((meet == ref).all()))
        if at != tuple(int(v) for v in ref):
            base_keys = rollups.keyed(stats, at, codes, base_keys, ref)
        args = NodeArgs(codes, cnt, base_keys, ref, group, lay, prog.arrays)
        tasks.append((members, args, np.zeros((len(members), 6), dtype=np.int64), np.zeros((len(members), len(prog.spec)), dtype=np.float64)))
    return tasks


def _node_stats(nodes: list[tuple[int, ...]], summary: np.ndarray, sums: np.ndarray, prog: program.Program, names: list[str]) -> list[NodeStats]:
    """Each node's :class:`NodeStats` from its summary row and sums, the finals by ``names``."""
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
    return out


def nodes_on_threads(stats, tasks: list, items: list, threads: int) -> None:
    """The batch's nodes ``items`` ((task, node) pairs of :func:`evaluate`'s clusters ``tasks``)
    each grouped whole on one thread, the threads taking the next node as they finish it, the
    largest first (by the rows it groups), each thread on its own buffers kept on ``stats``
    (:func:`node_buffers`). Slices fixed in advance by rows left a thread idle a third of a batch
    (docs/measurements.md): nodes of the same rows take different times
    (the QIs they move, the classes they make). At most as many threads as the work pays for
    (:data:`THREAD_WORK`); each node writes only its own rows of the outputs, so the answer does
    not depend on the threads."""
    if not items:
        return
    kern = base._kernels()
    rows = [len(tasks[t][1].cnt) for t, _ in items]
    order = sorted(range(len(items)), key=lambda j: -rows[j])
    use = max(1, min(sets.node_slots(stats, threads), len(items), sum(rows) // base.THREAD_WORK))
    cells = max(rows[j] * tasks[t][1].keys.shape[1] for j, (t, _) in enumerate(items))
    held = [node_buffers(stats, slot, max(rows), cells) for slot in range(use)]
    sizes = {t: int(kern.table_size(len(tasks[t][1].cnt))) for t, _ in items}
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
            m, words = len(args.cnt), args.keys.shape[1]
            kern.evaluate_nodes_on(*args.flat(), j, j + 1, summary, sums, keys[:m * words].reshape(m, words), table[:sizes[t]], cls_cnt[:m], rep[:m])

    if use == 1:  # one kernel call per cluster's run of nodes (a wide table's batches: many small nodes)
        keys, table, cls_cnt, rep = held[0]
        at = 0
        while at < len(items):
            t, j = items[at]
            stop = at
            while stop < len(items) and items[stop][0] == t and items[stop][1] == j + stop - at:
                stop += 1
            args, m, words = tasks[t][1], len(tasks[t][1].cnt), tasks[t][1].keys.shape[1]
            kern.evaluate_nodes_on(*args.flat(), j, j + stop - at, tasks[t][2], tasks[t][3], keys[:m * words].reshape(m, words), table[:sizes[t]], cls_cnt[:m], rep[:m])
            at = stop
        return
    executor = pool._pool(use - 1)
    futures = [executor.submit(work, slot) for slot in range(1, use)]
    work(0)
    for f in futures:
        f.result()


def node_buffers(stats, slot: int, rows: int, cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Thread ``slot``'s buffers for grouping nodes of sets of up to ``rows`` rows and ``cells``
    key words (rows x words; :func:`nodes_on_threads`): flat key words, a hash table, class
    counts and first rows, on ``stats``' working buffers (:func:`scratch`), kept for the search's
    life. The first thread's are the roll-ups' own (:func:`rolled_up`, :func:`_grouped`: a
    batch's roll-ups are done before its nodes start), one set of buffers less to hold."""
    held, m = rollups.scratch(stats), max(rows, 1)
    most = max(held.rows, m)
    names = ("moved_keys", "table0", "classes", "first_rows") if slot == 0 else (f"node_keys{slot}", f"node_table{slot}", f"node_classes{slot}", f"node_first_rows{slot}")
    words = -(-max(cells, 1) // m)
    table_size = base._kernels().table_size
    return (held.get(names[0], max(cells, 1), np.int64, most * words), held.get(names[1], int(table_size(m)), np.int32, int(table_size(most))),
            held.get(names[2], m, np.int64, most), held.get(names[3], m, np.int32, most))


def _split_items(items: list, rows: list[int], threads: int) -> list:
    """The nodes of a batch (``items``, grouping ``rows`` rows each) to group each over all the
    threads (:func:`_evaluate_split`) rather than one thread each. First, largest first, a node
    of at least 2 x :data:`THREAD_WORK` rows with over twice the rows the other threads would
    group meanwhile: its thread would finish long after them. Nodes of like size stay whole: two
    side by side gain more than one grouping split (docs/measurements.md). Then, of
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
        if rows[j] < 2 * base.THREAD_WORK or rows[j] * (threads - 1) <= 2 * rest:
            break
        chosen.add(j)
    kept = [j for j in range(len(items)) if j not in chosen]
    left = len(kept) % threads
    while left and rows[kept[-left]] < 2 * base.THREAD_WORK:
        left -= 1
    chosen.update(kept[len(kept) - left:])
    return [items[j] for j in sorted(chosen)]


def _evaluate_split(stats, args: NodeArgs, j: int, summary: np.ndarray, sums: np.ndarray) -> None:
    """Node ``j`` of a cluster's kernel arguments (:func:`evaluate`) over all the threads: its
    key words moved in row slices, its rows grouped in hash parts (as :func:`rolled_up`), its
    classes in first-row order and summarized, so the answer is the node kernel's."""
    node = args.nodes[j]
    n, cls_cnt, rep = rollups._grouped(stats, rollups.move_keys(stats, args.codes, args.keys, args.ref, node, scratch_out=True), args.cnt)
    base._kernels().summarize(cls_cnt, rep, n, args.codes, node, *args.program, summary, sums)
