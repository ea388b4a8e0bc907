// An agent's triggers, on its page ("#agent/<name>"): each schedule or
// webhook the agent reports — its id, kind, the schedule in words with its
// time zone or the webhook's method and path, its next run (or "cannot
// tell"), its latest occurrence (when, ok / failed / skipped, a link to the
// run, where the delivery of its result stands) and whether an operator
// paused it (who, why) — with, for admins, Pause (which asks why) and
// Resume. Shown for agents that announce the "triggers" capability.
//
// The triggers come from ListTriggers, read when the page opens, every
// READ_MS while it is shown, and after a pause or resume. Everything an
// agent reports is shown as text, never as markup.
"use strict";

(function () {
  const { $, unary, readAll, node, none, parseTime, showError, signOut, refusal, runHref } = board;
  const TRIGGERS = "/symphonix.board.v1.TriggerService/";
  const READ_MS = 10000; // how often the list is read again while shown
  const REASON_MAX = 1024; // bytes, as the board counts them

  const ui = {
    box: $("triggers"),
    note: $("triggers-note"),
    error: $("triggers-error"),
    wrap: $("triggers-wrap"),
    rows: $("trigger-rows"),
    status: $("triggers-status"),
  };

  let agent = null; // the agent shown, as its page last said
  let list = []; // its triggers, as the board last said
  let readAt = 0; // when the list was last read
  let reading = false;
  let seq = 0; // counts the agents shown: an answer for an earlier one is dropped
  let asking = ""; // the trigger whose Pause asks for a reason, or ""
  let busy = false; // a pause or resume is on its way
  let denied = false; // the board refused a pause or resume as not allowed

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function reset() {
    seq++;
    agent = null;
    list = [];
    readAt = 0;
    reading = false;
    asking = "";
    busy = false;
    denied = false;
    ui.box.hidden = true;
    ui.rows.replaceChildren();
    showError(ui.error, "");
    say("");
  }

  function announces(a) {
    return Array.isArray(a.capabilities) && a.capabilities.includes("triggers");
  }

  async function read() {
    if (!agent || reading) return;
    const s = seq;
    const gen = board.generation();
    reading = true;
    try {
      const res = await readAll(board.token(), TRIGGERS + "ListTriggers", { agent: agent.name }, "triggers");
      if (s !== seq || !board.current(gen)) return;
      list = res.items.filter((t) => t && t.agent === agent.name && t.trigger);
      readAt = Date.now();
      showError(ui.error, "");
    } catch (e) {
      if (s !== seq || !board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, "Could not read the agent's triggers (" + e.code + "): " + e.message + ".");
    } finally {
      if (s === seq) reading = false;
    }
    draw();
  }

  // when is when a trigger occurs, in words: a schedule with its zone, or
  // a webhook's method and path.
  function when(t) {
    const kind = enums.triggerKind.word(t.kind);
    if (kind === "schedule") {
      const words = t.description || t.schedule || "";
      const el = node("span", "trigger-when", words + (t.timeZone ? " (" + t.timeZone + ")" : ""));
      if (t.schedule && t.description && t.description !== t.schedule) el.title = t.schedule;
      return el;
    }
    if (kind === "webhook") {
      const el = node("code", "trigger-when", ((t.method || "") + " " + (t.path || "")).trim());
      if (t.signed) el.title = "requires a signed request";
      return el;
    }
    return none();
  }

  function nextRun(at, now) {
    const t = at.trigger;
    if (enums.triggerKind.word(t.kind) !== "schedule") return none();
    if (at.pause && at.pause.paused) return node("span", "none", "paused");
    if (!at.online) return node("span", "none", "not running: the agent is offline");
    const ms = parseTime(t.nextRunTime);
    if (Number.isNaN(ms)) return node("span", "none", "cannot tell");
    return runs.time(t.nextRunTime, now);
  }

  function last(at, now) {
    const o = at.trigger.last;
    if (!o) return node("span", "none", "not yet");
    const span = node("span", "trigger-last");
    const outcome = !o.runId ? "skipped" : o.ok ? "ok" : "failed";
    span.dataset.outcome = outcome;
    span.append(runs.time(o.time, now), document.createTextNode(" "),
      node("span", "badge occurrence " + (outcome === "ok" ? "ok" : outcome === "failed" ? "error" : "unknown"), outcome));
    if (o.runId) {
      const a = node("a", "trigger-run", o.runId);
      a.href = runHref(at.agent, o.runId);
      span.append(document.createTextNode(" "), a);
    }
    const d = runs.delivery(o.delivery);
    if (d !== "") span.append(document.createTextNode("; "), node("span", "trigger-delivery", d));
    if (o.error) {
      const err = node("span", "run-error", " " + runs.cut(o.error, 160));
      err.title = o.error;
      span.append(err);
    }
    return span;
  }

  function pausedCell(at) {
    const p = at.pause;
    if (!p || !p.paused) return node("span", "none", "no");
    return node("span", "trigger-paused", "paused by " + (p.by || "someone") + ": " + (p.reason || ""));
  }

  function actions(at) {
    const td = node("td", "trigger-actions");
    if (!board.may("admin") || denied) return td;
    const id = at.trigger.id;
    if (at.pause && at.pause.paused) {
      const b = node("button", "resume-trigger", "Resume");
      b.type = "button";
      b.disabled = busy;
      b.addEventListener("click", () => send("ResumeTrigger", id, ""));
      td.append(b);
      return td;
    }
    if (asking !== id) {
      const b = node("button", "danger pause-trigger", "Pause");
      b.type = "button";
      b.disabled = busy;
      b.addEventListener("click", () => {
        asking = id;
        draw();
        const input = ui.rows.querySelector("input.trigger-reason");
        if (input) input.focus();
      });
      td.append(b);
      return td;
    }
    const form = node("form", "form inline trigger-pause-form");
    form.noValidate = true;
    const label = node("label", "", "Why pause " + id);
    const input = node("input", "trigger-reason");
    input.type = "text";
    input.autocomplete = "off";
    input.maxLength = REASON_MAX;
    input.id = "trigger-reason";
    label.htmlFor = input.id;
    const ok = node("button", "danger", "Pause");
    ok.type = "submit";
    ok.disabled = busy;
    const cancel = node("button", "plain", "Cancel");
    cancel.type = "button";
    cancel.addEventListener("click", () => {
      asking = "";
      draw();
    });
    form.append(label, input, ok, cancel);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const reason = input.value.trim();
      if (reason === "") {
        input.setAttribute("aria-invalid", "true");
        showError(ui.error, "Say why you pause " + id + ": the reason is kept in the audit log and shown to other operators.");
        return;
      }
      if (new TextEncoder().encode(reason).length > REASON_MAX) {
        input.setAttribute("aria-invalid", "true");
        showError(ui.error, "The reason is too long: at most " + REASON_MAX + " bytes.");
        return;
      }
      send("PauseTrigger", id, reason);
    });
    td.append(form);
    return td;
  }

  async function send(method, id, reason) {
    if (!agent || busy) return;
    const s = seq;
    const gen = board.generation();
    busy = true;
    showError(ui.error, "");
    say("");
    draw();
    const req = { agent: agent.name, triggerId: id };
    if (method === "PauseTrigger") req.reason = reason;
    try {
      const res = await unary(board.token(), TRIGGERS + method, req);
      if (s !== seq || !board.current(gen)) return;
      asking = "";
      const what = method === "PauseTrigger" ? "paused" : "resumed";
      say("Trigger " + id + " " + what + "; " + (res.pushed
        ? "the agent was told now."
        : "the agent is told when it next connects."));
    } catch (e) {
      if (s !== seq || !board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "permission_denied") denied = true;
      showError(ui.error, "Could not " + (method === "PauseTrigger" ? "pause" : "resume") + " " + id +
        " (" + e.code + "): " + e.message + ".");
    } finally {
      if (s === seq) busy = false;
    }
    await read();
  }

  function row(at, now) {
    const t = at.trigger;
    const tr = node("tr", "trigger");
    tr.dataset.trigger = t.id;
    tr.dataset.paused = String(Boolean(at.pause && at.pause.paused));
    const th = node("th");
    th.scope = "row";
    th.append(node("code", "trigger-id", t.id));
    const cell = (child, className) => {
      const td = node("td", className);
      td.append(child);
      return td;
    };
    tr.append(th,
      cell(document.createTextNode(enums.triggerKind.word(t.kind) || "no longer reported"), "trigger-kind"),
      cell(when(t), "trigger-when-cell"),
      cell(nextRun(at, now), "trigger-next"),
      cell(last(at, now), "trigger-last-cell"),
      cell(pausedCell(at), "trigger-paused-cell"),
      actions(at));
    return tr;
  }

  function draw() {
    if (!agent) return;
    const able = announces(agent);
    ui.box.hidden = !able && list.length === 0;
    if (ui.box.hidden) return;
    const now = Date.now();
    // A reason being written survives the redraw.
    const old = ui.rows.querySelector("input.trigger-reason");
    const draft = old ? old.value : null;
    const focused = old !== null && old === document.activeElement;
    ui.note.textContent = list.length === 0
      ? "It reports no triggers."
      : "As the agent last reported them. Pausing a trigger stops it from starting runs until it is resumed; " +
        "pausing the agent itself (above) is separate." + (board.may("admin") && !denied ? "" : " Only admins may pause or resume a trigger.");
    ui.rows.replaceChildren(...list.map((at) => row(at, now)));
    ui.wrap.hidden = list.length === 0;
    const input = ui.rows.querySelector("input.trigger-reason");
    if (input && draft !== null) {
      input.value = draft;
      if (focused) input.focus();
    }
  }

  board.onAgentPage((a) => {
    if (a === null) {
      reset();
      return;
    }
    if (agent && agent.name !== a.name) reset();
    agent = a;
    if (!announces(a)) {
      draw();
      return;
    }
    if (asking === "" && Date.now() - readAt >= READ_MS) read();
    else draw();
  });

  board.part({
    reset,
    run() {},
    stop() {},
    wake() {
      if (agent) read();
    },
    role() {
      if (agent) draw();
    },
  });
})();
