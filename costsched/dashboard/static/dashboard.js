// costsched dashboard: draws the charts of the page from their JSON blocks, and keeps the
// page's live part current: the server says when the store changed (server-sent events),
// and the part is fetched again and swapped in, without a reload.
"use strict";

const PALETTE = ["#2563eb", "#f59e0b", "#10b981", "#ef4444", "#8b5cf6", "#0891b2",
                 "#db2777", "#65a30d"];
const charts = [];

function color(i) { return PALETTE[i % PALETTE.length]; }

// Money as costsched.amounts writes it: cents, or two significant digits under a cent;
// amounts read together (an axis) at the one precision the smallest needs, at most 4.
function decimals(values, most = 4) {
  let need = 2;
  for (const v of values) {
    const size = Number(Math.abs(v).toPrecision(2));
    if (Number.isFinite(size) && size >= 1e-6 && size < 0.01) {
      need = Math.max(need, -Math.floor(Math.log10(size)) + 1);
    }
  }
  return Math.min(need, most);
}

function usd(v, places) {
  if (v === null || v === undefined || !Number.isFinite(v)) { return "-"; }
  const size = Math.abs(v) < 1e-6 ? 0 : Math.abs(v);
  const p = places === undefined ? decimals([size], 6) : places;
  return (v < 0 && size ? "-$" : "$") + size.toLocaleString("en-US",
    {minimumFractionDigits: p, maximumFractionDigits: p});
}

function day(ms) {
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:` +
    pad(d.getUTCMinutes());
}

function clock(ms) {  // to the second: the ticks of a span under a few minutes
  return new Date(ms).toISOString().slice(11, 19);
}

function date(ms) {
  return new Date(ms).toISOString().slice(0, 10);
}

// Epoch milliseconds on a linear axis: ticks a whole step apart (seconds, minutes, hours
// or days, at most MAX_TICKS of them), written as UTC dates when the step is a day or more,
// as dates and times when it is a minute or more, else as times to the second, so that no
// two ticks read alike (a placement of 20 s gets 06:35:10 and 06:35:30, not 06:35 twice).
const SECOND = 1e3, MINUTE = 60e3, HOUR = 3600e3, DAY = 86400e3, MAX_TICKS = 8;
const STEPS = [SECOND, 5 * SECOND, 10 * SECOND, 30 * SECOND, MINUTE, 5 * MINUTE,
               15 * MINUTE, 30 * MINUTE, HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY,
               7 * DAY, 14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];
function timeAxis(from, to) {
  const span = Math.max(to - from, SECOND);
  const step = STEPS.find((s) => span / s <= MAX_TICKS) || STEPS[STEPS.length - 1];
  const label = (v) => (step >= DAY ? date(v) : step >= MINUTE ? day(v) : clock(v));
  return {type: "linear", min: from, max: to, beginAtZero: false,
          afterBuildTicks: (axis) => {
            const ticks = [];
            for (let v = Math.ceil(from / step) * step; v <= to; v += step) {
              ticks.push({value: v});
            }
            axis.ticks = ticks.length >= 2 ? ticks : to - from >= SECOND ?
              [{value: from}, {value: to}] : [{value: from}];
          },
          ticks: {callback: label, maxRotation: 0, autoSkipPadding: 16}};
}
const money = {ticks: {callback: (v, i, ticks) => usd(v, decimals(ticks.map((t) => t.value)))},
               beginAtZero: true};
const base = {responsive: true, maintainAspectRatio: false, animation: false};

// An offering's name, on two lines where the page is narrow (a phone): "aws us-east-1a" over
// "p3.2xlarge spot".
function offeringLabel(value) {
  const label = this.getLabelForValue(value);
  const cut = label.indexOf(" ", label.indexOf(" ") + 1);
  return window.innerWidth < 700 && cut > 0 ? [label.slice(0, cut), label.slice(cut + 1)] : label;
}

// Bars side by side whose amounts differ this many times or more (a $900 budget beside
// $0.02 spent) stand on a logarithmic axis: on a linear one the small ones would not show.
const LOG_SPREAD = 20;
// A tick of a logarithmic money axis (a budget's scale) with the fewest decimals that
// write it, as a budget the user set reads (costsched.amounts.given), whole dollars alone
// on an axis ('$10', '$1,000'): '$0.50', '$0.01', '$0.001', never '$10.0000'.
function givenUsd(v) {
  if (v >= 1 && Math.abs(v - Math.round(v)) < 1e-9 * v) { return usd(Math.round(v), 0); }
  let places = 2;
  while (places < 8 && Math.abs(Number(v.toFixed(places)) - v) > 1e-12) { places += 1; }
  return usd(v, places);
}
// Its ticks: 1, 2 and 5 times each power of ten where a decade is tall enough for three
// labels a line apart and more, else 1 alone of each decade (or of every second, third...
// decade), so that no two labels overlap ($10 over $5). The axis reaches from a labelled
// tick below its smallest bar to one at or above its tallest, so that every bar reads
// against labels on both sides ($3.23 under a '$5', never above the highest '$1'), and the
// smallest bar has a height: a bar stands on the axis's lowest value, so a $0.001 bar on
// an axis starting at '$0.001' would not show.
const TICK_ROOM = 2;  // the least room between two ticks, in lines of tick text
const LOG_TOLERANCE = 1e-9;  // a bar of $1.000000001 stands at the '$1' tick
function tickValues(lo, hi, steps, every) {
  const values = [];
  const top = Math.ceil(Math.log10(hi * (1 - LOG_TOLERANCE)));
  for (let e = top - every * (Math.ceil((top - Math.floor(Math.log10(lo))) / every) + 1);
       e <= top; e += 1) {
    if ((top - e) % every) { continue; }
    for (const m of steps) { values.push(Number((m * 10 ** e).toPrecision(1))); }
  }
  // The nearest below the smallest, the nearest at or above the largest, and those
  // between.
  const below = values.filter((v) => v < lo * (1 - LOG_TOLERANCE));
  const above = values.filter((v) => v >= hi * (1 - LOG_TOLERANCE));
  return values.filter((v) => v >= below[below.length - 1] && v <= above[0]);
}
function decadeTicks(axis) {
  const chart = axis.chart;
  const shown = chart.data.datasets.filter((d, i) => chart.isDatasetVisible(i))
    .flatMap((d) => d.data).filter((v) => v > 0);
  const lo = Math.min(...shown), hi = Math.max(...shown);
  if (!(lo > 0 && hi >= lo)) { return; }
  const room = TICK_ROOM * (Chart.defaults.font.size || 12);
  let steps = [1, 2, 5], every = 1, values = tickValues(lo, hi, steps, every);
  for (let tries = 0; tries < 8; tries += 1) {
    const perDecade = axis.height / Math.log10(values[values.length - 1] / values[0]);
    const fits = steps.length > 1 ? Math.log10(2) * perDecade >= room
      : every * perDecade >= room;
    if (fits) { break; }
    if (steps.length > 1) { steps = [1]; } else { every += 1; }
    values = tickValues(lo, hi, steps, every);
  }
  if (values.length < 2) { return; }
  axis.min = values[0];
  axis.max = values[values.length - 1];
  axis.ticks = values.map((value) => ({value}));
}
function moneyAxis(series) {
  const positive = series.flatMap((s) => s.values).filter((v) => v > 0);
  if (!positive.length || Math.max(...positive) / Math.min(...positive) < LOG_SPREAD) {
    return money;
  }
  return {type: "logarithmic", title: {display: true, text: "USD, logarithmic scale"},
          afterBuildTicks: decadeTicks, ticks: {callback: givenUsd, autoSkip: false}};
}

const KINDS = {
  bars(data) {
    return {type: "bar", data: {labels: data.labels, datasets: data.series.map((s, i) => (
      {label: s.label, data: s.values, backgroundColor: color(i)}))},
      options: {...base, scales: {y: moneyAxis(data.series)},
        plugins: {tooltip: {callbacks: {label: (c) => `${c.dataset.label}: ${usd(c.raw)}`}}}}};
  },
  stacked(data) {
    const chart = KINDS.bars(data);
    chart.options.scales = {x: {stacked: true}, y: {...money, stacked: true}};
    return chart;
  },
  timeline(data) {
    const labels = [...new Set(data.bars.map((b) => b.label))];
    return {type: "bar", data: {labels, datasets: [{label: "placement",
      data: data.bars.map((b) => ({x: [b.from, b.to], y: b.label, reason: b.reason,
                                   usd: b.usd})),
      backgroundColor: data.bars.map((b) => color(labels.indexOf(b.label))),
      borderSkipped: false, barPercentage: 0.6}]},
      options: {...base, indexAxis: "y",
        scales: {x: timeAxis(Math.min(...data.bars.map((b) => b.from)),
                             Math.max(...data.bars.map((b) => b.to))),
                 y: {ticks: {callback: offeringLabel}}},
        plugins: {legend: {display: false}, tooltip: {callbacks: {label: (c) =>
          `${c.raw.reason}: ${day(c.raw.x[0])} to ${day(c.raw.x[1])} UTC, ${usd(c.raw.usd)}`}}}}};
  },
  history(data) {
    const xs = data.series.flatMap((s) => s.points.map((p) => p[0]));
    return {type: "line", data: {datasets: data.series.map((s, i) => ({label: s.label,
      data: s.points.map((p) => ({x: p[0], y: p[1]})), stepped: "before",
      borderColor: color(i), backgroundColor: color(i), pointRadius: 0, borderWidth: 2}))},
      options: {...base, parsing: false,
        scales: {x: timeAxis(Math.min(...xs), Math.max(...xs)), y: {...money,
        beginAtZero: false}}, plugins: {tooltip: {callbacks: {
          title: (items) => day(items[0].parsed.x) + " UTC",
          label: (c) => `${c.dataset.label}: ${usd(c.parsed.y, 4)}/h`}}}}};
  },
};

// Whether a chart's data has nothing to draw: then the chart says so instead.
const EMPTY = {
  bars: (d) => !d.labels.length || d.series.every((s) => s.values.every((v) => !v)),
  stacked: (d) => EMPTY.bars(d),
  timeline: (d) => !d.bars.length,
  history: (d) => d.series.every((s) => !s.points.length),
};

function draw(root) {
  while (charts.length) { charts.pop().destroy(); }
  for (const canvas of root.querySelectorAll("canvas[data-chart]")) {
    const source = document.getElementById(canvas.dataset.source);
    const kind = KINDS[canvas.dataset.chart];
    if (!source || !kind || typeof Chart === "undefined") { continue; }
    const data = JSON.parse(source.textContent);
    if (EMPTY[canvas.dataset.chart](data)) {
      const note = document.createElement("p");
      note.className = "empty chart-empty";
      note.textContent = "No data to chart " + (canvas.dataset.empty || "here") + ".";
      canvas.replaceWith(note);
      continue;
    }
    const chart = new Chart(canvas, kind(data));
    charts.push(chart);
    canvas.dataset.drawn = String(chart.data.datasets.length);
  }
}

function fragmentUrl() {
  const url = new URL(window.location.href);
  url.searchParams.set("fragment", "1");
  return url;
}

let fetching = null;

function say(text) {
  const status = document.getElementById("live-status");
  if (status) { status.textContent = text; }
}

async function refresh(version) {
  const live = document.getElementById("live");
  const response = await fetch(fragmentUrl(), {headers: {accept: "text/html"},
                                               credentials: "same-origin"});
  if (!response.ok) { say("update failed"); return; }
  const open = [...live.querySelectorAll("details[open]")].map((d) => d.id);
  live.innerHTML = await response.text();
  for (const id of open) { const d = document.getElementById(id); if (d) { d.open = true; } }
  live.dataset.version = version;
  draw(live);
  say("updated " + new Date().toLocaleTimeString());
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

function listen() {
  const live = document.getElementById("live");
  if (!live || live.dataset.live !== "1" || !window.EventSource) { return; }
  const events = new EventSource("/api/events");
  events.addEventListener("change", (event) => {
    const version = JSON.parse(event.data);
    say("live");
    if (version === live.dataset.version) { return; }
    // One fetch at a time; a change during a fetch is fetched after it.
    fetching = (fetching || Promise.resolve()).then(() => refresh(version))
      .catch(() => say("update failed"));
  });
  events.addEventListener("error", () => say("reconnecting"));
  // A browser opens few connections to one server at a time (six over HTTP/1.1): a page
  // left, or kept in the back/forward cache, must not keep its stream open, or after a
  // few pages the next one waits for a free connection.
  window.addEventListener("pagehide", () => events.close(), {once: true});
}

draw(document);
listen();
// Back from the back/forward cache: its stream was closed on leaving; listen again.
window.addEventListener("pageshow", (event) => { if (event.persisted) { listen(); } });
