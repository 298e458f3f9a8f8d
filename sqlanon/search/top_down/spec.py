"""``--search top-down`` as the registry knows it: options, its own measure, its preflight."""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from sqlanon.errors import ConfigError
from sqlanon.search.bottom_up.spec import FLEXIBLE_HONOURS
from sqlanon.search.options import Items, Names, SearchOptions
from sqlanon.search.spec import SearchSpec


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


def preflight(policy, levels) -> None:
    """Y is required (the attributes X must not be linked to)."""
    if not policy.search_options.get("y"):
        raise ConfigError("--y is required for --search top-down (the attributes X must not be linked to)")


TOP_DOWN = SearchSpec(
    "top-down", "sqlanon.search.top_down.planner:run", TopDownOptions,
    metrics=(), measure="InfoGain / (PrivLoss + 1), reported as distortion",  # reported as distortion
    honours=FLEXIBLE_HONOURS, per_value=True, preflight="sqlanon.search.top_down.spec:preflight",
)
