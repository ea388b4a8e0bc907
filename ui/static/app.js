// The web board. The operator signs in with an operator token; the page then
// lists the agents and keeps the list live through the board's Connect API
// (ListAgents, then the WatchAgents server stream), reconnecting whenever the
// stream ends. No framework and no build step. Everything that comes from the
// board reaches the page through textContent or an attribute, never as HTML.
"use strict";

(function () {
  const TOKEN_KEY = "symphonix.operatorToken";
  const SERVICE = "/symphonix.board.v1.AgentService/";
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const TICK_MS = 5000;
  const MAX_MESSAGE_BYTES = 16 << 20;

  const $ = (id) => document.getElementById(id);
  const ui = {
    session: $("session"),
    conn: $("conn"),
    signOut: $("sign-out"),
    signIn: $("sign-in"),
    form: $("sign-in-form"),
    token: $("token"),
    signInButton: $("sign-in-button"),
    signInError: $("sign-in-error"),
    agents: $("agents"),
    agentsTitle: $("agents-title"),
    stale: $("stale"),
    empty: $("empty"),
    connectHint: $("connect-hint"),
    tableWrap: $("table-wrap"),
    rows: $("agent-rows"),
  };

  // The state of the page. generation counts sign-ins and sign-outs: a loop
  // started for an older generation stops at its next step.
  let generation = 0;
  let controller = null; // aborts the requests of the running loop
  let wake = null; // ends the wait before a reconnect early
  let loaded = false; // whether a first list has arrived
  let renderQueued = false;
  const agents = new Map(); // name -> Agent, as the board sent it

  // RPCError is an error the board (or the network) gave, with its Connect
  // code: "unauthenticated", "permission_denied", "unavailable", ...
  class RPCError extends Error {
    constructor(code, message) {
      super(message || code);
      this.code = code;
    }
  }

  // The codes of the Connect protocol for HTTP statuses without a JSON error.
  const codeOfStatus = {
    400: "invalid_argument", 401: "unauthenticated", 403: "permission_denied",
    404: "unimplemented", 408: "deadline_exceeded", 409: "aborted",
    412: "failed_precondition", 413: "resource_exhausted", 429: "unavailable",
    431: "resource_exhausted", 502: "unavailable", 503: "unavailable",
    504: "unavailable",
  };

  function headers(token, contentType) {
    return {
      "Content-Type": contentType,
      "Connect-Protocol-Version": "1",
      "Authorization": "Bearer " + token,
    };
  }

  async function post(token, method, contentType, body, signal) {
    try {
      return await fetch(SERVICE + method, {
        method: "POST",
        headers: headers(token, contentType),
        body: body,
        signal: signal,
        cache: "no-store",
        credentials: "omit",
      });
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new RPCError("unavailable", "the board cannot be reached");
    }
  }

  // errorOf reads the JSON error of a response that is not a 200.
  async function errorOf(res) {
    let body = null;
    try {
      body = JSON.parse(await res.text());
    } catch (e) {
      if (e.name === "AbortError") throw e;
    }
    const code = (body && typeof body.code === "string" && body.code) ||
      codeOfStatus[res.status] || "unknown";
    const message = (body && typeof body.message === "string" && body.message) ||
      "HTTP " + res.status;
    return new RPCError(code, message);
  }

  // unary calls a unary RPC with the Connect protocol and JSON.
  async function unary(token, method, request, signal) {
    const res = await post(token, method, "application/json", JSON.stringify(request), signal);
    if (!res.ok) throw await errorOf(res);
    try {
      return await res.json();
    } catch (e) {
      if (e.name === "AbortError") throw e;
      throw new RPCError("unavailable", "the board's answer was cut short");
    }
  }

  // envelope frames one message of a Connect stream: a flag byte, the length
  // as 4 bytes big-endian, and the JSON.
  function envelope(message) {
    const data = new TextEncoder().encode(JSON.stringify(message));
    const out = new Uint8Array(5 + data.length);
    new DataView(out.buffer).setUint32(1, data.length, false);
    out.set(data, 5);
    return out;
  }

  function concat(a, b) {
    if (a.length === 0) return b;
    const out = new Uint8Array(a.length + b.length);
    out.set(a, 0);
    out.set(b, a.length);
    return out;
  }

  // stream calls a server-streaming RPC with the Connect protocol and JSON,
  // calling onMessage for each message. It returns when the board ends the
  // stream cleanly and throws an RPCError when it ends with an error, or
  // when the stream breaks off. onOpen is called once the board has answered.
  async function stream(token, method, request, signal, onOpen, onMessage) {
    const res = await post(token, method, "application/connect+json", envelope(request), signal);
    if (!res.ok) throw await errorOf(res);
    if (!res.body) throw new RPCError("unimplemented", "this browser cannot read a stream");
    onOpen();
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = new Uint8Array(0);
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (e.name === "AbortError") throw e;
        throw new RPCError("unavailable", "the stream broke off");
      }
      if (chunk.done) throw new RPCError("unavailable", "the stream ended without an end message");
      buf = concat(buf, chunk.value);
      while (buf.length >= 5) {
        const flags = buf[0];
        const size = new DataView(buf.buffer, buf.byteOffset, 5).getUint32(1, false);
        if (size > MAX_MESSAGE_BYTES) throw new RPCError("resource_exhausted", "a message is too large");
        if (buf.length < 5 + size) break;
        const data = buf.subarray(5, 5 + size);
        buf = buf.subarray(5 + size);
        if (flags & 0x01) throw new RPCError("internal", "a compressed message was not asked for");
        let msg;
        try {
          msg = JSON.parse(decoder.decode(data));
        } catch (e) {
          throw new RPCError("internal", "a message is not JSON");
        }
        if (flags & 0x02) {
          reader.cancel().catch(() => {});
          if (msg && msg.error) throw new RPCError(msg.error.code || "unknown", msg.error.message);
          return;
        }
        onMessage(msg);
      }
    }
  }

  // ---- the agent table ----

  function upsert(agent) {
    if (!agent || typeof agent.name !== "string" || agent.name === "") return;
    agents.set(agent.name, agent);
  }

  function replaceAll(list) {
    agents.clear();
    for (const a of list || []) upsert(a);
    loaded = true;
    render();
  }

  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    setTimeout(render, 0);
  }

  function node(tag, className, text) {
    const n = document.createElement(tag);
    if (className) n.className = className;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function none() {
    return node("span", "none", "—");
  }

  function tags(list, label) {
    if (!Array.isArray(list) || list.length === 0) return none();
    const ul = node("ul", "tags");
    ul.setAttribute("aria-label", label);
    for (const item of list) ul.append(node("li", "tag", String(item)));
    return ul;
  }

  function shortBuild(build) {
    const hex = build.startsWith("sha256:") ? build.slice(7) : build;
    return hex.length > 12 ? hex.slice(0, 12) + "…" : hex;
  }

  // parseTime reads a protobuf JSON timestamp (RFC 3339, up to nine
  // fractional digits) as milliseconds since the epoch, or NaN.
  function parseTime(s) {
    if (typeof s !== "string") return NaN;
    const ms = Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));
    return ms > 0 ? ms : NaN;
  }

  function ago(ms, now) {
    const s = Math.max(0, Math.round((now - ms) / 1000));
    if (s < 60) return s + " s ago";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min ago";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h ago";
    return Math.floor(h / 24) + " d ago";
  }

  function lastSeenText(el, now) {
    const ms = Number(el.dataset.ms);
    el.textContent = el.dataset.online === "true" ? "now" : ago(ms, now);
  }

  function lastSeen(a, online) {
    const ms = parseTime(a.lastSeen);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "last-seen");
    t.dateTime = new Date(ms).toISOString();
    t.title = (online ? "connected; last heard from " : "last seen ") + new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    t.dataset.online = String(online);
    lastSeenText(t, Date.now());
    return t;
  }

  function row(a) {
    const online = a.online === true;
    const tr = node("tr", online ? "is-online" : "is-offline");
    tr.dataset.agent = a.name;
    tr.dataset.online = String(online);

    const name = node("th");
    name.scope = "row";
    name.append(node("span", "name", a.name));
    if (a.description) name.append(node("span", "description", a.description));

    const status = node("td");
    const badge = node("span", "badge " + (online ? "online" : "offline"));
    badge.append(node("span", "dot"), document.createTextNode(online ? "online" : "offline"));
    status.append(badge);

    const build = node("td");
    if (a.build) {
      const code = node("code", "build", shortBuild(a.build));
      code.title = a.build;
      build.append(code);
    } else {
      build.append(none());
    }

    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const seen = node("td");
    seen.append(lastSeen(a, online));

    tr.append(
      name,
      status,
      cell(tags(a.capabilities, "capabilities")),
      cell(a.protocol ? node("span", "protocol", a.protocol) : none()),
      build,
      cell(tags(a.tools, "tools")),
      seen,
    );
    return tr;
  }

  function byName(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function render() {
    renderQueued = false;
    const names = Array.from(agents.keys()).sort(byName);
    ui.rows.replaceChildren(...names.map((n) => row(agents.get(n))));
    ui.empty.hidden = !loaded || names.length > 0;
    ui.tableWrap.hidden = names.length === 0;
  }

  function tick() {
    const now = Date.now();
    for (const t of ui.rows.querySelectorAll("time.last-seen")) lastSeenText(t, now);
  }

  // ---- the live loop ----

  function setConn(state, why) {
    ui.conn.dataset.state = state;
    ui.conn.textContent = state;
    ui.conn.title = why ? "last error: " + why : "";
    const stale = state === "reconnecting";
    ui.stale.hidden = !stale;
    ui.tableWrap.classList.toggle("stale", stale);
  }

  function sleep(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        if (wake === done) wake = null;
        resolve();
      }
      wake = done;
    });
  }

  function retryDelay(attempt) {
    const base = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * Math.pow(2, attempt));
    return base * (0.8 + 0.4 * Math.random());
  }

  // live keeps the table up to date until the generation changes: list,
  // watch, and after the stream ends, wait a little and do both again.
  async function live(gen, token, first) {
    let attempt = 0;
    while (gen === generation) {
      const ctl = new AbortController();
      controller = ctl;
      let why = "";
      try {
        if (first) {
          replaceAll(first.agents);
          first = null;
        } else {
          const list = await unary(token, "ListAgents", {}, ctl.signal);
          if (gen !== generation) return;
          replaceAll(list.agents);
        }
        await stream(token, "WatchAgents", {}, ctl.signal,
          () => {
            if (gen !== generation) return;
            attempt = 0;
            setConn("live");
          },
          (msg) => {
            if (gen !== generation || !msg) return;
            upsert(msg.agent);
            queueRender();
          });
      } catch (e) {
        if (gen !== generation) return;
        if (e.code === "unauthenticated" || e.code === "permission_denied") {
          signOut(refusal(e));
          return;
        }
        why = e.message;
      }
      if (gen !== generation) return;
      ctl.abort();
      setConn("reconnecting", why);
      await sleep(retryDelay(attempt));
      attempt++;
    }
  }

  function refusal(e) {
    switch (e.code) {
      case "unauthenticated":
        return "That token was not accepted. Check that it is an operator token for this board, and that it has not expired or been revoked.";
      case "permission_denied":
        return "That token is not allowed to see the agents (permission denied).";
      default:
        return "Could not sign in: " + e.message + ".";
    }
  }

  // ---- signing in and out ----

  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || "";
    } catch (e) {
      return "";
    }
  }

  function storeToken(token) {
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      // Without storage the token lasts as long as the page.
    }
  }

  function showError(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  function start(token, first) {
    generation++;
    storeToken(token);
    agents.clear();
    loaded = false;
    render();
    showError(ui.signInError, "");
    ui.token.value = "";
    ui.signIn.hidden = true;
    ui.agents.hidden = false;
    ui.session.hidden = false;
    setConn("connecting");
    live(generation, token, first);
  }

  function signOut(message) {
    generation++;
    if (controller) controller.abort();
    controller = null;
    if (wake) wake();
    storeToken("");
    agents.clear();
    loaded = false;
    render();
    ui.session.hidden = true;
    ui.agents.hidden = true;
    ui.signIn.hidden = false;
    showError(ui.signInError, message || "");
    ui.signInButton.disabled = false;
    ui.token.focus();
  }

  async function onSubmit(ev) {
    ev.preventDefault();
    const token = ui.token.value.trim().replace(/^Bearer\s+/i, "");
    if (token === "") {
      showError(ui.signInError, "Paste an operator token first.");
      ui.token.focus();
      return;
    }
    ui.signInButton.disabled = true;
    showError(ui.signInError, "");
    try {
      const list = await unary(token, "ListAgents", {});
      start(token, list);
      ui.agentsTitle.focus();
    } catch (e) {
      showError(ui.signInError, refusal(e));
      ui.token.focus();
    } finally {
      ui.signInButton.disabled = false;
    }
  }

  ui.connectHint.textContent = "go run ./cmd/agent --monitor " + location.origin + " --token TOKEN DIR";
  ui.form.addEventListener("submit", onSubmit);
  ui.signOut.addEventListener("click", () => signOut(""));
  window.addEventListener("online", () => {
    if (wake) wake();
  });
  setInterval(tick, TICK_MS);

  const saved = storedToken();
  if (saved) start(saved, null);
})();
