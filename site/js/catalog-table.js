// One table of catalog.html: rows from the build's data (catalog_page.py), sortable by any column
// with a sort key, filtered by the page's controls, shown a page at a time (a phone never lays out
// hundreds of rows), each row opening to its sources and notes.

import { el } from "./dom.js";

/** Rows shown at first, and added by each "Show more". */
export const PAGE_SIZE = 25;

/** Source text from the build: strings, and [url, shown] pairs that become links. */
export function linked(segments) {
  return (segments || []).map((part) => (typeof part === "string" ? part : el("a", { href: part[0], title: part[0], rel: "noreferrer" }, part[1])));
}

export class EntryTable {
  /**
   * section: the table's <section> (holds a <table>, [data-role=count] and button[data-role=more]).
   * spec: {noun ("devices"), rows, columns: [{label, num, sort(row) (optional), cell(row) -> nodes}],
   *        details(row) -> nodes, sortKey (column index), descending}
   * Each row has .anchor (its element id), .search (lower-case text) and optionally .alias (a
   * second anchor that leads to it, e.g. an entry's id for its first memory size).
   */
  constructor(section, spec) {
    Object.assign(this, spec);
    this.section = section;
    this.table = section.querySelector("table");
    this.count = section.querySelector("[data-role=count]");
    this.more = section.querySelector("button[data-role=more]");
    this.sortKey = spec.sortKey ?? null;
    this.descending = Boolean(spec.descending);
    this.keep = () => true;
    this.shown = PAGE_SIZE;
    this.open = new Set();
    this.head();
    this.more.addEventListener("click", () => {
      this.shown += PAGE_SIZE;
      this.render();
    });
    this.table.tBodies[0].addEventListener("click", (event) => {
      const button = event.target.closest("button[data-open]");
      if (!button) return;
      const anchor = button.dataset.open;
      if (this.open.has(anchor)) this.open.delete(anchor);
      else this.open.add(anchor);
      this.render();
    });
  }

  head() {
    const cells = this.columns.map((column, index) => {
      const label = column.sort
        ? el("button", { type: "button", class: "sort", dataset: { sort: index }, onclick: () => this.sortBy(index) }, column.label)
        : column.label;
      return el("th", { scope: "col", class: column.num ? "num" : null, "aria-sort": column.sort ? "none" : null }, label);
    });
    this.table.tHead.replaceChildren(el("tr", {}, ...cells));
  }

  /** Sort by a column; a second click on it turns the order round. Text sorts A-Z first, numbers largest first. */
  sortBy(index) {
    if (this.sortKey === index) this.descending = !this.descending;
    else this.descending = Boolean(this.columns[index].num);
    this.sortKey = index;
    this.render();
  }

  /** Keep only rows ``keep(row)`` accepts (the page's search and filters); back to the first page. */
  setFilter(keep) {
    this.keep = keep;
    this.shown = PAGE_SIZE;
    this.render();
  }

  matching() {
    const rows = this.rows.filter(this.keep);
    const column = this.columns[this.sortKey];
    if (!column?.sort) return rows;
    const key = (row) => column.sort(row);
    const missing = (value) => value === null || value === undefined || value === "";
    return rows.sort((a, b) => {
      const x = key(a);
      const y = key(b);
      if (missing(x) || missing(y)) return missing(x) - missing(y); // rows without the value go last
      const order = typeof x === "string" ? x.localeCompare(y) : x - y;
      return this.descending ? -order : order;
    });
  }

  render() {
    const rows = this.matching();
    this.visible = rows.slice(0, this.shown);
    const width = this.columns.length;
    const body = [];
    for (const row of this.visible) {
      const open = this.open.has(row.anchor);
      const cells = this.columns.map((column, index) =>
        index === 0
          ? el("th", { scope: "row" }, el("button", { type: "button", class: "entry-name", dataset: { open: row.anchor }, "aria-expanded": String(open), "aria-controls": open ? `${row.anchor}-details` : null }, row.name), ...column.cell(row))
          : el("td", { class: column.num ? "num" : null, dataset: column.num && column.sort ? { value: column.sort(row) ?? "" } : null }, ...column.cell(row)),
      );
      body.push(el("tr", { id: row.anchor, dataset: { entry: this.kind } }, ...cells));
      if (open) body.push(el("tr", { class: "src-row", id: `${row.anchor}-details` }, el("td", { class: "src", colspan: width }, ...this.details(row))));
    }
    this.table.tBodies[0].replaceChildren(...body);
    this.table.hidden = rows.length === 0;
    for (const th of this.table.tHead.querySelectorAll("th[aria-sort]")) {
      const index = Number(th.querySelector("button").dataset.sort);
      th.setAttribute("aria-sort", index === this.sortKey ? (this.descending ? "descending" : "ascending") : "none");
    }
    const left = rows.length - this.visible.length;
    this.more.hidden = left <= 0;
    this.more.textContent = `Show ${Math.min(left, PAGE_SIZE)} more`;
    this.count.textContent = rows.length === this.rows.length
      ? `${rows.length} ${this.noun}${left > 0 ? `, the first ${this.visible.length} shown` : ""}.`
      : `${rows.length} of ${this.rows.length} ${this.noun} match${left > 0 ? `, the first ${this.visible.length} shown` : ""}.`;
    this.total = rows.length;
  }

  /** The row an anchor names (its own or its alias), or null. */
  find(anchor) {
    return this.rows.find((row) => row.anchor === anchor || row.alias === anchor) ?? null;
  }

  /** Show a row whatever the paging (the page clears the filters first), open, and return its element. */
  reveal(row) {
    const index = this.matching().indexOf(row);
    if (index < 0) return null;
    this.shown = Math.max(this.shown, Math.ceil((index + 1) / PAGE_SIZE) * PAGE_SIZE);
    this.open.add(row.anchor);
    this.render();
    return document.getElementById(row.anchor);
  }
}
