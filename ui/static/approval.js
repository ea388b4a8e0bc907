// An approval's page: "#approval/" and its id shows, above the approvals
// view (which picks the approval out in its queue or history), everything
// the board knows of it (GetApproval): where it stands, the agent, node
// and run it came from (the run linked to its page), its rule, its digest
// whole, when it was raised and when it expires, its escalation step, the
// votes so far, the decision (who, why, when, through which standing
// consent) with its signed receipt to download, what it shows, and its
// trail in the audit log, oldest first (ListAudit, its id as the object).
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal, approvalOfHash, agentHref, runHref, ruleHref, auditHref } = board;
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const AUDIT = "/symphonix.board.v1.AuditService/ListAudit";
  const TRAIL = 100; // audit entries shown; the audit view has them all

  const ui = {
    page: $("approval-page"),
    title: $("approval-page-title"),
    error: $("approval-page-error"),
    facts: $("approval-page-facts"),
    shown: $("approval-page-shown"),
    audit: $("approval-page-audit"),
    trail: $("approval-page-trail"),
    trailWrap: $("approval-page-trail-wrap"),
    trailEmpty: $("approval-page-trail-empty"),
  };

  let controller = null;
  let shownFor = "";

  function reset() {
    if (controller) controller.abort();
    controller = null;
    shownFor = "";
    ui.page.hidden = true;
    ui.facts.replaceChildren();
    ui.shown.replaceChildren();
    ui.trail.replaceChildren();
    ui.trailWrap.hidden = true;
    ui.trailEmpty.hidden = true;
    showError(ui.error, "");
  }

  function when(s) {
    const ms = board.parseTime(s);
    if (Number.isNaN(ms)) return null;
    const t = node("time", "", new Date(ms).toLocaleString());
    t.dateTime = new Date(ms).toISOString();
    return t;
  }

  function fact(term, value) {
    const dd = node("dd");
    dd.dataset.fact = term;
    if (value === null || value === undefined || value === "") dd.append(board.none());
    else if (typeof value === "string") dd.textContent = value;
    else dd.append(value);
    return [node("dt", "", term), dd];
  }

  function link(text, href) {
    const a = node("a", "", text);
    a.href = href;
    return a;
  }

  function draw(a) {
    const state = enums.approvalState.word(a.state) || "unknown";
    ui.title.textContent = (a.ask || "Approval") + " — " + state;
    ui.page.dataset.state = state;
    const d = a.decision || null;
    const votes = Array.isArray(a.votes) ? a.votes : [];
    const facts = [
      ...fact("state", state),
      ...fact("id", a.id),
      ...fact("agent", a.agent ? link(a.agent, agentHref(a.agent)) : ""),
      ...fact("node", a.node),
      ...fact("run", a.runId && a.agent ? link(a.runId, runHref(a.agent, a.runId)) : a.run),
      ...fact("rule", a.ruleId ? link(a.ruleId, ruleHref(a.ruleId)) : "not governed: the agent's chat decides it"),
      ...fact("digest", node("code", "digest", a.digest || "")),
      ...fact("raised", when(a.createTime)),
      ...fact("expires", when(a.expireTime)),
      ...fact("escalation", a.escalationLevel > 0 ? "step " + a.escalationLevel : "none reached"),
      ...fact("votes", votes.length > 0 ? votes.join(", ") : ""),
    ];
    if (d) {
      facts.push(
        ...fact("decision", enums.say.word(d.say) || ""),
        ...fact("decided by", Array.isArray(d.who) && d.who.length > 0 ? d.who.join(", ") : (d.consentId ? "" : "the board")),
        ...fact("decided", when(d.decideTime)),
        ...fact("reason", d.reason || ""),
        ...fact("standing consent", d.consentId || ""),
        ...fact("receipt", board.receiptLink(a)),
      );
    }
    ui.facts.replaceChildren(...facts);
    ui.shown.replaceChildren(board.shownTable(a));
    ui.audit.href = auditHref({ object: a.id });
  }

  async function open() {
    const id = approvalOfHash();
    if (id === "") {
      reset();
      return;
    }
    if (id === shownFor) return;
    reset();
    shownFor = id;
    ui.title.textContent = "Approval " + id;
    ui.page.hidden = false;
    const gen = board.generation();
    const cred = board.token();
    const ctl = new AbortController();
    controller = ctl;
    try {
      const [got, trail] = await Promise.all([
        unary(cred, APPROVALS + "GetApproval", { id }, ctl.signal),
        board.may("admin")
          ? unary(cred, AUDIT, { subject: id, pageSize: TRAIL }, ctl.signal).catch((e) => {
            if (e.name === "AbortError") throw e;
            return null; // the trail is the admins'; the page stands without it
          })
          : null,
      ]);
      if (!board.current(gen) || shownFor !== id) return;
      const a = got && got.approval;
      if (!a || a.id !== id) throw new board.RPCError("internal", "the board gave another approval");
      draw(a);
      const entries = trail && Array.isArray(trail.entries) ? trail.entries : [];
      ui.trail.replaceChildren(...entries.map(board.auditRow));
      ui.trailWrap.hidden = entries.length === 0;
      ui.trailEmpty.hidden = trail === null || entries.length > 0;
      if (trail === null) ui.trailEmpty.hidden = true;
    } catch (e) {
      if (e.name === "AbortError" || !board.current(gen) || shownFor !== id) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, e.code === "not_found" ? "The board has no approval " + id + "."
        : "Could not read the approval " + id + " (" + e.code + "): " + e.message + ".");
    }
  }

  board.part({
    reset,
    run() {},
    stop() {
      if (controller) controller.abort();
      controller = null;
    },
    wake() {},
    shown(view) {
      if (view === "approvals") open();
      else reset();
    },
  });
  // Read it again when the approval changes while its page is shown.
  board.approvalChanged = (id) => {
    if (id === shownFor && !ui.page.hidden) {
      shownFor = "";
      open();
    }
  };
})();
