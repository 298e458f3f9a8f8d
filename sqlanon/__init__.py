"""sqlanon: k-anonymity and its relatives computed inside the database by generated SQL."""

__version__ = "0.1.0"

from sqlanon.errors import ConfigError, EngineError, HierarchyError, SqlanonError, UnsatisfiableError  # noqa: E402


def anonymize(*args, **kwargs):
    """See :func:`sqlanon.api.anonymize`."""
    from sqlanon.api import anonymize as _anonymize

    return _anonymize(*args, **kwargs)


def check(*args, **kwargs):
    """See :func:`sqlanon.check.check`."""
    from sqlanon.check import check as _check

    return _check(*args, **kwargs)


__all__ = ["anonymize", "check", "SqlanonError", "ConfigError", "HierarchyError", "UnsatisfiableError", "EngineError", "__version__"]
