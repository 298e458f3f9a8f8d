"""The policy: everything a run needs, from a YAML file and/or CLI flags (flags win).

Every key has a CLI flag of the same name (``max_suppression`` is ``--max-suppression``). Unknown
keys and bad values are :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any

from sqlanon.errors import ConfigError

LATTICE = ("optimal", "samarati", "incognito")


@dataclass
class Policy:
    input: str | None = None
    format: str | None = None
    delimiter: str | None = None
    table: str | None = None
    qi: dict[str, str] = field(default_factory=dict)
    hierarchy_delimiter: str | None = None
    max_value_length: int = 4096  # sqlanon.hierarchy.MAX_VALUE_LENGTH: builders refuse longer values
    k: int | None = None
    l: float | None = None
    l_diversity: str = "distinct"
    t: float | None = None
    t_distance: str = "equal"
    max_suppression: float = 0.0
    suppression: str = "mask"
    metric: str | None = None  # default: the search's own (precision for the lattice searches)
    search: str = "optimal"
    sensitive_column: str | None = None
    class_column: str | None = None
    output: str | None = None
    output_table: str | None = None
    database: str | None = None
    in_place: bool = False
    overwrite: bool = False
    output_delimiter: str = ","
    memory_limit: str | None = None
    threads: int | None = None
    engine: str | None = None  # duckdb | postgres | spark (default: from the input)
    spark_master: str | None = None
    spark_conf: dict[str, str] = field(default_factory=dict)
    registry: str | None = None
    drop_columns: list[str] = field(default_factory=list)
    # columns unique per row (ids) kept in the release knowingly (else such a release is refused)
    keep_columns: list[str] = field(default_factory=list)
    search_options: dict[str, Any] = field(default_factory=dict)
    report: str | None = None
    # attribute weights and per-QI level bounds (docs/transformations.md)
    weights: dict[str, float] = field(default_factory=dict)
    min_level: dict[str, int] = field(default_factory=dict)
    max_level: dict[str, int] = field(default_factory=dict)
    # microaggregation (column -> mean | median) and local recoding
    microaggregate: dict[str, str] = field(default_factory=dict)
    local_recoding: bool = False
    local_iterations: int | None = None
    # more privacy models (sqlanon/privacy/options.py): recursive (c,l)-diversity (l_diversity:
    # recursive, c), hierarchical t-closeness (t_distance: hierarchical, t_hierarchy), k-map,
    # delta-presence (population table), SafePub differential privacy (epsilon, delta)
    c: float | None = None
    t_hierarchy: str | None = None
    k_map: int | None = None
    population: str | None = None
    population_size: int | None = None
    k_map_estimator: str | None = None  # poisson (default with population_size) | zero-truncated-poisson
    k_map_significance: float | None = None  # default 0.01 with population_size
    delta_min: float | None = None
    delta_max: float | None = None
    epsilon: float | None = None
    delta: float | None = None
    epsilon_search: float | None = None
    safepub_steps: int | None = None
    seed: int | None = None
    # re-identification risk in the report (docs/risk.md)
    population_fraction: float | None = None
    risk_threshold: float | None = None

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def from_file(cls, path: str) -> "Policy":
        if not os.path.isfile(path):
            raise ConfigError(f"policy file not found: {path}")
        from sqlanon.config.strict_load import load_yaml, read_text

        where = f"policy {path}"
        data = load_yaml(read_text(path, where), where)  # a key given twice is an error, at any depth
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"policy {path} must be a mapping of keys to values")
        base = os.path.dirname(os.path.abspath(path))
        policy = cls.from_dict(data, where=f"policy {path}")
        policy._resolve_paths(base)
        return policy

    @classmethod
    def from_dict(cls, data: dict, where: str = "policy") -> "Policy":
        policy = cls()
        policy.update(data, where)
        return policy

    def update(self, data: dict, where: str = "options") -> "Policy":
        known = set(self.keys())
        aliases = {"quasi_identifiers": "qi", "quasi-identifiers": "qi", "privacy": None}
        for raw_key, value in data.items():
            key = str(raw_key).replace("-", "_")
            if key in aliases and aliases[key]:
                key = aliases[key]
            if key == "privacy" and isinstance(value, dict):
                self.update(value, f"{where}: privacy")
                continue
            if key not in known:
                raise ConfigError(f"unknown key {raw_key!r} in {where}; known keys: {', '.join(sorted(known))}")
            if value is None:
                continue
            setattr(self, key, _coerce(key, value, where))
        return self

    def _resolve_paths(self, base: str) -> None:
        """Paths in a policy file are relative to it; URLs (``postgresql://...``) are left alone."""
        for key in ("input", "output", "database", "registry", "report"):
            value = getattr(self, key)
            if value and not os.path.isabs(value) and "://" not in value:
                setattr(self, key, os.path.join(base, value))
        self.qi = {c: (os.path.join(base, s) if _is_file_spec(s) and not os.path.isabs(s) else s) for c, s in self.qi.items()}
        if self.t_hierarchy and _is_file_spec(self.t_hierarchy) and not os.path.isabs(self.t_hierarchy):
            self.t_hierarchy = os.path.join(base, self.t_hierarchy)
        if self.population and not os.path.isabs(self.population) and os.path.exists(os.path.join(base, self.population)):
            self.population = os.path.join(base, self.population)  # a file beside the policy; else a table name
        prev = self.search_options.get("previous")
        if isinstance(prev, list):
            self.search_options["previous"] = [p if os.path.isabs(p) or p.isdigit() or not os.path.exists(os.path.join(base, p)) else os.path.join(base, p) for p in map(str, prev)]

    def validate(self) -> None:
        from sqlanon.metrics import METRICS
        from sqlanon.search import SEARCHES

        if self.engine is not None and self.engine not in ("duckdb", "postgres", "spark"):
            raise ConfigError(f"unknown engine {self.engine!r}; choose one of duckdb, postgres, spark")
        if (self.spark_master or self.spark_conf) and self.engine != "spark":
            raise ConfigError("--spark-master/--spark-conf need --engine spark")
        if not self.input and not (self.engine == "spark" and self.table):
            raise ConfigError("no input: give --input PATH (or input: in the policy)")
        if self.search not in SEARCHES:
            raise ConfigError(f"unknown search {self.search!r}; choose one of {', '.join(SEARCHES)}")
        if self.metric is not None and self.metric not in METRICS:
            raise ConfigError(f"unknown metric {self.metric!r}; choose one of {', '.join(METRICS)}")
        from sqlanon.config.checks import resolve_metric

        # a metric filled in by an earlier validate() is a default, not a metric given
        given = None if getattr(self, "_metric_defaulted", False) else self.metric
        self.metric = resolve_metric(self.search, given, self.class_column, self.search_options)
        self._metric_defaulted = given is None
        if self.epsilon is not None and self.k is not None:
            raise ConfigError("k is derived from epsilon and delta with SafePub (--epsilon): do not give --k")
        if self.k is None:
            if self.k_map is None and self.delta_min is None and self.delta_max is None and self.epsilon is None:
                raise ConfigError("k is required (--k K)")
            self.k = 1  # another model is asked for (k-map, delta-presence, SafePub): no k-anonymity on top
        from sqlanon.config.checks import check_policy

        check_policy(self)
        if self.max_value_length < 1:
            raise ConfigError(f"max_value_length must be at least 1 (characters), got {self.max_value_length}")
        if not 0.0 <= self.max_suppression <= 1.0:
            raise ConfigError(f"max_suppression must lie in [0, 1], got {self.max_suppression}")
        if self.suppression not in ("mask", "drop"):
            raise ConfigError(f"suppression must be mask or drop, got {self.suppression!r}")
        if self.l_diversity not in ("distinct", "entropy", "recursive"):
            raise ConfigError(f"l_diversity must be distinct, entropy or recursive, got {self.l_diversity!r}")
        from sqlanon.risk import validate_options

        validate_options(self.risk_threshold, self.population_fraction)
        from sqlanon.config.search_options import parse_search_options

        self.search_options = parse_search_options(self.search, self.search_options, "search_options")
        if not self.qi and not self.search_options.get("numeric"):
            raise ConfigError("no quasi-identifiers: give --qi COLUMN=HIERARCHY at least once")


_TYPES = {
    "k": int,
    "l": float,
    "t": float,
    "max_suppression": float,
    "threads": int,
    "max_value_length": int,
    "in_place": bool,
    "overwrite": bool,
    "local_recoding": bool,
    "local_iterations": int,
    "c": float,
    "k_map": int,
    "population_size": int,
    "k_map_significance": float,
    "delta_min": float,
    "delta_max": float,
    "epsilon": float,
    "delta": float,
    "epsilon_search": float,
    "safepub_steps": int,
    "seed": int,
    "population_fraction": float,
    "risk_threshold": float,
}

#: keys holding ``COLUMN -> value`` maps: a mapping, ``"a=1,b=2"`` or a list of ``"a=1"``
_PAIR_TYPES = {"weights": float, "min_level": int, "max_level": int, "microaggregate": str}


def parse_pairs(key: str, value, kind, where: str = "flags") -> dict:
    """``{column: value}`` from a mapping, ``"a=1,b=2"`` text or a list of ``"a=1"`` items."""
    items: list[tuple[str, object]] = []
    if isinstance(value, dict):
        items = [(str(c), v) for c, v in value.items()]
    else:
        for part in value if isinstance(value, (list, tuple)) else [value]:
            for item in str(part).split(","):
                if not item.strip():
                    continue
                column, sep, v = item.partition("=")
                if not sep or not column.strip() or not v.strip():
                    raise ConfigError(f"{key} in {where} wants COLUMN=VALUE, got {item.strip()!r}")
                items.append((column.strip(), v.strip()))
    out = {}
    for column, v in items:
        try:
            if isinstance(v, bool) or v is None:
                raise ValueError
            if kind is int and isinstance(v, float) and not v.is_integer():
                raise ValueError
            out[column] = kind(v) if kind is not str else str(v).strip().lower()
        except (TypeError, ValueError):
            raise ConfigError(f"bad value for {key} {column!r} in {where}: {v!r} is not {'an int' if kind is int else 'a number'}") from None
    return out


def _coerce(key: str, value, where: str):
    if key == "qi":
        if isinstance(value, dict):
            out = {}
            for c, spec in value.items():
                if isinstance(spec, dict):
                    unknown = set(spec) - {"hierarchy"}
                    if unknown:
                        raise ConfigError(f"unknown key {sorted(unknown)[0]!r} under qi.{c} in {where}")
                    spec = spec.get("hierarchy")
                if spec is None:
                    raise ConfigError(f"qi.{c} in {where} needs a hierarchy")
                if isinstance(spec, (dict, list, bool)):  # str() of it was then looked up as a file name
                    raise ConfigError(f"qi.{c} in {where}: a hierarchy is text (a file, a builder such as mask or bands:5,10, or table:NAME), got {spec!r}")
                out[str(c)] = spec if _is_hierarchy(spec) else str(spec)  # API: Hierarchy objects stay objects
            return out
        if isinstance(value, list):
            return parse_qi_flags([str(v) for v in value])
        raise ConfigError(f"qi in {where} must map columns to hierarchies")
    if key in _PAIR_TYPES:
        return parse_pairs(key, value, _PAIR_TYPES[key], where)
    if key == "spark_conf":
        from sqlanon.engine.spark_conf import parse_conf

        return parse_conf(value if isinstance(value, (dict, list, tuple)) else [value])
    if key in ("drop_columns", "keep_columns"):
        return [str(v) for v in (value if isinstance(value, list) else [value])]
    if key == "search_options":
        if not isinstance(value, dict):
            raise ConfigError(f"search_options in {where} must be a mapping")
        return {str(k).replace("-", "_"): v for k, v in value.items()}
    kind = _TYPES.get(key)
    if kind is None:
        if isinstance(value, (dict, list, tuple)):
            raise ConfigError(f"bad value for {key!r} in {where}: {value!r} is not a text")
        if not str(value).strip():  # ``--output ''`` is not "no output": a flag given is a flag used
            raise ConfigError(f"{_name(key, where)} is empty")
        return str(value)
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("true", "yes", "1"):
                return True
            if str(value).lower() in ("false", "no", "0"):
                return False
            raise ValueError
        if kind is int and (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        if isinstance(value, bool):  # ``k: true`` is not k=1
            raise ValueError
        out = kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"bad value for {key!r} in {where}: {value!r} is not a {kind.__name__}") from None
    if kind is float and not math.isfinite(out):  # ``--l inf``, ``--t nan``: no bound at all
        raise ConfigError(f"bad value for {_name(key, where, quote=True)}: {value!r} is not a finite number")
    return out


def _name(key: str, where: str, quote: bool = False) -> str:
    """How the user spelled ``key``: ``--output`` among flags, ``output in policy p.yaml`` else."""
    if where == "flags":
        return f"--{key.replace('_', '-')}"
    return f"{key!r} in {where}" if quote else f"{key} in {where}"


def parse_qi_flags(flags: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for flag in flags:
        column, sep, spec = flag.partition("=")
        if not sep or not column or not spec:
            raise ConfigError(f"--qi wants COLUMN=HIERARCHY, got {flag!r}")
        if column in out:
            raise ConfigError(f"--qi names column {column!r} twice ({column}={out[column]} and {flag}); give one hierarchy per column")
        out[column] = spec
    return out


def _is_hierarchy(spec) -> bool:
    from sqlanon.hierarchy import Hierarchy

    return isinstance(spec, Hierarchy)


def _is_file_spec(spec: str) -> bool:
    from sqlanon.hierarchy import BUILDERS

    if _is_hierarchy(spec):
        return False
    return spec.split(":")[0] not in (*BUILDERS, "table")
