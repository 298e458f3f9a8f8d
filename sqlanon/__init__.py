"""sqlanon: k-anonymity and its relatives computed inside the database by generated SQL."""

from sqlanon.version import __version__  # noqa: F401
from sqlanon.errors import ConfigError, EngineError, EngineInputError, HierarchyError, SqlanonError, UnsatisfiableError  # noqa: E402


def anonymize(*args, **kwargs):
    """See :func:`sqlanon.run.api.anonymize`."""
    from sqlanon.run.api import anonymize as _anonymize

    return _anonymize(*args, **kwargs)


def check(*args, **kwargs):
    """See :func:`sqlanon.run.check.check`."""
    from sqlanon.run.check import check as _check

    return _check(*args, **kwargs)


def profile(*args, **kwargs):
    """See :func:`sqlanon.run.profile.profile`."""
    from sqlanon.run.profile import profile as _profile

    return _profile(*args, **kwargs)


def warm_up(*args, **kwargs):
    """See :func:`sqlanon.run.warm_up.warm_up`."""
    from sqlanon.run.warm_up import warm_up as _warm_up

    return _warm_up(*args, **kwargs)


__all__ = ["anonymize", "check", "profile", "warm_up", "SqlanonError", "ConfigError", "HierarchyError", "UnsatisfiableError", "EngineError", "EngineInputError", "__version__"]


#: the Python API's nouns, imported on first use (``sqlanon.bands(5, 10, 20)``,
#: ``sqlanon.KAnonymity(5)``, ``sqlanon.Release``): name -> module
_LAZY = {
    "bands": "sqlanon.config.frontdoor", "mask": "sqlanon.config.frontdoor", "dates": "sqlanon.config.frontdoor",
    "age": "sqlanon.config.frontdoor", "birth_year": "sqlanon.config.frontdoor",
    "flat": "sqlanon.config.frontdoor", "numeric": "sqlanon.config.frontdoor", "stored": "sqlanon.config.frontdoor",
    "Hierarchy": "sqlanon.hierarchy", "Policy": "sqlanon.config.policy", "Release": "sqlanon.release.result",
    "KAnonymity": "sqlanon.privacy", "DistinctLDiversity": "sqlanon.privacy",
    "EntropyLDiversity": "sqlanon.privacy", "TCloseness": "sqlanon.privacy",
    "RecursiveCLDiversity": "sqlanon.privacy", "KMap": "sqlanon.privacy", "DeltaPresence": "sqlanon.privacy",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'sqlanon' has no attribute {name!r}")
