#!/usr/bin/env python3
"""Drives the acting half of mitm-proxy's web UI in headless Chromium (Selenium), as a person would, and prints what it
saw as JSON on stdout for the Swift test to check. Waits on conditions with deadlines, never sleeps for a guessed time.

Steps:
  1. open the page; curl https://origin.test:ORIGIN/headers through the proxy with X-Test: from-curl;
  2. open that flow and click Replay: wait for the page to say the proxy answered, and for the new flow, whose detail
     says which flow it replays;
  3. open the original again, click Edit and resend, change X-Test to edited-in-browser, send;
  4. set a breakpoint on origin.test/hello from the page, curl /hello, wait for the paused request to be listed, change
     its X-Test header and click Continue; read what curl got;
  5. set a response breakpoint on origin.test/hello, curl it, change the paused response's status and body, Continue;
  6. set a request breakpoint on origin.test/digest, POST a body, change it while paused, Continue.

Usage: web_ui_replay.py --proxy-port N --ca FILE --origin-port N [--screenshots DIR]
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_ui_browser import browser, flow_row, wait  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402


def curl_args(args, path, extra=()):
    return ["curl", "-sS", "--max-time", "30", "--proxy", f"http://127.0.0.1:{args.proxy_port}", "--cacert", args.ca,
            "--resolve", f"origin.test:{args.origin_port}:127.0.0.1"] + list(extra) + [f"https://origin.test:{args.origin_port}{path}"]


def open_flow(driver, text):
    """Clicks the row of `text` until its detail shows: a click on a row the list redraws at that moment is lost, and a
    page that fell behind the feed reloads its list (a resync), which under a sanitized, loaded run takes a while."""
    name = text.split("/")[-1]

    def opened(d):
        detail = d.find_element(By.ID, "detail")
        if detail.is_displayed() and name in d.find_element(By.ID, "detail-title").text:
            return True
        row = flow_row(text)(d)
        if row is not None:
            row.click()
        return False

    wait(driver, opened, f"the detail of {text}", timeout=90)


def add_breakpoint(driver, at, match):
    Select(driver.find_element(By.ID, "breakpoint-at")).select_by_value(at)
    driver.find_element(By.ID, "breakpoint-method").clear()  # any method
    driver.find_element(By.ID, "breakpoint-match").send_keys(match)
    driver.find_element(By.CSS_SELECTOR, "#breakpoint-form button[type=submit]").click()
    wait(driver, lambda d: match in d.find_element(By.ID, "breakpoint-list").text, f"the breakpoint on {match} listed")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--origin-port", type=int, required=True)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    out = {}
    driver = browser(os.path.join(os.path.dirname(args.ca), "downloads"))
    try:
        driver.get(f"http://127.0.0.1:{args.proxy_port}/")
        wait(driver, lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), "the page to go live")
        subprocess.run(curl_args(args, "/headers", ["-H", "X-Test: from-curl"]), capture_output=True, timeout=40, check=True)
        url = f"origin.test:{args.origin_port}/headers"
        open_flow(driver, url)
        original = driver.execute_script("return state.detail.summary.id")

        # Replay, as it was.
        driver.find_element(By.ID, "replay").click()
        out["replayResult"], _ = wait(driver, lambda d: (lambda t: t if t.startswith(("Sent", "Not sent")) else None)(
            d.find_element(By.ID, "send-result").text), "the replay's outcome", timeout=30)
        replay_id, _ = wait(driver, lambda d: d.execute_script(
            "return [...state.flows.values()].filter((f) => f.replayOf === arguments[0]).map((f) => f.id)[0] || null;", original),
            "the replay's flow in the list")
        driver.execute_script("openDetail(arguments[0], false)", replay_id)
        out["replayOfShown"], _ = wait(driver, lambda d: d.find_element(By.ID, "replay-of").text or None, "the link to the original")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "web-ui-replay.png"))

        # The replay is marked in the list; its badge opens the original.
        badge, _ = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f"#flow-{replay_id} .v-replay"), "the replay badge in the list")
        out["replayBadge"] = badge[0].text
        badge[0].click()
        wait(driver, lambda d: d.execute_script("return state.detail && state.detail.summary.id") == original, "the original again")

        # Edit and resend.
        driver.find_element(By.ID, "edit-resend").click()
        headers = driver.find_element(By.ID, "composer-headers")
        lines = [line for line in headers.get_attribute("value").split("\n") if not line.lower().startswith("x-test:")]
        headers.clear()
        headers.send_keys("\n".join(lines + ["X-Test: edited-in-browser"]))
        driver.find_element(By.ID, "composer-send").click()
        out["editResult"], _ = wait(driver, lambda d: (lambda t: t if t.startswith(("Sent", "Not sent")) else None)(
            d.find_element(By.ID, "send-result").text), "the edited request's outcome", timeout=30)

        # A breakpoint set from the page holds a request until Continue; the edit made while paused arrives.
        driver.find_element(By.ID, "show-breakpoints").click()
        driver.find_element(By.ID, "breakpoint-match").send_keys(f"origin.test/headers")
        driver.find_element(By.ID, "breakpoint-method").send_keys("GET")
        driver.find_element(By.CSS_SELECTOR, "#breakpoint-form button[type=submit]").click()
        wait(driver, lambda d: "origin.test/headers" in d.find_element(By.ID, "breakpoint-list").text, "the breakpoint listed")
        held = subprocess.Popen(curl_args(args, "/headers?paused=1", ["-H", "X-Test: before-pause"]),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        paused, _ = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#paused-list li.paused"), "the paused request", timeout=20)
        out["pausedShown"] = paused[0].text
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "web-ui-breakpoint.png"))
        area = paused[0].find_element(By.CSS_SELECTOR, "textarea.p-headers")
        kept = [line for line in area.get_attribute("value").split("\n") if not line.lower().startswith("x-test:")]
        area.clear()
        area.send_keys("\n".join(kept + ["X-Test: edited-while-paused"]))
        paused[0].find_element(By.CSS_SELECTOR, "button.p-continue").click()
        stdout, stderr = held.communicate(timeout=40)
        out["afterContinue"] = stdout
        out["curlError"] = stderr
        wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#paused-list li.paused"), "the paused list to empty")

        # A response breakpoint: the status and body edited in the page reach curl.
        add_breakpoint(driver, "response", "origin.test/hello")
        held = subprocess.Popen(curl_args(args, "/hello", ["-w", "\n%{http_code}"]), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        paused, _ = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#paused-list li.paused[data-phase=response] textarea.p-body"),
                         "the paused response with its body", timeout=20)
        item = driver.find_element(By.CSS_SELECTOR, "#paused-list li.paused[data-phase=response]")
        out["pausedResponseShown"] = item.text
        out["pausedResponseBody"] = paused[0].get_attribute("value")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "web-ui-breakpoint-response.png"))
        status = item.find_element(By.CSS_SELECTOR, "input.p-status")
        status.clear()
        status.send_keys("203")
        paused[0].clear()
        paused[0].send_keys("edited-response-in-browser")
        item.find_element(By.CSS_SELECTOR, "button.p-continue").click()
        stdout, _ = held.communicate(timeout=40)
        out["afterResponseContinue"] = stdout
        wait(driver, lambda d: not d.find_elements(By.CSS_SELECTOR, "#paused-list li.paused"), "the paused list to empty")

        # A request body edited at a request breakpoint reaches the origin (which digests it).
        add_breakpoint(driver, "request", "origin.test/digest")
        held = subprocess.Popen(curl_args(args, "/digest", ["--data-binary", "body-before-pause"]), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        paused, _ = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#paused-list li.paused[data-phase=request] textarea.p-body"),
                         "the paused request with its body", timeout=20)
        out["pausedRequestBody"] = paused[0].get_attribute("value")
        paused[0].clear()
        paused[0].send_keys("body-edited-in-browser")
        driver.find_element(By.CSS_SELECTOR, "#paused-list li.paused button.p-continue").click()
        stdout, _ = held.communicate(timeout=40)
        out["afterBodyContinue"] = stdout
    finally:
        driver.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
