// One agent's page, "#agent/<name>" (board.agentHref): what the board knows
// of it (with the package it was installed from, linking to the package's
// page in the library), its latest health round check by check, a strip of
// its rounds over the last 24 hours or 7 days and the incidents read from
// them, and, for admins, pausing and resuming it.
//
// The agent comes from the agents view's list (or GetAgent, for one past
// it), its rounds from GetHealthHistory, newest first, a page at a time, up
// to ROUNDS_MAX. The page stays live through the agents view's watch
// (board.onAgents): a change of the agent redraws it and adds its round to
// the strip; when that watch is read again from its start, so is the
// history. A round colours the strip from when the agent ran it until its
// next round (the last one until now, or until the agent was last seen).
// Pause and Resume send PauseAgent and ResumeAgent; the watch then says
// when the agent has acted on it. The page's other parts (its runs,
// runlist.js; starting one, fire.js) hear of the agent shown through
// board.onAgentPage.
"use strict";

(function () {
  const { $, unary, readPage, node, none, tags, parseTime, ago, byName, showError, signOut, refusal, count, agentOfHash } = board;
  const AGENTS = "/symphonix.board.v1.AgentService/";
  const ROUNDS_MAX = 1000; // the newest rounds the page reads (docs/limits.md)
  const INCIDENTS_MAX = 100; // the newest incidents it lists
  const REASON_MAX = 512; // bytes, as the board counts them
  const TICK_MS = 5000; // how often the times and the strip move on while shown
  const HOUR_MS = 3600 * 1000;

  const ui = {
    section: $("agent"),
    name: $("agent-name"),
    error: $("agent-error"),
    loading: $("agent-loading"),
    body: $("agent-body"),
    facts: $("agent-facts"),
    pauseState: $("pause-state"),
    pauseUnable: $("pause-unable"),
    pauseReadOnly: $("pause-readonly"),
    pauseForm: $("pause-form"),
    pauseReason: $("pause-reason"),
    pauseButton: $("pause-button"),
    resumeForm: $("resume-form"),
    resumeReason: $("resume-reason"),
    resumeButton: $("resume-button"),
    pauseError: $("pause-error"),
    pauseStatus: $("pause-status"),
    summary: $("health-summary"),
    checksWrap: $("checks-wrap"),
    checkRows: $("check-rows"),
    ranges: Array.from(document.querySelectorAll("#agent .range")),
    strip: $("strip"),
    stripNote: $("strip-note"),
    historyError: $("history-error"),
    incidents: $("incidents"),
    incidentsEmpty: $("incidents-empty"),
    incidentsMore: $("incidents-more"),
  };

  let name = ""; // the agent shown, or "" when none
  let agent = null; // as the board last said, or null before it did
  let rounds = []; // its rounds as {r, at} (at: health.when(r)), oldest first, at most ROUNDS_MAX
  const keys = new Set(); // the key of each round in rounds
  let older = false; // the board keeps rounds older than those read
  let loaded = false; // the history has been read
  let reading = false; // the history is being read
  let seq = 0; // counts the agents opened: an answer for an earlier one is dropped
  let heard = 0; // counts the changes of the agent the watch brought
  let hours = 24; // the strip's span
  let busy = false; // a pause or resume is on its way
  let denied = false; // the board refused a pause or resume as not allowed
  let controller = null; // aborts the reads of the agent shown
  let drawnChecks = null; // the round whose checks the table shows
  const pageListeners = []; // see onAgentPage

  // onAgentPage registers f, called with the agent shown each time the
  // page is drawn (when it opens, when the watch changes it, and every
  // TICK_MS while it is shown), and with null when the page is cleared
  // (another agent is opened, or somebody signs in or out).
  function onAgentPage(f) {
    pageListeners.push(f);
  }

  function say(message) {
    ui.pauseStatus.textContent = message || "";
    ui.pauseStatus.hidden = !message;
  }

  function reset() {
    seq++;
    if (controller) controller.abort();
    controller = null;
    name = "";
    agent = null;
    rounds = [];
    keys.clear();
    older = false;
    loaded = false;
    reading = false;
    busy = false;
    denied = false;
    ui.name.textContent = "";
    drawnChecks = null;
    ui.checkRows.replaceChildren();
    ui.body.hidden = true;
    ui.loading.hidden = false;
    ui.pauseReason.value = "";
    ui.resumeReason.value = "";
    ui.pauseReason.removeAttribute("aria-invalid");
    showError(ui.error, "");
    showError(ui.pauseError, "");
    showError(ui.historyError, "");
    say("");
    for (const f of pageListeners) f(null);
  }

  // ---- reading ----

  // open shows the agent named n: the one shown already, or a new one read
  // from the board.
  function open(n) {
    if (n === "" || n === name) {
      render();
      return;
    }
    reset();
    name = n;
    ui.name.textContent = n;
    readAgent(seq);
  }

  // stale says whether an answer to a read begun for s, in generation gen,
  // came too late: another agent is shown, or somebody else signed in.
  function stale(s, gen) {
    return s !== seq || !board.current(gen);
  }

  async function readAgent(s) {
    const gen = board.generation();
    const known = board.agentNamed(name);
    if (known) {
      setAgent(known);
    } else {
      const ctl = new AbortController();
      controller = ctl;
      const before = heard;
      try {
        const res = await unary(board.token(), AGENTS + "GetAgent", { name }, ctl.signal);
        if (stale(s, gen)) return;
        if (heard === before) setAgent(res.agent); // else the watch said something newer
      } catch (e) {
        if (e.name === "AbortError" || stale(s, gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        ui.loading.hidden = true;
        showError(ui.error, e.code === "not_found"
          ? "The board has never seen an agent named " + name + "."
          : "Could not read the agent " + name + " (" + e.code + "): " + e.message + ". Reload the page to try again.");
        return;
      }
    }
    render();
    if (!loaded) readHistory(s); // unless the watch brought the agent first, and it was read then
  }

  // readHistory reads the agent's newest rounds, a page at a time, up to
  // ROUNDS_MAX, and adds those the page does not have yet.
  async function readHistory(s) {
    const gen = board.generation();
    if (reading) return;
    reading = true;
    const ctl = new AbortController();
    controller = ctl;
    const got = [];
    let more = false;
    try {
      let token = "";
      for (;;) {
        const page = await readPage(board.token(), AGENTS + "GetHealthHistory", { name }, "rounds",
          Math.min(board.PAGE_SIZE, ROUNDS_MAX - got.length), token, ctl.signal);
        if (stale(s, gen)) return;
        for (const r of page.items) if (got.length < ROUNDS_MAX) got.push(r);
        if (page.next === "") break;
        if (got.length >= ROUNDS_MAX) {
          more = true;
          break;
        }
        token = page.next;
      }
      showError(ui.historyError, "");
    } catch (e) {
      if (e.name === "AbortError" || stale(s, gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.historyError, "Could not read the health history (" + e.code + "): " + e.message +
        ". The strip shows only the rounds heard since this page opened.");
    } finally {
      if (s === seq) reading = false;
    }
    older = older || more;
    addRounds(got);
    loaded = true;
    render();
  }

  function setAgent(a) {
    if (!a || a.name !== name) return;
    agent = a;
    if (a.health) addRounds([a.health]);
  }

  // roundKey tells one round from another: when it ran and when the board
  // received it.
  function roundKey(r) {
    return String(r.startTime || "") + "|" + String(r.receiveTime || "");
  }

  // addRounds adds the rounds of list the page does not have yet, in time
  // order, keeping the newest ROUNDS_MAX.
  function addRounds(list) {
    let added = false;
    for (const r of list) {
      if (!r || typeof r !== "object") continue;
      const at = health.when(r);
      const k = roundKey(r);
      if (Number.isNaN(at) || keys.has(k)) continue;
      keys.add(k);
      rounds.push({ r, at });
      added = true;
    }
    if (!added) return;
    rounds.sort((a, b) => a.at - b.at);
    if (rounds.length > ROUNDS_MAX) {
      for (const x of rounds.splice(0, rounds.length - ROUNDS_MAX)) keys.delete(roundKey(x.r));
      older = true;
    }
  }

  // ---- drawing ----

  function render() {
    if (!agent) return;
    showError(ui.error, "");
    ui.loading.hidden = true;
    ui.body.hidden = false;
    const now = Date.now();
    drawFacts(now);
    drawPause(now);
    drawChecks(now);
    drawStrip(now);
    drawIncidents(now);
    for (const f of pageListeners) f(agent);
  }

  function online() {
    return enums.agentState.word(agent.state) === "online";
  }

  function drawFacts(now) {
    const state = enums.agentState.word(agent.state) || "unknown";
    const fact = (term, value) => {
      const dd = node("dd");
      dd.dataset.fact = term;
      dd.append(typeof value === "string" ? document.createTextNode(value) : value);
      return [node("dt", "", term), dd];
    };
    const badge = node("span", "badge " + (state === "online" ? "online" : "offline"));
    badge.append(node("span", "dot"), document.createTextNode(state));
    const time = (s) => {
      const ms = parseTime(s);
      if (Number.isNaN(ms)) return none();
      const t = node("time", "", health.clock(ms, now) + " (" + ago(ms, now) + ")");
      t.dateTime = new Date(ms).toISOString();
      t.title = new Date(ms).toLocaleString();
      return t;
    };
    const build = agent.build ? node("code", "build-full", agent.build) : none();
    ui.facts.replaceChildren(
      ...fact("state", badge),
      ...(agent.description ? fact("description", agent.description) : []),
      ...fact("protocol", agent.protocol || "—"),
      ...fact("capabilities", tags(agent.capabilities, "capabilities")),
      ...fact("build", build),
      ...fact("package", board.installed(agent) || node("span", "none", "not installed from the library")),
      ...fact("tools", tags(agent.tools, "tools")),
      ...fact("delegation cycles", cycles(agent.delegationCycles, time)),
      ...fact("first seen", time(agent.firstSeenTime)),
      ...fact("last seen", state === "online" ? node("span", "", "now (connected)") : time(agent.lastSeenTime)),
    );
  }

  // cycles says what the board can tell of the agent's circular
  // delegations: "cannot tell" for an agent that does not announce
  // delegation-cycle, never "none".
  function cycles(c, time) {
    const w = enums.cycleKnowledge.word(c && c.knowledge) || "cannot tell";
    const el = node("span", "cycles");
    el.dataset.cycles = w;
    if (w === "reported") {
      const n = Number(c.count) || 0;
      el.append(node("strong", "", n.toLocaleString("en") + (n === 1 ? " reported" : " reported")),
        document.createTextNode(", the latest "), time(c.lastTime));
    } else if (w === "none reported") {
      el.append(document.createTextNode("none reported (the agent reports every one)"));
    } else {
      el.append(document.createTextNode("cannot tell: the agent does not announce delegation-cycle, so its silence says nothing"));
    }
    return el;
  }

  function drawPause(now) {
    const p = agent.pause;
    const w = health.pauseWord(p);
    ui.pauseState.dataset.pause = health.pauseKind(p) || "running";
    const words = node("strong", "pause-word", w || "taking work");
    let said = " — " + health.pauseSaid(p, now);
    if (p && !p.delivered) {
      said += online()
        ? " Waiting for the agent to say it acted on it."
        : " Waiting for the agent: it is offline, and hears of it when it next connects.";
    }
    ui.pauseState.replaceChildren(words, document.createTextNode(said));

    const able = health.announces(agent, "pause");
    const admin = board.may("admin") && !denied;
    ui.pauseUnable.textContent = able ? "" :
      "It cannot be paused from the board: its last hello did not announce the pause capability " +
      "(an agent too old to refuse work, or one built without it).";
    ui.pauseUnable.hidden = able;
    ui.pauseReadOnly.hidden = !able || admin;
    const paused = Boolean(p && p.paused);
    ui.pauseForm.hidden = !able || !admin || paused;
    ui.resumeForm.hidden = !able || !admin || !paused;
    ui.pauseButton.disabled = busy;
    ui.resumeButton.disabled = busy;
  }

  function drawChecks(now) {
    const r = agent.health;
    if (!r) {
      ui.summary.dataset.health = "none";
      ui.summary.textContent = health.announces(agent, "health")
        ? "It has not reported a health round yet."
        : "It does not announce health checks: the board has no health to show for it.";
      ui.checkRows.replaceChildren();
      drawnChecks = null;
      ui.checksWrap.hidden = true;
      return;
    }
    const w = health.word(r);
    const all = health.checks(r);
    const bad = health.failing(r);
    ui.summary.dataset.health = w;
    const b = node("span", "badge health " + health.kind(w));
    b.append(node("span", "dot"), document.createTextNode(w));
    let text = all.length === 0 ? " no checks"
      : bad.length === 0 ? " every check passed (" + all.length + ")"
      : " " + bad.length + " of " + count(all.length, "check", "checks") + " did not pass";
    const t = health.when(r);
    if (!Number.isNaN(t)) text += "; round of " + health.clock(t, now) + " (" + ago(t, now) + ")";
    const got = parseTime(r.receiveTime);
    if (!Number.isNaN(got)) text += ", received " + health.clock(got, now);
    ui.summary.replaceChildren(b, document.createTextNode(text + "."));
    if (r !== drawnChecks) { // redrawn only when the round changes, so a selection in it stays
      drawnChecks = r;
      ui.checkRows.replaceChildren(...all.slice().sort((a, c) => byName(a.name, c.name)).map(checkRow));
    }
    ui.checksWrap.hidden = all.length === 0;
  }

  function checkRow(c) {
    const w = health.checkWord(c);
    const tr = node("tr", "check");
    tr.dataset.check = c.name;
    tr.dataset.status = w;
    const th = node("th");
    th.scope = "row";
    th.append(node("code", "check-name", c.name));
    const status = node("td");
    const b = node("span", "badge check-status " + (w === "ok" || w === "error" ? w : "unknown"), w);
    status.append(b);
    const detail = node("td", "detail");
    if (c.detail) detail.textContent = c.detail;
    else detail.append(none());
    tr.append(th, status, node("td", "took", health.took(c.duration)), detail);
    return tr;
  }

  // until is when the agent's last round stops colouring the strip: now
  // when it is connected, else when it was last seen.
  function until(now) {
    if (online()) return now;
    const seen = parseTime(agent.lastSeenTime);
    return Number.isNaN(seen) ? now : Math.min(now, seen);
  }

  // stretches are the rounds as spans of time, a run of rounds with the
  // same outcome (status and the checks that did not pass) as one.
  function stretches(now) {
    const out = [];
    const end = until(now);
    for (let i = 0; i < rounds.length; i++) {
      const r = rounds[i].r;
      const from = rounds[i].at;
      const to = i + 1 < rounds.length ? rounds[i + 1].at : Math.max(from, end);
      const w = health.word(r);
      const bad = health.failing(r).map((c) => c.name + " " + health.verb(health.checkWord(c)));
      const key = w + "\n" + bad.join("\n");
      const last = out[out.length - 1];
      if (last && last.key === key) {
        last.to = to;
        continue;
      }
      out.push({ key, word: w, bad, from, to });
    }
    return out;
  }

  function drawStrip(now) {
    const range = hours * HOUR_MS;
    const start = now - range;
    const segs = [];
    const total = new Map(); // word -> ms shown
    for (const s of stretches(now)) {
      if (s.to < start || s.from > now) continue; // outside the span shown
      const from = Math.max(s.from, start);
      const to = Math.min(s.to, now);
      const seg = node("div", "seg " + health.kind(s.word));
      seg.dataset.status = s.word;
      seg.style.left = ((from - start) / range * 100).toFixed(3) + "%";
      seg.style.width = (Math.max(0, to - from) / range * 100).toFixed(3) + "%";
      seg.title = s.word + " from " + health.clock(s.from, now) + " to " +
        (s.to >= now ? "now" : health.clock(s.to, now)) + " (" + health.span(s.to - s.from) + ")" +
        (s.bad.length ? ": " + s.bad.join(", ") : "");
      segs.push(seg);
      total.set(s.word, (total.get(s.word) || 0) + (to - from));
    }
    const label = hours === 24 ? "24 h" : "7 d";
    const axis = node("div", "strip-axis");
    axis.append(node("span", "", label + " ago"), node("span", "", "now"));
    const bar = node("div", "strip-bar");
    bar.setAttribute("role", "img");
    bar.setAttribute("aria-label", segs.length === 0 ? "No health round in the last " + label + "."
      : "Health in the last " + label + ": " + Array.from(total).map(([w, ms]) => w + " for " + health.span(ms)).join(", ") + ".");
    bar.append(...segs);
    ui.strip.replaceChildren(bar, axis);
    ui.strip.dataset.rounds = String(rounds.length);

    const notes = [];
    if (loaded && rounds.length === 0) {
      notes.push(health.announces(agent, "health") ? "No health round reported." : "No health round: it does not announce health checks.");
    } else if (loaded && segs.length === 0) {
      notes.push("No health round in the last " + label + ".");
    }
    if (older) {
      notes.push("The strip and the incidents are drawn from the newest " + count(ROUNDS_MAX, "round", "rounds") +
        "; the board keeps older ones.");
    }
    ui.stripNote.textContent = notes.join(" ");
    ui.stripNote.hidden = notes.length === 0;
  }

  // incidents are the runs of rounds in which a check did not pass, one
  // per check and status, newest first; one still going has no end.
  function incidents() {
    const open = new Map(); // check name -> the incident it is in
    const out = [];
    for (const { r, at: t } of rounds) {
      const lines = new Map(health.checks(r).map((c) => [c.name, c]));
      for (const [n, inc] of open) {
        const c = lines.get(n);
        if (!c || health.checkWord(c) !== inc.status) {
          inc.to = t;
          out.push(inc);
          open.delete(n);
        }
      }
      for (const c of lines.values()) {
        const w = health.checkWord(c);
        if (w === "ok" || open.has(c.name)) continue;
        open.set(c.name, { name: c.name, status: w, from: t, to: NaN, detail: c.detail || "" });
      }
    }
    for (const inc of open.values()) out.push(inc);
    out.sort((a, b) => b.from - a.from || byName(a.name, b.name));
    return out;
  }

  function drawIncidents(now) {
    const all = incidents();
    const shown = all.slice(0, INCIDENTS_MAX);
    ui.incidents.replaceChildren(...shown.map((inc) => incidentItem(inc, now)));
    ui.incidentsEmpty.textContent = loaded && all.length === 0
      ? (rounds.length === 0 ? "None: there is no round to read them from." : "None: every check passed in every round read.")
      : "";
    ui.incidentsEmpty.hidden = ui.incidentsEmpty.textContent === "";
    ui.incidentsMore.textContent = all.length > INCIDENTS_MAX
      ? "These are the newest " + count(INCIDENTS_MAX, "incident", "incidents") + " of " + count(all.length, "incident", "incidents") + "."
      : "";
    ui.incidentsMore.hidden = ui.incidentsMore.textContent === "";
  }

  function incidentItem(inc, now) {
    const li = node("li", "incident");
    li.dataset.check = inc.name;
    li.dataset.status = inc.status;
    const ongoing = Number.isNaN(inc.to);
    li.dataset.ongoing = String(ongoing);
    let text;
    if (ongoing) {
      text = (inc.status === "error" ? " has been failing since " : " has not been able to tell since ") +
        health.clock(inc.from, now) + " (" + health.span(until(now) - inc.from) + " so far)";
    } else {
      text = " " + health.verb(inc.status) + " from " + health.clock(inc.from, now) + " to " +
        health.clock(inc.to, now) + " (" + health.span(inc.to - inc.from) + ")";
    }
    li.append(node("code", "check-name", inc.name), document.createTextNode(text + (inc.detail ? ": " : ".")));
    if (inc.detail) li.append(node("span", "detail", inc.detail));
    return li;
  }

  // ---- pausing and resuming ----

  function actRefusal(e, what) {
    switch (e.code) {
      case "permission_denied":
        return "You may not " + what + " " + name + " (permission_denied): " + e.message + ". Only admins may pause or resume an agent.";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message + ". " + name + " may or may not have been asked to " +
          what + "; this page will show it.";
      default:
        return "The board refused to " + what + " " + name + " (" + e.code + "): " + e.message + ".";
    }
  }

  // act asks the board to pause (paused) or resume the agent shown, with
  // reason.
  async function act(paused, reason) {
    const gen = board.generation();
    const s = seq;
    const what = paused ? "pause" : "resume";
    const before = heard;
    busy = true;
    showError(ui.pauseError, "");
    say("");
    render();
    try {
      const res = await unary(board.token(), AGENTS + (paused ? "PauseAgent" : "ResumeAgent"), { name, reason });
      if (stale(s, gen)) return;
      if (heard === before) setAgent(res.agent); // else the watch brought it, or something newer
      (paused ? ui.pauseReason : ui.resumeReason).value = "";
      say(paused
        ? "Asked " + name + " to pause: it finishes what it has in flight and takes no new work."
        : "Asked " + name + " to take work again.");
    } catch (e) {
      if (stale(s, gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "permission_denied") denied = true;
      showError(ui.pauseError, actRefusal(e, what));
    } finally {
      if (!stale(s, gen)) {
        busy = false;
        render();
      }
    }
  }

  ui.pauseForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (busy) return;
    const reason = ui.pauseReason.value.trim();
    let wrong = "";
    if (reason === "") wrong = "Say why you pause it: the reason is required.";
    else if (new TextEncoder().encode(reason).length > REASON_MAX) wrong = "The reason is too long: at most " + REASON_MAX + " bytes.";
    if (wrong !== "") {
      ui.pauseReason.setAttribute("aria-invalid", "true");
      showError(ui.pauseError, wrong);
      ui.pauseReason.focus();
      return;
    }
    ui.pauseReason.removeAttribute("aria-invalid");
    act(true, reason);
  });

  ui.resumeForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (busy) return;
    const reason = ui.resumeReason.value.trim();
    if (new TextEncoder().encode(reason).length > REASON_MAX) {
      showError(ui.pauseError, "The reason is too long: at most " + REASON_MAX + " bytes.");
      ui.resumeReason.focus();
      return;
    }
    act(false, reason);
  });

  for (const b of ui.ranges) {
    b.addEventListener("click", () => {
      hours = Number(b.dataset.hours) || 24;
      for (const o of ui.ranges) o.setAttribute("aria-pressed", String(o === b));
      if (agent) drawStrip(Date.now());
    });
  }

  board.onAgents((a) => {
    if (a === null) {
      // The watch is read again from its start: a round may have been
      // missed meanwhile.
      if (name !== "" && loaded) readHistory(seq);
      return;
    }
    if (a.name !== name || name === "") return;
    heard++;
    const first = agent === null;
    setAgent(a);
    render();
    // An agent the board had not seen when the page opened has appeared.
    if (first && !loaded) readHistory(seq);
  });

  board.onAgentPage = onAgentPage;

  board.part({
    reset,
    run() {},
    stop() {
      if (controller) controller.abort();
      controller = null;
    },
    wake() {},
    shown(view) {
      if (view === "agent") open(agentOfHash());
    },
    role() {
      if (agent) render();
    },
  });

  setInterval(() => {
    if (agent && !ui.section.hidden) render();
  }, TICK_MS);
})();
