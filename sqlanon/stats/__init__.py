"""SQL statistics: the shared frequency-set machinery every search asks through.

The package holds :mod:`sqlanon.stats.core` (frequency sets, node statistics), :mod:`sqlanon.stats.batch`
(many nodes in one statement) and :mod:`sqlanon.stats.marginals`; a search's own statistics live
beside its planner (:mod:`sqlanon.search.bottom_up.stats`, ...). The SQL atoms they build with are in
:mod:`sqlanon.expr.atoms`, the dialect-shaped builders (``lookup``, ``create_temp``) in
:mod:`sqlanon.dialect`, the per-class needs in :mod:`sqlanon.privacy.needs`.
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
