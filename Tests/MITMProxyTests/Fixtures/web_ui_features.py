#!/usr/bin/env python3
"""Drives what a QA engineer uses the web UI for all day, in headless Chromium (Selenium), while curl and a WebSocket
client send traffic through mitm-proxy; prints what it saw as JSON on stdout for the Swift test to check. Waits on
conditions with deadlines, never sleeps for a guessed time.

Steps:
  1. curl GET /headers (its JSON echoes a header value, so the response body holds a token), POST /digest with a body
     token, GET /teapot (answered by a --respond rule), GET /hello;
  2. the filter language: a response-body token, a request-body token, a status, a combination, a mistake;
  3. the rule's answer marked in the list and the detail, without a server address;
  4. sorting by size reorders the rows, and the list is in start order by default (a tunnel opened before the
     requests and closed after them is placed by its start); timings as shown;
  5. a WebSocket held open: its messages appear in the open detail as they pass, then its close; a malformed frame
     as the detail names it;
  6. compare two flows; mute a host on the board and in the list;
  7. dark mode through CDP's emulated prefers-color-scheme: the colours and a screenshot.

Usage: web_ui_features.py --proxy-port N --ca FILE --origin-port N --ws-port N [--plain-port N] [--screenshots DIR]
"""

import argparse
import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
from types import SimpleNamespace

from selenium.webdriver.common.by import By

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from web_ui_browser import browser, wait  # noqa: E402  (beside this file)
from ws_client import HTTP1Transport, Session  # noqa: E402

RESPONSE_TOKEN = "resp-token-5511"
REQUEST_TOKEN = "post-body-token-9107"


def curl(args, arguments):
    command = ["curl", "-sS", "--max-time", "20", "--proxy", f"http://127.0.0.1:{args.proxy_port}", "--cacert", args.ca] + arguments
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=30)
    if done.returncode != 0:
        raise SystemExit(f"curl {arguments} failed: {done.stderr}")
    return done.stdout


def rows(driver):
    """The visible rows' texts, top first."""
    return driver.execute_script("return [...document.querySelectorAll('#flow-list .row')]"
                                 ".sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)).map((r) => r.innerText.replace(/\\s+/g, ' '))")


def read_until(sock, marker):
    seen = b""
    while marker not in seen:
        piece = sock.recv(4096)
        if not piece:
            raise SystemExit(f"the tunnel ended before {marker!r}: {seen!r}")
        seen += piece
    return seen


def open_tunnel(args):
    """A CONNECT tunnel to the plain-HTTP origin with one request answered through it, left open."""
    sock = socket.create_connection(("127.0.0.1", args.proxy_port), timeout=20)
    sock.sendall(f"CONNECT 127.0.0.1:{args.plain_port} HTTP/1.1\r\nHost: 127.0.0.1:{args.plain_port}\r\n\r\n".encode())
    read_until(sock, b"\r\n\r\n")
    sock.sendall(b"GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    read_until(sock, b"hello from origin")
    return sock


def row(text):
    return lambda driver: driver.execute_script(
        "return [...document.querySelectorAll('#flow-list .row')].find((r) => r.innerText.includes(arguments[0])) || null;", text)


def type_filter(driver, text):
    box = driver.find_element(By.ID, "text-filter")
    box.clear()
    box.send_keys(text)


def filtered(driver, text, what):
    """Types `text` and waits until the proxy's answer is shown; returns the rows' URLs."""
    type_filter(driver, text)
    wait(driver, lambda d: d.execute_script("return state.expression && state.expression.text === arguments[0]", text),
         f"the proxy's answer for {what}")
    return driver.execute_script("return state.shown.map((id) => state.flows.get(id).url)")


def open_detail(driver, text, ready):
    wait(driver, lambda d: row(text)(d).click() or True, f"a click on {text}")
    wait(driver, lambda d: d.find_element(By.ID, "detail").is_displayed() and ready(d), f"the detail of {text}")


def detail_text(driver):
    return driver.find_element(By.ID, "detail-body").text


def facts_after(driver, heading):
    return driver.execute_script(
        "const h = [...document.querySelectorAll('#detail-body h3')].find((x) => x.textContent.startsWith(arguments[0]));"
        "return h ? h.nextElementSibling.innerText : null;", heading)


def luminance(rgb):
    def channel(c):
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = rgb
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def colours(driver):
    """Background and text colours of the page, a muted text and a badge, with their contrast ratios."""
    found = driver.execute_script(
        "const rgb = (s) => s.match(/\\d+/g).slice(0, 3).map(Number);"
        "const body = getComputedStyle(document.documentElement);"
        "const muted = getComputedStyle(document.getElementById('live'));"
        "const badge = document.querySelector('.badge');"
        "return {back: rgb(body.backgroundColor), text: rgb(body.color), muted: rgb(muted.color),"
        " badgeText: badge ? rgb(getComputedStyle(badge).color) : null, badgeBack: badge ? rgb(getComputedStyle(badge).backgroundColor) : null};")

    def ratio(a, b):
        light, dark = sorted((luminance(a), luminance(b)), reverse=True)
        return round((light + 0.05) / (dark + 0.05), 2)
    found["textContrast"] = ratio(found["text"], found["back"])
    found["mutedContrast"] = ratio(found["muted"], found["back"])
    found["badgeContrast"] = ratio(found["badgeText"], found["badgeBack"]) if found["badgeText"] else None
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--origin-port", type=int, required=True)
    parser.add_argument("--ws-port", type=int, required=True)
    parser.add_argument("--plain-port", type=int)
    parser.add_argument("--screenshots")
    args = parser.parse_args()
    origin = f"https://origin.test:{args.origin_port}"
    out = {}
    driver = browser(tempfile.mkdtemp(prefix="mitm-proxy-downloads-"))
    try:
        driver.get(f"http://127.0.0.1:{args.proxy_port}/")
        wait(driver, lambda d: "on" in d.find_element(By.ID, "live").get_attribute("class"), "the page to go live")
        out["lightColours"] = colours(driver)

        # A plain tunnel opened first and closed after the requests below: its row is placed by when it was accepted.
        tunnel = open_tunnel(args) if args.plain_port else None
        curl(args, ["-H", f"X-Probe: {RESPONSE_TOKEN}", f"{origin}/headers"])
        curl(args, ["--data-binary", f"name={REQUEST_TOKEN}", f"{origin}/digest"])
        out["teapotBody"] = curl(args, [f"{origin}/teapot"])
        curl(args, [f"{origin}/hello"])
        curl(args, [f"{origin}/bytes/5000"])
        wait(driver, row("/bytes/5000"), "the last request in the list")
        if tunnel:
            tunnel.close()
            wait(driver, row("TUNNEL"), "the tunnel's row")
            out["tunnelPlacedByStart"] = driver.execute_script(
                "const flows = [...state.flows.values()]; const t = flows.find((f) => f.method === 'TUNNEL');"
                " const h = flows.find((f) => f.url.endsWith('/headers'));"
                " return t.time < h.time && state.shown.indexOf(t.id) > state.shown.indexOf(h.id);")

        # The filter language, evaluated by the proxy where the bodies are.
        out["byResponseBody"] = filtered(driver, f"~bs {RESPONSE_TOKEN}", "a response-body token")
        out["byRequestBody"] = filtered(driver, f"~bq {REQUEST_TOKEN}", "a request-body token")
        out["byStatus"] = filtered(driver, "~c 418", "a status")
        out["combined"] = filtered(driver, "~d origin.test & !(~m GET | ~c 418)", "a combination")
        type_filter(driver, "~c 4xx & ")
        wait(driver, lambda d: d.find_element(By.ID, "filter-error").is_displayed(), "the mistake under the field")
        out["filterError"] = driver.find_element(By.ID, "filter-error").text
        out["filterErrorDescribes"] = driver.find_element(By.ID, "text-filter").get_attribute("aria-describedby")
        type_filter(driver, "hello")
        wait(driver, lambda d: not d.find_element(By.ID, "filter-error").is_displayed() and len(d.execute_script("return state.shown")) == 1,
             "plain text filtering as before")
        out["byPlainText"] = driver.execute_script("return state.shown.map((id) => state.flows.get(id).url)")
        driver.find_element(By.ID, "text-filter").clear()
        driver.execute_script("textChanged()")

        # The rule's answer, in the list and the detail.
        out["teapotRow"] = wait(driver, row("/teapot"), "the teapot row")[0].text.replace("\n", " ")
        open_detail(driver, "/teapot", lambda d: "/teapot" in d.find_element(By.ID, "detail-title").text)
        out["teapotDetail"] = detail_text(driver)

        # Start order, then sorting by size.
        out["startOrdered"] = driver.execute_script(
            "const t = state.shown.map((id) => state.flows.get(id).time); return t.every((x, i) => i === 0 || t[i - 1] >= x);")
        out["rowsByTime"] = rows(driver)
        size = driver.find_element(By.CSS_SELECTOR, ".flow-head button[data-sort=size]")
        size.click()
        out["sizesAscending"] = driver.execute_script("return state.shown.map((id) => state.flows.get(id).size ?? -1)")
        out["rowsBySize"] = rows(driver)
        size.click()
        out["sizesDescending"] = driver.execute_script("return state.shown.map((id) => state.flows.get(id).size ?? -1)")
        out["sortButton"] = size.get_attribute("title")
        driver.find_element(By.CSS_SELECTOR, ".flow-head button[data-sort=time]").click()  # back to newest first

        # Timings, rounded.
        open_detail(driver, "/headers", lambda d: "/headers" in d.find_element(By.ID, "detail-title").text)
        out["timings"] = facts_after(driver, "Timings")

        # Compare /headers with /hello.
        driver.find_element(By.ID, "compare").click()
        out["compareNote"] = driver.find_element(By.ID, "compare-note").text
        open_detail(driver, "/hello", lambda d: "/hello" in d.find_element(By.ID, "detail-title").text)
        driver.find_element(By.ID, "compare").click()
        wait(driver, lambda d: d.find_element(By.ID, "detail-title").text.startswith("Compare"), "the comparison")
        out["compareTitle"] = driver.find_element(By.ID, "detail-title").text
        out["compareDiffers"] = driver.execute_script(
            "return [...document.querySelectorAll('#detail-body table.compare tr.differs th')].map((th) => th.textContent)")
        out["compareBodies"] = len(driver.find_elements(By.CSS_SELECTOR, "#detail-body .side-by-side pre.body"))

        # A WebSocket, watched while it is open.
        transport = HTTP1Transport(SimpleNamespace(proxy_port=args.proxy_port, host="origin.test", port=args.ws_port, cafile=args.ca,
                                                   path="/chat"), None)
        socket = Session(transport)
        socket.protocol.send_text(b"ws-hello-1")
        socket.flush()
        out["echo1"] = socket.next()[1].decode()
        wait(driver, row("/chat"), "the WebSocket in the list")
        wait(driver, lambda d: "2 msg" in row("/chat")(d).text, "the first messages counted in the list")
        open_detail(driver, "/chat", lambda d: d.find_elements(By.CSS_SELECTOR, "#detail-body table.messages tbody tr"))
        out["wsOpenState"] = facts_after(driver, "WebSocket messages")
        socket.protocol.send_binary(b"\x00\x01\xfe\xff")
        socket.flush()
        socket.next()
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#detail-body table.messages tbody tr")) == 4,
             "the new messages in the open detail, without a click")
        socket.protocol.send_close(1000, "bye")
        socket.flush()
        socket.next()
        transport.end()
        transport.sock.close()
        wait(driver, lambda d: "closed" in (facts_after(d, "WebSocket messages") or ""), "the close in the open detail")
        out["wsClosedState"] = facts_after(driver, "WebSocket messages")
        out["wsMessages"] = driver.execute_script(
            "return [...document.querySelectorAll('#detail-body table.messages tbody tr')].map((tr) => [...tr.cells].map((c) => c.innerText))")
        out["wsRow"] = row("/chat")(driver).text.replace("\n", " ")
        out["malformedShown"] = driver.execute_script(
            "return webSocketView({sent: 1, received: 0, payloadBytes: 3, wireBytes: 3, open: true, omitted: 0, messages: [{number: 1,"
            " direction: 'send', time: Date.now(), opcode: 1, kind: 'text', size: 3, wireSize: 3, compressed: false, frames: 1,"
            " text: 'abc', truncated: false, malformed: 'a frame from the client must be masked'}]})"
            ".map((p) => p.textContent).join(' | ')")
        if args.screenshots:
            driver.execute_script("document.querySelector('#detail-body table.messages').scrollIntoView({block: 'center'})")
            driver.save_screenshot(str(pathlib.Path(args.screenshots) / "web-ui-websocket.png"))

        # Mute origin.test on the board: gone from the board and the list, then back.
        mute, _ = wait(driver, lambda d: d.find_element(By.CSS_SELECTOR, "#board-rows button[data-mute='origin.test']"), "the board's mute button")
        mute.click()
        wait(driver, lambda d: d.find_element(By.ID, "muted-hosts").is_displayed(), "the muted hosts line")
        out["mutedBoardHosts"] = driver.execute_script("return [...document.querySelectorAll('#board-rows tr')].map((r) => r.dataset.host || '')")
        out["mutedListCount"] = driver.execute_script("return state.shown.filter((id) => state.flows.get(id).host === 'origin.test').length")
        driver.find_element(By.CSS_SELECTOR, "#muted-hosts button[data-unmute='origin.test']").click()
        out["unmutedListCount"] = driver.execute_script("return state.shown.length")

        # Dark mode as the system asks for it.
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        wait(driver, lambda d: d.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches"), "the dark setting")
        out["darkColours"] = colours(driver)
        if args.screenshots:
            driver.save_screenshot(str(pathlib.Path(args.screenshots) / "web-ui-dark.png"))
    finally:
        driver.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
