// "What you would get" (site/templates/panels/results.j2): the headline numbers, the memory bar,
// the set-up line, the use-case verdicts and the suggestions that apply with one click.

import * as fmt from "../format.js";
import { $, announce, el } from "../dom.js";
import { tierText } from "./explain.js";
import { FIT_TEXT, offloadNote, shortfall } from "../fit.js";

export { FIT_TEXT };

function setMetric(element, value, text) {
  element.dataset.value = value === null ? "" : String(value);
  element.textContent = text;
}

export class ResultsPanel {
  /** onApply(patch, text): a suggestion was applied. */
  constructor(root, onApply) {
    const q = (selector) => $(selector, root);
    this.onApply = onApply;
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
      verdicts: q("#verdicts"),
      verdictsTitle: q("#verdicts-title"),
      suggestionsTitle: q("#suggestions-title"),
      suggestionsBox: q("#suggestions-box"),
      suggestions: q("#suggestions"),
    };
  }

  get metrics() {
    const { decode, prefill, ttft, visibleTtft, fit } = this.ui;
    return [decode, prefill, ttft, visibleTtft, fit];
  }

  render(result) {
    const { ui } = this;
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
      e.fit === "offload" ? `runs only with ${offloadNote(m)}` : e.fit === "no" ? shortfall(m) : `${fmt.gigabytes(m.total_gb)} of ${fmt.gigabytes(m.usable_gb)} usable`;
    ui.membar.querySelector(".membar-fill").style.width = `${Math.min(100, (100 * m.total_gb) / Math.max(m.usable_gb, 1e-9))}%`;
    ui.membar.dataset.verdict = e.fit;
    ui.tierBadge.textContent = e.tier;
    ui.tierBadge.dataset.tier = e.tier;
    ui.tierBadge.title = tierText(e);
    ui.setupLine.textContent = `${e.hardware.name}${e.hardware.gpus > 1 ? ` ×${e.hardware.gpus}` : ""} · ${e.model.name} · ${e.quant} · ${e.engine} on ${e.backend}${e.breakdown.cpu_threads ? ` (${fmt.count(e.breakdown.cpu_threads)} threads)` : ""}`;
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
    if (e.fit === "offload") parts.push(`${fmt.gigabytes(e.memory.host_weights_gb)} of weights live in system RAM${e.memory.experts_on_host ? " (the MoE experts)" : ""}, which is ${fmt.gibibytes(e.memory.system_ram_gib)} here (Advanced › System RAM).`);
    this.ui.extraLine.hidden = parts.length === 0;
    this.ui.extraLine.textContent = parts.join(" ");
  }

  /** Numbers on their way ("…"), with an optional note where the range goes. */
  pending(message = "") {
    for (const element of this.metrics) setMetric(element, null, "…");
    this.ui.waitVisible.hidden = true;
    this.ui.waitTotal.textContent = "";
    this.ui.ttftLabel.textContent = "First token";
    this.ui.ttft.classList.remove("metric-minor");
    this.ui.decodeRange.textContent = message;
    this.ui.memorySummary.textContent = "";
  }

  /** No numbers can be computed now: say so, never "NaN". */
  unavailable(message) {
    this.pending(message);
    for (const element of this.metrics) element.textContent = "—";
  }

  renderAdvice(advice) {
    const { ui } = this;
    const wontRun = Boolean(advice.needs);
    // Speed verdicts (tok/s against each use) and wait verdicts (seconds to the first visible
    // words for chat, to the whole answer for an agent's call); none for a set-up that cannot load.
    ui.verdictsTitle.textContent = wontRun ? "Good enough for… nothing: it won't run" : "Good enough for…";
    ui.verdicts.replaceChildren(
      ...[...advice.verdicts, ...(advice.waits || [])].map((v) =>
        el("li", { class: `verdict level-${v.level}${v.kind === "wait" ? " verdict-wait" : ""}`, dataset: { case: v.id, level: v.level }, title: v.why },
          el("span", { class: "verdict-mark", "aria-hidden": "true" }, v.level === "good" ? "✓" : v.level === "ok" ? "~" : "✕"),
          el("span", { class: "verdict-label" }, v.label),
          el("span", { class: "verdict-range" }, v.kind === "wait" ? `${fmt.duration(v.value_s)}: ≤ ${v.good_s} s good, ≤ ${v.ok_s} s usable` : `${v.low}–${v.high}${v.id === "agentic" ? "+" : ""} tok/s`),
          el("span", { class: "sr-only" }, v.level === "good" ? ": comfortable" : v.level === "ok" ? ": usable" : ": too slow")),
      ),
    );
    ui.suggestionsTitle.textContent = wontRun ? "Runs instead" : "Worth trying";
    ui.suggestionsBox.hidden = advice.suggestions.length === 0;
    ui.suggestions.replaceChildren(
      ...advice.suggestions.map((s) =>
        el("li", { class: "suggestion", dataset: { fit: s.fit } },
          el("span", { class: "suggestion-text" }, s.text),
          el("span", { class: "suggestion-numbers" }, `${fmt.rate(s.decode_tps)} tok/s · ${FIT_TEXT[s.fit].toLowerCase()}`),
          el("button", { type: "button", class: "chip", onclick: () => { this.onApply(s.patch); announce(`Applied: ${s.text}.`); } }, "Apply")),
      ),
    );
  }
}
