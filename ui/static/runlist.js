// An agent's runs, on its page ("#agent/<name>", agent.js): newest first,
// each linking to its own page (run.js), filtered by state. The first page
// comes from ListRuns, More reads the next, PAGE at a time, up to
// LIST_MAX; the list stays live through a WatchRuns for the agent
// (runs.follow) while the page is shown: a run that starts appears, one
// that takes a step, pauses or ends changes in place. When the watch has
// to begin again, the first page is read again, and a run the list holds
// as running or paused that the new watch no longer names is read again
// with GetRun: it ended meanwhile.
"use strict";

(function () {
  const { $, unary, readPage, node, none, count, parseTime, byName, showError, signOut, refusal, runHref } = board;
  const PAGE = 50; // runs a page of ListRuns, and of More
  const LIST_MAX = 10000; // the most runs the list holds (docs/limits.md)
  const FIX_MAX = 100; // the most runs read again with GetRun after the watch began again

  const ui = {
    dropped: $("runs-dropped"),
    error: $("runs-error"),
    filter: $("runs-filter"),
    state: $("runs-state"),
    loading: $("runs-loading"),
    empty: $("runs-empty"),
    wrap: $("runs-wrap"),
    rows: $("run-rows"),
    more: $("runs-more"),
    count: $("runs-count"),
  };

  let name = ""; // the agent whose runs are listed, or "" for none
  let agent = null; // that agent, as its page last drew it
  let filter = ""; // the state shown, as a word; "" for every state
  const known = new Map(); // run id -> Run, as the board last said
  const drawn = new Map(); // run id -> {key, tr}: rows drawn, redrawn only when their run changes
  let next = ""; // ListRuns's next page for More; "" when there is none
  let listed = false; // the first page has been read
  let cut = false; // runs were dropped past LIST_MAX
  let busy = false; // More is reading
  let watch = null; // the watch of name's runs (runs.follow), while the page is shown
  let seq = 0; // counts the lists begun: an answer for an earlier one is dropped
  let controller = null; // aborts More and the reads after a watch began again
  let renderQueued = false;

  function clear() {
    seq++;
    if (watch) watch.stop();
    watch = null;
    if (controller) controller.abort();
    controller = null;
    known.clear();
    drawn.clear();
    next = "";
    listed = false;
    cut = false;
    busy = false;
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    ui.count.textContent = "";
    showError(ui.error, "");
  }

  // start lists the runs of the agent n, in the state filter, and watches
  // them.
  function start(n) {
    clear();
    name = n;
    const s = seq;
    const gen = board.generation();
    const request = { agent: n };
    watch = runs.follow(request, {
      before: (signal) => readFirst(s, gen, signal),
      synced: (list) => synced(s, gen, list),
      event: (kind, msg) => {
        if (s !== seq) return;
        if (upsert(msg.run)) queueRender();
      },
      broken: (message, final) => {
        if (s !== seq) return;
        showError(ui.error, message);
        if (final) ui.loading.hidden = true;
      },
    });
  }

  function stale(s, gen) {
    return s !== seq || !board.current(gen);
  }

  // listRequest is ListRuns's filter: the agent, and the state chosen.
  function listRequest() {
    const r = { agent: name };
    const st = enums.runState.name(filter);
    if (st) r.state = st;
    return r;
  }

  // readFirst reads the first page of runs, before each watch.
  async function readFirst(s, gen, signal) {
    const page = await readPage(board.token(), runs.RUNS + "ListRuns", listRequest(), "runs", PAGE, "", signal);
    if (stale(s, gen)) return;
    for (const r of page.items) upsert(r);
    if (!listed) next = page.next;
    listed = true;
    render();
  }

  // synced takes the runs running or paused as the watch began, then reads
  // again each run the list holds as running or paused that the watch does
  // not name: it paused or ended while nobody watched.
  async function synced(s, gen, list) {
    const live = new Set();
    for (const r of list) {
      live.add(r.id);
      upsert(r);
    }
    render();
    const lost = Array.from(known.values()).filter((r) => !runs.ended(r) && !live.has(r.id)).slice(0, FIX_MAX);
    if (lost.length === 0) return;
    const ctl = new AbortController();
    controller = ctl;
    for (const r of lost) {
      try {
        const res = await unary(board.token(), runs.RUNS + "GetRun", { agent: name, id: r.id }, ctl.signal);
        if (stale(s, gen)) return;
        if (res && res.run) {
          delete res.run.steps;
          upsert(res.run);
        }
      } catch (e) {
        if (e.name === "AbortError" || stale(s, gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        if (e.code === "not_found") known.delete(r.id);
      }
    }
    render();
  }

  // upsert keeps what the board said of a run of the agent shown, and
  // reports whether it changed anything.
  function upsert(r) {
    if (!runs.valid(r) || (r.agent && r.agent !== name)) return false;
    const had = known.get(r.id);
    if (!runs.newer(had, r)) return false;
    known.set(r.id, r);
    return true;
  }

  // ---- drawing ----

  function startOf(r) {
    const ms = parseTime(r.startTime);
    return Number.isNaN(ms) ? 0 : ms;
  }

  // newestFirst orders runs by when they started, newest first, then by id.
  function newestFirst(a, b) {
    return startOf(b) - startOf(a) || byName(a.id, b.id);
  }

  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    setTimeout(render, 0);
  }

  function render() {
    renderQueued = false;
    if (name === "") return;
    const all = Array.from(known.values()).sort(newestFirst);
    if (all.length > LIST_MAX) {
      for (const r of all.splice(LIST_MAX)) known.delete(r.id);
      cut = true;
    }
    const shown = filter === "" ? all : all.filter((r) => runs.state(r) === filter);
    const now = Date.now();
    const ids = new Set(shown.map((r) => r.id));
    for (const id of drawn.keys()) if (!ids.has(id)) drawn.delete(id);
    const trs = shown.map((r) => {
      const key = JSON.stringify(r);
      let d = drawn.get(r.id);
      if (!d || d.key !== key) {
        d = { key, tr: row(r, now) };
        drawn.set(r.id, d);
      }
      return d.tr;
    });
    const same = trs.length === ui.rows.children.length && trs.every((tr, i) => ui.rows.children[i] === tr);
    if (!same) ui.rows.replaceChildren(...trs);

    ui.loading.hidden = listed || shown.length > 0;
    ui.wrap.hidden = shown.length === 0;
    ui.empty.textContent = listed && shown.length === 0 ? emptyText() : "";
    ui.empty.hidden = ui.empty.textContent === "";
    const full = known.size >= LIST_MAX;
    ui.more.hidden = next === "" || full;
    ui.more.disabled = busy;
    let said = shown.length === 0 ? "" : count(shown.length, "run", "runs") + " shown";
    if (said !== "" && next !== "") said += full ? "; the list holds no more than " + count(LIST_MAX, "run", "runs") : "; older ones on the board";
    else if (said !== "" && cut) said += ": the newest " + count(LIST_MAX, "run", "runs");
    if (ui.count.textContent !== said) ui.count.textContent = said;
  }

  function emptyText() {
    if (filter !== "") return "No " + filter + " run.";
    if (agent && !health.announces(agent, "runs")) {
      return "No run: it does not report runs (its last hello did not announce the runs capability).";
    }
    return "No run yet. A run appears here as it starts.";
  }

  // startedCell is what started r, with a trigger's mark when one did.
  function startedCell(r) {
    const by = runs.startedBy(r);
    const mark = runs.triggerMarker(r);
    if (mark === "") return by;
    const span = node("span");
    span.append(mark);
    if (by !== "" && by !== "trigger") span.append(document.createTextNode(" " + by));
    return span;
  }

  function row(r, now) {
    const w = runs.state(r);
    const tr = node("tr", "run");
    tr.dataset.run = r.id;
    tr.dataset.state = w;
    const th = node("th");
    th.scope = "row";
    const a = node("a", "run-link");
    a.href = runHref(name, r.id);
    a.append(node("code", "", r.id));
    th.append(a);

    const state = node("td", "run-state-cell");
    state.append(runs.badge(r));
    const p = runs.pauseKind(r);
    if (w === "paused" && p) state.append(node("span", "hint", " for " + (p === "ask" ? "an answer" : "an approval")));

    const cell = (child, className) => {
      const td = node("td", className || "");
      td.append(child === "" ? none() : typeof child === "string" ? document.createTextNode(child) : child);
      return td;
    };
    tr.append(
      th,
      state,
      cell(runs.time(r.startTime, now), "run-start"),
      cell(startedCell(r), "run-by"),
      cell(r.thread || "", "run-thread"),
      cell(runs.took(r.duration), "run-took"),
      cell(String(runs.int(r.stepCount)), "run-steps"),
      cell(runs.tokens(r.tokens), "run-tokens"),
      cell(runs.errorText(r), "run-error-cell"),
    );
    return tr;
  }

  // drawDropped says how many runs the agent's outbox dropped, if any.
  function drawDropped() {
    const n = agent ? runs.int(agent.runsDropped) : 0;
    ui.dropped.textContent = n > 0
      ? count(n, "run", "runs") + " this agent finished while the board could not be reached " +
        (n === 1 ? "was" : "were") + " not kept: its outbox was full, so " + (n === 1 ? "it is" : "they are") +
        " missing from this list."
      : "";
    ui.dropped.hidden = n === 0;
  }

  // ---- More ----

  async function more() {
    if (busy || next === "" || name === "") return;
    const s = seq;
    const gen = board.generation();
    const ctl = new AbortController();
    controller = ctl;
    busy = true;
    render();
    try {
      const page = await readPage(board.token(), runs.RUNS + "ListRuns", listRequest(), "runs", PAGE, next, ctl.signal);
      if (stale(s, gen)) return;
      for (const r of page.items) upsert(r);
      next = page.next;
      showError(ui.error, "");
    } catch (e) {
      if (e.name === "AbortError" || stale(s, gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, "Could not read older runs (" + e.code + "): " + e.message + ".");
    } finally {
      if (!stale(s, gen)) {
        busy = false;
        render();
      }
    }
  }

  ui.more.addEventListener("click", more);
  ui.filter.addEventListener("submit", (ev) => ev.preventDefault());
  ui.state.addEventListener("change", () => {
    filter = ui.state.value;
    if (name !== "") start(name);
  });

  board.onAgentPage((a) => {
    if (a === null) {
      clear();
      name = "";
      agent = null;
      return;
    }
    agent = a;
    drawDropped();
    if (board.view() !== "agent") return;
    if (a.name !== name || watch === null) start(a.name);
    else if (listed) render();
  });

  board.part({
    reset() {
      clear();
      name = "";
      agent = null;
      filter = "";
      ui.state.value = "";
      drawDropped();
    },
    run() {},
    stop() {
      clear();
    },
    wake() {
      if (watch) watch.wake();
    },
    shown(view) {
      if (view !== "agent" && watch) clear(); // watched again when the page is shown again
    },
  });
})();
