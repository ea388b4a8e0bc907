// Starting a run from an agent's page (agent.js), for admins: a form with
// one field per input the agent's flow declares (Agent.inputs), each read
// as its type says — a number, true or false, text, or JSON for an object,
// a list or a value of any type — and an optional thread. It is offered
// when the agent is linked, announces "fire" and is not paused. The page
// checks each field, naming the one at fault, before it sends StartRun;
// the board checks them again. Once the agent has started the run, the
// page opens the run's page (run.js).
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal, runHref } = board;
  const INPUT_MAX = 64 << 10; // bytes of the input as JSON, as the board counts them
  const THREAD_MAX = 256; // bytes of a thread
  const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/; // a JSON number

  const ui = {
    box: $("fire-box"),
    unable: $("fire-unable"),
    readOnly: $("fire-readonly"),
    form: $("fire-form"),
    none: $("fire-none"),
    inputs: $("fire-inputs"),
    thread: $("fire-thread"),
    button: $("fire-button"),
    error: $("fire-error"),
    status: $("fire-status"),
  };

  let agent = null; // the agent shown, as its page last drew it
  let fields = []; // [{input, control}] in the order the flow declares them
  let inputsKey = null; // the inputs the fields were built for
  let busy = false; // a StartRun is on its way
  let denied = false; // the board refused a StartRun as not allowed

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function reset() {
    agent = null;
    fields = [];
    inputsKey = null;
    busy = false;
    denied = false;
    ui.inputs.replaceChildren();
    ui.thread.value = "";
    ui.box.hidden = true;
    showError(ui.error, "");
    say("");
  }

  function inputsOf(a) {
    const list = a && Array.isArray(a.inputs) ? a.inputs : [];
    return list.filter((i) => i && typeof i.name === "string" && i.name !== "");
  }

  // typeOf is an input's type as the page reads it: "number", "boolean",
  // "string", "object", "list", or "" for any JSON value (and for a type
  // this page does not know).
  function typeOf(input) {
    const t = input.type || "";
    return ["number", "boolean", "string", "object", "list"].includes(t) ? t : "";
  }

  // build draws one field per input.
  function build(inputs) {
    fields = inputs.map((input, i) => {
      const id = "fire-input-" + i;
      const t = typeOf(input);
      const wrap = node("div", "fire-field");
      wrap.dataset.input = input.name;
      const label = node("label");
      label.htmlFor = id;
      label.append(node("code", "input-name", input.name), document.createTextNode(" "),
        node("span", "hint", "(" + (t === "" ? "any JSON value" : t === "object" || t === "list" ? t + ", as JSON" : t) +
          "; optional)"));
      let control;
      if (t === "boolean") {
        control = node("select");
        for (const [value, text] of [["", "not given"], ["true", "true"], ["false", "false"]]) {
          const o = node("option", "", text);
          o.value = value;
          control.append(o);
        }
      } else if (t === "number" || t === "string") {
        control = node("input");
        control.type = "text";
        control.autocomplete = "off";
        control.spellcheck = false;
        if (t === "number") control.inputMode = "decimal";
      } else {
        control = node("textarea");
        control.rows = 3;
        control.spellcheck = false;
        control.placeholder = t === "object" ? "{\"key\": \"value\"}" : t === "list" ? "[1, 2]" : "JSON";
      }
      control.id = id;
      control.dataset.input = input.name;
      control.dataset.type = t;
      control.setAttribute("aria-describedby", "fire-error");
      wrap.append(label);
      if (input.description) wrap.append(node("p", "hint input-description", input.description));
      wrap.append(control);
      return { input, control, wrap };
    });
    ui.inputs.replaceChildren(...fields.map((f) => f.wrap));
    ui.none.hidden = fields.length > 0;
  }

  // draw shows the form, or says why there is none.
  function draw() {
    const a = agent;
    if (!a) {
      ui.box.hidden = true;
      return;
    }
    const able = health.announces(a, "fire");
    const admin = board.may("admin") && !denied;
    const online = enums.agentState.word(a.state) === "online";
    const paused = Boolean(a.pause && a.pause.paused);
    let unable = "";
    if (!able) {
      unable = admin
        ? "A run cannot be started from the board: its last hello did not announce the fire capability."
        : "";
    } else if (admin && !online) {
      unable = "It is offline: a run can be started from here once it is linked.";
    } else if (admin && paused) {
      unable = "It is paused: resume it to start a run from here.";
    }
    ui.box.hidden = !able && !admin;
    ui.unable.textContent = unable;
    ui.unable.hidden = unable === "";
    ui.readOnly.hidden = !able || admin;
    ui.form.hidden = !able || !admin || !online || paused;
    const inputs = inputsOf(a);
    const key = JSON.stringify(inputs);
    if (key !== inputsKey) { // rebuilt only when the inputs change, so what is typed stays
      inputsKey = key;
      build(inputs);
    }
    ui.button.disabled = busy;
  }

  // fieldError marks the field of input name wrong and says why, naming it.
  function fieldError(f, why) {
    f.control.setAttribute("aria-invalid", "true");
    showError(ui.error, "Input " + f.input.name + ": " + why);
    f.control.focus();
  }

  // read reads the form as StartRun's input, or returns null after saying
  // which field is wrong.
  function read() {
    const input = {};
    for (const f of fields) {
      f.control.removeAttribute("aria-invalid");
      const t = typeOf(f.input);
      const raw = f.control.value;
      if (t === "boolean") {
        if (raw !== "") input[f.input.name] = raw === "true";
        continue;
      }
      if (t === "string") {
        if (raw !== "") input[f.input.name] = raw;
        continue;
      }
      const text = raw.trim();
      if (text === "") continue;
      if (t === "number") {
        const n = Number(text);
        if (!NUMBER.test(text) || !Number.isFinite(n)) {
          fieldError(f, "“" + text + "” is not a number.");
          return null;
        }
        input[f.input.name] = n;
        continue;
      }
      let v;
      try {
        v = JSON.parse(text);
      } catch (e) {
        fieldError(f, "not JSON (" + e.message + ").");
        return null;
      }
      if (t === "object" && (v === null || typeof v !== "object" || Array.isArray(v))) {
        fieldError(f, "an object is wanted, as JSON: {…}.");
        return null;
      }
      if (t === "list" && !Array.isArray(v)) {
        fieldError(f, "a list is wanted, as JSON: […].");
        return null;
      }
      input[f.input.name] = v;
    }
    return input;
  }

  function fireRefusal(e, name) {
    switch (e.code) {
      case "permission_denied":
        return "You may not start a run (permission_denied): " + e.message + ". Only admins may.";
      case "invalid_argument":
        return "The board refused the input (invalid_argument): " + e.message + ".";
      case "failed_precondition":
        return "The board cannot start a run on " + name + " now (failed_precondition): " + e.message + ".";
      case "deadline_exceeded":
        return "The agent did not answer in time (deadline_exceeded): " + e.message +
          ". The run may still have started: it appears in the list below if it did.";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message +
          ". The run may or may not have started: it appears in the list below if it did.";
      default:
        return "The board refused to start a run (" + e.code + "): " + e.message + ".";
    }
  }

  // markRefused marks the field the board's refusal names, if it names one.
  function markRefused(message) {
    const m = /^input[.:\s]+["“]?([^"”:\s]+)/i.exec(message || "");
    const f = m ? fields.find((x) => x.input.name === m[1]) : null;
    if (f) {
      f.control.setAttribute("aria-invalid", "true");
      f.control.focus();
    }
  }

  async function fire(ev) {
    ev.preventDefault();
    if (busy || !agent) return;
    showError(ui.error, "");
    say("");
    const input = read();
    if (input === null) return;
    if (new TextEncoder().encode(JSON.stringify(input)).length > INPUT_MAX) {
      showError(ui.error, "The input is too large: at most " + (INPUT_MAX >> 10) + " KiB as JSON.");
      return;
    }
    const thread = ui.thread.value.trim();
    if (new TextEncoder().encode(thread).length > THREAD_MAX) {
      ui.thread.setAttribute("aria-invalid", "true");
      showError(ui.error, "Thread: too long, at most " + THREAD_MAX + " bytes.");
      ui.thread.focus();
      return;
    }
    ui.thread.removeAttribute("aria-invalid");
    const name = agent.name;
    const gen = board.generation();
    busy = true;
    draw();
    say("Asking " + name + " to start a run…");
    try {
      const req = { agent: name, input };
      if (thread !== "") req.thread = thread;
      const res = await unary(board.token(), runs.RUNS + "StartRun", req);
      if (!board.current(gen)) return;
      const id = (res && res.runId) || "";
      say(id ? "Started the run " + id + "." : "The agent started a run without saying which.");
      if (id) location.hash = runHref(name, id);
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "permission_denied") denied = true;
      say("");
      showError(ui.error, fireRefusal(e, name));
      if (e.code === "invalid_argument") markRefused(e.message);
    } finally {
      if (board.current(gen)) {
        busy = false;
        draw();
      }
    }
  }

  ui.form.addEventListener("submit", fire);

  board.onAgentPage((a) => {
    if (a === null) {
      reset();
      return;
    }
    if (agent && agent.name !== a.name) reset();
    agent = a;
    draw();
  });

  board.part({
    reset,
    run() {},
    stop() {},
    wake() {},
    role() {
      if (agent) draw();
    },
  });
})();
