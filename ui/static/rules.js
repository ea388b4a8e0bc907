// The rules view: the approval rules in the order they are matched
// (ListRules, every page, up to board.LIST_MAX, every POLL_MS while the
// view is shown and after every change made here). "#rules/" and a rule's
// id opens that rule. Admins put, preview and delete rules in its form
// (PutRule, PreviewRule, DeleteRule); an error the board gives that names
// a field ("rule.agent: …") is shown on that field. Everything from the
// board is drawn as text.
"use strict";

(function () {
  const { $, unary, readAll, count, node, none, tags, showError, signOut, refusal, sleep, parseTime, parseDuration, ago, LIST_MAX } = board;
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const POLL_MS = 10000; // how often the rules are read while the view is shown
  const POLL_MAX_MS = 30000; // the longest wait between reads after failures

  const ui = {
    view: $("rules"),
    error: $("rules-error"),
    more: $("rules-list-more"),
    loading: $("rules-loading"),
    empty: $("rules-empty"),
    wrap: $("rules-wrap"),
    rows: $("rules-rows"),
    newRule: $("rule-new"),
    detail: $("rule-detail"),
    title: $("rule-detail-title"),
    note: $("rule-detail-note"),
    form: $("rule-form"),
    fields: $("rule-fields"),
    formError: $("rule-form-error"),
    buttons: $("rule-buttons"),
    previewButton: $("rule-preview-button"),
    save: $("rule-save"),
    cancel: $("rule-cancel"),
    del: $("rule-delete"),
    confirm: $("rule-delete-confirm"),
    yes: $("rule-delete-yes"),
    no: $("rule-delete-no"),
    preview: $("rule-preview"),
    previewAgentsNote: $("rule-preview-agents-note"),
    previewAgents: $("rule-preview-agents"),
    previewNote: $("rule-preview-note"),
    previewRows: $("rule-preview-rows"),
  };
  // The form's inputs, by the field of a Rule the board names in an error.
  const fields = {
    id: $("rule-id"),
    agent: $("rule-agent"),
    node: $("rule-node"),
    role: $("rule-role"),
    people: $("rule-people"),
    quorum: $("rule-quorum"),
    time_limit: $("rule-time-limit"),
    description: $("rule-description"),
    standing_consent_max_amount: $("rule-consent-max"),
    escalation: $("rule-escalation"),
  };
  const requireReason = $("rule-require-reason");
  const selfApproval = $("rule-self");
  const noStandingConsent = $("rule-no-standing-consent");

  const nap = { wake: null };
  let controller = null; // aborts the read of the running poll
  let cred = null;
  let rules = null; // as ListRules said, in match order, or null before the first read
  let cut = false;
  let drawn = "";
  // open is what the form shows: null (closed), {id: ""} (a new rule), or
  // {id} (a stored rule); filled says the form holds that rule's fields.
  let open = null;
  let filled = false;
  let busy = false;
  // again: a change was made here since the read under way began, so the
  // list is read again at once.
  let again = false;

  function reset() {
    again = false;
    rules = null;
    cut = false;
    drawn = "";
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    showError(ui.error, "");
    close();
  }

  // ---- the list ----

  async function poll(gen, c) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.view.hidden) {
        await sleep(POLL_MAX_MS, nap);
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      again = false;
      try {
        await readRules(gen, ctl.signal);
        if (!board.current(gen)) return;
        failures = 0;
      } catch (e) {
        if (e.name === "AbortError" || !board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        showError(ui.error, "Could not read the rules (" + e.code + "): " + e.message +
          (rules === null ? ". Trying again." : ". What is shown may be out of date; trying again."));
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (again && failures === 0) continue;
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  async function readRules(gen, signal) {
    const res = await readAll(cred, APPROVALS + "ListRules", {}, "rules", signal);
    if (!board.current(gen)) return;
    rules = res.items.filter((r) => r && typeof r.id === "string");
    cut = res.more;
    showError(ui.error, "");
    render();
    fill();
  }

  // reread reads the rules now (after a change made here).
  function reread() {
    again = true;
    if (nap.wake) nap.wake();
  }

  // whoDecides is a rule's deciders in words.
  function whoDecides(r) {
    const quorum = Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
    const q = quorum + (quorum === 1 ? " yes" : " yeses") + " needed";
    if (Array.isArray(r.people) && r.people.length > 0) return [tags(r.people, "people who decide"), document.createTextNode(" " + q)];
    const role = enums.role.word(r.role) || "approver";
    return [node("span", "who", role === "admin" ? "admin role: admins" : role + " role: approvers and admins"),
      document.createTextNode(" — " + q)];
  }

  // durationWords is a protobuf JSON duration in words: "90 min", "2 h".
  function durationWords(s) {
    const ms = parseDuration(s);
    if (!(ms > 0)) return "";
    const sec = ms / 1000;
    if (sec % 86400 === 0) return count(sec / 86400, "day", "days");
    if (sec % 3600 === 0) return count(sec / 3600, "hour", "hours");
    if (sec % 60 === 0) return count(sec / 60, "min", "min");
    return sec + " s";
  }

  function row(r, i) {
    const tr = node("tr");
    tr.dataset.rule = r.id;
    const id = node("th");
    id.scope = "row";
    const link = node("a", "rule-link", r.id);
    link.href = board.ruleHref(r.id);
    id.append(link);
    const cell = (cls, ...children) => {
      const td = node("td", cls);
      td.append(...children);
      return td;
    };
    const tl = durationWords(r.timeLimit);
    const at = parseTime(r.updateTime);
    const updated = node("td", "updated");
    if (at) {
      const time = node("time", "", ago(at, Date.now()));
      time.dateTime = r.updateTime;
      time.title = new Date(at).toISOString();
      updated.append(time);
    }
    if (r.updatedBy) updated.append(document.createTextNode(" by " + r.updatedBy));
    if (admin()) {
      const edit = node("a", "edit", "Edit");
      edit.href = board.ruleHref(r.id);
      edit.setAttribute("aria-label", "Edit rule " + r.id);
      updated.append(document.createTextNode(" "), edit);
    }
    tr.append(
      node("td", "order", String(i + 1)),
      id,
      cell("agent", node("code", "", r.agent || "")),
      cell("node", node("code", "", r.node || "")),
      cell("who", ...whoDecides(r)),
      tl ? node("td", "time-limit", tl) : cell("time-limit", none()),
      node("td", "reason", r.requireReason ? "required" : "optional"),
      node("td", "self", r.allowSelfApproval ? "allowed" : "not allowed"),
      r.description ? node("td", "description", r.description) : cell("description", none()),
      updated,
    );
    return tr;
  }

  function render() {
    if (rules === null) return;
    ui.loading.hidden = true;
    const key = JSON.stringify([rules, cut, admin()]);
    if (key === drawn) return;
    drawn = key;
    ui.rows.replaceChildren(...rules.map(row));
    ui.wrap.hidden = rules.length === 0;
    ui.empty.hidden = rules.length > 0;
    ui.more.textContent = cut ? "This page shows the first " + count(LIST_MAX, "rule", "rules") + ": there are more." : "";
    ui.more.hidden = !cut;
  }

  // ---- the form ----

  function clearErrors() {
    for (const f of Object.values(fields)) {
      f.removeAttribute("aria-invalid");
      showError($(f.id + "-error"), "");
    }
    showError(ui.formError, "");
  }

  // showRefusal puts the board's message on the field it names
  // ("rule.people[2]: …" on the people, "rule.escalation[1].after: …" on
  // the escalation), or on the form's error line.
  function showRefusal(e) {
    const m = /^rule\.([a-z_]+)(\[\d+\])?[.:]/.exec(e.message || "");
    const f = m && Object.hasOwn(fields, m[1]) ? fields[m[1]] : null;
    if (e.code === "invalid_argument" && f) {
      f.setAttribute("aria-invalid", "true");
      showError($(f.id + "-error"), e.message);
      f.focus();
      return;
    }
    showError(ui.formError, "The board refused (" + e.code + "): " + e.message);
  }

  function admin() {
    return board.may("admin");
  }

  // drawForm shows the form's controls for open and who is signed in.
  function drawForm() {
    const editing = open !== null && open.id !== "";
    ui.detail.hidden = open === null;
    ui.fields.disabled = !admin() || busy;
    fields.id.readOnly = editing;
    ui.buttons.hidden = false;
    ui.previewButton.hidden = !admin();
    ui.save.hidden = !admin();
    ui.del.hidden = !admin() || !editing;
    ui.newRule.hidden = !admin();
    for (const b of [ui.previewButton, ui.save, ui.del, ui.yes]) b.disabled = busy;
    fields.people.disabled = ui.fields.disabled || fields.role.value !== "people";
  }

  function close() {
    open = null;
    filled = false;
    ui.confirm.hidden = true;
    ui.preview.hidden = true;
    clearErrors();
    drawForm();
  }

  // openRule opens the form for the rule id ("" for a new one).
  function openRule(id) {
    if (open !== null && open.id === id && (filled || id !== "")) {
      drawForm();
      fill();
      return;
    }
    open = { id };
    filled = false;
    ui.confirm.hidden = true;
    ui.preview.hidden = true;
    clearErrors();
    if (id === "") {
      setFields({ agent: "", node: "*", role: "ROLE_APPROVER" });
      filled = true;
      ui.title.textContent = "New rule";
      ui.note.textContent = "A new rule takes its place in the order by how specific its patterns are.";
    } else {
      ui.title.textContent = "Rule " + id;
      ui.note.textContent = rules === null ? "Loading…" : "";
    }
    drawForm();
    fill();
    if (id === "") fields.agent.focus();
  }

  // fill puts the open rule's fields in the form once the rules are read.
  function fill() {
    if (open === null || open.id === "" || filled || rules === null) return;
    const r = rules.find((x) => x.id === open.id);
    if (!r) {
      ui.note.textContent = "";
      showError(ui.formError, "There is no rule " + open.id + ": it may have been deleted.");
      ui.buttons.hidden = true;
      return;
    }
    setFields(r);
    filled = true;
    ui.note.textContent = "Number " + (rules.indexOf(r) + 1) + " in the order." +
      (r.updatedBy ? " Last put by " + r.updatedBy + "." : "");
    drawForm();
  }

  function setFields(r) {
    fields.id.value = r.id || "";
    fields.agent.value = r.agent || "";
    fields.node.value = r.node || "";
    const people = Array.isArray(r.people) ? r.people : [];
    fields.role.value = people.length > 0 ? "people" : r.role === "ROLE_ADMIN" ? "ROLE_ADMIN" : "ROLE_APPROVER";
    fields.people.value = people.join("\n");
    fields.quorum.value = Number.isInteger(r.quorum) && r.quorum > 0 ? String(r.quorum) : "";
    const ms = parseDuration(r.timeLimit);
    fields.time_limit.value = ms > 0 ? String(ms / 60000) : "";
    requireReason.checked = Boolean(r.requireReason);
    selfApproval.checked = Boolean(r.allowSelfApproval);
    noStandingConsent.checked = Boolean(r.noStandingConsent);
    fields.standing_consent_max_amount.value = r.standingConsentMaxAmount > 0 ? String(r.standingConsentMaxAmount) : "";
    fields.escalation.value = escalationText(r.escalation);
    fields.description.value = r.description || "";
  }

  // escalationText is a rule's escalation as the form shows it: a step a
  // line, its minutes after the raise and who else may decide.
  function escalationText(steps) {
    if (!Array.isArray(steps)) return "";
    return steps.map((s) => {
      const ms = parseDuration(s.after);
      const who = Array.isArray(s.people) && s.people.length > 0 ? s.people.join(" ")
        : s.role === "ROLE_ADMIN" ? "admin" : "approver";
      return (ms > 0 ? String(ms / 60000) : "?") + " " + who;
    }).join("\n");
  }

  // escalationOfForm reads the escalation's lines as the API's steps; a
  // line the page cannot read is sent as it can, for the board to name.
  function escalationOfForm() {
    const steps = [];
    for (const line of fields.escalation.value.split("\n")) {
      const words = line.trim().split(/[\s,]+/).filter((w) => w !== "");
      if (words.length === 0) continue;
      const minutes = Number(words[0]);
      const step = { after: (Number.isFinite(minutes) ? minutes * 60 : 0) + "s" };
      const who = words.slice(1);
      if (who.length === 1 && (who[0] === "approver" || who[0] === "admin")) step.role = who[0] === "admin" ? "ROLE_ADMIN" : "ROLE_APPROVER";
      else step.people = who;
      steps.push(step);
    }
    return steps;
  }

  // ruleOfForm is the rule the form holds, as the API's JSON.
  function ruleOfForm() {
    const r = {
      agent: fields.agent.value,
      node: fields.node.value,
      requireReason: requireReason.checked,
      allowSelfApproval: selfApproval.checked,
      noStandingConsent: noStandingConsent.checked,
      description: fields.description.value,
      escalation: escalationOfForm(),
    };
    if (fields.standing_consent_max_amount.value !== "") r.standingConsentMaxAmount = Number(fields.standing_consent_max_amount.value);
    const id = fields.id.value.trim();
    if (id !== "") r.id = id;
    if (fields.role.value === "people") {
      r.people = fields.people.value.split(/[\s,]+/).filter((p) => p !== "");
    } else {
      r.role = fields.role.value;
    }
    if (fields.quorum.value !== "") r.quorum = Number(fields.quorum.value);
    if (fields.time_limit.value !== "") {
      const seconds = Number(fields.time_limit.value) * 60;
      r.timeLimit = (Number.isFinite(seconds) ? seconds : 0) + "s";
    }
    return r;
  }

  // act runs one call of the form, busy meanwhile, errors on their field.
  async function act(f) {
    if (busy || cred === null) return;
    const gen = board.generation();
    busy = true;
    clearErrors();
    drawForm();
    try {
      await f();
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showRefusal(e);
    } finally {
      if (board.current(gen)) {
        busy = false;
        drawForm();
      }
    }
  }

  // governedWords is who governs a node today and whether this rule would.
  function governedWords(m, editing) {
    const today = m.governedBy ? (m.governedBy === editing ? "this rule" : "rule " + m.governedBy) : "no rule";
    if (m.wouldGovern) return "today: " + today + "; would be: this rule";
    if (m.governedBy && m.governedBy !== editing) return "kept by " + m.governedBy;
    return "kept by an earlier rule";
  }

  function showPreview(res, editing) {
    const agents = Array.isArray(res.agents) ? res.agents : [];
    const matches = Array.isArray(res.matches) ? res.matches : [];
    ui.previewAgentsNote.textContent = agents.length === 0
      ? "The agent pattern matches no agent the board knows."
      : "The agent pattern matches " + count(agents.length, "agent", "agents") + (res.agentsTruncated ? " and more" : "") + ":";
    ui.previewAgents.replaceChildren(...agents.map((a) => node("li", "tag", a)));
    ui.previewNote.textContent = matches.length === 0
      ? "No approval in the last 30 days came from a node it matches."
      : "Nodes approvals came from in the last 30 days" + (res.matchesTruncated ? " (the first " + count(matches.length, "node", "nodes") + ")" : "") + ":";
    ui.previewRows.replaceChildren(...matches.map((m) => {
      const tr = node("tr");
      tr.dataset.agent = m.agent || "";
      tr.dataset.node = m.node || "";
      tr.dataset.would = m.wouldGovern ? "true" : "false";
      tr.append(node("td", "agent", m.agent || ""), node("td", "node", m.node || ""),
        node("td", "count", String(m.approvals || 0)), node("td", "governed", governedWords(m, editing)));
      return tr;
    }));
    ui.preview.hidden = false;
  }

  ui.newRule.addEventListener("click", () => {
    if (board.ruleOfHash() !== "") history.pushState(null, "", "#rules");
    openRule("");
  });
  ui.cancel.addEventListener("click", () => {
    if (board.ruleOfHash() !== "") location.hash = "#rules";
    else close();
  });
  fields.role.addEventListener("change", drawForm);
  ui.previewButton.addEventListener("click", () => act(async () => {
    const editing = open ? open.id : "";
    const res = await unary(cred, APPROVALS + "PreviewRule", { rule: ruleOfForm() });
    showPreview(res || {}, editing);
  }));
  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    act(async () => {
      await unary(cred, APPROVALS + "PutRule", { rule: ruleOfForm() });
      close();
      if (board.ruleOfHash() !== "") location.hash = "#rules";
      reread();
    });
  });
  ui.del.addEventListener("click", () => {
    ui.confirm.hidden = false;
    ui.yes.focus();
  });
  ui.no.addEventListener("click", () => {
    ui.confirm.hidden = true;
    ui.del.focus();
  });
  ui.yes.addEventListener("click", () => act(async () => {
    if (open === null || open.id === "") return;
    await unary(cred, APPROVALS + "DeleteRule", { id: open.id });
    close();
    if (board.ruleOfHash() !== "") location.hash = "#rules";
    reread();
  }));

  board.part({
    reset,
    run(gen, c) {
      cred = c;
      poll(gen, c);
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
      cred = null;
      if (nap.wake) nap.wake();
    },
    wake() {
      if (nap.wake) nap.wake();
    },
    shown(view) {
      if (view !== "rules") return;
      const id = board.ruleOfHash();
      if (id !== "") openRule(id);
      else if (open !== null && open.id !== "") close();
      if (nap.wake) nap.wake();
    },
    role() {
      drawForm();
      render();
    },
  });
  drawForm();
})();
