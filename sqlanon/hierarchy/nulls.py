"""NULL in a quasi-identifier: how each QI treats it (policy ``nulls``, flag ``--nulls``).

* ``value`` (the default, as ARX): NULL is a value. Its hierarchy gets a NULL leaf (added by
  :meth:`sqlanon.stats.Statistics.prepare` when the column holds NULLs; builders build from the
  non-NULL values), whose path is NULL at every level below the root: a NULL is released as
  NULL until the QI is generalized to its root, then as the root label (``*``). NULLs form their
  own class like any value; a release marks suppressed cells ``*``, never NULL, so a released
  NULL is always a NULL of the input.
* ``suppress``: rows with NULL in that QI are suppressed (masked or dropped with the release's
  suppression), counted against the suppression budget before the search spends the rest.
* ``refuse``: a NULL is an error naming every such column and its NULL count.

>>> modes({"*": "refuse", "zip": "value"}, ["zip", "age"])
['value', 'refuse']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlanon.errors import ConfigError

MODES = ("value", "suppress", "refuse")
#: the key of ``nulls`` that sets every QI's mode (``--nulls MODE``)
EVERY = "*"
DEFAULT = "value"


def modes(nulls: Mapping[str, str] | str | None, qis: Sequence[str]) -> list[str]:
    """Per QI its mode; ``nulls`` maps a QI (or ``*``: every QI) to a mode, or is one mode.
    A mode outside :data:`MODES` or a column that is no QI is refused (a flag given is used)."""
    given = {EVERY: nulls} if isinstance(nulls, str) else dict(nulls or {})
    for column, mode in given.items():
        if mode not in MODES:
            raise ConfigError(f"nulls for {column!r} must be one of {', '.join(MODES)}, got {mode!r}")
        if column != EVERY and column not in qis:
            raise ConfigError(f"nulls names {column!r}, which is no quasi-identifier (QIs: {', '.join(qis)})")
    every = given.get(EVERY, DEFAULT)
    return [given.get(q, every) for q in qis]
