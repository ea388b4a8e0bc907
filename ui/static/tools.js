// The tools view: per MCP server, the tools its agents declared in their
// last hello, connected or not, and for each agent a switch that says
// whether it may call the tool. An agent that is not connected is marked
// offline: its switch can be flipped all the same, and the board tells it
// when it next connects. It reads every page of ListServers and of
// ListSwitches (every agent's switches, and whether the board has ever
// spoken for it) every POLL_MS while it is shown, up to board.LIST_MAX
// servers and agents, and says so when there are more. Flipping a switch
// sends SetToolSwitch for that one tool: the board leaves the agent's
// other tools as they are, so two flips at once, here or by another
// operator, both keep their change.
"use strict";

(function () {
  const { $, unary, readAll, count, node, tags, parseTime, byName, sleep, showError, signOut, refusal, LIST_MAX } = board;
  const TOOLS = "/symphonix.board.v1.ToolService/";
  const POLL_MS = 1000; // how often the servers are read while the view is shown
  const POLL_MAX_MS = 10000; // the longest wait between reads after failures

  const ui = {
    tools: $("tools"),
    readOnly: $("tools-readonly"),
    error: $("tools-error"),
    readError: $("tools-read-error"),
    status: $("tools-status"),
    loading: $("tools-loading"),
    empty: $("tools-empty"),
    more: $("tools-more"),
    servers: $("servers"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the reads of the running poll
  let epoch = 0; // counts flips made here: a read begun before one is stale
  let servers = null; // as ListServers said, or null before the first read
  let switches = new Map(); // agent -> Switches, as ListSwitches or SetToolSwitch said
  let cut = { servers: false, switches: false }; // which lists stopped at LIST_MAX
  const pending = new Map(); // agent + "\n" + "server.tool" -> the state asked for
  let readOnly = false; // the board refused a flip as not allowed
  let drawn = ""; // what the page shows, to redraw only on a change

  function reset() {
    epoch++;
    servers = null;
    switches = new Map();
    cut = { servers: false, switches: false };
    pending.clear();
    readOnly = !board.may("admin");
    drawn = "";
    ui.servers.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.readOnly.hidden = true;
    showError(ui.error, "");
    showError(ui.readError, "");
    say("");
  }

  function say(message) {
    ui.status.textContent = message;
    ui.status.hidden = !message;
  }

  // agentsOf is every agent the servers name, sorted.
  function agentsOf(list) {
    const names = new Set();
    for (const s of list) for (const a of s.agents || []) names.add(a);
    return Array.from(names).sort(byName);
  }

  // merged is the servers of a list read by pages, one entry per name:
  // the board cuts a server too large for what is left of a page between
  // two of its agents, and goes on with it at the top of the next page.
  function merged(entries) {
    const byName = new Map();
    const union = (a, b) => Array.from(new Set([...(a || []), ...(b || [])]));
    for (const s of entries) {
      if (!s || typeof s.name !== "string" || s.name === "") continue;
      const had = byName.get(s.name);
      if (!had) {
        byName.set(s.name, s);
        continue;
      }
      const tools = new Map((had.tools || []).map((t) => [t.name, t]));
      for (const t of s.tools || []) {
        const old = tools.get(t.name);
        tools.set(t.name, old ? { name: t.name, agents: union(old.agents, t.agents), on: union(old.on, t.on) } : t);
      }
      byName.set(s.name, {
        name: s.name,
        tools: Array.from(tools.values()),
        agents: union(had.agents, s.agents),
        online: union(had.online, s.online),
      });
    }
    return Array.from(byName.values());
  }

  // read reads the servers and the switches of every agent they name,
  // every page of both, LIST_MAX of each at most.
  async function read(token, signal) {
    const [res, all] = await Promise.all([
      readAll(token, TOOLS + "ListServers", {}, "servers", signal),
      readAll(token, TOOLS + "ListSwitches", {}, "switches", signal),
    ]);
    const list = merged(res.items);
    const names = new Set(agentsOf(list));
    const sw = new Map();
    for (const s of all.items) {
      if (s && names.has(s.agent)) sw.set(s.agent, s);
    }
    return { list, sw, cut: { servers: res.more, switches: all.more } };
  }

  // poll reads the servers every POLL_MS while the view is shown, until the
  // generation changes, waiting longer after failures.
  async function poll(gen, token) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.tools.hidden) {
        await sleep(POLL_MAX_MS, nap); // shown wakes it
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      const began = epoch;
      try {
        const got = await read(token, ctl.signal);
        if (!board.current(gen)) return;
        failures = 0;
        showError(ui.readError, "");
        if (began === epoch) {
          servers = got.list;
          switches = got.sw;
          cut = got.cut;
          render();
        }
      } catch (e) {
        if (!board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        showError(ui.readError, "Could not read the tools (" + e.code + "): " + e.message +
          ". Trying again; until then the switches may be out of date.");
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (began !== epoch) continue; // a flip was made meanwhile: read again now
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  function pollSoon() {
    epoch++;
    if (nap.wake) nap.wake();
  }

  // ---- drawing ----

  function render() {
    if (servers === null) return;
    const key = JSON.stringify([servers, Array.from(switches), Array.from(pending), readOnly, cut]);
    if (key === drawn) return;
    drawn = key;
    const focused = document.activeElement;
    const refocus = focused instanceof HTMLInputElement && ui.servers.contains(focused)
      ? { agent: focused.dataset.agent, tool: focused.dataset.tool } : null;
    ui.servers.replaceChildren(...servers.map(serverCard));
    if (refocus) {
      const again = Array.from(ui.servers.querySelectorAll("input.switch"))
        .find((el) => el.dataset.agent === refocus.agent && el.dataset.tool === refocus.tool);
      if (again) again.focus({ preventScroll: true });
    }
    ui.loading.hidden = true;
    ui.empty.hidden = servers.length > 0;
    ui.readOnly.hidden = !readOnly;
    drawCut();
  }

  // drawCut says which lists this page read only the first LIST_MAX of.
  function drawCut() {
    const said = [];
    if (cut.servers) {
      said.push("This page shows the first " + count(servers.length, "MCP server", "MCP servers") + " by name, the " +
        "last perhaps without all its agents: the board knows more.");
    }
    if (cut.switches) {
      said.push("It read the switches of the first " + count(LIST_MAX, "agent", "agents") + " by name: an agent after them " +
        "shows what the server list says is on, but not whether the board has ever decided for it.");
    }
    ui.more.textContent = said.join(" ");
    ui.more.hidden = said.length === 0;
  }

  function serverCard(s) {
    const el = node("article", "card server");
    el.dataset.server = s.name;
    const title = node("h3", "server-name");
    title.append(node("code", "", s.name));
    const who = node("p", "declared-by");
    who.append(node("span", "field-name", "declared by "), tags(s.agents, "agents that declare " + s.name));
    el.append(title, who);
    const online = new Set(s.online || []);
    if ((s.agents || []).length > 0 && !(s.agents || []).some((a) => online.has(a))) {
      el.append(node("p", "notice all-offline",
        "No agent that declares it is connected: its tools are listed as its agents last declared them, " +
        "and a switch applies when the agent next connects."));
    }
    const tools = (s.tools || []).filter((t) => t && typeof t.name === "string" && t.name !== "");
    if (tools.length === 0) {
      el.append(node("p", "notice no-tools", "Its agents declare none of its tools."));
      return el;
    }
    const table = node("table", "tools");
    const head = node("thead");
    const hr = node("tr");
    for (const h of ["Tool", "Agents that declare it"]) {
      const th = node("th", "", h);
      th.scope = "col";
      hr.append(th);
    }
    head.append(hr);
    const body = node("tbody");
    for (const t of tools) body.append(toolRow(s.name, t, online));
    table.append(head, body);
    const wrap = node("div", "table-wrap");
    wrap.append(table);
    el.append(wrap);
    return el;
  }

  function toolRow(server, t, online) {
    const full = server + "." + t.name;
    const tr = node("tr");
    tr.dataset.tool = full;
    const name = node("th");
    name.scope = "row";
    name.append(node("code", "tool-name", t.name));
    const td = node("td");
    const agents = (t.agents || []).slice().sort(byName);
    if (agents.length === 0) {
      td.append(node("span", "none", "no agent declares it"));
    } else {
      const ul = node("ul", "switches");
      ul.setAttribute("aria-label", "who may call " + full);
      for (const agent of agents) ul.append(switchItem(agent, full, (t.on || []).includes(agent), online.has(agent)));
      td.append(ul);
    }
    tr.append(name, td);
    return tr;
  }

  // switchItem is one agent's switch for one tool: a checkbox, its name,
  // what is on in words, and, for an agent that is not connected, that it
  // is offline and hears of the switch when it next connects.
  function switchItem(agent, full, listedOn, online) {
    const sw = switches.get(agent);
    const k = agent + "\n" + full;
    const asked = pending.get(k);
    const on = asked !== undefined ? asked : sw ? (sw.on || []).includes(full) : listedOn;
    let state;
    if (asked !== undefined) state = asked ? "switching on…" : "switching off…";
    else if (sw && !sw.spoken) state = "nobody decided: nothing on";
    else state = on ? "on" : "off";

    const li = node("li", "switch-item");
    li.dataset.agent = agent;
    li.dataset.online = online ? "true" : "false";
    li.dataset.state = asked !== undefined ? "pending" : sw && !sw.spoken ? "unspoken" : on ? "on" : "off";
    if (sw && sw.setBy) li.title = "last set by " + sw.setBy + (Number.isNaN(parseTime(sw.setTime)) ? "" : ", " + new Date(parseTime(sw.setTime)).toLocaleString());
    const label = node("label", "switch-label");
    const box = node("input", "switch");
    box.type = "checkbox";
    box.setAttribute("role", "switch");
    box.checked = on;
    box.disabled = readOnly || asked !== undefined;
    box.dataset.agent = agent;
    box.dataset.tool = full;
    box.setAttribute("aria-label", full + " for " + agent + (online ? "" : " (offline: applies when it next connects)"));
    box.addEventListener("change", () => flip(agent, full, box.checked));
    label.append(box, node("span", "switch-agent", agent));
    li.append(label, node("span", "switch-state", state));
    if (!online) {
      const badge = node("span", "badge offline");
      badge.title = "not connected: a switch applies when it next connects";
      badge.append(node("span", "dot"), document.createTextNode("offline"));
      li.append(badge);
    }
    return li;
  }

  // ---- flipping ----

  function flipRefusal(e, agent, full, want) {
    const what = full + (want ? " on" : " off") + " for " + agent;
    switch (e.code) {
      case "permission_denied":
        return "You may not switch " + what + " (permission_denied): " + e.message +
          ". Only admins may switch tools; nothing was changed.";
      case "invalid_argument":
      case "not_found":
        return "The board refused to switch " + what + " (" + e.code + "): " + e.message +
          ". Nothing was changed; the tools are being read again.";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message + ". " + what +
          " may or may not have been switched; the list will show.";
      default:
        return "The board refused to switch " + what + " (" + e.code + "): " + e.message + ".";
    }
  }

  // flip asks for tool full to be on (want) or off for agent, and for
  // nothing else: the agent's other tools stay as the board has them.
  async function flip(agent, full, want) {
    if (readOnly || !board.may("admin")) return;
    const gen = board.generation();
    const token = board.token();
    const k = agent + "\n" + full;
    pending.set(k, want);
    showError(ui.error, "");
    say("");
    epoch++;
    render();
    try {
      const res = await unary(token, TOOLS + "SetToolSwitch", { agent, tool: full, on: want });
      if (!board.current(gen)) return;
      if (res.switches) switches.set(agent, res.switches);
      say("Switched " + full + (want ? " on" : " off") + " for " + agent +
        (res.pushed ? "; it was told at once." : "; it is not connected, and is told when it next connects."));
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "permission_denied") readOnly = true;
      showError(ui.error, flipRefusal(e, agent, full, want));
    } finally {
      if (board.current(gen)) {
        pending.delete(k);
        drawn = ""; // the checkbox clicked may show what was asked, not what is
        render();
        pollSoon();
      }
    }
  }

  board.part({
    reset,
    role() {
      readOnly = !board.may("admin");
      render();
    },
    run(gen, token) {
      poll(gen, token);
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
      if (nap.wake) nap.wake();
    },
    wake() {
      if (nap.wake) nap.wake();
    },
    shown(view) {
      if (view === "tools" && nap.wake) nap.wake();
    },
  });
})();
