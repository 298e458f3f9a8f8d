"""Render reports in headless chromium and save the top of each page as a PNG:

* docs/report_adult.png (the README's screenshot): the bundled example's report
  (examples/adult/policy.yaml, ARX's hierarchies);
* docs/img/profile_report.png (docs/profile.md): the report of the release that the policy
  written by ``sqlanon profile`` on examples/adult/adult.csv makes (run in a temporary folder,
  as the page's transcript does).

    .venv/bin/python docs/make_screenshot.py
"""

import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from browser import Browser, find_chromium  # noqa: E402

import sqlanon  # noqa: E402


def shoot(html: str, png: str, max_height: int) -> None:
    """The top of ``html`` (summary, risk, class sizes, utility) as ``png``, 1200 pixels wide."""
    browser = Browser(find_chromium())
    try:
        browser.open("file://" + html)
        browser.screenshot(png, max_height=max_height)
    finally:
        browser.close()
    print(png, os.path.getsize(png), "bytes; report", os.path.getsize(html), "bytes")


sqlanon.anonymize(os.path.join(ROOT, "examples", "adult", "policy.yaml"))
shoot(os.path.join(ROOT, "examples", "adult", "out", "adult_k5.html"), os.path.join(HERE, "report_adult.png"), 1750)

with tempfile.TemporaryDirectory() as tmp:  # a clone's root, as in the transcript
    clone = os.path.join(tmp, "sqlanon")
    shutil.copytree(os.path.join(ROOT, "examples", "adult"), os.path.join(clone, "examples", "adult"), ignore=shutil.ignore_patterns("out"))
    os.chdir(clone)
    sqlanon.profile("examples/adult/adult.csv", write_policy="out/policy.yaml")
    sqlanon.anonymize("out/policy.yaml")
    os.makedirs(os.path.join(HERE, "img"), exist_ok=True)
    shoot(os.path.join(clone, "out", "adult_k5.html"), os.path.join(HERE, "img", "profile_report.png"), 1750)
