// The audit view, for admins (the board lets only them read the log): the
// audit log newest first (ListAudit with newest_first), PAGE entries at a
// time, "More" for the next page. Its filters — actor, kind (an action, or
// a prefix ending in "."), object (the subject) and a time range — are kept
// in the address ("#audit?actor=ana&kind=approval."), so a reload or a
// link shows the same entries. An entry's object links to its page where
// the board has one. "Verify chain" asks the board to check the whole chain
// (VerifyAudit) and names the first bad entry; "Export" downloads the
// entries the filters pick, newest first, as JSON lines (one entry as the
// API gives it a line), read page by page up to EXPORT_MAX. Everything from
// the board is drawn as text. The view holds up to board.LIST_MAX entries.
"use strict";

(function () {
  const { $, unary, readPage, count, node, showError, signOut, refusal, localInput, isoOfInput, LIST_MAX } = board;
  const AUDIT = "/symphonix.board.v1.AuditService/";
  const PAGE = 50; // entries a page of the view
  const EXPORT_PAGE = 1000; // entries a page of an export (the most ListAudit sends)
  const EXPORT_MAX = 10000; // the most entries one export holds (docs/limits.md)
  const FILTERS = ["actor", "kind", "object", "since", "until"];
  // The request field of each filter, and the filter of each field the
  // board names in an invalid_argument.
  const FIELD = { actor: "actor", kind: "action", object: "subject", since: "since", until: "until" };

  const ui = {
    view: $("audit"),
    form: $("audit-filters"),
    clear: $("audit-clear"),
    verify: $("audit-verify"),
    verifyResult: $("audit-verify-result"),
    exportButton: $("audit-export"),
    exportStatus: $("audit-export-status"),
    error: $("audit-error"),
    loading: $("audit-loading"),
    empty: $("audit-empty"),
    wrap: $("audit-wrap"),
    rows: $("audit-rows"),
    more: $("audit-more"),
    full: $("audit-full"),
  };
  const inputs = {};
  const fieldErrors = {};
  for (const f of FILTERS) {
    inputs[f] = $("audit-" + f);
    fieldErrors[f] = $("audit-" + f + "-error");
  }

  let gen = -1; // the generation the view reads for
  let cred = null;
  let controller = null; // aborts the read under way
  let loaded = null; // the filters (as auditHref gives them) the rows are of, or null
  let next = ""; // the token of the page after the rows shown
  let entries = []; // the rows shown

  function say(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  function reset() {
    if (controller) controller.abort();
    controller = null;
    loaded = null;
    next = "";
    entries = [];
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    ui.full.hidden = true;
    showError(ui.error, "");
    say(ui.verifyResult, "");
    say(ui.exportStatus, "");
    clearFieldErrors();
  }

  function clearFieldErrors() {
    for (const f of FILTERS) {
      inputs[f].removeAttribute("aria-invalid");
      showError(fieldErrors[f], "");
    }
  }

  // ---- filters: the address, the form and the request ----

  // filtersOfForm is the filters the form holds.
  function filtersOfForm() {
    return {
      actor: inputs.actor.value.trim(),
      kind: inputs.kind.value.trim(),
      object: inputs.object.value.trim(),
      since: isoOfInput(inputs.since.value),
      until: isoOfInput(inputs.until.value),
    };
  }

  // fill puts filters into the form.
  function fill(filters) {
    inputs.actor.value = filters.actor || "";
    inputs.kind.value = filters.kind || "";
    inputs.object.value = filters.object || "";
    inputs.since.value = localInput(filters.since);
    inputs.until.value = localInput(filters.until);
  }

  // request is the ListAudit request of filters, newest first.
  function request(filters) {
    const r = { newestFirst: true };
    for (const f of FILTERS) if (filters[f]) r[FIELD[f]] = filters[f];
    return r;
  }

  // filtersOfHash is the address's filters, only those the view knows.
  function filtersOfHash() {
    const h = board.auditOfHash() || {};
    const out = {};
    for (const f of FILTERS) out[f] = typeof h[f] === "string" ? h[f] : "";
    return out;
  }

  // ---- the list ----

  // hrefOf is the page of the object an entry is about, or "" when the
  // board has none for it.
  function hrefOf(e) {
    const s = e.subject || "";
    const kind = e.action || "";
    if (s === "") return "";
    if (kind.startsWith("approval.")) return board.approvalHref(s);
    if (kind.startsWith("rule.")) return board.ruleHref(s);
    if (kind === "agent.forget" || kind.startsWith("tools.")) return board.agentHref(s);
    if (kind.startsWith("package.") && !kind.startsWith("package.key.") && !kind.startsWith("package.scope.")) {
      const at = s.lastIndexOf("@");
      return board.packageHref(at > 0 ? s.slice(0, at) : s);
    }
    return "";
  }

  function row(e) {
    const tr = node("tr");
    tr.dataset.seq = String(e.seq);
    tr.dataset.action = e.action || "";
    const seq = node("th", "seq", String(e.seq));
    seq.scope = "row";
    const when = node("td", "when");
    const t = node("time", "", e.recordTime ? new Date(e.recordTime).toLocaleString() : "");
    if (e.recordTime) t.dateTime = e.recordTime;
    when.append(t);
    const subject = node("td", "subject");
    const href = hrefOf(e);
    if (href) {
      const a = node("a", "subject-link", e.subject);
      a.href = href;
      subject.append(a);
    } else if (e.subject) {
      subject.append(node("span", "", e.subject));
    } else {
      subject.append(board.none());
    }
    const detail = node("td", "detail");
    const d = e.detail && Object.keys(e.detail).length > 0 ? JSON.stringify(e.detail) : "";
    if (d) detail.append(node("code", "", d));
    tr.append(seq, when, node("td", "actor", e.actor || ""), node("td", "action", e.action || ""), subject, detail);
    return tr;
  }

  function render() {
    ui.loading.hidden = true;
    ui.rows.replaceChildren(...entries.map(row));
    ui.wrap.hidden = entries.length === 0;
    ui.empty.hidden = entries.length > 0;
    const full = entries.length >= LIST_MAX && next !== "";
    ui.more.hidden = next === "" || full;
    ui.full.textContent = full ? "This page shows the newest " + count(LIST_MAX, "entry", "entries") +
      " these filters pick: narrow them, or export." : "";
    ui.full.hidden = !full;
  }

  // failed shows an error of a call made for g: an ended session signs the
  // page out; a filter the board refused is shown on its field.
  function failed(g, e, what) {
    if (e.name === "AbortError" || !board.current(g)) return;
    if (e.code === "unauthenticated") {
      signOut(refusal(e));
      return;
    }
    if (e.code === "invalid_argument") {
      for (const f of FILTERS) {
        if (e.message.startsWith(FIELD[f] + ":")) {
          inputs[f].setAttribute("aria-invalid", "true");
          showError(fieldErrors[f], e.message);
        }
      }
    }
    showError(ui.error, "Could not " + what + " (" + e.code + "): " + e.message);
  }

  // load reads the first page of the address's filters, or, with more, the
  // page after the rows shown.
  async function load(more) {
    if (gen < 0 || !board.current(gen)) return;
    const g = gen;
    const filters = filtersOfHash();
    const key = board.auditHref(filters);
    if (controller) controller.abort();
    const ctl = new AbortController();
    controller = ctl;
    if (!more) {
      loaded = key;
      next = "";
      entries = [];
      fill(filters);
      clearFieldErrors();
      ui.loading.hidden = false;
      ui.wrap.hidden = true;
      ui.empty.hidden = true;
      ui.more.hidden = true;
    }
    ui.more.disabled = true;
    try {
      const page = await readPage(cred, AUDIT + "ListAudit", request(filters), "entries", PAGE, more ? next : "", ctl.signal);
      if (!board.current(g) || loaded !== key) return;
      const items = page.items.filter((e) => e && (typeof e.seq === "string" || typeof e.seq === "number"));
      entries = entries.concat(items.slice(0, LIST_MAX - entries.length));
      next = page.next;
      showError(ui.error, "");
      render();
    } catch (e) {
      if (!more) ui.loading.hidden = true;
      failed(g, e, "read the audit log");
    } finally {
      ui.more.disabled = false;
      if (controller === ctl) controller = null;
    }
  }

  // ---- verify and export ----

  async function verify() {
    const g = gen;
    ui.verify.disabled = true;
    say(ui.verifyResult, "Verifying the chain…");
    delete ui.verifyResult.dataset.ok;
    try {
      const r = await unary(cred, AUDIT + "VerifyAudit", {});
      if (!board.current(g)) return;
      const n = Number(r.entries || 0);
      const pending = Number(r.pending || 0);
      let text;
      if (r.ok) {
        text = "Chain intact: " + count(n, "entry", "entries") + " checked." + (r.head ? " Head: " + r.head : "");
      } else if (r.badSeq) {
        text = "Chain broken at entry " + r.badSeq + ": " + (r.why || "bad") + ". The " +
          count(n, "entry", "entries") + " before it " + (n === 1 ? "is" : "are") + " good.";
      } else {
        text = "Chain broken at an entry not yet chained (row " + r.badRow + "): " + (r.why || "bad") + ".";
      }
      if (pending > 0) text += " " + count(pending, "entry", "entries") + " not yet chained (their content checked).";
      ui.verifyResult.dataset.ok = r.ok ? "true" : "false";
      ui.verifyResult.dataset.bad = r.badSeq ? String(r.badSeq) : "";
      say(ui.verifyResult, text);
      for (const tr of ui.rows.children) {
        if (r.badSeq && tr.dataset.seq === String(r.badSeq)) tr.dataset.bad = "true";
        else delete tr.dataset.bad;
      }
    } catch (e) {
      say(ui.verifyResult, "");
      failed(g, e, "verify the chain");
    } finally {
      ui.verify.disabled = false;
    }
  }

  // exportLines downloads the entries the address's filters pick as JSON
  // lines, reading EXPORT_PAGE at a time, up to EXPORT_MAX.
  async function exportLines() {
    const g = gen;
    const filters = filtersOfHash();
    ui.exportButton.disabled = true;
    say(ui.exportStatus, "Exporting…");
    const lines = [];
    let cut = false;
    try {
      let token = "";
      for (;;) {
        const page = await readPage(cred, AUDIT + "ListAudit", request(filters), "entries", EXPORT_PAGE, token);
        if (!board.current(g)) return;
        for (const e of page.items) {
          if (lines.length === EXPORT_MAX) {
            cut = true;
            break;
          }
          lines.push(JSON.stringify(e));
        }
        if (cut || page.next === "") break;
        if (lines.length === EXPORT_MAX) {
          cut = true;
          break;
        }
        token = page.next;
      }
      const blob = new Blob(lines.map((l) => l + "\n"), { type: "application/x-ndjson" });
      const a = document.createElement("a");
      a.href = URL.createObjectURL(blob);
      a.download = "audit.jsonl";
      a.hidden = true;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      say(ui.exportStatus, "Exported " + count(lines.length, "entry", "entries") + " to audit.jsonl" +
        (cut ? ": the first " + count(EXPORT_MAX, "entry", "entries") + ", newest first; narrow the filters for the rest." : "."));
    } catch (e) {
      say(ui.exportStatus, "");
      failed(g, e, "export the audit log");
    } finally {
      ui.exportButton.disabled = false;
    }
  }

  // ---- wiring ----

  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const href = board.auditHref(filtersOfForm());
    if (location.hash === href) load(false); // the same filters: read again
    else location.hash = href; // the view reads them when shown
  });
  ui.clear.addEventListener("click", () => {
    fill({});
    if (location.hash === "#audit") load(false);
    else location.hash = "#audit";
  });
  ui.more.addEventListener("click", () => load(true));
  ui.verify.addEventListener("click", verify);
  ui.exportButton.addEventListener("click", exportLines);

  // auditRow draws one entry as this view's table does: the person's page
  // (person.js) shows their entries the same way.
  board.auditRow = row;

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
      if (view !== "audit" || gen < 0) return;
      if (board.auditHref(filtersOfHash()) !== loaded) load(false);
    },
    role() {
      ui.verify.hidden = !board.may("admin");
    },
  });
})();
