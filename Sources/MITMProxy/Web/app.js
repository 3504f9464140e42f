// mitm-proxy's web UI: the pinning board and the flows, kept live by the proxy's event stream (/events).
// Everything shown comes from traffic and is hostile: text goes in with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const ROW = 28;
const state = {
  flows: new Map(),      // id -> summary
  order: [],             // ids, oldest first
  shown: [],             // ids matching the filters, oldest first (drawn newest first)
  selected: null,        // id
  detail: null,          // the open flow's detail
  evicted: 0,
  flowLimit: 10000,
  hosts: new Set(),
  drawQueued: false,
};

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value; else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function notice(text) {
  const box = $("notice");
  box.textContent = text;
  box.hidden = !text;
}

function bytes(count) {
  if (count === undefined || count === null) return "";
  if (count < 1000) return count + " B";
  const units = ["kB", "MB", "GB"];
  let value = count / 1000, unit = 0;
  while (value >= 999.95 && unit < units.length - 1) { value /= 1000; unit++; }
  return value.toFixed(1) + " " + units[unit];
}

function clock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

// ---- the live feed ----

function connect() {
  const feed = new EventSource("/events");
  document.dispatchEvent(new CustomEvent("feed", { detail: feed }));  // act.js listens on it too
  feed.addEventListener("hello", (event) => {
    const hello = JSON.parse(event.data);
    state.flowLimit = hello.flowLimit;
    live(true);
    loadFlows();
  });
  feed.addEventListener("board", (event) => drawBoard(JSON.parse(event.data)));
  feed.addEventListener("flow", (event) => upsert(JSON.parse(event.data), true));
  feed.addEventListener("cleared", () => forgetFlows());
  feed.addEventListener("resync", (event) => {
    const lag = JSON.parse(event.data);
    notice(`This page fell behind the traffic: ${lag.dropped} live updates were dropped for it (${lag.droppedTotal} in all), ` +
      "so the flow list was reloaded from the proxy. The proxy itself was not slowed.");
    loadFlows();
  });
  feed.onerror = () => live(false);
}

function live(on) {
  const box = $("live");
  box.className = on ? "on" : "off";
  box.textContent = on ? "Live: updates arrive as the proxy sees them." : "Not connected to the proxy; reconnecting\u2026";
}

async function loadFlows() {
  const response = await fetch("/api/flows", { cache: "no-store" });
  if (!response.ok) return notice(`Could not load the flows: ${response.status} ${await response.text()}`);
  const list = await response.json();
  state.evicted = list.evicted;
  for (const flow of list.flows) upsert(flow, false);
  refilter();
}

function upsert(flow, incremental) {
  const known = state.flows.has(flow.id);
  state.flows.set(flow.id, flow);
  if (!state.hosts.has(flow.host)) {
    state.hosts.add(flow.host);
    $("known-hosts").append(el("option", { value: flow.host }));
  }
  if (!known) {
    const last = state.order[state.order.length - 1];
    if (last === undefined || flow.id > last) state.order.push(flow.id);
    else { state.order.push(flow.id); state.order.sort((a, b) => a - b); }
    trimToLimit();
  }
  if (!incremental) return;
  if (!known && matches(flow)) state.shown.push(flow.id);
  if (known) refilter(); else queueDraw();
  if (known && state.selected === flow.id) openDetail(flow.id, false);
}

function trimToLimit() {
  while (state.order.length > state.flowLimit) {
    state.flows.delete(state.order.shift());
    state.evicted++;
  }
  if (state.shown.length && !state.flows.has(state.shown[0])) state.shown = state.shown.filter((id) => state.flows.has(id));
}

function forgetFlows() {
  state.flows.clear();
  state.order = [];
  state.shown = [];
  state.evicted = 0;
  closeDetail();
  queueDraw();
}

// ---- filtering and the list ----

function searchText(flow) {
  return [flow.method, flow.url, flow.status, flow.verdict, flow.how, flow.failure, flow.protocol].filter((x) => x !== undefined).join(" ").toLowerCase();
}

function matches(flow) {
  const host = $("host-filter").value.trim().toLowerCase();
  const text = $("text-filter").value.trim().toLowerCase();
  if (host && !flow.host.toLowerCase().includes(host)) return false;
  if (text && !searchText(flow).includes(text)) return false;
  return true;
}

function refilter() {
  state.shown = state.order.filter((id) => matches(state.flows.get(id)));
  queueDraw();
}

function queueDraw() {
  if (state.drawQueued) return;
  state.drawQueued = true;
  requestAnimationFrame(() => { state.drawQueued = false; drawFlows(); });
}

function statusText(flow) {
  if (flow.kind === "handshake") return `${flow.verdict}: ${flow.how}`;
  if (flow.kind === "tunnel") return "tunnel";
  return flow.status === undefined ? "failed" : String(flow.status);
}

function isProblem(flow) {
  if (flow.kind === "handshake") return flow.verdict !== "intercepted" && flow.verdict !== "unused";
  return flow.kind === "exchange" && (flow.status === undefined || flow.status >= 500 || flow.failure !== undefined);
}

// Draws only the rows in view: the list stays fast with tens of thousands of flows.
function drawFlows() {
  const list = $("flow-list");
  const count = state.shown.length;
  $("flow-spacer").style.height = count * ROW + "px";
  $("flow-empty").hidden = state.order.length > 0;
  const total = state.order.length;
  $("flow-count").textContent = count === total ? `(${total})` : `(${count} of ${total} shown)`;
  if (state.evicted > 0) $("flow-count").textContent += ` \u2014 the oldest ${state.evicted} gave way to newer ones`;
  list.setAttribute("aria-setsize", count);
  const first = Math.max(0, Math.floor(list.scrollTop / ROW) - 5);
  const last = Math.min(count, Math.ceil((list.scrollTop + list.clientHeight) / ROW) + 5);
  for (const row of list.querySelectorAll(".row")) row.remove();
  for (let position = first; position < last; position++) {
    const id = state.shown[count - 1 - position];
    const flow = state.flows.get(id);
    const selected = id === state.selected;
    const row = el("div", {
      class: "row" + (isProblem(flow) ? " problem" : ""), role: "option", id: "flow-" + id, "data-id": id,
      "aria-selected": selected ? "true" : "false", "aria-posinset": position + 1, "aria-setsize": count,
    },
      el("span", { class: "c-time" }, clock(flow.time)),
      el("span", { class: "c-method" }, flow.method),
      el("span", { class: "c-url", title: flow.url }, flow.url),
      el("span", { class: "c-status", title: flow.how || flow.failure }, statusText(flow)),
      el("span", { class: "c-size" }, bytes(flow.size)),
      el("span", { class: "c-dur" }, flow.duration === undefined ? "" : Math.round(flow.duration) + " ms"),
      el("span", { class: "c-proto" }, flow.protocol || ""));
    row.style.top = position * ROW + "px";
    list.append(row);
  }
  if (state.selected !== null && document.getElementById("flow-" + state.selected)) {
    list.setAttribute("aria-activedescendant", "flow-" + state.selected);
  } else {
    list.removeAttribute("aria-activedescendant");
  }
}

function moveSelection(step) {
  const count = state.shown.length;
  if (!count) return;
  let position = state.shown.length - 1 - state.shown.indexOf(state.selected);
  position = state.selected === null || position >= count ? 0 : Math.min(count - 1, Math.max(0, position + step));
  state.selected = state.shown[count - 1 - position];
  const list = $("flow-list");
  if (position * ROW < list.scrollTop) list.scrollTop = position * ROW;
  if ((position + 1) * ROW > list.scrollTop + list.clientHeight) list.scrollTop = (position + 1) * ROW - list.clientHeight;
  drawFlows();
}

// ---- the board ----

function badge(word, extra) {
  return el("span", { class: "badge v-" + word }, extra ? `${word} ${extra}` : word);
}

function drawBoard(board) {
  const result = $("board-result");
  const outcome = { pass: ["pass", "every expectation holds"], fail: ["fail", "an expectation does not hold"] }[board.result]
    || ["inconclusive", "no expectation was given (--expect)"];
  result.replaceChildren("Run result: ", el("span", { class: "badge v-" + outcome[0] }, board.result), " ", outcome[1]);
  if (board.droppedEvents > 0) {
    result.append(el("span", { class: "trust-no" }, ` \u2014 ${board.droppedEvents} events were dropped by the recording queue (the counts stay complete)`));
  }
  const body = $("board-rows");
  if (!board.rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "empty" }, "No TLS connection yet.")));
  } else {
    body.replaceChildren(...board.rows.map((row) => {
      const verdict = row.acceptedInvalidCertificate ? "accepted-invalid" : row.verdict;
      const notes = row.notes.length || row.evidence
        ? el("ul", { class: "notes" }, row.notes.map((n) => el("li", {}, n)), row.evidence ? el("li", {}, "evidence: " + row.evidence) : null)
        : null;
      const expectation = row.expectation
        ? [badge(row.holds ? "pass" : "fail"), " ", el("code", {}, row.expectation), el("div", { class: "notes" }, row.explanation)]
        : el("span", { class: "empty" }, "none");
      const clients = row.clients.length
        ? el("ul", { class: "notes" }, row.clients.map((c) => el("li", {}, el("code", {}, c.name || c.address), " ",
          el("span", { class: c.trustsCA ? "trust-yes" : "trust-no" }, c.trustsCA ? "trusts the CA (proven)" : "trust not proven"))))
        : el("span", { class: "empty" }, row.verdict === "unseen" ? "never contacted" : "");
      return el("tr", { "data-host": row.host },
        el("th", { scope: "row" }, el("code", {}, row.port ? `${row.host}:${row.port}` : row.host), notes),
        el("td", {}, badge(verdict), row.how.length ? el("div", { class: "notes" }, row.how.join(", ")) : null),
        el("td", {}, row.connections),
        el("td", {}, expectation),
        el("td", {}, row.profile || "trusted"),
        el("td", {}, clients));
    }));
  }
  $("expectations").replaceChildren(...board.expectations.map((e) =>
    el("li", {}, badge(e.met ? "pass" : "fail"), " ", el("code", {}, e.expectation), ": ", e.explanation)));
}

// ---- the detail ----

async function openDetail(id, focus) {
  const response = await fetch("/api/flows/" + id, { cache: "no-store" });
  if (!response.ok) return notice(await response.text());
  const detail = await response.json();
  state.detail = detail;
  $("curl").hidden = true;
  $("copy-curl").disabled = detail.summary.kind !== "exchange";
  $("detail-title").textContent = `#${detail.summary.id} ${detail.summary.method} ${detail.summary.url}`;
  $("detail-body").replaceChildren(...await detailSections(detail));
  $("detail").hidden = false;
  document.querySelector(".split").classList.add("with-detail");
  if (focus) $("detail-title").focus();
}

function closeDetail() {
  state.detail = null;
  $("detail").hidden = true;
  document.querySelector(".split").classList.remove("with-detail");
}

function facts(pairs) {
  return el("dl", { class: "facts" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
    .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

function headerTable(label, headers) {
  return el("table", { class: "headers", "aria-label": label },
    el("tbody", {}, headers.map(([name, value]) => el("tr", {}, el("td", {}, name), el("td", {}, value)))));
}

function ms(value) {
  return value === undefined || value < 0 ? "\u2014" : `${value} ms`;
}

async function detailSections(d) {
  const s = d.summary;
  const parts = [];
  if (s.kind === "exchange") {
    parts.push(facts([["Status", d.response ? `${d.response.status} ${d.response.reason}` : "no response"],
      ["Failure", d.failure], ["Protocol", s.protocol], ["Client", d.client], ["Server address", d.serverAddress],
      ["Connection", "#" + s.connection], ["Started", d.timings.started]]));
  }
  if (s.kind === "handshake") {
    parts.push(el("p", {}, badge(s.verdict), " ", d.tls.how, ": ", d.tls.explanation));
  }
  if (s.kind === "tunnel") {
    parts.push(facts([["Relayed untouched", `${bytes(d.bytesUp)} up, ${bytes(d.bytesDown)} down`], ["Ended", d.failure]]));
  }
  if (d.tls) {
    const t = d.tls;
    parts.push(el("h3", {}, "TLS with the client"), facts([
      ["SNI", t.sni], ["Version", t.version || "not negotiated"], ["ALPN", t.alpn || "none"],
      ["Offered ALPN", t.offeredALPN.join(", ") || "none"], ["Certificate shown", t.profile],
      ["Its SPKI pin", el("code", {}, "sha256/" + t.shownCertificatePin)], ["Verdict", `${t.verdict} (${t.how})`],
      ["Client", t.client], ["Handshake", t.handshakeMilliseconds === undefined ? undefined : t.handshakeMilliseconds + " ms"],
      ["Started", t.started], ["Decided", t.decided]]));
  } else if (s.kind === "exchange" && s.url.startsWith("https:")) {
    parts.push(el("p", { class: "note" }, "The TLS facts of this connection are no longer kept."));
  }
  if (s.kind === "exchange") {
    parts.push(el("h3", {}, "Request headers"), headerTable("Request headers", d.request.headers));
    parts.push(el("h3", {}, "Request body"), ...await bodyView(d.request.body));
    if (d.response) {
      parts.push(el("h3", {}, "Response headers"), headerTable("Response headers", d.response.headers));
      if (d.response.trailers) parts.push(el("h3", {}, "Response trailers"), headerTable("Response trailers", d.response.trailers));
      parts.push(el("h3", {}, "Response body"), ...await bodyView(d.response.body));
    }
    const t = d.timings;
    parts.push(el("h3", {}, "Timings"), facts([["DNS", ms(t.dns)], ["Connect", ms(t.connect)], ["TLS to the server", ms(t.ssl)],
      ["Send", ms(t.send)], ["Wait", ms(t.wait)], ["Receive", ms(t.receive)], ["Total", ms(t.total)]]));
  }
  return parts;
}

function decode64(text) {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

async function inflate(data, coding) {
  const format = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate" }[coding];
  if (!format || typeof DecompressionStream === "undefined") return null;
  try {
    const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream(format));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (error) {
    return null;  // a truncated body cannot be inflated
  }
}

function hexDump(data) {
  const shown = data.subarray(0, 65536);
  const lines = [];
  for (let offset = 0; offset < shown.length; offset += 16) {
    const slice = shown.subarray(offset, offset + 16);
    const hex = Array.from(slice, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(slice, (b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : ".")).join("");
    lines.push(offset.toString(16).padStart(8, "0") + "  " + hex.padEnd(48) + "  " + ascii);
  }
  if (data.length > shown.length) lines.push(`\u2026 ${data.length - shown.length} more bytes`);
  return lines.join("\n");
}

function textView(text, mime) {
  if (/json/i.test(mime)) {
    try { return el("pre", { class: "body json" }, JSON.stringify(JSON.parse(text), null, 2)); } catch (error) { /* shown as it is */ }
  }
  return el("pre", { class: "body" }, text);
}

async function bodyView(body) {
  if (!body || body.size === 0) return [el("p", { class: "empty" }, "(empty)")];
  const out = [];
  if (body.note) out.push(el("p", { class: "note" }, body.note));
  const mime = (body.mimeType || "").toLowerCase();
  if (body.text !== undefined) {
    if (body.text.length) out.push(textView(body.text, mime));
    return out;
  }
  let data = decode64(body.base64);
  if (!data.length) return out;
  const coding = (body.contentEncoding || "").toLowerCase();
  if (coding) {
    const inflated = await inflate(data, coding);
    if (inflated) {
      out.push(el("p", { class: "empty" }, `Content-Encoding ${coding}: ${bytes(data.length)} on the wire, shown decoded.`));
      data = inflated;
    } else {
      out.push(el("p", { class: "empty" }, `Content-Encoding ${coding}: shown as received.`));
      return out.concat(el("pre", { class: "body hex" }, hexDump(data)));
    }
  }
  if (mime.startsWith("image/") && !body.truncated) {
    const url = URL.createObjectURL(new Blob([data], { type: mime.split(";")[0] }));
    out.push(el("img", { class: "body", src: url, alt: `The response image (${mime}, ${bytes(data.length)})` }));
    return out;
  }
  const text = new TextDecoder("utf-8", { fatal: true });
  try { out.push(textView(text.decode(data), mime)); } catch (error) { out.push(el("pre", { class: "body hex" }, hexDump(data))); }
  return out;
}

// ---- actions ----

function shellQuote(text) {
  return "'" + String(text).replace(/'/g, "'\\''") + "'";
}

const notRepeated = new Set(["host", "content-length", "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"]);

function curlCommand(d) {
  const s = d.summary;
  const args = ["curl"];
  if (s.protocol === "h2") args.push("--http2");
  const body = d.request.body;
  if (!(s.method === "GET" && (!body || body.size === 0)) && !(s.method === "POST" && body && body.text !== undefined && !body.truncated)) {
    args.push("-X", shellQuote(s.method));
  }
  args.push(shellQuote(s.url));
  for (const [name, value] of d.request.headers) {
    if (notRepeated.has(name.toLowerCase()) || name.startsWith(":")) continue;
    args.push("-H", shellQuote(`${name}: ${value}`));
  }
  const lines = [args.join(" ")];
  if (body && body.size > 0) {
    if (body.text !== undefined && !body.truncated) lines[0] += " --data-binary " + shellQuote(body.text);
    else lines.push(`# the request body (${body.size} bytes) is ${body.truncated ? "not fully recorded" : "binary"}: not included`);
  }
  return lines.join("\n");
}

async function copyCurl() {
  if (!state.detail) return;
  const command = curlCommand(state.detail);
  const box = $("curl");
  box.textContent = command;
  box.hidden = false;
  try {
    await navigator.clipboard.writeText(command);
    $("live").textContent = "The curl command is on the clipboard.";
  } catch (error) {
    const range = document.createRange();
    range.selectNodeContents(box);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
}

async function download(response, fallbackName) {
  if (!response.ok) return notice(`The download failed: ${response.status} ${await response.text()}`);
  const disposition = response.headers.get("content-disposition") || "";
  const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function downloadHAR() {
  const ids = state.shown.slice();
  return fetch("/api/har", {
    method: "POST", headers: { "Content-Type": "application/json", "X-Mitm-Proxy-UI": "1" }, body: JSON.stringify({ ids }),
  }).then((response) => download(response, "mitm-proxy.har"));
}

async function clearFlows() {
  const response = await fetch("/api/clear", { method: "POST", headers: { "X-Mitm-Proxy-UI": "1" } });
  if (!response.ok) return notice(`Could not clear: ${response.status} ${await response.text()}`);
  forgetFlows();
  notice("");
}

// ---- wiring ----

function selectRow(target, focusDetail) {
  const row = target.closest(".row");
  if (!row) return;
  state.selected = Number(row.dataset.id);
  drawFlows();
  openDetail(state.selected, focusDetail);
}

document.addEventListener("DOMContentLoaded", () => {
  const list = $("flow-list");
  list.addEventListener("scroll", queueDraw);
  list.addEventListener("click", (event) => selectRow(event.target, false));
  list.addEventListener("keydown", (event) => {
    const steps = { ArrowDown: 1, ArrowUp: -1, PageDown: 10, PageUp: -10, Home: -Infinity, End: Infinity };
    if (event.key in steps) {
      event.preventDefault();
      moveSelection(steps[event.key] === -Infinity ? -state.shown.length : steps[event.key] === Infinity ? state.shown.length : steps[event.key]);
    } else if (event.key === "Enter" && state.selected !== null) {
      event.preventDefault();
      openDetail(state.selected, true);
    }
  });
  $("host-filter").addEventListener("input", refilter);
  $("text-filter").addEventListener("input", refilter);
  $("filters").addEventListener("submit", (event) => event.preventDefault());
  $("close-detail").addEventListener("click", () => { closeDetail(); list.focus(); });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.detail) { closeDetail(); list.focus(); }
  });
  $("copy-curl").addEventListener("click", copyCurl);
  $("download-har").addEventListener("click", downloadHAR);
  $("download-report").addEventListener("click", () => fetch("/api/report").then((r) => download(r, "mitm-proxy-report.json")));
  $("clear").addEventListener("click", clearFlows);
  window.addEventListener("resize", queueDraw);
  fetch("/api/board").then((r) => (r.ok ? r.json() : null)).then((board) => board && drawBoard(board));
  connect();
  drawFlows();
});
