// The alerts view: every alert rule evaluated for every agent it covers,
// now (ListAlerts): firing ones and those that cannot tell — an agent that
// does not report what the rule reads is never shown as quiet. It reads
// every page, up to board.LIST_MAX alerts, every POLL_MS while it is
// shown. Names and reasons are drawn as text.
"use strict";

(function () {
  const { $, readAll, count, node, showError, signOut, refusal, agentHref, sleep, LIST_MAX } = board;
  const ALERTS = "/symphonix.board.v1.AlertService/";
  const POLL_MS = 5000; // how often the alerts are read while the view is shown
  const POLL_MAX_MS = 30000; // the longest wait between reads after failures

  const ui = {
    view: $("alerts"),
    error: $("alerts-error"),
    more: $("alerts-more"),
    loading: $("alerts-loading"),
    empty: $("alerts-empty"),
    wrap: $("alerts-wrap"),
    rows: $("alerts-rows"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the read of the running poll
  let alerts = null; // as ListAlerts said, or null before the first read
  let cut = false; // the list stopped at LIST_MAX with more to come
  let drawn = ""; // what the table shows, to redraw only on a change

  function reset() {
    alerts = null;
    cut = false;
    drawn = "";
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    showError(ui.error, "");
  }

  // poll reads the alerts every POLL_MS while the view is shown, until the
  // generation changes, waiting longer after failures.
  async function poll(gen, cred) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.view.hidden) {
        await sleep(POLL_MAX_MS, nap); // shown wakes it
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      try {
        const res = await readAll(cred, ALERTS + "ListAlerts", {}, "alerts", ctl.signal);
        if (!board.current(gen)) return;
        alerts = res.items.filter((a) => a && typeof a.ruleId === "string" && typeof a.agent === "string");
        cut = res.more;
        failures = 0;
        showError(ui.error, "");
        render();
      } catch (e) {
        if (e.name === "AbortError" || !board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        showError(ui.error, "Could not read the alerts (" + e.code + "): " + e.message +
          (alerts === null ? ". Trying again." : ". What is shown may be out of date; trying again."));
      }
      if (!board.current(gen)) return;
      ctl.abort();
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  function row(a) {
    const tr = node("tr");
    tr.dataset.rule = a.ruleId;
    tr.dataset.agent = a.agent;
    const state = enums.alertState.word(a.state) || "unknown";
    tr.dataset.state = state;
    const rule = node("th", "rule", a.ruleId);
    rule.scope = "row";
    const agent = node("td");
    const link = node("a", "name", a.agent);
    link.href = agentHref(a.agent);
    agent.append(link);
    const badge = node("td");
    badge.append(node("span", "badge alert-" + state.replace(" ", "-"), state));
    tr.append(rule, agent, badge, node("td", "reason", a.reason || ""));
    return tr;
  }

  function render() {
    if (alerts === null) return;
    ui.loading.hidden = true;
    const key = JSON.stringify([alerts, cut]);
    if (key === drawn) return;
    drawn = key;
    ui.rows.replaceChildren(...alerts.map(row));
    ui.wrap.hidden = alerts.length === 0;
    ui.empty.hidden = alerts.length > 0;
    ui.more.textContent = cut ? "This page shows the first " + count(LIST_MAX, "alert", "alerts") + ": there are more." : "";
    ui.more.hidden = !cut;
  }

  board.part({
    reset,
    run(gen, cred) {
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
      if (view === "alerts" && nap.wake) nap.wake();
    },
  });
})();
