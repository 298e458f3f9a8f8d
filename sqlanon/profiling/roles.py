"""A role per column, with the reason: ``identifier`` (a direct identifier: to drop), ``qi`` (a
quasi-identifier candidate: to generalize), ``sensitive`` (a sensitive candidate: to protect by
l-diversity or t-closeness) or ``insensitive`` (released as it is).

The first rule that holds decides, in this order: the values look like identifiers (e-mail
addresses, phone numbers, national ids); the name says identifier; the name says quasi-identifier
(age, sex, date of birth, postal code, ethnicity, marital status, occupation, education, place);
the values are free text (may name people); the values are (nearly) unique per row; the name says
sensitive (diagnosis, income, ..); the values are dates (linkable: a quasi-identifier); otherwise
insensitive.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlanon.profiling.patterns import MATCH_SHARE, VALUE_PATTERNS, name_kind, name_role
from sqlanon.profiling.scan import ColumnStats

#: distinct values per row from which a column counts as an identifier of rows
NEAR_UNIQUE = 0.95
#: fewer rows than this say nothing by uniqueness (any column may be unique in ten rows)
MIN_ROWS = 20
#: average length (characters) from which text of several words is free text
FREE_TEXT_LENGTH = 20

ROLES = ("identifier", "qi", "sensitive", "insensitive")


@dataclass
class Role:
    role: str
    reason: str


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _pattern(stats: ColumnStats) -> Role | None:
    """Values that look like e-mail addresses, phone numbers or national ids (a date or a plain
    number is not read as a phone number)."""
    if stats.kind != "text" or stats.nonnull == 0 or stats.share("date") >= MATCH_SHARE:
        return None
    for name, (_, what) in VALUE_PATTERNS.items():
        if name == "phone" and stats.share("numeric") >= MATCH_SHARE and stats.share(name) < 1.0:
            continue
        share = stats.share(name)
        if share >= MATCH_SHARE:
            return Role("identifier", f"values: {_pct(share)} look like {what}")
    return None


def _by_name(stats: ColumnStats, role: str) -> Role | None:
    if name_role(stats.name) != role:
        return None
    kind = name_kind(stats.name)
    return Role(role, f"name: {kind}")


def _unique(stats: ColumnStats) -> Role | None:
    """Nearly unique values identify rows; not dates or timestamps with repeats (an admission
    time shared by two rows is an event, a quasi-identifier released as month or year)."""
    if stats.rows < MIN_ROWS or stats.uniqueness < NEAR_UNIQUE:
        return None
    if stats.is_date and stats.distinct < stats.rows:
        return None
    what = "unique per row" if stats.distinct == stats.rows else f"nearly unique per row ({_pct(stats.uniqueness)} distinct)"
    return Role("identifier", f"values: {what}")


def _free_text(stats: ColumnStats) -> Role | None:
    """Text of several words (not named as a sensitive attribute, such as a diagnosis)."""
    long_text = (stats.avg_length or 0) >= FREE_TEXT_LENGTH and stats.share("words") >= 0.5
    if stats.kind != "text" or not long_text or name_role(stats.name) == "sensitive":
        return None
    return Role("identifier", f"values: free text (about {stats.avg_length:.0f} characters), may name people")


def _dates(stats: ColumnStats) -> Role | None:
    return Role("qi", "values: dates") if stats.is_date else None


def assign(stats: ColumnStats) -> Role:
    """The role of one column, by the first rule that holds (see the module's docstring)."""
    if stats.nonnull == 0:
        return Role("insensitive", "no values (only NULLs)")
    for rule in (_pattern, lambda s: _by_name(s, "identifier"), lambda s: _by_name(s, "qi"), _free_text, _unique, lambda s: _by_name(s, "sensitive"), _dates):
        found = rule(stats)
        if found is not None:
            return found
    return Role("insensitive", "no identifying name or shape")
