"""The CLI flags of anonymize, check and sql are the Policy's keys: every flag is declared with its
policy path (or is on the short list of flags that are not policy), every Policy key has a flag (or
is on the short list of keys only a policy file gives), and giving a flag is giving its key in a
policy file: the same Policy comes out."""

import typing

import pytest
import typer
import yaml

from sqlanon.cli import app as cli
from sqlanon.cli.flags import OPTIONS, flag_names, flag_paths, policy_from_flags
from sqlanon.config.policy import SECTION_OF, SECTIONS, Policy
from sqlanon.config.search_options import SEARCH_OPTIONS, parse_search_options

COMMANDS = {"anonymize": cli.anonymize, "check": cli.check, "sql": cli.sql}

#: flags that are not policy: the policy file itself, how a run talks, what kind of check, the dialect
NOT_POLICY = {
    "anonymize": {"--policy", "--json", "--dry-run", "--quiet"},
    "check": {"--json", "--against", "--against-format", "--against-delimiter", "--min-sup", "--transformation", "--risk", "--suppressed-marker", "--release", "--registry", "--release-policy"},
    "sql": {"--policy", "--dialect"},
}
#: policy keys no flag sets: a CSV output's delimiter; SafePub's seed is --seed under --epsilon
FILE_ONLY = {"output_delimiter", "seed"}


def test_every_flag_is_a_policy_path_or_listed():
    for name, command in COMMANDS.items():
        paths = flag_paths(command)
        names = flag_names(command)
        for param, flag in names.items():
            if param in paths:
                assert flag not in NOT_POLICY[name], f"{name} {flag} is policy and listed as not"
                path = paths[param]
                if path.startswith(OPTIONS + "."):
                    option = path.rsplit(".", 1)[1]
                    assert any(option in m.model_fields for m in SEARCH_OPTIONS.values()), f"{name} {flag}: no search reads {option!r}"
                elif path not in ("qi", OPTIONS):
                    section, key = path.split(".")
                    assert key in SECTIONS[section].model_fields, f"{name} {flag}: {path} is not a Policy field"
            else:
                assert flag in NOT_POLICY[name], f"{name} {flag} has no policy path: declare it with policy_flag(...) or list it in NOT_POLICY"
        assert NOT_POLICY[name] <= set(names.values()), f"{name}: NOT_POLICY lists flags it does not have"


def test_every_policy_key_has_a_flag_or_is_file_only():
    paths = set(flag_paths(cli.anonymize).values())
    leaves = {p.rsplit(".", 1)[-1] for p in paths if not p.startswith(OPTIONS + ".")}
    leaves |= {"search_options"} if OPTIONS in paths else set()
    assert set(Policy.keys()) - leaves == FILE_ONLY
    assert FILE_ONLY <= set(Policy.keys())


def test_flat_names_are_the_leaves():
    """``policy.k`` is ``policy.privacy.k``: every leaf has its flat alias, and only the leaves."""
    aliases = {name for name, value in vars(Policy).items() if hasattr(value, "section") and hasattr(value, "key")}
    assert aliases == set(SECTION_OF)
    p = Policy()
    for key, section in SECTION_OF.items():
        assert getattr(p, key) == getattr(getattr(p, section), key)


def _option_type(option):
    for model in SEARCH_OPTIONS.values():
        if option in model.model_fields:
            return model.model_fields[option].annotation, model
    raise AssertionError(option)


def _sample(path, annotation):
    """(CLI words after the flag, the value a policy file gives) for one flag."""
    if path == "qi":
        return ["zip=mask"], {"zip": "mask"}
    if path == OPTIONS:
        return ["batch=4"], {"batch": "4"}
    key = path.rsplit(".", 1)[-1]
    if key in ("input", "output", "database", "registry", "report", "t_hierarchy", "population", "previous"):
        value = f"/tmp/sqlanon-flag-test/{key}.csv"
        return [value], [value] if key == "previous" else value
    if key in ("weights", "min_level", "max_level"):
        return ["zip=2"], {"zip": 2}
    if key == "microaggregate":
        return ["age=mean"], {"age": "mean"}
    if key == "nulls":
        return ["refuse", "zip=suppress"], {"*": "refuse", "zip": "suppress"}
    if key == "linked":
        return ["city=zip"], {"city": "zip"}
    if key == "privacy":  # top-down's model
        return ["xy-linkability"], "xy-linkability"
    if key == "spark_conf":
        return ["spark.sql.shuffle.partitions=4"], {"spark.sql.shuffle.partitions": "4"}
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    kind = args[0] if args else annotation
    if kind is bool:
        return [], True
    if kind is int:
        return ["3"], 3
    if kind is float:
        return ["0.25"], 0.25
    if typing.get_origin(kind) is list or kind is list[str]:
        return ["a"], ["a"]
    return ["abc"], "abc"


def _cases():
    for name, command in COMMANDS.items():
        names = flag_names(command)
        for param, path in flag_paths(command).items():
            yield pytest.param(name, param, path, id=f"{name} {names[param]}")


def _parse(name, words):
    group = typer.main.get_command(cli.app)
    command = group.commands[name]
    ctx = command.make_context(name, list(words))
    return ctx.params


def _normalized(policy: Policy, search: str) -> dict:
    data = policy.model_dump()
    data["strategy"]["search_options"] = parse_search_options(search, data["strategy"]["search_options"])
    return data


@pytest.mark.parametrize("name,param,path", list(_cases()))
def test_a_flag_is_its_key_in_a_policy_file(tmp_path, name, param, path):
    command = COMMANDS[name]
    flag = flag_names(command)[param]
    option = path.rsplit(".", 1)[1] if path.startswith(OPTIONS + ".") else None
    if option is not None:
        annotation, _ = _option_type(option)
    elif path in ("qi", OPTIONS):
        annotation = None
    else:
        section, key = path.split(".")
        annotation = SECTIONS[section].model_fields[key].annotation
    words, value = _sample(path, annotation)
    # check needs --input and --qi whatever else is given
    required = {"input": (["--input", "/tmp/x.csv"], "/tmp/x.csv"), "qi": (["--qi", "zip=mask"], {"zip": "mask"})} if name == "check" else {}
    required.pop(param, None)
    cli_words = [w for words_, _ in required.values() for w in words_]
    cli_words += [w for v in words for w in (flag, v)] if words else [flag]
    required_keys = {key: value_ for key, (_, value_) in required.items()}
    qi_parser = {"qi": cli._check_qi} if name == "check" else {}
    from_cli = policy_from_flags(None, _parse(name, cli_words), command, **qi_parser)
    if option is not None:
        data = {**required_keys, "search_options": {option: value}}
    elif path == OPTIONS:
        data = {**required_keys, "search_options": value}
    else:
        data = {**required_keys, path.rsplit(".", 1)[-1]: value}
    policy_file = tmp_path / "p.yaml"
    policy_file.write_text(yaml.safe_dump(data))
    from_file = Policy.from_file(str(policy_file))
    search = "optimal"
    for key in (from_file.search_options or {}):
        readers = sorted(n for n, m in SEARCH_OPTIONS.items() if key in m.model_fields)
        search = readers[0] if search not in readers else search
    assert _normalized(from_cli, search) == _normalized(from_file, search), f"{name} {flag} {words} != {data}"


def test_the_nested_form_is_the_flat_form(tmp_path):
    flat = {"input": "/tmp/a.csv", "qi": {"zip": "mask"}, "k": 5, "max_suppression": 0.1, "search": "genetic", "search_options": {"iterations": 3}, "output": "/tmp/o.parquet"}
    nested = {"source": {"input": "/tmp/a.csv"}, "qi": {"zip": "mask"}, "privacy": {"k": 5, "max_suppression": 0.1},
              "strategy": {"search": "genetic", "search_options": {"iterations": 3}}, "release": {"output": "/tmp/o.parquet"}}
    assert Policy.from_dict(flat) == Policy.from_dict(nested) == Policy(**flat) == Policy(**nested)


@pytest.mark.parametrize("data,fragment", [
    ({"privacy": {"kk": 2}}, "unknown key 'kk' in policy: privacy; privacy holds:"),
    ({"source": {"k": 2}}, "key 'k' in policy: source belongs under privacy, not source"),
    ({"k": 2, "privacy": {"k": 3}}, "key 'k' given twice in policy: privacy (also in policy)"),
    ({"release": "x"}, "release in policy must be a mapping of its keys"),
    ({"privacy": {"k": "five"}}, "bad value for 'k' in policy: privacy: 'five' is not a int"),
])
def test_nested_keys_are_refused_naming_the_key(data, fragment):
    from sqlanon.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        Policy.from_dict(data)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_routed_flags():
    """--population is the genetic search's population size; --seed is SafePub's with --epsilon."""
    params = _parse("anonymize", ["--search", "genetic", "--population", "20"])
    assert policy_from_flags(None, params, cli.anonymize).search_options["population"] == 20
    params = _parse("anonymize", ["--epsilon", "1", "--delta", "0.0001", "--seed", "4"])
    pol = policy_from_flags(None, params, cli.anonymize)
    assert pol.privacy.seed == 4 and "seed" not in pol.search_options
