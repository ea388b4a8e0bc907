// The web board's shared part: the Connect calls (unary and server
// streaming, JSON), signing in and out with an operator token, and the
// views. Each view is a script of its own (agents.js, approvals.js,
// tools.js), loaded after this one, that registers with board.part. No
// framework and no build step. Everything that comes from the board
// reaches the page through textContent or an attribute, never as HTML.
"use strict";

const board = (function () {
  const TOKEN_KEY = "symphonix.operatorToken";
  const AGENTS = "/symphonix.board.v1.AgentService/";
  const RETRY_MIN_MS = 1000;
  const RETRY_MAX_MS = 15000;
  const MAX_MESSAGE_BYTES = 16 << 20;
  const VIEWS = ["agents", "approvals", "tools"];

  const $ = (id) => document.getElementById(id);
  const ui = {
    session: $("session"),
    signOut: $("sign-out"),
    signIn: $("sign-in"),
    form: $("sign-in-form"),
    token: $("token"),
    signInButton: $("sign-in-button"),
    signInError: $("sign-in-error"),
    views: $("views"),
    tabs: Array.from(document.querySelectorAll("#views .view-tab")),
  };

  // The state of the page. generation counts sign-ins and sign-outs: a loop
  // started for an older generation stops at its next step.
  let generation = 0;
  let token = ""; // the operator token of this generation
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

  // ---- the views ----

  function viewOfHash() {
    const name = location.hash.slice(1);
    return VIEWS.includes(name) ? name : "agents";
  }

  function showView(name) {
    view = VIEWS.includes(name) ? name : "agents";
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

  function start(t, first) {
    generation++;
    token = t;
    storeToken(token);
    for (const p of parts) p.reset();
    showError(ui.signInError, "");
    ui.token.value = "";
    ui.signIn.hidden = true;
    ui.views.hidden = false;
    showView(viewOfHash());
    ui.session.hidden = false;
    for (const p of parts) p.run(generation, token, first);
  }

  function signOut(message) {
    generation++;
    token = "";
    for (const p of parts) p.stop();
    storeToken("");
    for (const p of parts) p.reset();
    ui.session.hidden = true;
    ui.views.hidden = true;
    for (const v of VIEWS) $(v).hidden = true;
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
      $(view + "-title").focus();
    } catch (e) {
      showError(ui.signInError, refusal(e));
      ui.token.focus();
    } finally {
      ui.signInButton.disabled = false;
    }
  }

  // part registers a view's part of the page. It has
  //   reset():               forget everything shown (before a sign-in and after a sign-out)
  //   run(gen, token, first): start its loops for the generation gen; first is
  //                          the ListAgents answer the sign-in got, or null
  //   stop():                abort its requests and end its waits
  //   wake():                end its waits early (the network came back)
  //   shown(view):           optional; the view shown changed
  function part(p) {
    parts.push(p);
  }

  ui.form.addEventListener("submit", onSubmit);
  ui.signOut.addEventListener("click", () => signOut(""));
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
    if (token) showView(viewOfHash());
  });
  // The views' scripts, deferred after this one, have all run by now.
  document.addEventListener("DOMContentLoaded", () => {
    const saved = storedToken();
    if (saved) start(saved, null);
  });

  return {
    $, RPCError, unary, stream, node, none, tags, parseTime, ago, byName,
    sleep, retryDelay, showError, refusal, signOut, part,
    // generation counts sign-ins and sign-outs; current says whether gen
    // is the generation of the page now.
    generation: () => generation,
    current: (gen) => gen === generation,
    // token is the operator token signed in with, or "".
    token: () => token,
  };
})();
