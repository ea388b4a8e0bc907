// The chat page of a served agent. It talks to the agent's JSON API on the
// same origin (docs/serve.md): pick or start a conversation, send a message,
// read the reply, answer the question or the approval a run stops for.
// An approval the organisation decides on its board has no buttons here: the
// page says so and asks the agent every second until the run has moved on.
// With a board, the page also asks who the person is, by the board's door:
// a code to enter on the board (pairing), or their address and verify
// secret (verify); the agent shows only this browser's threads, and its
// person's. A file input, and a question that expects a file, get a drop /
// paste / browse control: the file is uploaded first (POST /files) and its
// object is what the message or the answer carries; a file output is drawn
// as an image, a player, or a download link. No framework and no build step. Everything that comes from the agent
// reaches the page through textContent, never as HTML.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const ui = {
    name: $("agent-name"),
    description: $("agent-description"),
    newThread: $("new-thread"),
    threads: $("threads"),
    noThreads: $("no-threads"),
    title: $("thread-title"),
    log: $("log"),
    pending: $("pending"),
    question: $("pending-question"),
    show: $("pending-show"),
    rows: $("pending-rows"),
    account: $("pending-account"),
    amounts: $("pending-amounts"),
    digest: $("pending-digest"),
    approval: $("approval-buttons"),
    boardWait: $("board-wait"),
    boardWhy: $("board-why"),
    boardRule: $("board-rule"),
    approve: $("approve"),
    reject: $("reject"),
    askForm: $("ask-form"),
    askAnswer: $("ask-answer"),
    askWords: $("ask-words"),
    askFile: $("ask-file"),
    form: $("message-form"),
    fields: $("fields"),
    send: $("send"),
    error: $("error"),
    paused: $("paused"),
    who: $("who"),
    whoYou: $("who-you"),
    whoPeople: $("who-people"),
    pairBox: $("pair-box"),
    pair: $("pair"),
    pairCode: $("pair-code"),
    pairCodeValue: $("pair-code-value"),
    pairUntil: $("pair-until"),
    verifyForm: $("verify-form"),
    verifyWho: $("verify-who"),
    verifySecret: $("verify-secret"),
    verifyResult: $("verify-result"),
  };

  let agent = { name: "Agent", inputs: [], outputs: [] };
  let thread = null; // the conversation on screen
  let busy = false;
  const said = new Map(); // thread -> what was said: the transcript's turns, then this visit's
  const pollMillis = 1000; // how often a run the board decides is asked after
  let watching = null; // the board-decided approval being polled for, if any
  let door = { door: "" }; // GET /api/door: the board's door, and who this browser is
  let pairing = null; // the code being waited for, if any
  let askControl = null; // the file control of a question that expects a file

  async function api(method, path, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    let data = {};
    try {
      data = await res.json();
    } catch (e) {
      data = {};
    }
    if (!res.ok) {
      const err = new Error(data.error || res.status + " " + res.statusText);
      err.status = res.status;
      err.field = data.field || "";
      err.paused = data.paused || null;
      throw err;
    }
    return data;
  }

  function showError(err) {
    ui.error.textContent = err ? String(err.message || err) : "";
    ui.error.hidden = !err;
  }

  // drawPaused says, above the message form, that the agent takes no new
  // messages and why (GET /api/agent, or a message refused with 503); null
  // hides it. Answers to what a conversation waits for still go through.
  function drawPaused(p) {
    if (!p) {
      ui.paused.hidden = true;
      return;
    }
    let line = "This agent is paused and takes no new messages";
    if (p.reason) line += ": " + p.reason;
    const who = [];
    if (p.by) who.push("by " + p.by);
    if (p.at) who.push("since " + new Date(p.at).toLocaleString());
    if (p.origin === "board") who.push("on the board");
    if (who.length) line += " (" + who.join(", ") + ")";
    ui.paused.textContent = line + ". What it started goes on.";
    ui.paused.hidden = false;
  }

  function newThreadName() {
    const bytes = new Uint8Array(6);
    crypto.getRandomValues(bytes);
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return "chat-" + Date.now().toString(36) + "-" + hex;
  }

  function display(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "string") return v;
    return JSON.stringify(v);
  }

  // upload sends a file to the agent's store for the conversation on
  // screen (starting one when there is none), for channel when it is
  // named, and answers its object: { id, name, mediaType, url, bytes }.
  async function upload(file, channel) {
    if (!thread) await select(newThreadName());
    const q = new URLSearchParams({ thread, name: file.name || "pasted" });
    if (channel) q.set("channel", channel);
    const res = await fetch("/files?" + q.toString(), {
      method: "POST",
      headers: { "Content-Type": file.type || "application/octet-stream" },
      body: file,
    });
    let data = {};
    try {
      data = await res.json();
    } catch (e) {
      data = {};
    }
    if (!res.ok) {
      const err = new Error(data.error || res.status + " " + res.statusText);
      err.status = res.status;
      throw err;
    }
    return data;
  }

  // isFile: v is a file object as a file channel holds it.
  function isFile(v) {
    return !!v && typeof v === "object" && typeof v.id === "string" && typeof v.url === "string" &&
      typeof v.mediaType === "string" && v.url === "/files/" + v.id;
  }

  // fileView draws a file: an image inline, audio or video in a player,
  // anything else as a link to download it.
  function fileView(f) {
    const type = f.mediaType.split(";")[0].trim().toLowerCase();
    let el;
    if (type.startsWith("image/") && !type.includes("svg")) {
      el = document.createElement("img");
      el.alt = f.name;
    } else if (type.startsWith("audio/")) {
      el = document.createElement("audio");
      el.controls = true;
    } else if (type.startsWith("video/")) {
      el = document.createElement("video");
      el.controls = true;
    } else {
      el = document.createElement("a");
      el.href = f.url;
      el.download = f.name;
      el.textContent = "Download " + f.name;
      el.className = "file download";
      return el;
    }
    el.src = f.url;
    el.className = "file";
    el.title = f.name;
    return el;
  }

  // fileControl is somewhere to drop, paste or browse for one file of
  // accept, uploaded at once for channel; its value() is the uploaded
  // file's object, or null.
  function fileControl(id, channel, accept) {
    const box = document.createElement("div");
    box.className = "drop";
    box.tabIndex = 0;
    box.dataset.name = channel;
    const input = document.createElement("input");
    input.type = "file";
    input.id = id;
    if (accept) input.accept = accept;
    const hint = document.createElement("p");
    hint.className = "quiet";
    hint.textContent = "Drop a file here, paste one, or browse" + (accept ? " (" + accept + ")" : "") + ".";
    const shown = document.createElement("div");
    shown.className = "chosen";
    box.append(input, hint, shown);
    let value = null;
    // A file chosen while the page is busy (still drawing the answer that
    // asked for it, say) is uploaded once it is not, never dropped.
    const take = async (file) => {
      if (!file) return;
      while (busy) await whenIdle();
      withBusy(async () => {
        value = null;
        shown.replaceChildren();
        const f = await upload(file, channel);
        value = f;
        const line = document.createElement("p");
        line.textContent = f.name + " (" + f.mediaType.split(";")[0] + ", " + f.bytes + " bytes)";
        shown.append(fileView(f), line);
        box.dataset.uploaded = f.id;
      });
    };
    input.addEventListener("change", () => take(input.files[0]));
    box.addEventListener("dragover", (ev) => {
      ev.preventDefault();
      box.classList.add("over");
    });
    box.addEventListener("dragleave", () => box.classList.remove("over"));
    box.addEventListener("drop", (ev) => {
      ev.preventDefault();
      box.classList.remove("over");
      take(ev.dataTransfer.files[0]);
    });
    box.addEventListener("paste", (ev) => {
      const file = Array.from(ev.clipboardData.files || [])[0];
      if (!file) return;
      ev.preventDefault();
      take(file);
    });
    return {
      el: box,
      value: () => value,
      clear: () => {
        value = null;
        input.value = "";
        shown.replaceChildren();
        delete box.dataset.uploaded;
      },
    };
  }

  // The message form: one field per input the flow names; a file input is
  // a file control.
  let fileControls = [];
  function drawFields() {
    ui.fields.replaceChildren();
    fileControls = [];
    const inputs = agent.inputs.length ? agent.inputs : [{ name: "", type: "string", description: "" }];
    inputs.forEach((input, i) => {
      const id = "field-" + i;
      const label = document.createElement("label");
      label.htmlFor = id;
      label.textContent = input.name ? input.name + (input.description ? " — " + input.description : "") : "Message";
      if (input.type === "file") {
        const c = fileControl(id, input.name, input.accept || "");
        fileControls.push(c);
        ui.fields.append(label, c.el);
        return;
      }
      const area = document.createElement("textarea");
      area.id = id;
      area.rows = input.type === "string" || !input.type ? 2 : 1;
      area.dataset.name = input.name;
      area.dataset.type = input.type || "";
      ui.fields.append(label, area);
    });
  }

  function typed(value, type) {
    switch (type) {
      case "number":
        return Number(value);
      case "boolean":
        return value.trim().toLowerCase() === "true";
      case "object":
      case "list":
        try {
          return JSON.parse(value);
        } catch (e) {
          return value;
        }
      default:
        return value;
    }
  }

  function messageBody() {
    const areas = Array.from(ui.fields.querySelectorAll("textarea"));
    if (areas.length === 1 && fileControls.length === 0) {
      return { text: areas[0].value };
    }
    const input = {};
    for (const a of areas) {
      if (a.value.trim() !== "") input[a.dataset.name] = typed(a.value, a.dataset.type);
    }
    for (const c of fileControls) {
      if (c.value()) input[c.el.dataset.name] = c.value();
    }
    return { input };
  }

  function describeMessage(body) {
    if (body.text !== undefined) return body.text;
    return Object.entries(body.input).map(([k, v]) => k + ": " + (isFile(v) ? v.name : display(v))).join("\n");
  }

  // filesIn is the files among values, in order.
  function filesIn(values) {
    return Object.values(values || {}).filter(isFile);
  }

  function note(kind, text, state, files) {
    const entries = said.get(thread) || [];
    entries.push({ kind, text, state, files });
    said.set(thread, entries);
    drawLog();
  }

  // outputFiles is the files a finished run's outputs hold.
  function outputFiles(state) {
    const out = {};
    for (const o of agent.outputs) {
      if (state && isFile(state[o.name])) out[o.name] = state[o.name];
    }
    return filesIn(out);
  }

  // replyText is a finished run's reply in words: its first output, unless
  // that is a file, which is drawn instead.
  function replyText(t) {
    const first = agent.outputs[0];
    if (first && t.state && isFile(t.state[first.name])) return "";
    return t.reply || (outputFiles(t.state).length ? "" : "(done)");
  }

  function drawLog() {
    ui.log.replaceChildren();
    for (const e of said.get(thread) || []) {
      const li = document.createElement("li");
      li.className = e.kind;
      li.textContent = e.text;
      for (const f of e.files || []) {
        const fig = document.createElement("figure");
        fig.append(fileView(f));
        li.append(fig);
      }
      if (e.state) {
        const details = document.createElement("details");
        const summary = document.createElement("summary");
        summary.textContent = "State";
        const pre = document.createElement("pre");
        pre.textContent = JSON.stringify(e.state, null, 2);
        details.append(summary, pre);
        li.append(details);
      }
      ui.log.append(li);
    }
  }

  // byBoard: the approval p is the organisation's to decide, on its board.
  function byBoard(p, decides) {
    return !!p && p.kind === "approval" && !!decides && decides.who === "board";
  }

  function drawPending(p, decides) {
    ui.pending.hidden = !p;
    const board = byBoard(p, decides);
    if (!board) stopWatching();
    if (!p) return;
    ui.question.textContent = p.question || (p.kind === "approval" ? "Approve?" : "Question");
    ui.rows.replaceChildren();
    const keys = p.show ? Object.keys(p.show).sort() : [];
    for (const k of keys) {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.scope = "row";
      th.textContent = k;
      const td = document.createElement("td");
      td.textContent = display(p.show[k]);
      tr.append(th, td);
      ui.rows.append(tr);
    }
    ui.show.hidden = keys.length === 0;
    ui.account.textContent = p.account ? "Why: " + p.account : "";
    ui.account.hidden = !p.account;
    // The amounts the agent read out of the question and the account, each
    // as written and as a value: "€6k = 6000 EUR".
    const amounts = p.amounts || [];
    ui.amounts.replaceChildren(...amounts.map((a) => {
      const li = document.createElement("li");
      const value = String(a.value) + (a.currency ? " " + a.currency : "");
      li.textContent = a.text === value ? value : a.text + " = " + value;
      return li;
    }));
    ui.amounts.hidden = amounts.length === 0;
    ui.digest.textContent = p.digest || "";
    ui.digest.hidden = !p.digest;
    ui.approval.hidden = p.kind !== "approval" || board;
    ui.askForm.hidden = p.kind === "approval";
    ui.askAnswer.value = "";
    // A question whose answer goes to a file channel takes a file, not words.
    const wantsFile = p.kind === "ask" && p.expects === "file";
    ui.askWords.hidden = wantsFile;
    ui.askFile.hidden = !wantsFile;
    ui.askFile.replaceChildren();
    askControl = null;
    if (wantsFile) {
      askControl = fileControl("ask-file-input", "", p.accept || "");
      const label = document.createElement("label");
      label.htmlFor = "ask-file-input";
      label.textContent = "Your file";
      ui.askFile.append(label, askControl.el);
    }
    ui.form.hidden = true;
    drawBoard(board ? decides : null);
    if (board) watchBoard(p);
  }

  // drawBoard shows who decides an approval the board decides, and why;
  // null hides it.
  function drawBoard(decides) {
    ui.boardWait.hidden = !decides;
    ui.boardWhy.textContent = decides && decides.why ? decides.why : "";
    ui.boardWhy.hidden = !ui.boardWhy.textContent;
    ui.boardRule.textContent = decides && decides.rule ? "Rule: " + decides.rule : "";
    ui.boardRule.hidden = !ui.boardRule.textContent;
  }

  function pendingNote(p, decides) {
    if (byBoard(p, decides)) return "Waiting for the organisation's decision on the board.";
    return p.kind === "approval" ? "Waiting for approval." : "The agent asks a question.";
  }

  function drawTurn(t) {
    if (t.pending) {
      note("note", pendingNote(t.pending, t.decides));
    } else {
      note("agent", replyText(t), t.state, outputFiles(t.state));
    }
    drawPending(t.pending, t.decides);
    ui.form.hidden = !!t.pending;
  }

  function stopWatching() {
    if (watching) clearTimeout(watching.timer);
    watching = null;
  }

  // watchBoard asks the agent about the thread on screen every pollMillis
  // while its run waits for the board's decision on p, and draws what the
  // run came to once it does not.
  function watchBoard(p) {
    if (watching && watching.thread === thread && watching.digest === p.digest) return;
    stopWatching();
    const w = { thread, digest: p.digest, timer: 0, failed: false };
    watching = w;
    const tick = async () => {
      if (watching !== w) return;
      let t;
      try {
        t = await api("GET", "/api/threads/" + encodeURIComponent(w.thread));
      } catch (err) {
        if (watching !== w) return;
        w.failed = true;
        showError(err);
        w.timer = setTimeout(tick, pollMillis);
        return;
      }
      if (watching !== w || thread !== w.thread) return;
      if (w.failed) {
        w.failed = false;
        showError(null);
      }
      if (t.waiting && t.pending && t.pending.digest === w.digest && byBoard(t.pending, t.decides)) {
        drawBoard(t.decides); // the why may change: a board that comes up
        w.timer = setTimeout(tick, pollMillis);
        return;
      }
      watching = null;
      boardMovedOn(t, w.digest);
    };
    w.timer = setTimeout(tick, pollMillis);
  }

  // boardMovedOn draws a thread whose run no longer waits for the board's
  // decision: what the decision came to (t.decided), when the agent knows.
  function boardMovedOn(t, digest) {
    showError(null); // a refusal of an answer here is past
    const d = t.decided;
    if (d && d.ended) {
      note("note", "The run ended without an answer (" + d.ended + "): " + (d.why || ""));
    } else if (!t.waiting || !t.pending) {
      note("note", "The board decided; the run went on.");
      if (d && !d.pending) note("agent", replyText(d), d.state, outputFiles(d.state));
    } else if (t.pending.digest === digest) {
      note("note", "The chat decides this approval after all.");
    } else {
      note("note", "The board decided; the run went on. " + pendingNote(t.pending, t.decides));
    }
    drawPending(t.waiting ? t.pending : null, t.decides);
    ui.form.hidden = !!(t.waiting && t.pending);
    loadThreads().catch(showError);
  }

  // withBusy runs fn with every control that starts work disabled, so that
  // a click while the page is still loading or answering shows as refused
  // rather than being dropped without a word.
  const busyControls = [ui.send, ui.approve, ui.reject, ui.pair, ui.newThread, $("verify")];
  // whenIdle resolves when the work withBusy runs now has ended.
  let idleWaiters = [];
  function whenIdle() {
    return busy ? new Promise((resolve) => idleWaiters.push(resolve)) : Promise.resolve();
  }

  async function withBusy(fn) {
    if (busy) return;
    busy = true;
    for (const c of busyControls) c.disabled = true;
    showError(null);
    try {
      await fn();
    } catch (err) {
      showError(err);
    } finally {
      busy = false;
      for (const c of busyControls) c.disabled = false;
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  // loadSaid fills the log of thread name, when this visit has said nothing
  // there yet, with what the agent's transcript holds of it: each turn's
  // question and answer. A thread the agent holds nothing of (404) is new.
  async function loadSaid(name) {
    if (said.has(name)) return;
    let c;
    try {
      c = await api("GET", "/api/conversation?thread=" + encodeURIComponent(name));
    } catch (err) {
      if (err.status !== 404) throw err;
      return;
    }
    if (said.has(name)) return; // something was said meanwhile
    const entries = [];
    for (const t of c.turns || []) {
      entries.push({ kind: "you", text: display(t.asked) });
      entries.push({ kind: "agent", text: display(t.answered) });
    }
    said.set(name, entries);
  }

  async function select(name) {
    thread = name;
    ui.title.textContent = name;
    drawLog();
    await loadSaid(name);
    if (thread !== name) return;
    drawLog();
    drawPending(null);
    ui.form.hidden = false;
    let t;
    try {
      t = await api("GET", "/api/threads/" + encodeURIComponent(name));
    } catch (err) {
      // With a board, a thread this browser has not started yet is not
      // found, like every thread that is not its own.
      if (err.status !== 404) throw err;
      t = { thread: name, waiting: false };
    }
    if (thread !== name) return;
    drawPending(t.pending, t.decides);
    ui.form.hidden = !!t.pending;
    drawWho(t.people);
    await loadThreads();
  }

  // drawWho shows, by the board's door, who this browser is, who is in the
  // conversation on screen, and the control to say who you are.
  let lastPeople = null; // who is in the conversation on screen, as last drawn
  function drawWho(people) {
    lastPeople = people;
    const d = door.door;
    ui.who.hidden = d !== "pairing" && d !== "verify";
    ui.whoYou.textContent = door.you ? "You are " + personText(door.you) + "." : "";
    ui.whoYou.hidden = !door.you;
    ui.whoPeople.replaceChildren();
    for (const p of people || []) {
      const li = document.createElement("li");
      li.textContent = personText(p) + " (" + p.how + ")";
      ui.whoPeople.append(li);
    }
    ui.whoPeople.hidden = !(people && people.length);
    ui.pairBox.hidden = d !== "pairing";
    if (!pairing || pairing.thread !== thread) ui.pairCode.hidden = true;
    ui.verifyForm.hidden = d !== "verify";
    ui.verifyResult.hidden = true;
  }

  function personText(p) {
    return p.name && p.name !== p.address ? p.name + " <" + p.address + ">" : p.address;
  }

  // loadDoor asks the agent for the board's door. A board that cannot be
  // reached yet (the link still coming up) is asked again every few
  // seconds until it answers, and the page redrawn then.
  let doorRetry = 0;
  async function loadDoor() {
    try {
      door = await api("GET", "/api/door");
    } catch (err) {
      door = { door: "", why: "the agent could not be asked" };
    }
    clearTimeout(doorRetry);
    if (!door.door && door.why && door.why !== "no board is configured") {
      doorRetry = setTimeout(async () => {
        await loadDoor();
        if (door.door) drawWho(lastPeople);
      }, 2000);
    }
  }

  function stopPairing() {
    if (pairing) clearTimeout(pairing.timer);
    pairing = null;
  }

  // pair asks the agent for a code for the conversation on screen, shows
  // it, and asks after the thread until somebody entered it on the board
  // or the code stopped working.
  async function pair() {
    if (!thread) await select(newThreadName());
    const name = thread;
    const c = await api("POST", "/api/threads/" + encodeURIComponent(name) + "/pair", {});
    if (thread !== name) return;
    stopPairing();
    const p = { thread: name, expires: Date.parse(c.expires_at), timer: 0 };
    pairing = p;
    ui.pairCodeValue.textContent = c.code;
    ui.pairUntil.textContent = isNaN(p.expires) ? "" : " before " + new Date(p.expires).toLocaleTimeString();
    ui.pairCode.hidden = false;
    const tick = async () => {
      if (pairing !== p) return;
      if (Date.now() > p.expires) {
        stopPairing();
        ui.pairCode.hidden = true;
        showError("The code was not entered in time: ask for another.");
        return;
      }
      let t = null;
      try {
        t = await api("GET", "/api/threads/" + encodeURIComponent(p.thread));
      } catch (err) {
        t = null;
      }
      if (pairing !== p) return;
      if (t && t.people && t.people.length) {
        stopPairing();
        await loadDoor();
        if (thread === p.thread) {
          note("note", "Paired: " + personText(t.people[t.people.length - 1]) + ".");
          drawWho(t.people);
        }
        await loadThreads();
        return;
      }
      p.timer = setTimeout(tick, 2 * pollMillis);
    };
    p.timer = setTimeout(tick, 2 * pollMillis);
  }

  // verify sends the address and the secret to the agent, which asks the
  // board; the secret field is emptied whatever the answer.
  async function verify() {
    if (!thread) await select(newThreadName());
    const name = thread;
    const who = ui.verifyWho.value;
    const secret = ui.verifySecret.value;
    ui.verifySecret.value = "";
    const v = await api("POST", "/api/threads/" + encodeURIComponent(name) + "/verify", { who, secret });
    if (thread !== name) return;
    if (!v.ok) {
      ui.verifyResult.textContent = "Not verified: " + (v.why || "no");
      ui.verifyResult.hidden = false;
      return;
    }
    await loadDoor();
    const t = await api("GET", "/api/threads/" + encodeURIComponent(name));
    if (thread !== name) return;
    note("note", "Verified: " + personText(v.person) + ".");
    drawWho(t.people);
    await loadThreads();
  }

  async function loadThreads() {
    const data = await api("GET", "/api/conversations");
    const list = data.conversations || [];
    if (thread && !list.some((c) => c.thread === thread)) {
      list.unshift({ thread, updated: "", waiting: false });
    }
    ui.threads.replaceChildren();
    for (const c of list) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = c.thread;
      b.dataset.thread = c.thread;
      b.title = c.updated ? "updated " + c.updated : "new";
      if (c.thread === thread) b.setAttribute("aria-current", "true");
      if (c.waiting) {
        const w = document.createElement("span");
        w.className = "waiting";
        w.textContent = "waiting";
        b.append(w);
      }
      b.addEventListener("click", () => withBusy(() => select(c.thread)));
      li.append(b);
      ui.threads.append(li);
    }
    ui.noThreads.hidden = list.length > 0;
  }

  ui.newThread.addEventListener("click", () => withBusy(() => select(newThreadName())));
  ui.pair.addEventListener("click", () => withBusy(pair));
  ui.verifyForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    withBusy(verify);
  });

  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    withBusy(async () => {
      if (!thread) await select(newThreadName());
      const name = thread;
      const body = messageBody();
      note("you", describeMessage(body), undefined, filesIn(body.input));
      let t;
      try {
        t = await api("POST", "/api/threads/" + encodeURIComponent(name) + "/messages", body);
      } catch (err) {
        if (err.status === 503 && err.paused) drawPaused(err.paused);
        throw err;
      }
      drawPaused(null);
      if (thread !== name) return;
      drawTurn(t);
      for (const a of ui.fields.querySelectorAll("textarea")) a.value = "";
      for (const c of fileControls) c.clear();
      await loadThreads();
    });
  });

  async function answer(value, words) {
    const name = thread;
    note("you", words, undefined, isFile(value) ? [value] : undefined);
    let t;
    try {
      t = await api("POST", "/api/threads/" + encodeURIComponent(name) + "/answer", { answer: value });
    } catch (err) {
      if (err.status === 409 && err.field === "answer" && thread === name) {
        // Refused: the board decides this approval. Say so, and draw the
        // thread as it stands (waiting for the board, without buttons).
        note("note", "Not answered here: the organisation decides this approval on the board.");
        await redraw(name);
      }
      throw err;
    }
    if (thread !== name) return;
    drawTurn(t);
    await loadThreads();
  }

  // redraw draws what thread name waits for, as the agent says now; a
  // failure to ask is left to the caller's error.
  async function redraw(name) {
    let t;
    try {
      t = await api("GET", "/api/threads/" + encodeURIComponent(name));
    } catch (err) {
      return;
    }
    if (thread !== name) return;
    drawPending(t.waiting ? t.pending : null, t.decides);
    ui.form.hidden = !!(t.waiting && t.pending);
  }

  ui.approve.addEventListener("click", () => withBusy(() => answer("yes", "Yes.")));
  ui.reject.addEventListener("click", () => withBusy(() => answer("no", "No.")));
  ui.askForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (askControl) {
      const f = askControl.value();
      if (!f) {
        showError("Choose a file first.");
        return;
      }
      withBusy(() => answer(f, f.name));
      return;
    }
    const v = ui.askAnswer.value;
    withBusy(() => answer(v, v));
  });

  drawFields();
  withBusy(async () => {
    agent = await api("GET", "/api/agent");
    document.title = agent.name || "Agent";
    ui.name.textContent = agent.name || "Agent";
    ui.description.textContent = agent.description || "";
    drawPaused(agent.paused);
    drawFields();
    await loadDoor();
    drawWho(null);
    await loadThreads();
    // The most recent conversation this visitor may see is drawn, and the
    // next message goes on with it.
    const first = ui.threads.querySelector("button");
    if (first) await select(first.dataset.thread);
  });
})();
