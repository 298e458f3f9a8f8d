"""Headless chromium over the DevTools protocol on a pipe (``--remote-debugging-pipe``: commands on
fd 3, events and answers on fd 4, JSON messages ending in NUL). No port is opened, no package
needed. Used by the report test and by ``docs/make_screenshot.py``."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

#: run in the page: every chart's SVG box and the boxes of its bars (getBBox), plus page facts
PROBE = r"""
(() => {
  const charts = Array.from(document.querySelectorAll('svg.chart')).map(svg => {
    const box = svg.getBBox();
    const bars = Array.from(svg.querySelectorAll('rect.bar')).map(r => { const b = r.getBBox(); return [b.width, b.height]; });
    return {cls: svg.getAttribute('class'), label: svg.getAttribute('aria-label'), width: box.width, height: box.height, bars: bars};
  });
  return JSON.stringify({charts: charts, title: document.title, scripts: document.scripts.length,
                         details: document.querySelectorAll('details').length});
})()
"""


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="sqlanon-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        ours = (self._to_child, self._from_child)

        def wire():  # in the child: fd 3 = commands in, fd 4 = messages out; our ends closed
            a, b = os.dup(to_child_r), os.dup(from_child_w)  # above 4, so the dup2s cannot clobber
            os.dup2(a, 3)
            os.dup2(b, 4)
            for fd in (a, b, to_child_r, from_child_w, *ours):
                if fd not in (3, 4):
                    try:
                        os.close(fd)
                    except OSError:
                        pass

        args = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-extensions", "--disable-background-networking", "--remote-debugging-pipe",
                f"--user-data-dir={self.profile}", "--window-size=1200,900", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     close_fds=False, preexec_fn=wire)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    # -- protocol ------------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict:
        while b"\0" not in self._buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: bool = True) -> dict:
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method: str) -> dict:
        for i, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    # -- a page --------------------------------------------------------------------------------
    def open(self, url: str) -> None:
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, path: str, width: int = 1200, max_height: int | None = None) -> None:
        metrics = self.send("Page.getLayoutMetrics")
        height = int(metrics["cssContentSize"]["height"])
        if max_height:
            height = min(height, max_height)
        shot = self.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(shot["data"]))

    def console_errors(self) -> list[str]:
        out = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append(f"exception: {p.get('exceptionDetails', {}).get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(f"console.{p['type']}: {[a.get('value') for a in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} ({p['entry'].get('url')})")
        return out

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def inspect_page(html_path: str, screenshot: str | None = None, executable: str | None = None) -> dict:
    """Open a local HTML file headless: its charts' boxes, console errors, requested URLs."""
    browser = Browser(executable or find_chromium())
    try:
        browser.open("file://" + os.path.abspath(html_path))
        facts = json.loads(browser.evaluate(PROBE))
        if screenshot:
            browser.screenshot(screenshot)
        facts["errors"] = browser.console_errors()
        facts["urls"] = browser.requested_urls()
        return facts
    finally:
        browser.close()
