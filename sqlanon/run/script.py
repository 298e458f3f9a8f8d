"""``sqlanon sql``: the statements of a run as one self-contained script for a dialect.

The script runs with nothing prepared beforehand: the source is named as the dialect names it
(Spark: ``parquet.`path``` or a CSV view it creates), hierarchy code tables and release mapping
tables are ``VALUES`` tables (Spark: views over literal rows), and saved frequency sets are
temporary tables in the dialect's shape (Spark: ``CACHE TABLE``, computed once). Its sections are
``(title, statement)`` pairs, in order; the ``final node`` and ``release`` sections are queries.
"""

from __future__ import annotations

import pyarrow as pa

from sqlanon.config.policy import Policy
from sqlanon.release import write as release_mod
from sqlanon.release.withheld import with_withheld
from sqlanon.hierarchy.keys import leaf_keys
from sqlanon.release.linked import by_qi, linked_statements

RELEASE_MAPS = "sqlanon_map{}"
BAD = "sqlanon_bad"
LINKED = "sqlanon_linked{}"


def sections(stats, plan, requirement, metric, policy: Policy, dialect) -> list[tuple[str, str]]:
    """``stats`` is the prepared run on its own engine; ``plan`` the search's result."""
    view = stats.for_dialect(dialect)
    d = view.dialect
    out: list[tuple[str, str]] = []

    def add(title, expression):
        out.append((title, d.render(expression, pretty=True)))

    for stmt in d.source_setup(stats.source):
        add("source", stmt)
    for qi, name, h in zip(stats.qis, stats.map_tables, stats.hierarchies):
        add(f"hierarchy codes of {qi}", d.values_table(name, h.mapping_table()))
    if stats.domain_table is not None:
        domain = pa.table({
            "s": pa.array([v for v, _ in stats.sensitive_domain], pa.string()),
            "rnk": pa.array(range(1, len(stats.sensitive_domain) + 1), pa.int32()),
            "q": pa.array([n / stats.rows for _, n in stats.sensitive_domain], pa.float64()),
        })
        add("sensitive value distribution", d.values_table(stats.domain_table, domain))
    add("base frequency set", view.base_query_create())
    node = plan.node if plan.node is not None else plan.recoding
    aggs = metric.aggregates(view, node) if plan.node is not None else []
    add("final node", view.node_query(node, requirement.predicate(), aggs, view.base))
    if plan.local or policy.release.microaggregate:
        # local recoding / microaggregation: its small tables live on the input's engine
        rounds = release_mod.rounds_query(stats, plan, policy.release.suppression, policy.release.drop_columns, policy.release.microaggregate, view=view)
        add_release(add, d, with_withheld(view, rounds, policy.release.suppression, policy.release.drop_columns, policy.release.microaggregate), policy)
        return out
    bad = BAD if plan.suppressed_rows else None
    if bad:
        add("suppressed classes", view.bad_class_labels_create(node, requirement.predicate(), bad))
    maps = [RELEASE_MAPS.format(i) for i in range(len(stats.qis))]
    for i, (qi, h) in enumerate(zip(stats.qis, stats.hierarchies)):
        mapping = pa.table({"leaf": pa.array(leaf_keys(h), pa.string()), "value": pa.array(plan.recoding.values(i), pa.string())})
        add(f"released values of {qi}", d.values_table(maps[i], mapping))
    kept = release_mod.ungeneralized(stats, plan.recoding) if not (stats.withheld and policy.release.suppression == "mask") else set()
    release = release_mod.release_select(view, maps, bad, policy.release.suppression, policy.release.drop_columns, kept)
    add_release(add, d, with_withheld(view, release, policy.release.suppression, policy.release.drop_columns), policy)
    return out


def add_release(add, dialect, release, policy: Policy) -> None:
    """The release section, after the small tables of its linked columns (when the policy has any)."""
    if policy.release.linked:  # columns linked to a QI: no finer than its released value
        creates, release = linked_statements(release, policy.release.linked, [LINKED.format(i) for i in range(len(by_qi(policy.release.linked)))])
        for qi, name, query in creates:
            add(f"released values of {qi} that determine its linked columns", dialect.create_temp(name, query))
    add("release", release)
