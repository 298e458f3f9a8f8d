"""CLI flags that are policy keys: each declared once, with its policy path.

A command's parameter ``max_suppression: Optional[float] = policy_flag("privacy.max_suppression")``
is the flag ``--max-suppression``; its help is the field's description in
:class:`~sqlanon.config.policy.Policy`, and :func:`policy_from_flags` sets the value it was given at
that path. So a value can be followed from the flag to the model field (and from there to the code
reading ``policy.privacy.max_suppression``), and ``tests/test_cli_policy.py`` checks that every flag
of ``anonymize``, ``check`` and ``sql`` has a path (or is on the short list of flags that are not
policy) and that giving a flag is giving the key in a policy file.

Paths: a leaf (``privacy.k``), ``qi``, ``strategy.search_options.NAME`` (one search option) or
``strategy.search_options`` (``--option KEY=VALUE`` pairs).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, List, Optional, TypeVar

import typer

from sqlanon.config.policy import QI_HELP, SECTION_OF, SECTIONS, Policy, parse_qi_flags
from sqlanon.config.search_options import SEARCH_OPTIONS, cli_search_options, given
from sqlanon.errors import ConfigError

OPTIONS = "strategy.search_options"


def field_help(path: str) -> str | None:
    """The description of the model field at ``path`` (a search option's from its options model)."""
    if path == "qi":
        return QI_HELP
    parts = path.split(".")
    if path.startswith(OPTIONS + "."):
        for model in SEARCH_OPTIONS.values():
            field = model.model_fields.get(parts[-1])
            if field is not None and field.description:
                return field.description
        return None
    return SECTIONS[parts[0]].model_fields[parts[1]].description


def policy_flag(path: str, *decls: str, help: str | None = None, default: Any = None) -> Any:
    """A typer option whose value is the policy's ``path``. The flag is ``--`` + the last part of the
    path (``privacy.max_suppression`` is ``--max-suppression``) unless ``decls`` name it; the help
    is the field's description unless ``help`` is given (a command may say more)."""
    _check_path(path)
    names = decls or (f"--{path.rsplit('.', 1)[-1].replace('_', '-')}",)
    info = typer.Option(default, *names, help=help if help is not None else field_help(path))
    setattr(info, "policy_path", path)  # noqa: B010  (read back by flag_paths; OptionInfo declares no such attribute, so mypy refuses the plain assignment)
    return info


#: the flags naming the table read and its quasi-identifiers, shared by anonymize and sql:
#: (policy path, type, flag names when not ``--`` + the path's last part)
SOURCE_FLAGS: tuple[tuple[str, Any, tuple[str, ...]], ...] = (
    ("source.input", Optional[str], ("--input", "-i")),
    ("source.format", Optional[str], ()),
    ("source.delimiter", Optional[str], ()),
    ("source.table", Optional[str], ()),
    ("qi", Optional[List[str]], ()),
    ("hierarchies.hierarchy_delimiter", Optional[str], ()),
)

Command = TypeVar("Command", bound=Callable[..., Any])


def with_policy_flags(flags: tuple[tuple[str, Any, tuple[str, ...]], ...]) -> Callable[[Command], Command]:
    """Declare ``flags`` (e.g. :data:`SOURCE_FLAGS`) on a command, after its ``--policy`` (or first)
    parameter: each is the parameter named by its path's last part, a :func:`policy_flag`. The
    command takes them as ``**flags`` (commands read every flag through ``ctx.params``)."""

    def declare(command: Command) -> Command:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        at = next((i + 1 for i, p in enumerate(own) if p.name == "policy"), 1)
        added = [inspect.Parameter(path.rsplit(".", 1)[-1], inspect.Parameter.KEYWORD_ONLY, default=policy_flag(path, *decls), annotation=kind) for path, kind, decls in flags]
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


def flag_names(command: Callable) -> dict[str, str]:
    """Parameter name -> its first long flag (``--max-suppression``), for every option of a command."""
    out = {}
    for name, param in inspect.signature(command).parameters.items():
        decls = [d for d in getattr(param.default, "param_decls", ()) or () if d.startswith("--")]
        if decls:
            out[name] = decls[0]
    return out


def given_flags(params: dict[str, Any], command: Callable) -> dict[str, Any]:
    """``--flag -> value`` of the flags given (0 is a value; None, False and [] are absences)."""
    names = flag_names(command)
    return {names[name]: value for name, value in params.items() if name in names and given(list(value) if isinstance(value, tuple) else value)}


def policy_from_flags(policy_file: str | None, params: dict[str, Any], command: Callable, qi: Callable[[list[str]], dict] = parse_qi_flags) -> Policy:
    """The policy of a command: its ``--policy`` file, then every policy flag given, at its path
    (flags win). ``--qi`` adds to the file's quasi-identifiers (``qi`` parses its values);
    search options given as their own flags or ``--option KEY=VALUE`` join the file's."""
    policy = Policy.from_file(policy_file) if policy_file else Policy()
    leaves: dict[str, Any] = {}
    options: dict[str, Any] = {}
    pairs: list[str] | None = None
    for name, path in flag_paths(command).items():
        value = params.get(name)
        if isinstance(value, tuple):  # a repeatable flag not given is () before typer converts it
            value = list(value)
        if not given(value):
            continue
        if path == OPTIONS:
            pairs = value
        elif path.startswith(OPTIONS + "."):
            options[path.rsplit(".", 1)[1]] = value
        else:
            leaves[path.rsplit(".", 1)[-1]] = value
    if "qi" in leaves:
        policy.qi = {**policy.qi, **qi(leaves.pop("qi"))}
    population = leaves.pop("population", None)
    policy.update(leaves, "flags")
    policy.strategy.search_options = {**policy.strategy.search_options, **cli_search_options(pairs, **options)}
    _route_model_flags(policy, population, options.get("seed"))
    return policy


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
