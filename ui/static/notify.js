// Opt-in browser notifications: a person who may decide approvals ticks a
// box on the approvals view, the browser asks them whether the board may
// notify them, and from then on each approval raised — or escalated to a
// step that lets them decide — while the page is open is a notification
// of the browser's own (the ask, the agent and node, the digest's start);
// clicking it brings the page forward on that approval. The choice is
// kept in this browser (localStorage), per board; the browser's own
// permission can be withdrawn in its settings at any time. Notifications
// need a secure page (https, or localhost): elsewhere the box says so.
"use strict";

(function () {
  const { $, approvalHref } = board;
  const KEY = "symphonix.notify"; // localStorage: "on" when chosen
  const DIGEST_SHOWN = "sha256:".length + 12;

  const ui = {
    box: $("notify-box"),
    toggle: $("notify-toggle"),
    status: $("notify-status"),
  };

  function say(message) {
    ui.status.textContent = message || "";
    ui.status.hidden = !message;
  }

  function supported() {
    return typeof window.Notification === "function" && window.isSecureContext;
  }

  function chosen() {
    try {
      return localStorage.getItem(KEY) === "on";
    } catch {
      return false;
    }
  }

  function choose(on) {
    try {
      if (on) localStorage.setItem(KEY, "on");
      else localStorage.removeItem(KEY);
    } catch {
      // storage refused (a private window): the choice lasts this page
    }
  }

  // enabled says whether a notification is to be shown: chosen here and
  // allowed by the browser.
  function enabled() {
    return supported() && chosen() && Notification.permission === "granted";
  }

  function draw() {
    const me = board.me();
    ui.box.hidden = !me || !board.may("approver");
    if (!supported()) {
      ui.toggle.checked = false;
      ui.toggle.disabled = true;
      say("This browser cannot show notifications for this page: it needs the board over https (or on localhost).");
      return;
    }
    ui.toggle.disabled = false;
    ui.toggle.checked = enabled();
    if (chosen() && Notification.permission === "denied") {
      say("The browser blocks notifications from this board: allow them in its site settings.");
    } else {
      say(enabled() ? "On: this browser tells you of each approval you can decide while the board is open." : "");
    }
  }

  async function onToggle() {
    if (!ui.toggle.checked) {
      choose(false);
      draw();
      return;
    }
    let permission = Notification.permission;
    if (permission === "default") {
      try {
        permission = await Notification.requestPermission();
      } catch {
        permission = "denied";
      }
    }
    choose(permission === "granted");
    draw();
    if (permission !== "granted") say("The browser did not allow notifications, so none will be shown.");
  }

  // notifyApproval shows a notification of the approval a, raised or
  // escalated (event), if the person chose them.
  board.notifyApproval = (a, event) => {
    if (!enabled()) return;
    const digest = String(a.digest || "").slice(0, DIGEST_SHOWN);
    const title = (event === "escalated" ? "Escalated to you: " : "Approval waits: ") + (a.ask || a.id);
    try {
      const n = new Notification(title, {
        body: "Agent " + (a.agent || "?") + ", node " + (a.node || "?") + " (digest " + digest + "…)",
        tag: "symphonix-approval-" + a.id, // one per approval, however often it is told
      });
      n.onclick = () => {
        window.focus();
        location.hash = approvalHref(a.id);
        n.close();
      };
    } catch {
      // a browser that only notifies from a service worker: nothing shown
    }
  };

  ui.toggle.addEventListener("change", onToggle);

  board.part({
    reset() {
      ui.box.hidden = true;
      say("");
    },
    run() {
      draw();
    },
    stop() {},
    wake() {},
    role() {
      draw();
    },
  });
})();
