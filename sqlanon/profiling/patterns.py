"""What a column's name and values say about it: the name patterns of identifiers,
quasi-identifiers and sensitive attributes, and the value shapes checked in SQL.

The value patterns are plain POSIX/RE2/Java regular expressions (no backslashes: ``[.]`` and
``[0-9]``), so the same text runs as DuckDB's ``regexp_matches``, PostgreSQL's ``~`` and Spark's
``RLIKE``.

>>> name_kind("patient_id"), name_kind("Date of birth"), name_kind("zip code"), name_kind("Diagnosis")
('identifier', 'date of birth', 'postal code', 'health')
>>> name_kind("colour") is None
True
"""

from __future__ import annotations

import re

#: value shapes counted per column by the profile pass: name -> (regex, what a match looks like)
VALUE_PATTERNS: dict[str, tuple[str, str]] = {
    "email": ("^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+[.][A-Za-z]{2,}$", "e-mail addresses"),
    "phone": ("^[+]?[0-9]{0,3}[ .-]?[(]?[0-9]{2,4}[)]?[ .-]?[0-9]{3,4}[ .-]?[0-9]{3,4}$", "phone numbers"),
    "national_id": ("^([0-9]{3}-[0-9]{2}-[0-9]{4}|[A-Za-z]{2}[0-9]{6}[A-Da-d]|[0-9]{3}[.][0-9]{3}[.][0-9]{3}-[0-9]{2})$", "national id numbers (SSN-like)"),
}
#: shapes that decide a column's kind of values (and its hierarchy)
SHAPES: dict[str, str] = {
    "numeric": "^ *[+-]?[0-9]+([.][0-9]+)? *$",
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}",
    "words": "[A-Za-z]+ +[A-Za-z]+ +[A-Za-z]+",
}
#: share of a column's non-NULL (sampled) values that must match for a pattern or shape to count
MATCH_SHARE = 0.9

_ID = r"(^|_)(id|uuid|guid|key|ssn|nin|sin|nhs|mrn|passport|iban|account|card|license|licence)($|_)|^(e_?mail|mail|phone|mobile|telephone|tel|fax|name|first_?name|last_?name|surname|given_?name|full_?name|family_?name|address|street|ip|ip_?address|social_?security(_?number)?|patient|customer|username|user_?name|login)$|(email|phone|(^|_)name$|address)"
#: name pattern -> kind, in order: the first match decides
NAME_KINDS: list[tuple[str, str, str]] = [
    ("identifier", _ID, "identifier"),
    ("date of birth", r"(birth|dob|born)", "qi"),
    ("age", r"(^|_)age($|_)|(^|_)age_?group", "qi"),
    ("sex", r"(^|_)(sex|gender)($|_)", "qi"),
    ("postal code", r"(zip|postal|post_?code|postcode|plz|npa)", "qi"),
    ("ethnicity", r"(race|ethnic|nationality)", "qi"),
    ("marital status", r"(marital|married|relationship)", "qi"),
    ("occupation", r"(occupation|job|profession|workclass|employ|work_?class)", "qi"),
    ("education", r"(education|school|degree)", "qi"),
    ("location", r"(^|_)(country|region|state|city|county|province|district|municipality)($|_)", "qi"),
    ("health", r"(diagnos|disease|condition|illness|icd|treatment|medication|drug|symptom|hiv|cancer|health)", "sensitive"),
    ("income", r"(income|salary|wage|earning|(^|_)pay($|_)|revenue)", "sensitive"),
    ("belief", r"(religion|belief|politic|party|union|sexual|orientation)", "sensitive"),
]


def normalized(name: str) -> str:
    """``Date of Birth`` -> ``date_of_birth`` (names compared by their words)."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _name_match(name: str) -> tuple[str, str, str] | None:
    """The first row of :data:`NAME_KINDS` whose pattern the (normalized) column name matches."""
    n = normalized(name)
    return next((row for row in NAME_KINDS if re.search(row[1], n)), None)


def name_kind(name: str) -> str | None:
    """The kind of attribute a column name says (``identifier``, ``age``, ``health``, ..), or None."""
    match = _name_match(name)
    return match[0] if match else None


def name_role(name: str) -> str | None:
    """``identifier``, ``qi`` or ``sensitive`` as the column name says, or None."""
    match = _name_match(name)
    return match[2] if match else None
