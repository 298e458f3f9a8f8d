"""JSON Schemas of the policy file and of the ``--json`` report (``sqlanon schema policy|report``).

Both are generated: the policy schema from the :class:`~sqlanon.config.policy.Policy` model (its
fields' descriptions and bounds, value sets from the registries of searches and metrics, and
``search_options`` per search from :mod:`sqlanon.config.search_options`), the report schema from
:mod:`sqlanon.report.model`. The copies checked in under ``schemas/`` are compared with the
generated ones by the tests; after changing a policy key, a search, a metric or a report key, run::

    sqlanon schema policy --output schemas/policy.schema.json
    sqlanon schema report --output schemas/report.schema.json
"""

from __future__ import annotations

import json
import typing
from typing import Any
from sqlanon.metrics import METRICS
from sqlanon.search.registry import SEARCHES
from sqlanon.engine import ENGINES
from sqlanon.engine.source import FORMATS
from sqlanon.config.search_options import SEARCH_OPTIONS, SearchOptions
from sqlanon.config.policy import Policy, QI_HELP, SECTIONS
from sqlanon.report.model import Report
from sqlanon.errors import ConfigError

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS = ("policy", "report")

_NUMBER_OR_TEXT = {"anyOf": [{"type": "number"}, {"type": "string"}]}

#: policy keys whose schema is not their Python type (they accept several spellings)
_PAIRS_HELP = "COLUMN: VALUE mapping, 'a=1,b=2' text or a list of 'a=1' items"


def _pairs(value_schema: dict) -> dict:
    return {
        "anyOf": [
            {"type": "object", "additionalProperties": value_schema},
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}},
        ]
    }


def _python_type_schema(annotation: Any) -> dict:
    """JSON Schema of a simple annotation (str, int, float, bool, Optional of those, list/dict of str)."""
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)) and args:
        inner = [_python_type_schema(a) for a in args]
        return inner[0] if len(inner) == 1 else {"anyOf": inner}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if origin is list:
        return {"type": "array", "items": _python_type_schema(args[0]) if args else {}}
    if origin is dict:
        return {"type": "object", "additionalProperties": _python_type_schema(args[1]) if len(args) > 1 else {}}
    from pydantic import TypeAdapter

    return TypeAdapter(annotation).json_schema()


def _special(key: str) -> dict | None:
    hierarchy = {"type": "string", "description": "A hierarchy spec: CSV/YAML/JSON path, bands:W1,W2,..., dates[:LEVEL,...], age:REFERENCE,W1,..., birth_year:W1,..., mask, numeric, flat or table:NAME."}
    specials: dict[str, dict] = {
        "qi": {
            "anyOf": [
                {"type": "object", "additionalProperties": {"anyOf": [hierarchy, {"type": "object", "properties": {"hierarchy": hierarchy}, "required": ["hierarchy"], "additionalProperties": False}]}},
                {"type": "array", "items": {"type": "string", "description": "COLUMN=HIERARCHY"}},
            ]
        },
        "search": {"enum": sorted(SEARCHES)},
        "metric": {"enum": list(METRICS)},
        "suppression": {"enum": ["mask", "drop"]},
        "l_diversity": {"enum": ["distinct", "entropy", "recursive"]},
        "t_distance": {"enum": ["equal", "ordered", "hierarchical"]},
        "engine": {"enum": list(ENGINES)},
        "format": {"enum": list(FORMATS)},
        "drop_columns": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
        "keep_columns": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
        "keep_linked": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
        "linked": _pairs({"type": "string"}),
        "weights": _pairs({"type": "number", "minimum": 0}),
        "min_level": _pairs({"type": "integer", "minimum": 0}),
        "max_level": _pairs({"type": "integer", "minimum": 0}),
        "microaggregate": _pairs({"enum": ["mean", "median"]}),
        "nulls": _pairs({"enum": ["value", "suppress", "refuse"]}),
        "search_options": {"type": "object"},
    }
    return specials.get(key)


def _leaf(model: Any, key: str) -> dict:
    """The schema of one leaf: its value set or spellings where it has several (``_special``), else
    its type; with the field's description, schema extras (bounds) and scalar default."""
    field = model.model_fields[key]
    schema = dict(_special(key) or _python_type_schema(field.annotation))
    schema.update(field.json_schema_extra or {})
    if field.description and "description" not in schema:
        schema["description"] = field.description
    if field.default is not None and not callable(field.default_factory) and isinstance(field.default, (str, int, float, bool)):
        schema["default"] = field.default
    return schema


def _search_options_conditions(defs: dict) -> list[dict]:
    """``search_options`` holds the options of the chosen search: one if/then per search, for the
    flat keys and for the ``strategy:`` section."""
    conditions = []
    for name in sorted(SEARCHES):
        model = SEARCH_OPTIONS.get(name, SearchOptions)
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        for sub_name, sub in schema.pop("$defs", {}).items():
            defs[sub_name] = sub
        def_name = f"search_options_{name.replace('-', '_')}"
        defs[def_name] = schema
        then = {"properties": {"search_options": {"$ref": f"#/$defs/{def_name}"}}}
        when: dict = {"properties": {"search": {"const": name}}, "required": ["search"]}
        if name == "optimal":  # the default search
            when = {"anyOf": [when, {"not": {"required": ["search"]}}]}
        conditions.append({"if": when, "then": then})
        conditions.append({"if": {"properties": {"strategy": when}, "required": ["strategy"]}, "then": {"properties": {"strategy": then}}})
    return conditions


def policy_schema() -> dict:
    """The JSON Schema of a policy file (YAML or JSON), generated from the
    :class:`~sqlanon.config.policy.Policy` model: every leaf key flat (as files always gave them),
    the same keys under their sections, and the options each search reads under ``search_options``."""
    props: dict[str, dict] = {}
    for model in SECTIONS.values():
        for key in model.model_fields:
            props[key] = _leaf(model, key)
    props = {"qi": {**(_special("qi") or {}), "description": QI_HELP}, **props}
    props["quasi_identifiers"] = {"$ref": "#/properties/qi", "description": "Another name for qi."}
    for name, model in SECTIONS.items():
        keys = list(model.model_fields)
        if name == "privacy":  # the privacy keys grouped, as files always could, with the suppression method
            keys.append("suppression")
        props[name] = {
            "type": "object",
            "description": " ".join((model.__doc__ or name).split()) + f" The keys of the {name} section, which may also be given at the top level.",
            "properties": {k: {"$ref": f"#/properties/{k}"} for k in keys},
            "additionalProperties": False,
        }
    defs: dict[str, dict] = {}
    conditions = _search_options_conditions(defs)
    assert set(Policy.keys()) <= set(props)
    return {
        "$schema": SCHEMA_DRAFT,
        "$id": "https://sqlanon.dev/schemas/policy.schema.json",
        "title": "sqlanon policy file",
        "description": "Keys of a sqlanon policy file (YAML or JSON), flat or under their sections (privacy: {k: 5}); a key is also a flag of 'sqlanon anonymize' of the same name (--max-suppression), flags win. Paths are relative to the file.",
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        "allOf": conditions,
        "$defs": defs,
    }


def report_schema() -> dict:
    """The JSON Schema of the ``sqlanon anonymize --json`` report (``Release.to_dict()``)."""
    schema = Report.model_json_schema()
    return {"$schema": SCHEMA_DRAFT, "$id": "https://sqlanon.dev/schemas/report.schema.json", **schema}


def schema(name: str) -> dict:
    if name == "policy":
        return policy_schema()
    if name == "report":
        return report_schema()

    raise ConfigError(f"unknown schema {name!r}; choose one of {', '.join(SCHEMAS)}")


def dumps(schema_dict: dict) -> str:
    return json.dumps(schema_dict, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
