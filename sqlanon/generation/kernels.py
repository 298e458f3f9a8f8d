"""Compiled inner loops of ``generate`` (numba, ``nopython``): the itemset miner and KRIMP's cover.

Both run over the *frequency set* that one SQL ``GROUP BY`` returned (the distinct rows as item
ids, one per column, with their counts), never over source rows. Why compiled Python and not SQL:
mining is a depth-first search whose every step depends on the last (tens of thousands of tiny
steps per second), and KRIMP tries every candidate against the current code table (109,304 on
mushroom); at a SQL round trip each either would take hours. Why not numpy alone: both loops
branch per row and per code-table element; vectorizing them costs more in temporaries than the
work itself (docs/measurements.md).

* :func:`mine_branches` -- frequent (``closed=False``) or closed frequent (``closed=True``)
  itemsets by depth-first search over tid lists with occurrence delivery; closed ones by LCM's
  prefix-preserving closure extension (Uno et al. 2004), so only closed itemsets are ever
  visited. An item is ``(column, value)``, so a row holds one item per column and the closure
  of a tid list is the set of columns that are constant on it.
* :func:`krimp_run` -- KRIMP (Vreeken, van Leeuwen, Siebes 2011) as the authors' C++ runs it
  (``coverpartial``: ``CCCPCodeTable`` with post-acceptance pruning): per row and per element
  length a cached uncovered-item bitset, a candidate tried only on the rows that contain its
  rarest item, and the old and new cover of a row advanced together until they agree.
"""

from __future__ import annotations

import numpy as np

from sqlanon.jit import njit  # numba's, with the settings the kernels need

# ---------------------------------------------------------------------------------------------
# mining


@njit(cache=True)
def _grow(a, need):
    """``a`` itself when it holds ``need`` values, else a copy at least twice as long (numba
    compiles one version per dtype)."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True)
def _extensions(rows, wts, tids, nt, pv, core, min_sup, count, touched, out):
    """Frequent one-item extensions of the itemset ``pv`` (column -> item or -1) on its tid list:
    items ``> core`` in free columns with weighted support ``>= min_sup``, ascending in ``out``."""
    m = rows.shape[1]
    nto = 0
    for k in range(nt):
        r = tids[k]
        w = wts[r]
        for c in range(m):
            if pv[c] >= 0:
                continue
            e = rows[r, c]
            if e <= core:
                continue
            if count[e] == 0:
                touched[nto] = e
                nto += 1
            count[e] += w
    n = 0
    for k in range(nto):
        e = touched[k]
        if count[e] >= min_sup:
            out[n] = e
            n += 1
        count[e] = 0
    out[:n].sort()
    return n


def miner_state(n_rows: int, n_columns: int, n_items: int) -> dict:
    """The search stack of :func:`mine_slice`, kept between slices (``d[0] == -2``: not started)."""
    cap = n_columns + 2
    return {
        "tids": np.empty((cap, max(n_rows, 1)), dtype=np.int32),
        "nts": np.zeros(cap, dtype=np.int64),
        "pvs": np.full((cap, n_columns), -1, dtype=np.int32),
        "ext": np.empty((cap, n_items + 1), dtype=np.int32),
        "ext_n": np.zeros(cap, dtype=np.int64),
        "ext_pos": np.zeros(cap, dtype=np.int64),
        "plen": np.zeros(cap, dtype=np.int64),
        "d": np.full(1, -2, dtype=np.int64),
        "count": np.zeros(n_items + 1, dtype=np.int64),
        "touched": np.empty(n_items + 1, dtype=np.int32),
    }


@njit(cache=True)
def _emit(pv, L, s, buf, items, offsets, support, nitems, n):
    k2 = 0
    for c in range(pv.shape[0]):
        if pv[c] >= 0:
            buf[k2] = pv[c]
            k2 += 1
    srt = np.sort(buf[:k2])
    items = _grow(items, nitems + k2)
    items[nitems : nitems + k2] = srt
    offsets = _grow(offsets, n + 2)
    support = _grow(support, n + 1)
    offsets[n + 1] = nitems + k2
    support[n] = s
    return items, offsets, support, nitems + k2, n + 1


@njit(cache=True, inline="always")
def _close(rows, tids, nt, pv, e):
    """Closure of the itemset ``pv`` (column -> item or -1) on its tid list: every free column
    constant on the ``nt`` rows joins it. Returns how many columns joined, or -1 when one of its
    items is below ``e`` (not prefix-preserving: that closed set is reached from a smaller item;
    ``pv`` is then partly filled and dropped)."""
    added = 0
    for c in range(rows.shape[1]):
        if pv[c] >= 0:
            continue
        v = rows[tids[0], c]
        same = True
        for k in range(1, nt):
            if rows[tids[k], c] != v:
                same = False
                break
        if same:
            if v < e:
                return -1
            pv[c] = v
            added += 1
    return added


@njit(cache=True)
def _root(rows, wts, closed, tids, nts, pvs, plen):
    """The search's root: every row of positive weight in ``tids[0]`` (its count in ``nts[0]``),
    with closed itemsets its closure (the columns constant on all rows). Returns the total weight."""
    nt = 0
    total = 0
    for r in range(rows.shape[0]):
        if wts[r] > 0:
            tids[0, nt] = r
            nt += 1
            total += wts[r]
    nts[0] = nt
    plen[0] = 0
    if closed and nt > 0:
        plen[0] += _close(rows, tids[0], nt, pvs[0], -1)
    return total


@njit(cache=True, inline="always")
def _project(rows, wts, tids, nts, d, ce, e):
    """The tid list of the itemset at depth ``d`` plus item ``e`` (of column ``ce``) into
    ``tids[d + 1]``; returns its length and weighted support."""
    nt = 0
    s = 0
    for k in range(nts[d]):
        r = tids[d, k]
        if rows[r, ce] == e:
            tids[d + 1, nt] = r
            nt += 1
            s += wts[r]
    return nt, s


@njit(cache=True, inline="always")
def _wanted(L, min_length, max_length):
    """Is an itemset of ``L`` items within the asked lengths (``max_length <= 0``: no maximum)?"""
    return L >= min_length and (max_length <= 0 or L <= max_length)


@njit(cache=True)
def mine_slice(rows, wts, item_col, min_sup, closed, min_length, max_length,
               tids, nts, pvs, ext, ext_n, ext_pos, plen, dd, count, touched, budget, limit):
    """Go on with the depth-first search for about ``budget`` row visits (or until more than
    ``limit`` itemsets were found in this slice, if ``limit > 0``). Returns the itemsets found
    ``(items, offsets, support, n)``; ``dd[0] == -1`` once the search is over.

    Itemset ``k`` is ``items[offsets[k]:offsets[k+1]]`` (ascending item ids) with ``support[k]``.
    """
    m = rows.shape[1]
    items = np.empty(1024, dtype=np.int32)
    offsets = np.zeros(1025, dtype=np.int64)
    support = np.empty(1024, dtype=np.int64)
    n = 0
    nitems = 0
    buf = np.empty(m, dtype=np.int32)
    work = 0
    d = dd[0]
    if d == -2:
        total = _root(rows, wts, closed, tids, nts, pvs, plen)
        if total < min_sup or nts[0] == 0:
            dd[0] = -1
            return items[:0], offsets[:1], support[:0], 0
        ext_n[0] = _extensions(rows, wts, tids[0], nts[0], pvs[0], -1, min_sup, count, touched, ext[0])
        ext_pos[0] = 0
        if plen[0] > 0 and _wanted(plen[0], min_length, max_length):
            items, offsets, support, nitems, n = _emit(pvs[0], plen[0], total, buf, items, offsets, support, nitems, n)
        d = 0
    while d >= 0:
        if work >= budget or (limit > 0 and n > limit):
            break
        if ext_pos[d] >= ext_n[d]:
            d -= 1
            continue
        e = ext[d, ext_pos[d]]
        ext_pos[d] += 1
        ce = item_col[e]
        nt, s = _project(rows, wts, tids, nts, d, ce, e)
        work += nts[d]
        for c in range(m):
            pvs[d + 1, c] = pvs[d, c]
        pvs[d + 1, ce] = e
        L = plen[d] + 1
        if closed:
            added = _close(rows, tids[d + 1], nt, pvs[d + 1], e)
            if added < 0:
                continue
            L += added
        nts[d + 1] = nt
        plen[d + 1] = L
        if _wanted(L, min_length, max_length):
            items, offsets, support, nitems, n = _emit(pvs[d + 1], L, s, buf, items, offsets, support, nitems, n)
        if max_length > 0 and L >= max_length:
            continue
        ext_n[d + 1] = _extensions(rows, wts, tids[d + 1], nt, pvs[d + 1], e, min_sup, count, touched, ext[d + 1])
        work += nt
        ext_pos[d + 1] = 0
        d += 1
    dd[0] = d
    return items[:nitems], offsets[: n + 1], support[:n], n


# ---------------------------------------------------------------------------------------------
# KRIMP


@njit(cache=True, inline="always")
def _covers(state, el_bits, e, W):
    for k in range(W):
        b = el_bits[e, k]
        if (state[k] & b) != b:
            return False
    return True


@njit(cache=True)
def _block_start(cnt_len, L, m):
    """Index of the first code-table element of length ``L`` (the table is sorted by length desc)."""
    s = 0
    for L2 in range(m, L, -1):
        s += cnt_len[L2]
    return s


@njit(cache=True)
def _bump(e, w, delta, mark, touched, nt):
    if mark[e] == 0:
        mark[e] = 1
        touched[nt] = e
        nt += 1
    delta[e] += w
    return nt


@njit(cache=True)
def _cover_tail(old, new, pos, ct, ct_n, el_bits, W, w, delta, mark, touched, nt):
    """Advance a row's old and new uncovered sets over the code table from ``pos`` on, then the
    singletons; usage changes go to ``delta``. Stops as soon as both agree (the rest is equal)."""
    for q in range(pos, ct_n):
        same = True
        for k in range(W):
            if old[k] != new[k]:
                same = False
                break
        if same:
            return nt
        e = ct[q]
        co = _covers(old, el_bits, e, W)
        cn = _covers(new, el_bits, e, W)
        if co and cn:
            for k in range(W):
                old[k] &= ~el_bits[e, k]
                new[k] &= ~el_bits[e, k]
        elif co:
            for k in range(W):
                old[k] &= ~el_bits[e, k]
            nt = _bump(e, -w, delta, mark, touched, nt)
        elif cn:
            for k in range(W):
                new[k] &= ~el_bits[e, k]
            nt = _bump(e, w, delta, mark, touched, nt)
    for k in range(W):
        gone = old[k] & ~new[k]
        came = new[k] & ~old[k]
        b = 0
        while gone != 0:
            if gone & np.uint64(1):
                nt = _bump(k * 64 + b, -w, delta, mark, touched, nt)
            gone >>= np.uint64(1)
            b += 1
        b = 0
        while came != 0:
            if came & np.uint64(1):
                nt = _bump(k * 64 + b, w, delta, mark, touched, nt)
            came >>= np.uint64(1)
            b += 1
    return nt


@njit(cache=True)
def _size_terms(u, st):
    """Contributions of one element with usage ``u`` to (sum u log u, sum log u, sum stlen, n)."""
    if u <= 0:
        return 0.0, 0.0, 0.0, 0
    lu = np.log2(u)
    return u * lu, lu, st, 1


@njit(cache=True)
def _total(S, A, B, C, n):
    if S <= 0:
        return 0.0
    lS = np.log2(S)
    return S * lS - A + C + n * lS - B


@njit(cache=True)
def _recompute(ct, ct_n, usage, el_st, n_items, agg):
    """The size aggregates over every element: the singletons (items), then the code table's."""
    S = 0.0
    A = 0.0
    B = 0.0
    C = 0.0
    n = 0
    for j in range(n_items + ct_n):
        e = j if j < n_items else ct[j - n_items]
        u = float(usage[e])
        a, b, c, k = _size_terms(u, el_st[e])
        S += u
        A += a
        B += b
        C += c
        n += k
    agg[0] = S
    agg[1] = A
    agg[2] = B
    agg[3] = C
    agg[4] = n
    agg[5] = _total(S, A, B, C, n)


@njit(cache=True)
def _trial_total(agg, usage, el_st, delta, touched, nt, extra, extra_u):
    """Total size if the usage deltas (and ``extra`` element at usage ``extra_u``) were applied."""
    S = agg[0]
    A = agg[1]
    B = agg[2]
    C = agg[3]
    n = agg[4]
    for k in range(nt):
        e = touched[k]
        u0 = float(usage[e])
        u1 = u0 + float(delta[e])
        a0, b0, c0, k0 = _size_terms(u0, el_st[e])
        a1, b1, c1, k1 = _size_terms(u1, el_st[e])
        S += u1 - u0
        A += a1 - a0
        B += b1 - b0
        C += c1 - c0
        n += k1 - k0
    if extra >= 0:
        u1 = float(extra_u)
        a1, b1, c1, k1 = _size_terms(u1, el_st[extra])
        S += u1
        A += a1
        B += b1
        C += c1
        n += k1
    return _total(S, A, B, C, n)


@njit(cache=True)
def _reset(delta, mark, touched, nt):
    for k in range(nt):
        e = touched[k]
        delta[e] = 0
        mark[e] = 0


@njit(cache=True)
def _refresh_rows(cache, ct, cnt_len, el_bits, m, W, use_rows, nuse, top, state):
    """Recompute the cached states of rows ``use_rows`` for every length ``< top``, starting from
    the (already right) state at length ``top``."""
    for j in range(nuse):
        r = use_rows[j]
        for k in range(W):
            state[k] = cache[top, r, k]
        for L in range(top - 1, 1, -1):
            bs = _block_start(cnt_len, L, m)
            for q in range(bs, bs + cnt_len[L]):
                e = ct[q]
                if _covers(state, el_bits, e, W):
                    for k in range(W):
                        state[k] &= ~el_bits[e, k]
            for k in range(W):
                cache[L, r, k] = state[k]


@njit(cache=True)
def _find(ct, cnt_len, m, e, L):
    bs = _block_start(cnt_len, L, m)
    for q in range(bs, bs + cnt_len[L]):
        if ct[q] == e:
            return q
    return -1


@njit(cache=True)
def _remove_at(ct, ct_n, q):
    for k in range(q, ct_n - 1):
        ct[k] = ct[k + 1]


@njit(cache=True)
def _try_delete(d, row_bits, wts, occ_ptr, occ, el_bits, el_len, el_rare, el_st, usage, ct, meta, cnt_len, cache,
                agg, delta, mark, touched, use_rows, m, W, old, new):
    """Usage deltas and the total size of the code table without ``d``. Returns ``(total, nt, nuse, q)``."""
    L = el_len[d]
    q = _find(ct, cnt_len, m, d, L)
    bs = _block_start(cnt_len, L, m)
    ct_n = meta[0]
    nt = 0
    nuse = 0
    rare = el_rare[d]
    for j in range(occ_ptr[rare], occ_ptr[rare + 1]):
        r = occ[j]
        if not _covers(row_bits[r], el_bits, d, W):
            continue
        for k in range(W):
            new[k] = cache[L + 1, r, k]
        for q2 in range(bs, q):
            e = ct[q2]
            if _covers(new, el_bits, e, W):
                for k in range(W):
                    new[k] &= ~el_bits[e, k]
        if not _covers(new, el_bits, d, W):
            continue
        use_rows[nuse] = r
        nuse += 1
        for k in range(W):
            old[k] = new[k] & ~el_bits[d, k]
        nt = _cover_tail(old, new, q + 1, ct, ct_n, el_bits, W, wts[r], delta, mark, touched, nt)
    nt = _bump(d, -usage[d], delta, mark, touched, nt)
    return _trial_total(agg, usage, el_st, delta, touched, nt, -1, 0), nt, nuse, q


@njit(cache=True)
def _sort_after(plist, start, pn, usage):
    """The authors' ``SortPostPruneList``: one bubble pass per start position, stopping at the
    first pass without a swap (their exact loop, so ties and its partial sorts are theirs)."""
    if start >= pn - 1:
        return
    last = pn - 1
    a = start
    while a != last:
        changed = False
        b = a
        while b != last:
            c = b + 1
            if usage[plist[b]] > usage[plist[c]]:
                changed = True
                t = plist[b]
                plist[b] = plist[c]
                plist[c] = t
            b = c
        if not changed:
            break
        a += 1


@njit(cache=True)
def _prune_insert(plist, pn, after, e, usage):
    """Insert ``e`` after position ``after`` before the first element with a higher usage, unless
    it is already there. Returns the new length."""
    if pn >= plist.shape[0]:
        return pn
    for j in range(after + 1, pn):
        if plist[j] == e:
            return pn
    j = after + 1
    while j < pn and usage[plist[j]] <= usage[e]:
        j += 1
    for k in range(pn, j, -1):
        plist[k] = plist[k - 1]
    plist[j] = e
    return pn + 1


@njit(cache=True)
def _apply_delta(usage, delta, touched, nt):
    """Add the trial's usage changes of the ``nt`` touched elements."""
    for k in range(nt):
        e = touched[k]
        usage[e] += delta[e]


@njit(cache=True)
def _fallen(ct, start, stop, mark, delta, plist):
    """The elements of ``ct[start:stop]`` whose usage fell in the trial, in code-table order,
    into ``plist``; returns how many."""
    pn = 0
    for q in range(start, stop):
        e = ct[q]
        if mark[e] == 1 and delta[e] < 0:
            plist[pn] = e
            pn += 1
    return pn


@njit(cache=True)
def krimp_run(k0, k1, n_items, row_bits, wts, occ_ptr, occ, el_bits, el_len, el_rare, el_st, usage, ct, meta,
              cnt_len, cache, agg, delta, mark, touched, use_rows, plist, m, eps):
    """Try candidates (element ids ``n_items + k`` for ``k`` in ``k0..k1-1``, in candidate order)."""
    W = row_bits.shape[1]
    old = np.empty(W, dtype=np.uint64)
    new = np.empty(W, dtype=np.uint64)
    state = np.empty(W, dtype=np.uint64)
    for kk in range(k0, k1):
        x = n_items + kk
        L = el_len[x]
        pos = _block_start(cnt_len, L, m) + cnt_len[L]  # the end of its length block
        ct_n = meta[0]
        nt = 0
        nuse = 0
        ux = 0
        rare = el_rare[x]
        for j in range(occ_ptr[rare], occ_ptr[rare + 1]):
            r = occ[j]
            if not _covers(cache[L, r], el_bits, x, W):
                continue
            w = wts[r]
            ux += w
            use_rows[nuse] = r
            nuse += 1
            for k in range(W):
                old[k] = cache[L, r, k]
                new[k] = old[k] & ~el_bits[x, k]
            nt = _cover_tail(old, new, pos, ct, ct_n, el_bits, W, w, delta, mark, touched, nt)
        if ux == 0:
            continue
        tot = _trial_total(agg, usage, el_st, delta, touched, nt, x, ux)
        if not tot < agg[5] - eps:
            _reset(delta, mark, touched, nt)
            continue
        # accept: usages, the table, the cached states of the rows that use x
        _apply_delta(usage, delta, touched, nt)
        usage[x] = ux
        for k in range(ct_n, pos, -1):
            ct[k] = ct[k - 1]
        ct[pos] = x
        meta[0] = ct_n + 1
        ct_n += 1
        cnt_len[L] += 1
        meta[1] += 1
        for j in range(nuse):
            r = use_rows[j]
            for k in range(W):
                cache[L, r, k] &= ~el_bits[x, k]
        _refresh_rows(cache, ct, cnt_len, el_bits, m, W, use_rows, nuse, L, state)
        _recompute(ct, ct_n, usage, el_st, n_items, agg)
        # post-acceptance pruning, as the authors' PrunePostAccept: the elements after x whose
        # usage fell, in code-table order
        pn = _fallen(ct, pos + 1, ct_n, mark, delta, plist)
        _reset(delta, mark, touched, nt)
        i = 0
        while i < pn:
            d = plist[i]
            if usage[d] == 0:  # zapped at once
                q = _find(ct, cnt_len, m, d, el_len[d])
                _remove_at(ct, meta[0], q)
                meta[0] -= 1
                cnt_len[el_len[d]] -= 1
                meta[3] += 1
                i += 1
                continue
            tot, nt, nuse, q = _try_delete(d, row_bits, wts, occ_ptr, occ, el_bits, el_len, el_rare, el_st, usage, ct,
                                           meta, cnt_len, cache, agg, delta, mark, touched, use_rows, m, W, old, new)
            if tot <= agg[5] + eps:
                Ld = el_len[d]
                _apply_delta(usage, delta, touched, nt)
                _remove_at(ct, meta[0], q)
                meta[0] -= 1
                cnt_len[Ld] -= 1
                meta[2] += 1
                _refresh_rows(cache, ct, cnt_len, el_bits, m, W, use_rows, nuse, Ld + 1, state)
                _recompute(ct, meta[0], usage, el_st, n_items, agg)
                # UpdatePostPruneList: re-sort what is left, then add the elements whose usage fell
                # (the authors start one past the removed position: its successor is not looked at)
                _sort_after(plist, i + 1, pn, usage)
                for q2 in range(q + 1, meta[0]):
                    e = ct[q2]
                    if mark[e] == 1 and delta[e] < 0:
                        pn = _prune_insert(plist, pn, i, e, usage)
            _reset(delta, mark, touched, nt)
            i += 1
    return meta[0]


# ---------------------------------------------------------------------------------------------
# set-up (no temporaries the size of all candidates' items)


@njit(cache=True)
def gather(items, offsets, idx):
    """The itemsets ``idx`` of a flat ``(items, offsets)`` collection, as a new one."""
    n = idx.shape[0]
    new_off = np.zeros(n + 1, dtype=np.int64)
    for k in range(n):
        j = idx[k]
        new_off[k + 1] = new_off[k] + offsets[j + 1] - offsets[j]
    out = np.empty(new_off[n], dtype=items.dtype)
    for k in range(n):
        j = idx[k]
        s = offsets[j]
        L = offsets[j + 1] - s
        for t in range(L):
            out[new_off[k] + t] = items[s + t]
    return out, new_off


@njit(cache=True)
def element_arrays(items, offsets, n_items, item_sup, st_len, item_col, W):
    """Per element (the singletons, then the itemsets): item bitset, length, rarest item and
    standard-code size; and the first itemset with two items of one column (-1 if none)."""
    n = offsets.shape[0] - 1
    E = n_items + n
    el_bits = np.zeros((E, W), dtype=np.uint64)
    el_len = np.ones(E, dtype=np.int32)
    el_rare = np.empty(E, dtype=np.int32)
    el_st = np.zeros(E, dtype=np.float64)
    bad = -1
    for i in range(n_items):
        el_bits[i, i // 64] = np.uint64(1) << np.uint64(i % 64)
        el_rare[i] = i
        el_st[i] = st_len[i]
    for k in range(n):
        e = n_items + k
        s = offsets[k]
        L = offsets[k + 1] - s
        el_len[e] = L
        cols = np.int64(0)
        best = -1
        st = 0.0
        for t in range(L):
            i = items[s + t]
            el_bits[e, i // 64] |= np.uint64(1) << np.uint64(i % 64)
            cb = np.int64(1) << np.int64(item_col[i])
            if cols & cb:
                if bad < 0:
                    bad = k
            cols |= cb
            if best < 0 or item_sup[i] < item_sup[best]:
                best = i
            st += st_len[i]
        el_rare[e] = best
        el_st[e] = st
    return el_bits, el_len, el_rare, el_st, bad


@njit(cache=True)
def fill_padded(items, offsets, out):
    for k in range(offsets.shape[0] - 1):
        s = offsets[k]
        for t in range(offsets[k + 1] - s):
            out[k, t] = items[s + t]


@njit(cache=True)
def dense_keys(items, offsets, item_col, to_ids, out, ok):
    """Itemset ``k`` as row ``k`` of ``out`` (item id per column); ``to_ids`` renumbers the
    items (-1: unknown there, which clears ``ok[k]``)."""
    for k in range(offsets.shape[0] - 1):
        for t in range(offsets[k], offsets[k + 1]):
            i = items[t]
            j = to_ids[i]
            if j < 0:
                ok[k] = False
            out[k, item_col[i]] = j


# ---------------------------------------------------------------------------------------------
# the cover of a database by a fixed code table (the dissimilarity's encoded lengths)


@njit(cache=True, nogil=True)
def cover_usages(rows, weights, item_column, items, offsets, usable, usage):
    """Cover every row by the code table's elements in their order (``items[offsets[e]:offsets[e
    + 1]]``; ``usable[e]`` false: never used): an element is used for a row when it holds the row's
    values in columns not covered yet. Adds each row's weight to the usages of the elements that
    cover it; returns the number of rows left with a column uncovered (0 when the table has every
    singleton). One pass per row with early exit, where column-wise numpy scanned every row once
    per element."""
    n_rows, m = rows.shape
    covered = np.zeros(m, dtype=np.bool_)
    short = 0
    for r in range(n_rows):
        covered[:] = False
        left = m
        for e in range(len(usable)):
            if not usable[e]:
                continue
            fits = True
            for j in range(offsets[e], offsets[e + 1]):
                i = items[j]
                c = item_column[i]
                if covered[c] or rows[r, c] != i:
                    fits = False
                    break
            if fits:
                for j in range(offsets[e], offsets[e + 1]):
                    covered[item_column[items[j]]] = True
                left -= offsets[e + 1] - offsets[e]
                usage[e] += weights[r]
                if left == 0:
                    break
        if left:
            short += 1
    return short
