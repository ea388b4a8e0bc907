// The dashboard: the fleet over a window (GetFleetHistory), drawn with
// uPlot (vendor/uPlot.iife.min.js, on canvas; it writes styles through the
// DOM, never as markup, so it keeps within the page's Content-Security-
// Policy). Five charts: agents online; approvals pending; decision
// latency p50 and p99; agents online by health; runs started and the
// share that failed. The window — 1h, 24h, 7d, 30d — is kept in the
// address ("#dashboard?window=24h"). Every chart has a text alternative:
// its caption says the latest values, and a visually hidden table sums
// each series up over the window (latest, lowest, highest, mean, total);
// its series differ by dash and point as well as colour, and are named
// in its legend. It reads the samples every POLL_MS while shown.
"use strict";

(function () {
  const { $, unary, node, showError, signOut, refusal, sleep, parseTime, parseDuration } = board;
  const AGENTS = "/symphonix.board.v1.AgentService/";
  // WINDOWS are the windows offered, as the request's duration.
  const WINDOWS = { "1h": "3600s", "24h": "86400s", "7d": "604800s", "30d": "2592000s" };
  const SECONDS = { "1h": 3600, "24h": 86400, "7d": 604800, "30d": 2592000 };
  const DEFAULT_WINDOW = "1h";
  const POLL_MS = 30000; // the board samples once a minute
  const POLL_MAX_MS = 120000; // the longest wait between reads after failures
  const HEIGHT = 200; // each chart's plot, in CSS pixels

  // The series' looks: colour, dash and point size differ each from the
  // next, so that no series is told from another by colour alone.
  const LOOKS = [
    { color: "--accent", dash: [], points: 5 },
    { color: "--warn-fg", dash: [8, 4], points: 7 },
    { color: "--err-fg", dash: [2, 3], points: 4 },
    { color: "--muted", dash: [10, 3, 2, 3], points: 6 },
  ];

  const num = (v) => Number(v) || 0;
  const ms = (d) => {
    const v = parseDuration(d);
    return Number.isFinite(v) ? v : 0;
  };

  // CHARTS are the charts: each series reads a value from a sample (null
  // for none), counts says whether its values add up (a total is shown),
  // and caption words the latest values.
  const CHARTS = [
    {
      id: "online", title: "Agents online",
      series: [{ label: "online", value: (s) => num(s.agentsOnline), counts: false }],
      caption: (l) => "Agents online now: " + fmt(num(l.agentsOnline)) + ".",
    },
    {
      id: "pending", title: "Approvals pending",
      series: [{ label: "pending", value: (s) => num(s.approvalsPending), counts: false }],
      caption: (l) => "Approvals pending now: " + fmt(num(l.approvalsPending)) + ".",
    },
    {
      id: "latency", title: "Decision latency", unit: "duration",
      series: [
        { label: "p50", value: (s) => (num(s.decisions) > 0 ? ms(s.decisionLatencyP50) : null), counts: false, unit: "duration" },
        { label: "p99", value: (s) => (num(s.decisions) > 0 ? ms(s.decisionLatencyP99) : null), counts: false, unit: "duration" },
        { label: "decisions", value: (s) => num(s.decisions), counts: true, hidden: true },
      ],
      caption: (l) => num(l.decisions) === 0 ? "Decisions in the latest minute: none." :
        "Decisions in the latest minute: " + fmt(num(l.decisions)) + ", p50 " + duration(ms(l.decisionLatencyP50)) +
        ", p99 " + duration(ms(l.decisionLatencyP99)) + ".",
    },
    {
      id: "health", title: "Agents online by health",
      series: [
        { label: "ok", value: (s) => num(s.healthOk), counts: false },
        { label: "degraded", value: (s) => num(s.healthDegraded), counts: false },
        { label: "unknown", value: (s) => num(s.healthUnknown), counts: false },
        { label: "none reported", value: (s) => num(s.healthNone), counts: false },
      ],
      caption: (l) => "Agents online by health now: ok " + fmt(num(l.healthOk)) + ", degraded " + fmt(num(l.healthDegraded)) +
        ", unknown " + fmt(num(l.healthUnknown)) + ", none reported " + fmt(num(l.healthNone)) + ".",
    },
    {
      id: "runs", title: "Runs",
      series: [
        { label: "started", value: (s) => num(s.runsStarted), counts: true },
        { label: "failed %", value: (s) => (num(s.runsEnded) > 0 ? Math.round(1000 * num(s.runsFailed) / num(s.runsEnded)) / 10 : null), counts: false, scale: "%" },
        { label: "ended", value: (s) => num(s.runsEnded), counts: true, hidden: true },
        { label: "failed", value: (s) => num(s.runsFailed), counts: true, hidden: true },
      ],
      caption: (l) => "Runs in the latest minute: " + fmt(num(l.runsStarted)) + " started, " + fmt(num(l.runsFailed)) + " of " +
        fmt(num(l.runsEnded)) + " ended failed.",
    },
  ];

  const ui = {
    view: $("dashboard"),
    form: $("dashboard-form"),
    window: $("dashboard-window"),
    status: $("dashboard-status"),
    error: $("dashboard-error"),
    empty: $("dashboard-empty"),
    charts: $("dashboard-charts"),
  };

  const nap = { wake: null }; // between two reads
  let controller = null; // aborts the read under way
  let shownWindow = ""; // the window the charts show, "" before the first read
  let drawn = []; // per chart: {fig, plot, caption, table, u}
  let range = [0, 0]; // the x range drawn, in seconds since the epoch

  function fmt(n) {
    return n.toLocaleString("en");
  }

  // duration words milliseconds: "850 ms", "20 s", "2 min 59 s", "3 h 5 min".
  function duration(v) {
    if (v < 1000) return Math.round(v) + " ms";
    const s = Math.round(v / 1000);
    if (s < 60) return s + " s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + " min" + (s % 60 ? " " + (s % 60) + " s" : "");
    const h = Math.floor(m / 60);
    return h + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
  }

  function value(v, unit) {
    if (v === null || v === undefined) return "—";
    return unit === "duration" ? duration(v) : fmt(Math.round(v * 10) / 10);
  }

  // windowOfHash is the window the address asks for, or the default.
  function windowOfHash() {
    const w = board.dashboardOfHash();
    return w && Object.prototype.hasOwnProperty.call(WINDOWS, w) ? w : DEFAULT_WINDOW;
  }

  function color(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#777";
  }

  function reset() {
    if (controller) controller.abort();
    controller = null;
    shownWindow = "";
    for (const d of drawn) if (d.u) d.u.destroy();
    drawn = [];
    last = null;
    ui.charts.replaceChildren();
    ui.empty.hidden = true;
    ui.status.textContent = "";
    showError(ui.error, "");
  }

  // figure builds a chart's figure: its title and caption, the plot, and
  // the hidden table.
  function figure(c) {
    const fig = node("figure", "chart card");
    fig.id = "dashboard-" + c.id;
    fig.dataset.chart = c.id;
    const cap = node("figcaption");
    const title = node("h3", "chart-title", c.title);
    title.id = "dashboard-" + c.id + "-title";
    const caption = node("p", "chart-latest");
    caption.id = "dashboard-" + c.id + "-caption";
    cap.append(title, caption);
    const plot = node("div", "chart-plot");
    plot.setAttribute("aria-hidden", "true"); // the caption and the table say what it draws
    // A table does not shrink to a box's width, so the box around it is
    // what is hidden.
    const hidden = node("div", "visually-hidden");
    const table = node("table");
    table.id = "dashboard-" + c.id + "-table";
    hidden.append(table);
    fig.append(cap, plot, hidden);
    fig.setAttribute("aria-labelledby", title.id);
    fig.setAttribute("aria-describedby", caption.id);
    return { fig, plot, caption, table, u: null };
  }

  function options(c, width) {
    const fg = color("--fg");
    const grid = color("--line");
    const series = [{}];
    let look = 0;
    for (const s of c.series) {
      if (s.hidden) continue;
      const l = LOOKS[look++ % LOOKS.length];
      series.push({
        label: s.label,
        scale: s.scale || "y",
        stroke: color(l.color),
        dash: l.dash,
        width: 2,
        spanGaps: false,
        points: { show: true, size: l.points, fill: color(l.color) },
        value: (u, v) => value(v, s.unit) + (s.scale === "%" && v !== null ? " %" : ""),
      });
    }
    const axisValues = c.unit === "duration" ? (u, vals) => vals.map((v) => duration(v)) : undefined;
    const axes = [
      { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
      { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, values: axisValues, size: c.unit === "duration" ? 70 : 50 },
    ];
    const scales = {
      x: { time: true, range: () => range },
      y: { range: (u, min, max) => [0, Math.max(1, max === null ? 1 : max * 1.1)] },
    };
    if (c.series.some((s) => s.scale === "%")) {
      scales["%"] = { range: [0, 100] };
      axes.push({ scale: "%", side: 1, stroke: fg, grid: { show: false }, values: (u, vals) => vals.map((v) => v + " %") });
    }
    return { width, height: HEIGHT, series, axes, scales, legend: { show: true }, cursor: { drag: { x: false, y: false } } };
  }

  // summary fills a chart's hidden table: each series over the window.
  function summary(d, c, samples, latest) {
    const head = node("thead");
    const hr = node("tr");
    for (const h of ["Series", "Latest", "Lowest", "Highest", "Mean", "Total"]) {
      const th = node("th", "", h);
      th.scope = "col";
      hr.append(th);
    }
    head.append(hr);
    const body = node("tbody");
    for (const s of c.series) {
      const vals = samples.map(s.value).filter((v) => v !== null);
      const tr = node("tr");
      tr.dataset.series = s.label;
      const th = node("th", "", s.label);
      th.scope = "row";
      const last = latest ? s.value(latest) : null;
      const total = vals.reduce((a, b) => a + b, 0);
      tr.append(th,
        node("td", "", value(last, s.unit)),
        node("td", "", vals.length ? value(Math.min(...vals), s.unit) : "—"),
        node("td", "", vals.length ? value(Math.max(...vals), s.unit) : "—"),
        node("td", "", vals.length ? value(total / vals.length, s.unit) : "—"),
        node("td", "", s.counts ? fmt(total) : "—"));
      body.append(tr);
    }
    const cap = node("caption", "", c.title + " over the window, from " + samples.length + " samples");
    d.table.replaceChildren(cap, head, body);
  }

  function width(d) {
    return Math.max(200, d.plot.clientWidth || ui.charts.clientWidth || 600);
  }

  let last = null; // what render drew last, {w, res}, to draw again in new colours

  // render draws the answer for window w.
  function render(w, res) {
    last = { w, res };
    const samples = (Array.isArray(res.samples) ? res.samples : []).filter((s) => s && Number.isFinite(parseTime(s.time)));
    const latest = res.latest && Number.isFinite(parseTime(res.latest.time)) ? res.latest : null;
    const hours = res.resolution === "FLEET_RESOLUTION_HOUR";
    const now = Date.now() / 1000;
    range = [now - SECONDS[w], now];
    ui.empty.hidden = samples.length > 0 || latest !== null;
    ui.status.textContent = samples.length + (hours ? " hourly" : " minute") + " samples" +
      (latest ? "; latest at " + new Date(parseTime(latest.time)).toLocaleTimeString("en", { hour: "2-digit", minute: "2-digit" }) : "");
    ui.view.dataset.resolution = hours ? "hour" : "minute";
    ui.view.dataset.window = w;
    if (drawn.length === 0) {
      drawn = CHARTS.map(figure);
      ui.charts.replaceChildren(...drawn.map((d) => d.fig));
    }
    const xs = samples.map((s) => parseTime(s.time) / 1000);
    CHARTS.forEach((c, i) => {
      const d = drawn[i];
      d.caption.textContent = latest ? c.caption(latest) : "No sample of the last 10 minutes.";
      summary(d, c, samples, latest);
      const data = [xs];
      for (const s of c.series) if (!s.hidden) data.push(samples.map(s.value));
      if (d.u === null) {
        d.u = new uPlot(options(c, width(d)), data, d.plot);
      } else {
        d.u.setData(data);
      }
      d.fig.dataset.points = String(xs.length);
    });
  }

  // poll reads the window's samples every POLL_MS while the view is shown,
  // until the generation changes, waiting longer after failures.
  async function poll(gen, cred) {
    let failures = 0;
    while (board.current(gen)) {
      if (ui.view.hidden) {
        await sleep(POLL_MAX_MS, nap); // shown wakes it
        continue;
      }
      const w = windowOfHash();
      ui.window.value = w;
      const ctl = new AbortController();
      controller = ctl;
      try {
        const res = await unary(cred, AGENTS + "GetFleetHistory", { window: WINDOWS[w] }, ctl.signal);
        if (!board.current(gen)) return;
        if (w === windowOfHash()) {
          render(w, res || {});
          shownWindow = w;
        }
        failures = 0;
        showError(ui.error, "");
      } catch (e) {
        if (!board.current(gen)) return;
        if (e.name !== "AbortError") {
          if (e.code === "unauthenticated") {
            signOut(refusal(e));
            return;
          }
          failures++;
          showError(ui.error, "Could not read the fleet's samples (" + e.code + "): " + e.message + ". Trying again.");
        }
      }
      if (!board.current(gen)) return;
      ctl.abort();
      if (windowOfHash() !== shownWindow && failures === 0) continue; // the window changed during the read
      await sleep(failures === 0 ? POLL_MS : Math.min(POLL_MAX_MS, POLL_MS * Math.pow(2, failures)), nap);
    }
  }

  ui.window.addEventListener("change", () => {
    // The address changes; hashchange shows the view again, which reads.
    location.hash = board.dashboardHref(ui.window.value);
  });
  ui.form.addEventListener("submit", (e) => e.preventDefault());
  // The charts' colours are read from the page's scheme when drawn: when
  // the system turns light or dark, they are drawn again.
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => {
    for (const d of drawn) {
      if (d.u) d.u.destroy();
      d.u = null;
    }
    if (last && drawn.length > 0) render(last.w, last.res);
  });
  window.addEventListener("resize", () => {
    for (const d of drawn) if (d.u) d.u.setSize({ width: width(d), height: HEIGHT });
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
      if (view !== "dashboard") return;
      ui.window.value = windowOfHash();
      if (windowOfHash() !== shownWindow && controller) controller.abort();
      if (nap.wake) nap.wake();
    },
  });
})();
