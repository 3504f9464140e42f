// mitm-proxy's web UI: the pinning board and the flows, kept live by the proxy's event stream (/events).
// Everything shown comes from traffic and is hostile: text goes in with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const ROW = 28;
const state = {
  flows: new Map(),      // id -> summary
  order: [],             // ids, oldest first
  shown: [],             // ids matching the filters, in the order drawn (top first)
  selected: null,        // id
  detail: null,          // the open flow's detail
  evicted: 0,
  flowLimit: 10000,
  hosts: new Set(),
  drawQueued: false,
  sort: { key: "time", descending: true },
  expression: null,      // { text, ids: Set }: the last valid ~ filter and the flows the proxy found for it
  expressionRun: 0,      // numbers the proxy's answers, so a late one for an older filter is not used
  unchecked: new Set(),  // flows not yet tried against the ~ filter
  checkTimer: null,
  muted: new Set(JSON.parse(localStorage.getItem("mitm-proxy.muted") || "[]")),
  board: null,
  compareWith: null,     // the flow marked to compare the next one with
  detailTimer: null,
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
  if (state.expression) runExpression(state.expression.text); else refilter();
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
  if (state.expression) { checkLater(flow.id); if (!known) return; }
  if (known) {
    const at = state.shown.indexOf(flow.id);
    if (at >= 0) state.shown.splice(at, 1);
  }
  if (matches(flow)) insertShown(flow);
  queueDraw();
  if (known && state.selected === flow.id) refreshDetailSoon();
}

// A WebSocket's flow changes with every message: its open detail is redrawn at most a few times a second.
function refreshDetailSoon() {
  if (state.detailTimer || state.comparing) return;
  state.detailTimer = setTimeout(() => {
    state.detailTimer = null;
    if (state.selected !== null && state.detail && state.detail.summary.id === state.selected && !state.comparing) openDetail(state.selected, false);
  }, 250);
}

function trimToLimit() {
  let gone = false;
  while (state.order.length > state.flowLimit) {
    state.flows.delete(state.order.shift());
    state.evicted++;
    gone = true;
  }
  if (gone) state.shown = state.shown.filter((id) => state.flows.has(id));
}

function forgetFlows() {
  state.flows.clear();
  state.order = [];
  state.shown = [];
  state.evicted = 0;
  closeDetail();
  queueDraw();
}

// ---- filtering, muting, sorting and the list ----

function searchText(flow) {
  return [flow.method, flow.url, flow.status, flow.verdict, flow.how, flow.failure, flow.protocol].filter((x) => x !== undefined).join(" ").toLowerCase();
}

function textFilter() {
  return $("text-filter").value.trim();
}

function matches(flow) {
  const host = $("host-filter").value.trim().toLowerCase();
  const text = textFilter();
  if (state.muted.has(flow.host)) return false;
  if (host && !flow.host.toLowerCase().includes(host)) return false;
  if (text.includes("~")) return !state.expression || state.expression.ids.has(flow.id);
  if (text && !searchText(flow).includes(text.toLowerCase())) return false;
  return true;
}

const sortKeys = {
  time: (f) => f.time,
  method: (f) => f.method,
  url: (f) => f.url,
  status: (f) => (f.status !== undefined ? f.status : { exchange: 1000, handshake: 1001, tunnel: 1002 }[f.kind]),
  size: (f) => (f.size === undefined ? -1 : f.size),
  duration: (f) => (f.duration === undefined ? -1 : f.duration),
  protocol: (f) => f.protocol || "",
};

// Negative when `a` is drawn above `b`. Ties go by start time, then by number: the list is in start order.
function compareFlows(a, b) {
  const key = sortKeys[state.sort.key];
  const x = key(a), y = key(b);
  let order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
  if (!order) order = a.time - b.time || a.id - b.id;
  return state.sort.descending ? -order : order;
}

function insertShown(flow) {
  let low = 0, high = state.shown.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compareFlows(state.flows.get(state.shown[middle]), flow) <= 0) low = middle + 1; else high = middle;
  }
  state.shown.splice(low, 0, flow.id);
}

function refilter() {
  state.shown = state.order.filter((id) => matches(state.flows.get(id)))
    .sort((a, b) => compareFlows(state.flows.get(a), state.flows.get(b)));
  queueDraw();
}

function sortBy(key) {
  state.sort = state.sort.key === key ? { key, descending: !state.sort.descending } : { key, descending: key === "time" };
  drawSortButtons();
  refilter();
}

function drawSortButtons() {
  for (const button of document.querySelectorAll(".flow-head button")) {
    const on = button.dataset.sort === state.sort.key;
    button.classList.toggle("sorted", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.dataset.direction = on ? (state.sort.descending ? "descending" : "ascending") : "";
    button.title = on ? `Sorted by ${button.textContent.trim()}, ${state.sort.descending ? "highest or newest" : "lowest or oldest"} first; press to reverse`
      : `Sort by ${button.textContent.trim()}`;
  }
}

// ---- the filter language: evaluated by the proxy, which holds the bodies ----

async function askProxy(filter, ids) {
  const response = await fetch("/api/filter", {
    method: "POST", headers: { "Content-Type": "application/json", "X-Mitm-Proxy-UI": "1" },
    body: JSON.stringify(ids ? { filter, ids } : { filter }),
  });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return response.json();
}

function textChanged() {
  const text = textFilter();
  clearTimeout(state.expressionTimer);
  if (!text.includes("~")) {
    state.expression = null;
    state.expressionRun++;
    showFilterError(null);
    refilter();
    return;
  }
  state.expressionTimer = setTimeout(() => runExpression(text), 150);
}

async function runExpression(text) {
  const run = ++state.expressionRun;
  let answer;
  try { answer = await askProxy(text); } catch (error) { return showFilterError(text, { message: "the proxy did not answer: " + error.message }); }
  if (run !== state.expressionRun) return;
  if (answer.error) return showFilterError(text, answer.error);
  showFilterError(null);
  state.expression = { text, ids: new Set(answer.ids) };
  state.unchecked.clear();
  refilter();
}

// New and changed flows are tried against the ~ filter in batches.
function checkLater(id) {
  state.unchecked.add(id);
  if (state.checkTimer) return;
  state.checkTimer = setTimeout(async () => {
    state.checkTimer = null;
    const expression = state.expression;
    const ids = [...state.unchecked];
    state.unchecked.clear();
    if (!expression || !ids.length) return;
    const run = state.expressionRun;
    let answer;
    try { answer = await askProxy(expression.text, ids); } catch (error) { return; }
    if (run !== state.expressionRun || answer.error) return;
    const found = new Set(answer.ids);
    for (const id of ids) { if (found.has(id)) expression.ids.add(id); else expression.ids.delete(id); }
    refilter();
  }, 100);
}

function showFilterError(text, error) {
  const box = $("filter-error");
  $("text-filter").setAttribute("aria-invalid", error ? "true" : "false");
  if (!error) { box.hidden = true; box.replaceChildren(); return; }
  const parts = [el("span", {}, error.message)];
  if (error.column) {
    const marker = " ".repeat(Math.max(0, error.column - 1)) + "^".repeat(Math.max(1, error.length || 1));
    parts.push(el("pre", { class: "caret", "aria-hidden": "true" }, Array.from(text).join("") + "\n" + marker));
    parts[0].append(` (at character ${error.column})`);
  }
  box.replaceChildren(...parts);
  box.hidden = false;
}

// ---- muting hosts ----

function setMuted(host, muted) {
  if (muted) state.muted.add(host); else state.muted.delete(host);
  localStorage.setItem("mitm-proxy.muted", JSON.stringify([...state.muted]));
  drawMuted();
  if (state.board) drawBoard(state.board);
  refilter();
}

function drawMuted() {
  const box = $("muted-hosts");
  box.hidden = state.muted.size === 0;
  box.replaceChildren("Muted hosts, hidden on the board and in the list: ",
    ...[...state.muted].sort().flatMap((host) => [el("code", {}, host), " ",
      el("button", { type: "button", class: "small", "data-unmute": host, "aria-label": "Unmute " + host }, "Unmute"), " "]));
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
    const id = state.shown[position];
    const flow = state.flows.get(id);
    const selected = id === state.selected;
    const row = el("div", {
      class: "row" + (isProblem(flow) ? " problem" : ""), role: "option", id: "flow-" + id, "data-id": id,
      "aria-selected": selected ? "true" : "false", "aria-posinset": position + 1, "aria-setsize": count,
    },
      el("span", { class: "c-time" }, clock(flow.time)),
      el("span", { class: "c-method" }, flow.method),
      el("span", { class: "c-url", title: flow.url },
        flow.replayOf ? [el("span", { class: "badge v-replay", "data-replay-of": flow.replayOf,
          title: `Replay of flow #${flow.replayOf}: press to open the original` }, "replay"), " "] : null, flow.url),
      el("span", { class: "c-status", title: [flow.how || flow.failure, ...(flow.ruleActions || [])].filter(Boolean).join("\n") || undefined },
        statusText(flow), flow.rules ? [" ", el("span", { class: "badge v-rule" }, flow.answeredByRule ? "rule answer" : "rule")] : null,
        flow.messages !== undefined ? el("span", { class: "ws-count" }, ` ${flow.messages} msg${flow.webSocketOpen ? " \u25CF" : ""}`) : null),
      el("span", { class: "c-size" }, bytes(flow.size)),
      el("span", { class: "c-dur" }, flow.duration === undefined ? "" : msText(flow.duration)),
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
  let position = state.shown.indexOf(state.selected);
  position = state.selected === null || position < 0 ? 0 : Math.min(count - 1, Math.max(0, position + step));
  state.selected = state.shown[position];
  const list = $("flow-list");
  if (position * ROW < list.scrollTop) list.scrollTop = position * ROW;
  if ((position + 1) * ROW > list.scrollTop + list.clientHeight) list.scrollTop = (position + 1) * ROW - list.clientHeight;
  drawFlows();
}

// ---- the board ----

function badge(word, extra) {
  return el("span", { class: "badge v-" + word }, extra ? `${word} ${extra}` : word);
}

// Failing hosts first, then refused ones, then those whose clients disagree; alphabetical within each.
function boardRank(row) {
  if (row.holds === false || row.acceptedInvalidCertificate || row.verdict === "failed") return 0;
  if (row.verdict === "refused") return 1;
  if (row.disagreement) return 2;
  if (row.verdict === "inconclusive") return 3;
  return 4;
}

function drawBoard(board) {
  state.board = board;
  const result = $("board-result");
  const outcome = { pass: ["pass", "every expectation holds"], fail: ["fail", "an expectation does not hold"] }[board.result]
    || ["inconclusive", "no expectation was given (--expect)"];
  result.replaceChildren("Run result: ", el("span", { class: "badge v-" + outcome[0] }, board.result), " ", outcome[1]);
  if (board.droppedEvents > 0) {
    result.append(el("span", { class: "trust-no" }, ` \u2014 ${board.droppedEvents} events were dropped by the recording queue (the counts stay complete)`));
  }
  const body = $("board-rows");
  const rows = board.rows.filter((row) => !state.muted.has(row.host))
    .sort((a, b) => boardRank(a) - boardRank(b) || a.host.localeCompare(b.host) || (a.port || 0) - (b.port || 0));
  const hidden = board.rows.length - rows.length;
  if (hidden) result.append(` \u2014 ${hidden} muted host${hidden === 1 ? "" : "s"} not shown`);
  if (!rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 6, class: "empty" }, hidden ? "Every host is muted." : "No TLS connection yet.")));
  } else {
    body.replaceChildren(...rows.map((row) => {
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
        el("th", { scope: "row" }, el("code", {}, row.port ? `${row.host}:${row.port}` : row.host), " ",
          el("button", { type: "button", class: "small", "data-mute": row.host, "aria-label": "Mute " + row.host }, "Mute"), notes),
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
  const again = state.detail && state.detail.summary.id === detail.summary.id;
  const scrolled = $("detail").scrollTop;
  state.detail = detail;
  state.comparing = false;
  if (!again) $("curl").hidden = true;
  $("copy-curl").disabled = detail.summary.kind !== "exchange";
  $("compare").disabled = detail.summary.kind !== "exchange";
  $("detail-title").textContent = `#${detail.summary.id} ${detail.summary.method} ${detail.summary.url}`;
  $("detail-body").replaceChildren(...await detailSections(detail));
  $("detail").hidden = false;
  if (again) $("detail").scrollTop = scrolled;
  document.querySelector(".split").classList.add("with-detail");
  if (focus) $("detail-title").focus();
}

function closeDetail() {
  state.detail = null;
  state.comparing = false;
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

// Milliseconds as far as they mean something: 0.02 ms, 3.14 ms, 42.5 ms, 1234 ms.
function msText(value) {
  if (value === undefined || value === null || value < 0) return "\u2014";
  return `${Number(value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0))} ms`;
}

async function detailSections(d) {
  const s = d.summary;
  const parts = [];
  if (s.kind === "exchange") {
    if (d.answeredByRule) {
      parts.push(el("p", { class: "rule-note" }, el("span", { class: "badge v-rule" }, "rule answer"), " Answered by rule ", d.answeredByRule,
        ": no origin server was contacted; the response is the rule's."));
    }
    parts.push(facts([["Status", d.response ? `${d.response.status} ${d.response.reason}` : "no response"],
      ["Failure", d.failure], ["Protocol", s.protocol], ["Client", d.client],
      ["Server address", d.answeredByRule ? "none (answered by the rule)" : d.serverAddress],
      ["Rules", d.rules && d.rules.length ? el("ul", { class: "plain" }, d.rules.map((r) => el("li", {}, r))) : (s.rules ? s.rules.join(", ") : undefined)],
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
      ["Client", t.client], ["Handshake", t.handshakeMilliseconds === undefined ? undefined : msText(t.handshakeMilliseconds)],
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
      if (!d.webSocket) parts.push(el("h3", {}, "Response body"), ...await bodyView(d.response.body));
    }
    if (d.webSocket) parts.push(...webSocketView(d.webSocket));
    const t = d.timings;
    parts.push(el("h3", {}, "Timings"), facts([["DNS", msText(t.dns)], ["Connect", msText(t.connect)], ["TLS to the server", msText(t.ssl)],
      ["Send", msText(t.send)], ["Wait", msText(t.wait)], ["Receive", msText(t.receive)], ["Total", msText(t.total)]]));
  }
  return parts;
}

// ---- WebSocket messages ----

function webSocketView(ws) {
  const parts = [el("h3", {}, `WebSocket messages (${ws.sent + ws.received})`)];
  const status = ws.open ? "open: new messages appear as they pass" : "closed";
  const ending = ws.open ? [] : [["Closed by", ws.closedBy ? (ws.closedBy === "send" ? "the client" : "the server") : "no close frame"],
    ["Close code", ws.closeCode === undefined ? undefined : String(ws.closeCode)], ["Close reason", ws.closeReason],
    ["Ended", ws.ended], ["Relayed with framing", `${bytes(ws.bytesUp)} up, ${bytes(ws.bytesDown)} down`]];
  parts.push(facts([["State", status], ["Sent by the client", String(ws.sent)], ["Sent by the server", String(ws.received)],
    ["Payload", ws.wireBytes !== ws.payloadBytes ? `${bytes(ws.payloadBytes)} (${bytes(ws.wireBytes)} on the wire)` : bytes(ws.payloadBytes)],
    ...ending]));
  if (ws.omitted) {
    parts.push(el("p", { class: "note" }, `${ws.omitted} of the messages are not shown: a WebSocket keeps its newest 1,000, and older flows ` +
      "give theirs up to keep the list within its memory budget (the counts and sizes stay)."));
  }
  if (!ws.messages.length) return parts.concat(el("p", { class: "empty" }, "No message yet."));
  const rows = ws.messages.map((m) => {
    const direction = m.direction === "send" ? "\u2191 client" : "\u2193 server";
    const size = bytes(m.size) + (m.compressed ? ` (${bytes(m.wireSize)} compressed)` : "") + (m.frames > 1 ? `, ${m.frames} frames` : "");
    return el("tr", { class: "ws-" + m.direction + (m.malformed ? " malformed" : "") },
      el("td", {}, String(m.number)), el("td", {}, direction), el("td", {}, clock(m.time)),
      el("td", {}, `${m.kind} (${m.opcode})`), el("td", {}, size), el("td", {}, messageData(m)));
  });
  parts.push(el("div", { class: "table-wrap" }, el("table", { class: "messages", "aria-label": "WebSocket messages" },
    el("thead", {}, el("tr", {}, ["#", "From", "Time", "Opcode", "Size", "Data"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows))));
  return parts;
}

function messageData(m) {
  const out = [];
  if (m.malformed) out.push(el("div", { class: "bad" }, "malformed: " + m.malformed));
  if (m.kind === "close") out.push(el("div", {}, m.closeCode === undefined ? "close (no code)" : `close ${m.closeCode}${m.closeReason ? " \u201C" + m.closeReason + "\u201D" : ""}`));
  else if (m.text !== undefined) out.push(el("pre", { class: "ws-data" }, m.text));
  else if (m.base64) out.push(el("pre", { class: "ws-data hex" }, hexDump(decode64(m.base64))));
  if (m.truncated) out.push(el("div", { class: "empty" }, `the first ${m.text !== undefined ? "part" : "bytes"} of ${bytes(m.size)} shown`));
  return out;
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

// ---- comparing two flows ----

async function compare() {
  const current = state.detail;
  if (!current || current.summary.kind !== "exchange") return;
  const note = $("compare-note");
  if (state.compareWith === null || state.compareWith === current.summary.id) {
    state.compareWith = current.summary.id;
    note.textContent = `Flow #${current.summary.id} is marked: open another flow and press Compare.`;
    note.hidden = false;
    return;
  }
  const response = await fetch("/api/flows/" + state.compareWith, { cache: "no-store" });
  if (!response.ok) { note.textContent = await response.text(); state.compareWith = null; return; }
  const other = await response.json();
  state.compareWith = null;
  note.hidden = true;
  state.comparing = true;
  $("detail-title").textContent = `Compare #${other.summary.id} with #${current.summary.id}`;
  $("detail-body").replaceChildren(...await comparison(other, current));
}

function headerMap(pairs) {
  const map = new Map();
  for (const [name, value] of pairs || []) {
    const key = name.toLowerCase();
    map.set(key, map.has(key) ? map.get(key) + ", " + value : value);
  }
  return map;
}

function compareRows(label, left, right) {
  const names = [...new Set([...left.keys(), ...right.keys()])];
  return [el("h3", {}, label), el("table", { class: "compare", "aria-label": label },
    el("tbody", {}, names.map((name) => {
      const a = left.get(name), b = right.get(name);
      const same = a === b;
      return el("tr", { class: same ? "same" : "differs" }, el("th", { scope: "row" }, name, same ? null : el("span", { class: "differs-mark" }, " \u2260")),
        el("td", {}, a === undefined ? el("span", { class: "empty" }, "(absent)") : a),
        el("td", {}, b === undefined ? el("span", { class: "empty" }, "(absent)") : b));
    })))];
}

async function bodyCell(message) {
  if (!message) return el("p", { class: "empty" }, "(no message)");
  return el("div", {}, ...await bodyView(message.body));
}

async function comparison(a, b) {
  const line = (d) => new Map([["method", d.summary.method], ["url", d.summary.url], ["status", d.response ? `${d.response.status} ${d.response.reason}` : "no response"],
    ["protocol", d.summary.protocol || ""], ["size", bytes(d.summary.size)], ["duration", msText(d.summary.duration)], ["started", d.timings.started]]);
  const parts = [el("table", { class: "compare" }, el("thead", {}, el("tr", {}, el("th", {}, ""),
    el("th", { scope: "col" }, `#${a.summary.id}`), el("th", { scope: "col" }, `#${b.summary.id}`))))];
  parts.push(...compareRows("Overview", line(a), line(b)));
  parts.push(...compareRows("Request headers", headerMap(a.request.headers), headerMap(b.request.headers)));
  parts.push(...compareRows("Response headers", headerMap(a.response && a.response.headers), headerMap(b.response && b.response.headers)));
  parts.push(el("h3", {}, "Request bodies"), el("div", { class: "side-by-side" }, await bodyCell(a.request), await bodyCell(b.request)));
  parts.push(el("h3", {}, "Response bodies"), el("div", { class: "side-by-side" }, await bodyCell(a.response), await bodyCell(b.response)));
  return parts;
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
  const original = target.closest(".v-replay");  // a replay's badge opens the flow it replays
  state.selected = Number(original ? original.dataset.replayOf : row.dataset.id);
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
  $("text-filter").addEventListener("input", textChanged);
  for (const button of document.querySelectorAll(".flow-head button")) button.addEventListener("click", () => sortBy(button.dataset.sort));
  document.addEventListener("click", (event) => {
    const mute = event.target.closest("[data-mute]");
    if (mute) setMuted(mute.dataset.mute, true);
    const unmute = event.target.closest("[data-unmute]");
    if (unmute) setMuted(unmute.dataset.unmute, false);
  });
  $("mute-host").addEventListener("click", () => { if (state.detail) setMuted(state.detail.summary.host, true); });
  $("compare").addEventListener("click", compare);
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
  drawMuted();
  drawSortButtons();
  connect();
  drawFlows();
});
