// An agent's eval scores, on its page ("#agent/<name>"): per suite (the
// eval file beside the flow), the builds scored, newest first — the build
// by its first 12 hex digits, its score, whether it passed, when it was
// scored, how many cases the judge scored, and whether the agent reported
// it or `agent eval --publish` sent it — with the build the agent runs now
// marked, and above the table what to look at about it in words: a
// deployed build that scored below an earlier one, below its threshold, or
// not at all. Nothing is shown for an agent with no scores.
//
// The scores come from ListEvalScores, read when the page opens and every
// READ_MS while it is shown. Everything an agent sends is shown as text,
// never as markup.
"use strict";

(function () {
  const { $, readAll, node, showError, signOut, refusal } = board;
  const EVALS = "/symphonix.board.v1.EvalService/";
  const READ_MS = 10000; // how often the list is read again while shown

  const ui = {
    box: $("evals"),
    note: $("evals-note"),
    error: $("evals-error"),
    suites: $("eval-suites"),
  };

  let agent = null; // the agent shown, as its page last said
  let list = []; // its suites, as the board last said
  let readAt = 0; // when the list was last read
  let reading = false;
  let seq = 0; // counts the agents shown: an answer for an earlier one is dropped

  function reset() {
    seq++;
    agent = null;
    list = [];
    readAt = 0;
    reading = false;
    ui.box.hidden = true;
    ui.suites.replaceChildren();
    showError(ui.error, "");
  }

  async function read() {
    if (!agent || reading) return;
    const s = seq;
    const gen = board.generation();
    reading = true;
    try {
      const res = await readAll(board.token(), EVALS + "ListEvalScores", { agent: agent.name }, "suites");
      if (s !== seq || !board.current(gen)) return;
      list = res.items.filter((x) => x && x.agent === agent.name && x.suite);
      readAt = Date.now();
      showError(ui.error, "");
    } catch (e) {
      if (s !== seq || !board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, "Could not read the agent's eval scores (" + e.code + "): " + e.message + ".");
    } finally {
      if (s === seq) reading = false;
    }
    draw();
  }

  // short is a build by its first 12 hex digits.
  function short(build) {
    return String(build || "").replace(/^sha256:/, "").slice(0, 12) || "—";
  }

  function score(v) {
    return (Number(v) || 0).toFixed(2);
  }

  function row(b, now) {
    const tr = node("tr", "eval-build");
    tr.dataset.build = b.build || "";
    tr.dataset.deployed = String(Boolean(b.deployed));
    const th = node("th");
    th.scope = "row";
    const code = node("code", "eval-build-id", short(b.build));
    code.title = b.build || "";
    th.append(code);
    if (b.deployed) th.append(document.createTextNode(" "), node("span", "badge eval-deployed", "deployed"));
    const cell = (child, className) => {
      const td = node("td", className);
      td.append(typeof child === "string" ? document.createTextNode(child) : child);
      return td;
    };
    const threshold = typeof b.threshold === "number" ? " (threshold " + score(b.threshold) + ")" : "";
    tr.append(th,
      cell(score(b.score) + threshold, "eval-score"),
      cell(node("span", "badge " + (b.passed ? "ok" : "error"), b.passed ? "passed" : "failed"), "eval-passed"),
      cell(runs.time(b.scoreTime, now), "eval-when"),
      cell((b.scored || 0) + " of " + (b.cases || 0), "eval-cases"),
      cell(enums.evalSource.word(b.source) || "—", "eval-source"));
    return tr;
  }

  function suite(s, now) {
    const box = node("section", "eval-suite");
    box.dataset.suite = s.suite;
    box.append(node("h4", "eval-suite-name", s.suite));
    const flags = Array.isArray(s.flags) ? s.flags : [];
    const reasons = Array.isArray(s.reasons) ? s.reasons : [];
    box.dataset.flags = flags.map((f) => enums.evalFlag.word(f)).join(",");
    if (flags.length > 0) {
      const ul = node("ul", "eval-flags notice");
      flags.forEach((f, i) => {
        const li = node("li", "eval-flag");
        li.dataset.flag = enums.evalFlag.word(f);
        li.append(node("span", "badge error", enums.evalFlag.word(f)), document.createTextNode(" " + (reasons[i] || "")));
        ul.append(li);
      });
      box.append(ul);
    }
    const wrap = node("div", "table-wrap");
    const table = node("table", "eval-table");
    const caption = node("caption", "visually-hidden", "The builds scored in " + s.suite + ", newest first");
    const head = node("thead");
    const hr = node("tr");
    for (const h of ["Build", "Score", "Passed", "Scored", "Cases scored", "From"]) {
      const th = node("th", "", h);
      th.scope = "col";
      hr.append(th);
    }
    head.append(hr);
    const body = node("tbody");
    body.append(...(s.builds || []).map((b) => row(b, now)));
    table.append(caption, head, body);
    wrap.append(table);
    box.append(wrap);
    return box;
  }

  function draw() {
    if (!agent) return;
    ui.box.hidden = list.length === 0;
    if (ui.box.hidden) {
      ui.suites.replaceChildren();
      return;
    }
    const now = Date.now();
    ui.note.textContent = "What each build of the agent's flow scored in its evals, newest first; " +
      "the build it runs now is marked deployed.";
    ui.suites.replaceChildren(...list.map((s) => suite(s, now)));
  }

  board.onAgentPage((a) => {
    if (a === null) {
      reset();
      return;
    }
    if (agent && agent.name !== a.name) reset();
    agent = a;
    if (Date.now() - readAt >= READ_MS) read();
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
