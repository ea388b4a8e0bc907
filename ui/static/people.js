// The people view, for admins: everyone the board knows (every page of
// ListUsers, up to board.LIST_MAX people, saying so when there are more),
// read every POLL_MS while it is shown; adding a person (AddUser), which
// gives the one-time setup link to hand to them; changing a role
// (SetUserRole); disabling and enabling, each confirmed on the page first
// (DisableUser, EnableUser); and the door agents use to learn who they
// talk to (GetIdentify, SetIdentify). The board refuses all of it to anyone
// but an admin; the tab is not even shown to them. Roles and doors are
// shown, and chosen, as words (enums.js).
"use strict";

(function () {
  const { $, unary, readAll, count, node, parseTime, byName, sleep, showError, signOut, refusal, LIST_MAX } = board;
  const USERS = "/symphonix.board.v1.UserService/";
  const POLL_MS = 5000; // how often the people are read while the view is shown
  const ROLES = enums.role.words;

  const ui = {
    people: $("people"),
    error: $("people-error"),
    status: $("people-status"),
    loading: $("people-loading"),
    wrap: $("people-wrap"),
    rows: $("people-rows"),
    more: $("people-more"),
    addForm: $("add-form"),
    addEmail: $("add-email"),
    addName: $("add-name"),
    addRole: $("add-role"),
    addButton: $("add-button"),
    linkBox: $("setup-link-box"),
    linkWho: $("setup-link-who"),
    linkExpires: $("setup-link-expires"),
    link: $("setup-link"),
    linkCopy: $("setup-link-copy"),
    doorForm: $("door-form"),
    door: $("door"),
    doorButton: $("door-button"),
    doorStatus: $("door-status"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the reads of the running poll
  let epoch = 0; // counts changes made here: a read begun before one is stale
  let users = null; // as ListUsers said, or null before the first read
  let cut = false; // ListUsers stopped at LIST_MAX with more to come
  let confirming = ""; // the email whose disabling or enabling waits for a yes
  const busy = new Set(); // emails with a change under way
  let drawn = ""; // what the table shows, to redraw only on a change
  let doorRead = false; // the door select shows what the board said

  function reset() {
    epoch++;
    users = null;
    cut = false;
    confirming = "";
    busy.clear();
    drawn = "";
    doorRead = false;
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.wrap.hidden = true;
    ui.linkBox.hidden = true;
    ui.link.value = "";
    ui.addEmail.value = "";
    ui.addName.value = "";
    ui.addRole.value = "viewer";
    showError(ui.error, "");
    say(ui.status, "");
    say(ui.doorStatus, "");
  }

  function say(el, message) {
    el.textContent = message || "";
    el.hidden = !message;
  }

  // failed handles an error of a call made for gen: an ended session signs
  // the page out; anything else is shown, with its code.
  function failed(gen, e, what) {
    if (!board.current(gen)) return;
    if (e.code === "unauthenticated") {
      signOut(refusal(e));
      return;
    }
    showError(ui.error, what + " (" + e.code + "): " + e.message + ".");
  }

  // poll reads the people every POLL_MS while the view is shown.
  async function poll(gen, cred) {
    while (board.current(gen)) {
      if (ui.people.hidden || !board.may("admin")) {
        await sleep(POLL_MS * 2, nap); // shown wakes it
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      const began = epoch;
      try {
        const [list, door] = await Promise.all([
          readAll(cred, USERS + "ListUsers", {}, "users", ctl.signal),
          doorRead ? null : unary(cred, USERS + "GetIdentify", {}, ctl.signal),
        ]);
        if (!board.current(gen)) return;
        if (began === epoch) {
          users = list.items.filter((u) => u && typeof u.email === "string" && typeof u.id === "string");
          users.sort((a, b) => byName(a.email, b.email));
          cut = list.more;
          render();
        }
        if (door && !doorRead) {
          ui.door.value = enums.door.word(door.door) || "pairing";
          doorRead = true;
        }
      } catch (e) {
        if (e.name === "AbortError" || !board.current(gen)) return;
        failed(gen, e, "Could not read the people");
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (began !== epoch) continue;
      await sleep(POLL_MS, nap);
    }
  }

  function pollSoon() {
    epoch++;
    if (nap.wake) nap.wake();
  }

  // ---- drawing ----

  function render() {
    if (users === null) return;
    const mine = (board.me() && board.me().user && board.me().user.email) || "";
    const key = JSON.stringify([users, confirming, Array.from(busy), mine, cut]);
    if (key === drawn) return;
    drawn = key;
    const focused = document.activeElement;
    const refocus = focused instanceof HTMLElement && ui.rows.contains(focused)
      ? { email: focused.dataset.email, what: focused.dataset.what } : null;
    ui.rows.replaceChildren(...users.map((u) => row(u, mine)));
    if (refocus) {
      const again = Array.from(ui.rows.querySelectorAll("[data-what]"))
        .find((el) => el.dataset.email === refocus.email && el.dataset.what === refocus.what);
      if (again) again.focus({ preventScroll: true });
    }
    ui.loading.hidden = true;
    ui.wrap.hidden = false;
    ui.more.textContent = cut ? "This page shows the first " + count(LIST_MAX, "person", "people") + " by email: the board knows more." : "";
    ui.more.hidden = !cut;
  }

  function cell(...children) {
    const td = node("td");
    td.append(...children);
    return td;
  }

  function yesNo(yes, what) {
    return node("span", yes ? "" : "none", yes ? "set" : "not set" + (what ? ": " + what : ""));
  }

  function row(u, mine) {
    const word = enums.role.word(u.role);
    const tr = node("tr", u.disabled ? "is-disabled" : "");
    tr.dataset.email = u.email;
    tr.dataset.role = word;
    tr.dataset.disabled = String(Boolean(u.disabled));
    const email = node("th");
    email.scope = "row";
    const page = node("a", "name", u.email);
    page.href = board.personHref(u.email);
    page.title = "their page: what they did, and what was done to them";
    email.append(page);
    if (u.email === mine) email.append(node("span", "description", "you"));

    const role = node("select", "role");
    role.setAttribute("aria-label", "role of " + u.email);
    role.dataset.email = u.email;
    role.dataset.what = "role";
    for (const r of ROLES) {
      const o = node("option", "", r);
      o.value = r;
      role.append(o);
    }
    if (!ROLES.includes(word)) {
      const o = node("option", "", word || "?");
      o.value = word;
      role.append(o);
    }
    role.value = word;
    role.disabled = busy.has(u.email);
    role.addEventListener("change", () => setRole(u, role.value));

    const state = node("span", "badge " + (u.disabled ? "disabled" : "enabled"), u.disabled ? "disabled" : "enabled");

    const actions = node("div", "actions");
    if (confirming === u.email) {
      const text = u.disabled
        ? "Enable " + u.email + " again? They can sign in again; ended sessions stay ended."
        : "Disable " + u.email + "? They cannot sign in, and every session of theirs ends now.";
      const yes = node("button", u.disabled ? "confirm" : "confirm danger", u.disabled ? "Yes, enable" : "Yes, disable");
      yes.type = "button";
      yes.dataset.email = u.email;
      yes.dataset.what = "confirm";
      yes.disabled = busy.has(u.email);
      yes.addEventListener("click", () => setDisabled(u, !u.disabled));
      const no = node("button", "cancel", "Cancel");
      no.type = "button";
      no.dataset.email = u.email;
      no.dataset.what = "cancel";
      no.addEventListener("click", () => {
        confirming = "";
        render();
      });
      actions.append(node("span", "confirm-text", text), yes, no);
    } else {
      const b = node("button", u.disabled ? "enable" : "disable", u.disabled ? "Enable" : "Disable");
      b.type = "button";
      b.dataset.email = u.email;
      b.dataset.what = "toggle";
      b.disabled = busy.has(u.email);
      b.setAttribute("aria-label", (u.disabled ? "Enable " : "Disable ") + u.email);
      b.addEventListener("click", () => {
        confirming = u.email;
        render();
        const yes = ui.rows.querySelector('tr[data-email="' + CSS.escape(u.email) + '"] button.confirm');
        if (yes) yes.focus();
      });
      actions.append(b);
    }
    tr.append(
      email,
      cell(u.name ? node("span", "", u.name) : node("span", "none", "—")),
      cell(role),
      cell(state),
      cell(yesNo(u.hasPassword, "the setup link was not used")),
      cell(yesNo(u.hasVerifySecret, "")),
      cell(actions),
    );
    return tr;
  }

  // ---- changes ----

  async function setRole(u, role) {
    const gen = board.generation();
    const cred = board.token();
    busy.add(u.email);
    showError(ui.error, "");
    say(ui.status, "");
    epoch++;
    render();
    try {
      const res = await unary(cred, USERS + "SetUserRole", { userId: u.id, role: enums.role.name(role) });
      if (!board.current(gen)) return;
      say(ui.status, u.email + " is now " + (enums.role.word(res.user && res.user.role) || role) + ".");
      if (board.me() && board.me().user && board.me().user.email === u.email) board.refreshMe();
    } catch (e) {
      failed(gen, e, "Could not change the role of " + u.email);
    } finally {
      if (board.current(gen)) {
        busy.delete(u.email);
        drawn = ""; // the select may show what was asked, not what is
        render();
        pollSoon();
      }
    }
  }

  async function setDisabled(u, disabled) {
    const gen = board.generation();
    const cred = board.token();
    busy.add(u.email);
    showError(ui.error, "");
    say(ui.status, "");
    epoch++;
    render();
    try {
      const res = await unary(cred, USERS + (disabled ? "DisableUser" : "EnableUser"), { userId: u.id });
      if (!board.current(gen)) return;
      const n = Number(res.sessionsEnded || 0);
      say(ui.status, disabled
        ? u.email + " is disabled; " + n + (n === 1 ? " session" : " sessions") + " ended."
        : u.email + " is enabled again.");
    } catch (e) {
      failed(gen, e, "Could not " + (disabled ? "disable " : "enable ") + u.email);
    } finally {
      if (board.current(gen)) {
        busy.delete(u.email);
        confirming = "";
        render();
        pollSoon();
      }
    }
  }

  async function onAdd(ev) {
    ev.preventDefault();
    const gen = board.generation();
    const cred = board.token();
    const email = ui.addEmail.value.trim();
    if (email === "") {
      showError(ui.error, "Enter the person's email.");
      ui.addEmail.focus();
      return;
    }
    ui.addButton.disabled = true;
    showError(ui.error, "");
    say(ui.status, "");
    try {
      const res = await unary(cred, USERS + "AddUser", {
        email, name: ui.addName.value.trim(), role: enums.role.name(ui.addRole.value),
      });
      if (!board.current(gen)) return;
      const who = (res.user && res.user.email) || email;
      const path = typeof res.setupPath === "string" ? res.setupPath : "";
      ui.linkWho.textContent = who;
      ui.link.value = path.startsWith("/") ? location.origin + path : path;
      const exp = parseTime(res.setupExpireTime);
      ui.linkExpires.textContent = Number.isNaN(exp) ? "it expires" : new Date(exp).toLocaleString();
      ui.linkBox.hidden = false;
      ui.addEmail.value = "";
      ui.addName.value = "";
      say(ui.status, "Added " + who + " as " + (enums.role.word(res.user && res.user.role) || ui.addRole.value) + ".");
      ui.link.focus();
      ui.link.select();
      pollSoon();
    } catch (e) {
      failed(gen, e, "Could not add " + email);
    } finally {
      ui.addButton.disabled = false;
    }
  }

  async function onCopy() {
    ui.link.focus();
    ui.link.select();
    try {
      await navigator.clipboard.writeText(ui.link.value);
      say(ui.status, "The setup link is copied.");
    } catch (e) {
      say(ui.status, "Copy the selected link (Ctrl+C or ⌘C).");
    }
  }

  async function onDoor(ev) {
    ev.preventDefault();
    const gen = board.generation();
    const cred = board.token();
    const door = ui.door.value;
    ui.doorButton.disabled = true;
    say(ui.doorStatus, "");
    showError(ui.error, "");
    try {
      const res = await unary(cred, USERS + "SetIdentify", { door: enums.door.name(door) });
      if (!board.current(gen)) return;
      const now = enums.door.word(res.door) || door;
      ui.door.value = now;
      say(ui.doorStatus, "Agents are now told to use the door " + now + ".");
    } catch (e) {
      failed(gen, e, "Could not set the door");
      doorRead = false;
      pollSoon();
    } finally {
      ui.doorButton.disabled = false;
    }
  }

  ui.addForm.addEventListener("submit", onAdd);
  ui.linkCopy.addEventListener("click", onCopy);
  ui.doorForm.addEventListener("submit", onDoor);
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && confirming && !ui.people.hidden) {
      confirming = "";
      render();
    }
  });

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
      if (view === "people" && nap.wake) nap.wake();
    },
    role() {
      drawn = "";
      render();
    },
  });
})();
