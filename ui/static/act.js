// The page of an action link: "#act/" and a token, the personal link to
// one approval a notification sends a person who may decide it
// (docs/notifications.md). The page reads the approval the link is for
// (OpenActionLink: only for the person it was made for, signed in), shows
// it as its card would, and decides only when the person chooses approve
// or reject and then confirms (Decide with the link, which uses it up).
// Opening the page never decides.
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal, approvalHref } = board;
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const DIGEST_SHOWN = "sha256:".length + 12;

  const ui = {
    title: $("act-title"),
    status: $("act-status"),
    error: $("act-error"),
    card: $("act-card"),
    ask: $("act-ask"),
    facts: $("act-facts"),
    shown: $("act-shown"),
    account: $("act-account"),
    accountText: $("act-account-text"),
    form: $("act-form"),
    reason: $("act-reason"),
    choose: $("act-choose"),
    approve: $("act-approve"),
    reject: $("act-reject"),
    confirm: $("act-confirm"),
    confirmText: $("act-confirm-text"),
    confirmButton: $("act-confirm-button"),
    back: $("act-back"),
    after: $("act-after"),
    approvalLink: $("act-approval-link"),
  };

  let link = ""; // the token shown, "" when none
  let approval = null; // what OpenActionLink gave for it
  let said = ""; // "yes" or "no" while the person confirms it
  let busy = false;
  let seq = 0; // counts openings: an answer for an older one is dropped

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function reset() {
    link = "";
    approval = null;
    said = "";
    seq++;
    ui.card.hidden = true;
    ui.after.hidden = true;
    ui.facts.replaceChildren();
    ui.shown.replaceChildren();
    ui.reason.value = "";
    ui.reason.removeAttribute("aria-invalid");
    choosing();
    say("");
    showError(ui.error, "");
  }

  // choosing shows the approve and reject buttons; confirming(s), the
  // question whether to say s.
  function choosing() {
    said = "";
    ui.confirm.hidden = true;
    ui.choose.hidden = false;
    ui.reason.disabled = false;
  }

  function confirming(s) {
    said = s;
    const digest = String(approval.digest || "").slice(0, DIGEST_SHOWN);
    ui.confirmText.textContent = (s === "yes" ? "Approve" : "Reject") + " “" + (approval.ask || approval.id) +
      "” (agent " + (approval.agent || "?") + ", digest " + digest + "…)? The agent is told at once; this link then stops working.";
    ui.confirmButton.textContent = s === "yes" ? "Confirm: approve" : "Confirm: reject";
    ui.choose.hidden = true;
    ui.confirm.hidden = false;
    ui.reason.disabled = true;
    ui.confirmButton.focus();
  }

  function linkRefusal(e) {
    switch (e.code) {
      case "permission_denied":
        return "This link is not yours to use (permission_denied): " + e.message + ".";
      case "failed_precondition":
        return "This link cannot decide now (failed_precondition): " + e.message + ".";
      case "invalid_argument":
        return "This is not a working link (invalid_argument): " + e.message + ".";
      case "not_found":
        return "The approval is gone (not_found): " + e.message + ".";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message + ". Try again in a moment.";
      default:
        return "The board refused the link (" + e.code + "): " + e.message + ".";
    }
  }

  function fact(term, value) {
    const dd = node("dd", "", value || "—");
    dd.dataset.fact = term;
    return [node("dt", "", term), dd];
  }

  function draw(a, expires) {
    ui.ask.textContent = a.ask || "(no question given)";
    const until = board.parseTime(expires);
    ui.facts.replaceChildren(
      ...fact("agent", a.agent),
      ...fact("node", a.node),
      ...fact("run", a.runId || a.run),
      ...fact("rule", a.ruleId),
      ...fact("digest", String(a.digest || "").slice(0, DIGEST_SHOWN) + "…"),
      ...fact("link works until", Number.isNaN(until) ? "" : new Date(until).toLocaleString()),
    );
    ui.facts.querySelector('[data-fact="digest"]').title = a.digest || "";
    ui.shown.replaceChildren(board.shownTable(a));
    const account = typeof a.account === "string" ? a.account : "";
    ui.accountText.textContent = account;
    ui.account.hidden = account === "";
    ui.approvalLink.href = approvalHref(a.id);
    ui.card.hidden = false;
  }

  // open reads the approval the link in the address is for.
  async function open() {
    const token = board.actOfHash();
    if (token === "" || token === link) return;
    reset();
    link = token;
    const mine = ++seq;
    const gen = board.generation();
    say("Opening the link…");
    try {
      const res = await unary(board.token(), APPROVALS + "OpenActionLink", { link: token });
      if (!board.current(gen) || mine !== seq) return;
      approval = (res && res.approval) || null;
      if (!approval || !approval.id) throw new board.RPCError("internal", "the board gave no approval");
      draw(approval, res.expiresAt);
      say("");
      ui.title.focus();
    } catch (e) {
      if (!board.current(gen) || mine !== seq) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      say("");
      showError(ui.error, linkRefusal(e));
      ui.after.hidden = false;
    }
  }

  async function onConfirm(ev) {
    ev.preventDefault();
    if (!approval || said === "" || busy) return;
    const gen = board.generation();
    busy = true;
    ui.confirmButton.disabled = ui.back.disabled = true;
    showError(ui.error, "");
    try {
      const res = await unary(board.token(), APPROVALS + "Decide", {
        id: approval.id, say: enums.say.name(said), digest: approval.digest,
        reason: ui.reason.value.trim(), actionLink: link,
      });
      if (!board.current(gen)) return;
      const after = (res && res.approval) || {};
      const state = enums.approvalState.word(after.state);
      const votes = Array.isArray(after.votes) ? after.votes.length : 0;
      say(state === "pending"
        ? "Your yes is counted (" + votes + " so far). The approval waits for more people."
        : (state === "approved" ? "Approved." : state === "rejected" ? "Rejected." : "Decided: " + state + ".") +
          " The agent is told.");
      ui.form.hidden = true;
      ui.after.hidden = false;
      // The link is used up: the address keeps the approval, not the token.
      history.replaceState(null, "", approvalHref(approval.id));
      link = "";
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, linkRefusal(e));
      choosing();
      if (e.code === "invalid_argument" && /^reason/.test(e.message)) {
        ui.reason.setAttribute("aria-invalid", "true");
        ui.reason.focus();
      }
    } finally {
      busy = false;
      ui.confirmButton.disabled = ui.back.disabled = false;
    }
  }

  ui.approve.addEventListener("click", () => approval && confirming("yes"));
  ui.reject.addEventListener("click", () => approval && confirming("no"));
  ui.back.addEventListener("click", () => {
    choosing();
    ui.approve.focus();
  });
  ui.form.addEventListener("submit", onConfirm);

  board.part({
    reset() {
      reset();
      ui.form.hidden = false;
    },
    run() {},
    stop() {},
    wake() {},
    shown(view) {
      if (view === "act") {
        ui.form.hidden = false;
        open();
      }
    },
  });
})();
