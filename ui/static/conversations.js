// The conversations view: the pointers to the conversations agents hold
// (ListConversations), read every POLL_MS while it is shown, newest first,
// for every agent or for one: the first PAGE of them, and PAGE more each
// time More is clicked, up to board.LIST_MAX. A pointer says which thread,
// when it last changed, whether a run waits in it and who is in it — never
// what was said. The board decides what each caller sees (docs/people.md,
// "Conversations on the board"): an admin every pointer, a signed-in person
// those they are in, an operator token that is not an admin's none. The
// page only says so.
"use strict";

(function () {
  const {
    $, readPage, count, node, none, tags, parseTime, ago, byName, sleep, showError, signOut, refusal, PAGE_SIZE, LIST_MAX,
  } = board;
  const CONVERSATIONS = "/symphonix.board.v1.ConversationService/";
  const POLL_MS = 2000; // how often the pointers are read while the view is shown
  const POLL_MAX_MS = 15000; // the longest wait between reads after failures
  const PAGE = 100; // the pointers shown at first, and how many more More shows

  const ui = {
    view: $("conversations"),
    scope: $("conversations-scope"),
    error: $("conversations-error"),
    agent: $("conversations-agent"),
    loading: $("conversations-loading"),
    empty: $("conversations-empty"),
    emptyTitle: $("conversations-empty-title"),
    emptyText: $("conversations-empty-text"),
    wrap: $("conversations-wrap"),
    rows: $("conversation-rows"),
    moreRow: $("conversations-more-row"),
    more: $("conversations-more"),
    count: $("conversations-count"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the read of the running poll
  let epoch = 0; // counts changes of the filter: a read begun before one is stale
  let pointers = null; // as ListConversations said, or null before the first read
  let filter = ""; // the agent the list is for, or "" for every agent
  let wanted = PAGE; // how many pointers to show: PAGE, and PAGE more for each More
  let hasMore = false; // the board has more pointers than are shown
  const seen = new Set(); // the agents seen in a pointer since signing in
  let drawn = ""; // what the table shows, to redraw only on a change

  function reset() {
    epoch++;
    pointers = null;
    filter = "";
    wanted = PAGE;
    hasMore = false;
    seen.clear();
    drawn = "";
    ui.rows.replaceChildren();
    drawAgents();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    drawMore();
    showError(ui.error, "");
    ui.scope.textContent = "";
  }

  // scope is who is signed in, as far as what they may see goes: "admin",
  // "person" (signed in, not an admin) or "token" (an operator token that
  // is not an admin's).
  function scope() {
    const me = board.me();
    if (!me || board.may("admin")) return "admin";
    return me.kind === "session" ? "person" : "token";
  }

  function drawScope() {
    if (!board.token()) {
      ui.scope.textContent = "";
      return;
    }
    switch (scope()) {
      case "admin":
        ui.scope.textContent = "You are an admin: you see every conversation an agent has reported.";
        break;
      case "person":
        ui.scope.textContent = "You see the conversations you are in: those whose people include your address.";
        break;
      default:
        ui.scope.textContent = "You see no conversations: an operator token is nobody's address, so it is in none. " +
          "Sign in with your email and password to see the ones you are in.";
    }
  }

  // drawAgents fills the agent filter with the agents seen, keeping the
  // one chosen.
  function drawAgents() {
    const names = Array.from(seen);
    if (filter && !seen.has(filter)) names.push(filter);
    names.sort(byName);
    const key = JSON.stringify(names);
    if (ui.agent.dataset.drawn === key && ui.agent.value === filter) return;
    const every = node("option", "", "every agent");
    every.value = "";
    const options = names.map((n) => {
      const o = node("option", "", n);
      o.value = n;
      return o;
    });
    ui.agent.replaceChildren(every, ...options);
    ui.agent.value = filter;
    ui.agent.dataset.drawn = key;
  }

  // read reads the first want pointers for agent ("" for every agent),
  // newest first, in as few pages as it can: pages of want when that is no
  // more than a page can hold. It returns them, and whether there are more.
  async function read(cred, agent, want, signal) {
    const size = Math.min(want, PAGE_SIZE);
    const got = [];
    const keys = new Set(); // a pointer updated while the pages are read may be in two of them
    let token = "";
    for (let pages = 1; pages <= LIST_MAX; pages++) {
      const page = await readPage(cred, CONVERSATIONS + "ListConversations", agent ? { agent } : {}, "conversations",
        size, token, signal);
      for (const p of page.items) {
        if (!p || typeof p.agent !== "string" || typeof p.thread !== "string") continue;
        const k = p.agent + "\n" + p.thread;
        if (keys.has(k)) continue;
        keys.add(k);
        got.push(p);
      }
      token = page.next;
      if (token === "" || got.length >= want) break;
    }
    return { list: got.slice(0, want), more: got.length > want || token !== "" };
  }

  // poll reads the pointers every POLL_MS while the view is shown.
  async function poll(gen, cred) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.view.hidden) {
        await sleep(POLL_MAX_MS, nap); // shown wakes it
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      const began = epoch;
      const agent = filter;
      try {
        const res = await read(cred, agent, wanted, ctl.signal);
        if (!board.current(gen)) return;
        if (began === epoch) {
          pointers = res.list;
          hasMore = res.more;
          render();
        }
        failures = 0;
        showError(ui.error, "");
      } catch (e) {
        if (e.name === "AbortError" || !board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        showError(ui.error, "Could not read the conversations (" + e.code + "): " + e.message +
          ". What is shown may be out of date; trying again.");
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (began !== epoch) continue;
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  // ---- drawing ----

  // newestFirst orders pointers as the board does: most recently updated
  // first, then by agent, then by thread.
  function newestFirst(a, b) {
    const ta = parseTime(a.updateTime) || 0;
    const tb = parseTime(b.updateTime) || 0;
    return tb - ta || byName(a.agent, b.agent) || byName(a.thread, b.thread);
  }

  function updated(p, now) {
    const ms = parseTime(p.updateTime);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "updated", ago(ms, now));
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    return t;
  }

  function row(p, now) {
    const tr = node("tr", p.waiting === true ? "is-waiting" : "");
    tr.dataset.agent = p.agent;
    tr.dataset.thread = p.thread;
    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const agent = node("th", "", p.agent);
    agent.scope = "row";
    const waiting = p.waiting === true;
    const badge = node("span", "badge " + (waiting ? "waiting" : "idle"), waiting ? "yes" : "no");
    badge.dataset.waiting = String(waiting);
    tr.append(
      agent,
      cell(node("code", "thread", p.thread)),
      cell(updated(p, now)),
      cell(badge),
      cell(tags(p.people, "people in it")),
    );
    return tr;
  }

  function render() {
    drawScope();
    if (pointers === null) return;
    if (!filter) for (const p of pointers) seen.add(p.agent);
    drawAgents();
    ui.loading.hidden = true;
    const now = Date.now();
    const key = JSON.stringify([pointers, filter, hasMore]);
    if (key !== drawn) {
      drawn = key;
      const list = pointers.slice().sort(newestFirst);
      ui.rows.replaceChildren(...list.map((p) => row(p, now)));
    } else {
      for (const t of ui.rows.querySelectorAll("time.updated")) t.textContent = ago(Number(t.dataset.ms), now);
    }
    ui.wrap.hidden = pointers.length === 0;
    ui.empty.hidden = pointers.length > 0;
    if (pointers.length === 0) drawEmpty();
    drawMore();
  }

  // drawMore says how many pointers are shown when there are more, and
  // offers More until LIST_MAX are shown.
  function drawMore() {
    const shown = pointers === null ? 0 : pointers.length;
    const more = pointers !== null && hasMore;
    const what = count(shown, "conversation", "conversations");
    if (!more) ui.count.textContent = "";
    else if (shown >= LIST_MAX) ui.count.textContent = "This page shows the " + what + " most recently updated, the most it shows: choose one agent to see others.";
    else ui.count.textContent = "Showing the " + what + " most recently updated: there are more.";
    ui.more.hidden = !more || shown >= LIST_MAX;
    ui.more.disabled = false;
    ui.moreRow.hidden = !more;
  }

  // onMore shows PAGE more pointers, reading them now.
  function onMore() {
    if (!hasMore || wanted >= LIST_MAX) return;
    wanted = Math.min(LIST_MAX, wanted + PAGE);
    epoch++;
    ui.more.disabled = true;
    if (nap.wake) nap.wake(); // a read under way is dropped: its epoch is past
  }

  // drawEmpty says why the list is empty, for what the caller may see.
  function drawEmpty() {
    const s = scope();
    if (s === "token") {
      ui.emptyTitle.textContent = "An operator token sees no conversations.";
      ui.emptyText.textContent = "A token is not a person, so it is in none. Sign in with your email and password " +
        "to see the ones you are in, or with an admin's token to see them all.";
    } else if (s === "person") {
      ui.emptyTitle.textContent = filter
        ? "You are in no conversation of " + filter + "."
        : "You are in no conversation an agent has reported.";
      ui.emptyText.textContent = "You see the conversations you are in. One appears here when an agent " +
        "that knows who you are (paired or verified) reports it.";
    } else {
      ui.emptyTitle.textContent = filter
        ? filter + " has reported no conversation."
        : "No agent has reported a conversation yet.";
      ui.emptyText.textContent = "An agent reports, on its link, where its conversations are: the thread, when it " +
        "last changed, whether a run waits in it and who is in it, never what was said.";
    }
  }

  function onFilter() {
    filter = ui.agent.value;
    wanted = PAGE;
    hasMore = false;
    epoch++;
    pointers = null;
    drawn = "";
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.rows.replaceChildren();
    drawMore();
    if (nap.wake) nap.wake(); // a read under way is dropped: its epoch is past
  }

  ui.agent.addEventListener("change", onFilter);
  ui.more.addEventListener("click", onMore);
  $("conversations-filter").addEventListener("submit", (ev) => ev.preventDefault());

  board.part({
    reset,
    run(gen, cred) {
      drawScope();
      poll(gen, cred);
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
      if (view === "conversations" && nap.wake) nap.wake();
    },
    role() {
      drawn = "";
      render();
    },
  });
})();
