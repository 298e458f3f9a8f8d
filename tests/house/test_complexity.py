"""Small functions: no function or method of ``sqlanon/`` has a cyclomatic complexity above 20.

Measured with radon (the ``dev`` extra), the way ``radon cc -s sqlanon`` ranks them: a function
over the limit is split by meaning (validate / set up / loop / finish), not mechanically. Skipped
only when radon is missing outside CI (``CI`` unset); under CI a missing radon fails.
"""

from __future__ import annotations

import os
import paths

import pytest

LIMIT = 20
PACKAGE = paths.PACKAGE


def _radon():
    try:
        from radon.complexity import cc_visit
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("radon is not installed (pip install -e '.[dev]')")
    return cc_visit


def _blocks(cc_visit):
    """Every function and method of every module (closures too), once each, as ``(path, block)``.
    radon lists a class's methods both flat and under the class: classes are skipped here."""
    for path in sorted(PACKAGE.rglob("*.py")):
        seen = set()
        todo = list(cc_visit(path.read_text(encoding="utf-8")))
        while todo:
            block = todo.pop()
            todo += list(getattr(block, "methods", ())) + list(getattr(block, "inner_classes", ())) + list(getattr(block, "closures", ()))
            key = (block.lineno, block.fullname)
            if hasattr(block, "methods") or key in seen:
                continue
            seen.add(key)
            yield path, block


def test_no_function_is_over_the_complexity_limit():
    cc_visit = _radon()
    seen = list(_blocks(cc_visit))
    assert len(seen) > 500, "radon found too few functions: is PACKAGE the sqlanon package?"
    offenders = sorted(
        (f"{path.relative_to(PACKAGE.parent)}:{block.lineno} {block.fullname} ({block.complexity})"
         for path, block in seen if block.complexity > LIMIT),
    )
    assert not offenders, f"{len(offenders)} function(s) over cyclomatic complexity {LIMIT} (split them by meaning):\n" + "\n".join(offenders)
