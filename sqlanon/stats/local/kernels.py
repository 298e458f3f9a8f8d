"""Compiled inner loops of :mod:`sqlanon.stats.local` (numba, ``nopython``): grouping a small
fetched frequency set (integer codes and counts, never source rows) into classes, exactly.

A class key is one or more packed words (mixed radix: a QI's code times its multiplier, summed
per word, each word's product of widths below 2**62, :func:`sqlanon.stats.batch.words`), so two
rows share a class exactly when all their words are equal. Rows are grouped with an
open-addressing hash table over the words: the hash only picks the slot, every hit is confirmed
by comparing all words (a collision costs a probe, never a wrong class).

Loaded by :mod:`sqlanon.stats.local` on first use only (importing numba is slow: the CLI's
start stays free of it; docs/measurements.md).

Parallel over nodes by threads (:func:`sqlanon.stats.local.spread`: the kernels release the GIL
and each writes its own rows of the outputs), not numba's ``prange``: its OpenMP layer spins
while it waits, and on a loaded 2-core machine a batch took far longer than on one thread
(docs/measurements.md; ``OMP_WAIT_POLICY=PASSIVE`` fixed it, but it is read once per process,
before anything asks).
"""

from __future__ import annotations

import numpy as np

from sqlanon.jit import njit  # numba's, with the settings the kernels need

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_SEED = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _mix(h, word):
    """One key word folded into the hash ``h`` (splitmix64's finalizer)."""
    x = np.uint64(word) ^ h
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def _hash(keys, r, n_words):
    """splitmix64 over row ``r``'s key words."""
    h = _SEED
    for w in range(n_words):
        h = _mix(h, keys[r, w])
    return h


@njit(cache=True, inline="always")
def _same(keys, a, b, n_words):
    for w in range(n_words):
        if keys[a, w] != keys[b, w]:
            return False
    return True


@njit(cache=True)
def table_size(rows):
    """The slots of a hash table grouping ``rows`` rows (:func:`count_classes`): a power of two
    at least twice the rows (at least 16), so it is at most half full."""
    cap = 16
    while cap < 2 * rows:
        cap *= 2
    return cap


@njit(cache=True, inline="always")
def _add_row(keys, cnt, r, h, mask, table, cls_cnt, rep, n, n_words, limit):
    """Row ``r`` (its key's hash ``h``) counted into its class: the slot its hash picks, or the
    next ones (open addressing), holds its class when that class's first row has the same key
    words, else an empty slot opens class ``n``. Returns the class and the number of classes;
    class -1 when opening one would make ``limit`` classes (-1: no limit)."""
    slot = h & mask
    while True:
        c = table[slot]
        if c < 0:
            if n == limit:
                return -1, n
            table[slot] = n
            rep[n] = r
            cls_cnt[n] = cnt[r]
            return n, n + 1
        if _same(keys, rep[c], r, n_words):
            cls_cnt[c] += cnt[r]
            return c, n
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def group_keys(keys, cnt):
    """Group rows by their key words (``keys``: rows x words, int64), in row order: per row its
    class (int32), per class its summed ``cnt`` and its first row; and the number of classes
    (the arrays are as long as the rows, the first ``n`` entries used)."""
    m = keys.shape[0]
    row_class = np.empty(m, dtype=np.int32)
    cls_cnt = np.empty(max(m, 1), dtype=np.int64)
    rep = np.empty(max(m, 1), dtype=np.int32)
    n = count_classes(keys, cnt, np.empty(table_size(m), dtype=np.int32), cls_cnt, rep, row_class)
    return row_class, cls_cnt, rep, n


@njit(cache=True, nogil=True)
def packed_keys(codes, maps_flat, maps_off, mults, word_of, n_words):
    """Every row's key words under per-QI maps: QI ``i``'s released code is
    ``maps_flat[maps_off[i] + codes[r, i]]``, times ``mults[i]``, added to word ``word_of[i]``."""
    keys = np.empty((codes.shape[0], n_words), dtype=np.int64)
    packed_keys_into(codes, maps_flat, maps_off, mults, word_of, keys)
    return keys


@njit(cache=True, nogil=True)
def packed_keys_into(codes, maps_flat, maps_off, mults, word_of, keys):
    """:func:`packed_keys` into ``keys`` (as many rows as ``codes``): threads take row slices
    (:func:`sqlanon.stats.local.leaf_keys`)."""
    m, q = codes.shape
    n_words = keys.shape[1]
    in_order = True  # the QIs of word 0, then of word 1, ... (as :func:`sqlanon.stats.local.sets.pack` lays them)
    for i in range(1, q):
        if word_of[i] < word_of[i - 1]:
            in_order = False
    if in_order:
        # each word summed in a register and stored once: adding into ``keys[r, w]`` QI after QI
        # chains every add through memory (a store-to-load round trip each): about 15 % of the
        # packing on a 24-QI set (bench/wide_rates.py)
        for r in range(m):
            i = 0
            for w in range(n_words):
                acc = np.int64(0)
                while i < q and word_of[i] == w:
                    acc += mults[i] * maps_flat[maps_off[i] + codes[r, i]]
                    i += 1
                keys[r, w] = acc
        return
    for r in range(m):
        for w in range(n_words):
            keys[r, w] = 0
        for i in range(q):
            keys[r, word_of[i]] += mults[i] * maps_flat[maps_off[i] + codes[r, i]]


@njit(cache=True, nogil=True)
def group_by_maps(codes, cnt, maps_flat, maps_off, mults, word_of, n_words):
    """:func:`group_keys` of :func:`packed_keys`."""
    return group_keys(packed_keys(codes, maps_flat, maps_off, mults, word_of, n_words), cnt)


@njit(cache=True, nogil=True)
def group_many(codes, cnt, maps_flat, maps_off, mults, word_of, n_words, start, stop, row_class, cls_cnt, rep, n):
    """:func:`group_by_maps` for candidates ``start..stop`` (``maps_off``, ``mults``, ``word_of``:
    one row per candidate, ``n_words`` one each) into their rows of ``row_class`` (candidates x
    rows), ``cls_cnt``, ``rep`` (padded) and ``n``. Releases the GIL: threads take slices.

    Called with named bundles unpacked at this boundary (numba takes arrays):
    ``codes, cnt, *CandidateMaps, start, stop, *Grouped`` (:mod:`sqlanon.stats.local.sets`)."""
    for j in range(start, stop):
        keys = packed_keys(codes, maps_flat, maps_off[j], mults[j], word_of[j], n_words[j])
        rc, cc, rp, nn = group_keys(keys, cnt)
        row_class[j] = rc
        cls_cnt[j] = cc
        rep[j] = rp
        n[j] = nn


@njit(cache=True, inline="always")
def _holds(conds, ci, c):
    if ci < 0:
        return True
    inside = conds[ci, 0] <= c and c <= conds[ci, 1]
    return inside != (conds[ci, 2] != 0)


@njit(cache=True, nogil=True)
def move_keys_into(codes, base_keys, ref, node, kp_flat, kp_off, word_of, keys):
    """The key words of a set's rows (leaf codes ``codes``, key words ``base_keys`` at the
    levels ``ref``) at the levels ``node``, into ``keys`` (a buffer of the set's shape, reused
    node after node): per QI where they differ, its part at each level (``kp_flat`` at
    ``kp_off[i, level]``, over leaf codes) added to its word; one plain pass over the rows,
    every moved QI of a row at once (a second, specialised pass for one moved QI compiled
    slower on a fresh install: docs/measurements.md)."""
    m, q = codes.shape
    moved = np.empty(q, dtype=np.int64)
    delta = np.empty(q, dtype=np.int64)
    word = np.empty(q, dtype=np.int64)
    n = 0
    for i in range(q):
        if node[i] != ref[i]:
            moved[n] = i
            delta[n] = kp_off[i, node[i]] - kp_off[i, ref[i]]
            word[n] = kp_off[i, ref[i]]
            n += 1
    n_words = keys.shape[1]
    for r in range(m):
        for w in range(n_words):
            keys[r, w] = base_keys[r, w]
        for t in range(n):
            i = moved[t]
            b = word[t] + codes[r, i]
            keys[r, word_of[i]] += kp_flat[b + delta[t]] - kp_flat[b]


@njit(cache=True, nogil=True)
def count_classes(keys, cnt, table, cls_cnt, rep, row_class):
    """Group rows by their key words into buffers (a ``table`` of a power of two at least twice
    the rows, ``cls_cnt`` and ``rep`` as long as the rows; ``row_class`` too, or empty when the
    rows' classes are not wanted): the classes' counts and first rows, in first-row order;
    returns their number. A node's kernel reuses the buffers node after node: fresh arrays each
    node cost page faults (docs/measurements.md)."""
    m = keys.shape[0]
    n_words = keys.shape[1]
    per_row = row_class.shape[0] > 0
    mask = np.uint64(table.shape[0] - 1)
    table[:] = -1
    n = 0
    for r in range(m):
        c, n = _add_row(keys, cnt, r, _hash(keys, r, n_words), mask, table, cls_cnt, rep, n, n_words, -1)
        if per_row:
            row_class[r] = c
    return n


@njit(cache=True, nogil=True)
def hash_rows(keys, start, stop, hashes):
    """Rows ``start:stop``'s key hashes (:func:`_hash`) into ``hashes`` (uint64), for
    :func:`group_part` (threads take row slices)."""
    n_words = keys.shape[1]
    for r in range(start, stop):
        hashes[r] = _hash(keys, r, n_words)


@njit(cache=True, nogil=True)
def group_part(keys, cnt, hashes, part, parts, table, cls_cnt, rep):
    """:func:`count_classes` of only the rows whose key hashes (``hashes``, :func:`hash_rows`) to
    ``part`` of ``parts`` (the hash's top byte: the slot takes its low bits), so threads group
    one set in parts with no merge (a class's rows are all in one part). Returns the part's
    classes (first rows ``rep``, counts ``cls_cnt``, in first-row order), or -1 when they would
    fill ``table`` past three quarters or the buffers (the caller then groups the set whole).

    The hashes come computed once for all the parts: every part's thread hashing every row
    cost as much as a part's own grouping on a sorted set (docs/measurements.md)."""
    m = keys.shape[0]
    n_words = keys.shape[1]
    mask = np.uint64(table.shape[0] - 1)
    limit = min(rep.shape[0], table.shape[0] // 2 + table.shape[0] // 4)
    table[:] = -1
    n = 0
    for r in range(m):
        h = hashes[r]
        if (h >> np.uint64(56)) % np.uint64(parts) != np.uint64(part):
            continue
        c, n = _add_row(keys, cnt, r, h, mask, table, cls_cnt, rep, n, n_words, limit)
        if c < 0:
            return -1
    return n


@njit(cache=True, nogil=True)
def first_row_order(m, reps, cnts, rep, cls_cnt):
    """The classes of a set of ``m`` rows grouped in parts (their first rows ``reps``, counts
    ``cnts``, concatenated) into ``rep``/``cls_cnt`` in first-row order, as one
    :func:`count_classes` gives them: a scatter by first row and one pass over the rows."""
    at = np.zeros(m, dtype=np.int32)
    first_rows_marked(reps, 0, reps.shape[0], at)
    return first_rows_placed(at, cnts, 0, m, 0, rep, cls_cnt)


@njit(cache=True, nogil=True)
def first_rows_marked(reps, start, stop, at):
    """Classes ``start:stop`` of a set grouped in parts (first rows ``reps``) marked at their first
    row (``at[row] = class + 1``; ``at`` zeros elsewhere): :func:`first_row_order` in row
    slices on threads (:func:`sqlanon.stats.local.in_first_row_order`)."""
    for j in range(start, stop):
        at[reps[j]] = j + 1


@njit(cache=True, nogil=True)
def first_rows_counted(at, start, stop):
    """The marked rows (classes' first rows, :func:`first_rows_marked`) among rows ``start:stop``."""
    n = 0
    for r in range(start, stop):
        if at[r] > 0:
            n += 1
    return n


@njit(cache=True, nogil=True)
def first_rows_placed(at, cnts, start, stop, n, rep, cls_cnt):
    """The classes marked among rows ``start:stop`` into ``rep``/``cls_cnt`` from place ``n`` on
    (the classes of the rows before: :func:`first_rows_counted`), in row order; returns the
    place after the last."""
    for r in range(start, stop):
        j = at[r]
        if j > 0:
            rep[n] = r
            cls_cnt[n] = cnts[j - 1]
            n += 1
    return n


@njit(cache=True, nogil=True)
def gather_rows(codes, keys, rep, start, stop, out_codes, out_keys):
    """Rows ``rep[start:stop]`` of ``codes`` and ``keys`` into rows ``start:stop`` of the outputs
    (a roll-up's classes' first rows)."""
    for c in range(start, stop):
        r = rep[c]
        for i in range(codes.shape[1]):
            out_codes[c, i] = codes[r, i]
        for w in range(keys.shape[1]):
            out_keys[c, w] = keys[r, w]


@njit(cache=True, nogil=True)
def radix_sort(key, payload, bits):
    """``key`` (non-negative, below ``2**bits``) sorted ascending with ``payload`` alongside, ties
    in row order: a least-significant-digit radix sort, 16 bits a pass (two passes for 32 bits;
    faster than 11 bits a pass: docs/measurements.md), each pass :func:`radix_counts` then
    :func:`radix_scatter` over all the rows (on threads, the same passes over row slices:
    :func:`sqlanon.stats.local.radix_sorted`)."""
    m = key.shape[0]
    k, p = key.copy(), payload.copy()
    k2, p2 = np.empty(m, dtype=np.int64), np.empty(m, dtype=payload.dtype)
    counts = np.empty(65536, dtype=np.int64)
    at = np.empty(65536, dtype=np.int64)
    shift = 0
    while shift < bits:
        radix_counts(k, 0, m, shift, counts)
        total = 0
        for d in range(65536):
            at[d] = total
            total += counts[d]
        radix_scatter(k, p, 0, m, shift, at, k2, p2)
        k, k2 = k2, k
        p, p2 = p2, p
        shift += 16
    return k, p


@njit(cache=True, nogil=True)
def radix_counts(key, start, stop, shift, counts):
    """The 16-bit digits at bit ``shift`` of ``key[start:stop]`` counted into ``counts`` (65536):
    one row slice's part of a pass of :func:`radix_sort` on threads
    (:func:`sqlanon.stats.local.radix_sorted`)."""
    counts[:] = 0
    for j in range(start, stop):
        counts[(key[j] >> shift) & 0xFFFF] += 1


@njit(cache=True, nogil=True)
def radix_scatter(key, payload, start, stop, shift, at, out_key, out_payload):
    """Rows ``start:stop`` of a pass of :func:`radix_sort` placed: each at its digit's next place
    in ``at`` (65536: where this slice's rows of each digit start), so slices in row order give
    the one-thread sort's order."""
    for j in range(start, stop):
        d = (key[j] >> shift) & 0xFFFF
        t = at[d]
        at[d] = t + 1
        out_key[t] = key[j]
        out_payload[t] = payload[j]


@njit(cache=True, nogil=True)
def decode_keys(key, start, stop, order, shifts, used, out_codes):
    """Rows ``start:stop`` of ``out_codes`` (rows x QIs) read back from the packed sort keys: QI
    ``order[t]``'s code at bit ``shifts[t]``, ``used[t]`` bits wide."""
    for j in range(start, stop):
        x = key[j]
        for t in range(order.shape[0]):
            out_codes[j, order[t]] = (x >> shifts[t]) & ((np.int64(1) << used[t]) - 1)


@njit(cache=True, nogil=True)
def clustered_rows(codes, cnt, order):
    """The rows (``codes``, ``cnt``) sorted by their codes, the QIs ``order`` the most significant
    first (as many as fit a 63-bit key; the rest do not order). When every QI fits, the counts
    ride the sort and the codes are read back from the sorted keys (no random gather of rows:
    docs/measurements.md); else the rows are gathered by the sorted row numbers."""
    m, q = codes.shape
    hi = np.zeros(q, dtype=np.int64)
    for r in range(m):
        for i in range(q):
            if codes[r, i] > hi[i]:
                hi[i] = codes[r, i]
    used = np.zeros(order.shape[0], dtype=np.int64)  # per QI in order, the bits of its codes
    for t in range(order.shape[0]):
        while (1 << used[t]) <= hi[order[t]]:
            used[t] += 1
    bits = 0
    kept = 0
    while kept < order.shape[0] and bits + used[kept] <= 63:
        bits += used[kept]
        kept += 1
    shifts = np.zeros(kept, dtype=np.int64)
    left = bits
    for t in range(kept):
        left -= used[t]
        shifts[t] = left
    key = np.zeros(m, dtype=np.int64)
    for r in range(m):
        x = np.int64(0)
        for t in range(kept):
            x |= np.int64(codes[r, order[t]]) << shifts[t]
        key[r] = x
    out_codes = np.empty_like(codes)
    if kept == q:
        key, out_cnt = radix_sort(key, cnt, bits)
        decode_keys(key, 0, m, order, shifts, used, out_codes)
        return out_codes, out_cnt
    key, perm = radix_sort(key, np.arange(m), bits)
    out_cnt = np.empty_like(cnt)
    for j in range(m):
        r = perm[j]
        for i in range(q):
            out_codes[j, i] = codes[r, i]
        out_cnt[j] = cnt[r]
    return out_codes, out_cnt


@njit(cache=True, nogil=True)
def key_bits(key, start, column, shift, width):
    """Codes ``column`` (one Arrow chunk's values) or'ed into ``key[start:]`` at bit ``shift``; False
    when a code is outside ``0..width - 1`` (the caller then sorts another way)."""
    for j in range(column.shape[0]):
        c = column[j]
        if c < 0 or c >= width:
            return False
        key[start + j] |= np.int64(c) << shift
    return True


@njit(cache=True, nogil=True)
def summarize(cls_cnt, rep, n, codes, node, conds, spec, cond_ptr, part_ptr, part_qi, pv_flat, pv_off, summary, sums):
    """A node's ``n`` classes (their counts ``cls_cnt``, first rows ``rep``) summarized into
    ``summary`` (classes, rows, min, max, suppressed, failing classes: ``conds[0]`` is ``ok``)
    and the sums ``spec`` asks (per sum: a condition on the class count, or -1 for none, and an
    atom: 0 one, 1 cnt, 2 cnt squared, 3 + p the metric's part ``p`` times cnt; sorted by
    condition, condition ``ci``'s sums at ``cond_ptr[ci + 1]..cond_ptr[ci + 2]``). A part is the
    sum over its entries (``part_ptr[p]..part_ptr[p + 1]``: a QI ``part_qi[e]`` and, per level,
    the offset of its values over leaf codes in ``pv_flat``) of the value of the class's code."""
    # per part entry, where its values at the node's level start
    offs = np.empty(part_qi.shape[0], dtype=np.int64)
    for e in range(part_qi.shape[0]):
        offs[e] = pv_off[e, node[part_qi[e]]]
    n_conds = conds.shape[0]
    rows = 0
    lo = cls_cnt[0] if n else 0
    hi = lo
    suppressed = 0
    bad = 0
    for c in range(n):
        k = cls_cnt[c]
        rows += k
        lo = min(lo, k)
        hi = max(hi, k)
        if not _holds(conds, 0, k):
            suppressed += k
            bad += 1
        # the sums, grouped by their condition (``cond_ptr``): each condition tested once
        for ci in range(-1, n_conds):
            start, stop = cond_ptr[ci + 1], cond_ptr[ci + 2]
            if start == stop or not _holds(conds, ci, k):
                continue
            r = rep[c]
            for s in range(start, stop):
                at = spec[s, 1]
                if at == 0:
                    sums[s] += 1.0
                elif at == 1:
                    sums[s] += k
                elif at == 2:
                    sums[s] += float(k) * float(k)
                else:
                    p = at - 3
                    total = 0.0
                    for e in range(part_ptr[p], part_ptr[p + 1]):
                        total += pv_flat[offs[e] + codes[r, part_qi[e]]]
                    sums[s] += k * total
    summary[0] = n
    summary[1] = rows
    summary[2] = lo
    summary[3] = hi
    summary[4] = suppressed
    summary[5] = bad


@njit(cache=True, nogil=True)
def evaluate_nodes_on(codes, cnt, base_keys, ref, nodes, kp_flat, kp_off, word_of, conds, spec, cond_ptr, part_ptr, part_qi, pv_flat, pv_off, start, stop, summary, sums,
                      keys, table, cls_cnt, rep):
    """Nodes ``start..stop`` (rows of ``nodes``) over a set at the reference levels ``ref`` (its
    rows' leaf codes ``codes``, key words ``base_keys``): each node's key words moved to its
    levels, its rows grouped, :func:`summarize` into its rows of ``summary`` (nodes x 6, int64)
    and ``sums`` (nodes x len(spec), float64), on the caller's buffers: ``keys`` shaped as
    ``base_keys``, a ``table`` of :func:`table_size` of the rows, ``cls_cnt`` and ``rep`` at least
    as long as the rows. A thread that keeps its buffers from batch to batch touches no fresh
    memory (fresh buffers fault their pages in at every call: docs/measurements.md). Releases the GIL:
    threads take nodes of a batch; each node's sums are taken in its classes' order (first row
    order), so the answer does not depend on the threads."""
    no_rows = np.empty(0, dtype=np.int32)
    for j in range(start, stop):
        move_keys_into(codes, base_keys, ref, nodes[j], kp_flat, kp_off, word_of, keys)
        n = count_classes(keys, cnt, table, cls_cnt, rep, no_rows)
        summarize(cls_cnt, rep, n, codes, nodes[j], conds, spec, cond_ptr, part_ptr, part_qi, pv_flat, pv_off, summary[j], sums[j])


@njit(cache=True, nogil=True)
def count_classes_t(keys_t, n_words, cnt, table, cls_cnt, rep):
    """:func:`count_classes` (no per-row classes) of key words laid out word-major (``keys_t``:
    at least ``n_words`` words x rows): the same classes, in the same first-row order."""
    m = keys_t.shape[1]
    keys = keys_t.T  # a view: keys[r, w] is keys_t[w, r]
    mask = np.uint64(table.shape[0] - 1)
    table[:] = -1
    n = 0
    for r in range(m):
        slot = _hash(keys, r, n_words) & mask
        while True:
            c = table[slot]
            if c < 0:
                table[slot] = n
                rep[n] = r
                cls_cnt[n] = cnt[r]
                n += 1
                break
            if _same(keys, rep[c], r, n_words):
                cls_cnt[c] += cnt[r]
                break
            slot = (slot + np.uint64(1)) & mask
    return n


@njit(cache=True, nogil=True)
def packed_keys_t(codes_t, maps_flat, maps_off, mults, word_of, keys_t):
    """Every row's key words (:func:`packed_keys_into`) laid out word-major, from the rows' codes
    laid out column-major (``codes_t``: columns x rows), one column at a time: a pass reads one
    column's codes in order and one map (a block list of up to 4,096 codes stays in the first
    cache level), where a row at a time reads every map at random (twice the time on a 24-QI
    set, docs/measurements.md). Integer sums: the words are the row-at-a-time ones exactly."""
    q, m = codes_t.shape
    n_words = keys_t.shape[0]
    for w in range(n_words):
        started = False
        for i in range(q):
            if word_of[i] != w:
                continue
            mult = mults[i]
            off = maps_off[i]
            col = codes_t[i]
            out = keys_t[w]
            if not started:
                for r in range(m):
                    out[r] = mult * maps_flat[off + col[r]]
                started = True
            else:
                for r in range(m):
                    out[r] += mult * maps_flat[off + col[r]]
        if not started:
            keys_t[w, :] = 0


@njit(cache=True, nogil=True)
def threshold_many(codes_t, cnt, maps_flat, maps_off, mults, word_of, n_words, k, loss_flat, loss_off, loss_codes_t, start, stop, summary, sums):
    """Candidates ``start..stop`` of :func:`group_many` summarized under the class-size threshold
    ``k`` instead of returned: per candidate ``summary`` (classes, smallest class, suppressed rows,
    classes under ``k``) and, when ``loss_off`` has a row per candidate, ``sums[j, i]`` = the
    rows of the classes under ``k`` times QI ``i``'s value of their code
    (``loss_flat[loss_off[j, i] + code]``, the code a class's first row has in ``loss_codes_t``:
    the genetic search's LM of the suppressed rows), summed over those classes in first-row
    order. ``loss_codes_t`` are the rows' leaf codes per QI (QIs x rows), ``codes_t`` the rows'
    codes grouped by (columns x rows), which may be fewer columns (blocks of QIs in mixed radix,
    :mod:`sqlanon.search.genetic.local`): a class's rows share their released codes, so its
    first row's leaf codes give its losses. Both column-major: every pass (a column's key
    part, a QI's losses) reads one column and one short list (:func:`packed_keys_t`).

    Called with named bundles unpacked at this boundary (numba takes arrays):
    ``codes_t, cnt, *CandidateMaps, *Threshold, start, stop, *Summaries``
    (:mod:`sqlanon.stats.local.sets`)."""
    m = codes_t.shape[1]
    q = loss_codes_t.shape[0]
    # one set of buffers for the slice, reused candidate after candidate (no per-row classes)
    table = np.empty(table_size(m), dtype=np.int32)
    cls_cnt = np.empty(max(m, 1), dtype=np.int64)
    rep = np.empty(max(m, 1), dtype=np.int32)
    bad_rep = np.empty(max(m, 1), dtype=np.int32)
    bad_size = np.empty(max(m, 1), dtype=np.int64)
    most = 1
    for j in range(start, stop):
        most = max(most, n_words[j])
    keys_t = np.empty((most, m), dtype=np.int64)
    for j in range(start, stop):
        words = keys_t[: n_words[j]]
        packed_keys_t(codes_t, maps_flat, maps_off[j], mults[j], word_of[j], words)
        n = count_classes_t(words, n_words[j], cnt, table, cls_cnt, rep)
        lo = cls_cnt[0] if n else 0
        suppressed = 0
        bad = 0
        for c in range(n):
            size = cls_cnt[c]
            lo = min(lo, size)
            if size < k:
                suppressed += size
                bad_rep[bad] = rep[c]
                bad_size[bad] = size
                bad += 1
        if loss_off.shape[0]:
            # QI after QI, each one's sum over the bad classes in their order (the same
            # additions, in the same order, as class after class)
            for i in range(q):
                values = loss_flat[loss_off[j, i]:]
                at = loss_codes_t[i]
                total = sums[j, i]
                for t in range(bad):
                    total += bad_size[t] * values[at[bad_rep[t]]]
                sums[j, i] = total
        summary[j, 0] = n
        summary[j, 1] = lo
        summary[j, 2] = suppressed
        summary[j, 3] = bad
