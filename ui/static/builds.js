// An agent's builds, on its page ("#agent/<name>"): the builds of its flow
// its hellos named, the one it was last seen running first — the build by
// its first 12 hex digits (in full on hover), the package it came from
// (name@version) if its hello named one, and when the board first and last
// heard it — the one its latest hello named marked "current" in words.
// The board keeps 50 an agent (docs/limits.md).
//
// The builds come from ListAgentBuilds, read when the page opens, and
// again when the agent links again or names another build (the agents
// view's watch says so) or the board is woken. Everything an agent sends
// is shown as text, never as markup.
"use strict";

(function () {
  const { $, readAll, node, none, showError, signOut, refusal, count } = board;
  const AGENTS = "/symphonix.board.v1.AgentService/";

  const ui = {
    box: $("builds"),
    note: $("builds-note"),
    error: $("builds-error"),
    wrap: $("builds-wrap"),
    rows: $("build-rows"),
  };

  let agent = null; // the agent shown, as its page last said
  let list = null; // its builds, as the board last said; null before
  let readFor = ""; // what of the agent the list was read for (seen)
  let reading = false;
  let seq = 0; // counts the agents shown: an answer for an earlier one is dropped

  function reset() {
    seq++;
    agent = null;
    list = null;
    readFor = "";
    reading = false;
    ui.box.hidden = true;
    ui.rows.replaceChildren();
    ui.note.textContent = "";
    showError(ui.error, "");
  }

  // seen is what of the agent tells that it said hello again: its build,
  // its state and when it was last seen while offline.
  function seen(a) {
    const offline = enums.agentState.word(a.state) !== "online";
    return [a.name, a.build || "", enums.agentState.word(a.state), offline ? a.lastSeenTime || "" : ""].join("\n");
  }

  async function read() {
    if (!agent || reading) return;
    const s = seq;
    const gen = board.generation();
    const key = seen(agent);
    reading = true;
    try {
      const res = await readAll(board.token(), AGENTS + "ListAgentBuilds", { name: agent.name }, "builds");
      if (s !== seq || !board.current(gen)) return;
      list = res.items.filter((x) => x && x.build);
      readFor = key;
      showError(ui.error, "");
    } catch (e) {
      if (s !== seq || !board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      readFor = key; // not read again until the agent changes, or the board is woken
      showError(ui.error, "Could not read the agent's builds (" + e.code + "): " + e.message + ".");
    } finally {
      if (s === seq) reading = false;
    }
    draw();
  }

  // short is a build by its first 12 hex digits.
  function short(build) {
    return String(build || "").replace(/^sha256:/, "").slice(0, 12) || "—";
  }

  function row(b, now) {
    const tr = node("tr", "agent-build");
    tr.dataset.build = b.build;
    tr.dataset.current = String(Boolean(b.current));
    const th = node("th");
    th.scope = "row";
    const code = node("code", "build-id", short(b.build));
    code.title = b.build;
    th.append(code);
    if (b.current) th.append(document.createTextNode(" "), node("span", "badge build-current", "current"));
    const cell = (child, className) => {
      const td = node("td", className);
      td.append(typeof child === "string" ? document.createTextNode(child) : child);
      return td;
    };
    const pkg = b.packageName ? b.packageName + (b.packageVersion ? "@" + b.packageVersion : "") : none();
    tr.append(th,
      cell(pkg, "build-package"),
      cell(runs.time(b.firstSeenTime, now), "build-first"),
      cell(runs.time(b.lastSeenTime, now), "build-last"));
    return tr;
  }

  function draw() {
    if (!agent) return;
    ui.box.hidden = false;
    if (list === null) {
      ui.note.textContent = ui.error.hidden ? "Loading…" : "";
      ui.wrap.hidden = true;
      return;
    }
    const now = Date.now();
    ui.note.textContent = list.length === 0
      ? "None: its hellos named no build."
      : count(list.length, "build", "builds") + " its hellos named, the one last seen first; " +
        "the one its latest hello named is marked current. The board keeps the 50 last seen.";
    ui.rows.replaceChildren(...list.map((b) => row(b, now)));
    ui.wrap.hidden = list.length === 0;
  }

  board.onAgentPage((a) => {
    if (a === null) {
      reset();
      return;
    }
    if (agent && agent.name !== a.name) reset();
    agent = a;
    if (seen(a) !== readFor) read();
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
