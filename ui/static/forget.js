// Forgetting a stale agent, from its page (agent.js), for admins: a form
// with the reason, shown while the agent is offline. ForgetAgent removes
// it with its switches, health rounds and eval scores (its runs, approvals
// and audit entries stay); the board refuses an agent seen more recently
// than its forget-after, and the page says so in the board's words. Once
// forgotten, the page goes back to the agents, whose watch has dropped it.
"use strict";

(function () {
  const { $, unary, showError, signOut, refusal } = board;
  const AGENTS = "/symphonix.board.v1.AgentService/";
  const REASON_MAX = 512; // bytes, as the board counts them

  const ui = {
    box: $("forget"),
    form: $("forget-form"),
    reason: $("forget-reason"),
    button: $("forget-button"),
    error: $("forget-error"),
  };

  let agent = null; // the agent shown, as its page last said
  let busy = false;

  function reset() {
    agent = null;
    busy = false;
    ui.box.hidden = true;
    ui.reason.value = "";
    ui.reason.removeAttribute("aria-invalid");
    ui.button.disabled = false;
    showError(ui.error, "");
  }

  function draw() {
    const online = agent && enums.agentState.word(agent.state) !== "offline";
    ui.box.hidden = !agent || online || !board.may("admin");
  }

  async function forget(ev) {
    ev.preventDefault();
    if (!agent || busy) return;
    const reason = ui.reason.value.trim();
    if (reason === "" || new TextEncoder().encode(reason).length > REASON_MAX) {
      ui.reason.setAttribute("aria-invalid", "true");
      showError(ui.error, reason === "" ? "Say why the agent is forgotten: it is kept in the audit log." :
        "The reason is longer than " + REASON_MAX + " bytes.");
      ui.reason.focus();
      return;
    }
    ui.reason.removeAttribute("aria-invalid");
    const name = agent.name;
    const gen = board.generation();
    busy = true;
    ui.button.disabled = true;
    try {
      await unary(board.token(), AGENTS + "ForgetAgent", { name, reason });
      if (!board.current(gen)) return;
      board.forgotten(name);
      location.hash = "#agents";
    } catch (e) {
      if (!board.current(gen)) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      showError(ui.error, "Not forgotten (" + e.code + "): " + e.message);
    } finally {
      busy = false;
      ui.button.disabled = false;
    }
  }

  ui.form.addEventListener("submit", forget);

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
