// An agent task end to end (article 002's (docs/sources.md) worked example): model calls, tokens per call, tool calls
// and their latency, with or without a prefix cache. The engine computes each turn.

import { el } from "./dom.js";
import * as fmt from "./format.js";

const PARTS = [
  ["ttft_s", "reading the context (to first token)", "prefill"],
  ["generate_s", "generating", "generate"],
  ["tools_s", "waiting for tools", "tools"],
];

export class Agent {
  constructor(ui, app) {
    Object.assign(this, { ui, app });
    this.seq = 0;
    ui.form.addEventListener("input", () => this.update());
    ui.form.addEventListener("submit", (event) => event.preventDefault());
  }

  inputs() {
    const n = (input) => Number(input.value);
    return {
      turns: n(this.ui.turns),
      gen_tokens: n(this.ui.gen),
      tool_calls: n(this.ui.tools),
      tool_latency_s: n(this.ui.latency),
      tool_result_tokens: n(this.ui.result),
      prefix_cache: this.ui.cache.checked,
    };
  }

  async update() {
    const seq = ++this.seq;
    let reply;
    try {
      reply = await this.app.jobs.later("agent", { view: this.app.getView(), ...this.inputs() });
    } catch (error) {
      if (seq !== this.seq) return;
      this.ui.total.textContent = "—";
      this.ui.total.dataset.value = "";
      this.ui.note.textContent = error.message;
      return;
    }
    if (reply === null || seq !== this.seq) return;
    this.render(reply);
  }

  render(r) {
    const { ui } = this;
    ui.total.textContent = fmt.duration(r.total_s);
    ui.total.dataset.value = String(r.total_s);
    const bar = el("div", { class: "stack-bar", role: "img", "aria-label": PARTS.map(([key, label]) => `${label} ${fmt.duration(r[key])}`).join(", ") },
      PARTS.map(([key, label, css]) => {
        const part = el("span", { class: `stack-part part-${css}`, title: `${label}: ${fmt.duration(r[key])}` });
        part.style.width = `${(100 * r[key]) / Math.max(r.total_s, 1e-9)}%`;
        return part;
      }));
    const legend = el("div", { class: "stack-legend" }, PARTS.map(([key, label, css]) => el("span", {}, el("i", { class: `part-${css}` }), `${label} ${fmt.duration(r[key])}`)));
    ui.stack.replaceChildren(bar, legend);
    const cache = r.inputs.prefix_cache;
    ui.note.textContent = `${fmt.count(r.generated_tokens)} tokens generated in ${r.inputs.turns} calls. ${cache ? "Without" : "With"} prefix caching it would take ${fmt.duration(r.other_total_s)}.`;
    ui.turnsTable.replaceChildren(
      el("table", { class: "data" },
        el("thead", {}, el("tr", {}, ["Call", "Context", "Prefilled", "First token", "Generating", "Tools", "Total"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, r.turns.map((t) => el("tr", {},
          el("th", { scope: "row" }, String(t.turn)),
          el("td", {}, fmt.tokens(t.context_tokens)),
          el("td", {}, fmt.tokens(t.prefill_tokens)),
          el("td", {}, fmt.duration(t.ttft_s)),
          el("td", {}, fmt.duration(t.generate_s)),
          el("td", {}, fmt.duration(t.tools_s)),
          el("td", {}, fmt.duration(t.total_s)))))),
    );
  }
}
