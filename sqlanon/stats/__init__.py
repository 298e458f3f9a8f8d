"""SQL statistics: every question a search or a release asks, turned into SQL and answered.

The package holds :mod:`sqlanon.stats.core` (frequency sets, node statistics, the shared
builders) and the statistics of the class-based planners: :mod:`sqlanon.stats.bottom_up`,
:mod:`sqlanon.stats.top_down` and :mod:`sqlanon.stats.genetic`. ``from sqlanon.stats import X``
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
