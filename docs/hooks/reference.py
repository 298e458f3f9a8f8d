"""mkdocs hook: pages generated from the code at build time.

A page holding one of these markers gets it replaced when the site is built:

* ``<!-- generated: cli -->`` — the CLI reference, from the click command tree of the typer app
  (``typer.main.get_command(sqlanon.cli.app.app)``): every command and sub-command with its usage,
  help, arguments and options (with their help panels, in the order ``--help`` shows them);
* ``<!-- generated: policy -->`` — the policy reference, from the JSON Schema of the pydantic
  policy model (``sqlanon.config.schema.schema("policy")``, the same as
  ``schemas/policy.schema.json``);
* ``<!-- generated: bench-results -->`` — every file of ``bench/results/`` (Markdown inline, text
  in a collapsible block, images shown).

The checkout holding this file is put first on ``sys.path``, so the site documents that checkout.
"""

from __future__ import annotations

import html
import json
import os
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
RESULTS_URI = "bench-results"
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


# ---------------------------------------------------------------- helpers


def _cell(text: Any) -> str:
    """Text for one Markdown table cell: one line, pipes escaped."""
    out = " ".join(str(text).split())
    return out.replace("|", "\\|")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`" if text else ""


# ---------------------------------------------------------------- CLI


def _param_row(param: Any, ctx: Any) -> str:
    """One table row: the option's names and value, as ``--help`` prints them, its help panel and
    its help."""
    record = param.get_help_record(ctx)
    if record is None:  # an argument without help
        name = getattr(param, "human_readable_name", None) or (param.name or "").upper()
        record = (name, "argument" + (", required" if param.required else ""))
    names, help_text = record
    if getattr(param, "multiple", False) and param.param_type_name == "option":
        help_text = f"{help_text} (repeatable)"
    panel = getattr(param, "rich_help_panel", None) or ""
    return f"| {_code(_cell(names))} | {_cell(panel)} | {_cell(help_text)} |"


def _command_md(cmd: Any, path: list[str], parent_ctx: Any, out: list[str]) -> None:
    # typer ships its own copy of click (typer._click): use the command's own Context class
    ctx = cmd.context_class(cmd, info_name=path[-1], parent=parent_ctx)
    level = min(len(path) + 1, 4)
    out.append(f"{'#' * level} `{' '.join(path)}`\n")
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    out.append(f"```text\n{ctx.command_path} {usage}\n```\n")
    help_text = (cmd.help or "").strip()
    if help_text:
        out.append(html.escape(help_text, quote=False).replace("\b\n", "") + "\n")
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    if params:
        out.append("| option | panel | help |\n|---|---|---|")
        out.extend(_param_row(p, ctx) for p in params)
        out.append("")
    if hasattr(cmd, "list_commands"):  # a group
        for name in sorted(cmd.list_commands(ctx)):
            sub = cmd.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            _command_md(sub, path + [name], ctx, out)


def cli_reference() -> str:
    """Markdown of every command of ``sqlanon`` (the typer app's click tree)."""
    import typer.main

    from sqlanon.cli.app import app

    root = typer.main.get_command(app)
    out: list[str] = []
    _command_md(root, ["sqlanon"], None, out)
    return "\n".join(out)


# ---------------------------------------------------------------- policy


def _type_of(spec: dict) -> str:
    if "enum" in spec:
        return " or ".join(_code(json.dumps(v)) for v in spec["enum"])
    if "$ref" in spec:
        return _code(spec["$ref"].rsplit("/", 1)[-1])
    if "anyOf" in spec or "oneOf" in spec:
        return " or ".join(_type_of(s) for s in spec.get("anyOf", spec.get("oneOf", [])))
    kind = spec.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and isinstance(spec.get("items"), dict):
        return f"list of {_type_of(spec['items'])}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"mapping of {_type_of(spec['additionalProperties'])}"
    bounds = [f"{label} {spec[key]}" for key, label in
              (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")) if key in spec]
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _properties_table(props: dict) -> list[str]:
    rows = ["| key | type | default | description |", "|---|---|---|---|"]
    for key, spec in props.items():
        default = _code(json.dumps(spec["default"])) if "default" in spec else ""
        rows.append(f"| {_code(key)} | {_cell(_type_of(spec))} | {default} | {_cell(spec.get('description', ''))} |")
    return rows


def policy_reference() -> str:
    """Markdown of the policy file's keys and of each search's options, from the JSON Schema."""
    from sqlanon.config.schema import schema

    doc = schema("policy")
    out = [_cell(doc.get("description", "")), "", "## Keys", ""]
    out += _properties_table(doc.get("properties", {}))
    defs = doc.get("$defs", {})
    if defs:
        out += ["", "## Search options", "",
                "`search_options:` of the policy (or `--option KEY=VALUE`) per search:", ""]
        for name, spec in sorted(defs.items()):
            out += [f"### {_code(name)}", ""]
            if spec.get("description"):
                out += [_cell(spec["description"]), ""]
            props = spec.get("properties", {})
            out += _properties_table(props) if props else ["No options."]
            out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- bench/results


def _results() -> list[str]:
    if not os.path.isdir(RESULTS):
        return []
    return sorted(os.listdir(RESULTS))


def bench_results() -> str:
    out = []
    for name in _results():
        path = os.path.join(RESULTS, name)
        stem, ext = os.path.splitext(name)
        if ext == ".png":
            continue  # shown under its .md / .csv / .txt of the same stem, or below
        out.append(f"## `{name}`\n")
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if ext == ".md":
            body = text.replace("\n# ", "\n### ")
            body = body[2:] if body.startswith("# ") else body
            out.append(body.strip() + "\n")
        else:
            out.append(f'<details><summary>{html.escape(name)} ({len(text.splitlines())} lines)</summary>\n')
            out.append("```text\n" + text.rstrip().replace("```", "'''") + "\n```\n")
            out.append("</details>\n")
        if os.path.exists(os.path.join(RESULTS, stem + ".png")):
            out.append(f"![{stem}]({RESULTS_URI}/{stem}.png)\n")
    shown = {os.path.splitext(n)[0] for n in _results() if not n.endswith(".png")}
    for name in _results():
        stem, ext = os.path.splitext(name)
        if ext == ".png" and stem not in shown:
            out.append(f"## `{name}`\n\n![{stem}]({RESULTS_URI}/{name})\n")
    return "\n".join(out)


# ---------------------------------------------------------------- mkdocs events

GENERATORS = {
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: policy -->": policy_reference,
    "<!-- generated: bench-results -->": bench_results,
}


def on_files(files: Any, config: Any) -> Any:
    """Add the plots of bench/results to the site (they live outside docs/)."""
    from mkdocs.structure.files import File

    for name in _results():
        if name.endswith(".png"):
            files.append(File.generated(config, f"{RESULTS_URI}/{name}", abs_src_path=os.path.join(RESULTS, name)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    for marker, make in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
