"""The genetic search's fitness evaluated in-process over its fetched frequency set.

:class:`sqlanon.search.genetic.stats.GeneticStats` scores a batch of candidates by one SQL
statement (the candidate table crossed with the frequency set ``gbase``). On a wide table that
costs milliseconds of engine CPU per candidate (block lookups per distinct QI tuple and a
two-word key ``GROUP BY``: docs/measurements.md), which no statement shape gets much below. When the frequency set
is small (at most ``local_rows`` distinct QI tuples), its **integer leaf codes and counts** are
fetched **once** (never source rows: the set the SQL path reads, ``rows x QIs`` small integers)
and every candidate is grouped in compiled code (:mod:`sqlanon.stats.local`, numba), as
:mod:`sqlanon.generation.kernels` does for the miner: a candidate is then a few hundred
microseconds instead of a round trip and a scan.

The local path answers what a k-anonymity-type requirement needs and nothing more:

* the privacy predicate is a conjunction of ``cnt >= K`` (k-anonymity, estimated k-map) or
  ``TRUE`` (:func:`count_threshold` reads it off the sqlglot predicate; anything else is refused);
* per candidate: suppressed rows, classes, bad classes, the smallest class, and the LM of the
  suppressed rows (``lm_sup``, or ``lm_sup{i}`` per QI for per-column figures), with the
  ``lm_within`` shortcut's semantics (``lm_sup`` None beyond the bound exactly when the SQL path
  would decode it from the class keys, :meth:`GeneticStats.decodes`).

Class targets (CM, cost-matrix CM), regression targets, sensitive models (l-diversity,
t-closeness, ...), population models (k-map with a population table, delta-presence) and ranked
(table-level) models **fall back to SQL automatically**: :func:`why_not` names the reason, and
``GeneticStats.local_reason`` keeps it. The result dicts are the SQL path's (same keys, same
values up to float rounding of the LM sums), so a seeded search takes the same path either way.

The compiled kernels load in a background thread from the set-up on
(:func:`sqlanon.stats.local.warm_up`); the first local batch waits for them, so a fresh install and
a warm one take the same path.

The cap is the Statistics' ``local_rows`` (:data:`LOCAL_ROWS` by default, lower than the lattice
searches' :data:`sqlanon.stats.local.LOCAL_ROWS`; the fetched set is theirs); the search option ``local_rows=0``
(``--option local_rows=0``) turns it off, as does ``GeneticStats.local = False`` (or
``FlexibleEvaluator(..., local=False)``) before :meth:`GeneticStats.prepare` for the genetic
batches alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from sqlglot import exp

from sqlanon.stats import local as stats_local

#: the genetic search's default cap on the fetched set (the search option ``local_rows``): a
#: candidate is an arbitrary recoding, grouped from the whole fetched set (no roll-up between
#: candidates), so its cap stays below the lattice searches' (:data:`sqlanon.stats.local.LOCAL_ROWS`)
LOCAL_ROWS = 250_000

#: bytes of block lists kept (over all blocks, an equal share each, least recently used dropped
#: first: a block list is up to 4,096 codes and losses, 64 KB)
BLOCK_CACHE_BYTES = 16 << 20


def block_list(parts: Sequence[np.ndarray], scales: Sequence[float]) -> np.ndarray:
    """``out[x0 + x1*n0 + x2*n0*n1 + ..] = sum_i parts[i][x_i] * scales[i]`` (the block index's
    mixed radix, first QI fastest).

    >>> block_list([np.array([0, 1]), np.array([0, 0, 1])], [1, 2]).tolist()
    [0, 1, 0, 1, 2, 3]
    """
    out = parts[0] * scales[0]
    for part, scale in zip(parts[1:], scales[1:]):
        out = (part[:, None] * scale + out[None, :]).ravel()
    return out


def count_threshold(ok: exp.Expr) -> int | None:
    """The smallest class size ``K`` a predicate of the form ``cnt >= k1 AND cnt >= k2 ..`` (or
    ``TRUE``) passes (``max(k_i)``, 1 for ``TRUE``), or None for any other predicate.

    >>> from sqlanon.expr.atoms import col, lit
    >>> count_threshold(exp.and_(exp.GTE(this=col("cnt"), expression=lit(3)), exp.GTE(this=col("cnt"), expression=lit(5))))
    5
    >>> count_threshold(exp.Boolean(this=True)), count_threshold(exp.GTE(this=col("cnt"), expression=lit(2.5)))
    (1, 3)
    >>> count_threshold(exp.GTE(this=col("distinct_s"), expression=lit(2))) is None
    True
    """
    if isinstance(ok, exp.Paren):
        return count_threshold(ok.this)
    if isinstance(ok, exp.Boolean):
        return 1 if ok.this else None
    if isinstance(ok, exp.And):
        parts = [count_threshold(ok.this), count_threshold(ok.expression)]
        return None if None in parts else max(p for p in parts if p is not None)
    if isinstance(ok, exp.GTE) and isinstance(ok.this, exp.Column) and ok.this.name == "cnt" and not ok.this.table:
        bound = ok.expression
        if isinstance(bound, exp.Literal) and not bound.is_string:
            try:
                value = float(bound.this)
            except ValueError:
                return None
            return max(1, math.ceil(value)) if math.isfinite(value) else None
    return None


def why_not(gstats) -> str | None:
    """Why ``gstats`` (a :class:`GeneticStats`, prepared) must score by SQL, or None when the
    local path can answer its batches."""
    if not gstats.local:
        return "turned off (GeneticStats.local is False)"
    if gstats.class_targets or gstats.regression_targets:
        return "class or regression targets (CM, cost-matrix CM, regression) are scored by SQL"
    needs = gstats.needs
    if gstats.sensitive or gstats.pop_table or (needs is not None and needs.any):
        return "the privacy model needs more than class sizes (sensitive, population or ranked aggregates)"
    if count_threshold(gstats.ok) is None:
        return "the privacy predicate is not a class-size threshold"
    if not gstats.n or gstats.base_rows < 1:
        return "no quasi-identifier rows"
    if not stats_local.enabled(gstats.stats):
        cap = int(gstats.stats.local_rows or 0)
        return f"the frequency set has {gstats.stats.base.rows:,} rows (local cap {cap:,})" if cap > 0 else "turned off (local_rows=0)"
    return None


class LocalFitness:
    """The fetched frequency set (:func:`sqlanon.stats.local.local_set`: leaf codes and counts)
    and the class-size threshold ``k``; :meth:`evaluate` answers a batch like
    :meth:`GeneticStats.evaluate`, grouping the candidates by the shared kernel
    (:func:`sqlanon.stats.local.threshold_many`, over the engine's threads).

    As the SQL statement does, the kernel reads one code per **block** of QIs (``blocks``, the
    statement's: their leaf codes in mixed radix, computed once) through a per-candidate block
    list (:func:`block_list`): 12 lookups a row instead of 24 on
    w24. Per-column LM figures (the share metrics' and the final scoring's) need a sum per QI: those
    batches are grouped by blocks too, and each class's losses read at its first row's leaf codes."""

    def __init__(self, fetched: stats_local.LocalSet, k: int, blocks: Sequence[Sequence[int]], block_mult: Sequence[int], threads: int = 1) -> None:
        # rows in leaf-code order, not the engine's (a parallel GROUP BY returns them in any
        # order): the kernel sums each candidate's classes in first-row order, so the suppressed
        # rows' float sums, and with them the ranking of near-equal solutions, are the same in
        # every run for a seed
        order = np.lexsort(fetched.codes.T[::-1]) if fetched.rows else np.zeros(0, dtype=np.int64)
        fetched = stats_local.LocalSet(np.ascontiguousarray(fetched.codes[order]), np.ascontiguousarray(fetched.cnt[order]))
        self.fetched = fetched
        self.k = int(k)
        self.threads = threads
        self.blocks = [list(b) for b in blocks]
        codes = fetched.codes.astype(np.int64)
        by_block = np.zeros((fetched.rows, len(self.blocks)), dtype=np.int64)
        for j, block in enumerate(self.blocks):
            for i in block:
                by_block[:, j] += codes[:, i] * int(block_mult[i])
        self._cache: list[dict] = [{} for _ in self.blocks]
        self._cache_bytes = [0] * len(self.blocks)
        self.by_block = stats_local.LocalSet(np.ascontiguousarray(by_block.astype(np.int32)), fetched.cnt)

    @staticmethod
    def ready() -> bool:
        """Whether the compiled kernels are loaded, waiting for the load
        (:func:`sqlanon.stats.local.warm_up`): False only when they cannot load (then SQL)."""
        return stats_local.warm_up(wait=True)

    @classmethod
    def fetch(cls, gstats) -> LocalFitness | None:
        """The frequency set of ``gstats``'s Statistics, fetched once (shared with the lattice
        searches' local path); None when the Statistics' caps (``local_rows``) refuse it."""
        fetched = stats_local.local_set(gstats.stats)
        k = count_threshold(gstats.ok)
        if fetched is None or k is None:
            return None
        return cls(fetched, k, gstats.blocks, gstats.block_mult, stats_local.threads_for(gstats.stats))

    def _block_maps(self, cd: dict, lm: bool) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """One candidate's block lists: released codes in mixed radix over its group counts, and
        (with ``lm``) the block's LM loss of a row. Cached per block by the identity of its QIs'
        per-attribute arrays (held by the entry, so an identity is never reused while cached):
        a child shares most blocks with its parents."""
        maps, losses = [], []
        share = BLOCK_CACHE_BYTES // max(len(self.blocks), 1)
        for j, (block, cache) in enumerate(zip(self.blocks, self._cache)):
            arrays = tuple(cd["codes"][i] for i in block) + (tuple(cd["leaf_loss"][i] for i in block) if lm else ())
            key = tuple(map(id, arrays)) + tuple(int(cd["groups"][i]) for i in block)
            hit = cache.pop(key, None)
            if hit is None:
                strides, m = [], 1
                for i in block:
                    strides.append(m)
                    m *= max(int(cd["groups"][i]), 1)
                loss = block_list([cd["leaf_loss"][i] for i in block], [1.0] * len(block)) if lm else np.zeros(0)
                codes = block_list([cd["codes"][i] for i in block], strides)
                hit = (arrays, codes, loss, codes.nbytes + loss.nbytes)
                self._cache_bytes[j] += hit[3]
                while self._cache_bytes[j] > share and cache:  # the least recently used go first
                    self._cache_bytes[j] -= cache.pop(next(iter(cache)))[3]
            cache[key] = hit  # (re)inserted last: most recently used
            maps.append(hit[1])
            if lm:
                losses.append(hit[2])
        return maps, losses

    def evaluate(self, candidates: Sequence[dict], lm: bool, per_column: bool, names: list[str], lm_within: int | None) -> list[dict]:
        """``names`` are the SQL path's result columns; with ``lm_within`` (the SQL path would
        decode), ``lm_sup`` is None for the candidates suppressing more than it."""
        if per_column:
            # grouped by blocks as below; the per-QI losses read at each class's first row's leaf codes
            losses = [cd["leaf_loss"] for cd in candidates] if lm else None
            maps = [self._block_maps(cd, False)[0] for cd in candidates]
            summary, sums = stats_local.threshold_many(self.by_block, maps, self.k, losses, self.threads, loss_codes=self.fetched)
        else:
            lists = [self._block_maps(cd, lm) for cd in candidates]
            summary, sums = stats_local.threshold_many(self.by_block, [m for m, _ in lists], self.k, [l for _, l in lists] if lm else None, self.threads)
        out = []
        for c, (row, per) in enumerate(zip(summary.tolist(), sums.tolist())):
            classes, smallest, suppressed, bad = row
            values: list = [c, suppressed, classes, bad, smallest]
            if lm and per_column:
                values += per
            elif lm:
                values.append(None if lm_within is not None and suppressed > lm_within else math.fsum(per))
            out.append(dict(zip(names, values)))
        return out
