#!/usr/bin/env python3
"""Opens each subcommand's --report page and the tour's (English and Chinese) in headless
chromium, driven through the DevTools protocol over a pipe, and checks on each page:
  - no console error, no exception, and no request beyond the page itself;
  - as many data-check elements and data-tensor pictures as the run's JSON has checks and
    tensors (the tour: its sections' checks and the runs that draw a picture);
  - the Chinese page's text is Chinese (text extraction) and chromium drew it with a Chinese
    font (the platform fonts it used for the heading);
  - at 1280 px and at 320 px (the narrowest phone width; one column below 700 px) the page
    is no wider than the window, and a screenshot of that width is taken.
Exits 77 (ctest: skipped) with a message where chromium is missing.
Usage: report_browser.py ATTNLAB [--write-only]
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

from subcommands import subcommands

SKIP = 77
attnlab = os.path.abspath(sys.argv[1])
# --write-only (the sanitizer build): every page is written, by the program under the sanitizers,
# and not opened; what the browser sees does not depend on how the program was built.
open_pages = sys.argv[2:] != ["--write-only"]
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if browser is None and open_pages:
    print("SKIPPED: chromium is not installed (setup.sh installs it); the reports were not opened in a browser")
    sys.exit(SKIP)

# Sizes for the experiments whose defaults time or train for seconds, and the causal mask for
# attend (its default has none); every other experiment runs at its defaults.
ARGS = {"attend": ["--mask", "causal"], "bench": ["--len", "64", "--repeat", "1"],
        "train": ["--steps", "20", "--d-model", "16", "--heads", "2", "--train-len", "4", "--batch", "4"]}


def experiments():
    """Every experiment --help lists (the tour, run below in both languages, and the exercises,
    which write no page, aside), so a new experiment's page is opened without a line here."""
    return [[n] + ARGS.get(n, []) for n in subcommands(attnlab) if n not in ("tour", "exercise")]


class Browser:
    """chromium --remote-debugging-pipe: JSON messages ending in NUL, commands on fd 3, replies and events on fd 4."""

    def __init__(self, profile):
        to_child, self.to_browser = os.pipe()
        self.from_browser, from_child = os.pipe()

        def wire():
            os.dup2(to_child, 100), os.dup2(from_child, 101)
            os.dup2(100, 3), os.dup2(101, 4)

        self.proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
                                      f"--user-data-dir={profile}", "about:blank"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=wire, close_fds=False, start_new_session=True)
        os.close(to_child), os.close(from_child)
        self.buffer, self.next_id, self.events, self.session = b"", 0, [], None

    def read(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_browser, 1 << 16)
            if not chunk:
                sys.exit("FAIL: chromium closed the DevTools pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.read()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    sys.exit(f"FAIL: {method}: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method):
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(i)
            self.events.append(self.read())

    def evaluate(self, expression):
        return self.send("Runtime.evaluate", expression=expression, returnByValue=True)["result"]["value"]

    def close(self):
        try:
            os.killpg(self.proc.pid, 9)  # the browser and its helper processes
        except ProcessLookupError:
            pass
        self.proc.wait()


def expected_counts(doc):
    if doc["command"] == "tour":
        checks = sum(len(s["checks"]) for s in doc["sections"])
        pictures = sum(1 for s in doc["sections"] for r in s["runs"] if r["picture"])
        return checks, pictures
    return len(doc["checks"]), len(doc.get("tensors", []))


def width_ok(b, width, name, shots):
    b.send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=width < 700)
    page = b.evaluate("JSON.stringify([document.documentElement.scrollWidth, document.documentElement.clientWidth])")
    scroll, client = json.loads(page)
    if scroll > client:
        sys.exit(f"FAIL: {name}: at {width} px the page is {scroll} px wide (window {client} px): horizontal overflow")
    shot = b.send("Page.captureScreenshot", format="png")["data"]
    with open(os.path.join(shots, f"{name}-{width}.png"), "wb") as f:
        f.write(base64.b64decode(shot))


def chinese_font_used(b):
    root = b.send("DOM.getDocument")["root"]["nodeId"]
    node = b.send("DOM.querySelector", nodeId=root, selector="h1")["nodeId"]
    fonts = b.send("CSS.getPlatformFontsForNode", nodeId=node)["fonts"]
    return [f["familyName"] for f in fonts if f["glyphCount"] > 0]


def check_page(b, path, doc, name, zh, shots):
    b.events.clear()
    b.send("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)
    b.send("Page.navigate", url="file://" + path)
    b.wait_for("Page.loadEventFired")
    counts = json.loads(b.evaluate("JSON.stringify([document.querySelectorAll('[data-check]').length, document.querySelectorAll('[data-tensor]').length])"))
    if tuple(counts) != expected_counts(doc):
        sys.exit(f"FAIL: {name}: {counts[0]} checks and {counts[1]} pictures on the page, the JSON has {expected_counts(doc)}")
    width_ok(b, 1280, name, shots)
    width_ok(b, 320, name, shots)
    text = b.evaluate("document.body.innerText")
    if zh:
        han = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
        fonts = chinese_font_used(b)
        if han < 200 or not any("WenQuanYi" in f or "CJK" in f or "Hei" in f for f in fonts):
            sys.exit(f"FAIL: {name}: {han} Chinese characters in the text, heading drawn with {fonts}")
    errors = [e for e in b.events if e.get("method") in ("Runtime.exceptionThrown",)
              or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    if errors:
        sys.exit(f"FAIL: {name}: console errors: {errors[:2]}")
    requests = [e["params"]["request"]["url"] for e in b.events if e.get("method") == "Network.requestWillBeSent"]
    if any(not u.startswith("file://" + path) for u in requests):
        sys.exit(f"FAIL: {name}: the page loaded more than itself: {requests}")
    return counts


def main():
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        shots = os.path.join(tmp, "shots")
        os.mkdir(shots)
        pages = []
        for args in experiments() + [["tour"], ["tour", "--lang", "zh"]]:
            name = "-".join(a.strip("-") for a in args[:1] + args[1:3])
            path = os.path.join(tmp, name + ".html")
            # one run writes the page and prints the JSON it is held to
            r = subprocess.run([attnlab, *args, "--report", path, "--format", "json"], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"FAIL: attnlab {' '.join(args)}: exit {r.returncode}: {r.stderr}")
            if args[0] == "tour" and os.path.getsize(path) >= 2 * 1024 * 1024:
                sys.exit(f"FAIL: {name}: {os.path.getsize(path)} bytes, the tour's page must stay under 2 MB")
            pages.append((path, json.loads(r.stdout), name, "zh" in args))
        if not open_pages:
            print(f"ok: {len(pages)} pages written (not opened: the release build opens the same pages in chromium)")
            return
        b = Browser(os.path.join(tmp, "profile"))
        try:
            b.session = b.send("Target.attachToTarget", targetId=b.send("Target.createTarget", url="about:blank")["targetId"], flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network", "DOM", "CSS"):
                b.send(domain + ".enable")
            for path, doc, name, zh in pages:
                counts = check_page(b, path, doc, name, zh, shots)
                print(f"ok: {name}: {counts[0]} checks, {counts[1]} pictures, no overflow at 1280 and 320 px, no console error")
        finally:
            b.close()
        print(f"ok: {len(pages)} pages, {len(os.listdir(shots))} screenshots")


main()
