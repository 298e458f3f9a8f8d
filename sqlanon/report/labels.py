"""How the report names what a run did, shared with the release summary and the CLI's one-line
summary (so that they say the same)."""

from __future__ import annotations


def search_label(report: dict) -> str:
    """The search a run ran, as a person reads it: ``optimal (auto)`` when ``auto`` chose it
    (the summary, the HTML report and the registry row's ``search`` say the same).

    >>> search_label({"search": "optimal", "search_auto": {"chose": "optimal"}}), search_label({"search": "samarati"})
    ('optimal (auto)', 'samarati')
    """
    search = str(report.get("search"))
    return f"{search} (auto)" if report.get("search_auto") else search
