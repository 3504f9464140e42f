#!/usr/bin/env python3
"""Drives mitm-proxy's web UI in headless Chromium (Selenium with Debian's chromium and chromium-driver), as a
person would, while curl sends traffic through the proxy; prints what it saw as JSON on stdout for the Swift test
to check. Waits on conditions with deadlines, never sleeps for a guessed time.

Steps:
  1. open http://127.0.0.1:PROXY/ and wait until the page says it is live;
  2. curl https://origin.test:ORIGIN/headers through the proxy (trusting its CA), then time how long until the
     board shows origin.test intercepted and the flow list shows the request, without a reload;
  3. curl https://pinned.test:ORIGIN/hello with --pinnedpubkey (the origin's real pin): wait until the board shows
     pinned.test refused and the list shows the refused handshake;
  4. screenshot the board; open the /headers flow's detail; read its headers and response body; copy it as curl;
     screenshot the detail;
  5. download the HAR of what is on screen and report its path.

Usage: web_ui_browser.py --proxy-port N --ca FILE --origin-port N --pin B64 --downloads DIR [--screenshots DIR]
       web_ui_browser.py --proxy-port N --ca FILE --origin-port N --many-flows N --downloads DIR

With --many-flows (the proxy already holds N flows): time the page's first full list, a filter pass and a scroll, count
the rows in the document (only those in view are drawn), and time a new request's arrival in the list.
"""

import argparse
import base64
import gzip
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

os.environ.setdefault("SE_OFFLINE", "true")  # Selenium must not fetch drivers: Debian's chromium-driver is the driver


def browser(downloads):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1440,1000",
                 "--no-proxy-server", "--no-first-run", "--user-data-dir=" + tempfile.mkdtemp(prefix="mitm-proxy-chromium-")):
        options.add_argument(flag)
    options.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    return driver


def curl(args, proxy_port, ca, origin_port):
    command = ["curl", "-sS", "--max-time", "20", "--proxy", f"http://127.0.0.1:{proxy_port}", "--cacert", ca,
               "--resolve", f"origin.test:{origin_port}:127.0.0.1"] + args
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def wait(driver, condition, what, timeout=30):
    """Waits until `condition(driver)` is truthy; returns (value, seconds it took). The bound is for a loaded or
    sanitized run: what a user would notice is timed by the callers from the seconds returned."""
    started = time.monotonic()
    try:
        # The page redraws the board and the visible rows as updates arrive: an element found may be gone a moment later.
        value = WebDriverWait(driver, timeout, poll_frequency=0.02, ignored_exceptions=(StaleElementReferenceException,)).until(condition)
    except Exception as error:  # a timeout names what was awaited
        raise SystemExit(f"timed out after {timeout} s waiting for {what}: {error}")
    return value, time.monotonic() - started


def board_verdict(host):
    """The verdict cell's text of `host`'s board row, read in one step (the board is redrawn as it changes)."""
    return lambda driver: driver.execute_script(
        "const row = [...document.querySelectorAll('#board-rows tr')].find((r) => r.dataset.host === arguments[0]);"
        "return row ? row.cells[1].innerText : null;", host)


def flow_row(text):
    """The first visible flow row whose text holds `text`."""
    return lambda driver: driver.execute_script(
        "return [...document.querySelectorAll('#flow-list .row')].find((r) => r.innerText.includes(arguments[0])) || null;", text)


PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


def body_views(driver):
    """How the detail shows an image, binary bytes and a gzip-encoded JSON body: the element it draws and its text."""
    cases = {
        "image": {"size": 70, "kept": 70, "truncated": False, "mimeType": "image/png", "base64": PNG},
        "binary": {"size": 3, "kept": 3, "truncated": False, "mimeType": "application/octet-stream", "base64": "/wAQ"},
        "gzip": {"size": 30, "kept": 30, "truncated": False, "mimeType": "application/json", "contentEncoding": "gzip",
                 "base64": base64.b64encode(gzip.compress(b'{"compressed":true}')).decode()},
        "truncated": {"size": 100, "kept": 5, "truncated": True, "note": "truncated: the first 5 of 100 bytes were recorded",
                      "mimeType": "text/plain", "text": "hello"},
    }
    return driver.execute_async_script(
        "const [cases, done] = arguments; const out = {};"
        "(async () => { for (const [name, body] of Object.entries(cases)) {"
        "  const parts = await bodyView(body);"
        "  out[name] = parts.map((p) => p.tagName + ':' + (p.tagName === 'IMG' ? String(p.naturalWidth || p.src.slice(0, 5)) : p.textContent));"
        "} done(out); })();", cases)


def many_flows(driver, args, out):
    started = time.monotonic()
    driver.get(f"http://127.0.0.1:{args.proxy_port}/")
    wait(driver, lambda d: d.execute_script("return state.shown.length") >= args.many_flows, f"{args.many_flows} flows in the list", 30)
    out["loadSeconds"] = time.monotonic() - started
    out["rowsInDocument"] = driver.execute_script("return document.querySelectorAll('#flow-list .row').length")
    out["filterMilliseconds"] = driver.execute_script(
        "const input = document.getElementById('text-filter'); const t = performance.now();"
        "input.value = '/bytes/1'; refilter(); drawFlows(); const spent = performance.now() - t;"
        "input.value = ''; refilter(); drawFlows(); return spent;")
    out["scrollMilliseconds"] = driver.execute_script(
        "const list = document.getElementById('flow-list'); const t = performance.now();"
        "list.scrollTop = list.scrollHeight / 2; drawFlows(); return performance.now() - t;")
    out["rowsAfterScroll"] = driver.execute_script("return document.querySelectorAll('#flow-list .row').length")
    driver.execute_script("document.getElementById('flow-list').scrollTop = 0")
    received = curl([f"https://origin.test:{args.origin_port}/hello?newest"], args.proxy_port, args.ca, args.origin_port)
    if received.returncode != 0:
        raise SystemExit(f"curl through the proxy failed: {received.stderr}")
    _, out["newFlowSeconds"] = wait(driver, flow_row("/hello?newest"), "the newest request at the top of the list")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--origin-port", type=int, required=True)
    parser.add_argument("--pin")
    parser.add_argument("--many-flows", type=int)
    parser.add_argument("--downloads", required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    out = {}
    driver = browser(args.downloads)
    if args.many_flows:
        try:
            many_flows(driver, args, out)
        finally:
            driver.quit()
        print(json.dumps(out))
        return
    try:
        driver.get(f"http://127.0.0.1:{args.proxy_port}/")
        wait(driver, lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), "the page to go live")

        received = curl(["-H", "X-Test-Token: web-ui-check", f"https://origin.test:{args.origin_port}/headers"],
                        args.proxy_port, args.ca, args.origin_port)
        if received.returncode != 0:
            raise SystemExit(f"curl through the proxy failed: {received.stderr}")
        out["curlBody"] = received.stdout
        verdict, out["boardSeconds"] = wait(driver, lambda d: (board_verdict("origin.test")(d) or "").startswith("intercepted")
                                            and board_verdict("origin.test")(d), "origin.test on the board")
        out["boardVerdict"] = verdict
        _, out["listSeconds"] = wait(driver, flow_row(f"origin.test:{args.origin_port}/headers"), "the request in the flow list")

        pinned = curl(["--pinnedpubkey", f"sha256//{args.pin}", f"https://pinned.test:{args.origin_port}/hello",
                       "--resolve", f"pinned.test:{args.origin_port}:127.0.0.1"], args.proxy_port, args.ca, args.origin_port)
        out["pinnedCurlStatus"] = pinned.returncode
        out["pinnedVerdict"], _ = wait(driver, lambda d: (board_verdict("pinned.test")(d) or "").startswith("refused")
                                       and board_verdict("pinned.test")(d), "pinned.test refused on the board")
        row, _ = wait(driver, flow_row(f"pinned.test:{args.origin_port}"), "the refused handshake in the flow list")
        out["pinnedRow"] = row.text
        out["pinnedBoardRow"] = driver.execute_script(
            "return [...document.querySelectorAll('#board-rows tr')].find((r) => r.dataset.host === 'pinned.test').innerText")
        out["boardResult"] = driver.find_element(By.ID, "board-result").text
        out["boardOrder"] = driver.execute_script("return [...document.querySelectorAll('#board-rows tr')].map((r) => r.dataset.host)")
        if args.screenshots:
            driver.save_screenshot(str(pathlib.Path(args.screenshots) / "web-ui-board.png"))

        wait(driver, lambda d: flow_row(f"origin.test:{args.origin_port}/headers")(d).click() or True, "a click on the request row")
        wait(driver, lambda d: d.find_element(By.ID, "detail").is_displayed()
             and "/headers" in d.find_element(By.ID, "detail-title").text
             and d.find_elements(By.CSS_SELECTOR, "#detail-body pre.body"), "the flow's detail")
        tables = driver.find_elements(By.CSS_SELECTOR, "#detail-body table.headers")
        out["requestHeaders"] = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                                 for row in tables[0].find_elements(By.TAG_NAME, "tr")]
        out["responseHeaders"] = [[cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
                                  for row in tables[1].find_elements(By.TAG_NAME, "tr")]
        bodies = driver.find_elements(By.CSS_SELECTOR, "#detail-body pre.body")
        out["responseBodyShown"] = bodies[-1].get_attribute("textContent")
        out["tlsFacts"] = driver.execute_script(
            "const h = [...document.querySelectorAll('#detail-body h3')].find((x) => x.textContent === 'TLS with the client');"
            "return h ? h.nextElementSibling.innerText : null;")
        driver.find_element(By.ID, "copy-curl").click()
        out["curlCommand"], _ = wait(driver, lambda d: d.find_element(By.ID, "curl").get_attribute("textContent"), "the curl command")
        if args.screenshots:
            driver.execute_script("document.getElementById('curl').hidden = true; document.querySelector('.split').scrollIntoView()")
            driver.save_screenshot(str(pathlib.Path(args.screenshots) / "web-ui-flow.png"))

        out["bodyViews"] = body_views(driver)

        before = set(os.listdir(args.downloads))
        driver.find_element(By.ID, "download-har").click()

        def downloaded(_):
            done = [name for name in set(os.listdir(args.downloads)) - before
                    if name.endswith(".har") and not name.endswith(".crdownload")]
            return done[0] if done else None
        name, _ = wait(driver, downloaded, "the HAR download", timeout=20)
        out["har"] = str(pathlib.Path(args.downloads) / name)
        out["flowsShown"] = len(driver.execute_script("return state.shown"))
    finally:
        driver.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
