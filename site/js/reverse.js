// The reverse question: which devices run this set-up at >= X tok/s at this context? The engine
// checks the whole hardware catalog in chunks (background calls); the table sorts by speed,
// launch price or speed per dollar.

import { el, announce } from "./dom.js";
import * as fmt from "./format.js";
import { FIT_MARK } from "./pickers.js";

const CHUNK = 16;
const SHOWN_ROWS = 40;

export class Reverse {
  /** app: {jobs, getView(), useHardware(id)} */
  constructor({ form, min, priced, status, table }, app) {
    Object.assign(this, { form, min, priced, status, table, app });
    this.rows = null;
    this.sortKey = "tps_per_kusd";
    this.descending = true;
    this.seq = 0;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.search();
    });
    priced.addEventListener("change", () => this.render());
    for (const button of table.querySelectorAll("th button")) {
      button.addEventListener("click", () => {
        const key = button.dataset.sort;
        this.descending = key === this.sortKey ? !this.descending : key !== "price_usd";
        this.sortKey = key;
        this.render();
      });
    }
  }

  /** Re-run for a new view if results are on screen (otherwise it waits for the button). */
  viewChanged() {
    if (this.rows !== null) this.search();
  }

  async search() {
    const minTps = Number(this.min.value);
    if (!(minTps > 0)) {
      this.status.textContent = "Enter a speed above 0 tok/s.";
      return;
    }
    const seq = ++this.seq;
    const view = this.app.getView();
    const rows = [];
    let total = Infinity;
    this.status.textContent = "Checking every device…";
    for (let offset = 0; offset < total; offset += CHUNK) {
      let reply;
      try {
        reply = await this.app.jobs.later("reverse", { view, min_tps: minTps, offset, limit: CHUNK });
      } catch (error) {
        if (seq === this.seq) this.status.textContent = error.message;
        return;
      }
      if (reply === null || seq !== this.seq) return;
      total = reply.total;
      rows.push(...reply.rows);
      this.status.textContent = `Checked ${fmt.count(Math.min(offset + CHUNK, total))} of ${fmt.count(total)} devices…`;
    }
    this.rows = rows;
    this.minTps = minTps;
    this.render();
  }

  render() {
    if (this.rows === null) return;
    const key = this.sortKey;
    const matching = this.rows.filter((r) => r.meets && (!this.priced.checked || r.price_usd));
    const value = (r) => (r[key] === null || r[key] === undefined ? (this.descending ? -Infinity : Infinity) : r[key]);
    matching.sort((a, b) => (this.descending ? value(b) - value(a) : value(a) - value(b)));
    for (const th of this.table.querySelectorAll("th[aria-sort]")) {
      th.setAttribute("aria-sort", th.querySelector("button").dataset.sort === key ? (this.descending ? "descending" : "ascending") : "none");
    }
    const body = this.table.querySelector("tbody");
    body.replaceChildren(
      ...matching.slice(0, SHOWN_ROWS).map((r) =>
        el("tr", { dataset: { id: r.id, tps: r.decode_tps, fit: r.fit } },
          el("th", { scope: "row" }, el("span", { class: "device" }, r.name), el("span", { class: "family" }, r.family)),
          el("td", { class: "num" }, fmt.rate(r.decode_tps)),
          el("td", { class: "num" }, fmt.duration(r.ttft_s)),
          el("td", {}, `${fmt.gibibytes(r.memory_gib)} · ${FIT_MARK[r.fit]}`),
          el("td", { class: "num" }, r.price_usd ? fmt.usd(r.price_usd) : "—"),
          el("td", { class: "num" }, r.tps_per_kusd ? fmt.rate(r.tps_per_kusd) : "—"),
          el("td", {}, el("button", { type: "button", class: "chip", "aria-label": `Use ${r.name}`, onclick: () => this.app.useHardware(r.id) }, "Use")),
        ),
      ),
    );
    this.table.hidden = matching.length === 0;
    const shown = Math.min(matching.length, SHOWN_ROWS);
    const text = matching.length
      ? `${fmt.count(matching.length)} of ${fmt.count(this.rows.length)} devices reach ${fmt.rate(this.minTps)} tok/s${this.priced.checked ? " and have a launch price" : ""}${shown < matching.length ? `; the first ${shown} are shown` : ""}.`
      : `No device in the catalog reaches ${fmt.rate(this.minTps)} tok/s with this set-up${this.priced.checked ? " (among those with a launch price)" : ""}.`;
    this.status.textContent = text;
    announce(text);
  }
}
