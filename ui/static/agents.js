// The agents view: the agents the board knows, kept live through
// ListAgents (every page, up to board.LIST_MAX agents) and then the
// WatchAgents server stream, which sends every agent and then each change,
// reconnecting whenever the stream ends. The table shows at most
// board.LIST_MAX agents, by name, and says so when there are more. Each row
// shows the agent's health (its latest round: ok, degraded, unknown, or —
// when it never reported one), whether it is paused and the package it was
// installed from, if any (linking to the package's page in the library),
// and links to the agent's page (agent.js), which hears of every agent
// through onAgents. The table is filtered — a search of names and
// descriptions, status, health, paused — and shown PAGE_ROWS at a time,
// the filters and the page kept in the address: "#agents?q=pay&health=degraded&page=2".
"use strict";

(function () {
  const {
    $, readAll, stream, count, node, none, tags, parseTime, ago, byName, sleep, retryDelay, refusal, signOut, agentHref,
    packageHref, LIST_MAX,
  } = board;
  const AGENTS = "/symphonix.board.v1.AgentService/";
  const TICK_MS = 5000;
  const PAGE_ROWS = 100; // agents a page of the table shows
  const FILTERS = ["q", "state", "health", "paused"];
  const TYPING_MS = 200; // the search waits this long after a key before it filters

  const ui = {
    conn: $("conn"),
    stale: $("stale"),
    empty: $("empty"),
    connectHint: $("connect-hint"),
    tableWrap: $("table-wrap"),
    rows: $("agent-rows"),
    more: $("agents-more"),
    filter: $("agents-filter"),
    q: $("agents-q"),
    state: $("agents-state"),
    health: $("agents-health"),
    paused: $("agents-paused"),
    clear: $("agents-clear"),
    count: $("agents-count"),
    none: $("agents-none"),
    pager: $("agents-pager"),
    prev: $("agents-prev"),
    next: $("agents-next"),
    page: $("agents-page"),
  };
  const selects = { state: ui.state, health: ui.health, paused: ui.paused };

  let controller = null; // aborts the requests of the running loop
  const liveNap = { wake: null }; // a wait before a reconnect, while one runs
  let loaded = false; // whether a first list has arrived
  let listCut = false; // the last ListAgents read stopped at LIST_MAX with more to come
  let renderQueued = false;
  const agents = new Map(); // name -> Agent, as the board sent it
  const listeners = []; // see onAgents

  function upsert(agent) {
    if (!agent || typeof agent.name !== "string" || agent.name === "") return;
    agents.set(agent.name, agent);
    for (const f of listeners) f(agent);
  }

  // forgotten drops the agent an admin forgot (ForgetAgent) from the list.
  function forgotten(name) {
    if (typeof name !== "string" || !agents.delete(name)) return;
    queueRender();
  }

  function replaceAll(list, more) {
    agents.clear();
    for (const f of listeners) f(null);
    for (const a of list || []) upsert(a);
    loaded = true;
    listCut = more;
    render();
  }

  // onAgents registers f, called with each agent as the board sends it:
  // every one listed, then each change the watch brings; and with null
  // before the list is read again (after a watch ended, so a change may
  // have been missed meanwhile).
  function onAgents(f) {
    listeners.push(f);
  }

  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    setTimeout(render, 0);
  }

  function shortBuild(build) {
    const hex = build.startsWith("sha256:") ? build.slice(7) : build;
    return hex.length > 12 ? hex.slice(0, 12) + "…" : hex;
  }

  // installed is the package an agent's last hello said it was installed
  // from, as name@version linking to the package's page in the library, or
  // null when it said none.
  function installed(a) {
    const p = a && a.package;
    if (!p || typeof p.name !== "string" || p.name === "") return null;
    const link = node("a", "package-ref", p.name + (p.version ? "@" + p.version : ""));
    link.href = packageHref(p.name);
    if (p.digest) link.title = p.digest;
    link.dataset.package = p.name;
    link.dataset.version = p.version || "";
    return link;
  }

  function lastSeenText(el, now) {
    const ms = Number(el.dataset.ms);
    el.textContent = el.dataset.online === "true" ? "now" : ago(ms, now);
  }

  function lastSeen(a, online) {
    const ms = parseTime(a.lastSeenTime);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "last-seen");
    t.dateTime = new Date(ms).toISOString();
    t.title = (online ? "connected; last heard from " : "last seen ") + new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    t.dataset.online = String(online);
    lastSeenText(t, Date.now());
    return t;
  }

  function row(a) {
    const state = enums.agentState.word(a.state) || "unknown";
    const online = state === "online";
    const tr = node("tr", online ? "is-online" : "is-offline");
    tr.dataset.agent = a.name;
    tr.dataset.online = String(online);
    tr.dataset.state = state;

    const name = node("th");
    name.scope = "row";
    const link = node("a", "name", a.name);
    link.href = agentHref(a.name);
    name.append(link);
    if (a.description) name.append(node("span", "description", a.description));

    const now = Date.now();
    const status = node("td", "agent-state");
    const badge = node("span", "badge " + (online ? "online" : "offline"));
    badge.append(node("span", "dot"), document.createTextNode(state));
    status.append(badge);
    const paused = health.marker(a.pause, now);
    if (paused) status.append(" ", paused);
    tr.dataset.pause = health.pauseKind(a.pause);

    const well = node("td");
    const hb = health.badge(a, now);
    tr.dataset.health = hb.dataset.health;
    well.append(hb);

    const build = node("td");
    if (a.build) {
      const code = node("code", "build", shortBuild(a.build));
      code.title = a.build;
      build.append(code);
    } else {
      build.append(none());
    }

    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const seen = node("td");
    seen.append(lastSeen(a, online));

    tr.append(
      name,
      status,
      well,
      cell(tags(a.capabilities, "capabilities")),
      cell(a.protocol ? node("span", "protocol", a.protocol) : none()),
      build,
      cell(installed(a) || none()),
      cell(tags(a.tools, "tools")),
      seen,
    );
    return tr;
  }

  // ---- filters and pages ----

  // filtersOfHash is what "#agents?…" asks for: the filters (each "" when
  // not given, a select's value it does not know read as "") and the page,
  // from 1.
  function filtersOfHash() {
    const out = { q: "", state: "", health: "", paused: "", page: 1 };
    if (!location.hash.startsWith("#agents?")) return out;
    const params = new URLSearchParams(location.hash.slice("#agents?".length));
    out.q = (params.get("q") || "").slice(0, 200);
    for (const [k, el] of Object.entries(selects)) {
      const v = params.get(k) || "";
      out[k] = Array.from(el.options).some((o) => o.value === v) ? v : "";
    }
    const page = Number(params.get("page"));
    out.page = Number.isInteger(page) && page > 1 ? page : 1;
    return out;
  }

  function hashOf(f) {
    const params = new URLSearchParams();
    for (const k of FILTERS) if (f[k]) params.set(k, f[k]);
    if (f.page > 1) params.set("page", String(f.page));
    const qs = params.toString();
    return "#agents" + (qs ? "?" + qs : "");
  }

  let filters = filtersOfHash();

  // fill shows filters in the form.
  function fill(f) {
    if (document.activeElement !== ui.q) ui.q.value = f.q;
    for (const [k, el] of Object.entries(selects)) el.value = f[k];
  }

  // setFilters makes f the filters shown, in the address too (replacing
  // it: typing a search is not a step back and forth should take).
  function setFilters(f) {
    filters = f;
    const h = hashOf(f);
    if (location.hash !== h && board.view() === "agents") history.replaceState(null, "", h);
    render();
  }

  function fromForm() {
    return {
      q: ui.q.value.trim().slice(0, 200), state: ui.state.value, health: ui.health.value, paused: ui.paused.value, page: 1,
    };
  }

  // matches says whether agent a is one the filters f pick.
  function matches(a, f) {
    if (f.q) {
      const q = f.q.toLowerCase();
      if (!a.name.toLowerCase().includes(q) && !String(a.description || "").toLowerCase().includes(q)) return false;
    }
    if (f.state && (enums.agentState.word(a.state) || "unknown") !== f.state) return false;
    if (f.health && (health.word(a.health) || "none") !== f.health) return false;
    if (f.paused === "paused" && !a.pause?.paused) return false;
    if (f.paused === "working" && a.pause?.paused) return false;
    return true;
  }

  function filtering(f) {
    return FILTERS.some((k) => f[k] !== "");
  }

  function render() {
    renderQueued = false;
    const names = Array.from(agents.keys()).sort(byName);
    const picked = names.filter((n) => matches(agents.get(n), filters));
    const pages = Math.max(1, Math.ceil(Math.min(picked.length, LIST_MAX) / PAGE_ROWS));
    const page = Math.min(filters.page, pages);
    const from = (page - 1) * PAGE_ROWS;
    const shown = picked.slice(from, Math.min(from + PAGE_ROWS, LIST_MAX));
    ui.rows.replaceChildren(...shown.map((n) => row(agents.get(n))));
    ui.empty.hidden = !loaded || names.length > 0;
    ui.filter.hidden = names.length === 0;
    ui.none.hidden = names.length === 0 || picked.length > 0;
    ui.tableWrap.hidden = picked.length === 0;
    ui.pager.hidden = pages === 1;
    ui.prev.disabled = page === 1;
    ui.next.disabled = page === pages;
    ui.page.textContent = "page " + page + " of " + pages;
    ui.count.textContent = picked.length === 0 ? "" : (shown.length < picked.length
      ? "Agents " + (from + 1).toLocaleString("en") + "–" + (from + shown.length).toLocaleString("en") + " of " +
        count(picked.length, "agent", "agents")
      : count(picked.length, "agent", "agents")) +
      (filtering(filters) ? " matching, of " + names.length.toLocaleString("en") + " the board knows." : ", by name.");
    ui.count.hidden = ui.count.textContent === "";
    // Past LIST_MAX the table stops, and says so: with how many there are
    // when the watch has sent them all, or that there are more when only
    // the list's first LIST_MAX are known.
    if (names.length > LIST_MAX) {
      ui.more.textContent = "This page shows the first " + count(LIST_MAX, "agent", "agents") + " by name, of " +
        count(names.length, "agent", "agents") + " the board knows.";
    } else if (listCut && names.length === LIST_MAX) {
      ui.more.textContent = "This page shows the first " + count(LIST_MAX, "agent", "agents") +
        " by name: the board knows more.";
    } else {
      ui.more.textContent = "";
    }
    ui.more.hidden = ui.more.textContent === "";
  }

  function tick() {
    const now = Date.now();
    for (const t of ui.rows.querySelectorAll("time.last-seen")) lastSeenText(t, now);
  }

  // ---- the live loop ----

  function setConn(state, why) {
    ui.conn.dataset.state = state;
    ui.conn.textContent = state;
    ui.conn.title = why ? "last error: " + why : "";
    const stale = state === "reconnecting";
    ui.stale.hidden = !stale;
    ui.tableWrap.classList.toggle("stale", stale);
  }

  // live keeps the table up to date until the generation changes: list,
  // watch, and after the stream ends, wait a little and do both again.
  async function live(gen, token) {
    let attempt = 0;
    while (board.current(gen)) {
      const ctl = new AbortController();
      controller = ctl;
      let why = "";
      try {
        const list = await readAll(token, AGENTS + "ListAgents", {}, "agents", ctl.signal);
        if (!board.current(gen)) return;
        replaceAll(list.items, list.more);
        await stream(token, AGENTS + "WatchAgents", {}, ctl.signal,
          () => {
            if (!board.current(gen)) return;
            attempt = 0;
            setConn("live");
          },
          (msg) => {
            if (!board.current(gen) || !msg) return;
            if (msg.forgotten) {
              forgotten(msg.agent && msg.agent.name);
            } else {
              upsert(msg.agent);
            }
            queueRender();
          });
      } catch (e) {
        if (!board.current(gen)) return;
        if (e.code === "unauthenticated" || e.code === "permission_denied") {
          signOut(refusal(e));
          return;
        }
        why = e.message;
      }
      if (!board.current(gen)) return;
      ctl.abort();
      setConn("reconnecting", why);
      await sleep(retryDelay(attempt), liveNap);
      attempt++;
    }
  }

  let typing = 0; // the timer of a search being typed
  ui.q.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => setFilters(fromForm()), TYPING_MS);
  });
  for (const el of Object.values(selects)) el.addEventListener("change", () => setFilters(fromForm()));
  ui.filter.addEventListener("submit", (ev) => {
    ev.preventDefault();
    setFilters(fromForm());
  });
  ui.clear.addEventListener("click", () => {
    ui.q.value = "";
    fill({ q: "", state: "", health: "", paused: "" });
    setFilters(fromForm());
    ui.q.focus();
  });
  ui.prev.addEventListener("click", () => setFilters(Object.assign({}, filters, { page: Math.max(1, filters.page - 1) })));
  ui.next.addEventListener("click", () => setFilters(Object.assign({}, filters, { page: filters.page + 1 })));

  board.part({
    reset() {
      agents.clear();
      loaded = false;
      listCut = false;
      render();
    },
    shown(view) {
      if (view !== "agents") return;
      // The address says what is shown: "#agents" alone is every agent.
      filters = filtersOfHash();
      fill(filters);
      render();
    },
    run(gen, token) {
      setConn("connecting");
      live(gen, token);
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
      if (liveNap.wake) liveNap.wake();
    },
    wake() {
      if (liveNap.wake) liveNap.wake();
    },
  });

  Object.assign(board, { onAgents, forgotten, agentNamed: (name) => agents.get(name) || null, installed });

  ui.connectHint.textContent = "go run ./cmd/agent --monitor " + location.origin + " --token TOKEN DIR";
  setInterval(tick, TICK_MS);
})();
