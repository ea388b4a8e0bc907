// The search of the approvals, on the approvals view: by outcome, agent,
// rule and when they were raised (ListApprovals, newest first, a page at a
// time with More), the filters kept in the address —
// "#approvals?state=approved&rule=refunds&since=…" — so that a search can
// be bookmarked, sent, or come back to with Back. A filter the board
// refuses is shown on its field. The live queue and history below are
// unchanged by it.
"use strict";

(function () {
  const { $, unary, count, node, showError, signOut, refusal, localInput, isoOfInput, LIST_MAX } = board;
  const LIST = "/symphonix.board.v1.ApprovalService/ListApprovals";
  const BASE = "#approvals";
  const PAGE = 50;
  const FIELDS = ["state", "agent", "rule", "since", "until"];
  // What the board names each field in its refusals.
  const FIELD = { state: "state", agent: "agent", rule: "rule_id", since: "since", until: "until" };

  const inputs = {};
  const fieldErrors = {};
  for (const f of FIELDS) {
    inputs[f] = $("search-" + f);
    if (f !== "state") fieldErrors[f] = $("search-" + f + "-error");
  }
  const ui = {
    form: $("search-form"),
    clear: $("search-clear"),
    status: $("search-status"),
    error: $("search-error"),
    wrap: $("search-wrap"),
    rows: $("search-rows"),
    more: $("search-more"),
  };

  let controller = null;
  let shown = ""; // the filters, as an address, whose results are drawn
  let next = ""; // the next page's token, "" when there is none
  let found = 0;

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function clearFieldErrors() {
    for (const f of FIELDS) {
      inputs[f].removeAttribute("aria-invalid");
      if (fieldErrors[f]) showError(fieldErrors[f], "");
    }
  }

  function reset() {
    if (controller) controller.abort();
    controller = null;
    shown = "";
    next = "";
    found = 0;
    ui.rows.replaceChildren();
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    say("");
    showError(ui.error, "");
    clearFieldErrors();
  }

  // filtersOfHash is the search the address asks for, or null for none.
  function filtersOfHash() {
    if (!location.hash.startsWith(BASE + "?")) return null;
    const out = {};
    const params = new URLSearchParams(location.hash.slice(BASE.length + 1));
    for (const f of FIELDS) out[f] = params.get(f) || "";
    return FIELDS.some((f) => out[f] !== "") ? out : null;
  }

  function hrefOf(filters) {
    const q = new URLSearchParams();
    for (const f of FIELDS) if (filters[f]) q.set(f, filters[f]);
    const qs = q.toString();
    return BASE + (qs ? "?" + qs : "");
  }

  function filtersOfForm() {
    return {
      state: inputs.state.value, agent: inputs.agent.value.trim(), rule: inputs.rule.value.trim(),
      since: isoOfInput(inputs.since.value), until: isoOfInput(inputs.until.value),
    };
  }

  function fill(filters) {
    inputs.state.value = Array.from(inputs.state.options).some((o) => o.value === filters.state) ? filters.state : "";
    inputs.agent.value = filters.agent;
    inputs.rule.value = filters.rule;
    inputs.since.value = localInput(filters.since);
    inputs.until.value = localInput(filters.until);
  }

  function request(filters) {
    const req = {};
    if (filters.state) req.state = enums.approvalState.name(filters.state) || filters.state;
    if (filters.agent) req.agent = filters.agent;
    if (filters.rule) req.ruleId = filters.rule;
    if (filters.since) req.since = filters.since;
    if (filters.until) req.until = filters.until;
    return req;
  }

  function failed(gen, e) {
    if (e.name === "AbortError" || !board.current(gen)) return;
    if (e.code === "unauthenticated") {
      signOut(refusal(e));
      return;
    }
    say("");
    if (e.code === "invalid_argument") {
      for (const f of FIELDS) {
        if (e.message.startsWith(FIELD[f] + ":")) {
          inputs[f].setAttribute("aria-invalid", "true");
          if (fieldErrors[f]) showError(fieldErrors[f], e.message);
          else showError(ui.error, e.message);
          return;
        }
      }
    }
    showError(ui.error, "Could not search the approvals (" + e.code + "): " + e.message + ".");
  }

  // load reads the first page of the search the address asks for, or, with
  // more, the next page of the one shown.
  async function load(filters, more) {
    const gen = board.generation();
    if (controller) controller.abort();
    const ctl = new AbortController();
    controller = ctl;
    showError(ui.error, "");
    clearFieldErrors();
    say(more ? "Reading more…" : "Searching…");
    try {
      const req = Object.assign(request(filters), { pageSize: PAGE });
      if (more) req.pageToken = next;
      const res = await unary(board.token(), LIST, req, ctl.signal);
      if (!board.current(gen) || controller !== ctl) return;
      const list = res && Array.isArray(res.approvals) ? res.approvals : [];
      if (!more) ui.rows.replaceChildren();
      for (const a of list) {
        if (found >= LIST_MAX) break;
        if (!a || typeof a.id !== "string") continue;
        ui.rows.append(board.historyRow(a));
        found++;
      }
      next = res && typeof res.nextPageToken === "string" && found < LIST_MAX ? res.nextPageToken : "";
      ui.wrap.hidden = found === 0;
      ui.more.hidden = next === "";
      say(found === 0 ? "No approval matches." : count(found, "approval", "approvals") + " found" +
        (next === "" ? "." : " so far: More reads on."));
    } catch (e) {
      failed(gen, e);
    }
  }

  function open() {
    const filters = filtersOfHash();
    const href = filters ? hrefOf(filters) : "";
    if (href === shown) return;
    reset();
    if (!filters) {
      fill({ state: "", agent: "", rule: "", since: "", until: "" });
      return;
    }
    shown = href;
    found = 0;
    fill(filters);
    load(filters, false);
  }

  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const filters = filtersOfForm();
    const href = hrefOf(filters);
    if (href === BASE) {
      history.replaceState(null, "", BASE);
      reset();
      return;
    }
    // A new search is a step Back returns from.
    if (location.hash !== href) history.pushState(null, "", href);
    shown = "";
    open();
  });
  ui.clear.addEventListener("click", () => {
    history.replaceState(null, "", BASE);
    reset();
    fill({ state: "", agent: "", rule: "", since: "", until: "" });
    inputs.agent.focus();
  });
  ui.more.addEventListener("click", () => {
    const filters = filtersOfHash();
    if (filters && next !== "") load(filters, true);
  });
  window.addEventListener("popstate", () => {
    if (board.view() === "approvals") open();
  });

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
    },
  });
})();
