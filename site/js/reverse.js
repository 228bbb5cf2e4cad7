// The reverse question: which builds run this set-up at >= X tok/s at this context, within a
// budget? The engine checks the whole hardware catalog in chunks (background calls), trying 1 to
// max_cards identical cards of each discrete GPU (engine/page/buying.py); the table sorts by
// speed, price or speed per dollar, and says which price it used (street/used with its date, or
// launch).

import { el, announce } from "./dom.js";
import * as fmt from "./format.js";
import { FIT_MARK } from "./pickers.js";

const CHUNK = 16;
const SHOWN_ROWS = 40;

export class Reverse {
  /** app: {jobs, getView(), useHardware(id, cards)} */
  constructor({ form, min, budget, priced, status, table }, app) {
    Object.assign(this, { form, min, budget, priced, status, table, app });
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
    const budget = this.budget.value.trim() === "" ? null : Number(this.budget.value);
    if (budget !== null && !(budget > 0)) {
      this.status.textContent = "Enter a budget above $0, or leave it empty for no limit.";
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
        reply = await this.app.jobs.later("reverse", { view, min_tps: minTps, budget_usd: budget, offset, limit: CHUNK });
      } catch (error) {
        if (seq === this.seq) this.status.textContent = error.message;
        return;
      }
      if (reply === null || seq !== this.seq) return;
      total = reply.total;
      this.maxCards = reply.max_cards;
      this.boardCards = reply.board_cards || [];
      rows.push(...reply.rows);
      this.status.textContent = `Checked ${fmt.count(Math.min(offset + CHUNK, total))} of ${fmt.count(total)} devices…`;
    }
    this.rows = rows;
    this.minTps = minTps;
    this.budgetUsd = budget;
    this.render();
  }

  /** SXM modules come only on baseboards (engine/page/buying.py SXM_BOARD_CARDS). */
  boardWords() {
    return this.boardCards.length ? `; SXM modules as ${this.boardCards.join("- or ")}-GPU boards` : "";
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
      ...matching.slice(0, SHOWN_ROWS).map((r) => {
        const build = r.cards > 1 ? `${r.cards} × ${r.name}` : r.name;
        return el("tr", { dataset: { id: r.id, cards: r.cards, tps: r.decode_tps, fit: r.fit, price: r.price_usd ?? "", priceKind: r.price_kind ?? "" } },
          el("th", { scope: "row" }, el("span", { class: "device" }, build), el("span", { class: "family" }, r.family)),
          el("td", { class: "num" }, fmt.rate(r.decode_tps)),
          el("td", { class: "num" }, fmt.duration(r.ttft_s)),
          el("td", {}, `${r.cards > 1 ? `${r.cards} × ` : ""}${fmt.gibibytes(r.memory_gib)} · ${FIT_MARK[r.fit]}`),
          el("td", { class: "num" }, ...priceCell(r)),
          el("td", { class: "num" }, r.tps_per_kusd ? fmt.rate(r.tps_per_kusd) : "—"),
          el("td", {}, el("button", { type: "button", class: "chip", "aria-label": `Use ${build}`, onclick: () => this.app.useHardware(r.id, r.cards) }, "Use")),
        );
      }),
    );
    this.table.hidden = matching.length === 0;
    const shown = Math.min(matching.length, SHOWN_ROWS);
    const within = this.budgetUsd ? ` within ${fmt.usd(this.budgetUsd)}` : "";
    const priced = this.priced.checked ? " and have a price" : "";
    const text = matching.length
      ? `${fmt.count(matching.length)} of ${fmt.count(this.rows.length)} devices reach ${fmt.rate(this.minTps)} tok/s${within}${priced} (alone or as up to ${this.maxCards} identical cards${this.boardWords()})${shown < matching.length ? `; the first ${shown} are shown` : ""}.`
      : `No device in the catalog reaches ${fmt.rate(this.minTps)} tok/s${within} with this set-up, alone or as up to ${this.maxCards} identical cards${this.boardWords()}${this.priced.checked && !this.budgetUsd ? " (among those with a price)" : ""}.`;
    this.status.textContent = text;
    announce(text);
  }
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "2026-05" -> "May 2026"; a year stays a year. */
function when(date) {
  const [year, month] = (date || "").split("-");
  return month ? `${MONTHS[Number(month) - 1]} ${year}` : year || "";
}

/** The build's price, then which price it is: "2 × $750 used, May 2026" with its source. */
function priceCell(r) {
  if (!r.price_usd) return ["—"];
  const kind = r.price_kind === "launch" ? `launch price${r.price_date ? ` (${r.price_date})` : ""}` : `${r.price_kind}, ${when(r.price_date)}`;
  const each = r.cards > 1 ? `${r.cards} × ${fmt.usd(r.unit_price_usd)} ` : "";
  const url = (r.price_source || "").match(/https?:\/\/[^\s)'"]+/);
  const note = el("span", { class: "family", title: r.price_source || "" }, `${each}${kind}`);
  return [fmt.usd(r.price_usd), note, ...(url ? [" ", el("a", { href: url[0], rel: "noreferrer", class: "family" }, "source")] : [])];
}
