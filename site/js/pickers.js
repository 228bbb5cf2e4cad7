// Searchable, grouped pickers with a fit mark per item.
//
// The picker is a native <select> (the best picker on phones, and fully keyboard and screen-reader
// accessible) with a search box that narrows its options; each option carries the mark of the
// current set-up ("fits", "offload", "won't run"), computed in the background by the engine.

import { el } from "./dom.js";

export const FIT_MARK = { fits: "fits", offload: "offload", no: "won't run", error: "n/a" };

export class Picker {
  /**
   * items: catalog entries; groupOf/valueOf/labelOf/searchText: functions of an item;
   * extras: [[value, label, group]] options kept whatever the search (e.g. "custom").
   */
  constructor({ select, search, items, groupOf, valueOf, labelOf, searchText, extras = [] }) {
    Object.assign(this, { select, search, items, groupOf, valueOf, labelOf, searchText, extras });
    this.marks = {};
    this.query = "";
    this.byValue = new Map(items.map((item) => [valueOf(item), item]));
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
    this.select.value = value;
  }

  matches(item) {
    if (!this.query || !item) return true;
    const text = this.searchText(item).toLowerCase();
    return this.query.split(/\s+/).every((word) => text.includes(word));
  }

  optionLabel(item) {
    const mark = this.marks[this.valueOf(item)];
    return mark ? `${this.labelOf(item)} — ${FIT_MARK[mark] || mark}` : this.labelOf(item);
  }

  render() {
    const selected = this.select.value;
    const groups = new Map();
    for (const item of this.items) {
      if (!this.matches(item) && this.valueOf(item) !== selected) continue;
      const name = this.groupOf(item);
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(item);
    }
    const children = [];
    for (const [name, members] of groups) {
      children.push(
        el("optgroup", { label: name }, members.map((item) => {
          const value = this.valueOf(item);
          return el("option", { value, dataset: this.marks[value] ? { fit: this.marks[value] } : {} }, this.optionLabel(item));
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
    for (const option of this.select.options) {
      const item = this.byValue.get(option.value);
      if (!item || !(option.value in marks)) continue;
      option.textContent = this.optionLabel(item);
      option.dataset.fit = marks[option.value];
    }
  }

  clearMarks() {
    this.marks = {};
    for (const option of this.select.options) {
      const item = this.byValue.get(option.value);
      if (item && option.dataset.fit) {
        delete option.dataset.fit;
        option.textContent = this.labelOf(item);
      }
    }
  }

  /** Enter picks the first match; arrow down moves into the list. */
  onSearchKey(event) {
    if (event.key === "Enter") {
      event.preventDefault();
      const first = [...this.select.options].find((option) => this.matches(this.byValue.get(option.value)) && this.byValue.has(option.value));
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
