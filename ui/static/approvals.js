// The approvals view: the queue of pending approvals and the history,
// kept live by the WatchApprovals server stream (re-subscribing whenever it
// ends), the rules read by ListRules (every page) on a slower timer, and
// deciding them (Decide, with the digest the board gave), by click or by
// keyboard. The history shows the HISTORY_MAX newest decided approvals the
// watch sends; its More button reads older ones from ListApprovals, a page
// at a time. "#approval/<id>" (board.approvalHref) opens the view with that
// approval picked out: its card selected, its row in the history marked, or,
// when the page holds neither, what GetApproval says of it. A card whose
// approval names the run that stopped for it (run_id) links to the run's
// page. A card's yes may also stand, for some hours, a number of times or
// both, for the agent's later asks of the exact same operation
// (DecideRequest.consent; the Consents tab lists them): the board's
// refusal of one is shown on those fields.
"use strict";

(function () {
  const {
    $, unary, stream, readPage, readAll, count, node, none, tags, parseTime, ago, byName, sleep, retryDelay,
    showError, refusal, signOut, LIST_MAX, runHref, approvalOfHash,
  } = board;
  const APPROVALS = "/symphonix.board.v1.ApprovalService/";
  const TICK_MS = 1000; // how often the ages shown are brought up to date
  const RULES_MS = 10000; // how often the rules are read
  // How long the watch may be silent before it is given up for dead: the
  // board sends a heartbeat every 15 s, so a proxy that dropped the stream
  // without a word is noticed.
  const SILENCE_MS = 45000;
  const HISTORY_MAX = 100; // decided approvals the watch sends, and the history shows until More
  const MORE_PAGE = 100; // approvals read from ListApprovals a page at a time, for More
  const MORE_PAGES = 10; // the most pages one click on More reads
  const SHOW_DEPTH = 8; // nesting shown as tables before falling back to JSON
  // The most a standing consent may be (docs/limits.md); the board checks.
  const CONSENT_MAX_HOURS = 168;
  const CONSENT_MAX_USES = 1000;
  const CONSENT_NOTE = "Also approve this agent's later asks for this exact operation (the same digest, under the " +
    "same rule) for some hours, a number of times, or both. Both empty: this yes only.";

  const ui = {
    pendingCount: $("pending-count"),
    approvals: $("approvals"),
    approvalsError: $("approvals-error"),
    approvalsStatus: $("approvals-status"),
    readOnly: $("approvals-readonly"),
    queue: $("queue"),
    queueLoading: $("queue-loading"),
    queueEmpty: $("queue-empty"),
    historyEmpty: $("history-empty"),
    historyWrap: $("history-wrap"),
    historyRows: $("history-rows"),
    more: $("history-more"),
    moreStatus: $("history-more-status"),
    rulesMore: $("rules-more"),
  };

  const liveNap = { wake: null }; // a wait before re-subscribing, while one runs
  const rulesNap = { wake: null }; // between two reads of the rules
  let controller = null; // aborts the watch of the running loop
  let rulesController = null; // aborts the read of the rules
  let moreController = null; // aborts the read of More
  let resyncing = false; // the watch was ended here to start it again at once
  let renderQueued = false;
  let approvalsLoaded = false;
  let selected = ""; // the id of the selected approval
  let historyKey = ""; // what the history shows, to redraw only on a change
  let reasonIDs = 0;
  let rules = new Map(); // rule id -> Rule
  const askedRules = new Set(); // rule ids not known that made the rules be read again
  const known = new Map(); // approval id -> Approval, as the board last sent it
  const cards = new Map(); // approval id -> card (see makeCard)
  // Once More is used, every decided approval the page learns of, from the
  // watch or from ListApprovals, is kept here, and the history shows them
  // all: nothing read is dropped, so the history has no gap.
  const older = new Map(); // approval id -> Approval, decided
  let moreUsed = false; // More was clicked since signing in
  let moreToken = ""; // the next page of ListApprovals for More, or "" to start (or when done)
  let moreDone = false; // ListApprovals has no page after the last one read
  let moreBusy = false; // More is reading
  let target = ""; // the approval the address picks out, until it has been shown
  let targetSeq = 0; // counts the approvals picked out: an answer for an earlier one is dropped

  function clearApprovals() {
    approvalsLoaded = false;
    selected = "";
    historyKey = "";
    rules = new Map();
    askedRules.clear();
    known.clear();
    cards.clear();
    older.clear();
    moreUsed = false;
    moreToken = "";
    moreDone = false;
    moreBusy = false;
    target = "";
    targetSeq++;
    ui.queue.replaceChildren();
    ui.historyRows.replaceChildren();
    ui.queueLoading.hidden = false;
    ui.queueEmpty.hidden = true;
    ui.historyEmpty.hidden = true;
    ui.historyWrap.hidden = true;
    ui.pendingCount.hidden = true;
    ui.more.hidden = true;
    ui.more.disabled = false;
    ui.rulesMore.hidden = true;
    sayMore("");
    showError(ui.approvalsError, "");
    say("");
  }

  // stateOf is the word for where a stands: "pending", "approved", ...
  function stateOf(a) {
    return enums.approvalState.word(a.state);
  }

  // say shows how the last decision went, or "" for nothing.
  function say(message) {
    ui.approvalsStatus.textContent = message;
    ui.approvalsStatus.hidden = !message;
  }

  // ---- the live loop ----

  // live keeps the approvals up to date until the generation changes: read
  // the rules, watch (a snapshot, then every change), and after the watch
  // ends, wait a little and do both again.
  async function live(gen, token) {
    let attempt = 0;
    while (board.current(gen)) {
      const ctl = new AbortController();
      controller = ctl;
      let silent = false;
      let watchdog = null;
      const heard = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => {
          silent = true;
          ctl.abort();
        }, SILENCE_MS);
      };
      let why = "";
      let code = "";
      try {
        await readRules(token, ctl.signal);
        if (!board.current(gen)) return;
        let staged = new Map(); // the snapshot, until it is complete
        await stream(token, APPROVALS + "WatchApprovals", { history: HISTORY_MAX }, ctl.signal,
          () => {
            if (board.current(gen)) heard();
          },
          (msg) => {
            if (!board.current(gen) || !msg) return;
            heard();
            switch (enums.approvalEvent.word(msg.event)) {
              case "heartbeat":
                return;
              case "snapshot":
                if (staged && validApproval(msg.approval)) staged.set(msg.approval.id, msg.approval);
                return;
              case "synced":
                if (!staged) return;
                known.clear();
                for (const [id, a] of staged) known.set(id, a);
                staged = null;
                attempt = 0;
                showError(ui.approvalsError, "");
                render();
                return;
              default:
                if (staged) {
                  if (validApproval(msg.approval)) staged.set(msg.approval.id, msg.approval);
                  return;
                }
                if (upsert(msg.approval)) queueRender();
                // A new approval, or one escalated to a step that lets
                // this person decide: the browser may say so (notify.js).
                const ev = enums.approvalEvent.word(msg.event);
                if ((ev === "raised" || ev === "escalated") && board.notifyApproval && validApproval(msg.approval) &&
                    stateOf(msg.approval) === "pending" && mayDecide(msg.approval)) {
                  board.notifyApproval(msg.approval, ev);
                }
            }
          });
        why = "the watch ended";
        code = "unavailable";
      } catch (e) {
        if (!board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        if (silent) {
          code = "deadline_exceeded";
          why = "nothing heard from the board for " + SILENCE_MS / 1000 + " s";
        } else {
          code = e.code || "unknown";
          why = e.message;
        }
      } finally {
        clearTimeout(watchdog);
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (resyncing) {
        resyncing = false;
        continue; // ended here to read everything again: at once
      }
      showError(ui.approvalsError, "Could not watch the approvals (" + code + "): " + why +
        ". Trying again; until then this list may be out of date.");
      await sleep(retryDelay(attempt), liveNap);
      attempt++;
    }
  }

  // resync ends the watch and starts it again at once, for a fresh snapshot.
  function resync() {
    resyncing = true;
    if (controller) controller.abort();
    if (liveNap.wake) liveNap.wake();
  }

  // readRules reads the rules, every page; the cards show who may decide
  // from them.
  async function readRules(token, signal) {
    const res = await readAll(token, APPROVALS + "ListRules", {}, "rules", signal);
    const next = new Map();
    for (const r of res.items) if (r && r.id) next.set(r.id, r);
    rules = next;
    ui.rulesMore.textContent = res.more
      ? "This page read the first " + count(LIST_MAX, "rule", "rules") + " only: an approval governed by a rule " +
        "after them shows its rule as one that no longer exists."
      : "";
    ui.rulesMore.hidden = !res.more;
    if (approvalsLoaded) queueRender();
  }

  // rulesLoop reads the rules every RULES_MS, or sooner when an approval
  // names a rule not known here, until the generation changes.
  async function rulesLoop(gen, token) {
    while (board.current(gen)) {
      await sleep(RULES_MS, rulesNap);
      if (!board.current(gen)) return;
      const ctl = new AbortController();
      rulesController = ctl;
      try {
        await readRules(token, ctl.signal);
      } catch (e) {
        if (!board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        // The watch's loop reads them again when it re-subscribes.
      }
    }
  }

  // upsert keeps what the board sent about one approval, and reports
  // whether anything is to be drawn again. An approval that no longer waits
  // never waits again: a pending copy after it is an older message.
  function upsert(a) {
    if (!validApproval(a)) return false;
    if (stateOf(a) === "pending" && older.has(a.id)) return false;
    const had = known.get(a.id);
    if (had && stateOf(had) !== "pending" && stateOf(a) === "pending") return false;
    known.set(a.id, a);
    if (board.approvalChanged) board.approvalChanged(a.id); // its page, if shown (approval.js)
    return true;
  }

  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    setTimeout(() => {
      renderQueued = false;
      if (approvalsLoaded) render(); // nothing before the first snapshot, or after a sign-out
    }, 0);
  }

  // render draws what is known: the queue, the history and the count.
  // Until More is used it forgets the decided approvals past the
  // HISTORY_MAX newest, as the watch would not send them again; after, it
  // keeps every decided one in older.
  function render() {
    renderQueued = false;
    const all = Array.from(known.values());
    const pending = all.filter((a) => stateOf(a) === "pending" && !older.has(a.id));
    let decided = all.filter((a) => stateOf(a) !== "pending");
    if (moreUsed) {
      for (const a of decided) {
        older.set(a.id, a);
        known.delete(a.id);
      }
      decided = Array.from(older.values());
    }
    decided.sort((a, b) => byAge(b, a));
    if (!moreUsed) {
      for (const a of decided.slice(HISTORY_MAX)) known.delete(a.id);
      decided = decided.slice(0, HISTORY_MAX);
    }
    for (const a of pending) {
      if (a.ruleId && !rules.has(a.ruleId) && !askedRules.has(a.ruleId)) {
        askedRules.add(a.ruleId); // a rule put since the rules were read: read them now
        if (rulesNap.wake) rulesNap.wake();
      }
    }
    applyApprovals(pending, decided);
    drawMore(decided.length);
    pick();
  }

  // pick shows the approval the address picks out, once the page holds
  // what the watch sent: its card selected, or its row in the history
  // marked; else it is read from the board.
  function pick() {
    if (target === "" || !approvalsLoaded) return;
    const id = target;
    if (cards.has(id)) {
      target = "";
      select(id, true);
      return;
    }
    const row = Array.from(ui.historyRows.children).find((tr) => tr.dataset.approval === id);
    if (row) {
      target = "";
      for (const tr of ui.historyRows.querySelectorAll("tr.is-target")) tr.classList.remove("is-target");
      row.classList.add("is-target");
      row.scrollIntoView({ block: "nearest" });
      say("The approval is no longer waiting: it is " + (row.dataset.state || "decided") + ", in the history below.");
      return;
    }
    target = "";
    lookUp(id);
  }

  // lookUp reads one approval the page does not hold, and says where it
  // stands; a pending one joins the queue.
  async function lookUp(id) {
    const gen = board.generation();
    const s = ++targetSeq;
    try {
      const res = await unary(board.token(), APPROVALS + "GetApproval", { id });
      if (!board.current(gen) || s !== targetSeq) return;
      const a = res && res.approval;
      if (!validApproval(a)) return;
      if (stateOf(a) === "pending") {
        target = a.id;
        if (upsert(a)) render();
        return;
      }
      const d = a.decision || {};
      const who = Array.isArray(d.who) && d.who.length > 0 ? " by " + d.who.join(", ") : "";
      say("The approval " + (a.ask ? "“" + a.ask + "”" : a.id) + " of " + (a.agent || "?") + " is no longer waiting: it is " +
        (stateOf(a) || "decided") + who + (d.reason ? " (" + d.reason + ")" : "") + ".");
    } catch (e) {
      if (!board.current(gen) || s !== targetSeq) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.approvalsError, e.code === "not_found"
        ? "The board has no approval " + id + "."
        : "Could not read the approval " + id + " (" + e.code + "): " + e.message + ".");
    }
  }

  // drawMore shows More while older decided approvals may be there: until
  // it is used, when the history holds as many as the watch sends; after,
  // until ListApprovals has no more pages.
  function drawMore(shown) {
    ui.more.hidden = moreUsed ? moreDone : shown < HISTORY_MAX;
    ui.more.disabled = moreBusy;
  }

  function sayMore(message) {
    ui.moreStatus.textContent = message;
    ui.moreStatus.hidden = !message;
  }

  // more reads older decided approvals from ListApprovals, newest first, a
  // page after the last it read: until it has found a page's worth the
  // history does not show yet, the list ends, or it has read MORE_PAGES
  // pages. (The pages begin with the newest approvals, which the history
  // holds already.) Pending ones it skips: the watch keeps the queue.
  async function more() {
    if (moreBusy || (moreUsed && moreDone) || !approvalsLoaded) return;
    const gen = board.generation();
    const token = board.token();
    const ctl = new AbortController();
    moreController = ctl;
    moreBusy = true;
    if (!moreUsed) {
      moreUsed = true;
      render(); // moves the decided ones shown into older
    }
    drawMore(0);
    sayMore("Reading older approvals…");
    showError(ui.approvalsError, "");
    let added = 0;
    try {
      for (let pages = 0; pages < MORE_PAGES && added < MORE_PAGE && !moreDone; pages++) {
        const page = await readPage(token, APPROVALS + "ListApprovals", {}, "approvals", MORE_PAGE, moreToken, ctl.signal);
        if (!board.current(gen)) return;
        for (const a of page.items) {
          if (!validApproval(a) || stateOf(a) === "pending" || older.has(a.id)) continue;
          older.set(a.id, a);
          added++;
        }
        moreToken = page.next;
        moreDone = page.next === "";
      }
      sayMore((added === 0 ? "No older decided approval was found" : count(added, "older decided approval", "older decided approvals") + " added") +
        (moreDone ? ": that is every one the board has." : ": More reads on."));
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      sayMore("");
      if (e.name !== "AbortError") showError(ui.approvalsError, "Could not read older approvals (" + e.code + "): " + e.message + ".");
    } finally {
      if (board.current(gen)) {
        moreBusy = false;
        if (moreController === ctl) moreController = null;
        render();
      }
    }
  }

  // byAge orders approvals as the board does, oldest first: by when they
  // were raised, to the nanosecond the board gives, then by id.
  function byAge(a, b) {
    const d = (parseTime(a.createTime) || 0) - (parseTime(b.createTime) || 0);
    if (d !== 0) return d;
    return belowMillis(a.createTime) - belowMillis(b.createTime) || byName(a.id, b.id);
  }

  // belowMillis is what a timestamp says past its milliseconds, in
  // nanoseconds (0 to 999,999), which parseTime drops.
  function belowMillis(s) {
    const m = typeof s === "string" ? /\.\d{3}(\d{0,6})/.exec(s) : null;
    return m ? Number(m[1].padEnd(6, "0")) : 0;
  }

  function validApproval(a) {
    return a && typeof a.id === "string" && a.id !== "";
  }

  // applyApprovals brings the queue (oldest first), the history (newest
  // first) and the tab's count up to date with what the board said. Cards
  // already shown are updated in place, so a reason being typed survives.
  function applyApprovals(pendingList, decidedList) {
    const pending = (pendingList || []).filter(validApproval).sort(byAge);
    const ids = new Set(pending.map((a) => a.id));

    const order = Array.from(ui.queue.children).map((el) => el.dataset.approval);
    let refocus = false;
    let at = -1;
    for (const [id, card] of cards) {
      if (ids.has(id)) continue;
      if (card.el.contains(document.activeElement)) refocus = true;
      if (id === selected) at = order.indexOf(id);
      card.el.remove();
      cards.delete(id);
    }
    pending.forEach((a, i) => {
      let card = cards.get(a.id);
      if (!card) {
        card = makeCard(a);
        cards.set(a.id, card);
      }
      updateCard(card, a);
      const here = ui.queue.children[i];
      if (here !== card.el) ui.queue.insertBefore(card.el, here || null);
    });

    if (!cards.has(selected)) {
      selected = "";
      if (pending.length > 0) {
        const next = pending[Math.min(Math.max(at, 0), pending.length - 1)];
        select(next.id, refocus);
      }
    }
    approvalsLoaded = true;
    ui.queueLoading.hidden = true;
    ui.queueEmpty.hidden = pending.length > 0;
    ui.pendingCount.textContent = String(pending.length);
    ui.pendingCount.hidden = pending.length === 0;

    const decided = decidedList;
    const key = decided.map((a) => a.id + ":" + stateOf(a)).join(",");
    if (key !== historyKey) {
      historyKey = key;
      ui.historyRows.replaceChildren(...decided.map(historyRow));
    }
    ui.historyEmpty.hidden = decided.length > 0;
    ui.historyWrap.hidden = decided.length === 0;
  }

  // makeCard draws an approval's parts that never change: who asked, the
  // question, what is shown and the account. updateCard fills in the rest.
  function makeCard(a) {
    const el = node("li", "card approval");
    el.dataset.approval = a.id;
    el.tabIndex = -1;

    const head = node("div", "approval-head");
    const ask = node("h4", "ask", a.ask || "(no question given)");
    const meta = node("p", "meta");
    meta.append(
      labelled("agent", a.agent),
      labelled("node", a.node),
      runField(a),
    );
    const age = relTime(a.createTime, "asked ");
    age.classList.add("age");
    meta.append(age);
    head.append(ask, meta);
    // The amounts the board read out of the question and the account, each
    // as written and as a value with its currency: a person checks the
    // number, not their reading of prose.
    if (Array.isArray(a.amounts) && a.amounts.length > 0) {
      const amounts = node("ul", "amounts");
      amounts.setAttribute("aria-label", "Amounts");
      for (const m of a.amounts) {
        const value = String(m.value ?? 0) + (m.currency ? " " + m.currency : "");
        amounts.append(node("li", "", m.text === value ? value : (m.text || "") + " = " + value));
      }
      head.append(amounts);
    }

    const shown = node("div", "shown");
    shown.append(node("h5", "", "Shown"));
    const show = shownOf(a);
    if (Object.keys(show).length === 0) shown.append(node("p", "none", "Nothing is shown."));
    else shown.append(showTable(show, 0));

    el.append(head, shown);
    if (typeof a.account === "string" && a.account !== "") {
      const account = node("div", "account");
      account.append(node("h5", "", "The case for it"), node("p", "account-text", a.account));
      el.append(account);
    }

    const rule = node("div", "rule");
    const decideBox = node("div", "decide");
    const id = "reason-" + ++reasonIDs;
    const label = node("label", "", "Reason");
    label.htmlFor = id;
    const reason = node("textarea", "reason");
    reason.id = id;
    reason.rows = 2;
    reason.maxLength = 4096;
    reason.autocomplete = "off";
    const buttons = node("div", "buttons");
    const approve = node("button", "approve", "Approve");
    approve.type = "button";
    const reject = node("button", "reject", "Reject");
    reject.type = "button";
    buttons.append(approve, reject);
    const consent = consentFields(id);
    decideBox.append(label, reason, consent.box, buttons);
    const error = node("p", "error card-error");
    error.setAttribute("role", "alert");
    error.hidden = true;
    el.append(rule, decideBox, error);

    const card = { el, approval: a, rule, ruleKey: "", reason, approve, reject, error, consent, busy: false };
    approve.addEventListener("click", () => decide(a.id, "yes"));
    reject.addEventListener("click", () => decide(a.id, "no"));
    el.addEventListener("focusin", () => select(a.id, false));
    el.addEventListener("click", () => select(a.id, false));
    return card;
  }

  // consentFields draws the part of a card where a yes is made to stand:
  // for how many hours and how many times, each optional. id makes the
  // ids of its inputs unique on the page.
  function consentFields(id) {
    const box = node("fieldset", "consent");
    const legend = node("legend", "", "Let this yes stand ");
    legend.append(node("span", "hint", "(optional, with Approve)"));
    const note = node("p", "hint consent-note", CONSENT_NOTE);
    note.id = id + "-consent-note";
    const errorLine = node("p", "error field-error consent-error");
    errorLine.id = id + "-consent-error";
    errorLine.hidden = true;
    const field = (cls, text, hint, attrs) => {
      const input = node("input", cls);
      input.id = id + "-" + cls;
      input.type = "number";
      input.autocomplete = "off";
      Object.assign(input, attrs);
      input.setAttribute("aria-describedby", note.id + " " + errorLine.id);
      const l = node("label", "", text + " ");
      l.htmlFor = input.id;
      l.append(node("span", "hint", hint));
      const wrap = node("div");
      wrap.append(l, input);
      return { wrap, input };
    };
    const hours = field("consent-hours", "Hours", "(at most " + CONSENT_MAX_HOURS + ")", { min: "0", max: String(CONSENT_MAX_HOURS), step: "any" });
    const uses = field("consent-uses", "Times", "(at most " + CONSENT_MAX_USES.toLocaleString("en") + ")", { min: "1", max: String(CONSENT_MAX_USES), step: "1" });
    const row = node("div", "consent-fields");
    row.append(hours.wrap, uses.wrap);
    box.append(legend, note, row, errorLine);
    return { box, note, hours: hours.input, uses: uses.input, error: errorLine };
  }

  // consentOf is the standing consent a card's fields ask for, as
  // DecideRequest.consent; null for none. A field the page cannot read is
  // marked, and the consent is then undefined.
  function consentOf(card) {
    const f = card.consent;
    const h = f.hours.value.trim();
    const u = f.uses.value.trim();
    if (f.hours.validity.badInput || (h !== "" && !Number.isFinite(Number(h)))) {
      consentError(card, "Hours: a number, at most " + CONSENT_MAX_HOURS + ".", f.hours);
      return undefined;
    }
    if (f.uses.validity.badInput || (u !== "" && !Number.isInteger(Number(u)))) {
      consentError(card, "Times: a whole number, at most " + CONSENT_MAX_USES.toLocaleString("en") + ".", f.uses);
      return undefined;
    }
    if (h === "" && u === "") return null;
    const c = {};
    if (h !== "") c.duration = Math.round(Number(h) * 3600) + "s";
    if (u !== "") c.uses = Number(u);
    return c;
  }

  // consentError shows message on a card's consent fields, marking the
  // inputs given (all, with none) and focusing the first; "" clears it.
  function consentError(card, message, ...inputs) {
    const f = card.consent;
    for (const i of [f.hours, f.uses]) i.removeAttribute("aria-invalid");
    showError(f.error, message);
    if (!message) return;
    const marked = inputs.length > 0 ? inputs : [f.hours, f.uses];
    for (const i of marked) i.setAttribute("aria-invalid", "true");
    marked[0].focus();
  }

  // consentWords is a standing consent asked for in words: "for 2 hours
  // or 3 times, whichever ends first,".
  function consentWords(c) {
    const hours = c.duration ? Number(c.duration.slice(0, -1)) / 3600 : 0;
    const h = hours > 0 ? "for " + count(hours, "hour", "hours") : "";
    const u = c.uses ? count(c.uses, "time", "times") : "";
    if (h && u) return h + " or " + u + ", whichever ends first,";
    return h || u + " within " + CONSENT_MAX_HOURS + " hours";
  }

  // drawConsent shows whether the rule r lets a yes stand: a rule that
  // forbids it, or wants more than one yes, disables the fields and says
  // why. The board checks again, and also the rule's limit on amounts.
  function drawConsent(card, a, r) {
    const f = card.consent;
    const quorum = r && Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
    let why = "";
    if (r && r.noStandingConsent) why = "Rule " + r.id + " does not let a yes stand for later operations.";
    else if (quorum > 1) why = "Rule " + r.id + " wants " + quorum + " people's yes: one person's yes cannot stand for them.";
    f.box.disabled = why !== "" || !mayDecide(a);
    f.box.dataset.forbidden = why !== "" ? "true" : "false";
    if (why !== "") {
      f.note.textContent = why;
    } else {
      const max = r && Number(r.standingConsentMaxAmount) > 0 ? Number(r.standingConsentMaxAmount) : 0;
      f.note.textContent = CONSENT_NOTE + (max > 0 ? " The rule allows it only for amounts up to " + max.toLocaleString("en") + "." : "");
    }
  }

  // runField is the run waiting on the approval: a link to the run's page
  // when the agent reports runs and named it, else the run as raised.
  function runField(a) {
    if (typeof a.runId !== "string" || a.runId === "" || !a.agent) return labelled("run", a.run);
    const span = node("span", "field run");
    const link = node("a", "field-value run-link", a.runId);
    link.href = runHref(a.agent, a.runId);
    link.title = "the run's page";
    span.append(node("span", "field-name", "run "), link);
    return span;
  }

  function labelled(what, value) {
    const span = node("span", "field " + what);
    span.append(node("span", "field-name", what + " "), node("span", "field-value", value || "—"));
    return span;
  }

  // updateCard draws what may change while an approval waits: its rule
  // (and who may decide), the votes so far and when it expires.
  function updateCard(card, a) {
    card.approval = a;
    const r = a.ruleId ? rules.get(a.ruleId) || null : null;
    const me = board.me();
    const key = JSON.stringify([a.ruleId || "", r, a.votes || [], a.expireTime || "", a.escalationLevel || 0, me ? me.role : ""]);
    if (key === card.ruleKey) return;
    card.ruleKey = key;
    card.rule.replaceChildren(...ruleParts(a, r));
    const open = mayDecide(a);
    card.approve.disabled = !open;
    card.reject.disabled = !open;
    card.reason.required = Boolean(r && r.requireReason);
    card.reason.placeholder = r && r.requireReason ? "Required by the rule" : "Optional";
    drawConsent(card, a, r);
  }

  // mayDecide says whether the approval a can be decided here: a rule
  // governs it, and the role of the one signed in is the rule's or above.
  // The board checks it again.
  function mayDecide(a) {
    const r = a.ruleId ? rules.get(a.ruleId) : null;
    if (!r) return false;
    if (board.may(enums.role.word(r.role) || "approver")) return true;
    // A step of the rule's escalation the approval reached may name a role
    // that lets more people decide.
    const reached = Array.isArray(r.escalation) ? r.escalation.slice(0, Number(a.escalationLevel) || 0) : [];
    return reached.some((step) => enums.role.word(step.role) && board.may(enums.role.word(step.role)));
  }

  function ruleParts(a, r) {
    if (!a.ruleId) {
      return [node("p", "notice", "Not governed: no rule governed it when it was raised, so the agent's chat decides it, not this board.")];
    }
    const dl = node("dl", "facts");
    const fact = (term, ...children) => {
      const dd = node("dd");
      dd.append(...children);
      dl.append(node("dt", "", term), dd);
    };
    const id = node("code", "rule-id", a.ruleId);
    if (!r) {
      fact("Rule", id, document.createTextNode(" no longer exists: nobody can decide this one (an admin can cancel it)."));
      return [dl];
    }
    fact("Rule", id, ...(r.description ? [document.createTextNode(" — " + r.description)] : []));
    if (Array.isArray(r.people) && r.people.length > 0) {
      fact("Who decides", tags(r.people, "people who decide"));
    } else if (enums.role.word(r.role) === "admin") {
      fact("Who decides", node("span", "who", "admin role: admins"));
    } else {
      fact("Who decides", node("span", "who", (enums.role.word(r.role) || "approver") + " role: approvers and admins"));
    }
    const quorum = Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
    const votes = Array.isArray(a.votes) ? a.votes : [];
    fact("Quorum", node("span", "quorum", quorum + (quorum === 1 ? " yes" : " yeses") + " needed"));
    fact("Yes so far", votes.length === 0 ? node("span", "none", "none yet") : tags(votes, "yes so far"),
      document.createTextNode(" (" + votes.length + " of " + quorum + ")"));
    if (r.requireReason) fact("Reason", node("span", "required", "required"));
    const level = Number(a.escalationLevel) || 0;
    const steps = Array.isArray(r.escalation) ? r.escalation : [];
    if (level > 0 && steps.length > 0) {
      const step = steps[Math.min(level, steps.length) - 1];
      const whom = Array.isArray(step.people) && step.people.length > 0 ? step.people.join(", ") : (enums.role.word(step.role) || "approver") + " role";
      fact("Escalated", node("span", "escalated", "step " + level + " of " + steps.length + ": " + whom + " may decide too"));
    } else if (steps.length > 0) {
      fact("Escalation", node("span", "escalation", steps.length + (steps.length === 1 ? " step" : " steps") + " if nobody decides"));
    }
    if (a.expireTime) fact("Expires", relTime(a.expireTime, ""));
    return [dl];
  }

  // ShownNumber is a number in what is shown, kept as the text the agent
  // sent: 12345678901234567890 and 49.90 stay as written, where a double
  // would read 12345678901234567000 and 49.9.
  class ShownNumber {
    constructor(text) {
      this.text = text;
    }
    toJSON() {
      return JSON.rawJSON ? JSON.rawJSON(this.text) : Number(this.text);
    }
  }

  // keepNumberText is a JSON.parse reviver that keeps each number's source
  // text, where the browser gives it (context.source); elsewhere the number
  // stays a number.
  function keepNumberText(key, value, context) {
    if (typeof value === "number" && context && typeof context.source === "string") return new ShownNumber(context.source);
    return value;
  }

  // shownOf is what the approval a shows: its showJson, the exact text the
  // agent sent and the digest covers, when the board gave it; else the show
  // Struct, whose numbers are doubles. Anything but an object is nothing.
  function shownOf(a) {
    let show = a.show;
    if (typeof a.showJson === "string" && a.showJson !== "") {
      try {
        show = JSON.parse(a.showJson, keepNumberText);
      } catch {
        // the board checks it is JSON; if not, the Struct is all there is
      }
    }
    return show && typeof show === "object" && !Array.isArray(show) ? show : {};
  }

  // showTable draws a JSON object as a two-column table of names and
  // values; nested objects become nested tables, arrays numbered lists.
  function showTable(obj, depth) {
    const table = node("table", "show");
    const body = node("tbody");
    for (const k of Object.keys(obj)) {
      const tr = node("tr");
      const th = node("th", "show-key", k);
      th.scope = "row";
      const td = node("td", "show-value");
      td.append(valueNode(obj[k], depth + 1));
      tr.append(th, td);
      body.append(tr);
    }
    table.append(body);
    return table;
  }

  function valueNode(v, depth) {
    if (v === null || v === undefined) return node("span", "json-null", "null");
    if (typeof v === "string") return v === "" ? node("span", "none", "(empty)") : node("span", "json-string", v);
    if (v instanceof ShownNumber) return node("span", "json-number", v.text);
    if (typeof v === "number" || typeof v === "boolean") return node("span", "json-" + typeof v, String(v));
    if (depth > SHOW_DEPTH) return node("code", "json", JSON.stringify(v));
    if (Array.isArray(v)) {
      if (v.length === 0) return node("span", "none", "(empty list)");
      const ol = node("ol", "show-list");
      for (const item of v) {
        const li = node("li");
        li.append(valueNode(item, depth + 1));
        ol.append(li);
      }
      return ol;
    }
    if (typeof v === "object") {
      return Object.keys(v).length === 0 ? node("span", "none", "(empty)") : showTable(v, depth);
    }
    return node("span", "", String(v));
  }

  // relTime is a <time> that says how long ago (or how soon) s is, kept
  // up to date by tickApprovals.
  function relTime(s, prefix) {
    const ms = parseTime(s);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "rel");
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    t.dataset.prefix = prefix;
    relText(t, Date.now());
    return t;
  }

  function relText(el, now) {
    const ms = Number(el.dataset.ms);
    const text = ms > now + 500 ? "in " + ago(now, ms).replace(/ ago$/, "") : ago(ms, now);
    el.textContent = (el.dataset.prefix || "") + text;
  }

  function tickApprovals() {
    if (ui.approvals.hidden) return;
    const now = Date.now();
    for (const t of ui.approvals.querySelectorAll("time.rel")) relText(t, now);
  }

  function select(id, focus) {
    const card = cards.get(id);
    if (!card) return;
    if (selected !== id) {
      const old = cards.get(selected);
      if (old) {
        old.el.classList.remove("is-selected");
        old.el.removeAttribute("aria-current");
      }
      selected = id;
      card.el.classList.add("is-selected");
      // A list item may not be "selected" (ARIA): the card picked out is
      // the list's current one.
      card.el.setAttribute("aria-current", "true");
    }
    if (focus) {
      card.el.focus({ preventScroll: true });
      card.el.scrollIntoView({ block: "nearest" });
    }
  }

  // move selects the approval step places down (or up) the queue.
  function move(step) {
    const ids = Array.from(ui.queue.children).map((el) => el.dataset.approval);
    if (ids.length === 0) return;
    const i = ids.indexOf(selected);
    const next = i < 0 ? 0 : Math.min(ids.length - 1, Math.max(0, i + step));
    select(ids[next], true);
  }

  function focusReason() {
    const card = cards.get(selected);
    if (card) card.reason.focus();
  }

  function typing(el) {
    return el instanceof HTMLElement && (el.isContentEditable ||
      el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
  }

  // onKey is the approvals view's keyboard: j/k or the arrows select, a
  // approves, r rejects, / or Enter go to the reason. Nothing happens while
  // typing, except Esc, which leaves the reason.
  function onKey(ev) {
    if (ui.approvals.hidden || !board.token() || ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (typing(t)) {
      if (ev.key === "Escape" && t.classList.contains("reason")) {
        const card = cards.get(selected);
        if (card) card.el.focus({ preventScroll: true });
        else t.blur();
        ev.preventDefault();
      }
      return;
    }
    switch (ev.key) {
      case "j":
      case "ArrowDown":
        move(1);
        break;
      case "k":
      case "ArrowUp":
        move(-1);
        break;
      case "a":
        decide(selected, "yes");
        break;
      case "r":
        decide(selected, "no");
        break;
      case "/":
        focusReason();
        break;
      case "Enter":
        if (t instanceof HTMLElement && t.closest("button, a, summary")) return;
        focusReason();
        break;
      default:
        return;
    }
    ev.preventDefault();
  }

  // decideRefusal says why the board refused a decision, with its code.
  function decideRefusal(e) {
    switch (e.code) {
      case "failed_precondition":
        return "The board refused (failed_precondition): " + e.message +
          ". Nothing was decided; the queue is being read again.";
      case "permission_denied":
        return "You may not decide this one (permission_denied): " + e.message + ".";
      case "invalid_argument":
        return "The board refused (invalid_argument): " + e.message + ".";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message +
          ". The decision may or may not have been recorded; the queue will show.";
      default:
        return "The board refused (" + e.code + "): " + e.message + ".";
    }
  }

  function showCardError(card, message) {
    card.error.textContent = message;
    card.error.hidden = !message;
  }

  // decide says yes or no to the approval id, for the digest the board
  // gave with it, with the reason typed on its card.
  async function decide(id, said) {
    const card = cards.get(id);
    if (!card || card.busy) return;
    const a = card.approval;
    const gen = board.generation();
    const token = board.token();
    if (!a.ruleId) {
      showCardError(card, "This approval is not governed: the agent's chat decides it, not this board.");
      return;
    }
    if (!mayDecide(a)) {
      const me = board.me();
      showCardError(card, "Your role (" + ((me && me.role) || "unknown") + ") may not decide this one.");
      return;
    }
    card.reason.removeAttribute("aria-invalid");
    showCardError(card, "");
    consentError(card, "");
    // A standing consent goes with a yes only: the fields are not read for a no.
    const consent = said === "yes" && !card.consent.box.disabled ? consentOf(card) : null;
    if (consent === undefined) return;
    card.busy = true;
    card.approve.disabled = card.reject.disabled = true;
    say("");
    try {
      const req = { id: a.id, say: enums.say.name(said), digest: a.digest, reason: card.reason.value.trim() };
      if (consent) req.consent = consent;
      const res = await unary(token, APPROVALS + "Decide", req);
      if (!board.current(gen)) return;
      const after = (res && res.approval) || {};
      const what = a.ask ? "“" + a.ask + "”" : a.id;
      const state = stateOf(after);
      if (state === "pending") {
        updateCard(card, after);
        const r = rules.get(after.ruleId);
        const quorum = r && Number.isInteger(r.quorum) && r.quorum > 0 ? r.quorum : 1;
        const votes = Array.isArray(after.votes) ? after.votes.length : 0;
        say("Your yes on " + what + " is counted: " + votes + " of " + quorum + ". It waits for more.");
      } else {
        say((state === "approved" ? "Approved " : state === "rejected" ? "Rejected " : "Decided ") + what + "." +
          (consent && state === "approved" ? " The yes stands " + consentWords(consent) +
            " for the same operation of " + (a.agent || "the agent") + ": see the Consents tab." : ""));
      }
      if (upsert(after)) render(); // the watch brings it too, maybe a moment later
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      const message = decideRefusal(e);
      if (card.el.isConnected && consent && /^consent[.:]/.test(e.message || "")) {
        // The board refused the standing consent: said on its fields.
        const m = /^consent\.(duration|uses):/.exec(e.message);
        consentError(card, message + (e.code === "failed_precondition" ? " Approve without letting the yes stand, or reject." : ""),
          ...(m ? [m[1] === "duration" ? card.consent.hours : card.consent.uses] : []));
      } else if (card.el.isConnected) {
        showCardError(card, message);
        if (e.code === "invalid_argument" && /^reason/.test(e.message)) {
          card.reason.setAttribute("aria-invalid", "true");
          card.reason.focus();
        }
      } else {
        say(message);
      }
      if (e.code === "failed_precondition") resync();
    } finally {
      card.busy = false;
      card.approve.disabled = card.reject.disabled = !mayDecide(card.approval);
    }
  }

  const outcomes = {
    approved: "approved", rejected: "rejected", cancelled: "cancelled",
    expired: "expired", superseded: "superseded",
  };

  // historyRow draws one approval that no longer waits.
  function historyRow(a) {
    const d = a.decision || {};
    const tr = node("tr", "decided");
    tr.dataset.approval = a.id;
    const word = stateOf(a) || "unknown";
    tr.dataset.state = word;
    const outcome = node("th");
    outcome.scope = "row";
    outcome.append(node("span", "badge outcome " + (outcomes[word] || "unknown"), word));

    const when = node("td");
    const at = d.decideTime || (word === "expired" ? a.expireTime : "");
    when.append(at ? relTime(at, "") : none());

    let who;
    if (Array.isArray(d.who) && d.who.length > 0) who = tags(d.who, "who decided");
    else if (word === "expired") who = node("span", "none", "nobody: the time limit passed");
    else if (word === "superseded") who = node("span", "none", "nobody: the agent asked again about something else");
    else who = none();

    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const askCell = node("td", "ask-cell");
    askCell.append(node("span", "", a.ask || "—"));
    const show = shownOf(a);
    if (Object.keys(show).length > 0) {
      const details = node("details");
      details.append(node("summary", "", "shown"), showTable(show, 0));
      if (a.account) details.append(node("p", "account-text", a.account));
      askCell.append(details);
    }
    tr.append(
      outcome,
      when,
      cell(node("span", "", a.agent || "—")),
      cell(node("span", "", a.node || "—")),
      askCell,
      cell(who),
      cell(d.reason ? node("span", "reason-text", d.reason) : none()),
      cell(receiptLink(a)),
    );
    return tr;
  }

  // receiptLink downloads the decision's signed receipt (docs/receipts.md),
  // a file to verify offline with board receipt verify.
  function receiptLink(a) {
    const r = (a.decision || {}).receipt;
    if (typeof r !== "string" || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(r)) return none();
    const link = node("a", "receipt", "Receipt");
    link.href = "data:application/jose;charset=utf-8," + encodeURIComponent(r);
    link.download = "receipt-" + String(a.id).replace(/[^A-Za-z0-9_-]/g, "_") + ".jws";
    link.setAttribute("aria-label", "Download the signed receipt of " + a.id);
    return link;
  }

  board.part({
    reset: clearApprovals,
    role(me) {
      ui.readOnly.hidden = !me || board.may("approver");
      for (const card of cards.values()) updateCard(card, card.approval);
    },
    run(gen, token) {
      live(gen, token);
      rulesLoop(gen, token);
    },
    stop() {
      if (controller) controller.abort();
      controller = null;
      if (rulesController) rulesController.abort();
      rulesController = null;
      if (moreController) moreController.abort();
      moreController = null;
      if (liveNap.wake) liveNap.wake();
      if (rulesNap.wake) rulesNap.wake();
    },
    wake() {
      if (liveNap.wake) liveNap.wake();
    },
    shown(view) {
      const id = view === "approvals" ? approvalOfHash() : "";
      if (id === "") return;
      target = id;
      targetSeq++;
      pick();
    },
  });

  // receiptLink is exported for the approval's own page (approval.js),
  // historyRow for the search of the history (approvalsearch.js).
  board.receiptLink = receiptLink;
  board.historyRow = historyRow;

  // shownTable draws what the approval a shows, as its card does: the
  // action link's page (act.js) shows the same.
  board.shownTable = (a) => {
    const show = shownOf(a);
    return Object.keys(show).length === 0 ? node("p", "none", "Nothing is shown.") : showTable(show, 0);
  };

  ui.more.addEventListener("click", more);
  document.addEventListener("keydown", onKey);
  setInterval(tickApprovals, TICK_MS);
})();
