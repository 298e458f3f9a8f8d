"""The KRIMP categorical data generator (Vreeken, van Leeuwen, Siebes, ICDM-PADM 2007, Section 4).

``GenerateTransaction(CT, D)``: start with an empty row; while a domain (column) has no value,
pick one of the unfilled domains uniformly at random, pick one code-table element that sets a
value for it -- among the elements that set no already-filled domain -- with probability
proportional to ``usage + laplace``, and add its items; a filled domain is never re-assigned.
Every singleton is in the code table, so with ``laplace > 0`` a row can always be completed.

Rows are generated independently, so all rows are advanced together ("waves", one domain per row
per wave, at most one wave per column): the same distribution as the paper's row-at-a-time loop,
vectorized. A ``seed`` makes the output reproducible (numpy PCG64). The generated rows are
synthetic, not source rows; they are handed to the release writer as one Arrow table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sqlanon.errors import ConfigError


@dataclass
class GeneratorModel:
    """A code table as the generator sees it: per element its column mask, items and weight."""

    itemsets: list[tuple[int, ...]]
    weights: np.ndarray  # usage + laplace
    item_column: np.ndarray
    n_columns: int

    @classmethod
    def from_code_table(cls, itemsets, usage, item_column, n_columns: int, laplace: float) -> "GeneratorModel":
        if not (laplace > 0):
            raise ConfigError(f"--laplace must be > 0 (it keeps every value possible), got {laplace}")
        w = np.asarray(usage, dtype=np.float64) + float(laplace)
        return cls([tuple(s) for s in itemsets], w, np.asarray(item_column, dtype=np.int64), int(n_columns))

    def __post_init__(self) -> None:
        m = self.n_columns
        self.masks = np.zeros(len(self.itemsets), dtype=np.int64)
        # values[e, c] = item of element e in column c, or -1
        self.values = np.full((len(self.itemsets), m), -1, dtype=np.int64)
        for e, items in enumerate(self.itemsets):
            for i in items:
                c = int(self.item_column[i])
                self.values[e, c] = i
                self.masks[e] |= np.int64(1) << np.int64(c)
        self.by_column = [np.nonzero(self.values[:, c] >= 0)[0] for c in range(m)]
        for c in range(m):
            if not len(self.by_column[c]):
                raise ConfigError(f"the code table sets no value for column {c}")

    def probabilities(self, column: int, filled: set[int] = frozenset()) -> dict[tuple[int, ...], float]:
        """P(element | domain ``column`` is picked, ``filled`` domains already set) -- the paper's CT_D."""
        fmask = 0
        for c in filled:
            fmask |= 1 << c
        elems = [e for e in self.by_column[column] if not (int(self.masks[e]) & fmask)]
        tot = float(sum(self.weights[e] for e in elems))
        return {self.itemsets[e]: float(self.weights[e]) / tot for e in elems}


def generate(model: GeneratorModel, n_rows: int, seed: int | None = None) -> np.ndarray:
    """``n_rows`` generated rows as item ids, shape ``(n_rows, n_columns)``."""
    if n_rows < 0:
        raise ConfigError(f"--rows must be >= 0, got {n_rows}")
    rng = np.random.Generator(np.random.PCG64(seed))
    m = model.n_columns
    out = np.full((n_rows, m), -1, dtype=np.int64)
    filled = np.zeros(n_rows, dtype=np.int64)
    full = (np.int64(1) << np.int64(m)) - 1
    active = np.arange(n_rows)
    colbit = np.int64(1) << np.arange(m, dtype=np.int64)
    while len(active):
        # a random unfilled domain per row
        keys = rng.random((len(active), m))
        keys[(filled[active][:, None] & colbit[None, :]) != 0] = np.inf
        dom = keys.argmin(axis=1)
        draws = rng.random(len(active))
        for c in range(m):
            sel = np.nonzero(dom == c)[0]
            if not len(sel):
                continue
            rows = active[sel]
            elems = model.by_column[c]
            ok = (model.masks[elems][None, :] & filled[rows][:, None]) == 0
            w = np.where(ok, model.weights[elems][None, :], 0.0)
            cs = np.cumsum(w, axis=1)
            target = draws[sel] * cs[:, -1]
            pick = (cs <= target[:, None]).sum(axis=1)
            pick = np.minimum(pick, len(elems) - 1)
            # guard the float edge: never land on a blocked element
            bad = ~ok[np.arange(len(rows)), pick]
            if bad.any():
                pick[bad] = np.argmax(ok[bad] * np.arange(1, len(elems) + 1)[None, :], axis=1)
            chosen = elems[pick]
            vals = model.values[chosen]
            setm = vals >= 0
            r, cc = np.nonzero(setm)
            out[rows[r], cc] = vals[r, cc]
            filled[rows] |= model.masks[chosen]
        active = active[filled[active] != full]
    return out
