// The "you" view, for a person signed in with their password (not an
// operator token: a token is not a person): who they are, entering a
// pairing code an agent showed them (EnterPairingCode), and setting or
// removing their verify secret (SetVerifySecret). docs/pairing.md.
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal } = board;
  const USERS = "/symphonix.board.v1.UserService/";
  const MIN_SECRET = 12; // characters, as the board counts them

  const ui = {
    me: $("me"),
    facts: $("me-facts"),
    pairForm: $("pair-form"),
    pairCode: $("pair-code"),
    pairButton: $("pair-button"),
    pairResult: $("pair-result"),
    pairError: $("pair-error"),
    verifyState: $("verify-state"),
    verifyForm: $("verify-form"),
    verifySecret: $("verify-secret"),
    verifyAgain: $("verify-again"),
    verifyButton: $("verify-button"),
    verifyRemove: $("verify-remove"),
    verifyStatus: $("verify-status"),
    verifyError: $("verify-error"),
  };

  let door = ""; // the word for the board's door, as GetIdentify said, or "" before it did

  function say(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  function reset() {
    door = "";
    ui.facts.replaceChildren();
    ui.pairCode.value = "";
    ui.verifySecret.value = "";
    ui.verifyAgain.value = "";
    ui.verifyState.textContent = "";
    delete ui.pairResult.dataset.agent;
    delete ui.pairResult.dataset.thread;
    say(ui.pairResult, "");
    say(ui.verifyStatus, "");
    showError(ui.pairError, "");
    showError(ui.verifyError, "");
  }

  // draw shows what Me said of the person signed in.
  function draw(me) {
    const u = (me && me.user) || null;
    if (!u) {
      ui.facts.replaceChildren();
      return;
    }
    const fact = (term, value) => {
      const dd = node("dd", "", value);
      dd.dataset.fact = term;
      return [node("dt", "", term), dd];
    };
    ui.facts.replaceChildren(
      ...fact("name", u.name || "—"),
      ...fact("email", u.email || "—"),
      ...fact("role", me.role || enums.role.word(u.role) || "—"),
      ...fact("verify secret", u.hasVerifySecret ? "set" : "not set"),
      ...fact("agents identify people by", door || "…"),
    );
    ui.verifyState.textContent = u.hasVerifySecret
      ? "You have a verify secret. Setting a new one replaces it."
      : "You have no verify secret: agents that verify people cannot verify you.";
    ui.verifyRemove.disabled = !u.hasVerifySecret;
  }

  // normalCode is a code as typed, in the form the agent showed it: case,
  // dashes and white space do not matter. The board does the same.
  function normalCode(s) {
    return s.toUpperCase().replace(/[\s-]+/g, "");
  }

  function pairRefusal(e) {
    switch (e.code) {
      case "invalid_argument":
        return "That code was not accepted: it is wrong, was used already, or has expired (" + e.message +
          "). Ask the agent for a new one.";
      case "resource_exhausted":
        return "Too many wrong codes (resource_exhausted): " + e.message + ".";
      case "failed_precondition":
        return "The board does not pair conversations now (failed_precondition): " + e.message + ".";
      case "permission_denied":
        return "You may not enter a code (permission_denied): " + e.message + ".";
      default:
        return "The board refused the code (" + e.code + "): " + e.message + ".";
    }
  }

  async function onPair(ev) {
    ev.preventDefault();
    const gen = board.generation();
    const cred = board.token();
    const code = normalCode(ui.pairCode.value);
    delete ui.pairResult.dataset.agent;
    delete ui.pairResult.dataset.thread;
    say(ui.pairResult, "");
    showError(ui.pairError, "");
    if (code === "") {
      showError(ui.pairError, "Type the code the agent showed you.");
      ui.pairCode.focus();
      return;
    }
    ui.pairButton.disabled = true;
    try {
      const res = await unary(cred, USERS + "EnterPairingCode", { code });
      if (!board.current(gen)) return;
      ui.pairCode.value = "";
      ui.pairResult.dataset.agent = res.agent || "";
      ui.pairResult.dataset.thread = res.thread || "";
      say(ui.pairResult, "Linked: the agent " + (res.agent || "?") + " now knows it is you in the conversation " +
        (res.thread || "?") + ".");
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.pairError, pairRefusal(e));
      ui.pairCode.focus();
    } finally {
      ui.pairButton.disabled = false;
    }
  }

  // setSecret sets the verify secret, or with "" removes it.
  async function setSecret(secret) {
    const gen = board.generation();
    const cred = board.token();
    say(ui.verifyStatus, "");
    showError(ui.verifyError, "");
    ui.verifyButton.disabled = ui.verifyRemove.disabled = true;
    try {
      await unary(cred, USERS + "SetVerifySecret", { secret });
      if (!board.current(gen)) return;
      ui.verifySecret.value = ui.verifyAgain.value = "";
      say(ui.verifyStatus, secret ? "Your verify secret is set." : "Your verify secret is removed.");
      await board.refreshMe();
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.verifyError, "The board refused (" + e.code + "): " + e.message + ".");
    } finally {
      ui.verifyButton.disabled = false;
      const me = board.me();
      ui.verifyRemove.disabled = !(me && me.user && me.user.hasVerifySecret);
    }
  }

  function onVerify(ev) {
    ev.preventDefault();
    const secret = ui.verifySecret.value;
    showError(ui.verifyError, "");
    if (Array.from(secret).length < MIN_SECRET) {
      showError(ui.verifyError, "A verify secret is at least " + MIN_SECRET + " characters long.");
      ui.verifySecret.focus();
      return;
    }
    if (secret !== ui.verifyAgain.value) {
      showError(ui.verifyError, "The two secrets are not the same.");
      ui.verifyAgain.value = "";
      ui.verifyAgain.focus();
      return;
    }
    setSecret(secret);
  }

  // readDoor asks which door the board's agents use, to show it.
  async function readDoor(gen, cred) {
    try {
      const res = await unary(cred, USERS + "GetIdentify", {});
      if (!board.current(gen)) return;
      door = enums.door.word(res.door) || "pairing";
      draw(board.me());
    } catch (e) {
      // Shown as "…": the rest of the view works without it.
    }
  }

  ui.pairForm.addEventListener("submit", onPair);
  ui.verifyForm.addEventListener("submit", onVerify);
  ui.verifyRemove.addEventListener("click", () => setSecret(""));

  board.part({
    reset,
    run(gen, cred) {
      if (cred && cred.kind === "session") {
        draw(board.me());
        readDoor(gen, cred);
      }
    },
    stop() {},
    wake() {},
    shown(view) {
      if (view === "me" && board.token()) readDoor(board.generation(), board.token());
    },
    role(me) {
      draw(me);
    },
  });
})();
