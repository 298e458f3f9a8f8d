"""Every shell block of the README and of the docs runs as written, or says why it cannot.

A fenced block whose language is ``sh``, ``bash``, ``shell`` or ``console`` in README.md or
docs/**/*.md is either

* marked not runnable, with a reason: an HTML comment ``<!-- not-run: REASON -->`` on the line
  right before the fence (blank lines between allowed), or ``not-run``/``notest`` after the
  language in the fence's info string (```` ```bash notest ````); or
* run here, and must exit 0; or
* marked ``<!-- run-on: postgres -->`` or ``<!-- run-on: spark -->`` (a note may follow): a block
  that needs a server, run by its own test against a local PostgreSQL server (pgserver; every
  ``postgresql://...`` URL of the block points at it, its database holding the table the block
  names) or a local Spark session (over a ``lake/`` of Parquet files the test writes), not by
  the page's run.

The blocks of one page run in order, each by ``bash -e -o pipefail``, in one temporary directory
that looks like a fresh clone to them: a copy of ``examples/`` (so nothing is written into the
checkout) and a ``.venv/bin`` whose ``python``, ``sqlanon`` and ``activate`` are this test's Python
and this checkout's sqlanon, so ``. .venv/bin/activate`` and ``.venv/bin/sqlanon`` work as the
README shows. In a ``console`` block only the ``$ `` lines (and their ``\\`` continuations) are
commands; the rest is output. After a page has run, every file it wrote must be one git ignores
(the quick start writes under ``out/``).
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
import paths

import pytest

ROOT = str(paths.ROOT)
SHELLS = {"sh", "bash", "shell", "console"}
NOT_RUN_COMMENT = re.compile(r"^\s*<!--\s*not-run:\s*(?P<reason>.*?)\s*-->\s*$")
NOT_RUN_INFO = {"not-run", "notest"}
RUN_ON_COMMENT = re.compile(r"^\s*<!--\s*run-on:\s*(?P<server>postgres|spark)\b.*-->\s*$")
OPEN_FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass
class Block:
    path: str  # relative to ROOT
    line: int  # 1-based line of the opening fence
    language: str
    info: str
    text: str
    not_run: str | None  # the reason, or None when the block is run
    server: str | None = None  # postgres | spark: run by its own test against that engine

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def script(self) -> str:
        if self.language != "console":
            return self.text
        commands, going_on = [], False
        for raw in self.text.splitlines():
            if raw.startswith("$ ") or going_on:
                line = raw[2:] if raw.startswith("$ ") and not going_on else raw
                commands.append(line)
                going_on = line.rstrip().endswith("\\")
        return "\n".join(commands) + "\n"


def doc_files() -> list[str]:
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
    return files


def blocks_of(path: str) -> list[Block]:
    """Fenced blocks of one Markdown file (shell languages only)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    out, i = [], 0
    while i < len(lines):
        opened = OPEN_FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        fence, info = opened["fence"], opened["info"].strip()
        start = i
        i += 1
        body = []
        close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i][len(opened["indent"]):] if lines[i].startswith(opened["indent"]) else lines[i])
            i += 1
        i += 1  # the closing fence
        words = info.split()
        language = words[0].lower() if words else ""
        if language not in SHELLS:
            continue
        reason = None
        flags = NOT_RUN_INFO.intersection(w.lower() for w in words[1:])
        if flags:
            reason = f"fence marked {sorted(flags)[0]}"
        else:
            j = start - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            marked = NOT_RUN_COMMENT.match(lines[j]) if j >= 0 else None
            if marked:
                reason = marked["reason"]
            server = RUN_ON_COMMENT.match(lines[j]) if j >= 0 else None
            if server:
                reason = f"runs on {server['server']} (test_server_block_runs)"
        rel = os.path.relpath(path, ROOT)
        out.append(Block(rel, start + 1, language, info, "\n".join(body) + "\n", reason,
                         server["server"] if reason and server else None))
    return out


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks_of(path)]


def pages_with_runnable_blocks() -> list[str]:
    return sorted({b.path for b in all_blocks() if b.not_run is None})


# ---------------------------------------------------------------- the fresh-clone sandbox


def _executable(path: str, text: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def sandbox(where: str) -> dict:
    """A directory like a fresh clone with its .venv; returns the environment to run blocks in."""
    shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(where, "examples"),
                    ignore=shutil.ignore_patterns("out", "target", "logs", "dbt_packages", "*.wal"))
    for name in ("README.md", ".gitignore"):
        shutil.copy(os.path.join(ROOT, name), os.path.join(where, name))
    bin_dir = os.path.join(where, ".venv", "bin")
    os.makedirs(bin_dir)
    python = sys.executable
    for name in ("python", "python3"):
        _executable(os.path.join(bin_dir, name), f'#!/bin/sh\nexec "{python}" "$@"\n')
    _executable(os.path.join(bin_dir, "sqlanon"), f'#!/bin/sh\nexec "{python}" -m sqlanon "$@"\n')
    with open(os.path.join(bin_dir, "activate"), "w", encoding="utf-8") as fh:
        fh.write(f'VIRTUAL_ENV="{os.path.join(where, ".venv")}"; export VIRTUAL_ENV\n'
                 f'PATH="{bin_dir}:$PATH"; export PATH\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("VIRTUAL_ENV", None)
    env.pop("SQLANON_DEBUG", None)
    # as for a user's shell: no venv on PATH until the block activates it
    venv_bin = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
    return env


def _files(where: str) -> set[str]:
    out = set()
    for folder, dirs, files in os.walk(where):
        dirs[:] = [d for d in dirs if d != ".venv"]
        for name in files:
            out.add(os.path.relpath(os.path.join(folder, name), where))
    return out


# ---------------------------------------------------------------- tests


def test_every_shell_block_is_run_or_says_why_not():
    blocks = all_blocks()
    assert blocks, "no shell block found in README.md and docs/"
    empty = [b.where for b in blocks if b.not_run is not None and not b.not_run.strip()]
    assert not empty, f"not-run markers without a reason: {empty}"
    readme = [b for b in blocks if b.path == "README.md"]
    assert [b.not_run is None for b in readme[:2]] == [False, False], "the README starts with its two commands"
    assert any(b.not_run is None for b in readme), "the README's quick start has runnable blocks"


def test_readme_test_command_is_what_ci_runs():
    readme = [b for b in blocks_of(os.path.join(ROOT, "README.md"))]
    second = readme[1].text.strip()
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        ci = [line.strip() for line in fh if line.strip() and not line.lstrip().startswith("#")]
    assert ci[-1] == second, f".ci/run ends with {ci[-1]!r}, the README's second command is {second!r}"


def test_console_blocks_run_only_their_commands():
    block = Block("x.md", 1, "console", "console", "$ echo a \\\n    b\na b\n$ true\n...\n", None)
    assert block.script() == "echo a \\\n    b\ntrue\n"


def test_not_run_markers_are_read():
    text = ("<!-- not-run: needs a server -->\n\n```bash\nfalse\n```\n"
            "```bash notest\nfalse\n```\n```sh\ntrue\n```\n```python\nx\n```\n"
            "<!-- run-on: spark (a note) -->\n```bash\nfalse\n```\n")
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".md", dir=ROOT, delete=False) as fh:
        fh.write(text)
    try:
        blocks = blocks_of(fh.name)
    finally:
        os.unlink(fh.name)
    assert [(b.language, b.not_run, b.server) for b in blocks] == [
        ("bash", "needs a server", None), ("bash", "fence marked notest", None), ("sh", None, None),
        ("bash", "runs on spark (test_server_block_runs)", "spark")]


MARK = "@@sqlanon-doc-block "


def page_script(blocks: list[Block]) -> str:
    """The page's runnable blocks as one shell session (activation and ``cd`` carry over, as in a
    terminal), each announced on stderr so a failure names its block."""
    parts = []
    for block in blocks:
        if block.not_run is None:
            parts.append(f"echo '{MARK}{block.where}' >&2\n{block.script()}")
        else:
            parts.append(f"# {block.where} not run: {block.not_run}")
    return "\n".join(parts)


def run_script(script: str, where: str, env: dict) -> tuple[subprocess.CompletedProcess, str | None]:
    """Run a page's script in ``where``; the result and the block that failed (None: none did)."""
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=where, env=env,
                          capture_output=True, text=True, timeout=900)
    if done.returncode == 0:
        return done, None
    return done, done.stderr.rsplit(MARK, 1)[-1].split("\n", 1)[0] if MARK in done.stderr else "?"


# ---------------------------------------------------------------- the quick start


def quickstart_blocks() -> list[Block]:
    """The shell blocks between the README's quick-start markers (docs/install.md includes them)."""
    path = os.path.join(ROOT, "README.md")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    start = next(i for i, line in enumerate(lines) if "[start:quickstart]" in line) + 1
    end = next(i for i, line in enumerate(lines) if "[end:quickstart]" in line) + 1
    return [b for b in blocks_of(path) if start < b.line < end]


def commands(block: Block) -> list[str]:
    """A block's commands, each ``\\`` continuation joined to its line."""
    out, going_on = [], False
    for line in block.script().splitlines():
        if going_on:
            out[-1] = out[-1][:-1].rstrip() + " " + line.strip()
        else:
            out.append(line.strip())
        going_on = line.rstrip().endswith("\\")
    return out


#: the quick start's spine, in order: (step, pattern of its command; {policy} the profile's)
SPINE = [
    ("profile", r"sqlanon profile .*--write-policy (?P<policy>\S+)"),
    ("anonymize", r"sqlanon anonymize .*--policy {policy}(\s|$)"),
    ("check", r"sqlanon check "),
    ("report", r"sqlanon report "),
]
#: files the README's quick start must have made when it has run (a step that exits 0 but does
#: nothing is a broken step too)
QUICKSTART_FILES = ["out/warehouse.duckdb", "out/policy.yaml", "out/adult_k5.html", "out/release_1.html",
                    "out/adult_spark.sql", "examples/adult/out/adult_k5.parquet"]


def spine_blocks() -> list[tuple[str, Block]]:
    """Each step of :data:`SPINE` with the quick-start block holding its first command."""
    found, policy, at = [], None, 0
    blocks = quickstart_blocks()
    for step, pattern in SPINE:
        pattern = pattern.format(policy=re.escape(policy or ""))
        for i in range(at, len(blocks)):
            hit = next((re.match(pattern, c) for c in commands(blocks[i]) if re.match(pattern, c)), None)
            if hit:
                policy = policy or hit.groupdict().get("policy")
                found.append((step, blocks[i]))
                at = i
                break
        else:
            found.append((step, None))
    return found


def test_quick_start_is_profile_policy_anonymize_check_report():
    """The quick start activates the venv, creates the warehouse it profiles, and runs profile ->
    anonymize by the written policy -> check -> report, in that order, every block run (none
    marked not-run), its outputs under ``out/``."""
    blocks = quickstart_blocks()
    assert blocks and all(b.not_run is None for b in blocks), [b.where for b in blocks if b.not_run]
    assert commands(blocks[0])[0] in (". .venv/bin/activate", "source .venv/bin/activate"), blocks[0].text
    spine = spine_blocks()
    missing = [step for step, block in spine if block is None]
    assert not missing, f"the quick start lacks (in order) {missing}"
    profile = next(c for c in commands(spine[0][1]) if c.startswith("sqlanon profile"))
    source = re.search(r"--input (\S+)", profile)[1]
    before = "".join(b.text for b in blocks[: blocks.index(spine[0][1])])
    assert source.startswith("out/") and source in before, f"the profiled {source} is not made by an earlier block"
    for _step, block in spine:
        for c in commands(block):
            for path in re.findall(r"--(?:write-policy|output|report) (\S+)", c):
                assert path.startswith("out/"), f"{block.where}: {path} is not under out/"


@pytest.mark.parametrize("page", pages_with_runnable_blocks())
def test_page_runs_as_written(page, tmp_path):
    where = str(tmp_path)
    env = sandbox(where)
    if page != "README.md":  # the README shows activating the venv; other pages assume it done
        env["PATH"] = os.path.join(where, ".venv", "bin") + os.pathsep + env["PATH"]
    before = _files(where)
    script = page_script(blocks_of(os.path.join(ROOT, page)))
    done, block = run_script(script, where, env)
    if block is not None:
        pytest.fail(f"{block} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}"
                    f"\n--- stderr\n{done.stderr[-3000:]}")
    if page == "README.md":
        ran = done.stderr.count(MARK)
        assert ran == sum(b.not_run is None for b in blocks_of(os.path.join(ROOT, page))), "not every block ran"
        missing = [p for p in QUICKSTART_FILES if not os.path.isfile(os.path.join(where, p))]
        assert not missing, f"the quick start ran but did not make {missing}"
    written = sorted(_files(where) - before)
    if shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")):
        not_ignored = [p for p in written if subprocess.run(
            ["git", "-C", ROOT, "check-ignore", "-q", "--no-index", p]).returncode != 0]
        assert not not_ignored, f"{page} wrote files git does not ignore: {not_ignored}"


def test_a_failing_line_inside_a_block_fails_the_page(tmp_path):
    """Not only a block's last command counts: a failure on any line stops the page there."""
    blocks = [Block("x.md", 1, "bash", "bash", "false\ntrue\n", None), Block("x.md", 5, "bash", "bash", "touch ran\n", None)]
    done, block = run_script(page_script(blocks), str(tmp_path), dict(os.environ))
    assert block == "x.md:1" and not (tmp_path / "ran").exists()


def test_a_broken_quick_start_step_fails_the_page(tmp_path):
    """The quick start with ``sqlanon anonymize`` broken (the sandbox's sqlanon exits 1 for it):
    the run stops at the anonymize block, naming it, and nothing after it runs (no check, no
    report). The blocks up to the report are run; the rest of the README is not needed."""
    where = str(tmp_path)
    env = sandbox(where)
    spine = dict(spine_blocks())
    broken = os.path.join(where, ".venv", "bin", "sqlanon")
    _executable(broken, f'#!/bin/sh\nif [ "$1" = anonymize ]; then echo "broken on purpose" >&2; exit 1; fi\n'
                        f'exec "{sys.executable}" -m sqlanon "$@"\n')
    blocks = quickstart_blocks()
    script = page_script(blocks[: blocks.index(spine["report"]) + 1])
    done, block = run_script(script, where, env)
    assert block == spine["anonymize"].where, (block, done.stderr[-2000:])
    assert "broken on purpose" in done.stderr
    assert os.path.isfile(os.path.join(where, "out", "policy.yaml"))  # the profile ran
    assert not os.path.exists(os.path.join(where, "out", "release_1.html"))  # the report did not


# ---------------------------------------------------------------- blocks that need a server


def server_blocks(server: str) -> list[Block]:
    return [b for b in all_blocks() if b.server == server]


def test_server_blocks_are_marked():
    """The engines page's PostgreSQL and Spark examples are run (on local servers), not skipped."""
    assert server_blocks("postgres") and server_blocks("spark")


def _run_block(block: Block, where: str, env: dict, script: str) -> None:
    env["PATH"] = os.path.join(where, ".venv", "bin") + os.pathsep + env["PATH"]
    before = _files(where)
    done, failed = run_script(f"echo '{MARK}{block.where}' >&2\n{script}", where, env)
    assert failed is None, f"{block.where} exited {done.returncode}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    if shutil.which("git") and os.path.exists(os.path.join(ROOT, ".git")):
        written = sorted(_files(where) - before)
        not_ignored = [p for p in written if subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", "--no-index", p]).returncode != 0]
        assert not not_ignored, f"{block.where} wrote files git does not ignore: {not_ignored}"


def _people(n: int = 300, seed: int = 7) -> list[tuple]:
    import random

    rnd = random.Random(seed)
    return [(rnd.choice(["12345", "12346", "12355", "12356", "13001", "13002"]), rnd.randint(20, 59),
             rnd.choice(["flu", "cold", "hiv", "cancer"])) for _ in range(n)]


@pytest.mark.postgres
@pytest.mark.parametrize("block", server_blocks("postgres"), ids=lambda b: b.where)
def test_server_block_runs_on_postgres(block, tmp_path):
    """A ``run-on: postgres`` block, its URLs pointed at a database ``warehouse`` of a local
    server holding the table ``people`` (zip, age, disease); every table it releases there
    then passes the independent k re-check."""
    psycopg = pytest.importorskip("psycopg")
    from checker import check_k
    from conftest import local_postgres

    where = str(tmp_path)
    env = sandbox(where)
    with local_postgres() as uri:
        with psycopg.connect(uri, autocommit=True) as con:
            con.execute("CREATE DATABASE warehouse")
        head, _, query = uri.partition("?")
        url = head.rsplit("/", 1)[0] + "/warehouse" + (f"?{query}" if query else "")
        with psycopg.connect(url, autocommit=True) as con:
            con.execute("CREATE TABLE people (zip TEXT, age INTEGER, disease TEXT)")
            with con.cursor().copy("COPY people FROM STDIN") as copy:
                for row in _people():
                    copy.write_row(row)
        script = re.sub(r"postgres(?:ql)?://[^\s'\"]*/warehouse\b", lambda _: shlex.quote(url), block.script())
        assert script != block.script(), f"{block.where} names no postgresql://.../warehouse URL"
        _run_block(block, where, env, script)
        with psycopg.connect(url) as con:
            tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'").fetchall()]
            released = {}
            for t in (t for t in tables if re.fullmatch(r"people_k(\d+)", t)):
                cur = con.execute("SELECT * FROM " + t)  # names of our own tables, matched above
                released[t] = [dict(zip([d.name for d in cur.description], r)) for r in cur.fetchall()]
            recorded = con.execute("SELECT COUNT(*) FROM sqlanon_releases").fetchone()[0] if "sqlanon_releases" in tables else 0
    assert released and recorded >= len(released)
    for t, rows in released.items():
        k = int(t.rsplit("_k", 1)[1])
        qis = [c for c in ("zip", "age") if c in rows[0]]
        assert check_k([{c: str(v) for c, v in r.items()} for r in rows], qis, k, 0.0)["ok"], t


@pytest.mark.spark
@pytest.mark.parametrize("block", server_blocks("spark"), ids=lambda b: b.where)
def test_server_block_runs_on_spark(block, spark, tmp_path, monkeypatch):
    """A ``run-on: spark`` block over ``lake/people/*.parquet`` (two part files of zip, age,
    disease): each of its ``sqlanon`` commands runs through the CLI in this process, so its
    ``--engine spark`` finds the test run's local session already started (as under spark-submit;
    a JVM per command would cost a minute each); each release it writes under ``out/`` passes the
    independent k re-check."""
    import duckdb
    import pyarrow.parquet as pq
    from checker import check_k
    from typer.testing import CliRunner

    from sqlanon.cli.app import app

    where = str(tmp_path)
    sandbox(where)
    lake = os.path.join(where, "lake", "people")
    os.makedirs(lake)
    rows = _people()
    con = duckdb.connect()
    for part, chunk in enumerate([rows[:150], rows[150:]]):
        con.execute("CREATE OR REPLACE TABLE people (zip VARCHAR, age INTEGER, disease VARCHAR)")
        con.executemany("INSERT INTO people VALUES (?, ?, ?)", chunk)
        target = os.path.join(lake, f"part-{part}.parquet").replace("'", "''")
        con.execute(f"COPY people TO '{target}' (FORMAT PARQUET)")
    con.close()
    monkeypatch.chdir(where)
    before = _files(where)
    for command in commands(block):
        args = shlex.split(command, comments=True)
        assert args[0] == "sqlanon", f"{block.where}: {command!r} is not a sqlanon command"
        done = CliRunner().invoke(app, args[1:])
        assert done.exit_code == 0, f"{block.where}: {command}\n{done.output[-3000:]}"
    outs = [os.path.join(where, "out", d) for d in sorted(os.listdir(os.path.join(where, "out"))) if re.search(r"_k\d+$", d)]
    assert outs, f"{block.where} wrote no release under out/"
    for out in outs:
        released = pq.read_table(out).to_pylist()
        k = int(out.rsplit("_k", 1)[1])
        assert len(released) == len(rows) and check_k(released, ["zip", "age"], k, 0.0)["ok"], out
    written = sorted(_files(where) - before)
    not_ignored = [p for p in written if subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", "--no-index", p]).returncode != 0]
    assert not not_ignored, f"{block.where} wrote files git does not ignore: {not_ignored}"
