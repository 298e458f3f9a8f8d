"""Column names as the engine resolves them: a name a policy, a flag or a keyword gives is found
among the source's columns the way the engine's SQL would find it.

* DuckDB and Spark (``spark.sql.caseSensitive`` false, its default) ignore case in names, quoted
  or not: ``zip`` finds a column ``ZIP``; two columns that differ only in case (a Parquet file
  may hold them) make the name ambiguous, and it is not found;
* PostgreSQL folds an unquoted name to lower case: ``ZIP`` finds ``zip``, ``zip`` does not find a
  column created as ``"ZIP"`` (its exact spelling, ``ZIP``, does).

An exact spelling always wins.

>>> resolve(["id", "ZIP"], "zip", "duckdb"), resolve(["id", "ZIP"], "zip", "postgres")
('ZIP', None)
>>> resolve(["zip"], "ZIP", "postgres"), near_matches(["zipcode", "ZIP", "age"], "zip")
('zip', ['ZIP', 'zipcode'])
"""

from __future__ import annotations

import difflib

#: engines whose names ignore case (PostgreSQL folds unquoted names to lower case instead)
CASE_INSENSITIVE = ("duckdb", "spark")


def resolve(have: list[str], name: str, dialect: str) -> str | None:
    """The column of ``have`` that ``name`` names on ``dialect``, or None (none, or ambiguous)."""
    if name in have:
        return name
    if dialect == "postgres":
        return name.lower() if name.lower() in have else None
    if dialect not in CASE_INSENSITIVE:
        return None
    found = [c for c in have if c.casefold() == name.casefold()]
    return found[0] if len(found) == 1 else None


def near_matches(have: list[str], name: str, most: int = 3) -> list[str]:
    """Columns spelled like ``name``: the same but for case first, then close spellings."""
    same = [c for c in have if c.casefold() == name.casefold() and c != name]
    lowered = {c.casefold(): c for c in have}
    close = [lowered[c] for c in difflib.get_close_matches(name.casefold(), list(lowered), n=most, cutoff=0.6)]
    out = same + [c for c in close if c not in same and c != name]
    return out[:most]


def did_you_mean(have: list[str], name: str) -> str:
    """`` (did you mean 'ZIP'?)`` when a column is spelled like ``name``, else ''."""
    near = near_matches(have, name)
    return f" (did you mean {' or '.join(repr(c) for c in near)}?)" if near else ""
