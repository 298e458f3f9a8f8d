"""The documentation site builds: ``mkdocs build --strict`` (mkdocs.yml at the root, pages in docs/).

Strict mode turns every warning into a failure: a page missing from the nav, a link to a page or an
anchor that does not exist. The build also runs the hook (docs/hooks/reference.py) that generates
the CLI reference from the typer app and the policy reference from the policy's JSON Schema, so a
command or a policy key that cannot be rendered fails here too.
"""

import importlib.util
import os
import subprocess
import sys
import paths

import pytest

ROOT = str(paths.ROOT)

needs_mkdocs = pytest.mark.skipif(
    (importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None)
    and not os.environ.get("CI"),
    reason="mkdocs-material is not installed (pip install -e '.[docs]'); under CI=true this fails instead",
)


def _build(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )


@needs_mkdocs
def test_mkdocs_build_strict(tmp_path):
    done = _build(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    # the generated pages hold what the code says: every command, every policy key
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for command in ("sqlanon anonymize", "sqlanon check", "sqlanon hierarchy import", "sqlanon schema"):
        assert command in cli, command
    assert "--max-suppression" in cli
    policy = (site / "policy" / "index.html").read_text(encoding="utf-8")
    import json

    with open(os.path.join(ROOT, "schemas", "policy.schema.json"), encoding="utf-8") as fh:
        keys = json.load(fh)["properties"]
    missing = [key for key in keys if f"<code>{key}</code>" not in policy]
    assert not missing, f"policy keys missing from docs/policy.md's reference: {missing}"
    # every result file of bench/results is on the result-files page
    results = (site / "bench-results" / "index.html").read_text(encoding="utf-8")
    for name in os.listdir(os.path.join(ROOT, "bench", "results")):
        assert name in results, name


def test_readme_links_resolve():
    """The README is read on the forge, outside the site: its relative links name files that exist."""
    import re

    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert local, "the README links to the docs pages"
    missing = [t for t in local if not os.path.exists(os.path.join(ROOT, t))]
    assert not missing, f"README links to missing files: {missing}"
