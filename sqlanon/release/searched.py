"""The search a run ran, as the summary, the HTML report, the registry row and the recorded
policy say it: ``search: auto`` is recorded as the search it chose, and that auto chose it
(:func:`sqlanon.search.choose.choose_search` decides; the report's ``search_auto`` says why).
Kept apart from the searches so that the report and the release summary read it without
importing them.
"""

from __future__ import annotations

from sqlanon.report.labels import search_label  # noqa: F401  (the summary and the run read it here too)


def as_ran(policy: dict, report: dict) -> dict:
    """A policy (as recorded, flat) with the search that ran: ``search: auto`` becomes the search
    it chose, and ``search_auto`` (what it chose, over how many lattice nodes) says auto chose it.

    >>> as_ran({"k": 5, "search": "auto"}, {"search": "optimal", "search_auto": {"chose": "optimal", "lattice_nodes": 12}})
    {'k': 5, 'search': 'optimal', 'search_auto': {'chose': 'optimal', 'lattice_nodes': 12}}
    """
    if not report.get("search_auto"):
        return policy
    return {**policy, "search": report["search"], "search_auto": report["search_auto"]}
