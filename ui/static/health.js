// The words the web board shows for an agent's health and pause, shared by
// the agents view (the fleet's health column and paused marker) and an
// agent's page (agent.js). Loaded after board.js, enums.js and session.js,
// before the views' scripts. Everything here returns text or nodes built
// with textContent: check names, details and reasons come from agents.
"use strict";

const health = (function () {
  const { node, parseTime } = board;
  const STATUSES = ["ok", "degraded", "unknown"];

  // word is the word for a round's status: "ok", "degraded", "unknown", or
  // a newer board's word as it wrote it; "" when there is no round. An
  // unspecified status is read as unknown, as the API says.
  function word(round) {
    if (!round || typeof round !== "object") return "";
    return enums.healthStatus.word(round.status) || "unknown";
  }

  // kind is the class a status word is drawn with: one of STATUSES, a word
  // the page does not know drawn as unknown.
  function kind(w) {
    return STATUSES.includes(w) ? w : "unknown";
  }

  // checkWord is the word for one check's status: "ok", "error", "unknown";
  // unspecified is unknown.
  function checkWord(c) {
    return (c && enums.checkStatus.word(c.status)) || "unknown";
  }

  // checks is a round's lines that are objects with a name.
  function checks(round) {
    const list = round && Array.isArray(round.checks) ? round.checks : [];
    return list.filter((c) => c && typeof c.name === "string" && c.name !== "");
  }

  // failing is the lines of a round that did not pass.
  function failing(round) {
    return checks(round).filter((c) => checkWord(c) !== "ok");
  }

  // verb says how a check that did not pass came out.
  function verb(w) {
    return w === "error" ? "failed" : w === "unknown" ? "could not tell" : w;
  }

  // when is the time of a round: when the agent ran it, or, without that,
  // when the board received it; NaN when it has neither.
  function when(round) {
    const started = parseTime(round && round.startTime);
    return Number.isNaN(started) ? parseTime(round && round.receiveTime) : started;
  }

  // announces says whether the agent's last hello claimed capability c.
  function announces(agent, c) {
    return Boolean(agent) && Array.isArray(agent.capabilities) && agent.capabilities.includes(c);
  }

  // title says what an agent's health is and why: the checks that did not
  // pass, with what they said, or that it never reported.
  function title(agent, now) {
    const round = agent && agent.health;
    if (!round) {
      return announces(agent, "health")
        ? "No health round reported yet."
        : "No health: the agent does not announce health checks.";
    }
    const w = word(round);
    const bad = failing(round);
    const all = checks(round);
    let text = w + ": ";
    if (bad.length > 0) {
      text += bad.map((c) => c.name + " " + verb(checkWord(c)) + (c.detail ? " (" + c.detail + ")" : "")).join("; ");
    } else if (all.length > 0) {
      text += "every check passed (" + all.length + ")";
    } else {
      text += "no checks";
    }
    const t = when(round);
    if (!Number.isNaN(t)) text += ". Round of " + clock(t, now) + ".";
    return text;
  }

  // badge is an agent's health as a badge: its word coloured by kind, or
  // — when it has none.
  function badge(agent, now) {
    const round = agent && agent.health;
    let el;
    if (!round) {
      el = node("span", "health none", "—");
      el.dataset.health = "none";
    } else {
      const w = word(round);
      el = node("span", "badge health " + kind(w));
      el.dataset.health = w;
      el.append(node("span", "dot"), document.createTextNode(w));
    }
    el.title = title(agent, now);
    return el;
  }

  // pauseWord is where an agent's pause stands: "paused", "pausing…" and
  // "resuming…" while the agent has not said it acted on an operator's
  // word, or "" when it takes work.
  function pauseWord(p) {
    if (!p || typeof p !== "object") return "";
    if (p.paused) return p.delivered ? "paused" : "pausing…";
    return p.delivered ? "" : "resuming…";
  }

  // pauseKind is pauseWord without its ellipsis, for classes and tests:
  // "paused", "pausing", "resuming", or "".
  function pauseKind(p) {
    return pauseWord(p).replace("…", "");
  }

  // pauseSaid is who decided a pause, where, when and why, in one sentence.
  function pauseSaid(p, now) {
    if (!p || typeof p !== "object") return "Nobody has paused it.";
    const what = p.paused ? "Paused" : "Resumed";
    const origin = enums.pauseOrigin.word(p.origin);
    const by = p.by ? " by " + p.by : "";
    const where = origin === "board" ? " on the board" : origin === "local" ? " on the agent's machine" : "";
    const ms = parseTime(p.time);
    const at = Number.isNaN(ms) ? "" : " at " + clock(ms, now) + " (" + board.ago(ms, now) + ")";
    return what + by + where + at + (p.reason ? ": " + p.reason : "") + ".";
  }

  // marker is an agent's pause as a badge for the fleet, with its reason on
  // hover; null when it takes work.
  function marker(p, now) {
    const w = pauseWord(p);
    if (w === "") return null;
    const el = node("span", "badge pause " + pauseKind(p));
    el.dataset.pause = pauseKind(p);
    el.append(node("span", "dot"), document.createTextNode(w));
    el.title = pauseSaid(p, now) + (p.delivered ? "" : " Waiting for the agent to say it acted on it.");
    return el;
  }

  // clock is a time as people read it on this page: "03:12" today, "2 Dec
  // 03:12" another day, with the year when it is not this one.
  function clock(ms, now) {
    const d = new Date(ms);
    const today = new Date(now === undefined ? Date.now() : now);
    const hm = d.toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });
    if (d.toDateString() === today.toDateString()) return hm;
    const opts = { day: "numeric", month: "short" };
    if (d.getFullYear() !== today.getFullYear()) opts.year = "numeric";
    return d.toLocaleDateString("en-GB", opts) + " " + hm;
  }

  // span is a length of time in words: "12 s", "28 min", "3 h 5 min", "2 d 4 h".
  function span(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s";
    const m = Math.round(s / 60);
    if (m < 60) return m + " min";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
    return Math.floor(h / 24) + " d" + (h % 24 ? " " + (h % 24) + " h" : "");
  }

  // took is how long a check took, in words: "3 ms", "1.2 s"; s is a
  // protobuf JSON duration, or milliseconds.
  function took(s) {
    const ms = typeof s === "number" ? s : board.parseDuration(s);
    if (Number.isNaN(ms)) return "—";
    if (ms < 1) return "<1 ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    return span(ms);
  }

  return Object.freeze({
    word, kind, checkWord, checks, failing, verb, when, announces, title, badge,
    pauseWord, pauseKind, pauseSaid, marker, clock, span, took,
  });
})();
