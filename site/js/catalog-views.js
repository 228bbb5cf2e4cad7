// What each table of catalog.html shows: its rows (from the build's data, catalog_page.py), its
// columns with their sort keys, and what a row opens to (every number, its sources, the file
// to fix). Numbers are formatted here; which price a device sells for is the build's
// (engine/page/buying.py, as the reverse search prices it).

import { el } from "./dom.js";
import * as fmt from "./format.js";
import { linked } from "./catalog-table.js";

const num = (value, digits = 1) => (value === undefined || value === null ? "–" : fmt.number(value, digits));
const meta = (...parts) => el("span", { class: "meta" }, parts.filter(Boolean).join(" · "));
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** "2026-05" -> "May 2026"; a year stays a year. */
export function when(date) {
  const [year, month] = String(date || "").split("-");
  return month ? `${MONTHS[Number(month) - 1]} ${year}` : year;
}

/** A definition list of the (label, value) pairs that have a value. */
function facts(pairs) {
  const shown = pairs.filter(([, value]) => value !== undefined && value !== null && value !== "" && value !== "–");
  return el("dl", { class: "facts" }, ...shown.flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, value)]));
}

/** Whether the entry's numbers were read from a source (catalog_page.py _checked): the table
 *  cell ("read", linked to the file read; "unverified", its reason on hover; else a dash). */
function checkedCell(entry) {
  if (entry.checked === "read") {
    const first = entry.verified_from.find((part) => Array.isArray(part));
    return [first ? el("a", { href: first[0], rel: "noreferrer", title: "Numbers checked against this file" }, "read") : "read"];
  }
  if (entry.checked === "unverified") return [el("span", { class: "unverified", title: entry.unverified }, "unverified")];
  return ["–"];
}

const CHECKED_COLUMN = (pick) => ({ label: "Checked", sort: (r) => pick(r).checked || "", cell: (r) => checkedCell(pick(r)) });

/** Sources, notes and the file to edit: the part every entry shares. */
function provenance(entry, id = entry.id) {
  return [
    entry.checked === "read" ? el("p", { class: "checked" }, "Checked against: ", ...linked(entry.verified_from)) : null,
    entry.checked === "unverified" ? el("p", { class: "checked unverified" }, "Unverified: ", entry.unverified) : null,
    el("p", {}, "Source: ", ...linked(entry.source)),
    entry.sources ? el("ul", { class: "field-sources" }, ...entry.sources.map(([key, text]) => el("li", {}, el("code", {}, key), ": ", ...linked(text)))) : null,
    entry.notes ? el("p", { class: "notes" }, "Notes: ", ...linked(entry.notes)) : null,
    el("p", { class: "fix" }, "Fix: ", el("code", {}, entry.file), " ", el("code", {}, `[${id}]`)),
  ];
}

/** "$750 used, May 2026" / "$1,599 launch (2022)" */
function priceText(price) {
  if (!price) return "";
  return price.kind === "launch" ? `${fmt.usd(price.usd)} launch${price.date ? ` (${price.date})` : ""}` : `${fmt.usd(price.usd)} ${price.kind}, ${when(price.date)}`;
}

// ------------------------------------------------------------------ hardware

export function hardwareRows(entries) {
  return entries.flatMap((entry) =>
    entry.variants.map((variant, index) => ({
      entry,
      variant,
      name: variant.name,
      anchor: `hw-${variant.id}`,
      alias: index === 0 && variant.id !== entry.id ? `hw-${entry.id}` : null,
      search: `${entry.search} ${entry.vendor_title.toLowerCase()}`,
    })),
  );
}

export function hardwareView(data) {
  return {
    kind: "hardware",
    noun: "devices",
    rows: hardwareRows(data.hardware),
    columns: [
      { label: "Device", sort: (r) => r.name.toLowerCase(), cell: (r) => [meta(data.kinds[r.entry.kind], r.entry.form_factor, r.entry.status)] },
      { label: "Memory", num: true, sort: (r) => r.variant.memory_gib, cell: (r) => [`${num(r.variant.memory_gib)} GiB`, meta(r.entry.memory_type)] },
      { label: "Price", num: true, sort: (r) => r.variant.price?.usd, cell: (r) => (r.variant.price ? [fmt.usd(r.variant.price.usd), meta(r.variant.price.kind === "launch" ? "launch" : `${r.variant.price.kind}, ${when(r.variant.price.date)}`)] : ["–"]) },
      { label: "Bandwidth", num: true, sort: (r) => r.entry.bandwidth_gbs, cell: (r) => [`${num(r.entry.bandwidth_gbs)} GB/s`] },
      { label: "FP16", num: true, sort: (r) => r.entry.fp16_tflops, cell: (r) => [`${num(r.entry.fp16_tflops, 2)} TFLOPS`] },
      { label: "Year", num: true, sort: (r) => r.entry.launch_year, cell: (r) => [r.entry.launch_year ? String(r.entry.launch_year) : "–"] },
      CHECKED_COLUMN((r) => r.entry),
    ],
    details: (r) => hardwareDetails(r, data),
  };
}

function hardwareDetails({ entry: e, variant: v }, data) {
  const memory = [e.memory_type, e.memory_bus_bits && `${e.memory_bus_bits}-bit`, e.memory_channels && `${e.memory_channels} channels`, e.memory_data_rate_mts && `${num(e.memory_data_rate_mts, 0)} MT/s`];
  const size = e.street?.memory_gib ? ` (the ${num(e.street.memory_gib)} GiB card)` : "";
  const street = e.street ? [priceText({ usd: e.street.usd, kind: e.street.condition, date: e.street.date }), size, " — ", ...linked(e.street.source)] : e.street_note ? ["none given: ", ...linked(e.street_note)] : null;
  const sizes = e.variants.length > 1 ? e.variants.map((x) => `${num(x.memory_gib)} GiB: ${x.launch_price_usd ? fmt.usd(x.launch_price_usd) : "–"}`).join(" · ") : null;
  return [
    facts([
      ["Id", el("code", {}, v.id)],
      ["Kind", `${data.kinds[e.kind]} · ${e.form_factor} · ${e.family}`],
      ["Memory", [`${num(v.memory_gib)} GiB`, ...memory].filter(Boolean).join(" · ")],
      ["Bandwidth", `${num(e.bandwidth_gbs)} GB/s${e.cpu_bandwidth_gbs ? ` (CPU cores ${num(e.cpu_bandwidth_gbs)})` : ""}`],
      ["FP16 / FP16 acc.", e.fp16_acc16_tflops ? `${num(e.fp16_tflops, 2)} / ${num(e.fp16_acc16_tflops, 2)} TFLOPS` : `${num(e.fp16_tflops, 2)} TFLOPS`],
      ["INT8 / FP8 / FP4", e.int8_tops || e.fp8_tflops || e.fp4_tflops ? `${num(e.int8_tops)} / ${num(e.fp8_tflops)} / ${num(e.fp4_tflops)}` : null],
      ["FP32", e.fp32_tflops ? `${num(e.fp32_tflops, 2)} TFLOPS` : null],
      ["GPU", e.gpu_cores || e.gpu_clock_mhz ? `${num(e.gpu_cores, 0)} cores · ${num(e.gpu_clock_mhz, 0)} MHz` : null],
      ["CPU", e.cpu_cores ? `${num(e.cpu_cores, 0)} cores · ${num(e.cpu_threads, 0)} threads` : null],
      ["Links", [e.pcie, e.nvlink_gbs && `NVLink ${num(e.nvlink_gbs)} GB/s`].filter(Boolean).join(" · ")],
      ["Runs", `${e.backend} · ${e.engine}`],
      ["Power", e.tdp_w ? `${num(e.tdp_w, 0)} W` : null],
      ["Launch price", sizes ?? (v.launch_price_usd ? `${fmt.usd(v.launch_price_usd)}${e.launch_year ? ` (${e.launch_year})` : ""}` : null)],
      ["Street price", street && el("span", {}, ...street)],
      ["Also called", e.aliases ? e.aliases.join(", ") : null],
    ]),
    ...provenance(e),
  ];
}

/** The hardware filters: vendor, kind, at least this much memory, at most this price. */
export function hardwareFilter({ vendor, kind, memory, price }) {
  const minMemory = Number(memory) || 0;
  const maxPrice = price === "" ? null : Number(price);
  return (r) =>
    (!vendor || r.entry.vendor === vendor) &&
    (!kind || r.entry.kind === kind) &&
    r.variant.memory_gib >= minMemory &&
    (maxPrice === null || (r.variant.price && r.variant.price.usd <= maxPrice));
}

// ------------------------------------------------------------------ models, formats, engines

export function modelView(data) {
  return {
    kind: "model",
    noun: "models",
    rows: data.models.map((m) => ({ ...m, anchor: `model-${m.id}` })),
    columns: [
      { label: "Model", sort: (m) => m.name.toLowerCase(), cell: (m) => [meta(m.org, m.family, `released ${m.release_date}`)] },
      { label: "Parameters (B)", num: true, sort: (m) => m.params_b, cell: (m) => [num(m.params_b, 2), m.active_params_b ? meta(`${num(m.active_params_b, 2)} active`) : null] },
      { label: "Layers", num: true, sort: (m) => m.layers, cell: (m) => [num(m.layers, 0)] },
      { label: "KV bytes per token", num: true, sort: (m) => m.kv_bytes_per_token, cell: (m) => [num(m.kv_bytes_per_token, 0)] },
      { label: "Context", num: true, sort: (m) => m.max_context, cell: (m) => [num(m.max_context, 0)] },
      CHECKED_COLUMN((m) => m),
    ],
    details: (m) => [
      facts([
        ["Id", el("code", {}, m.id)],
        ["Parameters", `${num(m.params_b, 2)} B published · ${num(m.params_from_config_b, 2)} B counted from config.json${m.vision_params_b ? ` · vision ${num(m.vision_params_b, 2)} B` : ""}`],
        ["Hidden size", num(m.hidden_size, 0)],
        ["Heads / KV heads", `${m.heads ?? "–"} / ${m.kv_heads ?? "–"}`],
        ["Experts / per token", m.experts ? `${m.experts[0]} / ${m.experts[1]}` : "dense"],
        ["Attention", `${(m.layout || []).join(", ")}${m.windows ? ` · window ${m.windows.map((w) => num(w, 0)).join(", ")} tokens` : ""}`],
        ["KV cache per token (f16)", `${num(m.kv_bytes_per_token, 0)} bytes`],
        ["GGUF sizes, published / ours (GB)", m.sizes ? m.sizes.join(" · ") : null],
        ["Tokenizer", `${m.tokenizer}${m.reasoning ? " · reasoning" : ""}`],
        ["License", m.license],
        ["Weights", el("a", { href: `https://huggingface.co/${m.hf_repo}`, rel: "noreferrer" }, m.hf_repo)],
        ["Also called", m.aliases ? m.aliases.join(", ") : null],
      ]),
      ...provenance(m),
    ],
  };
}

export function quantView(data) {
  return {
    kind: "quant",
    noun: "formats",
    rows: data.quants.map((q) => ({ ...q, anchor: `quant-${q.id}` })),
    columns: [
      { label: "Format", sort: (q) => q.name.toLowerCase(), cell: (q) => [meta(q.family)] },
      { label: "Bits per weight", num: true, sort: (q) => q.bits_per_weight, cell: (q) => [num(q.bits_per_weight, 4)] },
      { label: "Compute", sort: (q) => q.compute_format, cell: (q) => [q.compute_format] },
    ],
    details: (q) => [
      facts([
        ["Id", el("code", {}, q.id)],
        ["Recipe", [q.recipe, q.weight_type, q.llama_ftype].filter(Boolean).join(" · ")],
        ["Engines", (q.engines || []).join(", ")],
        ["Also called", q.aliases ? q.aliases.join(", ") : null],
      ]),
      ...provenance(q),
    ],
  };
}

export function engineView(data) {
  return {
    kind: "engine",
    noun: "engines",
    rows: data.engines.map((e) => ({ ...e, anchor: `engine-${e.id}` })),
    columns: [
      { label: "Engine", sort: (e) => e.name.toLowerCase(), cell: (e) => [meta(e.base ? `based on ${e.base}` : "")] },
      { label: "Backends", cell: (e) => [(e.backends || []).join(", ")] },
      { label: "Flash attention by default", cell: (e) => [e.flash_attn_default] },
    ],
    details: (e) => [
      facts([
        ["Id", el("code", {}, e.id)],
        ["Formats", (e.formats || []).join(", ")],
        ["Also called", e.aliases ? e.aliases.join(", ") : null],
      ]),
      ...provenance(e),
    ],
  };
}
