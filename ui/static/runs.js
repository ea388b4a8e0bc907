// The words the web board shows for runs, shared by an agent's list of
// runs (runlist.js), starting one (fire.js) and a run's page (run.js), and
// the one loop that keeps a WatchRuns open for them. Loaded after
// board.js, enums.js, session.js and health.js, before the views' scripts.
// Everything here returns text or nodes built with textContent: run ids,
// node names and errors come from agents.
"use strict";

const runs = (function () {
  const { node, none, parseTime, parseDuration, stream, sleep, retryDelay, signOut, refusal } = board;
  const RUNS = "/symphonix.board.v1.RunService/";
  // How long a watch may be silent before it is given up for dead: the
  // board sends a heartbeat every 15 s or so.
  const SILENCE_MS = 45000;
  const ERROR_CUT = 160; // characters of an error a list shows; the rest on hover
  const ENDED = ["finished", "failed", "stopped"];
  // Codes after which watching again cannot help: the page says so and
  // stops.
  const FINAL = ["invalid_argument", "not_found", "permission_denied", "unimplemented"];

  // state is the word for where a run stands: "running", "paused",
  // "finished", "failed", "stopped", or a newer board's word as it wrote
  // it; "unknown" when it has none.
  function state(r) {
    return (r && enums.runState.word(r.state)) || "unknown";
  }

  // ended says whether a run has ended, and so will not change again.
  function ended(r) {
    return ENDED.includes(state(r));
  }

  // badge is a run's state as a badge.
  function badge(r) {
    const w = state(r);
    const el = node("span", "badge run-state " + (ENDED.includes(w) || w === "running" || w === "paused" ? w : "unknown"));
    el.dataset.state = w;
    el.append(node("span", "dot"), document.createTextNode(w));
    return el;
  }

  // outcome is the word for how a step came out: "ok", "failed", "paused",
  // "stopped", or "running" for a step not finished.
  function outcome(step) {
    return (step && enums.stepOutcome.word(step.outcome)) || "running";
  }

  // pauseKind is the word for what a run or step waits for: "ask",
  // "approval", or "".
  function pauseKind(x) {
    return (x && enums.pauseKind.word(x.pause)) || "";
  }

  // int reads an integer the board sent: int32 as a number, int64 and
  // uint64 as a string; 0 when absent or not one.
  function int(x) {
    const n = typeof x === "string" ? Number(x) : x;
    return Number.isFinite(n) ? n : 0;
  }

  // tokens is what a run's or a step's model calls spent, in words, or ""
  // when nothing was reported.
  function tokens(t) {
    if (!t || typeof t !== "object") return "";
    const input = int(t.input);
    const output = int(t.output);
    const cached = int(t.cached);
    const total = int(t.total) || input + output;
    if (total === 0 && input === 0 && output === 0) return "";
    const n = (x) => x.toLocaleString("en");
    return n(total) + " (" + n(input) + " in" + (cached ? ", " + n(cached) + " cached" : "") + ", " + n(output) + " out)";
  }

  // took is a protobuf JSON duration in words ("340 ms", "1.2 s"), or "".
  function took(d) {
    const ms = parseDuration(d);
    return Number.isNaN(ms) ? "" : health.took(ms);
  }

  // startedBy says what started a run, and who when the agent knows.
  function startedBy(r) {
    const what = (r && r.startedBy) || "";
    const who = (r && r.startedByWho) || "";
    if (what === "" && who === "") return "";
    if (who === "") return what;
    return (what || "?") + " (" + who + ")";
  }

  // delivery is the words for where a triggered run's result stands: ""
  // when the trigger delivers nothing or nothing was said.
  function delivery(d, attempts) {
    const w = enums.deliveryState.word(d);
    const n = int(attempts);
    switch (w) {
      case "pending": return "delivery pending" + (n > 0 ? " (" + n + (n === 1 ? " attempt" : " attempts") + " so far)" : "");
      case "delivered": return "result delivered";
      case "failed": return "delivery failed" + (n > 0 ? " after " + n + (n === 1 ? " attempt" : " attempts") : "");
    }
    return "";
  }

  // triggerMarker is the mark a list shows on a run a trigger started; ""
  // for one it did not.
  function triggerMarker(r) {
    const t = r && r.trigger;
    if (!t || !t.triggerId) return "";
    const el = node("span", "badge trigger-marker", "trigger " + t.triggerId);
    el.dataset.trigger = t.triggerId;
    el.title = "Started by trigger " + t.triggerId + " (" + (enums.triggerKind.word(t.kind) || "unknown kind") + ")";
    return el;
  }

  // cut is s cut to n characters, with an ellipsis when it was longer.
  function cut(s, n) {
    const chars = Array.from(s);
    return chars.length <= n ? s : chars.slice(0, n).join("") + "…";
  }

  // errorText is a run's error for a list: cut, with the whole on hover.
  function errorText(r) {
    if (!r || !r.error) return none();
    const el = node("span", "run-error", cut(r.error, ERROR_CUT));
    el.title = r.error;
    return el;
  }

  // time is a <time> for a protobuf JSON timestamp: its clock and how long
  // ago, the full time on hover; — when there is none.
  function time(s, now) {
    const ms = parseTime(s);
    if (Number.isNaN(ms)) return none();
    const t = node("time", "", health.clock(ms, now) + " (" + board.ago(ms, now) + ")");
    t.dateTime = new Date(ms).toISOString();
    t.title = new Date(ms).toLocaleString();
    return t;
  }

  // newer says whether b says more about a run than a, which it replaces:
  // an ended run never changes again, and otherwise the one with more
  // steps is the later. Equal, b is taken (the one heard last).
  function newer(a, b) {
    if (!a) return true;
    if (ended(a) !== ended(b)) return ended(b);
    if (ended(a)) return true; // both ended: the later word, GetRun's, is the stored one
    return int(b.stepCount) >= int(a.stepCount);
  }

  // follow keeps one WatchRuns for request ({agent} or {agent, run}) open
  // until its stop is called or somebody signs in or out, watching again
  // whenever it ends. h has
  //   before(signal): async; read what the watch does not send (a page of
  //                   runs, or the run with its steps) before each watch
  //   synced(list):   the runs running or paused as the watch began
  //   event(kind, msg): each change after that ("started", "step", ...)
  //   broken(message, final): the watch ended; final when watching again
  //                   cannot help; "" when it is live again
  // and it returns {stop, wake}.
  function follow(request, h) {
    const gen = board.generation();
    const nap = { wake: null };
    let controller = null;
    let stopped = false;
    const alive = () => !stopped && board.current(gen);

    async function loop() {
      let attempt = 0;
      while (alive()) {
        const ctl = new AbortController();
        controller = ctl;
        let silent = false;
        let watchdog = null;
        const heard = () => {
          clearTimeout(watchdog);
          watchdog = setTimeout(() => {
            silent = true;
            ctl.abort();
          }, SILENCE_MS);
        };
        let code = "unavailable";
        let why = "the watch ended";
        try {
          await h.before(ctl.signal);
          if (!alive()) return;
          let staged = [];
          await stream(board.token(), RUNS + "WatchRuns", request, ctl.signal,
            () => {
              if (alive()) heard();
            },
            (msg) => {
              if (!alive() || !msg) return;
              heard();
              const kind = enums.runEvent.word(msg.kind);
              if (kind === "heartbeat") return;
              if (kind === "snapshot") {
                if (staged && valid(msg.run)) staged.push(msg.run);
                return;
              }
              if (kind === "synced") {
                const list = staged || [];
                staged = null;
                attempt = 0;
                h.broken("", false);
                h.synced(list);
                return;
              }
              if (valid(msg.run)) h.event(kind, msg);
            });
        } catch (e) {
          if (!alive()) return;
          if (e.code === "unauthenticated") {
            signOut(refusal(e));
            return;
          }
          if (silent) {
            code = "deadline_exceeded";
            why = "nothing heard from the board for " + SILENCE_MS / 1000 + " s";
          } else {
            code = e.code || "unknown";
            why = e.message;
          }
        } finally {
          clearTimeout(watchdog);
        }
        if (!alive()) return;
        ctl.abort();
        if (FINAL.includes(code)) {
          h.broken(code === "unimplemented"
            ? "This board does not report runs (unimplemented): " + why + "."
            : "Could not watch the runs (" + code + "): " + why + ". Reload the page to try again.", true);
          return;
        }
        h.broken("Could not watch the runs (" + code + "): " + why + ". Trying again; until then this may be out of date.", false);
        await sleep(code === "resource_exhausted" && attempt === 0 ? 0 : retryDelay(attempt), nap);
        attempt++;
      }
    }

    loop();
    return {
      stop() {
        stopped = true;
        if (controller) controller.abort();
        if (nap.wake) nap.wake();
      },
      wake() {
        if (nap.wake) nap.wake();
      },
    };
  }

  function valid(r) {
    return r && typeof r.id === "string" && r.id !== "";
  }

  return Object.freeze({
    RUNS, delivery, triggerMarker, state, ended, badge, outcome, pauseKind, int, tokens, took, startedBy, cut, errorText, time, newer,
    follow, valid,
  });
})();
