// The tree of runs on a run's page (run.js): the trigger that started the
// root, when one did, then the root run and, indented under each run, the
// runs its agent nodes delegated to (GetRunTree), each with the agent it
// ran as, the node that delegated, its state and how long it took, linking
// to its own page. A delegation refused as circular (AGENT_RECURSION, from
// ListDelegationFailures) is shown under the run whose node asked for it.
// A run nothing delegated to and that delegated nothing shows no tree.
"use strict";

const runTree = (function () {
  const { $, unary, node, showError, signOut, refusal, runHref } = board;
  const FAILURES_MAX = 500; // the cycles read for one tree: one page of the board's most

  const ui = {
    box: $("run-tree"),
    error: $("run-tree-error"),
    trigger: $("run-tree-trigger"),
    root: $("run-tree-root"),
    more: $("run-tree-more"),
  };

  let seq = 0; // counts the reads begun: an answer for an earlier one is dropped
  let controller = null;
  let drawn = "";

  function clear() {
    seq++;
    if (controller) controller.abort();
    controller = null;
    drawn = "";
    ui.box.hidden = true;
    ui.root.replaceChildren();
    ui.trigger.hidden = true;
    ui.more.hidden = true;
    showError(ui.error, "");
  }

  // load reads the tree the run shown ({agent, id}) belongs to, and the
  // cycles its agent reported, and draws them.
  async function load(shown) {
    const s = ++seq;
    if (controller) controller.abort();
    const ctl = new AbortController();
    controller = ctl;
    try {
      const res = await unary(board.token(), runs.RUNS + "GetRunTree", { agent: shown.agent, id: shown.id }, ctl.signal);
      let failures = [];
      try {
        const f = await unary(board.token(), runs.RUNS + "ListDelegationFailures",
          { agent: shown.agent, code: "AGENT_RECURSION", pageSize: FAILURES_MAX }, ctl.signal);
        failures = (f && Array.isArray(f.failures)) ? f.failures : [];
      } catch (e) {
        if (e.name === "AbortError") throw e;
      }
      if (s !== seq) return;
      showError(ui.error, "");
      draw(shown, res || {}, failures);
    } catch (e) {
      if (e.name === "AbortError" || s !== seq) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      if (e.code === "not_found") return; // not stored yet: the next read shows it
      ui.box.hidden = false;
      showError(ui.error, "Could not read the run's delegations (" + e.code + "): " + e.message);
    }
  }

  function draw(shown, res, failures) {
    const root = res.root;
    if (!root || !root.run) return;
    const ids = new Set();
    (function walk(n) {
      ids.add(n.run.id);
      for (const c of n.children || []) if (c && c.run) walk(c);
    })(root);
    const byRun = new Map();
    for (const f of failures) {
      if (!f || !ids.has(f.runId)) continue;
      if (!byRun.has(f.runId)) byRun.set(f.runId, []);
      byRun.get(f.runId).push(f);
    }
    const key = JSON.stringify([res, [...byRun]]);
    if (key === drawn) return;
    drawn = key;
    if (ids.size === 1 && byRun.size === 0) {
      ui.box.hidden = true;
      return;
    }
    const t = root.run.trigger;
    if (t && t.triggerId) {
      ui.trigger.replaceChildren(document.createTextNode("Trigger "), node("strong", "trigger-id", t.triggerId),
        document.createTextNode(" (" + (enums.triggerKind.word(t.kind) || "unknown kind") + ") started the root run."));
      ui.trigger.hidden = false;
    } else {
      ui.trigger.hidden = true;
    }
    ui.root.replaceChildren(item(root, shown, byRun));
    ui.more.textContent = res.truncated ? "More runs were left out: the board shows at most 1,000 runs and 32 levels." : "";
    ui.more.hidden = !res.truncated;
    ui.box.hidden = false;
  }

  // item is one run of the tree and, under it, its cycles and children.
  function item(n, shown, byRun) {
    const r = n.run;
    const li = node("li", "tree-run");
    li.dataset.run = r.id;
    const d = r.delegation;
    const link = node("a", "run-link", r.id);
    link.href = runHref(r.agent || shown.agent, r.id);
    if (r.id === shown.id) {
      link.setAttribute("aria-current", "page");
      li.classList.add("current");
    }
    const line = node("div", "tree-line");
    line.append(link, document.createTextNode(" "));
    if (d) {
      line.append(node("span", "tree-agent", d.agent || "?"), document.createTextNode(" from node "),
        node("code", "tree-node", d.parentNode || "?"), document.createTextNode(" "));
    } else {
      line.append(node("span", "tree-agent", r.agent || shown.agent), document.createTextNode(" "));
    }
    line.append(runs.badge(r));
    const took = runs.took(r.duration);
    if (took !== "") line.append(node("span", "tree-took", " " + took));
    li.append(line);
    const cycles = byRun.get(r.id) || [];
    const kids = (n.children || []).filter((c) => c && c.run);
    if (cycles.length === 0 && kids.length === 0) return li;
    const ul = node("ul", "tree");
    for (const f of cycles) {
      const c = node("li", "tree-cycle");
      c.dataset.node = f.node || "";
      c.append(node("strong", "", "Circular delegation refused"), document.createTextNode(" at node "),
        node("code", "", f.node || "?"), document.createTextNode(" → " + (f.target || "?")));
      if (Array.isArray(f.chain) && f.chain.length > 0) c.append(document.createTextNode(" (chain " + f.chain.join(" → ") + ")"));
      if (f.message) c.append(document.createTextNode(": " + f.message));
      ul.append(c);
    }
    for (const k of kids) ul.append(item(k, shown, byRun));
    li.append(ul);
    return li;
  }

  return Object.freeze({ clear, load });
})();
