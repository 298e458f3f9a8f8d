"""Database URLs: recognizing a ``postgresql://`` input and redacting its password for messages."""

from __future__ import annotations

URL_PREFIXES = ("postgresql://", "postgres://")


def is_postgres_url(text: str | None) -> bool:
    return bool(text) and str(text).startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """The URL without its password (for messages)."""
    head, sep, rest = url.partition("://")
    if "@" in rest:
        cred, at, host = rest.rpartition("@")
        return f"{head}{sep}{cred.split(':', 1)[0]}{at}{host}"
    return url
