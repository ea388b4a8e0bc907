// The chat window on an agent's page, "#agent/<name>": talking to the agent
// through the board (ChatService), for an agent that is online and
// announces the "chat" capability. The agent keeps its door: the list holds
// only the conversations the one signed in may see (every one for an admin).
//
// On opening, the page asks the agent for its chat page (GetChatPage: what
// a message carries, one field per input for a flow with several) and its
// conversations (ListThreads), and draws the most recent one
// (GetThread): its turns, and what its run waits for. Send is Talk: a new
// message, or the answer to what the run waits for; "New conversation"
// starts one the agent names. An approval the organisation decides is
// shown with a link to the approvals view, and answered there. The
// description (DescribeAgent) is read when its panel is opened. Every
// string from the agent reaches the page as textContent.
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal, agentOfHash } = board;
  const CHAT = "/symphonix.board.v1.ChatService/";
  const TEXT_MAX = 16 << 10; // bytes of a message in words, as the board counts them

  const ui = {
    box: $("chat"),
    threads: $("chat-threads"),
    fresh: $("chat-new"),
    empty: $("chat-empty"),
    log: $("chat-log"),
    pending: $("chat-pending"),
    form: $("chat-form"),
    fields: $("chat-fields"),
    send: $("chat-send"),
    yes: $("chat-yes"),
    no: $("chat-no"),
    error: $("chat-error"),
    status: $("chat-status"),
    about: $("chat-about"),
    describe: $("chat-describe"),
  };

  let name = ""; // the agent the window is open on, or ""
  let page = null; // its chat page (GetChatPage), or null before it was read
  let thread = ""; // the conversation shown; "" for a new one
  let pending = null; // what its run waits for, or null
  let busy = false; // a Talk is on its way
  let seq = 0; // counts the openings: an answer for an earlier one is dropped
  let described = false; // the description was read for this opening

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function able(a) {
    return Boolean(a) && enums.agentState.word(a.state) === "online" && health.announces(a, "chat");
  }

  // call calls ChatService's method for the agent shown; an answer that
  // comes for an earlier opening is null.
  async function call(method, request) {
    const s = seq;
    const gen = board.generation();
    try {
      const res = await unary(board.token(), CHAT + method, Object.assign({ agent: name }, request));
      return s === seq && board.current(gen) ? res : null;
    } catch (e) {
      if (s !== seq || !board.current(gen)) return null;
      if (e.code === "unauthenticated") signOut(refusal(e));
      throw e;
    }
  }

  function fail(what, e) {
    showError(ui.error, what + " (" + (e.code || "error") + "): " + (e.message || String(e)));
  }

  // ---- opening ----

  // check opens the window on the agent of the page when it can talk, and
  // hides it when it cannot (offline, or without "chat").
  function check() {
    const n = board.view() === "agent" ? agentOfHash() : "";
    const a = n ? board.agentNamed(n) : null;
    if (!able(a)) {
      if (name !== "") close();
      return;
    }
    if (n !== name) open(n);
  }

  function close() {
    seq++;
    name = "";
    page = null;
    thread = "";
    pending = null;
    busy = false;
    described = false;
    ui.box.hidden = true;
    ui.threads.replaceChildren();
    ui.log.replaceChildren();
    ui.fields.replaceChildren();
    ui.describe.replaceChildren();
    ui.about.open = false;
    showError(ui.error, "");
    say("");
  }

  async function open(n) {
    close();
    name = n;
    ui.box.hidden = false;
    drawPending();
    try {
      const p = await call("GetChatPage", {});
      if (p === null) return;
      page = p;
      drawFields();
      await readThreads(true);
    } catch (e) {
      fail("Could not reach the agent's chat", e);
    }
  }

  // readThreads fills the list of conversations; with pick, it draws the
  // most recent one.
  async function readThreads(pick) {
    const res = await call("ListThreads", {});
    if (res === null) return;
    const list = Array.isArray(res.threads) ? res.threads : [];
    if (pick) thread = list.length > 0 ? list[0].thread : "";
    const options = [node("option", "", "New conversation")];
    options[0].value = "";
    let shown = false;
    for (const t of list) {
      const o = node("option", "", t.thread + (t.waiting ? " (waiting)" : ""));
      o.value = t.thread;
      if (t.thread === thread) shown = true;
      options.push(o);
    }
    if (thread !== "" && !shown) {
      const o = node("option", "", thread);
      o.value = thread;
      options.splice(1, 0, o);
    }
    ui.threads.replaceChildren(...options);
    ui.threads.value = thread;
    if (pick) await readThread();
  }

  // readThread draws the conversation shown: its turns and what it waits
  // for.
  async function readThread() {
    ui.log.replaceChildren();
    pending = null;
    if (thread === "") {
      drawPending();
      return;
    }
    const c = await call("GetThread", { thread });
    if (c === null) return;
    for (const t of c.turns || []) {
      if (t.asked) addLine("asked", t.asked, t.who || "");
      if (t.answered) addLine("answered", t.answered, name);
    }
    pending = c.pending || null;
    drawPending();
  }

  // ---- drawing ----

  function addLine(kind, text, who) {
    const li = node("li", kind);
    if (who) li.append(node("span", "who", who));
    li.append(document.createTextNode(text));
    ui.log.append(li);
    li.scrollIntoView({ block: "nearest" });
  }

  // drawFields draws what a message carries: one box for a flow with one
  // input (or none), a field per input for one with several.
  function drawFields() {
    const inputs = (page && page.inputs) || [];
    const out = [];
    if (inputs.length <= 1) {
      const label = node("label", "", inputs.length === 1 && inputs[0].description ? inputs[0].description : "Message");
      label.htmlFor = "chat-text";
      const box = node("textarea");
      box.id = "chat-text";
      box.dataset.input = "";
      out.push(label, box);
    } else {
      for (const [i, input] of inputs.entries()) {
        const label = node("label", "", input.name + (input.type ? " (" + input.type + ")" : ""));
        label.htmlFor = "chat-input-" + i;
        if (input.description) label.append(node("span", "hint", " " + input.description));
        const box = node("input");
        box.type = "text";
        box.id = "chat-input-" + i;
        box.dataset.input = input.name;
        box.dataset.type = input.type || "";
        out.push(label, box);
      }
    }
    ui.fields.replaceChildren(...out);
  }

  // drawPending shows what the run waits for, and what the form sends: an
  // answer to a question, yes or no to an approval the chat decides, and
  // nothing for one the board decides.
  function drawPending() {
    const p = pending;
    ui.empty.hidden = thread !== "" || ui.log.childElementCount > 0;
    const answering = p !== null;
    const approval = answering && p.kind === "PAUSE_KIND_APPROVAL";
    const boards = approval && p.decides === "board";
    ui.pending.hidden = !answering;
    ui.fields.hidden = approval;
    ui.send.hidden = approval;
    ui.yes.hidden = !approval || boards;
    ui.no.hidden = !approval || boards;
    ui.send.textContent = answering ? "Answer" : "Send";
    for (const b of [ui.send, ui.yes, ui.no, ui.fresh]) b.disabled = busy;
    if (!answering) {
      ui.pending.replaceChildren();
      return;
    }
    const out = [node("strong", "", approval ? "Waiting for an approval: " : "The agent asks: "),
      document.createTextNode(p.question || "")];
    if (p.showJson) {
      let shown = null;
      try {
        shown = JSON.parse(p.showJson);
      } catch (e) {
        shown = null;
      }
      if (shown && typeof shown === "object") {
        const dl = node("dl", "facts");
        for (const [k, v] of Object.entries(shown)) {
          dl.append(node("dt", "", k), node("dd", "", typeof v === "string" ? v : JSON.stringify(v)));
        }
        out.push(dl);
      }
    }
    if (boards) {
      const link = node("a", "", p.approvalId ? "the approval" : "the approvals");
      link.href = p.approvalId ? "#approval/" + encodeURIComponent(p.approvalId) : "#approvals";
      out.push(node("p", "", "The organisation decides it on the board" +
        (p.approvalId ? " (approval " + p.approvalId + ")" : "") + ": see "), link,
        document.createTextNode(". The run goes on once it is decided."));
    }
    ui.pending.replaceChildren(...out);
  }

  // ---- talking ----

  // message is what the form holds, as Talk's text or input; null with an
  // error shown when it is not a message.
  function message() {
    const boxes = Array.from(ui.fields.querySelectorAll("[data-input]"));
    if (pending !== null || boxes.length === 1) {
      const text = boxes.length > 0 ? boxes[0].value : "";
      if (text.trim() === "") {
        showError(ui.error, pending !== null ? "Write the answer first." : "Write a message first.");
        return null;
      }
      if (new TextEncoder().encode(text).length > TEXT_MAX) {
        showError(ui.error, "The message is longer than " + TEXT_MAX + " bytes.");
        return null;
      }
      return pending !== null ? { answer: text } : { text };
    }
    const input = {};
    for (const b of boxes) {
      if (b.value === "") continue;
      const type = b.dataset.type;
      if (type === "" || type === "string" || type === "file") {
        input[b.dataset.input] = b.value;
        continue;
      }
      try {
        input[b.dataset.input] = JSON.parse(b.value);
      } catch (e) {
        showError(ui.error, b.dataset.input + ": not a " + type + " (write it as JSON).");
        b.focus();
        return null;
      }
    }
    if (Object.keys(input).length === 0) {
      showError(ui.error, "Fill in at least one field first.");
      return null;
    }
    return { input };
  }

  async function talk(m, said) {
    if (busy) return;
    busy = true;
    showError(ui.error, "");
    say("Waiting for the agent…");
    drawPending();
    addLine("asked", said, "you");
    try {
      const res = await call("Talk", Object.assign({ thread }, m));
      if (res === null) return;
      const t = res.turn || {};
      thread = t.thread || thread;
      if (t.reply) addLine("answered", t.reply, name);
      pending = t.pending || null;
      for (const b of ui.fields.querySelectorAll("[data-input]")) b.value = "";
      say("");
      await readThreads(false);
    } catch (e) {
      say("");
      fail("The agent did not take it", e);
    } finally {
      busy = false;
      drawPending();
    }
  }

  ui.form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const m = message();
    if (m === null) return;
    talk(m, m.answer !== undefined ? m.answer : m.text !== undefined ? m.text : JSON.stringify(m.input));
  });
  ui.yes.addEventListener("click", () => talk({ answer: "yes" }, "yes"));
  ui.no.addEventListener("click", () => talk({ answer: "no" }, "no"));
  ui.fresh.addEventListener("click", () => {
    thread = "";
    ui.threads.value = "";
    showError(ui.error, "");
    readThread();
  });
  ui.threads.addEventListener("change", async () => {
    thread = ui.threads.value;
    showError(ui.error, "");
    try {
      await readThread();
    } catch (e) {
      fail("Could not read the conversation", e);
    }
  });
  ui.about.addEventListener("toggle", async () => {
    if (!ui.about.open || described || name === "") return;
    described = true;
    try {
      const d = await call("DescribeAgent", {});
      if (d === null) return;
      const fact = (term, value) => [node("dt", "", term), node("dd", "", value)];
      const list = (l) => (Array.isArray(l) && l.length > 0 ? l.join(", ") : "—");
      ui.describe.replaceChildren(
        ...fact("name", d.name || name),
        ...fact("description", d.description || "—"),
        ...fact("build", d.build || "—"),
        ...fact("inputs", list((d.inputs || []).map((i) => i.name))),
        ...fact("outputs", list((d.outputs || []).map((i) => i.name))),
        ...fact("tools", list(d.tools)),
        ...fact("needs", list(d.needs)),
        ...fact("conversation", d.conversation ? "yes: it remembers what was said" : "no"),
      );
    } catch (e) {
      described = false;
      fail("Could not describe the agent", e);
    }
  });

  board.onAgents((a) => {
    if (a !== null && a.name === agentOfHash()) check();
  });

  board.part({
    reset: close,
    run() {},
    stop: close,
    wake() {},
    shown() {
      check();
    },
  });
})();
