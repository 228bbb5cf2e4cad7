// The catalog page: the build's data (catalog_page.py, a JSON island) rendered as four tables
// (site/js/catalog-table.js) that sort, filter and show a page of rows at a time, so a phone
// lays out tens of rows, not thousands. One search box filters every table (each typed word must
// be in an entry's names, id, aliases or family); hardware also filters by vendor, kind, memory
// and price. A link to an entry (catalog.html#hw-rtx-4090) shows and opens it whatever the
// filters say.

import { $, readJSON } from "./dom.js";
import { EntryTable } from "./catalog-table.js";
import { engineView, hardwareFilter, hardwareView, modelView, quantView } from "./catalog-views.js";
import { initTheme } from "./theme.js";

const data = readJSON("catalog-data");
const tables = {
  hardware: new EntryTable($("#hardware"), { ...hardwareView(data), sortKey: 0 }),
  models: new EntryTable($("#models"), { ...modelView(data), sortKey: null }),
  formats: new EntryTable($("#formats"), { ...quantView(data), sortKey: null }),
  engines: new EntryTable($("#engines"), { ...engineView(data), sortKey: null }),
};
const search = $("#catalog-search");
const count = $("#catalog-count");
const filters = { vendor: $("#hw-vendor"), kind: $("#hw-kind"), memory: $("#hw-memory"), price: $("#hw-price") };
const IDLE_TEXT = count.textContent;

function fill(select, entries) {
  for (const [value, label] of entries) select.add(new Option(label, value));
}
fill(filters.vendor, Object.entries(data.vendors).filter(([id]) => data.hardware.some((e) => e.vendor === id)));
fill(filters.kind, Object.entries(data.kinds));

/** Apply the search box and the hardware filters to every table. */
function apply() {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (row) => words.every((word) => row.search.includes(word));
  const hardware = hardwareFilter({ vendor: filters.vendor.value, kind: filters.kind.value, memory: filters.memory.value, price: filters.price.value.trim() });
  tables.hardware.setFilter((row) => matches(row) && hardware(row));
  for (const name of ["models", "formats", "engines"]) tables[name].setFilter(matches);
  const shown = Object.values(tables).reduce((sum, table) => sum + table.total, 0);
  const all = Object.values(tables).reduce((sum, table) => sum + table.rows.length, 0);
  count.textContent = words.length ? `${shown} of ${all} entries match “${search.value.trim()}”.` : IDLE_TEXT;
}

/** A link to an entry (catalog.html#hw-rtx-4090) shows it, opened, whatever the filters said:
 *  the search then names it (its id), so the page stays short instead of paging down to it. */
function revealTarget() {
  const anchor = decodeURIComponent(location.hash.slice(1));
  const table = Object.values(tables).find((t) => t.find(anchor));
  if (!table) return;
  const row = table.find(anchor);
  if (!table.matching().slice(0, table.shown).includes(row)) {
    search.value = anchor.slice(anchor.indexOf("-") + 1);
    for (const select of [filters.vendor, filters.kind, filters.memory]) select.value = "";
    filters.price.value = "";
    apply();
  }
  table.reveal(row)?.scrollIntoView();
}

search.addEventListener("input", apply);
for (const control of Object.values(filters)) control.addEventListener(control.tagName === "INPUT" ? "input" : "change", apply);
window.addEventListener("hashchange", revealTarget);
initTheme($("#theme-toggle"));
apply();
revealTarget();
