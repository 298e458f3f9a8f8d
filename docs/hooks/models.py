"""mkdocs hook: the privacy models' pages from the registry, so adding a model is its module, its
registry line and its page ``docs/models/<name>.md``, with no edit to the nav or the overview.

* every page of ``docs/models/`` that the nav does not name joins the nav's *Privacy models*
  section (titled by its first heading), before its last entry;
* ``<!-- generated: privacy-models -->`` is replaced by the table of the registered models
  (:data:`sqlanon.privacy.registry.MODELS`): each model, the flags of the policy keys that ask for
  it, and its page.

The checkout holding this file is put first on ``sys.path``, so the site documents that checkout.
"""

from __future__ import annotations

import os
import sys
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(ROOT, "docs", "models")
SECTION = "Privacy models"
MARKER = "<!-- generated: privacy-models -->"
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _title(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("# "):
                return line[2:].strip()
    return os.path.splitext(os.path.basename(path))[0]


def _named(nav: Any) -> set[str]:
    """Every page path the nav names."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(_named(v) for v in nav.values()))
    if isinstance(nav, list):
        return set().union(*(_named(v) for v in nav)) if nav else set()
    return set()


def on_config(config: Any) -> Any:
    named = _named(config["nav"])
    section = next(entry[SECTION] for entry in config["nav"] if isinstance(entry, dict) and SECTION in entry)
    missing = [f"models/{name}" for name in sorted(os.listdir(MODELS_DIR)) if name.endswith(".md") and f"models/{name}" not in named]
    at = len(section) - 1  # before the last entry (the SQL shapes page)
    for path in missing:
        section.insert(at, {_title(os.path.join(ROOT, "docs", path)): path})
        at += 1
    return config


def models_table() -> str:
    from sqlanon.privacy.registry import MODELS

    rows = ["| model | flags | page |", "|---|---|---|"]
    for name, model in MODELS.items():
        flags = ", ".join(f"`--{key.replace('_', '-')}`" for key in model.asks)
        rows.append(f"| {name} | {flags} | [{_title(os.path.join(MODELS_DIR, name + '.md'))}](models/{name}.md) |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return markdown.replace(MARKER, models_table()) if MARKER in markdown else markdown
