// "Good enough for…" (site/templates/panels/advice.j2): the use-case verdicts of the set-up and
// the suggestions that apply with one click.

import * as fmt from "../format.js";
import { $, announce, el } from "../dom.js";
import { FIT_TEXT } from "./results.js";

export class AdvicePanel {
  /** onApply(patch): a suggestion was applied. */
  constructor(root, onApply) {
    const q = (selector) => $(selector, root);
    this.root = root;
    this.onApply = onApply;
    this.ui = { verdicts: q("#verdicts"), verdictsTitle: q("#verdicts-title"), suggestions: q("#suggestions"), suggestionsTitle: q("#suggestions-title"), suggestionsBox: q("#suggestions-box") };
  }

  /** The verdicts on screen are for another set-up (a newer one is being computed). */
  set stale(stale) {
    this.root.dataset.stale = String(stale);
  }

  render(advice) {
    const { ui } = this;
    this.stale = false;
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
