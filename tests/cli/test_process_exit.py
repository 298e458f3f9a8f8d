"""The CLI process leaves without the interpreter's teardown (:mod:`sqlanon.cli.process_exit`), but
only after what that teardown did for us: threads joined (thread pools told to stop first),
``atexit`` functions run, the standard streams flushed; the command's exit code kept."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    script = tmp_path / "leave.py"
    script.write_text(textwrap.dedent(code))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the streams buffered, as usual
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)


def test_leave_joins_threads_runs_atexit_flushes_and_keeps_the_code(tmp_path):
    got = _run(
        """
        import atexit, sys, threading, time
        from concurrent.futures import ThreadPoolExecutor
        from sqlanon.cli.process_exit import leave

        atexit.register(lambda: open("atexit.txt", "w").write("ran"))
        def late():
            time.sleep(0.3)
            open("thread.txt", "w").write("joined")
        threading.Thread(target=late).start()
        pool = ThreadPoolExecutor(max_workers=2)  # idle workers left running: they must not hang the exit
        pool.submit(lambda: None).result()
        for _ in range(1000):
            sys.stdout.write("x" * 200)  # buffered (a pipe): the last ones only leave at the flush
        sys.stderr.write("last words")
        leave(3)
        print("not reached")
        """,
        tmp_path,
    )
    assert got.returncode == 3, got.stderr
    assert got.stdout == "x" * 200_000
    assert got.stderr == "last words"
    assert (tmp_path / "atexit.txt").read_text() == "ran"
    assert (tmp_path / "thread.txt").read_text() == "joined"


def test_leave_none_is_zero_and_a_message_is_pythons(tmp_path):
    assert _run("from sqlanon.cli.process_exit import leave\nleave(None)\n", tmp_path).returncode == 0
    got = _run("from sqlanon.cli.process_exit import leave\nleave('it went wrong')\n", tmp_path)
    assert got.returncode == 1
    assert got.stderr.strip().endswith("it went wrong")


def test_an_unflushable_stdout_is_status_120(tmp_path):
    got = _run(
        """
        import os, sys
        from sqlanon.cli.process_exit import leave

        sys.stdout.write("held in the buffer")
        os.close(1)
        leave(0)
        """,
        tmp_path,
    )
    assert got.returncode == 120


def test_the_command_exits_with_its_code_and_all_its_output(tmp_path):
    """``python -m sqlanon`` goes through main() and leave(): the version, a usage error's code."""
    version = subprocess.run([sys.executable, "-m", "sqlanon", "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("sqlanon "), version
    usage = subprocess.run([sys.executable, "-m", "sqlanon", "anonymize", "--no-such-flag"], capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2 and "No such option" in usage.stderr, usage
