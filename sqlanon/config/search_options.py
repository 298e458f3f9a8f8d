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
sqlanon.errors.ConfigError: unknown search option 'iteratons' for search genetic (did you mean 'iterations'?); it reads: batch, cost_matrix, cost_suppressed, crossover, dispersion, iterations, local_rows, max_endpoints, mutation_rate, numeric, objective, population, prune_unused, regression_target, seed, seed_lattice, selection_bias, time_limit, trace, weights
>>> parse_search_options("optimal", {"iterations": 5})
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: search option 'iterations' is read by search genetic, not by optimal; optimal reads: batch, local_rows, lookahead_threads, numeric, probes, step_limit, time_limit

Adding a search is adding its model to :data:`SEARCH_OPTIONS` (a search without a model reads
only the common options). The defaults declared here are the searches' own defaults (tests
compare them) and appear in the policy file's JSON Schema (``sqlanon schema policy``).
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from typing import Annotated

from sqlanon.errors import ConfigError


def given(value: Any) -> bool:
    """Was a flag or option given? ``0`` and ``0.0`` are values, not absences: only None, False and
    an empty list are."""
    return value is not None and value is not False and not (isinstance(value, list) and not value)


def _comma_list(value: Any) -> Any:
    """``"a,b"`` -> ``["a", "b"]``; a list keeps its items (each may itself be ``"a,b"``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        out: list = []
        for v in value:
            out.extend(_comma_list(v) if isinstance(v, str) else [v])
        return out
    return value


def _one_or_many(value: Any) -> Any:
    """A single string is a one-item list (for items that may hold commas themselves)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, tuple):
        return list(value)
    return value


#: a list of names: a YAML/JSON list, or comma-separated text (``--option x=a,b``)
Names = Annotated[list[str], BeforeValidator(_comma_list)]
#: a list of free-form items (a string is one item)
Items = Annotated[list[str], BeforeValidator(_one_or_many)]


class SearchOptions(BaseModel):
    """Options every search reads."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, title="common search options")

    numeric: Names = Field(default_factory=list, description="Quasi-identifiers cut into intervals (declares --qi COLUMN=numeric).")


#: a base frequency set of at most this many rows is fetched once and its nodes grouped in-process
#: (:data:`sqlanon.stats.local.LOCAL_ROWS`; tests compare them); 0: every node by SQL
LOCAL_ROWS = 2_000_000
#: ... the genetic search's candidates (:data:`sqlanon.search.genetic.local.LOCAL_ROWS`)
GENETIC_LOCAL_ROWS = 250_000


def _local_rows() -> Any:
    return Field(LOCAL_ROWS, ge=0, description="Fetch a base frequency set of at most this many rows once and evaluate its lattice nodes in-process (compiled); 0: every node by SQL statements.")


class OptimalOptions(SearchOptions):
    """``--search optimal``: the bound-ordered exhaustive lattice search."""

    model_config = ConfigDict(title="optimal search options")
    batch: int = Field(128, ge=1, description="Nodes evaluated by one statement.")
    probes: int = Field(64, ge=1, description="Flash-style probes (paths to the cheapest undecided nodes) run side by side.")
    lookahead_threads: bool = Field(False, description="On a large frequency set with several engine threads, each round also holds both possible next nodes of every probe (fewer, wider statements; more nodes).")
    time_limit: float | None = Field(None, gt=0, description="Lattices above 2,000,000 nodes (searched without building them): stop after this many seconds (default 60) and return the best node found, not proven optimal.")
    step_limit: int | None = Field(None, ge=1, description="Lattices above 2,000,000 nodes: stop after this many node evaluations.")
    local_rows: int = _local_rows()


class SamaratiOptions(SearchOptions):
    """``--search samarati``: binary search on height."""

    model_config = ConfigDict(title="samarati search options")
    local_rows: int = _local_rows()


class IncognitoOptions(SearchOptions):
    """``--search incognito``: subset-pruned lattice search (falls back to optimal when the
    requirement is not monotone, hence ``batch``)."""

    model_config = ConfigDict(title="incognito search options")
    batch: int = Field(128, ge=1, description="Optimal fallback: nodes evaluated by one statement.")
    probes: int = Field(64, ge=1, description="Optimal fallback: probes run side by side.")
    local_rows: int = _local_rows()


class BottomUpOptions(SearchOptions):
    """``--search bottom-up`` (Wang, Yu, Chakraborty)."""

    model_config = ConfigDict(title="bottom-up search options")
    trace: bool = Field(False, description="Keep and print every generalization step.")
    numeric_fanout: int = Field(2, ge=2, description="Children per node of the interval tree built for a numeric QI.")
    pruning: bool = Field(True, description="Skip candidates that cannot win (false: evaluate all; for tests).")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds, the vids included (none: no limit); the cheapest state within the budget so far is returned.")


class TopDownOptions(SearchOptions):
    """``--search top-down`` (Wang & Fung, sequential release)."""

    model_config = ConfigDict(title="top-down search options")
    trace: bool = Field(False, description="Keep and print every specialization step.")
    previous: Names = Field(default_factory=list, description="Previous releases: files, tables of the input database, or registry ids.")
    x: Names = Field(default_factory=list, description="X attributes (default: the QIs not in Y).")
    y: Names = Field(default_factory=list, description="Y attributes X must not be linked to.")
    privacy: Literal["xy-anonymity", "xy-linkability"] = Field("xy-anonymity", description="The (X,Y)-privacy model.")
    sensitive_values: Names = Field(default_factory=list, description="xy-linkability: sensitive Y values, VALUE or COLUMN=VALUE[:THRESHOLD].")
    inconsistent: Items = Field(default_factory=list, description="Inconsistency predicates, e.g. 'sex=Male|pregnant=Yes'.")
    join: Names = Field(default_factory=list, description="Override the join attributes with previous releases.")
    factorized: bool = Field(True, description="false forces the partition-pair SQL even in Case 1 (for tests).")


class GeneticOptions(SearchOptions):
    """``--search genetic`` (Iyengar, GENITOR)."""

    model_config = ConfigDict(title="genetic search options")
    trace: bool = Field(False, description="Keep and print every improvement of the best solution.")
    iterations: int = Field(2000, ge=0, description="GENITOR iterations.")
    population: int = Field(100, ge=2, description="Population size.")
    seed: int | None = Field(None, description="Random seed (none: random). 0 is a seed.")
    mutation_rate: float = Field(0.002, ge=0.0, le=1.0, description="Per-bit mutation probability.")
    batch: int = Field(16, ge=1, description="Iterations whose children are scored by one statement.")
    selection_bias: float = Field(1.5, ge=1.0, le=2.0, description="Linear rank-selection bias.")
    crossover: Literal["two-point", "uniform"] = Field("two-point", description="Crossover operator.")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds (none: no limit).")
    max_endpoints: int = Field(128, ge=1, description="Numeric QIs with more distinct values are quantized to this many end points.")
    prune_unused: bool = Field(True, description="Leaves holding no row get no chromosome bit.")
    seed_lattice: bool = Field(True, description="Start from the full-domain lattice optimum under LM when cheap.")
    local_rows: int = Field(GENETIC_LOCAL_ROWS, ge=0, description="Score candidates in-process over the fetched frequency set when it has at most this many rows and the requirement is a class-size threshold (the lattice seed's nodes too); 0: every batch by SQL statements.")
    objective: Literal["lm", "cm", "cm-cost", "regression", "weighted"] | None = Field(None, description="What to optimize (default: the --metric, lm or cm).")
    cost_matrix: str | dict[str, dict[str, float]] | None = Field(None, description="cm-cost: {true class: {assigned class: cost}} as a mapping, JSON text or a .json path.")
    cost_suppressed: Literal["group"] | float = Field("group", description="cm-cost: cost of a suppressed row ('group' or a number).")
    regression_target: str | None = Field(None, description="regression: the numeric target column.")
    dispersion: Literal["variance", "mad"] = Field("variance", description="regression: variance or mean absolute deviation.")
    weights: str | None = Field(None, description="weighted: KIND[:COLUMN]=W,... with KIND in lm, cm, cm-cost, regression.")


class LightningOptions(SearchOptions):
    """``--search lightning``: the time/step-limited heuristic lattice search (wide tables)."""

    model_config = ConfigDict(title="lightning search options")
    time_limit: float | None = Field(None, gt=0, description="Stop after this many seconds (default 30).")
    step_limit: int | None = Field(None, ge=1, description="Stop after this many node evaluations (default: none).")
    batch: int = Field(64, ge=1, description="Nodes evaluated by one statement.")
    local_rows: int = _local_rows()


class AutoOptions(LightningOptions):
    """``--search auto``: optimal on small lattices, lightning (with these limits) on large ones."""

    model_config = ConfigDict(title="auto search options")


#: search name -> its options model (a search missing here reads only the common options)
SEARCH_OPTIONS: dict[str, type[SearchOptions]] = {
    "optimal": OptimalOptions,
    "samarati": SamaratiOptions,
    "incognito": IncognitoOptions,
    "bottom-up": BottomUpOptions,
    "top-down": TopDownOptions,
    "genetic": GeneticOptions,
    "lightning": LightningOptions,
    "auto": AutoOptions,
}


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


def json_schemas() -> dict[str, dict]:
    """JSON Schema of each search's options (for the policy file's schema)."""
    return {name: model.model_json_schema() for name, model in SEARCH_OPTIONS.items()}
