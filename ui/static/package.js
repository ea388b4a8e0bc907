// One package's page in the library, "#package/<name>" (board.packageHref):
// the package (GetPackage) and its versions, newest first: the first PAGE
// of them, and PAGE more each time More is clicked, up to board.LIST_MAX.
// Each version shows its digest (shortened, whole on hover, and a Copy
// button), kind, size, files, who signed it — the publisher and the start
// of the key id, from ListKeys, a revoked key marked — who published it and
// when, what it requires, whether it is yanked (by whom, when, why) and the
// agents whose last hello said they run it. Admins see a Yank button on
// each version not yanked, which asks why and sends Yank; the page shows
// the answer at once. The page reads the package and the keys again every
// POLL_MS while it is shown. Everything a publisher or an operator wrote —
// names, descriptions, reasons — is drawn as text.
"use strict";

(function () {
  const {
    $, unary, readAll, count, node, none, tags, parseTime, ago, sleep, showError, signOut, refusal,
    agentHref, packageOfHash, PAGE_SIZE, LIST_MAX,
  } = board;
  const PACKAGES = "/symphonix.board.v1.PackageService/";
  const POLL_MS = 5000; // how often the page is read again while it is shown
  const POLL_MAX_MS = 30000; // the longest wait between reads after failures
  const PAGE = 100; // the versions shown at first, and how many more More shows
  const REASON_MAX = 1024; // bytes of a yank's reason, as the board counts them

  const ui = {
    view: $("package"),
    name: $("package-name"),
    error: $("package-error"),
    loading: $("package-loading"),
    body: $("package-body"),
    facts: $("package-facts"),
    keysError: $("package-keys-error"),
    readOnly: $("package-readonly"),
    actionError: $("package-action-error"),
    status: $("package-status"),
    readError: $("versions-read-error"),
    versions: $("versions"),
    moreRow: $("versions-more-row"),
    more: $("versions-more"),
    count: $("versions-count"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the reads of the running poll
  let epoch = 0; // counts packages opened, Mores and yanks: a read begun before one is stale
  let name = ""; // the package shown, or "" when none
  let pkg = null; // its summary, as GetPackage said, or null before it did
  let versions = []; // its versions, newest first, as GetPackage (or Yank) said
  let hasMore = false; // the board has older versions than those shown
  let wanted = PAGE; // how many versions to show: PAGE, and PAGE more for each More
  let keys = null; // key id -> PublisherKey, as ListKeys said, or null when it could not be read
  let keysCut = false; // ListKeys stopped at LIST_MAX with more to come
  let denied = false; // the board refused a yank as not allowed
  const yanking = new Map(); // version -> {reason, busy}: the yank forms open
  let drawn = ""; // what the page shows, to redraw only on a change

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  // clear forgets the package shown.
  function clear() {
    epoch++;
    name = "";
    pkg = null;
    versions = [];
    hasMore = false;
    wanted = PAGE;
    denied = false;
    yanking.clear();
    drawn = "";
    ui.name.textContent = "";
    ui.facts.replaceChildren();
    ui.versions.replaceChildren();
    ui.body.hidden = true;
    ui.loading.hidden = false;
    ui.moreRow.hidden = true;
    showError(ui.error, "");
    showError(ui.actionError, "");
    showError(ui.readError, "");
    say("");
  }

  function reset() {
    clear();
    keys = null;
    keysCut = false;
    ui.keysError.hidden = true;
  }

  // open shows the package named n: the one shown already, or a new one
  // read from the board.
  function open(n) {
    if (n === "" || n === name) {
      render();
      return;
    }
    clear();
    name = n;
    ui.name.textContent = n;
    if (nap.wake) nap.wake();
  }

  // ---- reading ----

  // read reads the package n and its first want versions, newest first, in
  // as few pages as it can. It returns the package, the versions, and
  // whether there are more.
  async function read(cred, n, want, signal) {
    const size = Math.min(want, PAGE_SIZE);
    const got = [];
    const seen = new Set();
    let summary = null;
    let token = "";
    for (let pages = 1; pages <= LIST_MAX; pages++) {
      const req = { name: n, pageSize: size };
      if (token) req.pageToken = token;
      const res = await unary(cred, PACKAGES + "GetPackage", req, signal);
      if (res && res.package) summary = res.package;
      for (const v of (res && Array.isArray(res.versions) ? res.versions : [])) {
        if (!v || typeof v.version !== "string" || seen.has(v.version)) continue;
        seen.add(v.version);
        got.push(v);
      }
      const next = res && typeof res.nextPageToken === "string" ? res.nextPageToken : "";
      if (next !== "" && next === token) throw new board.RPCError("internal", "the board gave the same page twice");
      token = next;
      if (token === "" || got.length >= want) break;
    }
    return { summary, list: got.slice(0, want), more: got.length > want || token !== "" };
  }

  // readKeys reads the publisher keys, every page, up to LIST_MAX; null
  // (and why, in the notice) when the board would not say.
  async function readKeys(cred, signal) {
    try {
      const res = await readAll(cred, PACKAGES + "ListKeys", {}, "keys", signal);
      const m = new Map();
      for (const k of res.items) if (k && typeof k.keyId === "string") m.set(k.keyId, k);
      return { keys: m, cut: res.more, why: "" };
    } catch (e) {
      if (e.name === "AbortError" || e.code === "unauthenticated") throw e;
      return { keys: null, cut: false, why: e.code + ": " + e.message };
    }
  }

  // poll reads the package shown and the keys every POLL_MS while the page
  // is shown, until the generation changes, waiting longer after failures.
  async function poll(gen, cred) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.view.hidden || name === "") {
        await sleep(POLL_MAX_MS, nap); // open and shown wake it
        continue;
      }
      const ctl = new AbortController();
      controller = ctl;
      const began = epoch;
      const n = name;
      let gone = false;
      try {
        const [res, k] = await Promise.all([read(cred, n, wanted, ctl.signal), readKeys(cred, ctl.signal)]);
        if (!board.current(gen)) return;
        failures = 0;
        if (began === epoch) {
          pkg = res.summary || { name: n };
          versions = res.list;
          hasMore = res.more;
          keys = k.keys;
          keysCut = k.cut;
          drawKeysNotice(k.why);
          showError(ui.error, "");
          showError(ui.readError, "");
          render();
        }
      } catch (e) {
        if (e.name === "AbortError" || !board.current(gen)) return;
        if (e.code === "unauthenticated") {
          signOut(refusal(e));
          return;
        }
        failures++;
        if (began === epoch) {
          if (pkg === null) {
            ui.loading.hidden = true;
            gone = e.code === "not_found";
            showError(ui.error, gone
              ? "The library holds no package named " + n + "."
              : "Could not read the package " + n + " (" + e.code + "): " + e.message + ". Trying again.");
          } else {
            showError(ui.readError, "Could not read the package again (" + e.code + "): " + e.message +
              ". What is shown may be out of date; trying again.");
          }
        }
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (began !== epoch) continue; // another package, More or a yank meanwhile: read again now
      await sleep(gone ? POLL_MAX_MS : failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  function pollSoon() {
    epoch++;
    if (nap.wake) nap.wake();
  }

  function drawKeysNotice(why) {
    let said = "";
    if (keys === null) {
      said = "Could not read the publisher keys (" + why + "): signers are shown by key id alone.";
    } else if (keysCut) {
      said = "The board trusts more than " + count(LIST_MAX, "key", "keys") +
        ": a signer past them is shown by key id alone.";
    }
    ui.keysError.textContent = said;
    ui.keysError.hidden = said === "";
  }

  // ---- drawing ----

  // short is a digest or key id as the page shows it: its algorithm and the
  // first 12 hex digits.
  function short(id) {
    const i = id.indexOf(":");
    const hex = i >= 0 ? id.slice(i + 1) : id;
    return (i >= 0 ? id.slice(0, i + 1) : "") + (hex.length > 12 ? hex.slice(0, 12) + "…" : hex);
  }

  function bytes(n) {
    const b = Number(n);
    if (!Number.isFinite(b) || b < 0) return "—";
    const exact = count(b, "byte", "bytes");
    if (b < 1024) return exact;
    const units = ["KiB", "MiB", "GiB", "TiB"];
    let v = b / 1024;
    let u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return v.toFixed(1) + " " + units[u] + " (" + exact + ")";
  }

  function when(s, now) {
    const ms = parseTime(s);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "moving", "");
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    timeText(t, now);
    return t;
  }

  function timeText(t, now) {
    const ms = Number(t.dataset.ms);
    t.textContent = health.clock(ms, now) + " (" + ago(ms, now) + ")";
  }

  function fact(term, value) {
    const dd = node("dd");
    dd.dataset.fact = term;
    dd.append(typeof value === "string" ? document.createTextNode(value) : value);
    return [node("dt", "", term), dd];
  }

  function drawFacts(now) {
    const p = pkg || {};
    ui.facts.replaceChildren(
      ...fact("name", node("code", "", name)),
      ...(p.description ? fact("description", node("span", "description-text", p.description)) : []),
      ...fact("kind", p.kind || "—"),
      ...fact("latest", p.latest ? node("code", "version", p.latest) : node("span", "none", "every version is yanked")),
      ...fact("versions", (Number(p.versions) || 0).toLocaleString("en")),
      ...fact("updated", when(p.updateTime, now)),
    );
  }

  function digestOf(v) {
    const wrap = node("span", "digest-row");
    if (!v.digest) {
      wrap.append(none());
      return wrap;
    }
    const code = node("code", "digest", short(v.digest));
    code.title = v.digest;
    code.dataset.digest = v.digest;
    const copy = node("button", "plain copy", "Copy");
    copy.type = "button";
    copy.setAttribute("aria-label", "Copy the digest of " + v.version);
    copy.addEventListener("click", () => copyDigest(v, code));
    wrap.append(code, " ", copy);
    return wrap;
  }

  async function copyDigest(v, code) {
    try {
      await navigator.clipboard.writeText(v.digest);
      say("The digest of " + v.version + " is copied.");
    } catch (e) {
      // No clipboard here: show it whole and select it, to copy by hand.
      code.textContent = v.digest;
      const range = document.createRange();
      range.selectNodeContents(code);
      const sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      say("Copy the selected digest of " + v.version + " (Ctrl+C or ⌘C).");
    }
  }

  // signer is one key id that signed a version: its publisher and the
  // start of the id, a revoked key marked with who revoked it, when and why.
  function signer(id, now) {
    const li = node("li", "signer");
    li.dataset.keyId = id;
    const k = keys ? keys.get(id) : undefined;
    const code = node("code", "key-id", short(id));
    code.title = id;
    if (k) {
      li.dataset.publisher = k.publisher || "";
      li.append(node("strong", "publisher", k.publisher || "?"), " ", code);
      if (k.revoked) {
        li.dataset.revoked = "true";
        const badge = node("span", "badge revoked", "revoked");
        const ms = parseTime(k.revoked.time);
        badge.title = "revoked by " + (k.revoked.by || "?") +
          (Number.isNaN(ms) ? "" : ", " + new Date(ms).toLocaleString()) +
          (k.revoked.reason ? ": " + k.revoked.reason : "");
        li.append(" ", badge);
      }
    } else {
      li.append(code, " ", node("span", "none", keys ? "a key the board does not know" : "publisher unknown"));
    }
    return li;
  }

  function signers(v, now) {
    const list = Array.isArray(v.signers) ? v.signers : [];
    if (list.length === 0) return none();
    const ul = node("ul", "signers");
    ul.setAttribute("aria-label", "keys that signed " + v.version);
    for (const id of list) if (typeof id === "string") ul.append(signer(id, now));
    return ul;
  }

  function published(v, now) {
    const span = node("span", "published");
    span.append(node("span", "published-by", v.publishedBy || "?"), ", ", when(v.publishTime, now));
    return span;
  }

  function requires(v) {
    const r = v.requires || {};
    const dl = node("dl", "requires");
    const row = (term, list) => {
      const dd = node("dd");
      dd.dataset.requires = term;
      dd.append(tags(list, term));
      dl.append(node("dt", "", term), dd);
    };
    row("MCP servers", r.mcpServers);
    row("inputs", r.inputs);
    row("secrets", r.secrets);
    return dl;
  }

  // running is the agents whose last hello said they run v, each linking
  // to its page, and how many more there are past those named.
  function running(v) {
    const names = (Array.isArray(v.agents) ? v.agents : []).filter((a) => typeof a === "string" && a !== "");
    const total = Math.max(Number(v.agentCount) || 0, names.length);
    if (total === 0) return node("span", "none", "none");
    const ul = node("ul", "tags agents");
    ul.setAttribute("aria-label", "agents running " + v.version);
    for (const a of names) {
      const li = node("li", "tag");
      const link = node("a", "agent-link", a);
      link.href = agentHref(a);
      li.append(link);
      ul.append(li);
    }
    if (total > names.length) {
      const more = node("li", "more-agents", "and " + (total - names.length).toLocaleString("en") + " more");
      ul.append(more);
    }
    return ul;
  }

  function yankedNote(v, now) {
    const y = v.yanked;
    const p = node("p", "notice yanked-note");
    p.append(node("strong", "", "Yanked"), " by ", node("span", "yanked-by", y.by || "?"), ", ", when(y.time, now));
    if (y.reason) p.append(": ", node("span", "reason-text yanked-reason", y.reason));
    p.append(". Hidden from new installs; still downloadable by its digest.");
    return p;
  }

  function canYank() {
    return board.may("admin") && !denied;
  }

  function yankBox(v) {
    const box = node("div", "yank");
    const state = yanking.get(v.version);
    if (!state) {
      const b = node("button", "danger yank-button", "Yank");
      b.type = "button";
      b.setAttribute("aria-label", "Yank " + v.version);
      b.addEventListener("click", () => {
        yanking.set(v.version, { reason: "", busy: false, invalid: false });
        drawn = "";
        render();
        const input = ui.versions.querySelector('li[data-version="' + CSS.escape(v.version) + '"] input.yank-reason');
        if (input) input.focus();
      });
      box.append(b);
      return box;
    }
    const form = node("form", "form inline yank-form");
    form.noValidate = true;
    const field = node("div", "grow");
    const id = "yank-reason-" + v.version;
    const label = node("label", "", "Why yank " + v.version + " ");
    label.htmlFor = id;
    label.append(node("span", "hint", "(required; at most 1,024 bytes)"));
    const input = node("input", "yank-reason");
    input.id = id;
    input.type = "text";
    input.autocomplete = "off";
    input.value = state.reason;
    input.disabled = state.busy;
    if (state.invalid) input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", "package-action-error");
    input.addEventListener("input", () => {
      state.reason = input.value;
      state.invalid = false;
      input.removeAttribute("aria-invalid");
    });
    field.append(label, input);
    const go = node("button", "danger yank-confirm", state.busy ? "Yanking…" : "Yank " + v.version);
    go.type = "submit";
    go.disabled = state.busy;
    const cancel = node("button", "plain yank-cancel", "Cancel");
    cancel.type = "button";
    cancel.disabled = state.busy;
    cancel.addEventListener("click", () => {
      yanking.delete(v.version);
      drawn = "";
      render();
    });
    const buttons = node("div");
    buttons.append(go, " ", cancel);
    form.append(field, buttons);
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      yank(v.version, state);
    });
    box.append(form);
    return box;
  }

  function versionItem(v, now) {
    const yanked = Boolean(v.yanked);
    const li = node("li", "card version" + (yanked ? " is-yanked" : ""));
    li.dataset.version = v.version;
    li.dataset.yanked = String(yanked);
    const head = node("h4", "version-head");
    head.append(node("code", "version", v.version));
    if (v.kind) head.append(" ", node("span", "badge kind", v.kind));
    if (yanked) head.append(" ", node("span", "badge yanked", "yanked"));
    li.append(head);
    if (yanked) li.append(yankedNote(v, now));
    if (v.description) li.append(node("p", "description-text", v.description));
    const dl = node("dl", "facts");
    dl.append(
      ...fact("digest", digestOf(v)),
      ...fact("kind", v.kind || "—"),
      ...fact("size", bytes(v.size)),
      ...fact("files", (Number(v.files) || 0).toLocaleString("en")),
      ...fact("signed by", signers(v, now)),
      ...fact("published", published(v, now)),
      ...fact("requires", requires(v)),
      ...fact("agents running it", running(v)),
    );
    li.append(dl);
    if (!yanked && canYank()) li.append(yankBox(v));
    return li;
  }

  function render() {
    if (name === "" || pkg === null) return;
    ui.loading.hidden = true;
    ui.body.hidden = false;
    const now = Date.now();
    const key = JSON.stringify([pkg, versions, hasMore, keys ? Array.from(keys) : null, canYank(),
      Array.from(yanking, ([v, s]) => [v, s.busy, s.invalid])]);
    if (key === drawn) {
      for (const t of ui.body.querySelectorAll("time.moving")) timeText(t, now);
      return;
    }
    drawn = key;
    drawFacts(now);
    ui.readOnly.hidden = canYank() || !versions.some((v) => !v.yanked);
    // Keep the focus, and what is being typed, in a yank form across a redraw.
    const focused = document.activeElement;
    const refocus = focused instanceof HTMLInputElement && ui.versions.contains(focused)
      ? { version: focused.closest("li.version").dataset.version, from: focused.selectionStart, to: focused.selectionEnd }
      : null;
    ui.versions.replaceChildren(...versions.map((v) => versionItem(v, now)));
    if (refocus !== null) {
      const again = ui.versions.querySelector('li[data-version="' + CSS.escape(refocus.version) + '"] input.yank-reason');
      if (again) {
        again.focus({ preventScroll: true });
        if (refocus.from !== null) again.setSelectionRange(refocus.from, refocus.to);
      }
    }
    drawMore();
  }

  // drawMore says how many versions are shown when there are more, and
  // offers More until LIST_MAX are shown.
  function drawMore() {
    const shown = versions.length;
    const what = count(shown, "version", "versions");
    if (!hasMore) ui.count.textContent = "";
    else if (shown >= LIST_MAX) ui.count.textContent = "This page shows the newest " + what + ", the most it shows.";
    else ui.count.textContent = "Showing the newest " + what + ": there are older ones.";
    ui.more.hidden = !hasMore || shown >= LIST_MAX;
    ui.more.disabled = false;
    ui.moreRow.hidden = !hasMore;
  }

  function onMore() {
    if (!hasMore || wanted >= LIST_MAX) return;
    wanted = Math.min(LIST_MAX, wanted + PAGE);
    ui.more.disabled = true;
    pollSoon(); // a read under way is dropped: its epoch is past
  }

  // ---- yanking ----

  function yankRefusal(e, version) {
    const what = name + "@" + version;
    switch (e.code) {
      case "permission_denied":
        return "You may not yank " + what + " (permission_denied): " + e.message + ". Only admins may; nothing was changed.";
      case "invalid_argument":
      case "not_found":
        return "The board refused to yank " + what + " (" + e.code + "): " + e.message + ". Nothing was changed.";
      case "unavailable":
        return "The board did not answer (unavailable): " + e.message + ". " + what +
          " may or may not have been yanked; the page will show.";
      default:
        return "The board refused to yank " + what + " (" + e.code + "): " + e.message + ".";
    }
  }

  async function yank(version, state) {
    if (!canYank() || state.busy) return;
    const reason = state.reason.trim();
    const size = new TextEncoder().encode(reason).length;
    if (reason === "" || size > REASON_MAX) {
      state.invalid = true;
      showError(ui.actionError, reason === ""
        ? "Say why " + version + " is yanked: the reason is required."
        : "The reason is " + size.toLocaleString("en") + " bytes: at most 1,024.");
      drawn = "";
      render();
      return;
    }
    const gen = board.generation();
    const n = name;
    state.busy = true;
    showError(ui.actionError, "");
    say("");
    drawn = "";
    render();
    try {
      const res = await unary(board.token(), PACKAGES + "Yank", { name: n, version, reason });
      if (!board.current(gen) || n !== name) return;
      yanking.delete(version);
      const v = res && res.version;
      if (v && v.version === version) versions = versions.map((x) => (x.version === version ? v : x));
      say("Yanked " + n + "@" + version + ": it is hidden from new installs.");
    } catch (e) {
      if (!board.current(gen) || n !== name) return;
      if (e.code === "unauthenticated") {
        signOut(refusal(e));
        return;
      }
      state.busy = false;
      if (e.code === "permission_denied") denied = true;
      showError(ui.actionError, yankRefusal(e, version));
    } finally {
      if (board.current(gen) && n === name) {
        drawn = "";
        render();
        pollSoon();
      }
    }
  }

  ui.more.addEventListener("click", onMore);

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
      if (view !== "package") return;
      open(packageOfHash());
      if (nap.wake) nap.wake();
    },
    role() {
      drawn = "";
      render();
    },
  });
})();
