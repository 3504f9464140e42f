// mitm-proxy's web UI, the acting half: resend a flow (as it was, or edited), compose a request, breakpoints and the
// exchanges paused at them. Loaded after app.js and using its helpers ($, el, notice, state). Text from traffic goes
// in with textContent or form values, never as HTML. Every POST carries X-Mitm-Proxy-UI (the proxy refuses it without).
"use strict";

const act = { paused: [], breakpoints: [] };

function post(path, body) {
  return fetch(path, {
    method: "POST", cache: "no-store",
    headers: { "X-Mitm-Proxy-UI": "1", "Content-Type": "application/json" },
    body: body === undefined ? "" : JSON.stringify(body),
  });
}

// "Name: value" lines <-> [[name, value]]
function headerLines(headers) { return headers.map(([n, v]) => `${n}: ${v}`).join("\n"); }
function parseHeaderLines(text) {
  return text.split("\n").map((line) => line.trim()).filter((line) => line).map((line) => {
    const colon = line.indexOf(":", line.startsWith(":") ? 1 : 0);
    return colon < 0 ? [line, ""] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
  });
}

// ---- resend and compose ----

async function sendOrder(order) {
  $("send-result").textContent = "Sending through the proxy\u2026";
  const response = await post("/api/send", order);
  const text = await response.text();
  let answer = null;
  try { answer = JSON.parse(text); } catch (e) { answer = null; }
  if (response.ok && answer && answer.status) {
    $("send-result").textContent = `Sent: the proxy answered ${answer.status}. The new flow is in the list.`;
  } else {
    $("send-result").textContent = "Not sent: " + (answer && answer.error ? answer.error : text.trim());
  }
}

function replayOpenFlow() {
  const d = state.detail;
  if (!d || d.summary.kind !== "exchange") return;
  $("composer").hidden = true;
  $("send-panel").hidden = false;
  sendOrder({ flow: d.summary.id });
}

function openComposer(fromFlow) {
  const d = fromFlow ? state.detail : null;
  $("composer-flow").value = d ? String(d.summary.id) : "";
  $("composer-title").textContent = d ? `Edit and resend #${d.summary.id}` : "Compose a request";
  $("composer-method").value = d ? d.request.method : "GET";
  $("composer-url").value = d ? d.summary.url : "https://";
  $("composer-headers").value = d ? headerLines(d.request.headers.filter(([n]) => !n.startsWith(":"))) : "";
  const body = d && d.request.body;
  $("composer-body").value = body && body.text !== undefined && body.text !== null ? body.text : "";
  $("send-panel").hidden = false;
  $("composer").hidden = false;
  $("send-result").textContent = "";
  $("composer-url").focus();
}

function sendComposed(event) {
  event.preventDefault();
  const order = {
    method: $("composer-method").value.trim(),
    url: $("composer-url").value.trim(),
    headers: parseHeaderLines($("composer-headers").value),
    body: $("composer-body").value,
  };
  const flow = $("composer-flow").value;
  if (flow) order.flow = Number(flow);
  sendOrder(order);
}

// The open flow: replay buttons for exchanges, and which flow it replays.
function followDetail() {
  const d = state.detail;
  const exchange = !!d && d.summary.kind === "exchange";
  $("replay").disabled = !exchange;
  $("edit-resend").disabled = !exchange;
  const of = $("replay-of");
  of.hidden = !(d && d.summary.replayOf);
  of.textContent = d && d.summary.replayOf ? `Replay of flow #${d.summary.replayOf}` : "";
}

// ---- paused exchanges ----

function drawPaused(list) {
  act.paused = list;
  const box = $("paused-list");
  $("paused-section").hidden = list.length === 0 && act.breakpoints.length === 0;
  $("paused-count").textContent = list.length ? `(${list.length} waiting)` : "";
  // An exchange already shown keeps its element, and with it the edits being typed into it; one not touched yet is
  // drawn again when its body arrived whole meanwhile (it becomes editable).
  const shown = new Map([...box.children].map((item) => [Number(item.dataset.id), item]));
  box.replaceChildren(...list.map((p) => {
    const item = shown.get(p.id);
    const fresh = !item || (item.dataset.edited !== "1" && item.dataset.body !== bodyState(p));
    return fresh ? pausedItem(p) : item;
  }));
}

function bodyState(p) { return p.body && p.body.text !== null && p.body.text !== undefined ? "text" : "none"; }

function pausedItem(p) {
  const response = p.phase === "response";
  const headers = el("textarea", { class: "p-headers", "aria-label": "Headers, one Name: value a line", rows: "5", spellcheck: "false" });
  headers.value = headerLines(p.headers);
  const method = el("input", { class: "p-method", "aria-label": "Method", value: p.method, spellcheck: "false" });
  const url = el("input", { class: "p-url", "aria-label": "URL", value: p.url, spellcheck: "false" });
  const status = el("input", { class: "p-status", "aria-label": "Status", value: String(p.status || ""), inputmode: "numeric" });
  const line = response
    ? el("div", { class: "p-line" }, status, el("code", { class: "p-response-of" }, `${p.method} ${p.url}`))
    : el("div", { class: "p-line" }, method, url);
  let body = null;
  let bodyPart;
  if (bodyState(p) === "text") {
    body = el("textarea", { class: "p-body", "aria-label": "Body", rows: "6", spellcheck: "false" });
    body.value = p.body.text;
    bodyPart = body;
  } else {
    bodyPart = el("p", { class: "p-body-note" }, "Body not editable: " + ((p.body && p.body.notEditable) || "unknown"));
  }
  const go = el("button", { type: "button", class: "p-continue" }, "Continue");
  const stop = el("button", { type: "button", class: "p-abort" }, "Abort");
  go.addEventListener("click", () => {
    const edit = { headers: parseHeaderLines(headers.value) };
    if (response) {
      edit.status = Number(status.value.trim());
    } else {
      edit.method = method.value.trim();
      edit.url = url.value.trim();
    }
    if (body && body.value !== p.body.text) edit.body = body.value;  // unchanged bodies keep their framing
    answerPaused(p.id, "continue", edit);
  });
  stop.addEventListener("click", () => answerPaused(p.id, "abort"));
  const item = el("li", { class: "paused", "data-id": p.id, "data-phase": p.phase, "data-body": bodyState(p) },
    el("p", {}, el("strong", {}, `#${p.id} ${p.phase} paused`), ` by ${p.rule} \u2014 aborted at ${clock(p.abortsAt)} unless answered `
      + "(abort: the client gets 502)"),
    line, headers, bodyPart, el("div", { class: "actions" }, go, stop));
  item.addEventListener("input", () => { item.dataset.edited = "1"; });
  return item;
}

function loadPaused() {
  fetch("/api/paused", { cache: "no-store" }).then((r) => (r.ok ? r.json() : null)).then((p) => p && drawPaused(p.paused));
}

async function answerPaused(id, what, edit) {
  const response = await post(`/api/paused/${id}/${what}`, edit);
  if (!response.ok) notice(await response.text());
}

// ---- breakpoints set here ----

function drawBreakpoints(list) {
  act.breakpoints = list;
  $("paused-section").hidden = act.paused.length === 0 && list.length === 0 && $("paused-section").dataset.open !== "1";
  $("breakpoint-list").replaceChildren(...list.map((b, index) => {
    const remove = el("button", { type: "button" }, "Remove");
    remove.addEventListener("click", () => saveBreakpoints(act.breakpoints.filter((_, i) => i !== index)));
    const at = b.at === "both" ? "requests and responses" : b.at === "response" ? "responses" : "requests";
    return el("li", {}, `${at} to `, el("code", {}, (b.method ? b.method + " " : "") + b.match), ` (aborted after ${b.timeout})`, " ", remove);
  }));
}

async function saveBreakpoints(list) {
  const response = await post("/api/breakpoints", { breakpoints: list });
  if (!response.ok) return notice(await response.text());
  drawBreakpoints((await response.json()).breakpoints);
}

function addBreakpoint(event) {
  event.preventDefault();
  const match = $("breakpoint-match").value.trim();
  if (!match) return;
  const method = $("breakpoint-method").value.trim().toUpperCase();
  saveBreakpoints(act.breakpoints.concat([{ match, method: method || null, at: $("breakpoint-at").value }]));
  $("breakpoint-match").value = "";
}

document.addEventListener("feed", (event) => {
  event.detail.addEventListener("paused", (message) => drawPaused(JSON.parse(message.data).paused));
  event.detail.addEventListener("resync", loadPaused);  // a page that fell behind may have missed a pause
});

document.addEventListener("DOMContentLoaded", () => {
  $("replay").addEventListener("click", replayOpenFlow);
  $("edit-resend").addEventListener("click", () => openComposer(true));
  $("compose").addEventListener("click", () => openComposer(false));
  $("composer").addEventListener("submit", sendComposed);
  $("close-send").addEventListener("click", () => { $("send-panel").hidden = true; });
  $("show-breakpoints").addEventListener("click", () => {
    $("paused-section").dataset.open = "1";
    $("paused-section").hidden = false;
    $("breakpoint-match").focus();
  });
  $("breakpoint-form").addEventListener("submit", addBreakpoint);
  new MutationObserver(followDetail).observe($("detail-title"), { childList: true, characterData: true, subtree: true });
  followDetail();
  loadPaused();
  fetch("/api/breakpoints").then((r) => (r.ok ? r.json() : null)).then((b) => b && drawBreakpoints(b.breakpoints));
});
