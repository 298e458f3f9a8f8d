"""SQL statistics: every question a search or a release asks, turned into SQL and answered.

The package holds :mod:`sqlanon.stats.core` (frequency sets, node statistics, the shared
builders) and the statistics of the class-based planners: :mod:`sqlanon.search.bottom_up.stats`,
:mod:`sqlanon.search.top_down.stats` and :mod:`sqlanon.search.genetic.stats`. ``from sqlanon.stats import X``
keeps working for every name of the core module.
"""

from sqlanon.stats.core import (  # noqa: F401
    QI_PREFIX,
    ClassNeeds,
    FrequencySet,
    NodeStats,
    Params,
    Statistics,
    and_all,
    as_double,
    as_varchar,
    count_rows,
    create_temp,
    cte_select,
    distinct_values,
    eq_all,
    format_input_hash,
    if_,
    lit,
    lookup,
    row_hash_expr,
    sum_,
)
