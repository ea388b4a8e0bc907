// The web board. The operator signs in with an operator token; the page then
// lists the agents and keeps the list live through the board's Connect API
// (ListAgents, then the WatchAgents server stream), reconnecting whenever the
// stream ends. Beside it, the approvals view polls the queue of pending
// approvals (ListApprovals; the API has no watch for them) and decides them
// (Decide, with the digest the board gave). No framework and no build step.
// Everything that comes from the board reaches the page through textContent
// or an attribute, never as HTML.
"use strict";

(function () {
  const TOKEN_KEY = "symphonix.operatorToken";
  const AGENTS = "/symphonix.board.v1.AgentService/";
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const TICK_MS = 5000;
  const MAX_MESSAGE_BYTES = 16 << 20;
  const POLL_MS = 1000; // how often the approvals are read
  const POLL_MAX_MS = 10000; // the longest wait between reads after failures
  const HISTORY_MAX = 100; // decided approvals shown
  const SHOW_DEPTH = 8; // nesting shown as tables before falling back to JSON

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
    views: $("views"),
    tabs: [$("tab-agents"), $("tab-approvals")],
    pendingCount: $("pending-count"),
    approvals: $("approvals"),
    approvalsTitle: $("approvals-title"),
    approvalsError: $("approvals-error"),
    approvalsStatus: $("approvals-status"),
    queue: $("queue"),
    queueLoading: $("queue-loading"),
    queueEmpty: $("queue-empty"),
    historyEmpty: $("history-empty"),
    historyWrap: $("history-wrap"),
    historyRows: $("history-rows"),
  };

  // The state of the page. generation counts sign-ins and sign-outs: a loop
  // started for an older generation stops at its next step.
  let generation = 0;
  let controller = null; // aborts the requests of the running loop
  let token = ""; // the operator token of this generation
  let view = "agents"; // the view shown: "agents" or "approvals"
  // A wait that can be ended early: its wake is set while one is running.
  const liveNap = { wake: null }; // before a reconnect of the agents stream
  const pollNap = { wake: null }; // between two reads of the approvals
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

  // post sends one request to path, "/package.Service/Method".
  async function post(token, path, contentType, body, signal) {
    try {
      return await fetch(path, {
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
  async function unary(token, path, request, signal) {
    const res = await post(token, path, "application/json", JSON.stringify(request), signal);
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
  async function stream(token, path, request, signal, onOpen, onMessage) {
    const res = await post(token, path, "application/connect+json", envelope(request), signal);
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

  // sleep waits ms, or until nap.wake() is called.
  function sleep(ms, nap) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        if (nap.wake === done) nap.wake = null;
        resolve();
      }
      nap.wake = done;
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
          const list = await unary(token, AGENTS + "ListAgents", {}, ctl.signal);
          if (gen !== generation) return;
          replaceAll(list.agents);
        }
        await stream(token, AGENTS + "WatchAgents", {}, ctl.signal,
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
      await sleep(retryDelay(attempt), liveNap);
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

  // ---- the approvals ----

  let pollController = null; // aborts the reads of the running poll
  let epoch = 0; // counts decisions made here: a read begun before one is stale
  let approvalsLoaded = false;
  let selected = ""; // the id of the selected approval
  let historyKey = ""; // what the history shows, to redraw only on a change
  let reasonIDs = 0;
  let rules = new Map(); // rule id -> Rule
  const cards = new Map(); // approval id -> card (see makeCard)

  function clearApprovals() {
    epoch++;
    approvalsLoaded = false;
    selected = "";
    historyKey = "";
    rules = new Map();
    cards.clear();
    ui.queue.replaceChildren();
    ui.historyRows.replaceChildren();
    ui.queueLoading.hidden = false;
    ui.queueEmpty.hidden = true;
    ui.historyEmpty.hidden = true;
    ui.historyWrap.hidden = true;
    ui.pendingCount.hidden = true;
    showError(ui.approvalsError, "");
    say("");
  }

  function viewOfHash() {
    return location.hash === "#approvals" ? "approvals" : "agents";
  }

  function showView(name) {
    view = name === "approvals" ? "approvals" : "agents";
    ui.agents.hidden = view !== "agents";
    ui.approvals.hidden = view !== "approvals";
    for (const tab of ui.tabs) {
      if (tab.dataset.view === view) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
  }

  // say shows how the last decision went, or "" for nothing.
  function say(message) {
    ui.approvalsStatus.textContent = message;
    ui.approvalsStatus.hidden = !message;
  }

  // poll reads the pending approvals, the history and the rules every
  // POLL_MS until the generation changes, waiting longer after failures.
  async function poll(gen, token) {
    let failures = 0;
    while (gen === generation) {
      const ctl = new AbortController();
      pollController = ctl;
      const began = epoch;
      try {
        const [pending, all, ruleList] = await Promise.all([
          unary(token, APPROVALS + "ListApprovals", { state: "pending" }, ctl.signal),
          unary(token, APPROVALS + "ListApprovals", {}, ctl.signal),
          unary(token, APPROVALS + "ListRules", {}, ctl.signal),
        ]);
        if (gen !== generation) return;
        failures = 0;
        showError(ui.approvalsError, "");
        if (began === epoch) applyApprovals(pending.approvals, all.approvals, ruleList.rules);
      } catch (e) {
        if (gen !== generation) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        showError(ui.approvalsError, "Could not read the approvals (" + e.code + "): " + e.message +
          ". Trying again; until then this list may be out of date.");
      }
      if (gen !== generation) return;
      ctl.abort();
      if (began !== epoch) continue; // a decision was made meanwhile: read again now
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), pollNap);
    }
  }

  // pollSoon reads the approvals again without waiting.
  function pollSoon() {
    epoch++;
    if (pollNap.wake) pollNap.wake();
  }

  function byAge(a, b) {
    const d = (parseTime(a.createdAt) || 0) - (parseTime(b.createdAt) || 0);
    return d !== 0 ? d : byName(a.id, b.id);
  }

  function validApproval(a) {
    return a && typeof a.id === "string" && a.id !== "";
  }

  // applyApprovals brings the queue (oldest first), the history (newest
  // first) and the tab's count up to date with what the board said. Cards
  // already shown are updated in place, so a reason being typed survives.
  function applyApprovals(pendingList, allList, ruleList) {
    rules = new Map();
    for (const r of ruleList || []) if (r && r.id) rules.set(r.id, r);
    const pending = (pendingList || []).filter(validApproval).sort(byAge);
    const ids = new Set(pending.map((a) => a.id));

    const order = Array.from(ui.queue.children).map((el) => el.dataset.approval);
    let refocus = false;
    let at = -1;
    for (const [id, card] of cards) {
      if (ids.has(id)) continue;
      if (card.el.contains(document.activeElement)) refocus = true;
      if (id === selected) at = order.indexOf(id);
      card.el.remove();
      cards.delete(id);
    }
    pending.forEach((a, i) => {
      let card = cards.get(a.id);
      if (!card) {
        card = makeCard(a);
        cards.set(a.id, card);
      }
      updateCard(card, a);
      const here = ui.queue.children[i];
      if (here !== card.el) ui.queue.insertBefore(card.el, here || null);
    });

    if (!cards.has(selected)) {
      selected = "";
      if (pending.length > 0) {
        const next = pending[Math.min(Math.max(at, 0), pending.length - 1)];
        select(next.id, refocus);
      }
    }
    approvalsLoaded = true;
    ui.queueLoading.hidden = true;
    ui.queueEmpty.hidden = pending.length > 0;
    ui.pendingCount.textContent = String(pending.length);
    ui.pendingCount.hidden = pending.length === 0;

    const decided = (allList || []).filter((a) => validApproval(a) && a.state !== "pending").slice(0, HISTORY_MAX);
    const key = decided.map((a) => a.id + ":" + a.state).join(",");
    if (key !== historyKey) {
      historyKey = key;
      ui.historyRows.replaceChildren(...decided.map(historyRow));
    }
    ui.historyEmpty.hidden = decided.length > 0;
    ui.historyWrap.hidden = decided.length === 0;
  }

  // makeCard draws an approval's parts that never change: who asked, the
  // question, what is shown and the account. updateCard fills in the rest.
  function makeCard(a) {
    const el = node("li", "card approval");
    el.dataset.approval = a.id;
    el.tabIndex = -1;
    el.setAttribute("aria-selected", "false");

    const head = node("div", "approval-head");
    const ask = node("h4", "ask", a.ask || "(no question given)");
    const meta = node("p", "meta");
    meta.append(
      labelled("agent", a.agent),
      labelled("node", a.node),
      labelled("run", a.run),
    );
    const age = relTime(a.createdAt, "asked ");
    age.classList.add("age");
    meta.append(age);
    head.append(ask, meta);

    const shown = node("div", "shown");
    shown.append(node("h5", "", "Shown"));
    const show = a.show && typeof a.show === "object" && !Array.isArray(a.show) ? a.show : {};
    if (Object.keys(show).length === 0) shown.append(node("p", "none", "Nothing is shown."));
    else shown.append(showTable(show, 0));

    el.append(head, shown);
    if (typeof a.account === "string" && a.account !== "") {
      const account = node("div", "account");
      account.append(node("h5", "", "The case for it"), node("p", "account-text", a.account));
      el.append(account);
    }

    const rule = node("div", "rule");
    const decideBox = node("div", "decide");
    const id = "reason-" + ++reasonIDs;
    const label = node("label", "", "Reason");
    label.htmlFor = id;
    const reason = node("textarea", "reason");
    reason.id = id;
    reason.rows = 2;
    reason.maxLength = 4096;
    reason.autocomplete = "off";
    const buttons = node("div", "buttons");
    const approve = node("button", "approve", "Approve");
    approve.type = "button";
    const reject = node("button", "reject", "Reject");
    reject.type = "button";
    buttons.append(approve, reject);
    decideBox.append(label, reason, buttons);
    const error = node("p", "error card-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    el.append(rule, decideBox, error);

    const card = { el, approval: a, rule, ruleKey: "", reason, approve, reject, error, busy: false };
    approve.addEventListener("click", () => decide(a.id, "yes"));
    reject.addEventListener("click", () => decide(a.id, "no"));
    el.addEventListener("focusin", () => select(a.id, false));
    el.addEventListener("click", () => select(a.id, false));
    return card;
  }

  function labelled(what, value) {
    const span = node("span", "field " + what);
    span.append(node("span", "field-name", what + " "), node("span", "field-value", value || "—"));
    return span;
  }

  // updateCard draws what may change while an approval waits: its rule
  // (and who may decide), the votes so far and when it expires.
  function updateCard(card, a) {
    card.approval = a;
    const r = a.ruleId ? rules.get(a.ruleId) || null : null;
    const key = JSON.stringify([a.ruleId || "", r, a.votes || [], a.expiresAt || ""]);
    if (key === card.ruleKey) return;
    card.ruleKey = key;
    card.rule.replaceChildren(...ruleParts(a, r));
    const governed = Boolean(a.ruleId && r);
    card.approve.disabled = !governed;
    card.reject.disabled = !governed;
    card.reason.required = Boolean(r && r.requireReason);
    card.reason.placeholder = r && r.requireReason ? "Required by the rule" : "Optional";
  }

  function ruleParts(a, r) {
    if (!a.ruleId) {
      return [node("p", "notice", "Not governed: no rule governed it when it was raised, so the agent's chat decides it, not this board.")];
    }
    const dl = node("dl", "facts");
    const fact = (term, ...children) => {
      const dd = node("dd");
      dd.append(...children);
      dl.append(node("dt", "", term), dd);
    };
    const id = node("code", "rule-id", a.ruleId);
    if (!r) {
      fact("Rule", id, document.createTextNode(" no longer exists: nobody can decide this one (an admin can cancel it)."));
      return [dl];
    }
    fact("Rule", id, ...(r.description ? [document.createTextNode(" — " + r.description)] : []));
    if (Array.isArray(r.people) && r.people.length > 0) {
      fact("Who decides", tags(r.people, "people who decide"));
    } else if (r.role === "admin") {
      fact("Who decides", node("span", "who", "admins"));
    } else {
      fact("Who decides", node("span", "who", (r.role || "approver") + " role: approvers and admins"));
    }
    const quorum = Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
    const votes = Array.isArray(a.votes) ? a.votes : [];
    fact("Quorum", node("span", "quorum", quorum + (quorum === 1 ? " yes" : " yeses") + " needed"));
    fact("Yes so far", votes.length === 0 ? node("span", "none", "none yet") : tags(votes, "yes so far"),
      document.createTextNode(" (" + votes.length + " of " + quorum + ")"));
    if (r.requireReason) fact("Reason", node("span", "required", "required"));
    if (a.expiresAt) fact("Expires", relTime(a.expiresAt, ""));
    return [dl];
  }

  // showTable draws a JSON object as a two-column table of names and
  // values; nested objects become nested tables, arrays numbered lists.
  function showTable(obj, depth) {
    const table = node("table", "show");
    const body = node("tbody");
    for (const k of Object.keys(obj)) {
      const tr = node("tr");
      const th = node("th", "show-key", k);
      th.scope = "row";
      const td = node("td", "show-value");
      td.append(valueNode(obj[k], depth + 1));
      tr.append(th, td);
      body.append(tr);
    }
    table.append(body);
    return table;
  }

  function valueNode(v, depth) {
    if (v === null || v === undefined) return node("span", "json-null", "null");
    if (typeof v === "string") return v === "" ? node("span", "none", "(empty)") : node("span", "json-string", v);
    if (typeof v === "number" || typeof v === "boolean") return node("span", "json-" + typeof v, String(v));
    if (depth > SHOW_DEPTH) return node("code", "json", JSON.stringify(v));
    if (Array.isArray(v)) {
      if (v.length === 0) return node("span", "none", "(empty list)");
      const ol = node("ol", "show-list");
      for (const item of v) {
        const li = node("li");
        li.append(valueNode(item, depth + 1));
        ol.append(li);
      }
      return ol;
    }
    if (typeof v === "object") {
      return Object.keys(v).length === 0 ? node("span", "none", "(empty)") : showTable(v, depth);
    }
    return node("span", "", String(v));
  }

  // relTime is a <time> that says how long ago (or how soon) s is, kept
  // up to date by tickApprovals.
  function relTime(s, prefix) {
    const ms = parseTime(s);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "rel");
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    t.dataset.prefix = prefix;
    relText(t, Date.now());
    return t;
  }

  function relText(el, now) {
    const ms = Number(el.dataset.ms);
    const text = ms > now + 500 ? "in " + ago(now, ms).replace(/ ago$/, "") : ago(ms, now);
    el.textContent = (el.dataset.prefix || "") + text;
  }

  function tickApprovals() {
    if (ui.approvals.hidden) return;
    const now = Date.now();
    for (const t of ui.approvals.querySelectorAll("time.rel")) relText(t, now);
  }

  function select(id, focus) {
    const card = cards.get(id);
    if (!card) return;
    if (selected !== id) {
      const old = cards.get(selected);
      if (old) {
        old.el.classList.remove("is-selected");
        old.el.setAttribute("aria-selected", "false");
      }
      selected = id;
      card.el.classList.add("is-selected");
      card.el.setAttribute("aria-selected", "true");
    }
    if (focus) {
      card.el.focus({ preventScroll: true });
      card.el.scrollIntoView({ block: "nearest" });
    }
  }

  // move selects the approval step places down (or up) the queue.
  function move(step) {
    const ids = Array.from(ui.queue.children).map((el) => el.dataset.approval);
    if (ids.length === 0) return;
    const i = ids.indexOf(selected);
    const next = i < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, i + step));
    select(ids[next], true);
  }

  function focusReason() {
    const card = cards.get(selected);
    if (card) card.reason.focus();
  }

  function typing(el) {
    return el instanceof HTMLElement && (el.isContentEditable ||
      el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
  }

  // onKey is the approvals view's keyboard: j/k or the arrows select, a
  // approves, r rejects, / or Enter go to the reason. Nothing happens while
  // typing, except Esc, which leaves the reason.
  function onKey(ev) {
    if (ui.approvals.hidden || !token || ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (typing(t)) {
      if (ev.key === "Escape" && t.classList.contains("reason")) {
        const card = cards.get(selected);
        if (card) card.el.focus({ preventScroll: true });
        else t.blur();
        ev.preventDefault();
      }
      return;
    }
    switch (ev.key) {
      case "j":
      case "ArrowDown":
        move(1);
        break;
      case "k":
      case "ArrowUp":
        move(-1);
        break;
      case "a":
        decide(selected, "yes");
        break;
      case "r":
        decide(selected, "no");
        break;
      case "/":
        focusReason();
        break;
      case "Enter":
        if (t instanceof HTMLElement && t.closest("button, a, summary")) return;
        focusReason();
        break;
      default:
        return;
    }
    ev.preventDefault();
  }

  // decideRefusal says why the board refused a decision, with its code.
  function decideRefusal(e) {
    switch (e.code) {
      case "failed_precondition":
        return "The board refused (failed_precondition): " + e.message +
          ". Nothing was decided; the queue is being read again.";
      case "permission_denied":
        return "You may not decide this one (permission_denied): " + e.message + ".";
      case "invalid_argument":
        return "The board refused (invalid_argument): " + e.message + ".";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message +
          ". The decision may or may not have been recorded; the queue will show.";
      default:
        return "The board refused (" + e.code + "): " + e.message + ".";
    }
  }

  function showCardError(card, message) {
    card.error.textContent = message;
    card.error.hidden = !message;
  }

  // decide says yes or no to the approval id, for the digest the board
  // gave with it, with the reason typed on its card.
  async function decide(id, said) {
    const card = cards.get(id);
    if (!card || card.busy) return;
    const a = card.approval;
    const gen = generation;
    if (!a.ruleId) {
      showCardError(card, "This approval is not governed: the agent's chat decides it, not this board.");
      return;
    }
    card.busy = true;
    card.approve.disabled = card.reject.disabled = true;
    card.reason.removeAttribute("aria-invalid");
    showCardError(card, "");
    say("");
    try {
      const res = await unary(token, APPROVALS + "Decide", {
        id: a.id, say: said, digest: a.digest, reason: card.reason.value.trim(),
      });
      if (gen !== generation) return;
      const after = (res && res.approval) || {};
      const what = a.ask ? "“" + a.ask + "”" : a.id;
      if (after.state === "pending") {
        updateCard(card, after);
        const r = rules.get(after.ruleId);
        const quorum = r && Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
        const votes = Array.isArray(after.votes) ? after.votes.length : 0;
        say("Your yes on " + what + " is counted: " + votes + " of " + quorum + ". It waits for more.");
      } else {
        say((after.state === "approved" ? "Approved " : after.state === "rejected" ? "Rejected " : "Decided ") + what + ".");
      }
      pollSoon();
    } catch (e) {
      if (gen !== generation) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      const message = decideRefusal(e);
      if (card.el.isConnected) {
        showCardError(card, message);
        if (e.code === "invalid_argument" && /^reason/.test(e.message)) {
          card.reason.setAttribute("aria-invalid", "true");
          card.reason.focus();
        }
      } else {
        say(message);
      }
      if (e.code === "failed_precondition") pollSoon();
    } finally {
      card.busy = false;
      card.approve.disabled = card.reject.disabled = !(card.approval.ruleId && rules.get(card.approval.ruleId));
    }
  }

  const outcomes = {
    approved: "approved", rejected: "rejected", cancelled: "cancelled",
    expired: "expired", superseded: "superseded",
  };

  // historyRow draws one approval that no longer waits.
  function historyRow(a) {
    const d = a.decision || {};
    const tr = node("tr", "decided");
    tr.dataset.approval = a.id;
    tr.dataset.state = a.state;
    const state = outcomes[a.state] || "unknown";
    const outcome = node("th");
    outcome.scope = "row";
    outcome.append(node("span", "badge outcome " + state, a.state || "unknown"));

    const when = node("td");
    const at = d.at || (a.state === "expired" ? a.expiresAt : "");
    when.append(at ? relTime(at, "") : none());

    let who;
    if (Array.isArray(d.who) && d.who.length > 0) who = tags(d.who, "who decided");
    else if (a.state === "expired") who = node("span", "none", "nobody: the time limit passed");
    else if (a.state === "superseded") who = node("span", "none", "nobody: the agent asked again about something else");
    else who = none();

    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const askCell = node("td", "ask-cell");
    askCell.append(node("span", "", a.ask || "—"));
    if (a.show && typeof a.show === "object" && Object.keys(a.show).length > 0) {
      const details = node("details");
      details.append(node("summary", "", "shown"), showTable(a.show, 0));
      if (a.account) details.append(node("p", "account-text", a.account));
      askCell.append(details);
    }
    tr.append(
      outcome,
      when,
      cell(node("span", "", a.agent || "—")),
      cell(node("span", "", a.node || "—")),
      askCell,
      cell(who),
      cell(d.reason ? node("span", "reason-text", d.reason) : none()),
    );
    return tr;
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

  function start(t, first) {
    generation++;
    token = t;
    storeToken(token);
    agents.clear();
    loaded = false;
    render();
    clearApprovals();
    showError(ui.signInError, "");
    ui.token.value = "";
    ui.signIn.hidden = true;
    ui.views.hidden = false;
    showView(viewOfHash());
    ui.session.hidden = false;
    setConn("connecting");
    live(generation, token, first);
    poll(generation, token);
  }

  function signOut(message) {
    generation++;
    token = "";
    if (controller) controller.abort();
    controller = null;
    if (pollController) pollController.abort();
    pollController = null;
    if (liveNap.wake) liveNap.wake();
    if (pollNap.wake) pollNap.wake();
    storeToken("");
    agents.clear();
    loaded = false;
    render();
    clearApprovals();
    ui.session.hidden = true;
    ui.views.hidden = true;
    ui.agents.hidden = true;
    ui.approvals.hidden = true;
    ui.signIn.hidden = false;
    showError(ui.signInError, message || "");
    ui.signInButton.disabled = false;
    ui.token.focus();
  }

  async function onSubmit(ev) {
    ev.preventDefault();
    const pasted = ui.token.value.trim().replace(/^Bearer\s+/i, "");
    if (pasted === "") {
      showError(ui.signInError, "Paste an operator token first.");
      ui.token.focus();
      return;
    }
    ui.signInButton.disabled = true;
    showError(ui.signInError, "");
    try {
      const list = await unary(pasted, AGENTS + "ListAgents", {});
      start(pasted, list);
      (view === "approvals" ? ui.approvalsTitle : ui.agentsTitle).focus();
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
    if (liveNap.wake) liveNap.wake();
    if (pollNap.wake) pollNap.wake();
  });
  for (const tab of ui.tabs) {
    tab.addEventListener("click", () => {
      showView(tab.dataset.view);
      history.replaceState(null, "", "#" + view);
    });
  }
  window.addEventListener("hashchange", () => {
    if (token) showView(viewOfHash());
  });
  document.addEventListener("keydown", onKey);
  setInterval(tick, TICK_MS);
  setInterval(tickApprovals, POLL_MS);

  const saved = storedToken();
  if (saved) start(saved, null);
})();
