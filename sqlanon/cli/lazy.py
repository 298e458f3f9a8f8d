"""A hook run once a module is imported, for the modules the CLI imports only when a command
needs them (``sqlanon --help`` loads neither an engine nor numpy)."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds ``name`` by the rest of ``sys.meta_path`` and runs ``then(module)`` once the module
    has executed; it leaves ``sys.meta_path`` at its first use."""

    def __init__(self, name: str, then: Callable[[ModuleType], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run, then = loader.exec_module, self.then

        def exec_module(module: ModuleType) -> None:
            run(module)
            then(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import(name: str, then: Callable[[ModuleType], None]) -> None:
    """``then(module)`` now when ``name`` is imported already, else right after its import.

    >>> seen = []
    >>> after_import("json", lambda module: seen.append(module.__name__))
    >>> seen
    ['json']
    """
    module = sys.modules.get(name)
    if module is not None:
        then(module)
        return
    sys.meta_path.insert(0, _AfterImport(name, then))
