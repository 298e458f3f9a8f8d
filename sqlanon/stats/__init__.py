"""SQL statistics: the shared frequency-set machinery every search asks through.

:class:`~sqlanon.stats.core.Statistics` is the facade (its method names are what searches, run/,
release/ and the metrics call); behind it, by role:

* :mod:`sqlanon.stats.core`: the base scan (coding, validation, NULLs) and one node's statement;
* :mod:`sqlanon.stats.store`: the frequency-set store (base, saved and partial sets, eviction);
* :mod:`sqlanon.stats.evaluate`: node evaluation, an ordered tuple of routes (``ROUTES``: in-process,
  the batch statement, one node, a ``UNION ALL``), the first that accepts answering;
* :mod:`sqlanon.stats.batch` and :mod:`sqlanon.stats.deltas`: many nodes in one statement;
* :mod:`sqlanon.stats.local`: the in-process path (the predicate compiler, the fetched set and
  its roll-ups, the threads, the kernels and their loader);
* :mod:`sqlanon.stats.classes`, :mod:`sqlanon.stats.models`, :mod:`sqlanon.stats.marginals`: a
  node's class aggregates, the models' tables, the QI-subset counts;
* :mod:`sqlanon.stats.memory`: every cache, one typed object (``stats.memory``).

A search's own statistics live beside its planner (:mod:`sqlanon.search.bottom_up.stats`, ...).
The SQL atoms they build with are in :mod:`sqlanon.expr.atoms`, the dialect-shaped builders
(``lookup``, ``create_temp``) in :mod:`sqlanon.dialect`, the per-class needs in
:mod:`sqlanon.privacy.needs`.
"""
from sqlanon.stats.core import (  # noqa: F401
    QI_PREFIX,
    FrequencySet,
    NodeStats,
    Statistics,
    count_rows,
    distinct_values,
    format_input_hash,
)
