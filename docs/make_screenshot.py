"""Render the Adult example's report (examples/adult/policy.yaml) in headless chromium and save the
top of the page as docs/report_adult.png (the README's screenshot).

    .venv/bin/python docs/make_screenshot.py
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from browser import Browser, find_chromium  # noqa: E402

import sqlanon  # noqa: E402

report = sqlanon.anonymize(os.path.join(ROOT, "examples", "adult", "policy.yaml"))
html = os.path.join(ROOT, "examples", "adult", "out", "adult_k5.html")
browser = Browser(find_chromium())
shot = os.path.join(HERE, "report_adult.png")
try:
    browser.open("file://" + html)
    # the top of the page (summary, risk, class sizes, utility): the part the README shows
    browser.screenshot(shot, max_height=1750)
finally:
    browser.close()
print(shot, os.path.getsize(shot), "bytes; report", os.path.getsize(html), "bytes")
