"""A frequency set saved in the database: the one type the statistics modules share (the node
statement of :mod:`sqlanon.stats.core`, the batches of :mod:`sqlanon.stats.batch`, the model
tables of :mod:`sqlanon.stats.models`), kept apart so none of them imports another for it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class FrequencySet:
    """A frequency set saved in the database, keyed by codes at ``levels``."""

    table: str
    levels: tuple[int, ...]
    rows: int
