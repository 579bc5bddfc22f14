#!/usr/bin/env python3
"""A screenshot of the dashboard (docs/img/dashboard.png): runs the IPv4 router of the README on
built-in traffic with --http, keeps the dashboard open in headless Chromium for --history
seconds of real time so its charts fill, then captures the page.

`chromium --screenshot` cannot do this: under --virtual-time-budget the page's timers run ahead
of the run's real clock, so the charts hold a second of history at most. The page is driven
through the DevTools protocol over a pipe (--remote-debugging-pipe: JSON messages ended by NUL on
file descriptors 3 and 4), which needs nothing beyond the standard library.

    tools/dashboard_screenshot.py [--bin build/fulcrum] [--out docs/img/dashboard.png]
                                  [--history 60] [--size 1400x900]
"""
import argparse
import base64
import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RUN = ["configs/ipv4-router.click", "--port", "gen:size=64,flows=1024,dst=routes,routes=configs/routes-demo.txt",
       "--port", "net_null0,no-rx=1", "--quiet"]
URL_LINE = re.compile(r"fulcrum: control plane at (http://\S+/)")
STOP_TIMEOUT_S = 30
SETTLE_S = 2  # after the last poll, for the charts to be drawn
FIRST_FREE_FD = 10


class DevTools:
    """Chromium driven over --remote-debugging-pipe."""

    def __init__(self, size):
        browser_in, self.to_browser = os.pipe()
        self.from_browser, browser_out = os.pipe()
        self.profile = tempfile.mkdtemp(prefix="fulcrum-screenshot-")

        def pipes_on_3_and_4():
            # Out of the way first: either end may itself be 3 or 4.
            read_end = fcntl.fcntl(browser_in, fcntl.F_DUPFD, FIRST_FREE_FD)
            write_end = fcntl.fcntl(browser_out, fcntl.F_DUPFD, FIRST_FREE_FD)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(
            [shutil.which("chromium") or "chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
             "--hide-scrollbars", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={size[0]},{size[1]}", "about:blank"],
            preexec_fn=pipes_on_3_and_4, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(browser_in)
        os.close(browser_out)
        self.pending, self.next_id, self.session = b"", 0, None

    def call(self, method, params=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session and not method.startswith(("Target.", "Browser.")):
            msg["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.pending:
                chunk = os.read(self.from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"chromium closed the pipe during {method}")
                self.pending += chunk
            raw, self.pending = self.pending.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url, size):
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def close(self):
        try:
            self.call("Browser.close")
            self.proc.wait(timeout=STOP_TIMEOUT_S)
        except (RuntimeError, OSError, subprocess.TimeoutExpired):
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "fulcrum"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "img", "dashboard.png"))
    ap.add_argument("--history", type=float, default=60, help="seconds the page polls before the shot")
    ap.add_argument("--size", default="1400x900")
    args = ap.parse_args()
    size = tuple(int(x) for x in args.size.split("x"))
    seconds = int(args.history + 60)
    fulcrum = subprocess.Popen([os.path.abspath(args.bin), "run", *RUN, "--seconds", str(seconds),
                                "--http", "127.0.0.1:0"], cwd=ROOT, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    browser = None
    try:
        url = None
        for line in fulcrum.stderr:
            m = URL_LINE.search(line)
            if m:
                url = m.group(1)
                break
        if url is None:
            print("fulcrum run printed no control plane URL", file=sys.stderr)
            return 1
        threading.Thread(target=fulcrum.stderr.read, daemon=True).start()
        browser = DevTools(size)
        browser.open(url, size)
        time.sleep(args.history + SETTLE_S)
        png = browser.screenshot()
        with open(args.out, "wb") as f:
            f.write(png)
        print(f"{args.out}: {len(png)} bytes, {size[0]}x{size[1]}, {args.history:g} s of history")
        return 0
    finally:
        if browser:
            browser.close()
        fulcrum.send_signal(signal.SIGINT)
        try:
            fulcrum.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            fulcrum.kill()


if __name__ == "__main__":
    sys.exit(main())
