"""The policy: everything a run is told, one nested pydantic model.

A policy has sections (:class:`SourcePolicy` where the table is, :class:`HierarchiesPolicy`,
:class:`PrivacyPolicy` the models and the suppression limit, :class:`StrategyPolicy` the search,
:class:`QualityPolicy` the metric, :class:`ReleasePolicy` what is written, :class:`RuntimePolicy`
the engine and its limits, :class:`ReportingPolicy`) and the quasi-identifiers ``qi``. Every leaf
key has one name, unique across sections, and a policy file may give it flat (``k: 5``, as files
always did) or under its section (``privacy: {k: 5}``); the CLI flag of the same name
(``--max-suppression`` is ``privacy.max_suppression``) is declared with its path in
:mod:`sqlanon.cli.app`. Unknown keys and bad values are one-line :class:`ConfigError` naming the key:

>>> p = Policy.from_dict({"k": 5, "privacy": {"max_suppression": 0.1}, "source": {"input": "a.csv"}})
>>> p.privacy.k, p.privacy.max_suppression, p.source.input
(5, 0.1, 'a.csv')
>>> Policy.from_dict({"privacy": {"kk": 5}})
Traceback (most recent call last):
...
sqlanon.errors.ConfigError: unknown key 'kk' in policy: privacy; privacy holds: average_risk, beta_likeness, c, delta, ...

``policy.k`` is ``policy.privacy.k`` (every leaf has a flat alias, typed, read and write) for code
written against the flat policy; new code names the section.
"""

from __future__ import annotations

import math
import os
import typing
from collections.abc import Iterator
from typing import Any, Generic, Optional, TypeVar, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    create_model,
    model_validator,
)

from sqlanon.errors import ConfigError
from sqlanon.privacy.keys import PolicyKey
from sqlanon.privacy.registry import POLICY_KEYS, check_choices, stands_in_for_k
from sqlanon.files.strict_load import load_yaml, read_text
from sqlanon.config.checks import check_policy, resolve_metric
from sqlanon.config.search_options import parse_search_options
from sqlanon.metrics import METRICS
from sqlanon.search.registry import SEARCHES
from sqlanon.risk import validate_options
from sqlanon.engine import ENGINES
from sqlanon.engine.spark_conf import parse_conf
from sqlanon.hierarchy import BUILDERS, Hierarchy
from sqlanon.hierarchy.nulls import EVERY as EVERY_QI, MODES as NULL_MODES

T = TypeVar("T")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class SourcePolicy(_Section):
    """Where the table to anonymize is."""

    input: str | None = Field(default=None, description="CSV file, Parquet file/folder/glob, .duckdb file, or postgresql:// URL (with --table).")
    format: str | None = Field(default=None, description="csv | parquet | duckdb | postgres (guessed from the name or URL).")
    delimiter: str | None = Field(default=None, description="CSV delimiter (default ,).")
    table: str | None = Field(default=None, description="Table to read from a .duckdb or postgresql:// input.")


class HierarchiesPolicy(_Section):
    """How the hierarchies of ``qi`` are read and how far a search may climb them."""

    hierarchy_delimiter: str | None = Field(default=None, description="Delimiter of hierarchy CSVs (sniffed when absent).")
    # sqlanon.hierarchy.MAX_VALUE_LENGTH: builders refuse longer values
    max_value_length: int = Field(default=4096, description="Longest value (characters) a hierarchy built from the data (mask, flat, bands, dates, numeric) takes; longer ones are an error (default 4096).", json_schema_extra={"minimum": 1})
    min_level: dict[str, int] = Field(default_factory=dict, description="Lowest level a lattice search may choose, COLUMN=LEVEL. Repeat.")
    max_level: dict[str, int] = Field(default_factory=dict, description="Highest level a lattice search may choose, COLUMN=LEVEL. Repeat.")
    nulls: dict[str, str] = Field(default_factory=dict, description="NULL in a quasi-identifier: value (default: NULL is a value of its hierarchy) | suppress (its rows are suppressed) | refuse (an error); MODE for every QI or COLUMN=MODE. Repeat.")


def _privacy_field(key: PolicyKey) -> tuple[Any, Any]:
    return key.annotation, Field(default=key.default, description=key.describe(), json_schema_extra=dict(key.schema) if key.schema else None)


#: The privacy models a release must meet, and the suppression limit (the row budget of the
#: requirement: ``floor(max_suppression * rows)`` rows may be suppressed): one field per key the
#: registered models declare (:data:`sqlanon.privacy.registry.POLICY_KEYS`), so adding a model adds
#: its keys here, to the JSON Schema and to the CLI without an edit in config/ or cli/.
if typing.TYPE_CHECKING:  # its fields come from the declarations: to mypy each reads as Any

    class PrivacyPolicy(_Section):
        def __getattr__(self, name: str) -> Any: ...
        def __setattr__(self, name: str, value: Any) -> None: ...

else:
    PrivacyPolicy = create_model(
        "PrivacyPolicy",
        __base__=_Section,
        __doc__="The privacy models a release must meet, and the suppression limit (the row budget of the\n    requirement: ``floor(max_suppression * rows)`` rows may be suppressed).",
        __module__=__name__,
        **{name: _privacy_field(key) for name, key in POLICY_KEYS.items()},
    )


class StrategyPolicy(_Section):
    """Which search finds the plan, with its options."""

    search: str = Field(default="optimal", description="optimal | samarati | incognito | lightning (heuristic, wide tables) | auto | bottom-up | top-down | genetic.")
    search_options: dict[str, Any] = Field(default_factory=dict, description="Options of the chosen search (see the per-search definitions).")
    local_recoding: bool = Field(default=False, description="Re-anonymize suppressed rows with more general transformations (ARX local recoding).")
    local_iterations: int | None = Field(default=None, description="Local recoding: at most N further transformations (default 10).", json_schema_extra={"minimum": 1})


class QualityPolicy(_Section):
    """What the search optimizes."""

    # default: the search's own (precision for the lattice searches)
    metric: str | None = Field(default=None, description="precision | height | lm | discernibility | aecs | cm | entropy | loss (ARX default) | loss-arithmetic | granularity (default: precision; genetic and bottom-up: lm; top-down takes none).")
    weights: dict[str, float] = Field(default_factory=dict, description="Attribute weights COLUMN=W (comma list or repeat) for precision, lm, entropy, height.")
    class_column: str | None = Field(default=None, description="The class attribute of classification metrics (cm) and of the bottom-up, top-down and genetic searches.")


class ReleasePolicy(_Section):
    """What is written, where, and how suppressed rows and extra columns are released."""

    output: str | None = Field(default=None, description="Write a Parquet (or .csv) file.")
    output_table: str | None = Field(default=None, description="Write a new table (into the input .duckdb, or --database).")
    database: str | None = Field(default=None, description=".duckdb file for --output-table with a file input.")
    in_place: bool = Field(default=False, description="Replace the input table, in one transaction.")
    overwrite: bool = Field(default=False, description="Replace an existing output file or table.")
    output_delimiter: str = Field(default=",", description="Delimiter of a CSV --output.")
    registry: str | None = Field(default=None, description="Registry database for file outputs (default: sqlanon_releases.duckdb beside the output).")
    suppression: str = Field(default="mask", description="mask (QIs set to *) | drop.")
    drop_columns: list[str] = Field(default_factory=list, description="Leave a column (e.g. a direct identifier) out of the release.")
    # columns unique per row (ids) kept in the release knowingly (else such a release is refused)
    keep_columns: list[str] = Field(default_factory=list, description="Release this column as is (its role: kept), even if its values are unique per row (otherwise refused). Repeat.")
    # every column has a role (sqlanon.run.columns): the unnamed ones are refused unless kept so
    keep_others: bool = Field(default=False, description="Release the columns the policy gives no role (not a QI, sensitive, kept or dropped) as they are, instead of refusing the run; a nearly unique one (90 % distinct) is still refused.")
    microaggregate: dict[str, str] = Field(default_factory=dict, description="Release a numeric column as its class mean or median, COLUMN=mean|median. Repeat.")
    # linked columns (sqlanon.release.linked): a function of a QI, released no finer than it
    linked: dict[str, str] = Field(default_factory=dict, description="A column that is a function of a QI (city of zip), COLUMN=QI: released where the QI's released value determines it, else *. Repeat.")
    keep_linked: list[str] = Field(default_factory=list, description="Release this column as is although it is a function of a QI (otherwise refused). Repeat.")
    # incremental releases (sqlanon.run.incremental)
    like_release: int | None = Field(default=None, description="Release this input (a new batch) with release N's transformation and hierarchies, k-anonymous with the lineage's earlier releases.", json_schema_extra={"minimum": 1})
    on_break: str | None = Field(default=None, description="With --like-release: rows of classes under k or with unseen values are suppress(ed, default) | hold (kept generalized in a holding table until their class reaches k) | refuse(d: nothing written).")
    lineage_check: str | None = Field(default=None, description="With --like-release: cumulative (default: every class of the lineage's union has >= k rows) | batch (each batch's released classes have >= k rows on their own too).")


class RuntimePolicy(_Section):
    """The engine that runs the SQL and its limits."""

    engine: str | None = Field(default=None, description="duckdb | postgres | spark (default: from the input).")
    memory_limit: str | None = Field(default=None, description="DuckDB memory_limit, e.g. 1GB (default: half the RAM); PostgreSQL work_mem, Spark spark.driver.memory. On every engine it also bounds the base frequency set this process fetches for the in-process path (over it: SQL on the engine; the report's local_route says which).")
    threads: int | None = Field(default=None, description="Threads of DuckDB or Spark (at most 4 per core).", json_schema_extra={"minimum": 1})
    spark_master: str | None = Field(default=None, description="Spark master URL (default local[*]); with --engine spark.")
    spark_conf: dict[str, str] = Field(default_factory=dict, description="Spark setting KEY=VALUE. Repeat; with --engine spark.")


class ReportingPolicy(_Section):
    """The HTML report and the risk figures in every report."""

    report: str | None = Field(default=None, description="Also write an HTML report here.")
    population_fraction: float | None = Field(default=None, description="Report: the input is this fraction of its population; estimate population uniques.")
    risk_threshold: float | None = Field(default=None, description="Report: prosecutor risk threshold (default 0.2).")
    full_paths: bool = Field(default=False, description="Report: show paths as given (absolute ones too); by default a report shows a path relative to the working directory, or its file name.")


#: section name -> its model, in the order a policy file lists them
SECTIONS: dict[str, type[_Section]] = {
    "source": SourcePolicy,
    "hierarchies": HierarchiesPolicy,
    "privacy": PrivacyPolicy,
    "strategy": StrategyPolicy,
    "quality": QualityPolicy,
    "release": ReleasePolicy,
    "runtime": RuntimePolicy,
    "reporting": ReportingPolicy,
}
#: leaf key -> its section (``qi`` has none: it is a field of the policy itself)
SECTION_OF: dict[str, str] = {key: name for name, model in SECTIONS.items() for key in model.model_fields}
#: other spellings of keys
ALIASES = {"quasi_identifiers": "qi"}
QI_HELP = "COLUMN=HIERARCHY (CSV path, YAML/JSON tree, bands:5,10,20, dates[:month,quarter,year,5y,decade], age:today,5,10,20, birth_year:5,10, mask, numeric, flat). Repeat."


class _Flat(property, Generic[T]):
    """``policy.k`` reads and writes ``policy.privacy.k``: one leaf's flat name. A ``property``
    subclass, so pydantic lets it set (it calls ``property.__set__``)."""

    def __init__(self, section: str, key: str) -> None:
        def get(obj: Any) -> T:
            return typing.cast(T, getattr(getattr(obj, section), key))

        def put(obj: Any, value: T) -> None:
            setattr(getattr(obj, section), key, value)

        super().__init__(get, put)
        self.section, self.key = section, key

    @overload
    def __get__(self, obj: None, owner: Any = None) -> _Flat[T]: ...
    @overload
    def __get__(self, obj: object, owner: Any = None) -> T: ...
    def __get__(self, obj: Any, owner: Any = None) -> Any:
        return self if obj is None else super().__get__(obj, owner)

    def __set__(self, obj: Any, value: T) -> None:
        super().__set__(obj, value)


class Policy(BaseModel):
    """Everything a run is told (see the module's docstring). Construct it from policy keys, flat
    or nested: ``Policy(input="a.csv", k=5)`` and ``Policy(source={"input": "a.csv"}, privacy={"k": 5})``
    are the same policy."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, title="sqlanon policy")

    source: SourcePolicy = Field(default_factory=lambda: SourcePolicy())
    # column -> hierarchy spec (text; the API also takes Hierarchy objects)
    qi: dict[str, Any] = Field(default_factory=dict, description=QI_HELP)
    hierarchies: HierarchiesPolicy = Field(default_factory=lambda: HierarchiesPolicy())
    privacy: PrivacyPolicy = Field(default_factory=lambda: PrivacyPolicy())
    strategy: StrategyPolicy = Field(default_factory=lambda: StrategyPolicy())
    quality: QualityPolicy = Field(default_factory=lambda: QualityPolicy())
    release: ReleasePolicy = Field(default_factory=lambda: ReleasePolicy())
    runtime: RuntimePolicy = Field(default_factory=lambda: RuntimePolicy())
    reporting: ReportingPolicy = Field(default_factory=lambda: ReportingPolicy())
    # a metric filled in by an earlier validate() is a default, not a metric given
    _metric_defaulted: bool = PrivateAttr(False)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:  # one line naming the key, like a policy file's
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"bad value for {key!r} in arguments: {first['msg']}, got {first.get('input')!r}") from None

    # -- the flat names of the leaves (tests check this list is every leaf, each once) ----------
    input = _Flat[Optional[str]]("source", "input")
    format = _Flat[Optional[str]]("source", "format")
    delimiter = _Flat[Optional[str]]("source", "delimiter")
    table = _Flat[Optional[str]]("source", "table")
    hierarchy_delimiter = _Flat[Optional[str]]("hierarchies", "hierarchy_delimiter")
    max_value_length = _Flat[int]("hierarchies", "max_value_length")
    min_level = _Flat[dict[str, int]]("hierarchies", "min_level")
    max_level = _Flat[dict[str, int]]("hierarchies", "max_level")
    nulls = _Flat[dict[str, str]]("hierarchies", "nulls")
    if typing.TYPE_CHECKING:  # the privacy section's flat names are made from its keys (below the class); typed here for mypy
        k = _Flat[Optional[int]]("privacy", "k")
        l = _Flat[Optional[float]]("privacy", "l")
        l_diversity = _Flat[str]("privacy", "l_diversity")
        c = _Flat[Optional[float]]("privacy", "c")
        t = _Flat[Optional[float]]("privacy", "t")
        t_distance = _Flat[str]("privacy", "t_distance")
        t_hierarchy = _Flat[Optional[str]]("privacy", "t_hierarchy")
        sensitive_column = _Flat[Optional[str]]("privacy", "sensitive_column")
        max_suppression = _Flat[float]("privacy", "max_suppression")
        k_map = _Flat[Optional[int]]("privacy", "k_map")
        population = _Flat[Optional[str]]("privacy", "population")
        population_size = _Flat[Optional[int]]("privacy", "population_size")
        k_map_estimator = _Flat[Optional[str]]("privacy", "k_map_estimator")
        k_map_significance = _Flat[Optional[float]]("privacy", "k_map_significance")
        delta_min = _Flat[Optional[float]]("privacy", "delta_min")
        delta_max = _Flat[Optional[float]]("privacy", "delta_max")
        epsilon = _Flat[Optional[float]]("privacy", "epsilon")
        delta = _Flat[Optional[float]]("privacy", "delta")
        epsilon_search = _Flat[Optional[float]]("privacy", "epsilon_search")
        safepub_steps = _Flat[Optional[int]]("privacy", "safepub_steps")
        seed = _Flat[Optional[int]]("privacy", "seed")
        beta_likeness = _Flat[Optional[float]]("privacy", "beta_likeness")
        delta_disclosure = _Flat[Optional[float]]("privacy", "delta_disclosure")
        average_risk = _Flat[Optional[float]]("privacy", "average_risk")
    search = _Flat[str]("strategy", "search")
    search_options = _Flat[dict[str, Any]]("strategy", "search_options")
    local_recoding = _Flat[bool]("strategy", "local_recoding")
    local_iterations = _Flat[Optional[int]]("strategy", "local_iterations")
    metric = _Flat[Optional[str]]("quality", "metric")
    weights = _Flat[dict[str, float]]("quality", "weights")
    class_column = _Flat[Optional[str]]("quality", "class_column")
    output = _Flat[Optional[str]]("release", "output")
    output_table = _Flat[Optional[str]]("release", "output_table")
    database = _Flat[Optional[str]]("release", "database")
    in_place = _Flat[bool]("release", "in_place")
    overwrite = _Flat[bool]("release", "overwrite")
    output_delimiter = _Flat[str]("release", "output_delimiter")
    registry = _Flat[Optional[str]]("release", "registry")
    suppression = _Flat[str]("release", "suppression")
    drop_columns = _Flat[list[str]]("release", "drop_columns")
    keep_columns = _Flat[list[str]]("release", "keep_columns")
    keep_others = _Flat[bool]("release", "keep_others")
    microaggregate = _Flat[dict[str, str]]("release", "microaggregate")
    linked = _Flat[dict[str, str]]("release", "linked")
    keep_linked = _Flat[list[str]]("release", "keep_linked")
    like_release = _Flat[Optional[int]]("release", "like_release")
    on_break = _Flat[Optional[str]]("release", "on_break")
    lineage_check = _Flat[Optional[str]]("release", "lineage_check")
    engine = _Flat[Optional[str]]("runtime", "engine")
    memory_limit = _Flat[Optional[str]]("runtime", "memory_limit")
    threads = _Flat[Optional[int]]("runtime", "threads")
    spark_master = _Flat[Optional[str]]("runtime", "spark_master")
    spark_conf = _Flat[dict[str, str]]("runtime", "spark_conf")
    report = _Flat[Optional[str]]("reporting", "report")
    population_fraction = _Flat[Optional[float]]("reporting", "population_fraction")
    risk_threshold = _Flat[Optional[float]]("reporting", "risk_threshold")
    full_paths = _Flat[bool]("reporting", "full_paths")

    @model_validator(mode="before")
    @classmethod
    def _nest(cls, data: Any) -> Any:
        """Flat or nested keys into the nested shape (the values are typed by pydantic; text from
        files and flags goes through :meth:`update`, which coerces it)."""
        if not isinstance(data, dict):
            return data
        nested: dict[str, Any] = {}
        for key, value in _entries(data, "arguments", coerce=False):
            if key in SECTIONS and key not in SECTION_OF:
                nested[key] = value  # a section given whole (a model, or its mapping at construction)
            elif key == "qi":
                nested["qi"] = value
            else:
                nested.setdefault(SECTION_OF[key], {})[key] = value
        return nested

    @classmethod
    def keys(cls) -> list[str]:
        """Every leaf key (the flat names), ``qi`` first."""
        return ["qi", *SECTION_OF]

    @classmethod
    def from_file(cls, path: str) -> Policy:
        if not os.path.isfile(path):
            raise ConfigError(f"policy file not found: {path}")

        where = f"policy {path}"
        data = load_yaml(read_text(path, where), where)  # a key given twice is an error, at any depth
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"policy {path} must be a mapping of keys to values")
        policy = cls.from_dict(data, where=where)
        policy._resolve_paths(os.path.dirname(os.path.abspath(path)))
        return policy

    @classmethod
    def from_dict(cls, data: dict, where: str = "policy") -> Policy:
        policy = cls()
        policy.update(data, where)
        return policy

    def update(self, data: dict, where: str = "options") -> Policy:
        """Set the keys of ``data`` (flat or under their sections), coerced; later wins over earlier."""
        for key, value in _entries(data, where):
            self.set(key, value)
        return self

    def set(self, key: str, value: Any) -> None:
        """Set one leaf (already coerced) by its flat name."""
        if key == "qi":
            self.qi = value
        else:
            setattr(getattr(self, SECTION_OF[key]), key, value)

    def get(self, key: str) -> Any:
        return self.qi if key == "qi" else getattr(getattr(self, SECTION_OF[key]), key)

    def flat(self) -> dict[str, Any]:
        """Every leaf by its flat name (the registry and the report record a policy so)."""
        return {key: self.get(key) for key in self.keys()}

    def _resolve_paths(self, base: str) -> None:
        """Paths in a policy file are relative to it; URLs (``postgresql://...``) are left alone."""
        for section, key in (("source", "input"), ("release", "output"), ("release", "database"), ("release", "registry"), ("reporting", "report")):
            part = getattr(self, section)
            value = getattr(part, key)
            if value and not os.path.isabs(value) and "://" not in value:
                setattr(part, key, os.path.join(base, value))
        self.qi = {c: (os.path.join(base, s) if _is_file_spec(s) and not os.path.isabs(s) else s) for c, s in self.qi.items()}
        privacy = self.privacy
        if privacy.t_hierarchy and _is_file_spec(privacy.t_hierarchy) and not os.path.isabs(privacy.t_hierarchy):
            privacy.t_hierarchy = os.path.join(base, privacy.t_hierarchy)
        if privacy.population and not os.path.isabs(privacy.population) and os.path.exists(os.path.join(base, privacy.population)):
            privacy.population = os.path.join(base, privacy.population)  # a file beside the policy; else a table name
        options = self.strategy.search_options
        prev = options.get("previous")
        if isinstance(prev, list):
            options["previous"] = [p if os.path.isabs(p) or p.isdigit() or not os.path.exists(os.path.join(base, p)) else os.path.join(base, p) for p in map(str, prev)]

    def validate(self) -> None:  # type: ignore[override]  # pydantic's deprecated classmethod of this name is not used
        """Check the policy as a whole (before anything is opened) and fill in the defaults that
        depend on other keys (the search's metric, k=1 under another model)."""
        self._validate_runtime()
        self._validate_strategy()
        self._validate_privacy()

        check_policy(self)
        self._validate_values()

        self.strategy.search_options = parse_search_options(self.strategy.search, self.strategy.search_options, "search_options")
        if not self.qi and not self.strategy.search_options.get("numeric"):
            raise ConfigError("no quasi-identifiers: give --qi COLUMN=HIERARCHY at least once")

    def _validate_runtime(self) -> None:
        runtime, source = self.runtime, self.source
        if runtime.engine is not None and runtime.engine not in ENGINES:
            raise ConfigError(f"unknown engine {runtime.engine!r}; choose one of {', '.join(ENGINES)}")
        if (runtime.spark_master or runtime.spark_conf) and runtime.engine != "spark":
            raise ConfigError("--spark-master/--spark-conf need --engine spark")
        if not source.input and not (runtime.engine == "spark" and source.table):
            raise ConfigError("no input: give --input PATH (or input: in the policy)")

    def _validate_strategy(self) -> None:
        strategy, quality = self.strategy, self.quality
        if strategy.search not in SEARCHES:
            raise ConfigError(f"unknown search {strategy.search!r}; choose one of {', '.join(sorted(SEARCHES))}")
        if quality.metric is not None and quality.metric not in METRICS:
            raise ConfigError(f"unknown metric {quality.metric!r}; choose one of {', '.join(METRICS)}")

        given = None if self._metric_defaulted else quality.metric
        quality.metric = resolve_metric(strategy.search, given, quality.class_column, strategy.search_options)
        self._metric_defaulted = given is None

    def _validate_privacy(self) -> None:
        privacy = self.privacy
        if privacy.epsilon is not None and privacy.k is not None:
            raise ConfigError("k is derived from epsilon and delta with SafePub (--epsilon): do not give --k")
        if privacy.k is None:
            if not stands_in_for_k(self) and privacy.epsilon is None:
                raise ConfigError("k is required (--k K)")
            privacy.k = 1  # another model is asked for (k-map, delta-presence, SafePub): no k-anonymity on top

    def _validate_values(self) -> None:
        if self.hierarchies.max_value_length < 1:
            raise ConfigError(f"max_value_length must be at least 1 (characters), got {self.hierarchies.max_value_length}")
        privacy = self.privacy
        if not 0.0 <= privacy.max_suppression <= 1.0:
            raise ConfigError(f"max_suppression must lie in [0, 1], got {privacy.max_suppression}")
        if self.release.suppression not in ("mask", "drop"):
            raise ConfigError(f"suppression must be mask or drop, got {self.release.suppression!r}")
        check_choices(privacy)

        validate_options(self.reporting.risk_threshold, self.reporting.population_fraction)


# the privacy section's flat names (``policy.k``), one per key the models declare
for _key in POLICY_KEYS:
    setattr(Policy, _key, _Flat("privacy", _key))


# ------------------------------------------------------------------------------------------------
# reading keys: flat or nested, each coerced to its field's type


def _entries(data: dict, where: str, section: str | None = None, seen: dict[str, str] | None = None, coerce: bool = True) -> Iterator[tuple[str, Any]]:
    """``(leaf key, value)`` for every key of ``data`` (coerced to the leaf's type unless
    ``coerce=False``), a section's mapping read in place; an unknown key, a key of another section,
    and a key given twice are refused naming it."""
    seen = {} if seen is None else seen
    for raw_key, value in data.items():
        key = str(raw_key).replace("-", "_")
        key = ALIASES.get(key, key)
        if key in SECTIONS and key not in SECTION_OF and section is None:
            if isinstance(value, BaseModel) and not coerce:
                yield key, value
                continue
            if not isinstance(value, dict):
                raise ConfigError(f"{key} in {where} must be a mapping of its keys ({', '.join(sorted(SECTIONS[key].model_fields))})")
            yield from _entries(value, f"{where}: {key}", key, seen, coerce)
            continue
        _check_key(raw_key, key, where, section)
        if key in seen:
            raise ConfigError(f"key {key!r} given twice in {where} (also in {seen[key]})")
        seen[key] = where
        if value is None:
            continue
        yield key, _coerce(key, value, where) if coerce else value


def _check_key(raw_key: Any, key: str, where: str, section: str | None) -> None:
    if key != "qi" and key not in SECTION_OF:
        if section is not None:
            raise ConfigError(f"unknown key {raw_key!r} in {where}; {section} holds: {', '.join(sorted(SECTIONS[section].model_fields))}")
        raise ConfigError(f"unknown key {raw_key!r} in {where}; known keys: {', '.join(sorted([*Policy.keys(), *SECTIONS]))}")
    # a section holds its own keys; ``privacy:`` also groups the others, as policy files always could
    if section is not None and section != "privacy" and SECTION_OF.get(key) != section:
        raise ConfigError(f"key {raw_key!r} in {where} belongs under {SECTION_OF.get(key, 'the top level')}, not {section}")


#: keys holding ``COLUMN -> value`` maps: a mapping, ``"a=1,b=2"`` or a list of ``"a=1"``
_PAIR_TYPES: dict[str, type] = {"weights": float, "min_level": int, "max_level": int, "microaggregate": str}


def _kind(key: str) -> type:
    """The scalar type of a leaf, read from its field's annotation (``Optional[int]`` -> int)."""
    annotation = SECTIONS[SECTION_OF[key]].model_fields[key].annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    kind: Any = args[0] if args else annotation
    for scalar in (bool, int, float):
        if kind is scalar:
            return scalar
    return str


def parse_pairs(key: str, value: Any, kind: type, where: str = "flags") -> dict:
    """``{column: value}`` from a mapping, ``"a=1,b=2"`` text or a list of ``"a=1"`` items."""
    items = [(str(c), v) for c, v in value.items()] if isinstance(value, dict) else _pair_items(key, value, where)
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


def _pair_items(key: str, value: Any, where: str) -> list[tuple[str, object]]:
    items: list[tuple[str, object]] = []
    for part in value if isinstance(value, (list, tuple)) else [value]:
        for item in str(part).split(","):
            if not item.strip():
                continue
            column, sep, v = item.partition("=")
            if not sep or not column.strip() or not v.strip():
                raise ConfigError(f"{key} in {where} wants COLUMN=VALUE, got {item.strip()!r}")
            items.append((column.strip(), v.strip()))
    return items


def _coerce(key: str, value: Any, where: str) -> Any:
    """``value`` as the type of leaf ``key`` (text from a flag or a file), or a ConfigError naming it."""
    special = _SPECIAL.get(key)
    if special is not None:
        return special(key, value, where)
    if key in _PAIR_TYPES:
        return parse_pairs(key, value, _PAIR_TYPES[key], where)
    kind = _kind(key)
    if kind is str:
        return _coerce_text(key, value, where)
    return _coerce_scalar(key, value, kind, where)


def _coerce_qi(key: str, value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, list):
        return parse_qi_flags([str(v) for v in value])
    if not isinstance(value, dict):
        raise ConfigError(f"qi in {where} must map columns to hierarchies")
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


def _coerce_nulls(key: str, value: Any, where: str) -> dict[str, str]:
    """``nulls``: one mode for every QI (``refuse``), ``COLUMN=MODE`` pairs, or both mixed
    (``refuse,zip=value``); a bare mode is the key ``*`` (:mod:`sqlanon.hierarchy.nulls`)."""
    if isinstance(value, dict):
        out = parse_pairs(key, value, str, where)
    else:
        out = {}
        for part in value if isinstance(value, (list, tuple)) else [value]:
            for item in str(part).split(","):
                if item.strip() and "=" not in item:
                    out[EVERY_QI] = item.strip().lower()
                elif item.strip():
                    out.update(parse_pairs(key, item, str, where))
    bad = {c: m for c, m in out.items() if m not in NULL_MODES}
    if bad:
        column, mode = next(iter(bad.items()))
        raise ConfigError(f"bad value for nulls {column!r} in {where}: {mode!r}; write {' | '.join(NULL_MODES)}")
    return out


def _coerce_spark_conf(key: str, value: Any, where: str) -> dict[str, str]:
    return parse_conf(value if isinstance(value, (dict, list, tuple)) else [value])


def _coerce_columns(key: str, value: Any, where: str) -> list[str]:
    return [str(v) for v in (value if isinstance(value, list) else [value])]


def _coerce_linked(key: str, value: Any, where: str) -> dict[str, str]:
    """``{column: qi}`` from a mapping, ``"city=zip,state=zip"`` or a list of ``"city=zip"`` (names kept as spelled)."""
    items = [(str(c), v) for c, v in value.items()] if isinstance(value, dict) else _pair_items(key, value, where)
    for column, qi in items:
        if not isinstance(qi, str) or not qi.strip():
            raise ConfigError(f"bad value for {key} {column!r} in {where}: {qi!r} is not a column name")
    return {column: str(qi).strip() for column, qi in items}


def _coerce_search_options(key: str, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"search_options in {where} must be a mapping")
    return {str(k).replace("-", "_"): v for k, v in value.items()}


_SPECIAL = {
    "qi": _coerce_qi,
    "spark_conf": _coerce_spark_conf,
    "drop_columns": _coerce_columns,
    "keep_columns": _coerce_columns,
    "linked": _coerce_linked,
    "keep_linked": _coerce_columns,
    "search_options": _coerce_search_options,
    "nulls": _coerce_nulls,
}


def _coerce_text(key: str, value: Any, where: str) -> str:
    if isinstance(value, (dict, list, tuple)):
        raise ConfigError(f"bad value for {key!r} in {where}: {value!r} is not a text")
    if not str(value).strip():  # ``--output ''`` is not "no output": a flag given is a flag used
        raise ConfigError(f"{_name(key, where)} is empty")
    return str(value)


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise ValueError


def _coerce_scalar(key: str, value: Any, kind: type, where: str) -> Any:
    try:
        if kind is bool:
            return _to_bool(value)
        if isinstance(value, bool) or (kind is int and isinstance(value, float) and not value.is_integer()):
            raise ValueError  # ``k: true`` is not k=1; ``k: 2.5`` is not k=2
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


def _is_hierarchy(spec: Any) -> bool:
    return isinstance(spec, Hierarchy)


def _is_file_spec(spec: Any) -> bool:
    if _is_hierarchy(spec):
        return False
    return str(spec).split(":")[0] not in (*BUILDERS, "table")
