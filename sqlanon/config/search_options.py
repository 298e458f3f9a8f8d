"""Typed search options: one model per search, unknown keys refused.

Search options come from the CLI (``--iterations 5``, ``--option KEY=VALUE``), from a policy
file's ``search_options:`` mapping, or from the Python API (``search_options={...}``). All of them
go through :func:`parse_search_options`, the one parser: it validates the keys against the chosen
search's model (pydantic v2, ``extra="forbid"``), converts text to the declared types, and raises a
one-line :class:`~sqlanon.errors.ConfigError` naming the key at fault. An option the search does
not read is an error, never silently ignored:

>>> parse_search_options("genetic", {"iterations": "5", "seed": "0"})
{'iterations': 5, 'seed': 0}
>>> parse_search_options("genetic", {"iteratons": "5"})
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: unknown search option 'iteratons' for search genetic (did you mean 'iterations'?); it reads: batch, cost_matrix, cost_suppressed, crossover, dispersion, iterations, level_mutation, local_rows, max_endpoints, mutation_rate, numeric, objective, population, prune_unused, regression_target, seed, seed_lattice, selection_bias, step_limit, time_limit, trace, weights
>>> parse_search_options("optimal", {"iterations": 5})
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: search option 'iterations' is read by search genetic, lattice-genetic, not by optimal; optimal reads: batch, local_rows, lookahead_threads, numeric, probes, step_limit, time_limit

Each search declares its model in its own folder (``sqlanon/search/<name>/spec.py``), named by
the registry (:data:`sqlanon.search.registry.SEARCHES`). The defaults declared there are the
searches' own defaults (tests compare them) and appear in the policy file's JSON Schema (``sqlanon schema policy``).
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from sqlanon.errors import ConfigError
from sqlanon.search.options import SearchOptions
from sqlanon.search.registry import SEARCHES

#: search name -> its options model (declared beside the search)
SEARCH_OPTIONS: dict[str, type[SearchOptions]] = {name: spec.options for name, spec in SEARCHES.items()}


def options_model(search: str) -> type[SearchOptions]:
    return SEARCH_OPTIONS.get(search, SearchOptions)


def _readers(key: str) -> list[str]:
    return sorted(name for name, model in SEARCH_OPTIONS.items() if key in model.model_fields)


def parse_search_options(search: str, options: dict | None, where: str = "") -> dict:
    """Validate ``options`` for ``search``; returns the keys given, converted to their types.

    Unknown keys and keys of another search are refused (naming the key, who reads it and what
    this search reads); ``0``/``False`` are values, and ``None`` means "not given"."""
    model = options_model(search)
    given = {}
    for raw_key, value in (options or {}).items():
        key = str(raw_key).strip().replace("-", "_")
        if value is None:
            continue
        given[key] = value
    at = f" in {where}" if where else ""
    known = sorted(model.model_fields)
    for key in given:
        if key in model.model_fields:
            continue
        readers = _readers(key)
        if readers:
            raise ConfigError(f"search option {key!r}{at} is read by search {', '.join(readers)}, not by {search}; {search} reads: {', '.join(known)}")
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"unknown search option {key!r}{at} for search {search}{hint}; it reads: {', '.join(known)}")
    try:
        parsed = model.model_validate(given)
    except ValidationError as err:
        first = err.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "?"
        top = str(first["loc"][0]) if first["loc"] else key
        raise ConfigError(f"bad value for search option {top!r}{at} (search {search}): {first['msg']}, got {given.get(top)!r}") from None
    return parsed.model_dump(include=set(given))


def cli_search_options(option_pairs: list[str] | None, **flags: Any) -> dict:
    """The search options given on the command line: the dedicated flags (``None`` or ``False``
    for a boolean switch, or an empty list, mean "not given"; ``0`` is a value) and the
    ``--option KEY=VALUE`` pairs (a key given twice is an error)."""
    out = {}
    for key, value in flags.items():
        if value is None or value is False or (isinstance(value, list) and not value):
            continue
        out[key] = value
    seen: set[str] = set()
    for pair in option_pairs or []:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise ConfigError(f"--option wants KEY=VALUE, got {pair!r}")
        if key in seen or key in out:
            raise ConfigError(f"search option {key!r} given twice (--option {key}=... and/or its own flag)")
        seen.add(key)
        out[key] = value
    return out
