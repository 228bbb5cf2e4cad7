// The race: up to four whole set-ups stream the same answer side by side, each after its own time
// to first token and at its own rate, and show in which order and how far apart they finish.
// Lane 1 is the set-up chosen above; the others live in the URL as lane1..lane3
// ("hw*model*quant*engine*spec*gpus", an empty part = as above). The engine (engine/page/lanes.py lane_view)
// turns a lane into its whole view, so a lane on a device that cannot be combined (a Mac) runs
// alone whatever the main set-up's GPU count. A lane that cannot load shows what it lacks, offers
// the nearest lane that runs, and does not stream.

import { el, announce, reducedMotion } from "./dom.js";
import * as fmt from "./format.js";
import { shortfall, offloadNote } from "./fit.js";
import { LANE_PARTS, LANE_SEPARATOR, laneView } from "./schema.js";
import { play } from "./stream.js";
import { loadedMarkdown, MarkdownView } from "./markdown.js";
import { referenceLane, showRatios, thisComputerLane } from "./reference.js";
import { viewFields } from "./data.js";

export const LANE_KEYS = ["lane1", "lane2", "lane3"];
/** Devices offered first when a lane is added, so a new lane differs from the ones there. */
const SUGGESTED = ["rtx-3090", "apple-m4-max-40c-128gb", "rtx-5090", "ryzen-ai-max-plus-395-128gb", "rtx-4090", "dgx-spark"];
/** GPU counts a lane offers: every count the view allows. */
const GPU_COUNTS = Array.from({ length: viewFields.gpus.max - viewFields.gpus.min + 1 }, (_, i) => viewFields.gpus.min + i);
/** View settings a lane can carry: a suggestion that changes only these applies to the lane. */
const LANE_PATCHABLE = { quant: "quant", gpus: "gpus", hw: "hw" };
const STATE_TEXT = { idle: "ready", prefill: "processing the prompt…", thinking: "thinking…", streaming: "streaming", done: "done" };

function selectFor(label, options, value, onChange, testid) {
  const select = el("select", { "aria-label": label, "data-testid": testid }, options);
  select.value = String(value);
  select.addEventListener("change", () => onChange(select.value));
  return el("label", { class: "lane-field" }, el("span", {}, label), select);
}

/** "2× RTX 3090": a lane's device as the finish line names it. */
function deviceName(e) {
  const name = e.hardware.name.replace(/^(NVIDIA GeForce|NVIDIA|AMD Radeon|AMD|Apple|Intel Arc|Intel) /, "");
  return `${e.hardware.gpus > 1 ? `${e.hardware.gpus}× ` : ""}${name}`;
}

export class Race {
  /** app: {jobs, catalog, answers, getView(), setLanes(lanes), onError} */
  constructor({ container, addButton, runButton, summary }, app) {
    Object.assign(this, { container, addButton, runButton, app });
    // The finish order sits above the lanes (made here when the page gives no element for it).
    this.summary = summary || container.insertAdjacentElement("beforebegin", el("div", { class: "race-summary", "data-testid": "race-order", "aria-live": "polite", hidden: true }));
    this.results = new Map(); // lane index -> view reply ({request, estimate, view, ...})
    this.players = [];
    this.seq = 0;
    this.devices = new Map(app.catalog.hardware.map((d) => [d.id, d]));
    addButton.addEventListener("click", () => this.addLane());
    // This computer (view field me) races as a lane of its own, one click away.
    this.thisButton = el("button", { type: "button", class: "chip", "data-testid": "add-this-computer", hidden: true, onclick: () => this.addThisComputer() }, "Race this computer");
    addButton.after(this.thisButton);
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
    // A new lane is one device of its own: it does not take the main set-up's GPU count.
    const parts = LANE_PARTS.map((part) => (part === "hw" ? hw : part === "gpus" ? "1" : ""));
    this.app.setLanes([...lanes, parts.join(LANE_SEPARATOR)]);
    announce(`Lane ${lanes.length + 2} added.`);
    requestAnimationFrame(() => this.container.querySelector(`[data-lane="${lanes.length + 1}"] select`)?.focus());
  }

  /** A lane running this computer's device with the main set-up's model. */
  addThisComputer() {
    const lanes = this.lanes();
    const { me } = this.app.getView();
    if (!me || lanes.length >= LANE_KEYS.length) return;
    this.app.setLanes([...lanes, referenceLane(me)]);
    announce(`This computer added as lane ${lanes.length + 2}.`);
  }

  removeLane(index) {
    const lanes = this.lanes();
    lanes.splice(index - 1, 1);
    this.app.setLanes(lanes);
    announce(`Lane ${index + 1} removed.`);
    this.addButton.focus();
  }

  /** Set some of lane `index`'s parts ({part: value}); a device that cannot be combined gets
   *  one unit, a new GPU keeps the count shown. */
  setParts(index, changes) {
    const lanes = this.lanes();
    const parts = lanes[index - 1].split(LANE_SEPARATOR);
    while (parts.length < LANE_PARTS.length) parts.push("");
    for (const [part, value] of Object.entries(changes)) parts[LANE_PARTS.indexOf(part)] = String(value);
    lanes[index - 1] = parts.join(LANE_SEPARATOR);
    this.app.setLanes(lanes);
  }

  setPart(index, part, value) {
    if (part === "hw" && this.devices.get(value)?.kind !== "gpu") this.setParts(index, { hw: value, gpus: "1" });
    else this.setParts(index, { [part]: value });
  }

  /** Views of all lanes as their text reads (the engine's lane_view is what runs): main first. */
  views() {
    const main = this.app.getView();
    return [main, ...this.lanes().map((lane) => laneView(main, lane))];
  }

  /** Rebuild the lanes for the current view and compute each (background calls). */
  async update() {
    this.stop();
    const seq = ++this.seq;
    const main = this.app.getView();
    const lanes = this.lanes();
    this.render(this.views());
    this.addButton.disabled = lanes.length >= LANE_KEYS.length;
    this.runButton.disabled = true;
    this.results.clear();
    this.showSummary();
    for (let i = 0; i <= lanes.length; i++) {
      let reply;
      try {
        reply = i === 0 ? await this.app.jobs.later("view", main) : await this.app.jobs.later("lane", { view: main, lane: lanes[i - 1] });
      } catch (error) {
        if (seq === this.seq) this.showError(i, error.message);
        continue;
      }
      if (reply === null || seq !== this.seq) return;
      this.results.set(i, { ...reply, view: reply.view || main });
      this.showNumbers(i, this.results.get(i));
      if (reply.estimate.fit === "no" && i > 0) this.offerRunnable(i, reply.view, seq);
    }
    this.runButton.disabled = this.runnable().length === 0 || lanes.length === 0;
    this.showSummary();
    await showRatios(this, main, seq);
  }

  /** Lanes that can load: [index, reply]. */
  runnable() {
    return [...this.results.entries()].filter(([, reply]) => reply.estimate.fit !== "no");
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
    const gpuOptions = () => GPU_COUNTS.map((n) => el("option", { value: String(n) }, n === 1 ? "1 device" : `${n} cards`));
    const own = thisComputerLane(views);
    const lanes = views.map((view, index) => {
      const title = index === own ? (index === 0 ? "Your setup: this computer" : `Lane ${index + 1}: this computer`) : index === 0 ? "Your setup" : `Lane ${index + 1}`;
      let controls = el("p", { class: "lane-summary" }, "As chosen above.");
      if (index > 0) {
        const gpus = selectFor("GPUs", gpuOptions(), view.gpus, (v) => this.setPart(index, "gpus", v), "lane-gpus");
        gpus.querySelector("select").disabled = this.devices.get(view.hw)?.kind !== "gpu";
        controls = el(
          "div",
          { class: "lane-controls" },
          selectFor("Hardware", hardwareOptions(), view.hw, (v) => this.setPart(index, "hw", v), "lane-hardware"),
          gpus,
          selectFor("Model", modelOptions(), view.model, (v) => this.setPart(index, "model", v), "lane-model"),
          selectFor("Weights", quantOptions(), view.quant, (v) => this.setPart(index, "quant", v), "lane-quant"),
          selectFor("Engine", engineOptions(), view.engine, (v) => this.setPart(index, "engine", v), "lane-engine"),
          selectFor("Speculative", specOptions(), view.spec === "draft" ? view.draft : view.spec, (v) => this.setPart(index, "spec", v), "lane-spec"),
        );
      }
      return el(
        "article",
        { class: "lane", "data-testid": "lane", dataset: { lane: index, thisComputer: String(index === own) }, "aria-label": title },
        el("header", { class: "lane-head" }, el("h3", {}, title), index === 0 ? null : el("button", { type: "button", class: "chip remove", "aria-label": `Remove lane ${index + 1}`, onclick: () => this.removeLane(index) }, "Remove")),
        controls,
        el("p", { class: "lane-name" }, ""),
        el("div", { class: "lane-fix", hidden: true }),
        el("div", { class: "lane-metrics" },
          el("span", { "data-testid": "lane-decode", "data-value": "" }, el("b", { "data-testid": "decode-tps", "data-value": "" }, "…"), " tok/s"),
          el("span", {}, el("b", { "data-testid": "ttft", "data-value": "" }, "…"), " to first token"),
          el("span", { class: "lane-visible", hidden: true }, "answer after ", el("b", {}, "")),
          el("span", {}, "done in ", el("b", { "data-testid": "finish", "data-value": "" }, "…")),
          el("span", { class: "lane-ratio", "data-testid": "lane-ratio", "data-value": "", hidden: true }),
          el("span", { class: "lane-measured", "data-testid": "lane-measured", "data-value": "", hidden: true })),
        el("div", { class: "lane-progress", "aria-hidden": "true" }, el("span", {})),
        el("div", { class: "stream lane-stream", "data-testid": "stream", dataset: { state: "idle", tokens: "0" }, tabindex: "0", role: "region", "aria-label": `${title}: the streamed answer` }, el("div", { class: "stream-status" }, STATE_TEXT.idle), el("div", { class: "stream-text" })),
      );
    });
    if (views.length === 1) lanes.push(el("p", { class: "lane-empty" }, "Add a lane to race another set-up against yours: another device, GPU count, model, weights or engine."));
    this.container.replaceChildren(...lanes);
  }

  showNumbers(index, reply) {
    // Lanes render Markdown like the main answer once the player has loaded the libraries.
    loadedMarkdown()?.then((render) => (this.renderMarkdown = render)).catch(() => {});
    const lane = this.laneElement(index);
    if (!lane) return;
    const e = reply.estimate;
    const runs = e.fit !== "no";
    const set = (id, value, text) => {
      const node = lane.querySelector(`[data-testid="${id}"]`);
      node.dataset.value = value === null ? "" : String(value);
      node.textContent = text;
    };
    // Won't run means won't run: no speed, no times, nothing to stream.
    set("decode-tps", runs ? e.decode_tps : null, runs ? fmt.rate(e.decode_tps) : "—");
    lane.querySelector('[data-testid="lane-decode"]').dataset.value = runs ? String(e.decode_tps) : "";
    set("ttft", runs ? e.ttft_s : null, runs ? fmt.duration(e.ttft_s) : "—");
    const finish = e.schedule.arrival_s.at(-1);
    set("finish", runs ? finish : null, runs ? fmt.duration(finish) : "—");
    const visible = lane.querySelector(".lane-visible");
    visible.hidden = !runs || !(e.visible_ttft_s > e.ttft_s);
    visible.querySelector("b").textContent = fmt.duration(e.visible_ttft_s);
    const gpus = lane.querySelector('[data-testid="lane-gpus"]');
    if (gpus && reply.view) {
      gpus.value = String(reply.view.gpus);
      gpus.disabled = this.devices.get(reply.view.hw)?.kind !== "gpu";
    }
    const fit = e.fit === "fits" ? "fits" : e.fit === "offload" ? `offloads ${offloadNote(e.memory)}` : `won't run: ${shortfall(e.memory)}`;
    lane.querySelector(".lane-name").textContent = `${e.hardware.name}${e.hardware.gpus > 1 ? ` ×${e.hardware.gpus}` : ""} · ${e.model.name} ${e.quant} · ${e.engine}${e.speculative ? ` · ${e.speculative.method === "mtp" ? "MTP" : "draft"}` : ""} · ${fit}`;
    lane.querySelector(".stream-status").textContent = runs ? STATE_TEXT.idle : "Won't run: nothing to stream.";
    lane.dataset.fit = e.fit;
  }

  /** A lane that cannot load: the nearest set-up the lane itself can express (other weights, more
   *  cards, a bigger variant), one click away. */
  async offerRunnable(index, view, seq) {
    let advice;
    try {
      advice = await this.app.jobs.later("advice", { view });
    } catch {
      return;
    }
    if (!advice || seq !== this.seq) return;
    const fix = this.laneElement(index)?.querySelector(".lane-fix");
    const found = advice.suggestions.find((s) => Object.keys(s.patch).every((key) => key in LANE_PATCHABLE));
    if (!fix || !found) return;
    fix.hidden = false;
    fix.replaceChildren(
      el("span", {}, `Runs instead: ${found.text} (${fmt.rate(found.decode_tps)} tok/s). `),
      el("button", { type: "button", class: "chip", onclick: () => {
        this.setParts(index, Object.fromEntries(Object.entries(found.patch).map(([k, v]) => [LANE_PATCHABLE[k], v])));
        announce(`Lane ${index + 1}: ${found.text}.`);
      } }, "Use it"),
    );
  }

  showError(index, message) {
    const lane = this.laneElement(index);
    if (!lane) return;
    lane.querySelector(".lane-name").textContent = message;
    lane.querySelector(".stream-status").textContent = "Cannot run: nothing to stream.";
    lane.dataset.fit = "error";
  }

  /** The finish order and the gaps, from the schedules the lanes play. */
  finishOrder() {
    return this.runnable()
      .map(([index, reply]) => ({ index, name: deviceName(reply.estimate), estimate: reply.estimate, end: reply.estimate.schedule.arrival_s.at(-1) }))
      .sort((a, b) => a.end - b.end);
  }

  showSummary() {
    if (!this.summary) return;
    const order = this.finishOrder();
    const wont = [...this.results.entries()].filter(([, r]) => r.estimate.fit === "no").map(([i, r]) => `${deviceName(r.estimate)} (lane ${i + 1}) won't run`);
    this.summary.hidden = this.results.size < 2;
    if (this.summary.hidden) return this.summary.replaceChildren();
    // Names alone may repeat (the same device in two lanes): then the lane number tells them apart.
    const names = order.map((o) => o.name);
    const label = (o) => (names.filter((n) => n === o.name).length > 1 ? `${o.name} (lane ${o.index + 1})` : o.name);
    const items = order.map((o, rank) =>
      el("li", { dataset: { lane: o.index, finish: o.end } },
        rank === 0
          ? `${label(o)} finishes first, in ${fmt.duration(o.end)}`
          : `${label(o)} finishes ${fmt.duration(o.end - order[0].end)} after the ${label(order[0])}`),
    );
    // replaceChildren(null) would add the text "null": only elements go in.
    this.summary.replaceChildren(...[el("ol", {}, items), wont.length ? el("p", { class: "race-wont" }, `${wont.join("; ")}.`) : null].filter(Boolean));
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
    const order = this.finishOrder();
    if (!order.length) return;
    const winner = order[0];
    const stepMs = reducedMotion() ? 500 : 0;
    let running = order.length;
    for (const { index, estimate } of order) {
      const lane = this.laneElement(index);
      const schedule = estimate.schedule;
      const status = lane.querySelector(".stream-status");
      const bar = lane.querySelector(".lane-progress span");
      const end = schedule.arrival_s.at(-1);
      const total = schedule.arrival_s.length;
      const markdown = this.renderMarkdown ? new MarkdownView(lane.querySelector(".stream-text"), this.renderMarkdown) : null;
      markdown?.reset();
      this.players.push(play({
        element: lane.querySelector('[data-testid="stream"]'),
        textElement: lane.querySelector(".stream-text"),
        render: markdown ? (text, final) => markdown.show(text, final) : undefined,
        tokens: answer.tokens,
        arrivals: schedule.arrival_s,
        hidden: schedule.reasoning_tokens,
        stepMs,
        onFrame: ({ elapsed, generated, state }) => {
          status.textContent = state === "done" ? `done in ${fmt.duration(end)}` : `${STATE_TEXT[state]} ${fmt.duration(elapsed)}`;
          bar.style.width = `${(100 * generated) / total}%`;
        },
        onDone: () => {
          if (index === winner.index && order.length > 1) lane.classList.add("winner");
          running -= 1;
          if (running === 0) announce(`Race over: ${winner.name} finished first, in ${fmt.duration(winner.end)}.`);
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
