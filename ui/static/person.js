// A person's page, for admins: "#person/" and their address. Who they are
// (ListUsers), what they did — their newest entries in the audit log, as
// the actor — and what was done to them — the newest entries whose object
// is them (ListAudit, newest first). Changing their role, disabling and
// enabling them stay on the People view, which links here.
"use strict";

(function () {
  const { $, unary, readAll, node, showError, signOut, refusal, personOfHash, auditHref } = board;
  const USERS = "/symphonix.board.v1.UserService/";
  const AUDIT = "/symphonix.board.v1.AuditService/ListAudit";
  const ENTRIES = 20; // entries shown of each kind; the audit view has the rest

  const ui = {
    title: $("person-title"),
    error: $("person-error"),
    loading: $("person-loading"),
    facts: $("person-facts"),
    didAll: $("person-did-all"),
    did: { wrap: $("person-did-wrap"), rows: $("person-did-rows"), empty: $("person-did-empty") },
    done: { wrap: $("person-done-wrap"), rows: $("person-done-rows"), empty: $("person-done-empty") },
  };

  let controller = null; // aborts the reads of the page shown
  let shownFor = ""; // the address whose page is drawn

  function reset() {
    if (controller) controller.abort();
    controller = null;
    shownFor = "";
    ui.title.textContent = "A person";
    ui.facts.replaceChildren();
    ui.facts.hidden = true;
    ui.loading.hidden = true;
    for (const part of [ui.did, ui.done]) {
      part.rows.replaceChildren();
      part.wrap.hidden = true;
      part.empty.hidden = true;
    }
    showError(ui.error, "");
  }

  function fact(term, value) {
    const dd = node("dd", "", value || "—");
    dd.dataset.fact = term;
    return [node("dt", "", term), dd];
  }

  function entries(part, list) {
    part.rows.replaceChildren(...list.map(board.auditRow));
    part.wrap.hidden = list.length === 0;
    part.empty.hidden = list.length > 0;
  }

  async function newest(cred, filter, signal) {
    const res = await unary(cred, AUDIT, Object.assign({ newestFirst: true, pageSize: ENTRIES }, filter), signal);
    return res && Array.isArray(res.entries) ? res.entries : [];
  }

  async function open() {
    const email = personOfHash();
    if (email === "" || email === shownFor) return;
    reset();
    shownFor = email;
    ui.title.textContent = email;
    ui.didAll.href = auditHref({ actor: email });
    ui.loading.hidden = false;
    const gen = board.generation();
    const cred = board.token();
    const ctl = new AbortController();
    controller = ctl;
    try {
      const people = await readAll(cred, USERS + "ListUsers", {}, "users", ctl.signal);
      const u = people.items.find((p) => p && p.email === email);
      if (!u) {
        if (!board.current(gen) || shownFor !== email) return;
        ui.loading.hidden = true;
        showError(ui.error, "The board knows nobody with the address " + email + (people.more ? " among the first it lists" : "") + ".");
        return;
      }
      const [did, done] = await Promise.all([
        newest(cred, { actor: email }, ctl.signal),
        newest(cred, { subject: u.id }, ctl.signal),
      ]);
      if (!board.current(gen) || shownFor !== email) return;
      ui.loading.hidden = true;
      ui.title.textContent = u.name && u.name !== email ? u.name + " (" + email + ")" : email;
      const created = board.parseTime(u.createTime);
      ui.facts.replaceChildren(
        ...fact("name", u.name),
        ...fact("email", u.email),
        ...fact("role", enums.role.word(u.role)),
        ...fact("state", u.disabled ? "disabled: cannot sign in" : "enabled"),
        ...fact("password", u.hasPassword ? "set" : "not set: their setup link has not been used"),
        ...fact("verify secret", u.hasVerifySecret ? "set" : "not set"),
        ...fact("added", Number.isNaN(created) ? "" : new Date(created).toLocaleString()),
        ...fact("id", u.id),
      );
      ui.facts.hidden = false;
      entries(ui.did, did);
      entries(ui.done, done);
    } catch (e) {
      if (e.name === "AbortError" || !board.current(gen) || shownFor !== email) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      ui.loading.hidden = true;
      showError(ui.error, "Could not read " + email + " (" + e.code + "): " + e.message + ".");
    }
  }

  board.part({
    reset,
    run() {},
    stop() {
      if (controller) controller.abort();
      controller = null;
    },
    wake() {},
    shown(view) {
      if (view === "person") open();
      else shownFor = ""; // read again when it is next shown
    },
  });
})();
