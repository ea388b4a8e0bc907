// The web board's signing in and out: the sign-in page (a person's email
// and password, or an operator token), signing out, the one-time setup
// page, keeping the session across a reload, and asking Me who is signed
// in. Loaded after board.js and enums.js, and before the views' scripts,
// it adds refusal, signOut and refreshMe to board, which the views use.
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

(function () {
  const TOKEN_KEY = "symphonix.operatorToken";
  const CSRF_COOKIE = "symphonix_csrf";
  const USERS = "/symphonix.board.v1.UserService/";
  const ME_POLL_MS = 10000; // how often Me is asked again while signed in

  const { $, CSRF_HEADER, RPCError, unary, sleep, showError, current } = board;
  const ui = {
    session: $("session"),
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
  };

  let setupToken = ""; // the token of a setup link this page was opened with
  let meNap = null; // the wait of watchMe

  // refusal says why the board would not let the page in (or on), for the
  // way it is signed in now.
  function refusal(e) {
    const cred = board.token();
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

  // ---- asking Me who is signed in ----

  // askMe asks the board who c is; the kind and the role are kept as words.
  async function askMe(c, signal) {
    const res = await unary(c, USERS + "Me", {}, signal);
    return {
      kind: enums.callerKind.word(res.kind),
      name: typeof res.name === "string" ? res.name : "",
      role: enums.role.word(res.role),
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
        const got = await askMe(board.token());
        if (!current(gen)) return;
        if (JSON.stringify(got) !== JSON.stringify(board.me())) board.setMe(got);
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
    const gen = board.generation();
    try {
      const got = await askMe(board.token());
      if (!current(gen)) return;
      board.setMe(got);
    } catch (e) {
      if (current(gen) && e.code === "unauthenticated") signOut(refusal(e));
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
  function start(c, m) {
    board.enter(c, m);
    storeToken(c.kind === "token" ? c.token : "");
    board.eachPart((p) => p.reset());
    showError(ui.signInError, "");
    say(ui.signInNote, "");
    ui.token.value = "";
    ui.password.value = "";
    ui.signIn.hidden = true;
    ui.setup.hidden = true;
    ui.views.hidden = false;
    ui.session.hidden = false;
    board.showWho();
    board.showView(board.viewOfHash());
    board.eachPart((p) => p.run(board.generation(), board.token()));
    watchMe(board.generation());
  }

  // signOut forgets who was signed in here and shows the sign-in, with
  // message. It does not tell the board: see signOutClicked.
  function signOut(message) {
    const was = board.leave();
    if (meNap && meNap.wake) meNap.wake();
    board.eachPart((p) => p.stop());
    storeToken("");
    if (was && was.kind === "session") forgetCSRFCookie();
    board.eachPart((p) => p.reset());
    board.showWho();
    ui.session.hidden = true;
    ui.views.hidden = true;
    board.hideViews();
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
    const was = board.token();
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
    if (board.token() === was) signOut("");
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
      start(c, m);
      $(board.view() + "-title").focus();
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
      if (res.status === 200 && typeof res.body.csrfToken === "string" && res.body.csrfToken !== "") {
        const c = { kind: "session", csrf: res.body.csrfToken };
        const m = await askMe(c);
        start(c, m);
        $(board.view() + "-title").focus();
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
    board.hideViews();
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
    const gen = board.generation();
    try {
      const m = await askMe(c);
      if (current(gen) && !board.token()) start(c, m);
    } catch (e) {
      if (!current(gen) || board.token()) return;
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

  ui.form.addEventListener("submit", onToken);
  ui.passwordForm.addEventListener("submit", onPassword);
  ui.setupForm.addEventListener("submit", onSetup);
  ui.signOut.addEventListener("click", signOutClicked);
  // The views' scripts, deferred after this one, have all run by now.
  document.addEventListener("DOMContentLoaded", () => {
    setupToken = setupTokenOfURL();
    if (setupToken) {
      showSetup();
      return;
    }
    resume();
  });

  Object.assign(board, { refusal, signOut, refreshMe });
})();
