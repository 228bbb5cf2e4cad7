// The catalog page: a search box that filters the entries (every word must match a row's names,
// id, aliases or family), and the theme toggle. The rows themselves are static HTML.

import { initTheme } from "./theme.js";

const search = document.getElementById("catalog-search");
const count = document.getElementById("catalog-count");
const rows = [...document.querySelectorAll("tr[data-search]")];
const groups = [...document.querySelectorAll("[data-group]")];
const IDLE_TEXT = count.textContent;

function matches(row, words) {
  const text = row.dataset.search;
  return words.every((word) => text.includes(word));
}

/** Show the rows every word of the query matches; hide the groups left empty. */
function filter() {
  const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const row of rows) {
    row.hidden = !matches(row, words);
    const sources = row.nextElementSibling;
    if (sources?.dataset.sourcesOf === row.id) sources.hidden = row.hidden;
    if (!row.hidden) shown += 1;
  }
  for (const group of groups) group.hidden = !group.querySelector("tr[data-search]:not([hidden])");
  const query = search.value.trim();
  count.textContent = words.length ? `${shown} of ${rows.length} entries match “${query}”.` : IDLE_TEXT;
}

/** A link to an entry (catalog.html#hw-rtx-4090) always shows it, whatever the search says. */
function revealTarget() {
  const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
  if (target && target.closest("[hidden]")) {
    search.value = "";
    filter();
    target.scrollIntoView();
  }
}

search.addEventListener("input", filter);
window.addEventListener("hashchange", revealTarget);
initTheme(document.getElementById("theme-toggle"));
if (search.value) filter();
revealTarget();
