// "What you would get" (site/templates/panels/results.j2): the headline numbers, the memory bar,
// the set-up line, the use-case verdicts and the suggestions that apply with one click.

import * as fmt from "../format.js";
import { $, announce, el } from "../dom.js";
import { tierText } from "./explain.js";

export const FIT_TEXT = { fits: "Fits", offload: "Offload", no: "Won't run" };

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
      fit: q('[data-testid="fit"]'),
      memorySummary: q("#memory-summary"),
      membar: q("#membar"),
      extraLine: q("#extra-line"),
      verdicts: q("#verdicts"),
      suggestionsBox: q("#suggestions-box"),
      suggestions: q("#suggestions"),
    };
  }

  get metrics() {
    const { decode, prefill, ttft, fit } = this.ui;
    return [decode, prefill, ttft, fit];
  }

  render(result) {
    const { ui } = this;
    const e = result.estimate;
    const r = result.request;
    setMetric(ui.decode, e.decode_tps, fmt.rate(e.decode_tps));
    ui.decodeRange.textContent = `likely ${fmt.rate(e.decode_tps_low)}–${fmt.rate(e.decode_tps_high)}`;
    setMetric(ui.prefill, e.prefill_tps, fmt.rate(e.prefill_tps));
    setMetric(ui.ttft, e.ttft_s, fmt.duration(e.ttft_s));
    ui.ttftUnit.textContent = `for ${fmt.tokens(r.prompt_tokens)} prompt tokens${r.depth ? ` after ${fmt.tokens(r.depth)}` : ""}`;
    setMetric(ui.fit, e.fit, FIT_TEXT[e.fit]);
    ui.fit.dataset.verdict = e.fit;
    const m = e.memory;
    ui.memorySummary.textContent = `${fmt.gigabytes(m.total_gb)} of ${fmt.gigabytes(m.usable_gb)} usable`;
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
    if (r.reasoning_tokens) {
      const start = e.schedule?.arrival_s[r.reasoning_tokens];
      parts.push(`Thinks for ${fmt.count(r.reasoning_tokens)} hidden tokens first: the visible answer starts after ${fmt.duration(start)}.`);
    }
    if (e.speculative) parts.push(`Speculative decoding (${e.speculative.method === "mtp" ? "MTP" : e.speculative.draft_model}): ${fmt.factor(e.speculative.speedup)} the speed without it, in bursts.`);
    if (r.batch > 1) parts.push(`${fmt.count(r.batch)} requests at once: ${fmt.rate(e.decode_tps)} tok/s each, ${fmt.rate(e.aggregate_tps)} tok/s together.`);
    if (e.fit === "offload") parts.push(`${fmt.gigabytes(e.memory.host_weights_gb)} of weights live in system RAM${e.memory.experts_on_host ? " (the MoE experts)" : ""}.`);
    this.ui.extraLine.hidden = parts.length === 0;
    this.ui.extraLine.textContent = parts.join(" ");
  }

  /** Numbers on their way ("…"), with an optional note where the range goes. */
  pending(message = "") {
    for (const element of this.metrics) setMetric(element, null, "…");
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
    ui.verdicts.replaceChildren(
      ...advice.verdicts.map((v) =>
        el("li", { class: `verdict level-${v.level}`, dataset: { case: v.id, level: v.level }, title: v.why },
          el("span", { class: "verdict-mark", "aria-hidden": "true" }, v.level === "good" ? "✓" : v.level === "ok" ? "~" : "✕"),
          el("span", { class: "verdict-label" }, v.label),
          el("span", { class: "verdict-range" }, `${v.low}–${v.high}${v.id === "agentic" ? "+" : ""} tok/s`),
          el("span", { class: "sr-only" }, v.level === "good" ? ": comfortable" : v.level === "ok" ? ": usable" : ": too slow")),
      ),
    );
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
