// Searchable, grouped pickers with a fit mark per item.
//
// The picker is a native <select> (the best picker on phones, and fully keyboard and screen-reader
// accessible) with a search box that narrows its options; each option carries the mark of the
// current set-up ("fits", "offload", "won't run"), computed in the background by the engine.
// While a search is typed the matches are listed best first: the name itself, then names that
// start with the query, then names whose words start with the query's words, then the other
// names and aliases that contain it; fewer words first within a rank. Enter picks the first.

import { el, setText, setValue } from "./dom.js";

export const FIT_MARK = { fits: "fits", offload: "offload", no: "won't run", error: "n/a" };

/** A rank worse than any match. */
const NO_RANK = 99;

/** Lower case, words of letters, digits and dots (so "R1-Distill" is "r1 distill", "1.5B" stays). */
const normalise = (text) => String(text).toLowerCase().replace(/[^a-z0-9.]+/g, " ").trim();

export class Picker {
  /**
   * items: catalog entries; groupOf/valueOf/labelOf/searchText: functions of an item;
   * extras: [[value, label, group]] options kept whatever the search (e.g. "custom").
   * reasonOf: item -> why it cannot run on the chosen device, or null (runs.js); such items are
   * left out unless `showAll` (then listed last with the reason), the current choice excepted.
   */
  constructor({ select, search, items, groupOf, valueOf, labelOf, searchText, nameOf, reasonOf = () => null, extras = [] }) {
    // An item's label depends on the catalog alone: formatted once (a formats picker is rebuilt
    // after some picks). Its name: the label up to its first " · " detail unless given.
    const labels = new Map();
    const label = (item) => labels.get(item) ?? labels.set(item, labelOf(item)).get(item);
    nameOf ??= (item) => label(item).split(" · ")[0];
    Object.assign(this, { select, search, items, groupOf, valueOf, labelOf: label, searchText, nameOf, reasonOf, extras });
    this.showAll = false;
    /** How many items the last render left out because they cannot run here. */
    this.hidden = 0;
    this.marks = {};
    this.query = "";
    this.byValue = new Map(items.map((item) => [valueOf(item), item]));
    /** The rendered <option> of each item's value: marks arrive 16 at a time for ~1,000 devices,
     *  so they are written through this map, not by walking every option per chunk. */
    this.optionOf = new Map();
    search?.addEventListener("input", () => {
      this.query = search.value.trim().toLowerCase();
      this.render();
    });
    search?.addEventListener("keydown", (event) => this.onSearchKey(event));
    this.render();
  }

  get value() {
    return this.select.value;
  }

  set value(value) {
    if (!this.matches(this.byValue.get(value)) && this.query) {
      this.query = "";
      if (this.search) this.search.value = "";
      this.render();
    }
    setValue(this.select, value);
  }

  matches(item) {
    if (!this.query || !item) return true;
    const text = this.searchText(item).toLowerCase();
    return this.query.split(/\s+/).every((word) => text.includes(word)) || this.rank(item) < NO_RANK;
  }

  /** How well the query names ``item``: 0 best; NO_RANK when it does not. */
  rank(item) {
    const query = normalise(this.query);
    if (!query || !item) return NO_RANK;
    const name = normalise(this.nameOf(item));
    if (name === query) return 0;
    if (name.startsWith(query)) return 1;
    const words = query.split(" ");
    const prefixes = (text) => { const have = text.split(" "); return words.every((w) => have.some((h) => h.startsWith(w))); };
    if (prefixes(name)) return 2;
    if (prefixes(normalise(this.searchText(item)))) return 3;
    const text = this.searchText(item).toLowerCase();
    return this.query.split(/\s+/).every((word) => text.includes(word)) ? 4 : NO_RANK;
  }

  /** The matches of the query, best first (stable within a rank: fewer name words first). */
  ranked() {
    return this.items
      .map((item, index) => ({ item, index, rank: this.rank(item), words: normalise(this.nameOf(item)).split(" ").length }))
      .filter((entry) => entry.rank < NO_RANK)
      .sort((a, b) => a.rank - b.rank || a.words - b.words || a.index - b.index)
      .map((entry) => entry.item);
  }

  optionLabel(item) {
    const reason = this.reasonOf(item);
    if (reason) return `${this.labelOf(item)} — won't run here: ${reason}`;
    const mark = this.marks[this.valueOf(item)];
    return mark ? `${this.labelOf(item)} — ${FIT_MARK[mark] || mark}` : this.labelOf(item);
  }

  /** Rebuild the options; `selected`: the choice, kept in the list even where it won't run. */
  render(selected = this.select.value) {
    const groups = new Map();
    if (this.query) {
      // Best first, in one list; the current choice stays reachable after the matches.
      const best = this.ranked();
      groups.set("Best matches", best);
      const current = this.byValue.get(selected);
      if (current && !best.includes(current)) groups.set("Current choice", [current]);
    }
    const wontRun = [];
    this.hidden = 0;
    for (const item of this.query ? [] : this.items) {
      if (this.reasonOf(item)) {
        if (this.showAll || this.valueOf(item) === selected) wontRun.push(item);
        else this.hidden += 1;
        continue;
      }
      const name = this.groupOf(item);
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(item);
    }
    if (wontRun.length) groups.set(this.showAll ? "Won't run on this device" : "Current choice: won't run on this device", wontRun);
    const children = [];
    this.optionOf = new Map();
    for (const [name, members] of groups) {
      children.push(
        el("optgroup", { label: name }, members.map((item) => {
          const value = this.valueOf(item);
          const dataset = { ...(this.marks[value] ? { fit: this.marks[value] } : {}), ...(this.reasonOf(item) ? { runs: "no" } : {}) };
          const option = el("option", { value, dataset }, this.optionLabel(item));
          this.optionOf.set(value, option);
          return option;
        })),
      );
    }
    for (const [value, label, group] of this.extras) children.push(el("optgroup", { label: group }, el("option", { value }, label)));
    this.select.replaceChildren(...children);
    if (selected) this.select.value = selected;
  }

  /** Fit marks {value: "fits" | "offload" | "no" | "error"}, merged into the option labels. */
  setMarks(marks) {
    Object.assign(this.marks, marks);
    for (const [value, mark] of Object.entries(marks)) {
      const option = this.optionOf.get(value);
      const item = this.byValue.get(value);
      if (!option || !item) continue;
      // Only what changed: a view's marks mostly repeat the last view's.
      const label = this.optionLabel(item);
      setText(option, label);
      if (option.dataset.fit !== mark) option.dataset.fit = mark;
    }
  }

  clearMarks() {
    this.marks = {};
    for (const [value, option] of this.optionOf) {
      const item = this.byValue.get(value);
      if (item && option.dataset.fit) {
        delete option.dataset.fit;
        option.textContent = this.optionLabel(item);
      }
    }
  }

  /** Enter picks the first match; arrow down moves into the list. */
  onSearchKey(event) {
    if (event.key === "Enter") {
      event.preventDefault();
      const first = this.query ? this.ranked()[0] && this.select.querySelector(`option[value="${CSS.escape(this.valueOf(this.ranked()[0]))}"]`)
        : [...this.select.options].find((option) => this.byValue.has(option.value));
      if (first && first.value !== this.select.value) {
        this.select.value = first.value;
        this.select.dispatchEvent(new Event("change", { bubbles: true }));
      }
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      this.select.focus();
    }
  }
}
