// The four charts, drawn with Chart.js (vendored from npm into vendor/, loaded only after the
// main numbers are on screen). Each chart also has its numbers as a table (for screen readers
// and for copying), and follows the colour theme. Nothing animates: a chart is drawn anew for
// every view (four per change), and a 250 ms tween redrew its canvas on every animation frame,
// so a pick made within a second of the last one waited behind those frames (Chart.js's
// animation frame was in 19 of 20 of bench_page's recompute windows, ~6 ms of main thread each,
// plus the frames' paint and commit).

import { el } from "./dom.js";
import * as fmt from "./format.js";
import { FIT_MARK } from "./pickers.js";

let library = null;

/** Load Chart.js once (a classic script: its UMD build sets window.Chart). */
export function loadChartLibrary(url) {
  library ??= new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = url;
    script.addEventListener("load", () => (window.Chart ? resolve(window.Chart) : reject(new Error("Chart.js did not load"))));
    script.addEventListener("error", () => reject(new Error(`could not load ${url}`)));
    document.head.append(script);
  });
  return library;
}

function palette() {
  const style = getComputedStyle(document.documentElement);
  const v = (name) => style.getPropertyValue(name).trim();
  return { accent: v("--accent"), accent2: v("--accent-2"), good: v("--good"), warn: v("--warn"), bad: v("--bad"), ink: v("--ink"), muted: v("--muted"), line: v("--line"), panel: v("--panel") };
}

const FIT_COLOR = (c, fit) => ({ fits: c.good, offload: c.warn, no: c.bad })[fit] || c.muted;

function table(headers, rows) {
  return el("table", { class: "data" }, el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell, i) => (i === 0 ? el("th", { scope: "row" }, cell) : el("td", {}, cell)))))));
}

function fitText(point) {
  return point.ok ? FIT_MARK[point.fit] : point.error;
}

/** Per kind: the Chart.js config for a sweep, and its table. */
const KINDS = {
  context(data, c) {
    const points = data.points.filter((p) => p.ok);
    return {
      config: {
        type: "line",
        data: {
          labels: points.map((p) => fmt.contextLength(p.context)),
          datasets: [
            { label: "Decode tok/s", data: points.map((p) => p.decode_tps), borderColor: c.accent, backgroundColor: c.accent, yAxisID: "y", pointRadius: points.map((p) => (p.fit === "no" ? 5 : 3)), pointStyle: points.map((p) => (p.fit === "no" ? "crossRot" : "circle")), tension: 0.25 },
            { label: "First token (s) for a prompt this long", data: points.map((p) => p.ttft_s), borderColor: c.accent2, backgroundColor: c.accent2, yAxisID: "y2", borderDash: [6, 4], pointRadius: 2, tension: 0.25 },
          ],
        },
        options: {
          scales: {
            x: { title: { display: true, text: "tokens in context" } },
            y: { type: "linear", beginAtZero: true, title: { display: true, text: "decode tok/s" } },
            y2: { type: "logarithmic", position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "seconds to first token" }, ticks: { callback: (v) => fmt.tick(v) } },
          },
        },
      },
      table: table(["Context", "Decode tok/s", "First token", "Memory"], data.points.map((p) => [fmt.tokens(p.context), p.ok ? fmt.rate(p.decode_tps) : "—", p.ok ? fmt.duration(p.ttft_s) : "—", fitText(p)])),
    };
  },
  models(data, c) {
    return barChart(data.points, c, (p) => `${p.name} ${p.quant}`, "decode tok/s on this hardware", ["Model", "Weights", "Decode tok/s", "Memory"], (p) => [p.name, p.quant, p.ok ? fmt.rate(p.decode_tps) : "—", fitText(p)]);
  },
  hardware(data, c) {
    return barChart(data.points, c, (p) => shortName(p.name), "decode tok/s of this model", ["Device", "Decode tok/s", "First token", "Memory"], (p) => [p.name, p.ok ? fmt.rate(p.decode_tps) : "—", p.ok ? fmt.duration(p.ttft_s) : "—", fitText(p)]);
  },
  batch(data, c) {
    const points = data.points.filter((p) => p.ok);
    return {
      config: {
        type: "line",
        data: {
          labels: points.map((p) => fmt.count(p.batch)),
          datasets: [
            { label: "Each request, tok/s", data: points.map((p) => p.decode_tps), borderColor: c.accent, backgroundColor: c.accent, tension: 0.25, pointStyle: points.map((p) => (p.fit === "no" ? "crossRot" : "circle")) },
            { label: "All requests together, tok/s", data: points.map((p) => p.aggregate_tps), borderColor: c.good, backgroundColor: c.good, tension: 0.25, pointStyle: points.map((p) => (p.fit === "no" ? "crossRot" : "circle")) },
          ],
        },
        options: {
          scales: {
            x: { title: { display: true, text: "concurrent requests" } },
            y: { type: "logarithmic", title: { display: true, text: "tok/s" }, ticks: { callback: (v) => fmt.tick(v) } },
          },
        },
      },
      table: table(["Requests", "Each, tok/s", "Together, tok/s", "Memory"], data.points.map((p) => [fmt.count(p.batch), p.ok ? fmt.rate(p.decode_tps) : "—", p.ok ? fmt.rate(p.aggregate_tps) : "—", fitText(p)])),
    };
  },
};

/** A device name short enough for a chart axis. */
function shortName(name) {
  const short = name.replace(/^(NVIDIA|AMD|Intel|Apple) /, "").replace(/^(GeForce|Radeon) /, "").replace(/ Workstation Edition$/, "").replace(/-core GPU/, "c");
  return short.length > 24 ? `${short.slice(0, 23)}…` : short;
}

function barChart(rows, c, labelOf, axis, headers, rowOf) {
  const sorted = [...rows].sort((a, b) => (b.ok && b.fit !== "no" ? b.decode_tps : 0) - (a.ok && a.fit !== "no" ? a.decode_tps : 0));
  return {
    config: {
      type: "bar",
      data: {
        labels: sorted.map((p) => (p.current ? `▶ ${labelOf(p)}` : labelOf(p))),
        datasets: [{
          label: axis,
          data: sorted.map((p) => (p.ok && p.fit !== "no" ? p.decode_tps : 0)),
          backgroundColor: sorted.map((p) => (p.current ? c.accent : FIT_COLOR(c, p.ok ? p.fit : "no"))),
          borderRadius: 4,
        }],
      },
      options: {
        indexAxis: "y",
        scales: { x: { beginAtZero: true, title: { display: true, text: axis } }, y: { ticks: { autoSkip: false, font: { size: 11 } } } },
        plugins: { legend: { display: false }, tooltip: { callbacks: { afterLabel: (item) => `memory: ${fitText(sorted[item.dataIndex])}` } } },
      },
    },
    table: table(headers, sorted.map(rowOf)),
  };
}

export class Charts {
  constructor(figures, chartURL) {
    this.figures = new Map(figures.map((figure) => [figure.dataset.kind, figure]));
    this.chartURL = chartURL;
    this.charts = new Map();
    this.drawQueue = Promise.resolve();
    this.waiting = 0;
    this.data = new Map();
    document.addEventListener("tokfeel:theme", () => this.redrawAll());
  }

  get kinds() {
    return [...this.figures.keys()];
  }

  pending(kind) {
    this.figures.get(kind).dataset.state = "loading";
    this.data.delete(kind); // a draw still queued for the previous view finds nothing to draw
  }

  /** No chart is waiting to be drawn (part of the page's "settled"). */
  get idle() {
    return this.waiting === 0;
  }

  async show(kind, data) {
    this.data.set(kind, data);
    this.waiting += 1;
    try {
      await this.queueDraw(kind, data);
    } finally {
      this.waiting -= 1;
    }
  }

  async queueDraw(kind, data) {
    const Chart = await loadChartLibrary(this.chartURL);
    // One chart per task: the sweeps that arrived while Chart.js loaded would otherwise all be
    // drawn in the script's load event, one main-thread task of ~0.1 CPU s (about 1 s of wall
    // time on a busy 2-core machine) in which the page answers no input.
    const drawn = this.drawQueue.then(() => new Promise((resolve) => setTimeout(resolve, 0))).then(() => this.data.get(kind) === data && this.draw(Chart, kind));
    this.drawQueue = drawn.catch(() => {}); // a chart that failed does not hold up the next
    return drawn;
  }

  draw(Chart, kind) {
    const figure = this.figures.get(kind);
    const data = this.data.get(kind);
    if (!data) return;
    const c = palette();
    const { config, table: dataTable } = KINDS[kind](data, c);
    Chart.defaults.color = c.muted;
    Chart.defaults.borderColor = c.line;
    Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
    config.options = {
      ...config.options,
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      plugins: { legend: { labels: { boxWidth: 12, color: c.ink } }, ...config.options.plugins },
    };
    this.charts.get(kind)?.destroy();
    this.charts.set(kind, new Chart(figure.querySelector("canvas"), config));
    figure.querySelector(".table-wrap").replaceChildren(dataTable);
    figure.dataset.state = "ready";
    figure.dataset.points = String(data.points.length);
  }

  redrawAll() {
    if (!window.Chart) return;
    for (const kind of this.data.keys()) this.draw(window.Chart, kind);
  }

  failed(kind, message) {
    const figure = this.figures.get(kind);
    figure.dataset.state = "error";
    figure.querySelector(".table-wrap").replaceChildren(el("p", { class: "field-error" }, message));
  }
}
