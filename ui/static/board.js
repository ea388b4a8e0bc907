// The web board's shared part: the Connect calls (unary and server
// streaming, JSON), small helpers, who is signed in, and the views. Signing
// in and out, and the one-time setup page, are in session.js, loaded right
// after enums.js (the words for the API's enums), which comes right after
// this one; health.js (the words for an agent's health and pause) and
// runs.js (the words for runs, and their watch) follow them. Each view, or
// part of one, is a script of its own (agents.js, agent.js, runlist.js,
// fire.js, runtree.js, run.js, dashboard.js, alerts.js, approvals.js, rules.js, consents.js, tools.js, conversations.js,
// library.js, package.js, people.js, me.js, act.js, person.js, approval.js, notify.js,
// approvalsearch.js), loaded after those, that registers with board.part. No framework
// and no build step.
// Everything that comes from the board reaches the page through
// textContent or an attribute, never as HTML.
"use strict";

const board = (function () {
  const CSRF_HEADER = "X-CSRF-Token";
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const MAX_MESSAGE_BYTES = 16 << 20;
  // VIEWS are the views, each a section of the page with that id, shown by
  // the fragment: "#tools". One agent's page is "#agent/" and its name
  // (agentHref), and one run's "#run/", its agent's name, "/" and its id
  // (runHref), both under the Agents tab. "#approval/" and an approval's id
  // (approvalHref) is the approvals view with that approval picked out.
  // "#rules/" and a rule's id (ruleHref) is the rules view with that rule
  // open. "#consents" is the standing consents, its filters after a "?"
  // (consentsHref), as "#audit" is the audit log (auditHref).
  // One package of the library is "#package/" and its name (packageHref),
  // under the Library tab.
  // "#act/" and a token is the page of an action link (act.js): one
  // approval, sent to one person to decide; it has no tab.
  // "#dashboard?window=24h" is the dashboard over a window (dashboardHref).
  const VIEWS = ["agents", "dashboard", "agent", "run", "approvals", "rules", "consents", "tools", "conversations", "alerts", "library", "package", "people", "person", "audit", "me", "act"];
  const AGENT_HASH = "#agent/";
  const PACKAGE_HASH = "#package/";
  const RUN_HASH = "#run/";
  const APPROVAL_HASH = "#approval/";
  const RULE_HASH = "#rules/";
  const AUDIT_HASH = "#audit";
  const ACT_HASH = "#act/";
  const PERSON_HASH = "#person/";
  const CONSENTS_HASH = "#consents";
  const DASHBOARD_HASH = "#dashboard";
  const RANK = { viewer: 1, approver: 2, admin: 3 };
  // PAGE_SIZE is the page a view asks for when it reads a whole set (the
  // agents, the rules, the servers, the switches, the people): the most a
  // List gives at once.
  const PAGE_SIZE = 1000;
  // LIST_MAX bounds what a view reads of a whole set; past it the view says
  // that it shows the first LIST_MAX (docs/limits.md).
  const LIST_MAX = 10000;

  const $ = (id) => document.getElementById(id);

  // Tables drawn alike in several places are written once, here: each is
  // a box marked data-table (its body's id), data-caption, and
  // data-columns (the headings, by commas; the audit log's when none is
  // given: the audit view, an approval's trail, a person's page), with
  // data-table-id for the table's own id when it needs one.
  for (const box of document.querySelectorAll("[data-table]")) {
    const table = document.createElement("table");
    if (box.dataset.tableId) table.id = box.dataset.tableId;
    const caption = document.createElement("caption");
    caption.className = "visually-hidden";
    caption.textContent = box.dataset.caption || "";
    const head = document.createElement("thead");
    const tr = document.createElement("tr");
    const columns = box.dataset.columns ? box.dataset.columns.split(",") : ["Seq", "When", "Actor", "Kind", "Object", "Detail"];
    for (const name of columns) {
      const th = document.createElement("th");
      th.scope = "col";
      th.textContent = name;
      tr.append(th);
    }
    head.append(tr);
    const body = document.createElement("tbody");
    body.id = box.dataset.table;
    table.append(caption, head, body);
    box.append(table);
  }
  const ui = {
    who: $("who"),
    tabs: Array.from(document.querySelectorAll("#views .view-tab")),
  };

  // The state of the page. generation counts sign-ins and sign-outs: a loop
  // started for an older generation stops at its next step. session.js
  // changes it, through enter, leave and setMe.
  //
  // cred is how this generation's calls authenticate, or null when signed
  // out: {kind: "token", token} (an operator token, sent as a bearer) or
  // {kind: "session", csrf} (the session cookie, and the CSRF token sent
  // as a header). The views pass it back to unary and stream unread.
  let generation = 0;
  let cred = null;
  // What Me said for cred: {kind, name, role, user}, kind ("session" or
  // "operator") and role ("viewer", "approver", "admin") as words (enums.js),
  // user as the board sent it.
  let me = null;
  let view = "agents"; // the view shown, one of VIEWS
  // The views' parts, in the order their scripts registered (see part).
  const parts = [];

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

  function headers(c, contentType) {
    const h = { "Content-Type": contentType, "Connect-Protocol-Version": "1" };
    if (c && c.kind === "token") h["Authorization"] = "Bearer " + c.token;
    if (c && c.kind === "session") h[CSRF_HEADER] = c.csrf;
    return h;
  }

  // post sends one request to path, "/package.Service/Method", with the
  // credentials c. Only a session sends cookies: a token is judged alone.
  async function post(c, path, contentType, body, signal) {
    try {
      return await fetch(path, {
        method: "POST",
        headers: headers(c, contentType),
        body: body,
        signal: signal,
        cache: "no-store",
        credentials: c && c.kind === "session" ? "same-origin" : "omit",
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
  async function unary(c, path, request, signal) {
    const res = await post(c, path, "application/json", JSON.stringify(request), signal);
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
  async function stream(c, path, request, signal, onOpen, onMessage) {
    const res = await post(c, path, "application/connect+json", envelope(request), signal);
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

  // ---- pages ----

  // readPage reads one page of the List at path: request holds its
  // filters, field names the list in the answer, size is the page size
  // and token the nextPageToken of the page before ("" for the first). It
  // returns the page's items and the token of the next page, "" after the
  // last.
  async function readPage(c, path, request, field, size, token, signal) {
    const req = Object.assign({}, request, { pageSize: size });
    if (token) req.pageToken = token;
    const res = await unary(c, path, req, signal);
    const items = res && Array.isArray(res[field]) ? res[field] : [];
    const next = res && typeof res.nextPageToken === "string" ? res.nextPageToken : "";
    if (next !== "" && next === token) throw new RPCError("internal", "the board gave the same page twice");
    return { items, next };
  }

  // readAll reads the List at path page by page, PAGE_SIZE at a time, until
  // the last page or LIST_MAX items, whichever comes first. It returns the
  // items and whether there are more than it read (more: the view says it
  // shows the first LIST_MAX). A board whose pages hold nothing and never
  // end is read LIST_MAX pages deep at most.
  async function readAll(c, path, request, field, signal) {
    const items = [];
    let token = "";
    for (let pages = 1; ; pages++) {
      const page = await readPage(c, path, request, field, PAGE_SIZE, token, signal);
      for (const item of page.items) {
        if (items.length === LIST_MAX) return { items, more: true };
        items.push(item);
      }
      if (page.next === "") return { items, more: false };
      if (items.length === LIST_MAX || pages === LIST_MAX) return { items, more: true };
      token = page.next;
    }
  }

  // count is n things in words: "1 agent", "10,000 agents".
  function count(n, one, many) {
    return n.toLocaleString("en") + " " + (n === 1 ? one : many);
  }

  // ---- small helpers the views share ----

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


  // parseTime reads a protobuf JSON timestamp (RFC 3339, up to nine
  // fractional digits) as milliseconds since the epoch, or NaN.
  function parseTime(s) {
    if (typeof s !== "string") return NaN;
    const ms = Date.parse(s.replace(/(\.\d{3})\d+/, "$1"));
    return ms > 0 ? ms : NaN;
  }

  // parseDuration reads a protobuf JSON duration ("0.003s", "-1.5s") as
  // milliseconds, or NaN.
  function parseDuration(s) {
    if (typeof s !== "string") return NaN;
    const m = /^(-?\d+(?:\.\d+)?)s$/.exec(s);
    return m ? Number(m[1]) * 1000 : NaN;
  }

  // pad2 is n as two digits.
  function pad2(n) {
    return String(n).padStart(2, "0");
  }

  // localInput is the ISO time iso as a datetime-local input's value, in
  // the browser's time zone, or "" when it is not a time.
  function localInput(iso) {
    const d = new Date(iso);
    if (!iso || isNaN(d.getTime())) return "";
    return d.getFullYear() + "-" + pad2(d.getMonth() + 1) + "-" + pad2(d.getDate()) + "T" +
      pad2(d.getHours()) + ":" + pad2(d.getMinutes()) + ":" + pad2(d.getSeconds());
  }

  // isoOfInput is a datetime-local input's value as an ISO time in UTC,
  // or "" when empty; a value the browser cannot read is kept as typed, so
  // the board says what is wrong with it.
  function isoOfInput(v) {
    if (!v) return "";
    const d = new Date(v);
    return isNaN(d.getTime()) ? v : d.toISOString();
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


  function byName(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
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


  function showError(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  // ---- who is signed in ----

  // may says whether the one signed in has at least role. Before Me has
  // answered nothing is hidden: the board decides.
  function may(role) {
    if (!me) return true;
    return (RANK[me.role] || 0) >= (RANK[role] || 99);
  }

  // allowed says whether view may be shown to the one signed in: people
  // only to admins, "me" only to a signed-in person.
  function allowed(v) {
    if (v === "people" || v === "person") return Boolean(me) && may("admin");
    if (v === "audit") return Boolean(me) && may("admin"); // ListAudit is for admins
    if (v === "me") return Boolean(cred && cred.kind === "session");
    return VIEWS.includes(v);
  }

  // showWho draws who is signed in, and the tabs their role may use.
  function showWho() {
    if (me) {
      const name = (me.user && me.user.name) || me.name || "?";
      ui.who.textContent = "signed in as " + name + " (" + (me.role || "no role") + ")";
      ui.who.title = me.kind === "session" ? (me.user && me.user.email) || "" : "operator token";
      ui.who.dataset.role = me.role || "";
      ui.who.dataset.kind = me.kind || "";
    } else {
      ui.who.textContent = "";
      ui.who.title = "";
      delete ui.who.dataset.role;
      delete ui.who.dataset.kind;
    }
    for (const tab of ui.tabs) tab.hidden = !allowed(tab.dataset.view);
    if (cred && !allowed(view)) showView("agents");
    for (const p of parts) if (p.role) p.role(me);
  }

  // enter starts a new generation, signed in with c, of whom Me said m.
  function enter(c, m) {
    generation++;
    cred = c;
    me = m;
  }

  // leave starts a new generation, signed out, and returns the credentials
  // of the one before.
  function leave() {
    const was = cred;
    generation++;
    cred = null;
    me = null;
    return was;
  }

  // setMe records what Me said now, and redraws who is signed in.
  function setMe(m) {
    me = m;
    showWho();
  }

  function current(gen) {
    return gen === generation;
  }

  // ---- the views ----

  function viewOfHash() {
    if (agentOfHash() !== "") return "agent";
    if (packageOfHash() !== "") return "package";
    if (runOfHash() !== null) return "run";
    if (approvalOfHash() !== "") return "approvals";
    if (location.hash.startsWith("#approvals?")) return "approvals";
    if (ruleOfHash() !== "") return "rules";
    if (auditOfHash() !== null) return "audit";
    if (actOfHash() !== "") return "act";
    if (personOfHash() !== "") return "person";
    if (consentsOfHash() !== null) return "consents";
    if (dashboardOfHash() !== null) return "dashboard";
    const name = location.hash.slice(1);
    return VIEWS.includes(name) && !["agent", "run", "package", "act", "person"].includes(name) ? name : "agents";
  }

  // decoded is s URL-decoded, or "" when it is not valid.
  function decoded(s) {
    try {
      return decodeURIComponent(s);
    } catch (e) {
      return "";
    }
  }

  // runHref is the fragment of the page of the run id of the agent named
  // agent.
  function runHref(agent, id) {
    return RUN_HASH + encodeURIComponent(agent) + "/" + encodeURIComponent(id);
  }

  // runOfHash is the run whose page the fragment names, as {agent, id}, or
  // null when it names none.
  function runOfHash() {
    if (!location.hash.startsWith(RUN_HASH)) return null;
    const parts = location.hash.slice(RUN_HASH.length).split("/");
    if (parts.length !== 2) return null;
    const agent = decoded(parts[0]);
    const id = decoded(parts[1]);
    return agent !== "" && id !== "" ? { agent, id } : null;
  }

  // approvalHref is the fragment of the approvals view with the approval id
  // picked out.
  function approvalHref(id) {
    return APPROVAL_HASH + encodeURIComponent(id);
  }

  // approvalOfHash is the id of the approval the fragment picks out, or ""
  // when it names none.
  function approvalOfHash() {
    if (!location.hash.startsWith(APPROVAL_HASH)) return "";
    return decoded(location.hash.slice(APPROVAL_HASH.length));
  }

  // ruleHref is the fragment of the rules view with the rule id open.
  function ruleHref(id) {
    return RULE_HASH + encodeURIComponent(id);
  }

  // ruleOfHash is the id of the rule the fragment opens, or "" when it
  // names none.
  function ruleOfHash() {
    if (!location.hash.startsWith(RULE_HASH)) return "";
    return decoded(location.hash.slice(RULE_HASH.length));
  }

  // agentHref is the fragment of the page of the agent named name.
  function agentHref(name) {
    return AGENT_HASH + encodeURIComponent(name);
  }

  // agentOfHash is the name of the agent whose page the fragment names, or
  // "" when it names none.
  function agentOfHash() {
    if (!location.hash.startsWith(AGENT_HASH)) return "";
    return decoded(location.hash.slice(AGENT_HASH.length));
  }

  // filtersHref is the fragment base ("#audit") with filters, an object
  // of strings, after a "?"; empty ones are left out.
  function filtersHref(base, filters) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(filters || {})) if (v) q.set(k, v);
    const qs = q.toString();
    return base + (qs ? "?" + qs : "");
  }

  // filtersOfHash is the filters the fragment gives the view at base, as
  // an object of strings, or null when it does not name that view.
  function filtersOfHash(base) {
    const h = location.hash;
    if (h !== base && !h.startsWith(base + "?")) return null;
    const out = {};
    for (const [k, v] of new URLSearchParams(h.slice(base.length + 1))) out[k] = v;
    return out;
  }

  // actOfHash is the token of the action link the fragment holds, or ""
  // when it holds none.
  function actOfHash() {
    if (!location.hash.startsWith(ACT_HASH)) return "";
    return location.hash.slice(ACT_HASH.length);
  }

  // personHref is the fragment of the page of the person whose address
  // is email (admins).
  function personHref(email) {
    return PERSON_HASH + encodeURIComponent(email);
  }

  // personOfHash is the address of the person whose page the fragment
  // names, or "" when it names none.
  function personOfHash() {
    if (!location.hash.startsWith(PERSON_HASH)) return "";
    return decoded(location.hash.slice(PERSON_HASH.length));
  }

  // auditHref is the fragment of the audit view with filters (actor,
  // kind, object, since, until).
  function auditHref(filters) {
    return filtersHref(AUDIT_HASH, filters);
  }

  // auditOfHash is the filters the fragment gives the audit view, or null
  // when it does not name the audit view.
  function auditOfHash() {
    return filtersOfHash(AUDIT_HASH);
  }

  // consentsHref is the fragment of the consents view with filters (agent,
  // active).
  function consentsHref(filters) {
    return filtersHref(CONSENTS_HASH, filters);
  }

  // consentsOfHash is the filters the fragment gives the consents view, or
  // null when it does not name the consents view.
  function consentsOfHash() {
    return filtersOfHash(CONSENTS_HASH);
  }

  // dashboardHref is the fragment of the dashboard over the window w
  // ("1h", "24h", "7d", "30d").
  function dashboardHref(w) {
    return DASHBOARD_HASH + "?" + new URLSearchParams({ window: w }).toString();
  }

  // dashboardOfHash is the window the fragment gives the dashboard ("" when
  // it gives none), or null when it does not name the dashboard.
  function dashboardOfHash() {
    const h = location.hash;
    if (h !== DASHBOARD_HASH && !h.startsWith(DASHBOARD_HASH + "?")) return null;
    return new URLSearchParams(h.slice(DASHBOARD_HASH.length + 1)).get("window") || "";
  }

  // packageHref is the fragment of the library's page of the package
  // named name ("scope/name").
  function packageHref(name) {
    return PACKAGE_HASH + encodeURIComponent(name);
  }

  // packageOfHash is the name of the package whose page the fragment names,
  // or "" when it names none.
  function packageOfHash() {
    if (!location.hash.startsWith(PACKAGE_HASH)) return "";
    return decoded(location.hash.slice(PACKAGE_HASH.length));
  }

  function showView(name) {
    view = VIEWS.includes(name) && allowed(name) ? name : "agents";
    for (const v of VIEWS) $(v).hidden = v !== view;
    // An agent's and a run's page are under Agents, a package's under Library.
    // An action link's page is under Approvals, a person's under People.
    const tabbed = view === "agent" || view === "run" ? "agents" : view === "package" ? "library" : view === "act" ? "approvals" : view === "person" ? "people" : view;
    for (const tab of ui.tabs) {
      if (tab.dataset.view === tabbed) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
    for (const p of parts) if (p.shown) p.shown(view);
  }

  // hideViews hides every view (signed out, or on the setup page).
  function hideViews() {
    for (const v of VIEWS) $(v).hidden = true;
  }

  // part registers a view's part of the page. It has
  //   reset():        forget everything shown (before a sign-in and after a sign-out)
  //   run(gen, cred): start its loops for the generation gen, calling with
  //                   cred
  //   stop():         abort its requests and end its waits
  //   wake():         end its waits early (the network came back)
  //   shown(view):    optional; the view shown changed
  //   role(me):       optional; who is signed in, or their role, changed
  function part(p) {
    parts.push(p);
  }

  window.addEventListener("online", () => {
    for (const p of parts) p.wake();
  });
  for (const tab of ui.tabs) {
    tab.addEventListener("click", () => {
      showView(tab.dataset.view);
      // The audit, consents and agents views keep their filters in the
      // address, the dashboard its window.
      const kept = (view === "audit" && auditOfHash() !== null) || (view === "consents" && consentsOfHash() !== null) ||
        (view === "agents" && location.hash.startsWith("#agents?")) ||
        (view === "approvals" && location.hash.startsWith("#approvals?")) || (view === "dashboard" && dashboardOfHash() !== null);
      history.replaceState(null, "", kept ? location.hash : "#" + view);
    });
  }
  window.addEventListener("hashchange", () => {
    if (cred) showView(viewOfHash());
  });

  return {
    $, RPCError, unary, stream, readPage, readAll, count, node, none, tags,
    parseTime, parseDuration, localInput, isoOfInput, ago, byName, sleep, retryDelay, showError, part, may, agentHref, agentOfHash,
    runHref, runOfHash, approvalHref, approvalOfHash, ruleHref, ruleOfHash, packageHref, packageOfHash,
    auditHref, auditOfHash, consentsHref, consentsOfHash, actOfHash, personHref, personOfHash, dashboardHref, dashboardOfHash,
    PAGE_SIZE, LIST_MAX,
    // refusal, signOut and refreshMe are added by session.js.
    //
    // generation counts sign-ins and sign-outs; current says whether gen
    // is the generation of the page now.
    generation: () => generation,
    current,
    // token is how the page is signed in (pass it to unary and stream),
    // or null when it is not.
    token: () => cred,
    // me is what Me said of who is signed in, or null.
    me: () => me,
    // For session.js only: the header of the CSRF token, and how it
    // changes who is signed in and shows the views.
    CSRF_HEADER, enter, leave, setMe, showWho, showView, viewOfHash,
    view: () => view, hideViews,
    eachPart: (f) => parts.forEach(f),
  };
})();
