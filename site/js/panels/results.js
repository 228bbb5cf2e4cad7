// "What you would get" (site/templates/panels/results.j2): the headline numbers, the memory bar,
// the set-up line and the tier (the verdicts and suggestions: advice.js). Before the engine is
// ready a changed set-up shows the build's numbers struck out, names the new choice and says
// they are computed when the engine is ready: never a number, badge or memory bar of another
// set-up as if it were this one's.

import * as fmt from "../format.js";
import { $, el } from "../dom.js";
import { ratioText } from "../reference.js";
import { catalog } from "../data.js";
import { tierText } from "./explain.js";
import { FIT_TEXT, offloadNote, shortfall } from "../fit.js";

export { FIT_TEXT };

function setMetric(element, value, text) {
  element.dataset.value = value === null ? "" : String(value);
  element.textContent = text;
}

export class ResultsPanel {
  constructor(root) {
    const q = (selector) => $(selector, root);
    this.root = root;
    this.ui = {
      tierBadge: q("#tier-badge"),
      setupLine: q("#setup-line"),
      decode: q('[data-testid="decode-tps"]'),
      decodeRange: q("#decode-range"),
      prefill: q('[data-testid="prefill-tps"]'),
      ttft: q('[data-testid="ttft"]'),
      ttftUnit: q("#ttft-unit"),
      visibleTtft: q('[data-testid="visible-ttft"]'),
      waitVisible: q("#wait-visible"),
      waitTotal: q("#wait-line"),
      ttftLabel: q("#ttft-label"),
      fit: q('[data-testid="fit"]'),
      memorySummary: q("#memory-summary"),
      membar: q("#membar"),
      extraLine: q("#extra-line"),
      pendingNote: q("#pending-note"),
      decodeRatio: el("p", { class: "decode-ratio", "data-testid": "decode-ratio", "data-value": "", hidden: true }),
    };
    this.ui.decodeRange.after(this.ui.decodeRatio);
  }

  /** "3.1x this computer" under the headline's decode speed (null: none to show); `me` names
   *  this computer's device. */
  showRatio(ratio, me) {
    const node = this.ui.decodeRatio;
    node.dataset.value = ratio === null ? "" : String(ratio);
    node.textContent = ratio === null ? "" : `${ratioText(ratio)} (${me}, predicted)`;
    node.hidden = ratio === null;
  }

  get metrics() {
    const { decode, prefill, ttft, visibleTtft, fit } = this.ui;
    return [decode, prefill, ttft, visibleTtft, fit];
  }

  /** Whether the numbers shown are not this set-up's (struck out, waiting for the engine). */
  set stale(stale) {
    this.root.dataset.stale = String(stale);
    if (!stale) this.ui.pendingNote.hidden = true;
  }

  render(result) {
    const { ui } = this;
    this.stale = false;
    const e = result.estimate;
    const r = result.request;
    const runs = e.fit !== "no";
    const prompt = `${fmt.tokens(r.prompt_tokens)} prompt tokens${r.depth ? ` after ${fmt.tokens(r.depth)}` : ""}`;
    // The waits people feel: a reasoning model's answer shows only after it has thought, so that
    // wait is the headline figure and the (hidden) first token the small one.
    const thinks = runs && e.visible_ttft_s > e.ttft_s;
    ui.ttftLabel.textContent = thinks ? "Answer visible after" : "First token";
    ui.ttft.classList.toggle("metric-minor", thinks);
    ui.ttftUnit.textContent = thinks ? `first (hidden) token, for ${prompt}` : `for ${prompt}`;
    if (runs) {
      setMetric(ui.decode, e.decode_tps, fmt.rate(e.decode_tps));
      ui.decodeRange.textContent = `likely ${fmt.rate(e.decode_tps_low)}–${fmt.rate(e.decode_tps_high)}`;
      setMetric(ui.prefill, e.prefill_tps, fmt.rate(e.prefill_tps));
      setMetric(ui.ttft, e.ttft_s, fmt.duration(e.ttft_s));
      setMetric(ui.visibleTtft, e.visible_ttft_s, fmt.duration(e.visible_ttft_s));
      ui.waitVisible.hidden = !thinks;
      ui.waitTotal.textContent = `whole answer after ${fmt.duration(e.total_s)}`;
    } else {
      // Won't run means won't run: no speed and no times for a set-up that cannot load.
      for (const element of [ui.decode, ui.prefill, ui.ttft, ui.visibleTtft]) setMetric(element, null, "—");
      ui.decodeRange.textContent = `won't run: ${shortfall(e.memory)}`;
      ui.waitVisible.hidden = true;
      ui.waitTotal.textContent = "";
    }
    setMetric(ui.fit, e.fit, FIT_TEXT[e.fit]);
    ui.fit.dataset.verdict = e.fit;
    const m = e.memory;
    ui.memorySummary.textContent =
      e.fit === "offload" ? `runs only with ${offloadNote(m)}` : e.fit === "no" ? shortfall(m) : `${fmt.memory(m.total_gb)} of ${fmt.memory(m.usable_gb)} usable`;
    ui.memorySummary.title = `In GB (10^9 bytes): ${fmt.gigabytes(m.total_gb)} needed, ${fmt.gigabytes(m.usable_gb)} usable. ${fmt.SIZE_UNIT_NOTE}`;
    ui.membar.querySelector(".membar-fill").style.transform = `scaleX(${Math.min(1, m.total_gb / Math.max(m.usable_gb, 1e-9))})`;
    ui.membar.dataset.verdict = e.fit;
    ui.tierBadge.textContent = e.tier;
    ui.tierBadge.dataset.tier = e.tier;
    ui.tierBadge.title = tierText(e);
    ui.setupLine.textContent = `${e.hardware.name}${e.hardware.gpus > 1 ? ` ×${e.hardware.gpus}` : ""} · ${e.model.name} · ${e.quant} · ${e.engine} on ${catalog.backends[e.backend] || e.backend}${e.breakdown.cpu_threads ? ` (${fmt.count(e.breakdown.cpu_threads)} threads)` : ""}`;
    this.renderExtraLine(e, r);
  }

  renderExtraLine(e, r) {
    const parts = [];
    if (e.fit === "no") {
      parts.push(`It cannot load: ${shortfall(e.memory)}. Nothing streams; the nearest set-ups that run are below, one click away.`);
    } else if (r.reasoning_tokens) {
      parts.push(`Thinks for ${fmt.count(r.reasoning_tokens)} hidden tokens first: the visible answer starts after ${fmt.duration(e.visible_ttft_s)}, ${fmt.duration(e.visible_ttft_s - e.ttft_s)} after the first token.`);
    }
    if (e.speculative) parts.push(`Speculative decoding (${e.speculative.method === "mtp" ? "MTP" : e.speculative.draft_model}): ${fmt.factor(e.speculative.speedup)} the speed without it, in bursts.`);
    if (r.batch > 1) parts.push(`${fmt.count(r.batch)} requests at once: ${fmt.rate(e.decode_tps)} tok/s each, ${fmt.rate(e.aggregate_tps)} tok/s together.`);
    if (e.fit === "offload") parts.push(`${fmt.memory(e.memory.host_weights_gb)} of weights live in system RAM${e.memory.experts_on_host ? " (the MoE experts)" : ""}, which is ${fmt.gibibytes(e.memory.system_ram_gib)} here (Advanced › System RAM).`);
    this.ui.extraLine.hidden = parts.length === 0;
    this.ui.extraLine.textContent = parts.join(" ");
  }

  /** Nothing of another set-up stays on screen: badge, memory bar, notes; `name` describes this one. */
  clear(name) {
    const { ui } = this;
    ui.fit.dataset.verdict = "";
    ui.decodeRange.textContent = "";
    ui.ttftUnit.textContent = "";
    ui.waitVisible.hidden = true;
    ui.waitTotal.textContent = "";
    ui.ttftLabel.textContent = "First token";
    ui.ttft.classList.remove("metric-minor");
    ui.memorySummary.textContent = "";
    ui.membar.dataset.verdict = "";
    ui.membar.querySelector(".membar-fill").style.width = "0";
    ui.tierBadge.textContent = "";
    ui.tierBadge.dataset.tier = "";
    ui.setupLine.textContent = name;
    ui.extraLine.hidden = true;
  }

  /** A changed set-up before the engine is ready: `built`'s numbers struck out (no data-value),
   *  `name` on the set-up line, and how long the engine has been starting. */
  waiting(built, name, seconds) {
    const e = built.estimate;
    const texts = new Map([
      [this.ui.decode, fmt.rate(e.decode_tps)],
      [this.ui.prefill, fmt.rate(e.prefill_tps)],
      [this.ui.ttft, fmt.duration(e.ttft_s)],
      [this.ui.visibleTtft, fmt.duration(e.visible_ttft_s ?? e.ttft_s)],
      [this.ui.fit, FIT_TEXT[e.fit]],
    ]);
    this.clear(name);
    for (const element of this.metrics) setMetric(element, null, texts.get(element) ?? "…");
    this.root.dataset.stale = "true";
    this.ui.pendingNote.hidden = false;
    this.ui.pendingNote.textContent = `Struck out: the numbers of the page's first set-up (${e.hardware.name}, ${e.model.name}). This one's are computing when the engine is ready (${fmt.count(Math.round(seconds))} s so far).`;
  }

  /** Numbers on their way ("…"), with an optional note where the range goes; `name` names the set-up. */
  pending(message = "", name = "") {
    this.stale = false;
    this.clear(name);
    for (const element of this.metrics) setMetric(element, null, "…");
    this.ui.decodeRange.textContent = message;
  }

  /** No numbers can be computed now: say so, never "NaN". */
  unavailable(message, name = "") {
    this.pending(message, name);
    for (const element of this.metrics) element.textContent = "—";
  }
}
