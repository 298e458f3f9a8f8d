"""Searches: one folder each, one contract ``run(ctx: SearchContext) -> Plan``
(:mod:`sqlanon.search.context`), declared in the registry (:data:`sqlanon.search.registry.SEARCHES`)."""
