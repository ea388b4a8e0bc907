// The web board's shared part: the Connect calls (unary and server
// streaming, JSON), signing in and out, the one-time setup page, and the
// views. Each view is a script of its own (agents.js, approvals.js,
// tools.js, conversations.js, people.js, me.js), loaded after this one, that registers with
// board.part. No framework and no build step. Everything that comes from
// the board reaches the page through textContent or an attribute, never as
// HTML.
//
// Two ways to sign in (docs/people.md):
//   - a person's email and password (POST /auth/signin): the board sets an
//     HttpOnly session cookie the script never sees, and returns a CSRF
//     token, also kept in the readable cookie symphonix_csrf for a reload.
//     Every call then goes same-origin with the cookie and the header
//     X-CSRF-Token. Nothing of the session is put in storage.
//   - an operator token, pasted (for scripts and operators): sent as a
//     bearer token, kept in sessionStorage for this tab only.
// Either way the page asks Me who is signed in, and with what role, and
// hides what the role cannot do. The board enforces it all the same.
"use strict";

const board = (function () {
  const TOKEN_KEY = "symphonix.operatorToken";
  const CSRF_COOKIE = "symphonix_csrf";
  const CSRF_HEADER = "X-CSRF-Token";
  const USERS = "/symphonix.board.v1.UserService/";
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const MAX_MESSAGE_BYTES = 16 << 20;
  const ME_POLL_MS = 10000; // how often Me is asked again while signed in
  const VIEWS = ["agents", "approvals", "tools", "conversations", "people", "me"];
  const RANK = { viewer: 1, approver: 2, admin: 3 };

  const $ = (id) => document.getElementById(id);
  const ui = {
    session: $("session"),
    who: $("who"),
    signOut: $("sign-out"),
    signIn: $("sign-in"),
    passwordForm: $("password-form"),
    email: $("email"),
    password: $("password"),
    passwordButton: $("password-button"),
    signInNote: $("sign-in-note"),
    form: $("sign-in-form"),
    token: $("token"),
    signInButton: $("sign-in-button"),
    signInError: $("sign-in-error"),
    setup: $("setup"),
    setupForm: $("setup-form"),
    setupEmail: $("setup-email"),
    setupName: $("setup-name"),
    setupPassword: $("setup-password"),
    setupAgain: $("setup-again"),
    setupButton: $("setup-button"),
    setupError: $("setup-error"),
    views: $("views"),
    tabs: Array.from(document.querySelectorAll("#views .view-tab")),
  };

  // The state of the page. generation counts sign-ins and sign-outs: a loop
  // started for an older generation stops at its next step.
  //
  // cred is how this generation's calls authenticate, or null when signed
  // out: {kind: "token", token} (an operator token, sent as a bearer) or
  // {kind: "session", csrf} (the session cookie, and the CSRF token sent
  // as a header). The views pass it back to unary and stream unread.
  let generation = 0;
  let cred = null;
  let me = null; // what Me said for cred: {kind, name, role, user}
  let setupToken = ""; // the token of a setup link this page was opened with
  let meNap = null; // the wait of watchMe
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

  // refusal says why the board would not let the page in (or on), for the
  // way it is signed in now.
  function refusal(e) {
    if (cred && cred.kind === "session") {
      switch (e.code) {
        case "unauthenticated":
          return "Your session has ended: you signed out elsewhere, it expired, or your account was disabled. Sign in again.";
        case "permission_denied":
          return "The board refused this page's request (permission_denied): " + e.message + ". Sign in again.";
        default:
          return "Could not sign in: " + e.message + ".";
      }
    }
    switch (e.code) {
      case "unauthenticated":
        return "That token was not accepted. Check that it is an operator token for this board, and that it has not expired or been revoked.";
      case "permission_denied":
        return "That token is not allowed to see the agents (permission denied).";
      default:
        return "Could not sign in: " + e.message + ".";
    }
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
    if (v === "people") return Boolean(me) && may("admin");
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

  // askMe asks the board who c is.
  async function askMe(c, signal) {
    const res = await unary(c, USERS + "Me", {}, signal);
    return {
      kind: typeof res.kind === "string" ? res.kind : "",
      name: typeof res.name === "string" ? res.name : "",
      role: typeof res.role === "string" ? res.role : "",
      user: res.user && typeof res.user === "object" ? res.user : null,
    };
  }

  // watchMe asks Me again every ME_POLL_MS, so a new role shows and an
  // ended session signs the page out, even in a view that reads nothing.
  async function watchMe(gen) {
    const nap = { wake: null };
    meNap = nap;
    while (current(gen)) {
      await sleep(ME_POLL_MS, nap);
      if (!current(gen)) return;
      try {
        const got = await askMe(cred);
        if (!current(gen)) return;
        if (JSON.stringify(got) !== JSON.stringify(me)) {
          me = got;
          showWho();
        }
      } catch (e) {
        if (!current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
      }
    }
  }

  // refreshMe asks Me now (after the person changed something of theirs).
  async function refreshMe() {
    const gen = generation;
    try {
      const got = await askMe(cred);
      if (!current(gen)) return;
      me = got;
      showWho();
    } catch (e) {
      if (current(gen) && e.code === "unauthenticated") signOut(refusal(e));
    }
  }

  function current(gen) {
    return gen === generation;
  }

  // ---- the views ----

  function viewOfHash() {
    const name = location.hash.slice(1);
    return VIEWS.includes(name) ? name : "agents";
  }

  function showView(name) {
    view = VIEWS.includes(name) && allowed(name) ? name : "agents";
    for (const v of VIEWS) $(v).hidden = v !== view;
    for (const tab of ui.tabs) {
      if (tab.dataset.view === view) tab.setAttribute("aria-current", "page");
      else tab.removeAttribute("aria-current");
    }
    for (const p of parts) if (p.shown) p.shown(view);
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

  // csrfCookie is the CSRF token the board set at sign-in, or "".
  function csrfCookie() {
    for (const part of document.cookie.split(";")) {
      const i = part.indexOf("=");
      if (i > 0 && part.slice(0, i).trim() === CSRF_COOKIE) {
        try {
          return decodeURIComponent(part.slice(i + 1).trim());
        } catch (e) {
          return "";
        }
      }
    }
    return "";
  }

  function forgetCSRFCookie() {
    document.cookie = CSRF_COOKIE + "=; Max-Age=0; Path=/; SameSite=Strict";
  }

  // start shows the views for the credentials c, of whom Me said m.
  function start(c, m, first) {
    generation++;
    cred = c;
    me = m;
    storeToken(c.kind === "token" ? c.token : "");
    for (const p of parts) p.reset();
    showError(ui.signInError, "");
    say(ui.signInNote, "");
    ui.token.value = "";
    ui.password.value = "";
    ui.signIn.hidden = true;
    ui.setup.hidden = true;
    ui.views.hidden = false;
    ui.session.hidden = false;
    showWho();
    showView(viewOfHash());
    for (const p of parts) p.run(generation, cred, first);
    watchMe(generation);
  }

  // signOut forgets who was signed in here and shows the sign-in, with
  // message. It does not tell the board: see signOutClicked.
  function signOut(message) {
    const was = cred;
    generation++;
    cred = null;
    me = null;
    if (meNap && meNap.wake) meNap.wake();
    for (const p of parts) p.stop();
    storeToken("");
    if (was && was.kind === "session") forgetCSRFCookie();
    for (const p of parts) p.reset();
    showWho();
    ui.session.hidden = true;
    ui.views.hidden = true;
    for (const v of VIEWS) $(v).hidden = true;
    ui.setup.hidden = true;
    ui.signIn.hidden = false;
    showError(ui.signInError, message || "");
    ui.signInButton.disabled = false;
    ui.passwordButton.disabled = false;
    (ui.email.value ? ui.password : ui.email).focus();
  }

  // signOutClicked ends a session on the board (which clears its cookies),
  // then here. A token has nothing to end on the board.
  async function signOutClicked() {
    const was = cred;
    ui.signOut.disabled = true;
    try {
      if (was && was.kind === "session") {
        await fetch("/auth/signout", {
          method: "POST",
          headers: { [CSRF_HEADER]: was.csrf },
          credentials: "same-origin",
          cache: "no-store",
        }).catch(() => {});
      }
    } finally {
      ui.signOut.disabled = false;
    }
    if (cred === was) signOut("");
  }

  function say(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  // onToken signs in with a pasted operator token.
  async function onToken(ev) {
    ev.preventDefault();
    const pasted = ui.token.value.trim().replace(/^Bearer\s+/i, "");
    if (pasted === "") {
      showError(ui.signInError, "Paste an operator token first.");
      ui.token.focus();
      return;
    }
    ui.signInButton.disabled = true;
    showError(ui.signInError, "");
    const c = { kind: "token", token: pasted };
    try {
      const m = await askMe(c);
      start(c, m, null);
      $(view + "-title").focus();
    } catch (e) {
      showError(ui.signInError, tokenRefusal(e));
      ui.token.focus();
    } finally {
      ui.signInButton.disabled = false;
    }
  }

  function tokenRefusal(e) {
    switch (e.code) {
      case "unauthenticated":
        return "That token was not accepted. Check that it is an operator token for this board, and that it has not expired or been revoked.";
      case "permission_denied":
        return "That token is not allowed on this board (permission denied).";
      default:
        return "Could not sign in: " + e.message + ".";
    }
  }

  // authPost posts body as JSON to an /auth endpoint and returns the
  // status and the JSON answer ({} when there is none).
  async function authPost(path, body) {
    let res;
    try {
      res = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "same-origin",
        cache: "no-store",
      });
    } catch (e) {
      throw new RPCError("unavailable", "the board cannot be reached");
    }
    let out = {};
    try {
      out = await res.json();
    } catch (e) {
      out = {};
    }
    return { status: res.status, body: out || {}, retryAfter: res.headers.get("Retry-After") };
  }

  // onPassword signs in with an email and a password.
  async function onPassword(ev) {
    ev.preventDefault();
    const email = ui.email.value.trim();
    const password = ui.password.value;
    if (email === "" || password === "") {
      showError(ui.signInError, "Enter your email and your password.");
      (email === "" ? ui.email : ui.password).focus();
      return;
    }
    ui.passwordButton.disabled = true;
    showError(ui.signInError, "");
    say(ui.signInNote, "");
    try {
      const res = await authPost("/auth/signin", { email, password });
      if (res.status === 200 && typeof res.body.csrf_token === "string" && res.body.csrf_token !== "") {
        const c = { kind: "session", csrf: res.body.csrf_token };
        const m = await askMe(c);
        start(c, m, null);
        $(view + "-title").focus();
        return;
      }
      ui.password.value = "";
      if (res.status === 401) {
        showError(ui.signInError, "Wrong email or password.");
      } else if (res.status === 429) {
        const wait = parseInt(res.retryAfter || "", 10);
        showError(ui.signInError, "Too many failed sign-ins" +
          (wait > 0 ? ": try again in " + (wait >= 120 ? Math.ceil(wait / 60) + " min" : wait + " s") : ": try again later") + ".");
      } else {
        showError(ui.signInError, "Could not sign in: " + (res.body.error || "HTTP " + res.status) + ".");
      }
      ui.password.focus();
    } catch (e) {
      showError(ui.signInError, "Could not sign in: " + e.message + ".");
    } finally {
      ui.passwordButton.disabled = false;
    }
  }

  // ---- the one-time setup link ----

  // setupTokenOfURL reads a setup link: /setup#token=... as the board
  // gives it, or /#setup=... on a board that does not serve /setup.
  function setupTokenOfURL() {
    const params = new URLSearchParams(location.hash.slice(1));
    if (/\/setup\/?$/.test(location.pathname) && params.get("token")) return params.get("token");
    return params.get("setup") || "";
  }

  function showSetup() {
    ui.signIn.hidden = true;
    ui.views.hidden = true;
    ui.session.hidden = true;
    for (const v of VIEWS) $(v).hidden = true;
    ui.setup.hidden = false;
    ui.setupName.focus();
  }

  async function onSetup(ev) {
    ev.preventDefault();
    const name = ui.setupName.value.trim();
    const email = ui.setupEmail.value.trim();
    const password = ui.setupPassword.value;
    if (Array.from(password).length < 12) {
      showError(ui.setupError, "The password must be at least 12 characters long.");
      ui.setupPassword.focus();
      return;
    }
    if (password !== ui.setupAgain.value) {
      showError(ui.setupError, "The two passwords are not the same.");
      ui.setupAgain.value = "";
      ui.setupAgain.focus();
      return;
    }
    ui.setupButton.disabled = true;
    showError(ui.setupError, "");
    try {
      const res = await authPost("/auth/setup", { token: setupToken, email, name, password });
      if (res.status !== 200) {
        showError(ui.setupError, "The board refused: " + (res.body.error || "HTTP " + res.status) + ".");
        return;
      }
      setupToken = "";
      ui.setupPassword.value = ui.setupAgain.value = "";
      history.replaceState(null, "", "/");
      ui.setup.hidden = true;
      ui.signIn.hidden = false;
      ui.email.value = typeof res.body.email === "string" ? res.body.email : email;
      say(ui.signInNote, "Your password is set" + (ui.email.value ? " for " + ui.email.value : "") + ". Sign in with it.");
      ui.password.focus();
    } catch (e) {
      showError(ui.setupError, "Could not set the password: " + e.message + ".");
    } finally {
      ui.setupButton.disabled = false;
    }
  }

  // resume signs in again after a load: with the token this tab kept, or
  // with the session whose CSRF token is in its cookie.
  async function resume() {
    const saved = storedToken();
    const csrf = csrfCookie();
    const c = saved ? { kind: "token", token: saved } : csrf ? { kind: "session", csrf } : null;
    if (!c) {
      ui.email.focus();
      return;
    }
    const gen = generation;
    try {
      const m = await askMe(c);
      if (current(gen) && !cred) start(c, m, null);
    } catch (e) {
      if (!current(gen) || cred) return;
      if (c.kind === "session") {
        forgetCSRFCookie();
        if (e.code === "unauthenticated") {
          say(ui.signInNote, "Your session has ended. Sign in again.");
          return;
        }
      } else if (e.code === "unauthenticated" || e.code === "permission_denied") {
        storeToken("");
        showError(ui.signInError, tokenRefusal(e));
        return;
      }
      showError(ui.signInError, "Could not reach the board (" + e.code + "): " + e.message + ". Reload the page to try again.");
    }
  }

  // part registers a view's part of the page. It has
  //   reset():               forget everything shown (before a sign-in and after a sign-out)
  //   run(gen, cred, first): start its loops for the generation gen, calling
  //                          with cred; first is a ListAgents answer, or null
  //   stop():                abort its requests and end its waits
  //   wake():                end its waits early (the network came back)
  //   shown(view):           optional; the view shown changed
  //   role(me):              optional; who is signed in, or their role, changed
  function part(p) {
    parts.push(p);
  }

  ui.form.addEventListener("submit", onToken);
  ui.passwordForm.addEventListener("submit", onPassword);
  ui.setupForm.addEventListener("submit", onSetup);
  ui.signOut.addEventListener("click", signOutClicked);
  window.addEventListener("online", () => {
    for (const p of parts) p.wake();
  });
  for (const tab of ui.tabs) {
    tab.addEventListener("click", () => {
      showView(tab.dataset.view);
      history.replaceState(null, "", "#" + view);
    });
  }
  window.addEventListener("hashchange", () => {
    if (cred) showView(viewOfHash());
  });
  // The views' scripts, deferred after this one, have all run by now.
  document.addEventListener("DOMContentLoaded", () => {
    setupToken = setupTokenOfURL();
    if (setupToken) {
      showSetup();
      return;
    }
    resume();
  });

  return {
    $, RPCError, unary, stream, node, none, tags, parseTime, ago, byName,
    sleep, retryDelay, showError, refusal, signOut, part, may, refreshMe,
    // generation counts sign-ins and sign-outs; current says whether gen
    // is the generation of the page now.
    generation: () => generation,
    current,
    // token is how the page is signed in (pass it to unary and stream),
    // or null when it is not.
    token: () => cred,
    // me is what Me said of who is signed in, or null.
    me: () => me,
  };
})();
