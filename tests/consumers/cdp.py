#!/usr/bin/env python3
"""Drives headless Chromium through the DevTools protocol for the page tests.

cdp.py CHROMIUM SCRATCH_DIR < steps.json

One Chromium (--remote-debugging-pipe: the protocol as NUL-separated JSON
on file descriptors 3 and 4, no port and no extra package) runs every step
in turn on one page:
  {"open": URL}                   load it, wait for the load event
  {"wait": JS}                    poll until JS is truthy (15 s at most)
  {"eval": JS}                    its value, as JSON
  {"click": CSS}                  a mouse click at the element's centre
  {"type": [CSS, TEXT]}           focus it, insert TEXT, fire "input"
  {"drag": [CSS, FROM, TO]}       press at FROM, move to TO, release; FROM
                                  and TO are fractions of the element's width
  {"screenshot": PNG}             the page as it looks now
Prints a line "step N: VALUE" per step (strings as they are, other values
as JSON, newlines as spaces), then "error: TEXT" per console error, uncaught
exception or CSP refusal; a step that fails stops the run with a line
"failed: MESSAGE" (and status 1).
"""
import base64
import json
import os
import select
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium, scratch):
        self.profile = tempfile.mkdtemp(dir=scratch, prefix="cdp-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes replies on fd 4: the
        # shell puts the pipes there.
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$@" 3<&%d 4>&%d' % (to_chrome_r, from_chrome_w), "sh",
             chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--remote-debugging-pipe", "--window-size=1280,900",
             "--user-data-dir=" + self.profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(to_chrome_r, from_chrome_w))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.errors = []
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(method + ": " + reply["error"].get("message", "?"))
                return reply.get("result", {})

    def read(self, timeout=30):
        while b"\0" not in self.buf:
            ready, _, _ = select.select([self.from_chrome], [], [], timeout)
            if not ready:
                raise RuntimeError("Chromium said nothing for %d s" % timeout)
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        msg = json.loads(raw)
        if "method" in msg:
            self.note(msg)
        return msg

    def note(self, msg):
        m, p = msg["method"], msg.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append("log: " + p["entry"].get("text", ""))
        self.events.append(m)

    def start(self):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)
        attached = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                             session=False)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")

    def evaluate(self, js):
        r = self.send("Runtime.evaluate", {"expression": js, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("eval: " + r["exceptionDetails"].get("exception", {}).get("description", js))
        return r.get("result", {}).get("value")

    def open(self, url):
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.until("Page.loadEventFired", "Page.navigatedWithinDocument")
        # Only the fragment changed: load the page again, as a new visit.
        if "Page.loadEventFired" not in self.events:
            self.events.clear()
            self.send("Page.reload")
            self.until("Page.loadEventFired")

    def until(self, *methods):
        deadline = time.time() + 60
        while not any(m in self.events for m in methods):
            if time.time() > deadline:
                raise RuntimeError("none of %s came" % ", ".join(methods))
            self.read(max(0.1, deadline - time.time()))

    def wait(self, js):
        deadline = time.time() + 15
        while not self.evaluate(js):
            if time.time() > deadline:
                raise RuntimeError("still false after 15 s: " + js)
            time.sleep(0.05)
        return True

    def box(self, css):
        b = self.evaluate("(() => { const e = document.querySelector(%s); if (!e) return null;"
                          " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                          " return [r.left, r.top, r.width, r.height]; })()" % json.dumps(css))
        if not b:
            raise RuntimeError("no element " + css)
        return b

    def mouse(self, kind, x, y):
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                               "buttons": 1 if kind != "mouseReleased" else 0,
                                               "clickCount": 1})

    def step(self, s):
        if "open" in s:
            return self.open(s["open"])
        if "wait" in s:
            return self.wait(s["wait"])
        if "eval" in s:
            return self.evaluate(s["eval"])
        if "click" in s:
            x, y, w, h = self.box(s["click"])
            self.mouse("mousePressed", x + w / 2, y + h / 2)
            self.mouse("mouseReleased", x + w / 2, y + h / 2)
            return True
        if "type" in s:
            css, text = s["type"]
            self.evaluate("document.querySelector(%s).focus()" % json.dumps(css))
            self.send("Input.insertText", {"text": text})
            return True
        if "drag" in s:
            css, a, b = s["drag"]
            x, y, w, h = self.box(css)
            self.mouse("mousePressed", x + a * w, y + h / 2)
            for k in range(1, 6):
                self.mouse("mouseMoved", x + (a + (b - a) * k / 5) * w, y + h / 2)
            self.mouse("mouseReleased", x + b * w, y + h / 2)
            return True
        if "screenshot" in s:
            png = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
            with open(s["screenshot"], "wb") as f:
                f.write(png)
            return len(png)
        raise RuntimeError("unknown step " + json.dumps(s))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def main():
    chromium, scratch = sys.argv[1], sys.argv[2]
    steps = json.load(sys.stdin)
    b = Browser(chromium, scratch)
    failed = None
    flat = lambda v: (v if isinstance(v, str) else json.dumps(v)).replace("\n", " ")
    try:
        b.start()
        for i, s in enumerate(steps):
            print("step %d: %s" % (i, flat(b.step(s))), flush=True)
    except Exception as e:  # reported to the test, which fails on it
        failed = str(e)
    finally:
        b.close()
    for e in b.errors:
        print("error: " + flat(e))
    if failed:
        print("failed: " + flat(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
