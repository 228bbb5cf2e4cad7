// What can run on the chosen device, for the pickers: the engine's rules as data (engine/listing.py
// and engine/page/fields.py, rendered into the page by build.py), never a second copy of a rule.
// Each function answers with null when the item runs, else the plain reason it would not.

import { el } from "./dom.js";
import { catalog, devices, viewFields } from "./data.js";

const names = (backends) => backends.map((b) => catalog.backends[b] || b).join(", ");

/** The backend the view's device runs: a catalog device's, or the custom device's choice (its
 *  kind's usual one when none is chosen, engine/page/fields.py hw_backend.by_kind). */
export function viewBackend(view) {
  if (view.hw === "custom") return view.hw_backend || viewFields.hw_backend.by_kind[view.hw_kind];
  return devices.get(view.hw)?.backend || "";
}

/** Why a weight format does not run on `backend` (engines.format_backends), or null. */
export function quantReason(quant, backend) {
  if (!backend || quant.backends.includes(backend)) return null;
  return `${quant.kind.toUpperCase()} formats run on ${names(quant.backends)} only`;
}

/** Why an engine cannot run `quant` on `backend` (engines.engine_runs), or null. */
export function engineReason(engine, backend, quant) {
  if (engine.catch_all) return "not an engine: the benchmark rows' name for front ends the catalog does not know";
  if (!backend) return null;
  if (!engine.backends.includes(backend)) return `${engine.name} runs on ${names(engine.backends)} only`;
  if (quant && !engine.runs[backend].includes(quant.kind)) return `${engine.name} does not load ${quant.kind.toUpperCase()} weights such as ${quant.name}`;
  return null;
}

/** The engine the view runs: the chosen one, else a catalog device's usual one (listing
 *  engine_id) or, where that one cannot run the format here, the first engine that can (as
 *  engine/system.py build_system picks it); null for a custom device left on "usual" (then only
 *  the backend decides). */
export function viewEngine(view, backend, quant) {
  const id = view.engine || (view.hw === "custom" ? "" : devices.get(view.hw)?.engine_id);
  const engine = catalog.engines.find((e) => e.id === id) || null;
  if (view.engine || !engine || !quant || !engineReason(engine, backend, quant)) return engine;
  return catalog.engines.find((e) => !engineReason(e, backend, quant)) || engine;
}

/** Why a KV cache type does not run: not among the engine's cache types (engines.toml kv_types,
 *  the list check_engine_limits refuses by), or of no engine on `backend` (engines.kv_backends). */
export function kvReason(kv, backend, engine) {
  const runsOn = viewFields.kv.runs_on[kv] || [];
  if (backend && !runsOn.includes(backend)) return `runs on ${names(runsOn)} only`;
  if (engine && !engine.catch_all && !engine.kv_types.includes(kv)) return `${engine.name} offers ${engine.kv_types.join(", ")} only`;
  return null;
}

/** <option>s (and an <optgroup> of those that cannot run, with their reasons) for a plain
 *  <select>: items [[value, label, reason]], the current value always kept. Returns
 *  {children, hidden}: the elements and how many items were left out. */
export function runOptions(items, current, showAll) {
  const runs = [];
  const wont = [];
  let hidden = 0;
  for (const [value, label, reason] of items) {
    if (!reason) runs.push(el("option", { value }, label));
    else if (showAll || value === current) wont.push(el("option", { value, dataset: { runs: "no" } }, `${label} — won't run here: ${reason}`));
    else hidden += 1;
  }
  const group = wont.length ? [el("optgroup", { label: showAll ? "Won't run on this device" : "Current choice: won't run on this device" }, wont)] : [];
  return { children: [...runs, ...group], hidden };
}
