// The library view: the signed solution packages the board holds, by name
// (ListPackages), each with its kind, its newest version that is not
// yanked, how many versions it has and when its last one was published.
// It reads every page of the list, up to board.LIST_MAX packages, every
// POLL_MS while it is shown, and says so when there are more. A package's
// name links to its page (package.js). Everything a publisher wrote —
// names, descriptions — is drawn as text.
"use strict";

(function () {
  const { $, readAll, count, node, none, parseTime, ago, sleep, showError, signOut, refusal, packageHref, LIST_MAX } = board;
  const PACKAGES = "/symphonix.board.v1.PackageService/";
  const POLL_MS = 5000; // how often the list is read while the view is shown
  const POLL_MAX_MS = 30000; // the longest wait between reads after failures

  const ui = {
    view: $("library"),
    error: $("library-error"),
    more: $("library-more"),
    loading: $("library-loading"),
    empty: $("library-empty"),
    wrap: $("library-wrap"),
    rows: $("library-rows"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the read of the running poll
  let packages = null; // as ListPackages said, or null before the first read
  let cut = false; // the list stopped at LIST_MAX with more to come
  let drawn = ""; // what the table shows, to redraw only on a change

  function reset() {
    packages = null;
    cut = false;
    drawn = "";
    ui.rows.replaceChildren();
    ui.loading.hidden = false;
    ui.empty.hidden = true;
    ui.wrap.hidden = true;
    ui.more.hidden = true;
    showError(ui.error, "");
  }

  // poll reads the list every POLL_MS while the view is shown, until the
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
        const res = await readAll(cred, PACKAGES + "ListPackages", {}, "packages", ctl.signal);
        if (!board.current(gen)) return;
        packages = res.items.filter((p) => p && typeof p.name === "string" && p.name !== "");
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
        showError(ui.error, "Could not read the library (" + e.code + "): " + e.message +
          (packages === null ? ". Trying again." : ". What is shown may be out of date; trying again."));
      }
      if (!board.current(gen)) return;
      ctl.abort();
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  // ---- drawing ----

  function updated(p, now) {
    const ms = parseTime(p.updateTime);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "updated", ago(ms, now));
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    t.dataset.ms = String(ms);
    return t;
  }

  function row(p, now) {
    const tr = node("tr");
    tr.dataset.package = p.name;
    const name = node("th");
    name.scope = "row";
    const link = node("a", "name", p.name);
    link.href = packageHref(p.name);
    name.append(link);
    if (p.description) name.append(node("span", "description", p.description));
    const cell = (child) => {
      const td = node("td");
      td.append(child);
      return td;
    };
    const latest = node("td", "latest");
    if (p.latest) {
      latest.append(node("code", "version", p.latest));
    } else {
      latest.append(node("span", "none", "every version is yanked"));
    }
    const versions = Number(p.versions) || 0;
    tr.append(
      name,
      cell(p.kind ? node("span", "kind", p.kind) : none()),
      latest,
      node("td", "version-count", versions.toLocaleString("en")),
      cell(updated(p, now)),
    );
    return tr;
  }

  function render() {
    if (packages === null) return;
    ui.loading.hidden = true;
    const now = Date.now();
    const key = JSON.stringify([packages, cut]);
    if (key !== drawn) {
      drawn = key;
      ui.rows.replaceChildren(...packages.map((p) => row(p, now)));
    } else {
      for (const t of ui.rows.querySelectorAll("time.updated")) t.textContent = ago(Number(t.dataset.ms), now);
    }
    ui.wrap.hidden = packages.length === 0;
    ui.empty.hidden = packages.length > 0;
    ui.more.textContent = cut
      ? "This page shows the first " + count(LIST_MAX, "package", "packages") + " by name: the library holds more."
      : "";
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
      if (view === "library" && nap.wake) nap.wake();
    },
  });
})();
