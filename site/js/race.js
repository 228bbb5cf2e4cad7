// The race: up to four set-ups stream the same answer side by side, each after its own time to
// first token and at its own rate, and show when they finish. Lane 1 is the set-up chosen above;
// the others live in the URL as lane1..lane3 ("hw*model*quant*engine*spec", empty = same).

import { el, announce, reducedMotion } from "./dom.js";
import * as fmt from "./format.js";
import { LANE_PARTS, LANE_SEPARATOR, laneView } from "./schema.js";
import { play } from "./stream.js";

export const LANE_KEYS = ["lane1", "lane2", "lane3"];
/** Devices offered first when a lane is added, so a new lane differs from the ones there. */
const SUGGESTED = ["rtx-3090", "apple-m4-max-40c-128gb", "rtx-5090", "ryzen-ai-max-plus-395-128gb", "rtx-4090", "dgx-spark"];
const STATE_TEXT = { idle: "ready", prefill: "processing the prompt…", thinking: "thinking…", streaming: "streaming", done: "done" };

function selectFor(label, options, value, onChange) {
  const select = el("select", { "aria-label": label }, options);
  select.value = value;
  select.addEventListener("change", () => onChange(select.value));
  return el("label", { class: "lane-field" }, el("span", {}, label), select);
}

export class Race {
  /** app: {jobs, catalog, answers, getView(), setLanes(lanes), onError} */
  constructor({ container, addButton, runButton }, app) {
    Object.assign(this, { container, addButton, runButton, app });
    this.results = new Map(); // lane index -> view reply
    this.players = [];
    this.seq = 0;
    addButton.addEventListener("click", () => this.addLane());
    runButton.addEventListener("click", () => this.run());
  }

  lanes() {
    const view = this.app.getView();
    return LANE_KEYS.map((key) => view[key]).filter(Boolean);
  }

  addLane() {
    const lanes = this.lanes();
    if (lanes.length >= LANE_KEYS.length) return;
    const view = this.app.getView();
    const used = new Set([view.hw, ...lanes.map((l) => l.split(LANE_SEPARATOR)[0])]);
    const hw = SUGGESTED.find((id) => !used.has(id)) || view.hw;
    this.app.setLanes([...lanes, `${hw}${LANE_SEPARATOR.repeat(LANE_PARTS.length - 1)}`]);
    announce(`Lane ${lanes.length + 2} added.`);
    requestAnimationFrame(() => this.container.querySelector(`[data-lane="${lanes.length + 1}"] select`)?.focus());
  }

  removeLane(index) {
    const lanes = this.lanes();
    lanes.splice(index - 1, 1);
    this.app.setLanes(lanes);
    announce(`Lane ${index + 1} removed.`);
    this.addButton.focus();
  }

  setPart(index, part, value) {
    const lanes = this.lanes();
    const parts = lanes[index - 1].split(LANE_SEPARATOR);
    while (parts.length < LANE_PARTS.length) parts.push("");
    parts[LANE_PARTS.indexOf(part)] = value;
    lanes[index - 1] = parts.join(LANE_SEPARATOR);
    this.app.setLanes(lanes);
  }

  /** Views of all lanes: the main one first. */
  views() {
    const main = this.app.getView();
    return [main, ...this.lanes().map((lane) => laneView(main, lane))];
  }

  /** Rebuild the lanes for the current view and compute each (background calls). */
  async update() {
    this.stop();
    const seq = ++this.seq;
    const views = this.views();
    this.render(views);
    this.addButton.disabled = views.length > LANE_KEYS.length;
    this.runButton.disabled = true;
    this.results.clear();
    for (let i = 0; i < views.length; i++) {
      let reply;
      try {
        reply = await this.app.jobs.later("view", views[i]);
      } catch (error) {
        if (seq === this.seq) this.showError(i, error.message);
        continue;
      }
      if (reply === null || seq !== this.seq) return;
      this.results.set(i, reply);
      this.showNumbers(i, reply);
    }
    this.runButton.disabled = this.results.size < 2;
  }

  laneElement(index) {
    return this.container.querySelector(`[data-lane="${index}"]`);
  }

  render(views) {
    const { catalog } = this.app;
    const hardwareOptions = () => groupOptions(catalog.hardware, (d) => d.family, (d) => d.id, (d) => d.name);
    const modelOptions = () => groupOptions(catalog.models, (m) => m.family, (m) => m.id, (m) => m.name);
    const quantOptions = () => catalog.quants.map((q) => el("option", { value: q.name }, q.name));
    const engineOptions = () => [el("option", { value: "" }, "usual engine"), ...catalog.engines.map((e) => el("option", { value: e.id }, e.name))];
    const specOptions = () => [el("option", { value: "off" }, "no speculation"), el("option", { value: "mtp" }, "MTP head"), el("optgroup", { label: "Draft model" }, catalog.models.filter((m) => m.params_b <= 8).map((m) => el("option", { value: m.id }, `draft: ${m.name}`)))];
    const lanes = views.map((view, index) => {
      const title = index === 0 ? "Your setup" : `Lane ${index + 1}`;
      const controls = index === 0
        ? el("p", { class: "lane-summary" }, "As chosen above.")
        : el(
            "div",
            { class: "lane-controls" },
            selectFor("Hardware", hardwareOptions(), view.hw, (v) => this.setPart(index, "hw", v)),
            selectFor("Model", modelOptions(), view.model, (v) => this.setPart(index, "model", v)),
            selectFor("Weights", quantOptions(), view.quant, (v) => this.setPart(index, "quant", v)),
            selectFor("Engine", engineOptions(), view.engine, (v) => this.setPart(index, "engine", v)),
            selectFor("Speculative", specOptions(), view.spec === "draft" ? view.draft : view.spec, (v) => this.setPart(index, "spec", v)),
          );
      return el(
        "article",
        { class: "lane", "data-testid": "lane", dataset: { lane: index }, "aria-label": title },
        el("header", { class: "lane-head" }, el("h3", {}, title), index === 0 ? null : el("button", { type: "button", class: "chip remove", "aria-label": `Remove lane ${index + 1}`, onclick: () => this.removeLane(index) }, "Remove")),
        controls,
        el("p", { class: "lane-name" }, ""),
        el("div", { class: "lane-metrics" },
          el("span", {}, el("b", { "data-testid": "decode-tps", "data-value": "" }, "…"), " tok/s"),
          el("span", {}, el("b", { "data-testid": "ttft", "data-value": "" }, "…"), " to first token"),
          el("span", {}, "done in ", el("b", { "data-testid": "finish", "data-value": "" }, "…"))),
        el("div", { class: "lane-progress", "aria-hidden": "true" }, el("span", {})),
        el("div", { class: "stream lane-stream", "data-testid": "stream", dataset: { state: "idle", tokens: "0" }, tabindex: "0", role: "region", "aria-label": `${title}: the streamed answer` }, el("div", { class: "stream-status" }, STATE_TEXT.idle), el("div", { class: "stream-text" })),
      );
    });
    if (views.length === 1) lanes.push(el("p", { class: "lane-empty" }, "Add a lane to race another set-up against yours."));
    this.container.replaceChildren(...lanes);
  }

  showNumbers(index, reply) {
    const lane = this.laneElement(index);
    if (!lane) return;
    const e = reply.estimate;
    const set = (id, value, text) => {
      const node = lane.querySelector(`[data-testid="${id}"]`);
      node.dataset.value = String(value);
      node.textContent = text;
    };
    set("decode-tps", e.decode_tps, fmt.rate(e.decode_tps));
    set("ttft", e.ttft_s, fmt.duration(e.ttft_s));
    const finish = e.schedule.arrival_s.at(-1);
    set("finish", finish, fmt.duration(finish));
    lane.querySelector(".lane-name").textContent = `${e.hardware.name}${e.hardware.gpus > 1 ? ` ×${e.hardware.gpus}` : ""} · ${e.model.name} ${e.quant} · ${e.engine}${e.speculative ? ` · ${e.speculative.method === "mtp" ? "MTP" : "draft"}` : ""} · ${e.fit === "fits" ? "fits" : e.fit === "offload" ? "offloads" : "won't run"}`;
    lane.dataset.fit = e.fit;
  }

  showError(index, message) {
    const lane = this.laneElement(index);
    if (!lane) return;
    lane.querySelector(".lane-name").textContent = message;
    lane.dataset.fit = "error";
  }

  stop() {
    for (const player of this.players) player.stop();
    this.players = [];
    for (const lane of this.container.querySelectorAll(".lane")) {
      lane.classList.remove("winner");
      lane.querySelector(".lane-progress span").style.width = "0";
    }
  }

  run() {
    this.stop();
    const answer = this.app.answers[this.app.getView().answer];
    const finishes = [...this.results.entries()].map(([i, r]) => [i, r.estimate.schedule.arrival_s.at(-1)]);
    const winner = finishes.reduce((best, item) => (item[1] < best[1] ? item : best), finishes[0]);
    const stepMs = reducedMotion() ? 500 : 0;
    let running = finishes.length;
    for (const [index, reply] of this.results) {
      const lane = this.laneElement(index);
      const schedule = reply.estimate.schedule;
      const status = lane.querySelector(".stream-status");
      const bar = lane.querySelector(".lane-progress span");
      const end = schedule.arrival_s.at(-1);
      const total = schedule.arrival_s.length;
      this.players.push(play({
        element: lane.querySelector('[data-testid="stream"]'),
        textElement: lane.querySelector(".stream-text"),
        tokens: answer.tokens,
        arrivals: schedule.arrival_s,
        hidden: schedule.reasoning_tokens,
        stepMs,
        onFrame: ({ elapsed, generated, state }) => {
          status.textContent = state === "done" ? `done in ${fmt.duration(end)}` : `${STATE_TEXT[state]} ${fmt.duration(elapsed)}`;
          bar.style.width = `${(100 * generated) / total}%`;
        },
        onDone: () => {
          if (index === winner[0] && finishes.length > 1) lane.classList.add("winner");
          running -= 1;
          if (running === 0) announce(`Race over: lane ${winner[0] + 1} finished first, in ${fmt.duration(winner[1])}.`);
        },
      }));
    }
  }
}

function groupOptions(items, groupOf, valueOf, labelOf) {
  const groups = new Map();
  for (const item of items) {
    const name = groupOf(item);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(el("option", { value: valueOf(item) }, labelOf(item)));
  }
  return [...groups].map(([label, options]) => el("optgroup", { label }, options));
}
