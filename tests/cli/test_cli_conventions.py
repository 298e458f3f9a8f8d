"""The CLI's conventions (docs/cli.md, "Command line"): shell completion, ``-V``, every option in a
rich help panel, switches as ``--x/--no-x`` that win over a policy file, one short flag per long
flag in every command, ``--json`` documented, output flags that replace a policy's output, the
path a profile's policy names, and ``search: auto`` recorded as the search that ran."""

from __future__ import annotations

import csv
import json
import random
import re
import shlex

import duckdb
import pytest
import typer
import yaml
from checker import check_k, read_rows
from typer.testing import CliRunner

from sqlanon.cli import app as cli
from sqlanon.cli.conventions import PANELS, panel_of
from sqlanon.cli.flags import flag_paths, policy_from_flags
from sqlanon.config.policy import SECTION_OF
from sqlanon.config.search_options import SEARCH_OPTIONS

runner = CliRunner()

#: what each short flag means, in every command that has it
SHORT_FLAGS = {"-i": "--input", "-o": "--output", "-p": "--policy", "-k": "--k", "-q": "--quiet", "-V": "--version"}
#: the panels the issue asks for (the conventions add Report, Check and Help)
ASKED_PANELS = ("Input", "Privacy", "Search", "Output", "Engine", "Limits")


def _commands(command=None, path=()):
    """(path, click command) of the app and of every command and sub-command under it."""
    command = command or typer.main.get_command(cli.app)
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def _options(command):
    """The options of a click command as its help lists them (typer's --help included)."""
    context = command.context_class(command, info_name="sqlanon")
    return [p for p in command.get_params(context) if p.param_type_name == "option"]


def _name(path) -> str:
    return " ".join(path) or "(the app)"


# -- completion and version -------------------------------------------------------------------


def test_show_completion_prints_a_bash_script():
    done = runner.invoke(cli.app, ["--show-completion", "bash"], prog_name="sqlanon")
    assert done.exit_code == 0, done.output
    assert "_SQLANON_COMPLETE=complete_bash" in done.output and "complete " in done.output and "COMPREPLY" in done.output


def test_the_command_prints_a_completion_script_for_sqlanon():
    """``python -m sqlanon`` too: the script completes the command ``sqlanon``."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "sqlanon", "--show-completion", "bash"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "complete -o default -F _sqlanon_completion sqlanon" in done.stdout


def test_completion_completes_commands_and_flags():
    """The script asks the app itself: what it answers is what the shell offers."""
    commands = runner.invoke(cli.app, [], prog_name="sqlanon", env={"_SQLANON_COMPLETE": "complete_bash", "COMP_WORDS": "sqlanon an", "COMP_CWORD": "1"})
    assert commands.exit_code == 0 and commands.output.split() == ["anonymize"], commands.output
    flags = runner.invoke(cli.app, [], prog_name="sqlanon", env={"_SQLANON_COMPLETE": "complete_bash", "COMP_WORDS": "sqlanon anonymize --in", "COMP_CWORD": "2"})
    assert {"--input", "--in-place"} <= set(flags.output.split()), flags.output


def test_version_short_and_long():
    short, long = runner.invoke(cli.app, ["-V"]), runner.invoke(cli.app, ["--version"])
    assert short.exit_code == long.exit_code == 0
    assert short.output == long.output and short.output.startswith("sqlanon ")


# -- panels ------------------------------------------------------------------------------------


def test_every_option_of_every_command_has_a_panel():
    missing = [f"{_name(path)} {p.opts[0]}" for path, command in _commands() for p in _options(command) if p.rich_help_panel not in PANELS]
    assert not missing, f"options in no panel: {missing}"


def test_a_policy_flag_is_in_its_sections_panel():
    """The panel comes from the policy path, so a flag for a new key lands in one by itself."""
    for command in (cli.anonymize, cli.check, cli.sql):
        click_command = typer.main.get_command(cli.app).commands[command.__name__]
        panels = {p.name: p.rich_help_panel for p in _options(click_command)}
        for param, path in flag_paths(command).items():
            assert panels[param] == panel_of(path), (command.__name__, param, path)
    for key, section in SECTION_OF.items():
        assert panel_of(f"{section}.{key}") in PANELS, key
    for model in SEARCH_OPTIONS.values():
        for option in model.model_fields:
            assert panel_of(f"strategy.search_options.{option}") in ("Search", "Limits"), option


def test_anonymize_help_shows_the_panels_and_no_bool_metavar():
    for path, _ in _commands():
        done = runner.invoke(cli.app, [*path, "--help"], env={"COLUMNS": "200"})
        assert done.exit_code == 0, (path, done.output)
        assert "<bool>" not in done.output, f"{_name(path)} --help shows <bool>"
        assert "─ Options ─" not in done.output, f"{_name(path)} has options in no panel"
    shown = runner.invoke(cli.app, ["anonymize", "--help"], env={"COLUMNS": "200"}).output
    titles = re.findall(r"╭─ (\w+) ─", shown)
    assert [t for t in titles if t in ASKED_PANELS] == list(ASKED_PANELS), titles
    assert re.search(r"--in-place\s+--no-in-place", shown) and re.search(r"--quiet\s+-q\s+--no-quiet", shown)


# -- switches ----------------------------------------------------------------------------------


def test_every_switch_is_a_pair():
    """A boolean option is --x/--no-x (typer's own --help, --version and completion aside)."""
    for path, command in _commands():
        for p in _options(command):
            if not p.is_flag or p.is_eager or p.opts[0] in ("--help", "--install-completion", "--show-completion"):
                continue
            assert p.secondary_opts == ["--no-" + p.opts[0][2:]], f"{_name(path)} {p.opts}: {p.secondary_opts}"


def _parsed(name: str, words: list[str]) -> dict:
    return typer.main.get_command(cli.app).commands[name].make_context(name, words).params


def test_no_x_wins_over_a_policy_true_and_no_flag_keeps_it(tmp_path):
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({"input": "x.csv", "k": 2, "keep_others": True, "overwrite": True, "local_recoding": True,
                                      "full_paths": True, "search_options": {"trace": True}}))
    off = policy_from_flags(str(policy), _parsed("anonymize", ["--no-keep-others", "--no-overwrite", "--no-local-recoding", "--no-full-paths", "--no-trace"]), cli.anonymize)
    assert (off.release.keep_others, off.release.overwrite, off.strategy.local_recoding, off.reporting.full_paths) == (False, False, False, False)
    assert off.strategy.search_options["trace"] is False
    kept = policy_from_flags(str(policy), _parsed("anonymize", []), cli.anonymize)
    assert (kept.release.keep_others, kept.release.overwrite, kept.strategy.local_recoding, kept.reporting.full_paths) == (True, True, True, True)
    assert kept.strategy.search_options["trace"] is True
    on = policy_from_flags(None, _parsed("anonymize", ["--keep-others", "--in-place"]), cli.anonymize)
    assert on.release.keep_others is True and on.release.in_place is True


def test_column_role_flags_add_to_the_policys_lists(tmp_path):
    """A column given a role on the command line joins the file's lists (like --qi): the file's
    dropped identifiers stay dropped (replacing them would leave them without a role)."""
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({"input": "x.csv", "k": 2, "qi": {"zip": "mask"}, "drop_columns": ["ssn", "email"], "keep_columns": ["visits"],
                                      "linked": {"city": "zip"}, "keep_linked": ["county"]}))
    got = policy_from_flags(str(policy), _parsed("anonymize", ["--drop-column", "mrn", "--drop-column", "ssn", "--keep-column", "note",
                                                                "--linked", "state=zip", "--keep-linked", "region"]), cli.anonymize)
    assert got.release.drop_columns == ["ssn", "email", "mrn"]
    assert got.release.keep_columns == ["visits", "note"]
    assert got.release.linked == {"city": "zip", "state": "zip"}
    assert got.release.keep_linked == ["county", "region"]
    same = policy_from_flags(str(policy), _parsed("anonymize", []), cli.anonymize)
    assert same.release.drop_columns == ["ssn", "email"] and same.release.linked == {"city": "zip"}


def _people(n: int = 300, seed: int = 7) -> list[dict]:
    rnd = random.Random(seed)
    zips = [f"{rnd.randint(10000, 99999)}" for _ in range(12)]
    return [{"zip": rnd.choice(zips), "age": str(rnd.randint(18, 80)), "sex": rnd.choice("MF"), "visits": str(rnd.randint(0, 4))} for _ in range(n)]


@pytest.fixture
def people(tmp_path):
    rows = _people()
    path = tmp_path / "people.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    database = tmp_path / "warehouse.duckdb"
    con = duckdb.connect(str(database))
    con.execute("CREATE TABLE people AS SELECT * FROM read_csv(?, header=true, all_varchar=true)", [str(path)])
    con.close()
    return {"csv": str(path), "database": str(database), "rows": rows, "dir": tmp_path}


QI = {"zip": "mask", "age": "bands:5,10,20,40", "sex": "flat"}


def _policy(tmp_path, name: str, **keys) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"qi": QI, "k": 5, "max_suppression": 0.05, **keys}))
    return str(path)


def test_no_keep_others_over_a_policy_keep_others_true_refuses_the_unnamed_column(people):
    policy = _policy(people["dir"], "keep.yaml", input=people["csv"], keep_others=True, output=str(people["dir"] / "kept.parquet"))
    kept = runner.invoke(cli.app, ["anonymize", "-p", policy, "-q"])
    assert kept.exit_code == 0, kept.output
    refused = runner.invoke(cli.app, ["anonymize", "-p", policy, "--no-keep-others", "-q", "--output", str(people["dir"] / "refused.parquet")])
    assert refused.exit_code == 2 and "visits" in refused.output, refused.output
    assert not (people["dir"] / "refused.parquet").exists()


# -- short flags and --json --------------------------------------------------------------------


def test_a_short_flag_means_the_same_long_flag_in_every_command():
    seen: dict[str, set[str]] = {}
    for path, command in _commands():
        for p in _options(command):
            shorts = [o for o in p.opts if not o.startswith("--")]
            for short in shorts:
                assert short in SHORT_FLAGS, f"{_name(path)}: short flag {short} ({p.opts}) is not in the table"
                assert SHORT_FLAGS[short] in p.opts, f"{_name(path)}: {short} is {p.opts}, elsewhere {SHORT_FLAGS[short]}"
                seen.setdefault(short, set()).add(_name(path))
            for short, long in SHORT_FLAGS.items():
                if long in p.opts:
                    assert short in p.opts, f"{_name(path)} has {long} without {short}"
    assert seen["-o"] >= {"anonymize", "generate", "report", "schema"} and seen["-i"] >= {"anonymize", "check", "profile", "sql", "generate", "hierarchy show"}
    assert set(seen) == set(SHORT_FLAGS)


def test_every_option_is_documented_json_included():
    undocumented = [f"{_name(path)} {p.opts[0]}" for path, command in _commands() for p in _options(command) if not p.hidden and not (p.help or "").strip()]
    assert not undocumented, undocumented
    with_json = {_name(path) for path, command in _commands() for p in _options(command) if "--json" in p.opts}
    assert {"anonymize", "check", "releases", "hierarchy show", "profile", "generate"} <= with_json


# -- output flags over the policy's output -------------------------------------------------------


@pytest.mark.parametrize("file_keys, words, expected", [
    ({"output_table": "t", "database": "d.duckdb"}, ["--in-place"], {"in_place": True, "output_table": None, "database": None, "output": None}),
    ({"in_place": True}, ["--output", "f.parquet"], {"in_place": False, "output": "f.parquet"}),
    ({"output_table": "t"}, ["--output", "f.parquet"], {"output_table": None, "output": "f.parquet"}),
    ({"output": "f.parquet"}, ["--output-table", "t"], {"output": None, "output_table": "t"}),
    ({"output": "f.parquet"}, ["--k", "3"], {"output": "f.parquet"}),  # no output flag: the file's output stands
], ids=["in-place over output_table", "output over in_place", "output over output_table", "output-table over output", "no output flag"])
def test_an_output_flag_replaces_the_policys_output(tmp_path, file_keys, words, expected):
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump({"input": "/data/x.duckdb", "table": "people", "k": 2, **file_keys}))
    release = policy_from_flags(str(policy), _parsed("anonymize", words), cli.anonymize).release
    for key, value in expected.items():
        got = getattr(release, key)
        assert (got == value) if key != "output" or value is None else got.endswith(value), (key, got)


def test_two_output_flags_are_still_refused(people):
    done = runner.invoke(cli.app, ["anonymize", "-i", people["database"], "--table", "people", *sum((["--qi", f"{c}={s}"] for c, s in QI.items()), []),
                                   "-k", "5", "--keep-others", "--in-place", "--output", str(people["dir"] / "x.parquet")])
    assert done.exit_code == 2 and "give only one of" in done.output, done.output


def _table(database: str, table: str) -> list[dict]:
    con = duckdb.connect(database, read_only=True)
    try:
        cursor = con.execute(f'SELECT * FROM "{table}"')  # the test's own fixed name
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]
    finally:
        con.close()


def _tables(database: str) -> set[str]:
    con = duckdb.connect(database, read_only=True)
    try:
        return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()


def test_in_place_flag_over_a_policy_output_table_runs_in_place(people):
    policy = _policy(people["dir"], "table.yaml", input=people["database"], table="people", keep_others=True, output_table="people_k5")
    done = runner.invoke(cli.app, ["anonymize", "--policy", policy, "--in-place", "-q"])
    assert done.exit_code == 0, done.output
    assert "people_k5" not in _tables(people["database"])
    released = _table(people["database"], "people")
    assert len(released) == len(people["rows"]) and released != people["rows"]
    assert check_k(released, list(QI), 5, 0.05)["ok"]


def test_output_flag_over_a_policy_in_place_writes_the_file_and_leaves_the_table(people):
    policy = _policy(people["dir"], "inplace.yaml", input=people["database"], table="people", keep_others=True, in_place=True)
    out = people["dir"] / "release.parquet"
    done = runner.invoke(cli.app, ["anonymize", "--policy", policy, "-o", str(out), "-q"])
    assert done.exit_code == 0, done.output
    assert _table(people["database"], "people") == people["rows"]
    released = read_rows(str(out))
    assert len(released) == len(people["rows"]) and check_k(released, list(QI), 5, 0.05)["ok"]


def test_output_flag_over_a_policy_output_table_writes_the_file_only(people):
    policy = _policy(people["dir"], "totable.yaml", input=people["database"], table="people", keep_others=True, output_table="people_k5")
    out = people["dir"] / "release.parquet"
    done = runner.invoke(cli.app, ["anonymize", "--policy", policy, "--output", str(out), "-q"])
    assert done.exit_code == 0, done.output
    assert out.exists() and "people_k5" not in _tables(people["database"])


# -- the policy a profile writes ---------------------------------------------------------------


def test_profile_policy_names_the_path_the_cli_prints_and_its_command_runs(people, monkeypatch):
    monkeypatch.chdir(people["dir"])
    done = runner.invoke(cli.app, ["profile", "-i", "people.csv", "--write-policy", "out/policy.yaml"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    printed = re.search(r"^next: (.+)$", done.output, re.M)[1].strip()
    text = (people["dir"] / "out" / "policy.yaml").read_text()
    commented = re.search(r"^# Run it:\s+(.+)$", text, re.M)[1].strip()
    assert commented == printed == "sqlanon anonymize --policy out/policy.yaml"
    words = shlex.split(commented)
    assert words[0] == "sqlanon"
    ran = runner.invoke(cli.app, [*words[1:], "-q"])
    assert ran.exit_code == 0, ran.output


def test_profile_policy_path_with_a_space_is_quoted_alike(people, monkeypatch):
    monkeypatch.chdir(people["dir"])
    done = runner.invoke(cli.app, ["profile", "-i", "people.csv", "--write-policy", "my policies/p.yaml"], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    printed = re.search(r"^next: (.+)$", done.output, re.M)[1].strip()
    commented = re.search(r"^# Run it:\s+(.+)$", (people["dir"] / "my policies" / "p.yaml").read_text(), re.M)[1].strip()
    assert commented == printed and shlex.split(printed)[-1] == "my policies/p.yaml"


# -- search: auto ------------------------------------------------------------------------------


def _registry_row(database: str) -> dict:
    con = duckdb.connect(database, read_only=True)
    try:
        search, policy = con.execute("SELECT search, policy FROM sqlanon_releases ORDER BY id DESC LIMIT 1").fetchone()
    finally:
        con.close()
    return {"search": search, "policy": json.loads(policy)}


def test_search_auto_is_recorded_as_the_search_it_chose(people):
    out, report = people["dir"] / "auto.parquet", people["dir"] / "auto.html"
    policy = _policy(people["dir"], "auto.yaml", input=people["csv"], keep_others=True, search="auto")
    done = runner.invoke(cli.app, ["anonymize", "-p", policy, "-o", str(out), "--report", str(report), "-q", "--json"])
    assert done.exit_code == 0, done.output
    result = json.loads(done.output)
    ran = result["search"]
    assert ran in ("optimal", "lightning") and result["search_auto"]["chose"] == ran
    registry = str(people["dir"] / "sqlanon_releases.duckdb")
    row = _registry_row(registry)
    assert row["search"] == f"{ran} (auto)"
    assert row["policy"]["search"] == ran and row["policy"]["search_auto"]["chose"] == ran
    assert f"search {ran} (auto)" in report.read_text()
    listed = runner.invoke(cli.app, ["releases", "--database", registry])
    assert f" {ran} (auto) " in listed.output, listed.output
    summary = runner.invoke(cli.app, ["anonymize", "-p", policy, "-o", str(out), "--overwrite", "-q"])
    assert summary.exit_code == 0 and re.search(rf"^search\s+{ran} \(auto\), k=5$", summary.output, re.M), summary.output


def test_a_search_named_is_recorded_as_it_is(people):
    out = people["dir"] / "optimal.parquet"
    policy = _policy(people["dir"], "optimal.yaml", input=people["csv"], keep_others=True, search="optimal")
    done = runner.invoke(cli.app, ["anonymize", "-p", policy, "-o", str(out), "-q"])
    assert done.exit_code == 0 and re.search(r"^search\s+optimal, k=5$", done.output, re.M), done.output
    row = _registry_row(str(people["dir"] / "sqlanon_releases.duckdb"))
    assert row["search"] == "optimal" and row["policy"]["search"] == "optimal" and "search_auto" not in row["policy"]
