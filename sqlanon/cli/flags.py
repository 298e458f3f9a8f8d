"""CLI flags that are policy keys: each declared once, with its policy path.

A command's parameter ``max_suppression: Optional[float] = policy_flag("privacy.max_suppression")``
is the flag ``--max-suppression``; its help is the field's description in
:class:`~sqlanon.config.policy.Policy`, and :func:`policy_from_flags` sets the value it was given at
that path. So a value can be followed from the flag to the model field (and from there to the code
reading ``policy.privacy.max_suppression``), and ``tests/cli/test_cli_policy.py`` checks that every flag
of ``anonymize``, ``check`` and ``sql`` has a path (or is on the short list of flags that are not
policy) and that giving a flag is giving the key in a policy file.

Paths: a leaf (``privacy.k``), ``qi``, ``strategy.search_options.NAME`` (one search option) or
``strategy.search_options`` (``--option KEY=VALUE`` pairs).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, List, Optional, TypeVar

from pydantic.fields import FieldInfo

from sqlanon.cli.conventions import option, panel_of
from sqlanon.config.policy import QI_HELP, SECTION_OF, SECTIONS, Policy, parse_qi_flags
from sqlanon.config.search_options import SEARCH_OPTIONS, cli_search_options
from sqlanon.errors import ConfigError
from sqlanon.privacy import registry
from sqlanon.privacy.registry import POLICY_KEYS

OPTIONS = "strategy.search_options"


def _fields(path: str) -> list[FieldInfo]:
    """The model fields at ``path`` (a search option: every options model's field of that name)."""
    parts = path.split(".")
    if path.startswith(OPTIONS + "."):
        return [model.model_fields[parts[-1]] for model in SEARCH_OPTIONS.values() if parts[-1] in model.model_fields]
    if path in ("qi", OPTIONS):
        return []
    return [SECTIONS[parts[0]].model_fields[parts[1]]]


def field_help(path: str) -> str | None:
    """The description of the model field at ``path`` (a search option's from its options model)."""
    if path == "qi":
        return QI_HELP
    return next((field.description for field in _fields(path) if field.description), None)


def is_switch(path: str) -> bool:
    """Is the key at ``path`` a boolean (its flag ``--x/--no-x``)?"""
    fields = _fields(path)
    return bool(fields) and all(field.annotation is bool for field in fields)


def policy_flag(path: str, long: str | None = None, help: str | None = None) -> Any:
    """A typer option whose value is the policy's ``path``. The flag is ``--`` + the last part of the
    path (``privacy.max_suppression`` is ``--max-suppression``) unless ``long`` names it; the help
    is the field's description unless ``help`` is given (a command may say more); its panel is
    the path's (:func:`~sqlanon.cli.conventions.panel_of`). A boolean key is ``--x/--no-x``,
    None when neither is given (the policy file's value stands)."""
    _check_path(path)
    name = long or f"--{path.rsplit('.', 1)[-1].replace('_', '-')}"
    info = option(None, name, panel=panel_of(path), help=help if help is not None else field_help(path) or "", boolean=is_switch(path))
    setattr(info, "policy_path", path)  # noqa: B010  (read back by flag_paths; OptionInfo declares no such attribute, so mypy refuses the plain assignment)
    return info


#: the flags naming the table read and its quasi-identifiers, shared by anonymize and sql:
#: (policy path, type)
SOURCE_FLAGS: tuple[tuple[str, Any], ...] = (
    ("source.input", Optional[str]),
    ("source.format", Optional[str]),
    ("source.delimiter", Optional[str]),
    ("source.table", Optional[str]),
    ("qi", Optional[List[str]]),
    ("hierarchies.hierarchy_delimiter", Optional[str]),
)

#: the privacy section's flags of anonymize, one per key the privacy models declare
#: (:data:`sqlanon.privacy.registry.POLICY_KEYS`): a new model's keys are flags without an edit
#: here. ``--population`` is declared by the command (it also sizes the genetic search's
#: population); SafePub's seed is ``--seed`` under ``--epsilon``
PRIVACY_FLAGS: tuple[tuple[str, Any], ...] = tuple(
    (f"privacy.{name}", Optional[key.type]) for name, key in POLICY_KEYS.items() if name not in ("population", "seed")  # noqa: UP045  (a runtime type for typer)
)


def _check_flags() -> tuple[tuple[str, Any, str | None], ...]:
    figures = registry.figures().values()
    helps = {key: text for figure in figures for key, text in figure.flag_help.items()}
    return tuple((f"privacy.{name}", Optional[key.type], helps.get(name)) for name, key in registry.check_keys().items())  # noqa: UP045  (a runtime type for typer)


#: the model options of ``check``, one per key the models' figures read
#: (:func:`sqlanon.privacy.registry.check_keys`), with the help their figures give them: a new
#: model's figure is measured by flags without an edit here
CHECK_FLAGS: tuple[tuple[str, Any, str | None], ...] = _check_flags()

Command = TypeVar("Command", bound=Callable[..., Any])


def with_policy_flags(flags: tuple[tuple, ...], after: str = "policy") -> Callable[[Command], Command]:
    """Declare ``flags`` (e.g. :data:`SOURCE_FLAGS`: a policy path and a type, and optionally the
    command's own help) on a command, after its parameter ``after`` (or its first): each is the
    parameter named by its path's last part, a :func:`policy_flag`. The command takes them as
    ``**flags`` (commands read every flag through ``ctx.params``)."""

    def declare(command: Command) -> Command:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        at = next((i + 1 for i, p in enumerate(own) if p.name == after), 1)
        added = [inspect.Parameter(path.rsplit(".", 1)[-1], inspect.Parameter.KEYWORD_ONLY, default=policy_flag(path, help=rest[0] if rest else None), annotation=kind)
                 for path, kind, *rest in flags]
        parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
        # typer reads the signature (inspect honours __signature__); a Callable declares no such attribute for mypy
        setattr(command, "__signature__", signature.replace(parameters=parameters[:at] + added + parameters[at:]))  # noqa: B010
        return command

    return declare


def _check_path(path: str) -> None:
    if path in ("qi", OPTIONS) or path.startswith(OPTIONS + "."):
        return
    section, _, key = path.partition(".")
    if SECTION_OF.get(key) != section:
        raise ValueError(f"{path!r} is not a policy field")  # a programming error, at import


def flag_paths(command: Callable) -> dict[str, str]:
    """Parameter name -> policy path of every policy flag of a command function."""
    out = {}
    for name, param in inspect.signature(command).parameters.items():
        path = getattr(param.default, "policy_path", None)
        if path is not None:
            out[name] = path
    return out


def _long_flags(param: inspect.Parameter) -> list[str]:
    """The long flags of a parameter's option, a switch's ``--x/--no-x`` as ``--x``, ``--no-x``."""
    return [name for d in getattr(param.default, "param_decls", ()) or () for name in d.split("/") if name.startswith("--")]


def flag_names(command: Callable) -> dict[str, str]:
    """Parameter name -> its first long flag (``--max-suppression``; a switch ``--in-place/--no-in-place``:
    ``--in-place``), for every option of a command."""
    out = {}
    for name, param in inspect.signature(command).parameters.items():
        flags = _long_flags(param)
        if flags:
            out[name] = flags[0]
    return out


def given_flags(params: dict[str, Any], command: Callable) -> dict[str, Any]:
    """``--flag -> value`` of the flags given (0 is a value; None and [] are absences, and so is a
    switch at its default). A switch given off is named by its ``--no-x``."""
    out: dict[str, Any] = {}
    for name, param in inspect.signature(command).parameters.items():
        flags = _long_flags(param)
        value = params.get(name)
        value = list(value) if isinstance(value, tuple) else value
        if not flags or value is None or value == []:
            continue
        if isinstance(value, bool):
            if value is getattr(param.default, "default", None):
                continue
            out[flags[1] if value is False and len(flags) > 1 else flags[0]] = value
        else:
            out[flags[0]] = value
    return out


def policy_from_flags(policy_file: str | None, params: dict[str, Any], command: Callable, qi: Callable[[list[str]], dict] = parse_qi_flags) -> Policy:
    """The policy of a command: its ``--policy`` file, then every policy flag given, at its path
    (flags win: ``--no-x`` switches off a file's ``x: true``; a flag not given leaves the file's
    value). ``--qi`` adds to the file's quasi-identifiers (``qi`` parses its values), the
    column-role flags to its column lists (:func:`_add_column_roles`); search
    options given as their own flags or ``--option KEY=VALUE`` join the file's. An output flag
    (``--output``, ``--output-table``, ``--in-place``) replaces the file's output
    (:func:`_flags_choose_output`)."""
    policy = Policy.from_file(policy_file) if policy_file else Policy()
    leaves: dict[str, Any] = {}
    options: dict[str, Any] = {}
    pairs: list[str] | None = None
    for name, path in flag_paths(command).items():
        value = params.get(name)
        if isinstance(value, tuple):  # a repeatable flag not given is () before typer converts it
            value = list(value)
        if value is None or value == []:  # not given (a switch given off is False, a value)
            continue
        if path == OPTIONS:
            pairs = value
        elif path.startswith(OPTIONS + "."):
            options[path.rsplit(".", 1)[1]] = value
        else:
            leaves[path.rsplit(".", 1)[-1]] = value
    if "qi" in leaves:
        policy.qi = {**policy.qi, **qi(leaves.pop("qi"))}
    _add_column_roles(policy, leaves)
    population = leaves.pop("population", None)
    _flags_choose_output(policy, leaves)
    policy.update(leaves, "flags")
    switched_off = {key: False for key, value in options.items() if value is False}  # --no-trace over a file's trace: true
    policy.strategy.search_options = {**policy.strategy.search_options, **cli_search_options(pairs, **options), **switched_off}
    _route_model_flags(policy, population, options.get("seed"))
    return policy


#: the column roles a flag adds to the policy file's (as ``--qi`` adds a quasi-identifier): giving
#: one column a role on the command line does not take theirs from the file's other columns
ROLE_LISTS = ("drop_columns", "keep_columns", "keep_linked")


def _add_column_roles(policy: Policy, leaves: dict[str, Any]) -> None:
    """``--drop-column``, ``--keep-column``, ``--keep-linked`` and ``--linked`` join the file's lists
    (each name once, the file's first)."""
    for key in ROLE_LISTS:
        if key in leaves:
            leaves[key] = list(dict.fromkeys([*getattr(policy.release, key), *leaves[key]]))
    if "linked" in leaves and policy.release.linked:
        leaves["linked"] = [f"{column}={qi_name}" for column, qi_name in policy.release.linked.items()] + list(leaves["linked"])


#: the policy keys that say where a release goes: one of them at a time
OUTPUT_KEYS = ("output", "output_table", "in_place")


def _flags_choose_output(policy: Policy, leaves: dict[str, Any]) -> None:
    """An output the flags give (``--output``, ``--output-table`` or ``--in-place``) is the output:
    the policy file's other output keys are dropped (and its ``database``, which only places an
    ``output_table``, unless that is what the flags chose). Two output flags given together are
    still refused, by the release target."""
    chosen = [key for key in OUTPUT_KEYS if leaves.get(key)]
    if not chosen:
        return
    release = policy.release
    for key in OUTPUT_KEYS:
        if key not in chosen and key not in leaves:
            setattr(release, key, False if key == "in_place" else None)
    if "output_table" not in chosen and "database" not in leaves:
        release.database = None
    if chosen == ["in_place"] and "overwrite" not in leaves and not (leaves.get("report") or policy.reporting.report):
        release.overwrite = False  # the file's overwrite was its output's: in place always replaces the input


def _route_model_flags(policy: Policy, population: str | None, seed: int | None) -> None:
    """``--population``: the genetic search's population size (a number, with --search genetic),
    else the population table of k-map / delta-presence (also with --search genetic when k-map with
    a table or delta-presence is asked: the size is then ``--option population=N``). ``--seed``
    (a search option) with SafePub (``--epsilon``) seeds its sampling instead."""
    privacy, strategy = policy.privacy, policy.strategy
    if population is not None:
        wants_table = (privacy.k_map is not None and privacy.population_size is None) or privacy.delta_min is not None or privacy.delta_max is not None
        if strategy.search == "genetic" and not wants_table:
            try:
                strategy.search_options["population"] = int(population)
            except ValueError:
                raise ConfigError(f"--population with the genetic search is its population size, got {population!r}") from None
        else:
            policy.update({"population": population}, "flags")
    if seed is not None and privacy.epsilon is not None:
        strategy.search_options.pop("seed", None)
        policy.update({"seed": seed}, "flags")
