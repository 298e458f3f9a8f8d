"""How every option of the CLI is declared: its help panel, its short flag, a boolean as a pair.

* **Panels**: ``--help`` groups a command's options in rich help panels (:data:`PANELS`). A policy
  flag's panel is its policy section's (:func:`panel_of`), so a flag added for a new policy key
  lands in a panel by itself; a few keys sit in another panel than their section's
  (:data:`KEY_PANELS`: the time, step and memory limits in *Limits*, the level bounds in *Search*).
* **Short flags**: one short flag means one long flag in every command (:data:`SHORT_FLAGS`); a
  command that has the long flag has the short one.
* **Booleans**: a boolean option is ``--x/--no-x``, so a flag can switch off what a policy file
  switched on, and help shows no value for it.

>>> panel_of("privacy.k"), panel_of("strategy.search_options.time_limit"), panel_of("qi")
('Privacy', 'Limits', 'Input')
>>> option(False, "--json", panel=OUTPUT, help="One JSON object.").param_decls
('--json/--no-json',)
>>> option(None, "--input", panel=INPUT, help="The source.").param_decls
('--input', '-i')
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

INPUT = "Input"
PRIVACY = "Privacy"
SEARCH = "Search"
OUTPUT = "Output"
REPORT = "Report"
ENGINE = "Engine"
LIMITS = "Limits"
CHECK = "Check"
HELP = "Help"
#: every panel, in the order ``--help`` shows them (rich prints panels in the order options come)
PANELS = (INPUT, PRIVACY, SEARCH, OUTPUT, REPORT, ENGINE, LIMITS, CHECK, HELP)

#: a policy section -> the panel of its flags
SECTION_PANELS = {
    "source": INPUT,
    "hierarchies": INPUT,
    "privacy": PRIVACY,
    "strategy": SEARCH,
    "quality": SEARCH,
    "release": OUTPUT,
    "runtime": ENGINE,
    "reporting": REPORT,
}
#: policy keys (the last part of the path) whose panel is not their section's
KEY_PANELS = {
    "min_level": SEARCH,
    "max_level": SEARCH,
    "time_limit": LIMITS,
    "step_limit": LIMITS,
    "memory_limit": LIMITS,
    "max_value_length": LIMITS,
}

#: long flag -> its short flag, the same in every command that has the long flag
SHORT_FLAGS = {
    "--input": "-i",
    "--output": "-o",
    "--policy": "-p",
    "--k": "-k",
    "--quiet": "-q",
    "--version": "-V",
}


def panel_of(path: str) -> str:
    """The help panel of the flag of policy path ``path`` (``qi``: *Input*; a search option:
    *Search*, its limits *Limits*)."""
    if path == "qi":
        return INPUT
    key = path.rsplit(".", 1)[-1]
    return KEY_PANELS.get(key) or SECTION_PANELS[path.split(".", 1)[0]]


def option(default: Any, long: str, *aliases: str, panel: str, help: str, **settings: Any) -> Any:
    """A typer option in ``panel``: ``long`` (and ``aliases``, other long names), its short flag
    from :data:`SHORT_FLAGS`; a boolean (its default a bool, or ``boolean=True`` with a None
    default: not given) is ``--x/--no-x``."""
    boolean = settings.pop("boolean", False) or isinstance(default, bool)
    decls = [f"{long}/--no-{long[2:]}" if boolean else long, *aliases]
    if boolean:
        settings.setdefault("show_default", False)  # "[default: no-json]" says nothing the pair does not
    if long in SHORT_FLAGS:
        decls.append(SHORT_FLAGS[long])
    return typer.Option(default, *decls, rich_help_panel=panel, help=help, **settings)


#: the options typer adds to every command or to the app
TYPER_OPTIONS = ("--help", "--install-completion", "--show-completion")


def _shown(params: list) -> list:
    """A command's parameters as ``--help`` shows them: a switch with no value after it (typer
    would show ``<bool>``), typer's own options (``--help``, the completion ones) in *Help*, and
    the options in the order of :data:`PANELS` (rich shows a panel where its first option comes;
    arguments first, the order within a panel kept)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        if getattr(param, "rich_help_panel", None) is None and any(name in TYPER_OPTIONS for name in param.opts):
            param.rich_help_panel = HELP
    order = {panel: i for i, panel in enumerate(PANELS)}
    return sorted(params, key=lambda p: -1 if p.param_type_name == "argument" else order.get(getattr(p, "rich_help_panel", None) or "", len(PANELS)))


class Command(TyperCommand):
    """A command whose help follows the conventions (:func:`_shown`)."""

    def get_params(self, ctx):
        return _shown(super().get_params(ctx))


class Group(TyperGroup):
    """A group (the app, a sub-app) whose help follows the conventions (:func:`_shown`)."""

    def get_params(self, ctx):
        return _shown(super().get_params(ctx))


class App(typer.Typer):
    """A typer app whose commands and sub-apps follow the conventions."""

    def __init__(self, **settings: Any) -> None:
        settings.setdefault("cls", Group)
        super().__init__(**settings)

    def command(self, *args: Any, **settings: Any) -> Any:
        settings.setdefault("cls", Command)
        return super().command(*args, **settings)
