// One run's page, "#run/<agent>/<id>" (board.runHref): what started it,
// where it stands, its steps as a timeline, what it spent, and, for
// admins, stopping it while it runs.
//
// The run comes from GetRun, with its steps; a WatchRuns for the run
// (runs.follow) then brings each step as the agent takes it, and each
// pause, resume and end, without a reload. Live steps are not queued for
// a page that falls behind: when a step's place shows one was missed, when
// the watch begins again, and when the run pauses or ends, the run is read
// again with GetRun, which has every step the board keeps and, once it
// paused or ended, its input and output. Each read also reads the tree of
// delegations the run belongs to (runtree.js).
"use strict";

(function () {
  const { $, unary, node, none, parseTime, parseDuration, showError, signOut, refusal, agentHref, approvalHref, runOfHash } = board;
  const STEPS_MAX = 1000; // steps the page holds, as the board keeps them (docs/limits.md)
  const REASON_MAX = 512; // bytes of a stop's reason, as the board counts them
  const TICK_MS = 1000; // how often a running run's clock moves on while shown

  const ui = {
    section: $("run"),
    back: $("run-back"),
    id: $("run-id"),
    agent: $("run-agent"),
    error: $("run-error"),
    watch: $("run-watch"),
    loading: $("run-loading"),
    body: $("run-body"),
    facts: $("run-facts"),
    trigger: $("run-trigger"),
    waits: $("run-waits"),
    failure: $("run-failure"),
    failureText: $("run-failure-text"),
    stopBox: $("stop-box"),
    stopReadOnly: $("stop-readonly"),
    stopUnable: $("stop-unable"),
    stopForm: $("stop-form"),
    stopReason: $("stop-reason"),
    stopButton: $("stop-button"),
    stopError: $("stop-error"),
    stopStatus: $("stop-status"),
    stepsSummary: $("steps-summary"),
    steps: $("steps"),
    stepsNote: $("steps-note"),
    inputNote: $("run-input-note"),
    input: $("run-input"),
    outputNote: $("run-output-note"),
    output: $("run-output"),
  };

  let shown = null; // {agent, id} of the run shown, or null
  let run = null; // the run as the board last said, without its steps
  let truncated = false; // the board left steps out
  const steps = new Map(); // seq -> RunStep
  const items = new Map(); // seq -> {key, li}: steps drawn, redrawn only when they change
  let watch = null; // the run's watch (runs.follow), while its page is shown
  let seq = 0; // counts the runs opened: an answer for an earlier one is dropped
  let controller = null; // aborts GetRun
  let reading = false; // a GetRun is on its way
  let readAgain = false; // read again once it is back
  let stopping = false; // a StopRun is on its way
  let denied = false; // the board refused a StopRun as not allowed
  let stopAsked = false; // a StopRun went through for the run shown

  function sayStop(message) {
    ui.stopStatus.textContent = message || "";
    ui.stopStatus.hidden = !message;
  }

  function clear() {
    seq++;
    if (watch) watch.stop();
    watch = null;
    if (controller) controller.abort();
    controller = null;
    shown = null;
    run = null;
    truncated = false;
    steps.clear();
    items.clear();
    reading = false;
    readAgain = false;
    stopping = false;
    denied = false;
    stopAsked = false;
    ui.id.textContent = "";
    ui.agent.textContent = "";
    ui.steps.replaceChildren();
    runTree.clear();
    ui.body.hidden = true;
    ui.loading.hidden = false;
    ui.stopReason.value = "";
    ui.stopReason.removeAttribute("aria-invalid");
    showError(ui.error, "");
    showError(ui.watch, "");
    showError(ui.stopError, "");
    sayStop("");
  }

  // open shows the run r ({agent, id}): the one shown already, or another
  // read from the board and watched.
  function open(r) {
    if (r === null) {
      clear();
      showError(ui.error, "This address names no run.");
      ui.loading.hidden = true;
      return;
    }
    if (shown && shown.agent === r.agent && shown.id === r.id && watch) {
      render();
      return;
    }
    clear();
    shown = r;
    ui.id.textContent = r.id;
    ui.agent.textContent = r.agent;
    ui.back.href = agentHref(r.agent);
    ui.back.textContent = "Agent " + r.agent;
    const s = seq;
    const gen = board.generation();
    watch = runs.follow({ agent: r.agent, run: r.id }, {
      before: (signal) => read(s, gen, signal),
      synced: (list) => {
        if (stale(s, gen)) return;
        const now = list.find((x) => x.id === r.id) || null;
        if (now && run === null) showError(ui.error, "");
        if (now) take(now);
        // Not in the snapshot while the page holds it as running or
        // paused: it ended meanwhile. A step missed: read it again.
        if ((!now && run && !runs.ended(run)) || missed()) reread(s, gen);
        render();
      },
      event: (kind, msg) => {
        if (stale(s, gen) || msg.run.id !== r.id) return;
        const first = run === null;
        take(msg.run);
        if (first) {
          showError(ui.error, "");
          reread(s, gen);
        }
        if (kind === "step" && msg.step) addStep(msg.step);
        if (kind === "paused" || kind === "ended" || missed()) reread(s, gen);
        render();
      },
      broken: (message, final) => {
        if (stale(s, gen)) return;
        showError(ui.watch, message);
        if (final && !run) ui.loading.hidden = true;
      },
    });
  }

  function stale(s, gen) {
    return s !== seq || !board.current(gen);
  }

  // read reads the run with its steps, before each watch. A run the board
  // does not know is watched all the same: one just started may not have
  // reached it yet, and its start then comes by the watch.
  async function read(s, gen, signal) {
    try {
      const res = await unary(board.token(), runs.RUNS + "GetRun", { agent: shown.agent, id: shown.id }, signal);
      if (stale(s, gen)) return;
      got(res && res.run);
      showError(ui.error, "");
      render();
      runTree.load(shown);
    } catch (e) {
      if (e.name === "AbortError" || stale(s, gen) || e.code !== "not_found") throw e;
      if (run) return; // heard of by the watch meanwhile
      ui.loading.hidden = true;
      showError(ui.error, "The board has no run " + shown.id + " of the agent " + shown.agent +
        " (not yet, or not at all): this page shows it if it starts. A run the agent never reported, " +
        "or dropped before the board could keep it, is not on the board.");
    }
  }

  // reread reads the run again, once at a time: a step was missed, or it
  // paused or ended and the board now holds it in full.
  async function reread(s, gen) {
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    const ctl = new AbortController();
    controller = ctl;
    try {
      const res = await unary(board.token(), runs.RUNS + "GetRun", { agent: shown.agent, id: shown.id }, ctl.signal);
      if (stale(s, gen)) return;
      got(res && res.run);
      render();
      runTree.load(shown);
    } catch (e) {
      if (e.name === "AbortError" || stale(s, gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      // The watch goes on; its next pause, end or gap reads again.
    } finally {
      if (!stale(s, gen)) {
        reading = false;
        if (readAgain) {
          readAgain = false;
          reread(s, gen);
        }
      }
    }
  }

  // got takes the run GetRun gave, with its steps.
  function got(r) {
    if (!runs.valid(r)) return;
    const list = Array.isArray(r.steps) ? r.steps : [];
    const copy = Object.assign({}, r);
    delete copy.steps;
    take(copy, true);
    truncated = Boolean(r.stepsTruncated);
    for (const st of list) addStep(st, true);
  }

  // take keeps what the board said of the run, unless what the page has
  // says more (runs.newer); stored is GetRun's word, taken over the
  // watch's when both ended.
  function take(r, stored) {
    if (!runs.valid(r)) return;
    if (run && !stored && !runs.newer(run, r)) return;
    if (run && stored && !runs.ended(r) && runs.ended(run)) return;
    run = r;
  }

  // addStep keeps one step: a finished step is never replaced by the same
  // step still running (an older word of it).
  function addStep(st, stored) {
    if (!st || !Number.isInteger(st.seq) || st.seq < 1) return;
    const had = steps.get(st.seq);
    if (had && runs.outcome(had) !== "running" && runs.outcome(st) === "running") return;
    if (had && !stored && JSON.stringify(had) === JSON.stringify(st)) return;
    steps.set(st.seq, st);
    if (steps.size > STEPS_MAX) {
      const first = Math.min(...steps.keys());
      steps.delete(first);
      truncated = true;
    }
  }

  // missed says whether the run has taken steps the page has not heard of.
  function missed() {
    if (!run || truncated) return false;
    const most = steps.size === 0 ? 0 : Math.max(...steps.keys());
    return runs.int(run.stepCount) > most || most > steps.size;
  }

  // ---- drawing ----

  function render() {
    if (!run || !shown) return;
    ui.loading.hidden = true;
    ui.body.hidden = false;
    const now = Date.now();
    drawTrigger(now);
    drawFacts(now);
    drawWaits();
    drawStop();
    drawSteps(now);
    drawValue(run.input, "input", ui.input, ui.inputNote);
    drawValue(run.output, "output", ui.output, ui.outputNote);
  }

  // endOf is when the run ended, or now while it has not.
  function endOf(now) {
    const end = parseTime(run.endTime);
    return Number.isNaN(end) ? now : end;
  }

  // drawTrigger shows, above everything else, why the run exists when a
  // trigger started it: which, of what kind, when it occurred, and where
  // the delivery of its result stands. Text only: ids and paths come from
  // agents.
  function drawTrigger(now) {
    const t = run.trigger;
    if (!t || !t.triggerId) {
      ui.trigger.hidden = true;
      ui.trigger.replaceChildren();
      return;
    }
    const kind = enums.triggerKind.word(t.kind) || "unknown kind";
    const parts = [document.createTextNode("Started by trigger "), node("strong", "trigger-id", t.triggerId),
      document.createTextNode(" (" + kind + ")")];
    if (kind === "webhook" && (t.method || t.path)) {
      parts.push(document.createTextNode(" on "), node("code", "trigger-request", ((t.method || "") + " " + (t.path || "")).trim()));
    }
    parts.push(document.createTextNode(" at "), runs.time(t.occurrenceTime, now));
    const d = runs.delivery(t.delivery, t.deliveryAttempts);
    if (d !== "") parts.push(document.createTextNode("; "), node("span", "trigger-delivery", d));
    parts.push(document.createTextNode("."));
    ui.trigger.replaceChildren(...parts);
    ui.trigger.dataset.trigger = t.triggerId;
    ui.trigger.hidden = false;
  }

  function drawFacts(now) {
    const w = runs.state(run);
    ui.section.dataset.state = w;
    const fact = (term, value) => {
      const dd = node("dd");
      dd.dataset.fact = term;
      dd.append(value === "" ? none() : typeof value === "string" ? document.createTextNode(value) : value);
      return [node("dt", "", term), dd];
    };
    const agentLink = node("a", "", run.agent || shown.agent);
    agentLink.href = agentHref(shown.agent);
    let took = runs.took(run.duration);
    if (took !== "") took += " in its steps" + (runs.ended(run) ? "" : " so far");
    const build = run.build ? node("code", "build-full", run.build) : "";
    ui.facts.replaceChildren(
      ...fact("state", runs.badge(run)),
      ...fact("agent", agentLink),
      ...fact("started by", runs.startedBy(run)),
      ...fact("thread", run.thread || ""),
      ...fact("started", runs.time(run.startTime, now)),
      ...fact("ended", runs.ended(run) ? runs.time(run.endTime, now) : node("span", "none", "not yet")),
      ...fact("took", took),
      ...fact("steps", String(runs.int(run.stepCount))),
      ...fact("tokens", runs.tokens(run.tokens)),
      ...fact("build", build),
    );
  }

  // drawWaits says what a paused run waits for, with a link to its
  // approval, and why a failed one failed.
  function drawWaits() {
    const w = runs.state(run);
    if (w === "paused") {
      const p = runs.pauseKind(run);
      const at = run.pausedAt ? [document.createTextNode(" at the node "), node("code", "", run.pausedAt)] : [];
      const parts = [node("strong", "", "Paused")];
      if (p === "approval") {
        parts.push(document.createTextNode(", waiting for an approval"), ...at);
        if (run.approvalId) {
          const a = node("a", "approval-link", "the approval");
          a.href = approvalHref(run.approvalId);
          parts.push(document.createTextNode(": see "), a, document.createTextNode("."));
        } else {
          parts.push(document.createTextNode(": the agent has not raised it on the board yet."));
        }
      } else if (p === "ask") {
        parts.push(document.createTextNode(", waiting for an answer to its question"), ...at,
          document.createTextNode(" in the conversation" + (run.thread ? " " + run.thread : "") + "."));
      } else {
        parts.push(document.createTextNode(", waiting for a person"), ...at, document.createTextNode("."));
      }
      ui.waits.replaceChildren(...parts);
      ui.waits.hidden = false;
    } else {
      ui.waits.replaceChildren();
      ui.waits.hidden = true;
    }
    const failed = w === "failed" || (w === "stopped" && run.error);
    ui.failure.firstElementChild.textContent = w === "stopped" ? "It was stopped:" : "It failed:";
    ui.failureText.textContent = failed ? run.error || "the agent did not say why." : "";
    ui.failure.hidden = !failed;
  }

  // drawStop offers Stop to admins while the run runs, on an agent that
  // announces "fire".
  function drawStop() {
    const running = runs.state(run) === "running";
    const a = board.agentNamed(shown.agent);
    const able = !a || health.announces(a, "fire"); // an agent the page does not hold: the board decides
    const admin = board.may("admin") && !denied;
    ui.stopBox.hidden = !running;
    ui.stopReadOnly.hidden = !running || admin || !able;
    ui.stopUnable.textContent = able ? "" :
      "It cannot be stopped from the board: the agent's last hello did not announce the fire capability.";
    ui.stopUnable.hidden = able;
    ui.stopForm.hidden = !running || !admin || !able;
    ui.stopButton.disabled = stopping || stopAsked;
  }

  function drawSteps(now) {
    const list = Array.from(steps.values()).sort((a, b) => a.seq - b.seq);
    const start = parseTime(run.startTime);
    const end = endOf(now);
    // The span the bars are drawn over: from the run's start to its end (or
    // now), or to the end of its last step when that is later.
    let span = Number.isNaN(start) ? 0 : end - start;
    for (const st of list) {
      const from = parseTime(st.startTime);
      const d = stepMs(st, now);
      if (!Number.isNaN(start) && !Number.isNaN(from)) span = Math.max(span, from - start + d);
    }
    const lis = list.map((st) => {
      const key = JSON.stringify(st);
      let it = items.get(st.seq);
      if (!it || it.key !== key) {
        it = { key, li: stepItem(st), bar: null };
        it.bar = it.li.querySelector(".step-bar");
        it.tookEl = it.li.querySelector(".step-took");
        items.set(st.seq, it);
      }
      placeBar(it, st, start, span, now);
      return it.li;
    });
    for (const k of items.keys()) if (!steps.has(k)) items.delete(k);
    const same = lis.length === ui.steps.children.length && lis.every((li, i) => ui.steps.children[i] === li);
    if (!same) ui.steps.replaceChildren(...lis);
    ui.steps.dataset.steps = String(list.length);

    const parts = [];
    parts.push(list.length === 0 ? "No step yet." : board.count(list.length, "step", "steps") + " shown");
    const took = runs.took(run.duration);
    if (took !== "") parts.push("taking " + took + " in all" + (runs.ended(run) ? "" : " so far"));
    const spent = runs.tokens(run.tokens);
    if (spent !== "") parts.push("spending " + spent + " tokens");
    ui.stepsSummary.textContent = parts.join(", ") + (list.length === 0 ? "" : ".");
    ui.stepsNote.textContent = truncated
      ? "Steps were left out: the board keeps at most " + board.count(STEPS_MAX, "step", "steps") + " of a run."
      : "";
    ui.stepsNote.hidden = !truncated;
  }

  // stepMs is how long a step took, or, while it runs, how long it has run.
  function stepMs(st, now) {
    const d = parseDuration(st.duration);
    if (!Number.isNaN(d)) return d;
    const from = parseTime(st.startTime);
    if (runs.outcome(st) !== "running" || Number.isNaN(from)) return 0;
    return Math.max(0, endOf(now) - from);
  }

  // placeBar places a step's bar on the run's span: where it began, and
  // for how long.
  function placeBar(it, st, start, span, now) {
    const from = parseTime(st.startTime);
    const d = stepMs(st, now);
    if (!it.bar) return;
    if (span <= 0 || Number.isNaN(start) || Number.isNaN(from)) {
      it.bar.style.left = "0%";
      it.bar.style.width = "0%";
      return;
    }
    it.bar.style.left = (Math.max(0, from - start) / span * 100).toFixed(3) + "%";
    it.bar.style.width = (Math.max(0, d) / span * 100).toFixed(3) + "%";
    if (runs.outcome(st) === "running" && it.tookEl) it.tookEl.textContent = "running for " + health.took(d);
  }

  function stepItem(st) {
    const o = runs.outcome(st);
    const li = node("li", "step " + o);
    li.dataset.seq = String(st.seq);
    li.dataset.node = st.node || "";
    li.dataset.outcome = o;

    const head = node("div", "step-head");
    head.append(node("span", "step-seq", String(st.seq)), node("code", "step-node", st.node || "?"));
    if (st.kind) head.append(node("span", "tag step-kind", st.kind));
    const copy = runs.int(st.copy);
    if (st.copy !== undefined && copy >= 0) head.append(node("span", "tag step-copy", "copy " + copy));
    const badge = node("span", "badge step-outcome " + o, o);
    head.append(badge);

    const timing = node("div", "step-timing");
    const from = parseTime(st.startTime);
    const start = parseTime(run.startTime);
    const after = Math.max(0, from - start);
    const offset = Number.isNaN(from) || Number.isNaN(start) ? "" : "+" + (after < 1 ? "0 ms" : health.took(after));
    timing.append(
      node("span", "step-offset", offset === "" ? "—" : offset),
      node("span", "step-took", o === "running" ? "running" : runs.took(st.duration) || "—"),
    );
    const spent = runs.tokens(st.tokens);
    if (spent !== "") timing.append(node("span", "step-tokens", spent + " tokens"));
    if (!Number.isNaN(from)) timing.title = "entered at " + new Date(from).toLocaleString();

    const track = node("div", "step-track");
    track.setAttribute("aria-hidden", "true");
    track.append(node("div", "step-bar " + o));

    li.append(head, timing, track);
    if (st.error) {
      const e = node("p", "step-error");
      e.append(node("strong", "", "Error: "), node("span", "step-error-text", st.error));
      li.append(e);
    }
    if (o === "paused") {
      const p = runs.pauseKind(st);
      const pp = node("p", "step-pause");
      if (p === "approval" && st.approvalId) {
        const a = node("a", "approval-link", "the approval");
        a.href = approvalHref(st.approvalId);
        pp.append(document.createTextNode("Stopped the run for "), a, document.createTextNode("."));
      } else {
        pp.textContent = p === "approval" ? "Stopped the run for an approval." : p === "ask" ? "Stopped the run to ask a question." : "Stopped the run for a person.";
      }
      li.append(pp);
    }
    return li;
  }

  // drawValue shows the run's input or output as JSON, or says why there is
  // none.
  function drawValue(v, what, pre, note) {
    const withheld = Array.isArray(run.withheld) && run.withheld.includes(what);
    const has = v !== undefined && v !== null;
    if (has) {
      const text = JSON.stringify(v, null, 2);
      if (pre.textContent !== text) pre.textContent = text;
    } else {
      pre.textContent = "";
    }
    pre.hidden = !has;
    let said = "";
    if (!has && withheld) {
      said = "The " + what + " is kept on the agent: it reports runs without what they were given or gave back.";
    } else if (!has && runs.state(run) === "running") {
      said = "Not known yet: the agent reports it when the run pauses or ends.";
    } else if (!has) {
      said = what === "output" && !runs.ended(run) ? "None yet: the run has not ended." : "None.";
    }
    note.textContent = said;
    note.hidden = said === "";
    note.dataset.withheld = String(withheld);
  }

  // ---- stopping ----

  function stopRefusal(e) {
    switch (e.code) {
      case "permission_denied":
        return "You may not stop a run (permission_denied): " + e.message + ". Only admins may.";
      case "failed_precondition":
        return "The board cannot stop it (failed_precondition): " + e.message + ".";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message + ". The run may or may not have been asked to stop; this page will show it.";
      default:
        return "The board refused to stop it (" + e.code + "): " + e.message + ".";
    }
  }

  ui.stopForm.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (stopping || !shown) return;
    const reason = ui.stopReason.value.trim();
    let wrong = "";
    if (reason === "") wrong = "Reason: say why you stop it; it is required.";
    else if (new TextEncoder().encode(reason).length > REASON_MAX) wrong = "Reason: too long, at most " + REASON_MAX + " bytes.";
    if (wrong !== "") {
      ui.stopReason.setAttribute("aria-invalid", "true");
      showError(ui.stopError, wrong);
      ui.stopReason.focus();
      return;
    }
    ui.stopReason.removeAttribute("aria-invalid");
    const s = seq;
    const gen = board.generation();
    const { agent, id } = shown;
    stopping = true;
    showError(ui.stopError, "");
    sayStop("");
    render();
    try {
      await unary(board.token(), runs.RUNS + "StopRun", { agent, id, reason });
      if (stale(s, gen)) return;
      stopAsked = true;
      ui.stopReason.value = "";
      sayStop("Asked " + agent + " to stop the run at its next step boundary.");
    } catch (e) {
      if (stale(s, gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "permission_denied") denied = true;
      showError(ui.stopError, stopRefusal(e));
    } finally {
      if (!stale(s, gen)) {
        stopping = false;
        render();
      }
    }
  });

  board.part({
    reset: clear,
    run() {},
    stop() {
      clear();
    },
    wake() {
      if (watch) watch.wake();
    },
    shown(view) {
      if (view === "run") open(runOfHash());
      else if (shown) clear(); // watched again when the page is shown again
    },
    role() {
      if (run) render();
    },
  });

  setInterval(() => {
    if (run && !ui.section.hidden && !runs.ended(run)) render();
  }, TICK_MS);
})();
