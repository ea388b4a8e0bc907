// The consents view: the standing consents (docs/approvals.md, "Standing
// consent"), newest first (ListConsents), PAGE at a time, "More" for the
// next page. Its filters — one agent, and only those still active — are
// kept in the address ("#consents?agent=desk-a&active=true"), so a reload
// or a link shows the same consents. Each row says the consent's state in
// words (active, used up, expired, revoked), who gave it and when, the
// agent, the digest (its start, the whole on hover and with Copy), the
// approval it was given on, its rule, its uses and until when, and who
// revoked it. Approvers and admins revoke an active one (RevokeConsent)
// once they confirm it in the row; the board decides who may, and its
// refusal is shown in the row. Everything from the board is drawn as text.
"use strict";

(function () {
  const { $, unary, readPage, count, node, none, parseTime, ago, showError, signOut, refusal, LIST_MAX } = board;
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const PAGE = 50; // consents a page of the view
  const DIGEST_SHOWN = 12; // the characters of a digest shown, after its "sha256:"
  // The words for a consent's state, as ListConsents gives it.
  const STATES = { active: "active", used: "used up", expired: "expired", revoked: "revoked" };

  const ui = {
    view: $("consents"),
    form: $("consents-filters"),
    agent: $("consents-agent"),
    agentError: $("consents-agent-error"),
    active: $("consents-active"),
    clear: $("consents-clear"),
    readOnly: $("consents-readonly"),
    error: $("consents-error"),
    status: $("consents-status"),
    loading: $("consents-loading"),
    empty: $("consents-empty"),
    wrap: $("consents-wrap"),
    rows: $("consents-rows"),
    more: $("consents-more"),
    full: $("consents-full"),
  };

  let gen = -1; // the generation the view reads for
  let cred = null;
  let controller = null; // aborts the read under way
  let loaded = null; // the filters (as consentsHref gives them) the rows are of, or null
  let next = ""; // the token of the page after the rows shown
  let consents = []; // the rows shown, as the board gave them
  // The row whose Revoke is being confirmed, kept across a redraw:
  // {id, reason, error}, or null.
  let confirming = null;

  function say(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  function reset() {
    if (controller) controller.abort();
    controller = null;
    loaded = null;
    next = "";
    consents = [];
    confirming = null;
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    ui.full.hidden = true;
    showError(ui.error, "");
    say(ui.status, "");
    clearFieldErrors();
  }

  function clearFieldErrors() {
    ui.agent.removeAttribute("aria-invalid");
    showError(ui.agentError, "");
  }

  // ---- filters: the address, the form and the request ----

  function filtersOfForm() {
    return { agent: ui.agent.value.trim(), active: ui.active.checked ? "true" : "" };
  }

  function fill(filters) {
    ui.agent.value = filters.agent || "";
    ui.active.checked = filters.active === "true";
  }

  // filtersOfHash is the address's filters, only those the view knows.
  function filtersOfHash() {
    const h = board.consentsOfHash() || {};
    return { agent: typeof h.agent === "string" ? h.agent : "", active: h.active === "true" ? "true" : "" };
  }

  // request is the ListConsents request of filters.
  function request(filters) {
    const r = {};
    if (filters.agent) r.agent = filters.agent;
    if (filters.active) r.activeOnly = true;
    return r;
  }

  // ---- the list ----

  // when is a <time> saying how long ago (or how soon) s is, the exact
  // time on hover, or "—".
  function when(s, now) {
    const ms = parseTime(s);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "", ms > now + 500 ? "in " + ago(now, ms).replace(/ ago$/, "") : ago(ms, now));
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    return t;
  }

  // short is a digest's algorithm and the start of its value.
  function short(d) {
    const colon = d.indexOf(":");
    const end = (colon < 0 ? 0 : colon + 1) + DIGEST_SHOWN;
    return d.length > end ? d.slice(0, end) + "…" : d;
  }

  function digestCell(c) {
    const td = node("td", "digest-cell");
    if (!c.digest) {
      td.append(none());
      return td;
    }
    const code = node("code", "digest", short(c.digest));
    code.title = c.digest;
    code.dataset.digest = c.digest;
    const copy = node("button", "plain copy", "Copy");
    copy.type = "button";
    copy.setAttribute("aria-label", "Copy the digest of consent " + c.id);
    copy.addEventListener("click", () => copyDigest(c, code));
    td.append(code, " ", copy);
    return td;
  }

  async function copyDigest(c, code) {
    try {
      await navigator.clipboard.writeText(c.digest);
      say(ui.status, "The digest of consent " + c.id + " is copied.");
    } catch (e) {
      // No clipboard here: show it whole and select it, to copy by hand.
      code.textContent = c.digest;
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      say(ui.status, "Copy the selected digest of consent " + c.id + " (Ctrl+C or ⌘C).");
    }
  }

  // usesWords is how many operations c approved, of how many it may.
  function usesWords(c) {
    const used = Number(c.uses) || 0;
    const allowed = Number(c.usesAllowed) || 0;
    return allowed > 0 ? used + " of " + allowed : count(used, "use", "uses") + ", no limit but time";
  }

  function mayRevoke(c) {
    return c.state === "active" && board.may("approver");
  }

  function row(c, now) {
    const tr = node("tr");
    tr.dataset.consent = c.id;
    tr.dataset.state = c.state || "";
    const state = node("th", "state");
    state.scope = "row";
    const word = STATES[c.state] || c.state || "unknown";
    state.append(node("span", "badge consent-state consent-" + (STATES[c.state] ? c.state : "unknown"), word));
    state.append(node("span", "consent-id", c.id));
    const cell = (cls, ...children) => {
      const td = node("td", cls);
      td.append(...children);
      return td;
    };
    const link = (cls, text, href, label) => {
      const a = node("a", cls, text);
      a.href = href;
      if (label) a.setAttribute("aria-label", label);
      return a;
    };
    const given = cell("given", node("span", "created-by", c.createdBy || "?"), document.createTextNode(", "), when(c.createTime, now));
    const revoked = node("td", "revoked");
    if (c.revokeTime || c.revokedBy) {
      revoked.append(node("span", "revoked-by", c.revokedBy || "?"), document.createTextNode(", "), when(c.revokeTime, now));
    } else if (mayRevoke(c)) {
      revoked.append(...revokeControls(c));
    } else {
      revoked.append(none());
    }
    tr.append(
      state,
      cell("agent", c.agent ? link("agent-link", c.agent, board.agentHref(c.agent)) : none()),
      digestCell(c),
      given,
      cell("consent-approval", c.approvalId ? link("approval-link", c.approvalId, board.approvalHref(c.approvalId), "Approval " + c.approvalId) : none()),
      cell("consent-rule", c.ruleId ? link("rule-link", c.ruleId, board.ruleHref(c.ruleId), "Rule " + c.ruleId) : none()),
      node("td", "uses", usesWords(c)),
      cell("until", when(c.expireTime, now)),
      revoked,
    );
    return tr;
  }

  // revokeControls is Revoke, and the confirmation it opens in the row.
  function revokeControls(c) {
    const revoke = node("button", "danger revoke", "Revoke");
    revoke.type = "button";
    revoke.setAttribute("aria-label", "Revoke consent " + c.id);
    const confirm = node("div", "revoke-confirm");
    confirm.hidden = true;
    const id = "revoke-reason-" + c.id.replace(/[^A-Za-z0-9_-]/g, "_");
    const text = node("p", "confirm-text", "Revoke this consent? The next time " + (c.agent || "the agent") +
      " asks for this operation, people decide.");
    const label = node("label", "", "Why ");
    label.htmlFor = id;
    label.append(node("span", "hint", "(optional; kept in the audit log)"));
    const reason = node("input", "revoke-reason");
    reason.id = id;
    reason.type = "text";
    reason.maxLength = 4096;
    reason.autocomplete = "off";
    const yes = node("button", "confirm danger revoke-yes", "Yes, revoke");
    yes.type = "button";
    const no = node("button", "plain revoke-no", "Keep it");
    no.type = "button";
    const buttons = node("div", "actions");
    buttons.append(yes, no);
    confirm.append(text, label, reason, buttons);
    const error = node("p", "error card-error revoke-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    if (confirming && confirming.id === c.id) {
      revoke.hidden = true;
      confirm.hidden = false;
      reason.value = confirming.reason;
      showError(error, confirming.error);
    }
    revoke.addEventListener("click", () => {
      confirming = { id: c.id, reason: "", error: "" };
      revoke.hidden = true;
      confirm.hidden = false;
      showError(error, "");
      yes.focus();
    });
    reason.addEventListener("input", () => {
      if (confirming && confirming.id === c.id) confirming.reason = reason.value;
    });
    no.addEventListener("click", () => {
      confirming = null;
      confirm.hidden = true;
      revoke.hidden = false;
      revoke.focus();
    });
    yes.addEventListener("click", () => revokeConsent(c, reason, yes, error));
    return [revoke, confirm, error];
  }

  // revokeConsent asks the board to end c, and draws its row as the board
  // answers; a refusal is shown in the row.
  async function revokeConsent(c, reason, yes, error) {
    if (yes.disabled || cred === null) return;
    const g = gen;
    yes.disabled = true;
    showError(error, "");
    try {
      const req = { id: c.id };
      if (reason.value.trim() !== "") req.reason = reason.value.trim();
      const res = await unary(cred, APPROVALS + "RevokeConsent", req);
      if (!board.current(g)) return;
      if (confirming && confirming.id === c.id) confirming = null;
      const after = res && res.consent && res.consent.id === c.id ? res.consent : null;
      if (after) {
        const i = consents.findIndex((x) => x.id === c.id);
        if (i >= 0) consents[i] = after;
      }
      say(ui.status, "Consent " + c.id + " is revoked: the next time " + (c.agent || "the agent") + " asks for this operation, people decide.");
      render();
      // The row was drawn again: keep the focus on it.
      const tr = rowOf(c.id);
      const th = tr ? tr.querySelector("th") : null;
      if (th) {
        th.tabIndex = -1;
        th.focus();
      }
      if (!after) load(false);
    } catch (e) {
      if (!board.current(g)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      const message = e.code === "permission_denied"
        ? "You may not revoke this consent (permission_denied): " + e.message + "."
        : "The board refused (" + e.code + "): " + e.message + ".";
      if (confirming && confirming.id === c.id) confirming.error = message;
      // The row may have been drawn again meanwhile: say it in the row shown.
      const tr = rowOf(c.id);
      const shown = tr ? tr.querySelector(".revoke-error") : null;
      showError(shown || error, message);
      const again = tr ? tr.querySelector(".revoke-yes") : null;
      yes.disabled = false;
      if (again) again.focus();
    }
  }

  // rowOf is the row shown of the consent id, or null.
  function rowOf(id) {
    return Array.from(ui.rows.children).find((r) => r.dataset.consent === id) || null;
  }

  function render() {
    ui.loading.hidden = true;
    const now = Date.now();
    // A control focused in a row is focused again once the row is drawn.
    const focused = ui.rows.contains(document.activeElement) ? document.activeElement : null;
    const focusRow = focused ? focused.closest("tr") : null;
    const focusClass = focused ? focused.classList[focused.classList.length - 1] : "";
    ui.rows.replaceChildren(...consents.map((c) => row(c, now)));
    if (focusRow && focusClass) {
      const tr = rowOf(focusRow.dataset.consent);
      const el = tr ? tr.querySelector("." + focusClass) : null;
      if (el && !el.closest("[hidden]")) el.focus();
    }
    ui.wrap.hidden = consents.length === 0;
    ui.empty.hidden = consents.length > 0;
    const full = consents.length >= LIST_MAX && next !== "";
    ui.more.hidden = next === "" || full;
    ui.full.textContent = full ? "This page shows the newest " + count(LIST_MAX, "consent", "consents") +
      " these filters pick: choose one agent, or only the active ones." : "";
    ui.full.hidden = !full;
  }

  // failed shows an error of a read made for g: an ended session signs the
  // page out; an agent the board refused is shown on its field.
  function failed(g, e) {
    if (e.name === "AbortError" || !board.current(g)) return;
    if (e.code === "unauthenticated") {
      signOut(refusal(e));
      return;
    }
    if (e.code === "invalid_argument" && e.message.startsWith("agent:")) {
      ui.agent.setAttribute("aria-invalid", "true");
      showError(ui.agentError, e.message);
    }
    showError(ui.error, "Could not read the consents (" + e.code + "): " + e.message);
  }

  // load reads the first page of the address's filters, or, with more, the
  // page after the rows shown.
  async function load(more) {
    if (gen < 0 || !board.current(gen)) return;
    const g = gen;
    const filters = filtersOfHash();
    const key = board.consentsHref(filters);
    if (controller) controller.abort();
    const ctl = new AbortController();
    controller = ctl;
    if (!more) {
      loaded = key;
      next = "";
      fill(filters);
      clearFieldErrors();
      if (consents.length === 0) ui.loading.hidden = false;
    }
    ui.more.disabled = true;
    try {
      const page = await readPage(cred, APPROVALS + "ListConsents", request(filters), "consents", PAGE, more ? next : "", ctl.signal);
      if (!board.current(g) || loaded !== key) return;
      const items = page.items.filter((c) => c && typeof c.id === "string" && c.id !== "");
      const base = more ? consents : [];
      const ids = new Set(base.map((c) => c.id));
      consents = base.concat(items.filter((c) => !ids.has(c.id)).slice(0, LIST_MAX - base.length));
      next = page.next;
      showError(ui.error, "");
      render();
    } catch (e) {
      if (!more) ui.loading.hidden = true;
      failed(g, e);
    } finally {
      ui.more.disabled = false;
      if (controller === ctl) controller = null;
    }
  }

  // ---- wiring ----

  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const href = board.consentsHref(filtersOfForm());
    if (location.hash === href) load(false); // the same filters: read again
    else location.hash = href; // the view reads them when shown
  });
  ui.clear.addEventListener("click", () => {
    fill({});
    if (location.hash === "#consents") load(false);
    else location.hash = "#consents";
  });
  ui.more.addEventListener("click", () => load(true));

  board.part({
    reset,
    run(g, c) {
      gen = g;
      cred = c;
      if (!ui.view.hidden) load(false);
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
      gen = -1;
      cred = null;
    },
    wake() {},
    shown(view) {
      if (view !== "consents" || gen < 0) return;
      // Read again each time the view is shown: uses are counted and
      // consents end while it is not.
      if (board.consentsHref(filtersOfHash()) !== loaded) consents = [];
      say(ui.status, "");
      load(false);
    },
    role(me) {
      ui.readOnly.hidden = !me || board.may("approver");
      if (loaded !== null) render();
    },
  });
})();
