"""JSON Schemas of the policy file and of the ``--json`` report (``sqlanon schema policy|report``).

Both are generated: the policy schema from the :class:`~sqlanon.config.policy.Policy` keys (descriptions
from the CLI flags' help, value sets from the registries of searches and metrics, and
``search_options`` per search from :mod:`sqlanon.config.search_options`), the report schema from
:mod:`sqlanon.report.model`. The copies checked in under ``schemas/`` are compared with the
generated ones by the tests; after changing a policy key, a search, a metric or a report key, run::

    sqlanon schema policy --output schemas/policy.schema.json
    sqlanon schema report --output schemas/report.schema.json
"""

from __future__ import annotations

import inspect
import json
import typing
from dataclasses import MISSING, fields
from typing import Any

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


def _flag_help() -> dict[str, str]:
    """Policy key -> the help text of its ``sqlanon anonymize`` flag."""
    from sqlanon.cli import app as cli

    out = {}
    for name, param in inspect.signature(cli.anonymize).parameters.items():
        info = param.default
        text = getattr(info, "help", None)
        if not text:
            continue
        key = {"drop_column": "drop_columns", "keep_column": "keep_columns"}.get(name, name)
        decls = [d for d in getattr(info, "param_decls", ()) if d.startswith("--")]
        out[key] = f"{text} (flag {decls[0]})" if decls else text
    return out


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
    from sqlanon.metrics import METRICS
    from sqlanon.search import SEARCHES
    from sqlanon.engine.source import FORMATS

    hierarchy = {"type": "string", "description": "A hierarchy spec: CSV/YAML/JSON path, bands:W1,W2,..., dates, mask, numeric, flat or table:NAME."}
    specials: dict[str, dict] = {
        "qi": {
            "anyOf": [
                {"type": "object", "additionalProperties": {"anyOf": [hierarchy, {"type": "object", "properties": {"hierarchy": hierarchy}, "required": ["hierarchy"], "additionalProperties": False}]}},
                {"type": "array", "items": {"type": "string", "description": "COLUMN=HIERARCHY"}},
            ]
        },
        "k": {"type": "integer", "minimum": 1},
        "l": {"type": "number", "exclusiveMinimum": 0},
        "t": {"type": "number", "minimum": 0},
        "max_suppression": {"type": "number", "minimum": 0, "maximum": 1},
        "threads": {"type": "integer", "minimum": 1},
        "max_value_length": {"type": "integer", "minimum": 1},
        "local_iterations": {"type": "integer", "minimum": 1},
        "search": {"enum": list(SEARCHES)},
        "metric": {"enum": list(METRICS)},
        "suppression": {"enum": ["mask", "drop"]},
        "l_diversity": {"enum": ["distinct", "entropy"]},
        "t_distance": {"enum": ["equal", "ordered"]},
        "format": {"enum": list(FORMATS)},
        "drop_columns": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
        "keep_columns": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}]},
        "weights": _pairs({"type": "number", "minimum": 0}),
        "min_level": _pairs({"type": "integer", "minimum": 0}),
        "max_level": _pairs({"type": "integer", "minimum": 0}),
        "microaggregate": _pairs({"enum": ["mean", "median"]}),
        "search_options": {"type": "object", "description": "Options of the chosen search (see the per-search definitions)."},
    }
    return specials.get(key)


def policy_schema() -> dict:
    """The JSON Schema of a policy file (YAML or JSON): its keys, their types, and the options each
    search reads under ``search_options``."""
    from sqlanon.config.search_options import SEARCH_OPTIONS, SearchOptions
    from sqlanon.config.policy import Policy
    from sqlanon.search import SEARCHES

    hints = typing.get_type_hints(Policy)
    helps = _flag_help()
    props: dict[str, dict] = {}
    for f in fields(Policy):
        if f.name.startswith("_"):
            continue
        schema = dict(_special(f.name) or _python_type_schema(hints[f.name]))
        if f.name in helps and "description" not in schema:
            schema["description"] = helps[f.name]
        if f.default is not MISSING and f.default is not None and not isinstance(f.default, (dict, list)):
            schema["default"] = f.default
        props[f.name] = schema
    props["quasi_identifiers"] = {"$ref": "#/properties/qi", "description": "Another name for qi."}
    privacy_keys = [k for k in ("k", "l", "l_diversity", "t", "t_distance", "max_suppression", "suppression", "sensitive_column") if k in props]
    props["privacy"] = {
        "type": "object",
        "description": "The privacy keys may also be grouped here.",
        "properties": {k: {"$ref": f"#/properties/{k}"} for k in privacy_keys},
        "additionalProperties": False,
    }
    defs: dict[str, dict] = {}
    conditions = []
    for name in SEARCHES:
        model = SEARCH_OPTIONS.get(name, SearchOptions)
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        for sub_name, sub in schema.pop("$defs", {}).items():
            defs[sub_name] = sub
        def_name = f"search_options_{name.replace('-', '_')}"
        defs[def_name] = schema
        when: dict = {"properties": {"search": {"const": name}}, "required": ["search"]}
        if name == "optimal":  # the default search
            when = {"anyOf": [when, {"not": {"required": ["search"]}}]}
        conditions.append({"if": when, "then": {"properties": {"search_options": {"$ref": f"#/$defs/{def_name}"}}}})
    return {
        "$schema": SCHEMA_DRAFT,
        "$id": "https://sqlanon.dev/schemas/policy.schema.json",
        "title": "sqlanon policy file",
        "description": "Keys of a sqlanon policy file (YAML or JSON); every key is also a flag of 'sqlanon anonymize' (flags win). Paths are relative to the file.",
        "type": "object",
        "properties": props,
        "additionalProperties": False,
        "allOf": conditions,
        "$defs": defs,
    }


def report_schema() -> dict:
    """The JSON Schema of the ``sqlanon anonymize --json`` report (``Release.to_dict()``)."""
    from sqlanon.report.model import Report

    schema = Report.model_json_schema()
    return {"$schema": SCHEMA_DRAFT, "$id": "https://sqlanon.dev/schemas/report.schema.json", **schema}


def schema(name: str) -> dict:
    if name == "policy":
        return policy_schema()
    if name == "report":
        return report_schema()
    from sqlanon.errors import ConfigError

    raise ConfigError(f"unknown schema {name!r}; choose one of {', '.join(SCHEMAS)}")


def dumps(schema_dict: dict) -> str:
    return json.dumps(schema_dict, indent=2, sort_keys=False, ensure_ascii=False) + "\n"
