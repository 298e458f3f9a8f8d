"""Optimal full-domain search: the best node under the metric, provably, in few statements.

The pruning follows ARX's Flash (Kohlmayer et al. 2012) and its use of metric bounds, written for
batches of nodes per statement:

* **closures**: a node that satisfies makes every generalization satisfy, one that fails makes
  every specialization fail (when the requirement is monotone: k-anonymity and distinct
  l-diversity with a budget, every model without one);
* **bounds**: ``prior_bound`` (known without data) orders the search and stops it once the cheapest
  unvisited bound is no better than the incumbent, so no node worse than the best found is ever
  evaluated; the suppressed rows of an evaluated node bound those of all its specializations
  (``suppressed_bounds``), and monotone query bounds (discernibility, AECS, CM) prune whole cones;
* **rare values**: with k-anonymity, the rows of a value, a value pair or a value triple held by
  fewer than k rows (at the node's levels) are suppressed whatever the other QIs: a lower bound of
  every node's suppressed rows from the column frequencies and one statement of QI-pair and
  QI-triple counts (:mod:`sqlanon.stats.marginals`; triples only when the budget allows
  suppression), so nodes it puts over the budget fail without a query
  (:meth:`Lattice.tag_marginal`; Adult's 12 ARX cases: 344 -> 205 statements with pairs, 205 ->
  155 with triples);
* **known values**: a node tagged as satisfying whose value needs no data (entropy, height, or any
  metric when nothing may be suppressed) is scored without a query;
* **paths**: whether the cheapest undecided nodes satisfy is found by Flash's probes (a path of
  generalizations upwards through undecided nodes, binary-searched for its lowest satisfying
  node), several probes in lockstep: each round evaluates every probe's next node, plus nodes
  whose value is needed, in one statement (:meth:`Lattice.check_many`);
* **look-ahead**: a statement has a fixed cost (DuckDB parses, binds and plans it anew each time),
  so on a small frequency set a round holding few nodes is filled with the nodes the probes would
  ask in their next steps whichever way the next ones go (:meth:`Probe.lookahead`): fewer rounds
  for a few more nodes (Adult: 495 statements -> 344 over the 12 ARX cases). Only new facts are
  learned, so the optimum's value is the same.

* **top-down** (a requirement that is not monotone but has a monotone part: k-anonymity beside
  t-closeness, entropy or recursive l-diversity, ..): every node that meets the part and may beat
  the incumbent is evaluated whatever the order (its model says nothing about other nodes), so
  only the nodes failing the part can be saved. Flash's probes find a good incumbent early, but
  the nodes their binary searches find failing sit low on their paths, with small cones. Once
  :data:`STALE_ROUNDS` rounds in a row have not improved the incumbent, each round evaluates the
  *maximal* open nodes instead (:func:`maximal_open`): a node failing the part is then the
  highest of its kind and tags the largest cone, and one meeting it was needed anyway (Adult,
  8 QIs, salary-class, k=5 5 %, 0.2-closeness: 2,037 nodes in 45 statements -> 1,724 in 18;
  ARX's Flash: 1,929).

``batch`` caps the nodes per statement and ``probes`` the probes run side by side (both options of
``--search-option``); ``probes=1, batch=1`` is the one-node-per-statement search.
``lookahead_threads`` (off by default, :data:`LOOKAHEAD_THREADS`) looks one step ahead on large
sets when the engine has several threads.
"""

from __future__ import annotations

import numpy as np

from sqlanon.search.lattice.lattice import FAILS, SATISFIES, UNKNOWN, Lattice, LatticeResult
from sqlanon.stats import batch as batch_stmt

TOL = 1e-12
BATCH = 128
PROBES = 64
#: a statement's fixed cost (parse, bind, plan: docs/measurements.md) is worth about this many
#: joined rows (frequency-set rows x nodes); a round with fewer is filled with the probes' nodes of
#: the next steps (at most LOOKAHEAD steps ahead), so a search on a small set needs fewer rounds
SPECULATE_ROWS = 300_000
LOOKAHEAD = 2
#: the ``lookahead_threads`` option: on a base set above SPECULATE_ROWS rows (no look-ahead by the
#: rule above), an engine scanning with several threads still gets rounds of each probe's next
#: node and both of its possible successors (Flash's binary search one step ahead). Off by
#: default: fewer statements but more nodes, and slower, on a large set (a node over it costs
#: more than a statement's fixed cost, and a one-node statement already scans on both threads:
#: docs/measurements.md)
LOOKAHEAD_THREADS = False
#: above this many base-set rows, a probe's path ends at its last node whose prior is below the
#: incumbent's value (nodes above it cannot win). 0: at every size. The nodes above tag more, but
#: on Adult (30K rows, 5 % suppression) the truncated paths evaluate fewer nodes in fewer
#: statements: precision k=2/5/10/100 592/694/630/310 -> 271/362/387/188 nodes, 21/24/21/13 ->
#: 12/13/15/9 statements; ARX's Loss k=10 411 -> 276 (it was 500,000 rows)
TRUNCATE_ROWS = 0
#: a requirement with a monotone part goes top-down after this many probe rounds in a row that did
#: not improve the incumbent (Adult, 8 QIs, k=5/10 5 %: 1 round: 0.2-closeness 1,702 nodes,
#: 0.15-closeness k=10 2,259, entropy 1.5-diversity 3,168; 2 rounds: 1,724 / 2,193 / 3,170)
STALE_ROUNDS = 2


def speculation(lattice: Lattice, batch: int) -> int:
    """How many nodes a round should hold before probes look ahead (0 for large sets)."""
    stats = lattice.stats
    if not stats.prepared or not batch_stmt.supported(stats, lattice.metric):
        return 0
    worth = stats.engine.statement_rows or SPECULATE_ROWS  # Spark: a job per statement
    return min(batch, worth // max(stats.base.rows, 1))


def threads_wide(lattice: Lattice, wide: bool = LOOKAHEAD_THREADS) -> bool:
    """Whether a round holds one look-ahead step for the engine's threads (``wide``, the
    ``lookahead_threads`` option): on a large base set, when the engine scans with more than one
    thread (asked once per search)."""
    stats = lattice.stats
    if not wide or not stats.prepared or stats.base.rows <= SPECULATE_ROWS:
        return False
    if not batch_stmt.supported(stats, lattice.metric) or stats.engine.statement_rows:
        return False  # Spark: its own statement cost
    if lattice.threads_wide is None:
        lattice.threads_wide = stats.engine.scan_threads() > 1
    return lattice.threads_wide


def truncated_paths(lattice: Lattice) -> bool:
    """Whether probe paths stop below the incumbent's value (:class:`Probe`): when rows may be
    suppressed, on base sets above ``TRUNCATE_ROWS`` rows (by default every size; an engine may
    set its own ``truncate_rows``). (Without suppression the satisfying nodes high on a path tag whole cones whose
    values are then known without a query: 10M rows, k=10 at 0 %: 326 nodes with whole paths,
    819 truncated; at 5 %: 110 -> 53.)"""
    stats = lattice.stats
    limit = stats.engine.truncate_rows
    limit = TRUNCATE_ROWS if limit is None else limit  # Spark: 0, every size
    return stats.prepared and stats.base.rows > limit and lattice.requirement.budget > 0


def priors(lattice: Lattice) -> np.ndarray:
    """The metric's data-free lower bound of every node (one numpy gather when it is additive)."""
    stats, metric = lattice.stats, lattice.metric
    terms = metric.prior_terms(stats)
    if terms is None:
        vectorized = metric.prior_array(stats, lattice.nodes)
        if vectorized is not None:
            return np.asarray(vectorized, dtype=np.float64)
        return np.array([metric.prior_bound(stats, lattice.node(i)) for i in range(len(lattice))], dtype=np.float64)
    out = np.zeros(len(lattice), dtype=np.float64)
    for i, t in enumerate(terms):
        out += np.asarray(t, dtype=np.float64)[lattice.nodes[:, i]]
    return out


def _threshold(lattice: Lattice) -> float:
    return lattice.best_value - TOL * max(1.0, abs(lattice.best_value))


def open_nodes(lattice: Lattice, prior: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Nodes (in search order) that may still beat the incumbent: not evaluated, not known to
    fail, not pruned, and neither their prior nor their suppression bound is worse than it."""
    best = _threshold(lattice)
    mask = (prior < best) & ~lattice.is_evaluated & ~lattice.pruned & (lattice.status != FAILS)
    bounded = mask if lattice.metric.bounds_unsuppressed else mask & (lattice.s_lower > 0)
    if bounded.any():
        where = np.flatnonzero(bounded)
        bound = lattice.metric.suppressed_bounds(lattice.stats, lattice.nodes[where], prior[where], lattice.s_lower[where].astype(np.float64))
        mask[where[bound >= best]] = False
    return order[mask[order]]


def offer_known(lattice: Lattice, cands: np.ndarray) -> bool:
    """Score the satisfying candidates whose value needs no query; True if the incumbent moved."""
    budget = lattice.requirement.budget
    moved = False
    for idx in cands[lattice.status[cands] == SATISFIES]:
        idx = int(idx)
        value = lattice.metric.known_value(lattice.stats, lattice.node(idx), budget)
        if value is None:
            return moved  # this metric needs data: nothing is known without a query
        before = lattice.best_idx
        lattice.offer(idx, value)
        moved = moved or lattice.best_idx != before
        lattice.pruned[idx] = True  # scored: never evaluate it for its value
        break  # candidates come in bound order: the first one decides (the rest are worse or equal)
    return moved


class Probe:
    """Flash's path probe: the lowest satisfying node on a path of generalizations."""

    def __init__(self, lattice: Lattice, start: int, prior: np.ndarray, below: float = np.inf) -> None:
        path = lattice.greedy_path(start, prior)
        if below < np.inf:
            # only the path's nodes that may still beat the incumbent (priors rise along it): the
            # truncated path's top decides the same nodes below it, for no node that cannot win
            keep = 1
            while keep < len(path) and prior[path[keep]] < below:
                keep += 1
            path = path[:keep]
        self.path = path
        self.lo, self.hi = 0, len(path) - 1
        self.top_checked = False
        self.done = False

    def _advance(self, lattice: Lattice, lo: int, hi: int, top_checked: bool):
        """From the state ``(lo, hi, top_checked)``, past every node already decided: the next
        undecided node this probe asks (``None`` when it is done) and the state there."""
        while True:
            if not top_checked:
                st = lattice.path_status[self.path[hi]]
                if st == UNKNOWN:
                    return self.path[hi], (lo, hi, False)
                if st != SATISFIES:
                    return None, (lo, hi, True)  # the path's top fails: nothing on it satisfies
                top_checked = True
                continue
            if lo >= hi:
                return None, (lo, hi, True)
            mid = (lo + hi) // 2
            st = lattice.path_status[self.path[mid]]
            if st == UNKNOWN:
                return self.path[mid], (lo, hi, True)
            if st == SATISFIES:
                hi = mid
            else:
                lo = mid + 1

    def next_node(self, lattice: Lattice) -> int | None:
        """The next node this probe needs evaluated (None when finished); decided nodes advance
        the search without a query."""
        if self.done:
            return None
        node, (self.lo, self.hi, self.top_checked) = self._advance(lattice, self.lo, self.hi, self.top_checked)
        self.done = node is None
        return node

    def lookahead(self, lattice: Lattice, depth: int) -> list[list[int]]:
        """The undecided nodes this probe may need after its next one, per step ahead (index 0:
        the node after the next, whichever way the next one goes; up to ``depth`` steps ahead).
        Nothing changes: the probe still advances only through :meth:`next_node`."""
        out: list[list[int]] = []
        states = [(self.lo, self.hi, self.top_checked)] if not self.done else []
        for step in range(depth + 1):
            nodes, after = [], []
            for lo, hi, top_checked in states:
                node, branches = self._step(lattice, lo, hi, top_checked)
                if node is not None:
                    nodes.append(node)
                    after.extend(branches)
            if step:
                out.append(nodes)
            states = after
            if not states:
                break
        return out

    def _step(self, lattice: Lattice, lo: int, hi: int, top_checked: bool):
        """What :meth:`next_node` would ask from state ``(lo, hi, top_checked)``: the node and the
        states after each of its outcomes (``(None, [])`` when the probe would be done)."""
        node, (lo, hi, top_checked) = self._advance(lattice, lo, hi, top_checked)
        if node is None:
            return None, []
        if not top_checked:
            return node, [(lo, hi, True)]  # the top: if it fails, the probe is done
        mid = (lo + hi) // 2
        return node, [(lo, mid, True), (mid + 1, hi, True)]


def maximal_open(lattice: Lattice, cands: np.ndarray, batch: int) -> list[int]:
    """Up to ``batch`` of the open nodes ``cands`` with no open node above them: the top-down
    round of a requirement with a monotone part (see the module's docstring). When there are more,
    they are taken in order of their levels, the QI with the most values first and highest levels
    first, so a statement's nodes share high levels of the wide QIs and their meet, which the
    statement rolls the set up to before joining its nodes (:func:`sqlanon.stats.batch.layout`),
    is small (Adult, 8 QIs, salary-class, k=5 5 %: the same nodes, a third fewer rows joined to
    them: 0.2-closeness 26.5M -> 18.8M, 19 -> 18 statements; 0.15-closeness k=10 37.1M ->
    24.4M; entropy 1.5-diversity 52.2M -> 35.7M)."""
    mask = np.zeros(len(lattice), dtype=bool)
    mask[cands] = True
    top = cands[~lattice.has_above(mask)[cands]]
    if len(top) > batch:
        by_values = sorted(range(len(lattice.maxes)), key=lambda i: (-_values(lattice, i), i))
        top = top[np.lexsort([-lattice.nodes[top, i] for i in reversed(by_values)])]
    return [int(i) for i in top[:batch]]


def _values(lattice: Lattice, i: int) -> int:
    """QI ``i``'s distinct values in the data (its leaves when the statistics have no counts)."""
    freqs = lattice.stats.column_freqs
    return sum(1 for f in freqs[i] if f) if freqs else len(lattice.stats.hierarchies[i].rows)


def _start_probes(lattice: Lattice, active: list[Probe], cands: np.ndarray, prior: np.ndarray,
                  batch: int, probes: int, truncate: bool) -> None:
    """Keep ``probes`` probes going: start new ones, in ``active``, from the cheapest undecided
    candidates (at most 4 x probes + batch looked at), in order; one whose path would overlap a
    running probe's (comparable to its start) or a probe started this round is skipped."""
    starts = [p.path[0] for p in active]
    if len(starts) >= probes:
        return
    scan = cands[lattice.path_status[cands] == UNKNOWN][: 4 * probes + batch]
    if starts and len(scan):
        cand, running = lattice.nodes[scan][:, None, :], lattice.nodes[starts][None, :, :]
        scan = scan[~((cand <= running).all(axis=2) | (cand >= running).all(axis=2)).any(axis=1)]
    # a candidate comparable to a probe started this round is skipped (its path would overlap
    # it): each start marks the candidates after it at once, not each candidate checked against
    # every start (a Python loop per candidate cost a noticeable share of a round: docs/measurements.md)
    nodes = lattice.nodes[scan]
    skipped = np.zeros(len(scan), dtype=bool)
    for j, idx in enumerate(scan.tolist()):
        if len(starts) >= probes:
            break
        if skipped[j]:
            continue
        active.append(Probe(lattice, idx, prior, _threshold(lattice) if truncate else np.inf))
        starts.append(idx)
        rest, node = nodes[j + 1:], nodes[j]
        skipped[j + 1:] |= (rest <= node).all(axis=1) | (rest >= node).all(axis=1)


def _next_of_probes(lattice: Lattice, active: list[Probe], cands: np.ndarray, batch: int) -> list[int]:
    """The next node of every running probe, then (up to ``batch``) candidates known to satisfy
    whose value needs their frequency set."""
    todo: list[int] = []
    for p in active:
        nxt = p.next_node(lattice)
        if nxt is not None and nxt not in todo:
            todo.append(nxt)
    if len(todo) < batch:
        queued = set(todo)
        for idx in cands[lattice.path_status[cands] == SATISFIES]:
            if len(todo) >= batch:
                break
            if int(idx) not in queued:
                todo.append(int(idx))
    return todo


def _speculate(lattice: Lattice, active: list[Probe], todo: list[int], batch: int, wide: bool = False) -> None:
    """A statement costs a fixed planning time: while ``todo`` holds few nodes, add the probes'
    nodes of the steps after the next (whichever way the next ones go), so fewer rounds."""
    fill = speculation(lattice, batch)
    if threads_wide(lattice, wide):
        fill = max(fill, min(batch, 3 * len(todo)))  # each next node and both of its successors
    for ahead in range(1, LOOKAHEAD + 1):
        if len(todo) >= fill:
            break
        queued = set(todo)
        for p in active:
            steps = p.lookahead(lattice, ahead)
            for idx in steps[ahead - 1] if len(steps) >= ahead else ():
                if len(todo) >= fill:
                    break
                if idx not in queued:
                    todo.append(idx)
                    queued.add(idx)


def run(lattice: Lattice, batch: int = BATCH, probes: int = PROBES, lookahead_threads: bool = LOOKAHEAD_THREADS, **options) -> LatticeResult:
    batch, probes = max(1, int(batch)), max(1, int(probes))
    lattice.require_top()
    # the pair (and triple) counts cost a statement: worth it only when the lattice needs more than one round
    lattice.tag_marginal(pairs=len(lattice) > batch)
    prior = priors(lattice)
    order = np.lexsort((np.arange(len(lattice)), lattice.height, prior))
    monotone = lattice.requirement.monotone
    truncate = truncated_paths(lattice)
    active: list[Probe] = []
    # a requirement with a monotone part: probe rounds in a row that did not improve the incumbent
    stale, top_down = 0, False
    while True:
        active = [p for p in active if not p.done]
        cands = open_nodes(lattice, prior, order)
        if offer_known(lattice, cands):
            cands = open_nodes(lattice, prior, order)
        if not len(cands) and not active:
            break
        if top_down:
            todo = maximal_open(lattice, cands, batch)
        elif monotone or lattice.mono_finals:
            _start_probes(lattice, active, cands, prior, batch, probes, truncate)
            todo = _next_of_probes(lattice, active, cands, batch)
            if not todo and active:
                continue  # every probe finished on nodes decided meanwhile
            _speculate(lattice, active, todo, batch, bool(lookahead_threads))
        else:
            # a node says nothing about others: evaluate the cheapest candidates
            todo = [int(i) for i in cands[:batch]]
        if not todo:
            break
        before = lattice.best_value
        lattice.check_many(todo[: max(batch, probes)])
        if lattice.mono_finals and not top_down:
            stale = stale + 1 if lattice.best_value >= before else 0
            top_down = stale >= STALE_ROUNDS
    return lattice.result()
