"""The frequency-set store: the base set, the saved and partial sets, which set a node is rolled
up from and when a set is saved or evicted.

A node's frequency set is rolled up from the smallest saved set it generalizes
(:func:`pick_set`); a set is saved on its second use (:func:`remember` notes the first), kept
within ``keep_sets`` and the memory limit (:func:`has_room`), and a set rolled up from a large
one goes through a *partial* set first (:func:`partial_levels`). The store's state is a
:class:`SetStore` (``stats.sets``); the functions take the :class:`~sqlanon.stats.core.Statistics`
whose engine, dialect and roll-up statement (``generalized_select``) they use, so a copy for
another dialect (:meth:`Statistics.for_dialect`) shares the sets and builds for its own dialect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from sqlanon.expr.atoms import Params, table_ref
from sqlanon.plan import Recoding
from sqlanon.stats.frequency import FrequencySet

#: a node: a level per QI, or a Recoding (always rolled up from the base set)
Node = Sequence[int] | Recoding

#: saved sets hold at most this many times the base set's rows once a meet is saved
#: (:func:`save_set`: fewer sets dropped and rebuilt than at 2x, docs/measurements.md)
SAVED_ROWS = 3
#: bytes a saved frequency set's row is counted at per column (a code per QI and the count)
ROW_BYTES = 8
#: saved sets, the base set included, take at most this share of the engine's memory limit
SAVED_SHARE = 0.5
#: a set saved from a set of more than this many rows is rolled up from a *partial* set first
#: (:func:`partial_levels`: the source with only its most shrinking QI raised to the
#: node's level), which stays for later sets (Incognito's roll-up along one attribute)
PARTIAL_ROWS = 500_000
#: ... when that QI's effective number of values (rows' inverse Simpson index) shrinks at least
#: this many times
PARTIAL_GAIN = 4.0
#: evaluated nodes remembered as candidates for saving (:func:`remember`), the oldest forgotten
SEEN_NODES = 512


@dataclass
class SetStore:
    """The saved frequency sets of one source."""

    #: the base frequency set (saved by ``Statistics.prepare``)
    base: FrequencySet | None = None
    #: every saved set, the partial ones among them (the base set is not here)
    saved: list[FrequencySet] = field(default_factory=list)
    #: the tables of the saved partial sets (:func:`partial_levels`), never evicted
    partials: set[str] = field(default_factory=set)
    #: evaluated, unsaved node -> its class count (rows of its set), newest last
    seen: dict[tuple[int, ...], int] = field(default_factory=dict)


def pick_set(stats, node: Node) -> FrequencySet:
    """The smallest saved frequency set that ``node`` generalizes (the base always qualifies).

    If an already evaluated specialization of ``node`` has a much smaller set than that, it is
    saved now (its second use) and used: sets are kept only when they are reused.
    """
    frm = smallest_saved(stats, node)
    # whether to save a set is decided against the sets saved for use, as without partial sets
    # (they only make saving cheaper; deciding against them read the partial sets more often and
    # took longer: docs/measurements.md)
    candidate = reuse_candidate(stats, node, smallest_saved(stats, node, partial=False) if stats.sets.partials else frm)
    if candidate is not None:
        seen, classes = candidate
        del stats.sets.seen[seen]
        frm = materialize(stats, seen, smallest_saved(stats, seen), classes)
    return via_partial(stats, node, frm)


def via_partial(stats, node: Node, frm: FrequencySet) -> FrequencySet:
    """``frm``, or when it has more than :data:`PARTIAL_ROWS` rows, the partial set between it
    and ``node`` (:meth:`partial_levels`, saved on first use and kept)."""
    if frm.rows <= PARTIAL_ROWS or stats.keep_sets <= 0 or not isinstance(node, tuple):
        return frm
    partial = partial_levels(stats, node, frm)
    if partial is None or not has_room(stats, frm.rows):
        return frm
    return save_partial(stats, partial, frm)


def smallest_saved(stats, node: Node, partial: bool = True) -> FrequencySet:
    """The smallest saved set ``node`` generalizes (without the partial sets unless ``partial``)."""
    best = stats.base
    if not isinstance(node, tuple):
        return best
    for fs in stats.sets.saved:
        if (partial or fs.table not in stats.sets.partials) and all(a <= b for a, b in zip(fs.levels, node)) and fs.rows < best.rows:
            best = fs
    return best


def remember(stats, evaluated) -> None:
    """Remember evaluated nodes and their class counts (candidates for saving; see
    :meth:`pick_set`). Nothing is written here: a set is saved on its second use only."""
    for node, _frm, classes in evaluated:
        if isinstance(node, tuple):
            stats.sets.seen[node] = classes
    while len(stats.sets.seen) > SEEN_NODES:
        stats.sets.seen.pop(next(iter(stats.sets.seen)))


def reuse_candidate(stats, node, frm: FrequencySet):
    """An evaluated, unsaved specialization of ``node`` whose set is 4x smaller than ``frm``."""
    if stats.keep_sets <= 0 or frm.rows <= stats.materialize_rows or not isinstance(node, tuple):
        return None
    best = None
    for seen, classes in stats.sets.seen.items():
        if classes * 4 < frm.rows and (best is None or classes < best[1]) and seen != node and all(a <= b for a, b in zip(seen, node)):
            best = (seen, classes)
    return best


def has_room(stats, rows: int) -> bool:
    """Whether a new saved set of at most ``rows`` rows keeps the base set and the saved sets
    within :data:`SAVED_SHARE` of the engine's memory limit (no limit: yes), each row counted
    at :data:`ROW_BYTES` per QI code and count (saving meets regardless of the limit raised
    the peak memory: docs/measurements.md)."""
    budget = stats.engine.memory_bytes()
    if not budget:
        return True
    held = stats.base.rows + sum(f.rows for f in stats.sets.saved if f is not stats.base) + rows
    return held * ROW_BYTES * (len(stats.qis) + 1) <= SAVED_SHARE * budget


def keep_final(stats, node: Node) -> None:
    """Save the released node's frequency set (one roll-up) when the smallest saved set it
    generalizes has over ``materialize_rows`` rows: the verification, the report and the
    release's suppressed classes then read it instead of rolling the large set up each (a
    search in-process saves no set; what the three roll-ups cost: docs/measurements.md).
    The search is over: no later set rolls up from a partial set, so none is made on the way
    (one roll-up of the large set, not two: at 8M base tuples the partial set's roll-up cost
    as much as the final one's)."""
    if not isinstance(node, tuple) or stats.keep_sets <= 0:
        return
    frm = smallest_saved(stats, node)
    if tuple(frm.levels) != tuple(node) and frm.rows > stats.materialize_rows and has_room(stats, frm.rows):
        save_set(stats, node, frm, partial=False)


def save_set(stats, node: tuple[int, ...], frm: FrequencySet, partial: bool = True) -> FrequencySet:
    """Roll ``frm`` up to ``node`` and save it (its rows are counted): a set several
    statements are about to roll up from (:func:`sqlanon.stats.batch.save_meets`); through a
    partial set (:func:`via_partial`) unless ``partial`` is False."""
    fs = materialize(stats, node, frm, 0, partial=partial)
    fs.rows = int(stats.engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(table_ref(fs.table))) or 0)
    # these sets can be nearly as large as the base set: keep their rows (and memory) within
    # SAVED_ROWS times the base set's, dropping the largest others first
    while sum(f.rows for f in stats.sets.saved) > SAVED_ROWS * stats.base.rows and len(stats.sets.saved) > 1:
        others = [f for f in stats.sets.saved if f is not fs and f.table not in stats.sets.partials] or [f for f in stats.sets.saved if f is not fs]
        victim = max(others, key=lambda f: f.rows)
        stats.sets.partials.discard(victim.table)
        stats.sets.saved.remove(victim)
        stats.engine.execute(stats.dialect.drop_temp(victim.table))
    return fs


def materialize(stats, node: tuple[int, ...], frm: FrequencySet, rows: int, partial: bool = True) -> FrequencySet:
    """Roll ``frm`` up to ``node`` and save it as a set of ``rows`` rows, evicting the largest
    saved set (never a partial one) past ``keep_sets``; through a partial set
    (:func:`via_partial`) unless ``partial`` is False."""
    if tuple(frm.levels) == tuple(node) and frm is not stats.base:
        return frm  # saved already (a partial set at the node's levels)
    if partial:
        frm = via_partial(stats, node, frm)
    name = stats.engine.temp_name("fs")
    create_rolled_up(stats, name, node, frm)
    fs = FrequencySet(name, node, rows)
    stats.sets.saved.append(fs)
    if len(stats.sets.saved) > stats.keep_sets + len(stats.sets.partials):
        # the largest saved set is the least useful (never the one just made: it is used next;
        # never a partial set: every later set of its QI's level rolls up from it)
        victim = max((f for f in stats.sets.saved if f is not fs and f.table not in stats.sets.partials), key=lambda f: f.rows)
        stats.sets.saved.remove(victim)
        stats.engine.execute(stats.dialect.drop_temp(victim.table))
    return fs


def create_rolled_up(stats, name: str, node: tuple[int, ...], frm: FrequencySet) -> None:
    """Save ``frm`` rolled up to ``node`` as the temporary table ``name``, the code lists bound
    where the dialect binds them (DuckDB): spelled out, a 40K-leaf zip's and a birth date's lists
    made a statement of ~200K literals that sqlglot copied and rendered for seconds
    (docs/measurements.md)."""
    params = Params() if stats.dialect.binds_lists else None
    query = stats.dialect.clustered(stats.generalized_select(node, frm, params), stats.cluster_keys())
    stats.engine.execute(stats.dialect.create_temp(name, query), params or None)


def effective_values(stats, i: int, level: int) -> float:
    """QI ``i``'s effective number of values at ``level`` over the rows: the inverse Simpson
    index ``1 / sum(p^2)`` of its codes' row shares (74 equally common ages count 74; a
    country held by 90 % of the rows and 40 rare ones about 1.2)."""
    counts = stats.leaf_level_freq(i, level)
    total = float(sum(counts))
    if total <= 0:
        return 1.0
    return 1.0 / sum((c / total) ** 2 for c in counts if c)


def partial_levels(stats, node: tuple[int, ...], frm: FrequencySet) -> tuple[int, ...] | None:
    """The levels of the partial set to roll ``node`` up from instead of ``frm``: ``frm``'s,
    with the one QI whose values shrink most from ``frm``'s level to the node's
    (:meth:`effective_values`, at least :data:`PARTIAL_GAIN` times) at the node's level; None
    when no QI shrinks so much, or that QI is the node's only difference from ``frm``.

    On Adult-like data most sets a search saves have age generalized, each rolled up from the
    base set; rolled up from the base set with only age at that level instead, each reads a
    fraction of the rows (docs/measurements.md)."""
    if not stats.column_freqs:
        return None
    best, gain = None, PARTIAL_GAIN
    for i, (lo, hi) in enumerate(zip(frm.levels, node)):
        if hi > lo:
            g = effective_values(stats, i, lo) / effective_values(stats, i, hi)
            if g >= gain:
                best, gain = i, g
    if best is None:
        return None
    levels = tuple(int(node[i]) if i == best else int(lv) for i, lv in enumerate(frm.levels))
    return None if levels == tuple(int(v) for v in node) else levels


def save_partial(stats, levels: tuple[int, ...], frm: FrequencySet) -> FrequencySet:
    """The saved partial set at ``levels`` (rolled up from ``frm`` and kept, its rows counted)."""
    for fs in stats.sets.saved:
        if tuple(fs.levels) == levels:
            return fs  # saved already (as a partial set or a node's)
    name = stats.engine.temp_name("fs")
    create_rolled_up(stats, name, levels, frm)
    fs = FrequencySet(name, levels, 0)
    fs.rows = int(stats.engine.scalar(exp.select(exp.Count(this=exp.Star())).from_(table_ref(name))) or 0)
    stats.sets.saved.append(fs)
    stats.sets.partials.add(name)
    return fs


def drop_all(stats) -> None:
    """Drop every saved set and forget them."""
    for fs in stats.sets.saved:
        stats.engine.execute(stats.dialect.drop_temp(fs.table))
    stats.sets.saved.clear()
    stats.sets.partials.clear()
