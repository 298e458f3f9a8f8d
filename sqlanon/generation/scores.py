"""Privacy and quality of a generated (or any released) table against its original.

* **Anonymity Score** (Definition 1): ``AS(p, o) = sum_s 1/s * P(t in p | t in o_s)`` where ``o_s``
  are the transactions of the original with support ``s``; the **NAS** (Definition 2) is
  ``AS(p, o) / AS(o, o)`` (1 = no privacy, 0 = no original transaction is released): the
  original's frequency set matched against the released table's distinct rows, grouped by
  support; :func:`compare_tables` does it on the two integer-coded frequency sets it holds anyway
  (:func:`anonymity_levels`, no scan), :func:`anonymity_query` is the same as one SQL statement.
* **Frequent pattern sets** (Section 5.2): frequent itemsets of both tables at ``min_sup`` (counted
  by SQL, :mod:`sqlanon.generation.itemsets`); % of the original's itemsets also found, average
  support difference on the shared ones and average support of the new ones (both in % of rows).
* **Code-table dissimilarity** (Vreeken, van Leeuwen, Siebes, KDD 2007):
  ``DS = max((L(D2|CT1) - L(D2|CT2)) / L(D2|CT2), (L(D1|CT2) - L(D1|CT1)) / L(D1|CT1))``, each
  ``L(D|CT)`` the data part of the encoding, D covered by CT in CT's own cover order. So that any
  code table can encode any database over the same columns, usages are Laplace corrected (+1 to
  every element, and singletons of items a code table has never seen get usage 0 + 1), in all four
  terms alike, so ``DS(D, D) = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlglot import exp

from sqlanon.errors import ConfigError
from sqlanon.generation import itemsets as its
from sqlanon.generation.krimp import CodeTable, WeightedDatabase, krimp
from sqlanon.search import limits as lim
from sqlanon.engine.source import Source
from sqlanon.expr.atoms import col, table_ref
from sqlanon.expr.atoms import and_all, as_varchar, cte_select, if_, lit, sum_


# ---------------------------------------------------------------------------------------------
# Anonymity Score (Definitions 1 and 2)


def anonymity_query(engine, released: Source, original: Source, columns: list[str], released_columns: list[str] | None = None) -> exp.Select:
    """``(support s, distinct original transactions with support s, how many occur in released)``."""
    rcols = released_columns or columns
    o_src = exp.alias_(engine.source_from(original), "src_o", table=True, quoted=True)
    p_src = exp.alias_(engine.source_from(released), "src_p", table=True, quoted=True)
    o_vals = [exp.alias_(as_varchar(col(c, "src_o")), f"v{i}", quoted=True) for i, c in enumerate(columns)]
    o = exp.select(*o_vals, exp.alias_(exp.Count(this=exp.Star()), "cnt", quoted=True)).from_(o_src)
    o = o.group_by(*[as_varchar(col(c, "src_o")) for c in columns])
    p_vals = [exp.alias_(as_varchar(col(c, "src_p")), f"v{i}", quoted=True) for i, c in enumerate(rcols)]
    p = exp.select(*p_vals, exp.alias_(lit(1), "hit", quoted=True)).from_(p_src)
    p = p.group_by(*[as_varchar(col(c, "src_p")) for c in rcols])
    cond = and_all([exp.NullSafeEQ(this=col(f"v{i}", "o"), expression=col(f"v{i}", "p")) for i in range(len(columns))])
    final = (
        exp.select(
            exp.alias_(col("cnt", "o"), "s", quoted=True),
            exp.alias_(exp.Count(this=exp.Star()), "n", quoted=True),
            exp.alias_(sum_(if_(exp.Is(this=col("hit", "p"), expression=exp.Null()), lit(0), lit(1))), "found", quoted=True),
        )
        .from_(table_ref("o", alias="o"))
        .join(table_ref("p", alias="p"), on=cond, join_type="left")
        .group_by(col("cnt", "o"))
        .order_by(col("cnt", "o"))
    )
    return cte_select([("o", o), ("p", p)], final)


def anonymity_scores(engine, released: Source, original: Source, columns: list[str], released_columns: list[str] | None = None) -> dict:
    """``{"as": AS(p, o), "as_max": AS(o, o), "nas": NAS}``."""
    rows = engine.fetch_all(anonymity_query(engine, released, original, columns, released_columns))
    return anonymity_from_levels([(int(s), int(n), int(f or 0)) for s, n, f in rows])


def anonymity_levels(enc_o: its.Encoded, enc_r: its.Encoded) -> list[tuple[int, int, int]]:
    """:func:`anonymity_query`'s answer from the two frequency sets already encoded (no scan):
    ``(support s, distinct original rows with support s, of them among the released distinct
    rows)``. The original's rows are renumbered into the released table's items
    (:func:`item_map`: the same ``(column, value)``, NULL a value as in the SQL's ``IS NOT
    DISTINCT FROM``); a row with an item the released table never has is not found; the rest are
    matched by one sorted intersection of the rows as byte strings. Linear in the distinct rows
    (after a sort), whatever the rows."""
    to_r = item_map(enc_o, enc_r)
    rows_o = to_r[np.asarray(enc_o.db.rows, dtype=np.int64)] if len(enc_o.db.rows) else np.zeros((0, len(enc_o.columns)), dtype=np.int64)
    known = (rows_o >= 0).all(axis=1)
    found = np.zeros(len(rows_o), dtype=bool)
    sel = np.nonzero(known)[0]
    if len(sel) and len(enc_r.db.rows):
        _, io, _ = np.intersect1d(_void(rows_o[sel]), _void(np.asarray(enc_r.db.rows, dtype=np.int64)), assume_unique=True, return_indices=True)
        found[sel[io]] = True
    sup = np.asarray(enc_o.db.weights, dtype=np.int64)
    levels, idx = np.unique(sup, return_inverse=True)
    n = np.bincount(idx, minlength=len(levels))
    f = np.bincount(idx, weights=found, minlength=len(levels))
    return [(int(s), int(k), int(h)) for s, k, h in zip(levels.tolist(), n.tolist(), f.tolist())]


def anonymity_from_levels(levels: list[tuple[int, int, int]]) -> dict:
    """AS from ``(support, transactions with that support, of them found in released)``."""
    as_p = sum((1.0 / s) * (f / n) for s, n, f in levels if n)
    as_o = sum(1.0 / s for s, n, f in levels if n)
    return {"as": as_p, "as_max": as_o, "nas": as_p / as_o if as_o else 0.0}


# ---------------------------------------------------------------------------------------------
# frequent pattern sets


def labelled(enc: its.Encoded, sets: its.Itemsets) -> dict[tuple, int]:
    """Itemsets as ``((column, value), ...)`` so two tables' itemsets can be compared."""
    cols = enc.item_column
    labels = enc.item_labels
    return {tuple((int(cols[i]), labels[i]) for i in s): int(n) for s, n in zip(sets.items, sets.support.tolist())}


def pattern_comparison(orig: dict[tuple, int], n_orig: int, rel: dict[tuple, int], n_rel: int) -> dict:
    shared = [k for k in orig if k in rel]
    new = [k for k in rel if k not in orig]
    diffs = [abs(orig[k] / n_orig - rel[k] / n_rel) for k in shared]
    return {
        "original_itemsets": len(orig),
        "released_itemsets": len(rel),
        "pct_equal_itemsets": 100.0 * len(shared) / len(orig) if orig else 100.0,
        "avg_support_diff_pct": 100.0 * float(np.mean(diffs)) if diffs else 0.0,
        "avg_support_new_pct": 100.0 * float(np.mean([rel[k] / n_rel for k in new])) if new else 0.0,
    }


MAX_PATTERN_ITEMSETS = 1_000_000  # per table; beyond it the pattern comparison is reported n/a
MAX_PATTERN_SECONDS = 60.0  # per table, mining its frequent itemsets; beyond it: n/a too


def item_map(enc_from: its.Encoded, enc_to: its.Encoded) -> np.ndarray:
    """For every item of ``enc_from``, the id of the same ``(column, value)`` in ``enc_to``, or -1."""
    return np.asarray([-1 if (j := enc_to.item_id(int(c), v)) is None else j for c, v in zip(enc_from.item_column, enc_from.item_labels)], dtype=np.int64)


def dense_keys(enc: its.Encoded, sets: its.Itemsets, to_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Itemsets as rows of a ``(n, columns)`` matrix (item id per column, -1 where absent),
    optionally renumbered by ``to_ids``; and a mask of the rows whose items all exist there."""
    from sqlanon.generation import kernels

    c = sets.candidates
    ids = np.arange(enc.db.n_items, dtype=np.int64) if to_ids is None else np.asarray(to_ids, dtype=np.int64)
    dtype = np.int16 if len(ids) < 32000 and (int(ids.max()) if len(ids) else 0) < 32000 else np.int32
    keys = np.full((len(c), len(enc.columns)), -1, dtype=dtype)
    ok = np.ones(len(c), dtype=bool)
    kernels.dense_keys(c.items, c.offsets, enc.db.item_column, ids, keys, ok)
    return keys, ok


def _void(keys: np.ndarray) -> np.ndarray:
    keys = np.ascontiguousarray(keys)
    return keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()


def pattern_arrays(keys_o: np.ndarray, sup_o: np.ndarray, n_orig: int, keys_r: np.ndarray, sup_r: np.ndarray, ok_r: np.ndarray, n_rel: int) -> dict:
    """:func:`pattern_comparison` on itemsets as key matrices (same numbering): sorting, no dicts."""
    vo = _void(keys_o)
    sel = np.nonzero(ok_r)[0]
    vr = _void(keys_r[sel])
    _, io, ir = np.intersect1d(vo, vr, assume_unique=True, return_indices=True)
    shared_r = np.zeros(len(keys_r), dtype=bool)
    shared_r[sel[ir]] = True
    diffs = np.abs(sup_o[io] / n_orig - sup_r[sel[ir]] / n_rel)
    new = sup_r[~shared_r] / n_rel
    return {
        "original_itemsets": int(len(keys_o)),
        "released_itemsets": int(len(keys_r)),
        "pct_equal_itemsets": 100.0 * len(io) / len(keys_o) if len(keys_o) else 100.0,
        "avg_support_diff_pct": 100.0 * float(diffs.mean()) if len(diffs) else 0.0,
        "avg_support_new_pct": 100.0 * float(new.mean()) if len(new) else 0.0,
    }


def patterns_of(engine, enc: its.Encoded, min_sup: int, deadline: float | None = None) -> its.Itemsets | None:
    """Every frequent itemset of ``enc`` at ``min_sup`` (all lengths), or None past the caps
    (``MAX_PATTERN_ITEMSETS`` itemsets, ``MAX_PATTERN_SECONDS`` of mining, the ``deadline``)."""
    cap = lim.now() + MAX_PATTERN_SECONDS
    sets = its.mine(engine, enc, min_sup, "all", min_length=1, limit=MAX_PATTERN_ITEMSETS, deadline=cap if deadline is None else min(cap, deadline))
    return None if sets.over_limit or sets.time_limited else sets


# ---------------------------------------------------------------------------------------------
# code-table dissimilarity (KDD 2007)


@dataclass
class LabelledCodeTable:
    """A code table in label space, in cover order, with usages."""

    itemsets: list[tuple]  # ((column, value), ...)
    usage: np.ndarray

    @classmethod
    def of(cls, ct: CodeTable, enc: its.Encoded) -> LabelledCodeTable:
        cols = enc.item_column
        labels = enc.item_labels
        sets = [tuple((int(cols[i]), labels[i]) for i in s) for s in ct.itemsets]
        return cls(sets, np.asarray(ct.usage, dtype=np.float64))


def cover_usage(db: WeightedDatabase, table: list[tuple[int, ...] | None]) -> np.ndarray:
    """Usage of each element of ``table`` (item-id tuples in cover order; None = never usable),
    covering each distinct row of ``db`` in one compiled pass (:func:`kernels.cover_usages`)."""
    from sqlanon.generation import kernels

    lengths = np.array([0 if items is None else len(items) for items in table], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    items = np.array([i for s in table if s is not None for i in s], dtype=np.int64)
    usable = np.array([s is not None for s in table], dtype=np.bool_)
    usage = np.zeros(len(table), dtype=np.float64)
    short = kernels.cover_usages(db.rows, db.weights.astype(np.float64), np.asarray(db.item_column, dtype=np.int64), items, offsets, usable, usage)
    if short:
        raise ConfigError("the code table cannot cover the database (a singleton is missing)")
    return usage


def encoded_length(enc: its.Encoded, ct: LabelledCodeTable) -> float:
    """``L(D|CT)``: D covered by CT (cover order as given), Laplace-corrected code lengths of CT."""
    lookup = {(int(c), v): i for i, (c, v) in enumerate(zip(enc.item_column, enc.item_labels))}
    known = {x for s in ct.itemsets for x in s}
    sets = list(ct.itemsets)
    usage = list(ct.usage)
    # items of D the code table has never seen: singletons with usage 0 (+1), last in cover order
    for c, v in zip(enc.item_column.tolist(), enc.item_labels):
        if (c, v) not in known:
            sets.append(((c, v),))
            usage.append(0.0)
    table: list[tuple[int, ...] | None] = []
    for s in sets:
        ids = tuple(lookup[x] for x in s if x in lookup)
        table.append(ids if len(ids) == len(s) else None)
    # cover order stays: longer first (singletons last), as in the code table
    used = cover_usage(enc.db, table)
    corrected = np.asarray(usage, dtype=np.float64) + 1.0
    lengths = -np.log2(corrected / corrected.sum())
    return float((used * lengths).sum())


def dissimilarity(enc1: its.Encoded, ct1: LabelledCodeTable, enc2: its.Encoded, ct2: LabelledCodeTable) -> float:
    l11 = encoded_length(enc1, ct1)
    l22 = encoded_length(enc2, ct2)
    l21 = encoded_length(enc2, ct1)
    l12 = encoded_length(enc1, ct2)
    return max((l21 - l22) / l22, (l12 - l11) / l11)


# ---------------------------------------------------------------------------------------------
# everything at once (the ``check --against ORIGINAL`` entry point)


def _patterns(engine, enc_o: its.Encoded, enc_r: its.Encoded, min_sup: int, pats_o: its.Itemsets | None, say, deadline: float | None = None) -> dict:
    """The frequent-pattern comparison (its arrays are freed before KRIMP runs on the output)."""
    if pats_o is None:
        pats_o = patterns_of(engine, enc_o, min_sup, deadline)
    pats_r = patterns_of(engine, enc_r, min_sup, deadline) if pats_o is not None else None
    if pats_o is None or pats_r is None:
        if say is not None:
            say(f"frequent-pattern comparison skipped: more than {MAX_PATTERN_ITEMSETS:,} frequent itemsets at min_sup {min_sup} "
                f"(or more than {MAX_PATTERN_SECONDS:.0f} s to list them, or the time limit)")
        return {"original_itemsets": None, "released_itemsets": None, "pct_equal_itemsets": None, "avg_support_diff_pct": None, "avg_support_new_pct": None}
    keys_o, _ = dense_keys(enc_o, pats_o)
    keys_r, ok_r = dense_keys(enc_r, pats_r, item_map(enc_r, enc_o))
    return pattern_arrays(keys_o, pats_o.support, enc_o.n_rows, keys_r, pats_r.support, ok_r, enc_r.n_rows)


def _dissimilarity_into(out: dict, engine, enc_o: its.Encoded, ct_o: CodeTable, enc_r: its.Encoded, min_sup: int, candidates: str, deadline: float | None) -> None:
    """The released table's code table (mining and KRIMP until ``deadline``) and the dissimilarity;
    a KRIMP run the deadline cut short leaves the dissimilarity None (its four covers, linear in
    both tables' distinct rows, are not started past the deadline)."""
    cands_r = its.mine(engine, enc_r, min_sup, candidates, deadline=deadline)
    ct_r = krimp(enc_r.db, cands_r.candidates.select(np.zeros(0, dtype=np.int64)) if cands_r.time_limited else cands_r, deadline=deadline)
    del cands_r
    out["released_code_table_size"] = ct_r.non_singletons
    if ct_r.time_limited or _past(deadline):
        out["dissimilarity_time_limited"] = out["scores_time_limited"] = True
        out["dissimilarity"] = None
        return
    out["dissimilarity"] = dissimilarity(enc_o, LabelledCodeTable.of(ct_o, enc_o), enc_r, LabelledCodeTable.of(ct_r, enc_r))


def _past(deadline: float | None) -> bool:
    return deadline is not None and lim.now() >= deadline


def dissimilarity_skip(deadline: float | None, krimp_seconds: float | None, enc_o: its.Encoded, enc_r: its.Encoded) -> str | None:
    """Why the dissimilarity is not started under ``deadline`` (None: start it). It needs KRIMP
    on the released table, mining and cover of the same kind of data as the input's own run: that
    run's ``krimp_seconds``, scaled by the released table's distinct rows against the input's,
    is the estimate. A run that would not end by the deadline would only be cut short and thrown
    away, so it is not begun; without an estimate it is begun and cut at the deadline."""
    if deadline is None:
        return None
    left = deadline - lim.now()
    if left <= 0:
        return "the time limit (the scores' share of it) has passed"
    if krimp_seconds is None:
        return None
    estimate = float(krimp_seconds) * max(1.0, len(enc_r.db.rows) / max(len(enc_o.db.rows), 1))
    if estimate > left:
        return (f"the generated table's mining and KRIMP would take about {estimate:.1f} s (the input's took {krimp_seconds:.1f} s), "
                f"{left:.1f} s are left of the scores' share of the time limit")
    return None


def compare_tables(
    engine,
    released_source: Source,
    original_source: Source,
    columns: list[str],
    min_sup: int,
    candidates: str = "all",
    dissimilarity_measure: bool = True,
    original: tuple[its.Encoded, CodeTable] | None = None,
    original_patterns: its.Itemsets | None = None,
    say=None,
    time_limit: float | None = None,
    progress=None,
    deadline: float | None = None,
    released: its.Encoded | None = None,
    krimp_seconds: float | None = None,
) -> dict:
    """NAS, frequent-pattern comparison and code-table dissimilarity of ``released`` vs ``original``.

    ``original`` may pass an already built ``(Encoded, CodeTable)`` of the original (the
    generator has one) so KRIMP does not run on it twice; ``original_patterns`` its frequent
    itemsets (:func:`patterns_of`). Itemsets of both tables are compared as integer matrices
    (sorted, intersected), never as Python objects. Past ``MAX_PATTERN_ITEMSETS`` frequent itemsets
    in either table the comparison is skipped (``pct_equal_itemsets`` is None, as the paper's
    n/a for mushroom) and ``say`` is told why. ``time_limit`` (seconds from the call) bounds the
    pattern comparison and the KRIMP run on the released table (mining and KRIMP, as in
    ``generate``); if it strikes, the dissimilarity is None (``dissimilarity_time_limited``), and ``scores_time_limited`` is true when the pattern
    comparison or the dissimilarity was cut short by it (the NAS, from the two frequency sets, is always
    computed on all rows). ``released`` may pass the released table already encoded (the
    generator's rows: :func:`its.encode_codes`); it is dropped here. ``krimp_seconds``: what mining
    and KRIMP took on the original (the generator knows), from which :func:`dissimilarity_skip`
    decides under ``deadline`` whether the released table's run can end in time (if not, it is not
    started: ``dissimilarity`` None, and ``say`` is told why). ``progress(done, total, note)`` is called as each of the steps (NAS,
    frequent patterns, dissimilarity) ends.
    """
    if min_sup < 1:
        raise ConfigError(f"--min-sup must be at least 1, got {min_sup}")
    if deadline is None and time_limit is not None:  # ``deadline``: a :func:`lim.now` reading, the scores' share of a run's limit
        deadline = lim.now() + float(time_limit)
    step = progress or (lambda done, total, note: None)
    steps = 3 if dissimilarity_measure else 2
    out: dict = {"scores_time_limited": False}
    enc_o = original[0] if original else its.encode(engine, original_source, columns)
    enc_r = released if released is not None else its.encode(engine, released_source, columns)
    out.update(anonymity_from_levels(anonymity_levels(enc_o, enc_r)))  # no scan: the two frequency sets
    step(1, steps, "NAS")
    out.update(_patterns(engine, enc_o, enc_r, min_sup, original_patterns, say, deadline))
    if out["pct_equal_itemsets"] is None and deadline is not None and lim.now() >= deadline:
        out["scores_time_limited"] = True
    step(2, steps, "frequent patterns")
    if dissimilarity_measure:
        if original:
            ct_o = original[1]
        else:
            ct_o = krimp(enc_o.db, its.mine(engine, enc_o, min_sup, candidates))
        skip = dissimilarity_skip(deadline, krimp_seconds, enc_o, enc_r)
        if skip is not None:  # no time left, or not enough for the released table's KRIMP run: not started
            out.update({"dissimilarity": None, "released_code_table_size": None, "dissimilarity_time_limited": True, "scores_time_limited": True})
            if say is not None:
                say(f"dissimilarity skipped: {skip}")
        else:
            _dissimilarity_into(out, engine, enc_o, ct_o, enc_r, min_sup, candidates, deadline)
        step(3, steps, "dissimilarity")
    its.drop(engine, enc_r)
    if not original:
        its.drop(engine, enc_o)
    return out
