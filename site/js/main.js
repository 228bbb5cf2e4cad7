// tokfeel's page: pickers -> the engine (Python in a Web Worker) -> numbers -> a streamed answer,
// then the rest (verdicts, charts, race, lists) in the background.
//
// The first numbers come from the build (computed by the same engine in CPython), so they show
// before Pyodide has booted; after that every change is recomputed in the worker. The whole
// state lives in the URL (state.js, schema.js).

import { EngineClient, STAGES } from "./protocol.js";
import * as fmt from "./format.js";
import { $, $$, announce, el, readJSON, reducedMotion } from "./dom.js";
import { MAX_JSON_DEPTH, jsonDepth, parseState, serializeState } from "./state.js";
import { buildSchema, quantFor } from "./schema.js";
import { Jobs } from "./jobs.js";
import { Picker } from "./pickers.js";
import { play, liveRate } from "./stream.js";
import { Gauge } from "./gauge.js";
import { renderExplain, tierText } from "./explain.js";
import { Charts } from "./charts.js";
import { Race, LANE_KEYS } from "./race.js";
import { Reverse } from "./reverse.js";
import { Agent } from "./agent.js";
import { Measure } from "./measure.js";
import { ThisComputer } from "./detect.js";
import { initTheme } from "./theme.js";
import { enableOffline } from "./offline.js";

/** Prompt presets (seed 002's cases): a label and a token count. */
const PROMPT_PRESETS = [
  ["Short question", 20],
  ["Paragraph", 150],
  ["2k document", 2000],
  ["12k paste", 12000],
  ["50k codebase", 50000],
];
/** Wait this long after the last keystroke in a number field before recomputing. */
const TYPING_DEBOUNCE_MS = 150;
/** Picker marks come in chunks of this many items per engine call. */
const MARK_CHUNK = 16;
/** Under reduced motion the streamed text changes at most this often. */
const REDUCED_MOTION_STEP_MS = 500;
const FIT_TEXT = { fits: "Fits", offload: "Offload", no: "Won't run" };
const ADVANCED_KEYS = ["depth", "kv", "gpus", "split", "slot", "nvlink", "offload", "gpu_pct", "spec", "draft", "draft_n", "workload", "batch", "threads"];
/** A boot still running after this long says so (a cold boot takes about 6 s on two slow cores). */
const SLOW_BOOT_MS = 15000;
/** The link notice names at most this many ignored settings, then counts the rest. */
const NOTICE_ITEMS = 8;
/** A pasted config.json longer than this is refused before it is parsed (real ones are a few
 *  thousand characters; a link carries at most viewFields.cfg.max_length of it, compacted). */
const MAX_PASTE_CHARACTERS = 1000000;
const ENGINE_DOWN = "The engine is not running: press Retry at the top to compute this set-up.";

const boot = readJSON("boot-config");
const viewFields = readJSON("view-fields");
const useCases = readJSON("use-cases");
const catalog = readJSON("catalog-data");
const answersData = readJSON("answers-data");
const answers = answersData.answers;
const initial = readJSON("initial-view");
const schema = buildSchema(viewFields, catalog, answers);
const devices = new Map(catalog.hardware.map((d) => [d.id, d]));
const models = new Map(catalog.models.map((m) => [m.id, m]));
const quants = new Map(catalog.quants.map((q) => [q.name, q]));

const ui = {
  status: $('[data-testid="engine-status"]'),
  statusText: $(".status-text"),
  retry: $(".retry"),
  copyLink: $("#copy-link"),
  hardware: $("#hardware-select"),
  hardwareSearch: $("#hardware-search"),
  hardwareNote: $("#hardware-note"),
  customHardware: $("#custom-hardware"),
  customHardwareError: $("#custom-hw-error"),
  hwInputs: { hw_name: $("#hw-name"), hw_bw: $("#hw-bw"), hw_mem: $("#hw-mem"), hw_tf: $("#hw-tf"), hw_kind: $("#hw-kind") },
  model: $("#model-select"),
  modelSearch: $("#model-search"),
  modelNote: $("#model-note"),
  customModel: $("#custom-model"),
  modelConfig: $("#model-config"),
  modelConfigApply: $("#model-config-apply"),
  customModelError: $("#custom-model-error"),
  quant: $("#quant-select"),
  engine: $("#engine-select"),
  prompt: $("#prompt-tokens"),
  presets: $("#prompt-presets"),
  answer: $("#answer-select"),
  answerNote: $("#answer-note"),
  thinkField: $("#think-field"),
  think: $("#think-tokens"),
  advanced: $("#advanced"),
  adv: {
    depth: $("#depth-tokens"),
    kv: $("#kv-select"),
    batch: $("#batch-input"),
    threads: $("#threads-input"),
    gpus: $("#gpus-input"),
    split: $("#split-select"),
    slot: $("#slot-select"),
    nvlink: $("#nvlink-select"),
    offload: $("#offload-select"),
    gpu_pct: $("#gpu-pct"),
    spec: $("#spec-select"),
    workload: $("#workload-select"),
    draft: $("#draft-select"),
    draft_n: $("#draft-n"),
  },
  gpuPctField: $("#gpu-pct-field"),
  draftRow: $("#draft-row"),
  formError: $("#form-error"),
  urlNotice: $("#url-notice"),
  tierBadge: $("#tier-badge"),
  setupLine: $("#setup-line"),
  decode: $('.results [data-testid="decode-tps"]'),
  decodeRange: $("#decode-range"),
  prefill: $('.results [data-testid="prefill-tps"]'),
  ttft: $('.results [data-testid="ttft"]'),
  ttftUnit: $("#ttft-unit"),
  fit: $('.results [data-testid="fit"]'),
  memorySummary: $("#memory-summary"),
  membar: $("#membar"),
  extraLine: $("#extra-line"),
  verdicts: $("#verdicts"),
  suggestionsBox: $("#suggestions-box"),
  suggestions: $("#suggestions"),
  run: $('.player [data-testid="run"]'),
  stream: $('.player [data-testid="stream"]'),
  streamText: $("#stream-text"),
  streamStatus: $("#stream-status"),
  promptText: $("#prompt-text"),
  tokensNote: $("#tokens-note"),
  breakdownDecode: $("#breakdown-decode"),
  breakdownPrefill: $("#breakdown-prefill"),
  breakdownMemory: $("#breakdown-memory"),
  memoryStack: $("#memory-stack"),
  tierNote: $("#tier-note"),
  commands: $("#commands"),
  cli: $("#cli-line"),
};

let view = {};
let current = null; // {view, request, estimate, cli, commands} shown now
let computeSeq = 0;
let player = null;
let engineReady = false;
let engineStarting = false;
let slowBootNote = "";
let recomputing = false; // a recompute is scheduled or in flight
const markCache = new Map(); // "kind|key" -> marks
const timings = { recomputeMs: [], firstNumberMs: null, engineReadyMs: null };

const client = new EngineClient({
  workerURL: new URL("./worker.js", import.meta.url).href,
  onProgress: (stage, message) => setStatus("loading", `${STAGES[stage] || message}…${slowBootNote}`),
  onFailure: (error) => engineFailed(error),
});
const jobs = new Jobs(client);
// Diagnostics for the benchmark script and the tests (read-only use).
window.__tokfeel = {
  timings,
  jobs,
  view: () => ({ ...view }),
  current: () => current,
  /** Benchmarks: play a given schedule (seconds per token) in the main stream. */
  playSchedule: (arrivals) => {
    stopStream();
    const source = answers.document.tokens;
    const tokens = Array.from({ length: arrivals.length }, (_, i) => source[i % source.length]);
    player = play({ element: ui.stream, textElement: ui.streamText, tokens, arrivals, hidden: 0 });
  },
  /** The numbers on screen are for the view in the URL and no engine work is left. */
  settled: () => engineReady && !recomputing && current !== null && JSON.stringify(current.view) === JSON.stringify(view) && !jobs.busy && jobs.queue.length === 0,
};

const gauge = new Gauge(
  { bands: $("#gauge-bands"), needle: $("#gauge-needle"), predicted: $("#gauge-predicted"), scale: $("#gauge-scale"), value: $("#live-rate"), done: $("#stream-done") },
  useCases.cases,
);
const charts = new Charts($$('[data-testid="chart"]'), new URL(boot.chartURL, document.baseURI).href);
const app = {
  jobs,
  catalog,
  answers,
  getView: () => ({ ...view }),
  setLanes: (lanes) => setView(Object.fromEntries(LANE_KEYS.map((key, i) => [key, lanes[i] || ""]))),
  useHardware: (id) => {
    setView({ hw: id });
    ui.hardware.focus();
  },
};
const thisComputer = new ThisComputer(ui.hardwareNote, app);
/** A link's state wins: detection fills only a visit whose URL names no hardware, and only
 *  until the visitor picks one. */
const urlNamedHardware = new URLSearchParams(location.search).has("hw");
let hardwarePicked = false;
let detectionAsked = false;
const race = new Race({ container: $("#lanes"), addButton: $('[data-testid="add-lane"]'), runButton: $("#race-run") }, app);
const reverse = new Reverse({ form: $("#reverse-form"), min: $("#reverse-min"), priced: $("#reverse-priced"), status: $("#reverse-status"), table: $("#reverse-table") }, app);
const agent = new Agent(
  {
    form: $("#agent-form"),
    turns: $("#agent-turns"),
    gen: $("#agent-gen"),
    tools: $("#agent-tools"),
    latency: $("#agent-latency"),
    result: $("#agent-result"),
    cache: $("#agent-cache"),
    total: $("#agent-total"),
    stack: $("#agent-stack"),
    note: $("#agent-note"),
    turnsTable: $("#agent-turns-table"),
  },
  app,
);
const measure = new Measure(
  {
    form: $("#measure-form"),
    url: $("#measure-url"),
    model: $("#measure-model"),
    run: $('[data-testid="measure-run"]'),
    status: $("#measure-status"),
    table: $("#measure-table"),
    ttft: $("#measure-ttft"),
    tps: $("#measure-tps"),
    ttftPred: $("#measure-ttft-pred"),
    ttftOwn: $("#measure-ttft-own"),
    ppPred: $("#measure-pp-pred"),
    ppOwn: $("#measure-pp-own"),
    tpsOwn: $("#measure-tps-own"),
    predicted: $('[data-testid="measure-predicted-tps"]'),
    detected: $('[data-testid="measure-model-detected"]'),
    flags: $("#measure-flags"),
    share: $('[data-testid="measure-share"]'),
    shareNote: $("#measure-share-note"),
    token: $("#measure-token"),
    origin: $("#page-origin"),
  },
  app,
);

// ---------------------------------------------------------------- pickers

function searchText(...parts) {
  return parts.flat().filter(Boolean).join(" ");
}

const pickers = {
  hardware: new Picker({
    select: ui.hardware,
    search: ui.hardwareSearch,
    items: catalog.hardware,
    groupOf: (d) => d.family,
    valueOf: (d) => d.id,
    labelOf: (d) => `${d.name} · ${fmt.gibibytes(d.memory_gib)} · ${fmt.bandwidth(d.bandwidth_gbs)}`,
    searchText: (d) => searchText(d.name, d.aliases, d.family, d.vendor, d.kind),
    extras: [["custom", "Custom hardware: enter its specs…", "Your own"]],
  }),
  models: new Picker({
    select: ui.model,
    search: ui.modelSearch,
    items: catalog.models,
    groupOf: (m) => m.family,
    valueOf: (m) => m.id,
    labelOf: (m) => `${m.name}${m.moe ? ` · ${fmt.number(m.active_params_b, 1)}B active` : ""}${m.reasoning ? " · thinks" : ""}`,
    searchText: (m) => searchText(m.name, m.aliases, m.family, m.org, m.moe ? "moe" : "dense", m.reasoning ? "reasoning thinking" : ""),
    extras: [["custom", "Custom model: paste a config.json…", "Your own"]],
  }),
  quants: new Picker({
    select: ui.quant,
    items: catalog.quants,
    groupOf: (q) => (models.get(view.model)?.quants.includes(q.name) ? `Published for ${models.get(view.model).name}` : `Other ${q.kind.toUpperCase()} formats`),
    valueOf: (q) => q.name,
    labelOf: (q) => `${q.name} · ${fmt.number(q.bits_per_weight, 2)} bpw`,
    searchText: (q) => q.name,
  }),
};

/** "4x8" -> "PCIe 4.0 x8"; "card" -> the card's own link. */
function slotLabel(slot) {
  if (slot === "card") return "as the card (x16)";
  const [gen, lanes] = slot.split("x");
  return `PCIe ${gen}.0 x${lanes}`;
}

function fillStaticPickers() {
  ui.engine.replaceChildren(el("option", { value: "" }, "Usual for the device"), ...catalog.engines.map((e) => el("option", { value: e.id }, e.name)));
  ui.answer.replaceChildren(...Object.entries(answers).map(([kind, a]) => el("option", { value: kind }, `${a.title} (${fmt.count(a.tokens.length)} tokens)`)));
  ui.adv.kv.replaceChildren(...viewFields.kv.choices.map((kv) => el("option", { value: kv }, kv === "f16" ? "f16 (default)" : kv)));
  ui.adv.slot.replaceChildren(...viewFields.slot.choices.map((slot) => el("option", { value: slot }, slotLabel(slot))));
  ui.adv.nvlink.replaceChildren(...viewFields.nvlink.choices.map((v) => el("option", { value: v }, v === "yes" ? "fitted" : "none (PCIe)")));
  const drafts = catalog.models.filter((m) => m.params_b <= 8);
  ui.adv.draft.replaceChildren(el("option", { value: "" }, "smallest of the same family"), ...drafts.map((m) => el("option", { value: m.id }, `${m.name} (${fmt.number(m.params_b, 1)}B)`)));
  for (const [label, count] of PROMPT_PRESETS) {
    ui.presets.append(
      el("button", { type: "button", class: "chip", dataset: { tokens: count }, "aria-pressed": "false", onclick: () => {
        ui.prompt.value = String(count);
        onControlsChanged();
      } }, label),
    );
  }
}

// ---------------------------------------------------------------- view <-> controls

function showView() {
  pickers.hardware.value = view.hw;
  pickers.models.value = view.model;
  pickers.quants.render();
  pickers.quants.value = view.quant;
  ui.engine.value = view.engine;
  ui.prompt.value = String(view.prompt);
  ui.answer.value = view.answer;
  ui.think.value = String(view.think);
  for (const [key, input] of Object.entries(ui.adv)) input.value = String(view[key]);
  for (const [key, input] of Object.entries(ui.hwInputs)) input.value = String(view[key]);
  if (view.cfg && ui.modelConfig.value.trim() === "") ui.modelConfig.value = JSON.stringify(JSON.parse(view.cfg), null, 2);
  if (ADVANCED_KEYS.some((key) => view[key] !== viewFields[key].default)) ui.advanced.open = true;
  showDependentFields();
}

function showDependentFields() {
  ui.customHardware.hidden = view.hw !== "custom";
  ui.customModel.hidden = view.model !== "custom";
  const model = models.get(view.model);
  ui.thinkField.hidden = !model?.reasoning;
  ui.gpuPctField.hidden = view.offload !== "layers";
  ui.draftRow.hidden = view.spec === "off";
  ui.adv.draft.disabled = view.spec !== "draft";
  ui.adv.split.disabled = view.gpus < 2;
  const device = devices.get(view.hw);
  const kind = view.hw === "custom" ? view.hw_kind : device?.kind;
  ui.adv.slot.disabled = kind !== "gpu";
  // Only a CPU device runs the model on its cores (llama.cpp -t); GPUs and Macs ignore it.
  ui.adv.threads.disabled = kind !== "cpu";
  // A bridge is an accessory of some cards and joins a pair (4 on H200 NVL); built-in NVLink
  // (SXM boards) needs no choice.
  ui.adv.nvlink.disabled = !(device?.nvlink_bridge && view.gpus > 1 && view.gpus <= device.nvlink_cards);
  ui.promptText.textContent = answers[view.answer].prompt;
  for (const button of ui.presets.children) button.setAttribute("aria-pressed", String(Number(button.dataset.tokens) === view.prompt));
  ui.hardwareNote.replaceChildren(
    ...(device
      ? [
          `${fmt.gibibytes(device.memory_gib)} · ${fmt.bandwidth(device.bandwidth_gbs)} · ${fmt.tflops(device.fp16_tflops)} FP16${device.launch_price_usd ? ` · launched at ${fmt.usd(device.launch_price_usd)}` : ""} · `,
          sourcesLink(`hw-${device.id}`, "hardware-sources-link", `Sources of the ${device.name} figures in the catalog`),
        ]
      : ["Enter the specs from the vendor's page."]),
  );
  ui.modelNote.replaceChildren(
    ...(model
      ? [
          `${model.org} · ${model.moe ? `mixture of ${fmt.count(model.experts)} experts, ${fmt.count(model.experts_per_token)} per token` : "dense"} · ${fmt.count(model.layers)} layers · up to ${fmt.tokens(model.max_context)} tokens of context${model.reasoning ? " · thinks before answering" : ""} · `,
          sourcesLink(`model-${model.id}`, "model-sources-link", `Sources of the ${model.name} architecture in the catalog`),
        ]
      : ["Read from the pasted config.json."]),
  );
  const answer = answers[view.answer];
  const characters = answer.tokens.join("").length;
  ui.answerNote.textContent = `${fmt.count(answer.tokens.length)} tokens, ${fmt.number(characters / answer.tokens.length, 1)} characters per token`;
}

/** A link to an entry of the generated catalog page (catalog.html), where every number shows its source. */
function sourcesLink(anchor, testid, label) {
  return el("a", { href: `catalog.html#${anchor}`, "data-testid": testid, "aria-label": label }, "sources");
}

function fieldError(key, result) {
  const field = viewFields[key];
  const range = field.kind === "int" || field.kind === "number" ? ` (${fmt.number(field.min, 3)} to ${fmt.number(field.max, 0)})` : "";
  return `${field.doc.replace(/^custom hardware: /, "")}: ${result.reason}${range}.`;
}

/** The view the controls show, or the errors that stop it. */
function readControls() {
  const errors = [];
  const next = { ...view };
  const read = (key, raw) => {
    const result = schema[key].parse(String(raw).trim());
    if (result.ok) next[key] = result.value;
    else errors.push([key, fieldError(key, result)]);
  };
  next.hw = ui.hardware.value;
  next.model = ui.model.value;
  next.quant = ui.quant.value;
  next.engine = ui.engine.value;
  next.answer = ui.answer.value;
  read("prompt", ui.prompt.value);
  read("think", ui.think.value);
  for (const [key, input] of Object.entries(ui.adv)) read(key, input.value);
  if (next.hw === "custom") for (const [key, input] of Object.entries(ui.hwInputs)) read(key, input.value);
  if (next.model !== view.model) {
    next.quant = quantFor(models.get(next.model), next.quant);
    if (next.spec === "draft" && next.draft && models.get(next.draft)?.tokenizer !== models.get(next.model)?.tokenizer) next.draft = "";
  }
  return { errors, next };
}

function showFormErrors(errors) {
  const hardwareErrors = errors.filter(([key]) => key.startsWith("hw_"));
  const others = errors.filter(([key]) => !key.startsWith("hw_"));
  ui.customHardwareError.hidden = !hardwareErrors.length;
  ui.customHardwareError.textContent = hardwareErrors.map(([, text]) => text).join(" ");
  ui.formError.hidden = !others.length;
  ui.formError.textContent = others.map(([, text]) => text).join(" ");
}

function writeURL() {
  const query = serializeState(view, schema);
  if (query !== location.search) history.replaceState(null, "", query || location.pathname);
}

let debounce = 0;
function onControlsChanged(event) {
  const { errors, next } = readControls();
  if (next.hw !== view.hw) hardwarePicked = true;
  showFormErrors(errors);
  if (errors.length) return;
  const typing = event?.type === "input" && event.target.type === "number";
  applyView(next, typing ? TYPING_DEBOUNCE_MS : 0);
}

/** Change part of the view from code (a suggestion, a race lane, a device from the list). */
function setView(patch) {
  if (patch.hw) hardwarePicked = true;
  const next = { ...view, ...patch };
  if (patch.model && patch.model !== view.model && !patch.quant) next.quant = quantFor(models.get(next.model), next.quant);
  applyView(next, 0);
  showView();
}

function applyView(next, delayMs) {
  const pickerChanged = next.model !== view.model;
  view = next;
  if (pickerChanged) {
    pickers.quants.render();
    pickers.quants.value = view.quant;
  }
  showDependentFields();
  writeURL();
  stopStream();
  clearTimeout(debounce);
  if (view.model === "custom" && !view.cfg) {
    renderPending("Paste a config.json and press “Use this config”.");
    return;
  }
  if (!engineReady) {
    renderWithoutEngine();
    return;
  }
  recomputing = true;
  debounce = setTimeout(recompute, delayMs);
}

function applyCustomModel() {
  const text = ui.modelConfig.value.trim();
  if (!text) {
    showCustomModelError("Paste a model's config.json first.");
    return;
  }
  if (text.length > MAX_PASTE_CHARACTERS) {
    showCustomModelError(`This is ${fmt.count(text.length)} characters; a model's config.json is a few thousand. Paste the config.json file itself.`);
    return;
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    showCustomModelError(`This JSON nests deeper than ${MAX_JSON_DEPTH} levels; a model's config.json nests a few.`);
    return;
  }
  let config;
  try {
    config = JSON.parse(text);
  } catch (error) {
    showCustomModelError(`This is not valid JSON: ${error.message}.`);
    return;
  }
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    showCustomModelError("A config.json is one JSON object ({ … }).");
    return;
  }
  const compact = JSON.stringify(config);
  if (compact.length > viewFields.cfg.max_length) {
    showCustomModelError(`This config is ${fmt.count(compact.length)} characters; a link can carry at most ${fmt.count(viewFields.cfg.max_length)}.`);
    return;
  }
  showCustomModelError("");
  setView({ model: "custom", cfg: compact });
}

function showCustomModelError(message) {
  ui.customModelError.hidden = !message;
  ui.customModelError.textContent = message;
}

// ---------------------------------------------------------------- numbers

function setMetric(element, value, text) {
  element.dataset.value = value === null ? "" : String(value);
  element.textContent = text;
}

function deviceSpec() {
  if (view.hw !== "custom") return devices.get(view.hw);
  return { name: view.hw_name, memory_gib: view.hw_mem, bandwidth_gbs: view.hw_bw, fp16_tflops: view.hw_tf };
}

function renderEstimate(result) {
  current = result;
  const e = result.estimate;
  const r = result.request;
  setMetric(ui.decode, e.decode_tps, fmt.rate(e.decode_tps));
  ui.decodeRange.textContent = `likely ${fmt.rate(e.decode_tps_low)}–${fmt.rate(e.decode_tps_high)}`;
  setMetric(ui.prefill, e.prefill_tps, fmt.rate(e.prefill_tps));
  setMetric(ui.ttft, e.ttft_s, fmt.duration(e.ttft_s));
  ui.ttftUnit.textContent = `for ${fmt.tokens(r.prompt_tokens)} prompt tokens${r.depth ? ` after ${fmt.tokens(r.depth)}` : ""}`;
  setMetric(ui.fit, e.fit, FIT_TEXT[e.fit]);
  ui.fit.dataset.verdict = e.fit;
  const m = e.memory;
  ui.memorySummary.textContent = `${fmt.gigabytes(m.total_gb)} of ${fmt.gigabytes(m.usable_gb)} usable`;
  ui.membar.querySelector(".membar-fill").style.width = `${Math.min(100, (100 * m.total_gb) / Math.max(m.usable_gb, 1e-9))}%`;
  ui.membar.dataset.verdict = e.fit;
  ui.tierBadge.textContent = e.tier;
  ui.tierBadge.dataset.tier = e.tier;
  ui.tierBadge.title = tierText(e);
  ui.setupLine.textContent = `${e.hardware.name}${e.hardware.gpus > 1 ? ` ×${e.hardware.gpus}` : ""} · ${e.model.name} · ${e.quant} · ${e.engine} on ${e.backend}${e.breakdown.cpu_threads ? ` (${fmt.count(e.breakdown.cpu_threads)} threads)` : ""}`;
  renderExtraLine(e, r);
  renderExplain(ui, result, deviceSpec());
  gauge.setPredicted(e.decode_tps);
  const answer = answers[result.view.answer];
  ui.tokensNote.textContent = `The answer is ${fmt.count(answer.tokens.length)} tokens, counted with ${answersData.tokenizer}, OpenAI's BPE tokenizer: ${fmt.number(answer.tokens.join("").length / answer.tokens.length, 1)} characters per token here; prose packs more characters into a token than code does, and Llama, Qwen or Gemma tokenizers differ by a few percent.`;
  ui.run.disabled = false;
  customErrors(null);
}

function renderExtraLine(e, r) {
  const parts = [];
  if (r.reasoning_tokens) {
    const start = e.schedule?.arrival_s[r.reasoning_tokens];
    parts.push(`Thinks for ${fmt.count(r.reasoning_tokens)} hidden tokens first: the visible answer starts after ${fmt.duration(start)}.`);
  }
  if (e.speculative) parts.push(`Speculative decoding (${e.speculative.method === "mtp" ? "MTP" : e.speculative.draft_model}): ${fmt.factor(e.speculative.speedup)} the speed without it, in bursts.`);
  if (r.batch > 1) parts.push(`${fmt.count(r.batch)} requests at once: ${fmt.rate(e.decode_tps)} tok/s each, ${fmt.rate(e.aggregate_tps)} tok/s together.`);
  if (e.fit === "offload") parts.push(`${fmt.gigabytes(e.memory.host_weights_gb)} of weights live in system RAM${e.memory.experts_on_host ? " (the MoE experts)" : ""}.`);
  ui.extraLine.hidden = parts.length === 0;
  ui.extraLine.textContent = parts.join(" ");
}

function renderPending(message = "") {
  for (const element of [ui.decode, ui.prefill, ui.ttft, ui.fit]) setMetric(element, null, "…");
  ui.decodeRange.textContent = message;
  ui.memorySummary.textContent = "";
  ui.run.disabled = true;
}

/** Whether the view in the URL is the one the build computed numbers for. */
function isBuiltView() {
  return Object.keys(schema).every((key) => view[key] === initial.view[key]);
}

/** Whether the numbers on screen were computed for the view in the URL. */
function showsThisView() {
  return Boolean(current && !current.failed && JSON.stringify(current.view) === JSON.stringify(view));
}

/** Numbers while the engine is not answering: the build's for the view it computed, else a
 *  placeholder while it starts, else why there are none. */
function renderWithoutEngine() {
  if (isBuiltView()) renderEstimate(initial);
  else if (engineStarting) renderPending();
  else renderUnavailable(ENGINE_DOWN);
}

/** No numbers can be computed for this view now (the engine is down): say so, never "NaN". */
function renderUnavailable(message) {
  renderPending(message);
  for (const element of [ui.decode, ui.prefill, ui.ttft, ui.fit]) element.textContent = "—";
}

function renderFailed(error) {
  renderUnavailable("");
  customErrors(error);
}

/** An engine error goes next to the input it is about. */
function customErrors(error) {
  const field = error?.field || "";
  const onHardware = error && view.hw === "custom" && field.startsWith("hardware");
  const onModel = error && view.model === "custom" && (field === "" || /^(cfg|config|model)/.test(field));
  ui.customHardwareError.hidden = !onHardware;
  ui.customHardwareError.textContent = onHardware ? error.message : "";
  if (onModel) showCustomModelError(error.message);
  else if (!error) showCustomModelError("");
  ui.formError.hidden = !error || onHardware || onModel;
  ui.formError.textContent = error && !onHardware && !onModel ? error.message : "";
}

function renderAdvice(advice) {
  ui.verdicts.replaceChildren(
    ...advice.verdicts.map((v) =>
      el("li", { class: `verdict level-${v.level}`, dataset: { case: v.id, level: v.level }, title: v.why },
        el("span", { class: "verdict-mark", "aria-hidden": "true" }, v.level === "good" ? "✓" : v.level === "ok" ? "~" : "✕"),
        el("span", { class: "verdict-label" }, v.label),
        el("span", { class: "verdict-range" }, `${v.low}–${v.high}${v.id === "agentic" ? "+" : ""} tok/s`),
        el("span", { class: "sr-only" }, v.level === "good" ? ": comfortable" : v.level === "ok" ? ": usable" : ": too slow")),
    ),
  );
  ui.suggestionsBox.hidden = advice.suggestions.length === 0;
  ui.suggestions.replaceChildren(
    ...advice.suggestions.map((s) =>
      el("li", { class: "suggestion", dataset: { fit: s.fit } },
        el("span", { class: "suggestion-text" }, s.text),
        el("span", { class: "suggestion-numbers" }, `${fmt.rate(s.decode_tps)} tok/s · ${FIT_TEXT[s.fit].toLowerCase()}`),
        el("button", { type: "button", class: "chip", onclick: () => { setView(s.patch); announce(`Applied: ${s.text}.`); } }, "Apply")),
    ),
  );
}

// ---------------------------------------------------------------- engine

function setStatus(state, text) {
  ui.status.dataset.state = state;
  ui.statusText.textContent = text;
  ui.retry.hidden = state !== "error";
}

function engineFailed(error) {
  if (engineStarting) return; // startEngine reports a failed start itself
  engineReady = false;
  recomputing = false;
  if (!showsThisView()) renderWithoutEngine();
  setStatus("error", `The engine stopped: ${error.message}. ${numbersNote()}; Retry starts it again.`);
}

/** What the numbers on screen are, for a status message about the engine. */
function numbersNote() {
  if (!showsThisView()) return "No numbers can be computed for this set-up until it runs";
  return current === initial ? "The numbers shown were computed when this page was built" : "The numbers shown are the last ones computed";
}

/** Boot (or reboot, from Retry) the engine; any failure leaves the numbers on screen, says what
 *  failed and offers Retry; a slow boot says so; a boot never waits forever (BOOT_TIMEOUT_MS). */
async function startEngine() {
  if (engineStarting) return;
  engineStarting = true;
  engineReady = false;
  slowBootNote = "";
  setStatus("loading", "Starting the engine…");
  const started = performance.now();
  const slowTimer = setTimeout(() => {
    slowBootNote = " This is taking longer than usual (a slow connection or a busy computer?).";
    setStatus("loading", `${ui.statusText.textContent}${slowBootNote}`);
  }, SLOW_BOOT_MS);
  try {
    await client.start({
      indexURL: new URL(boot.indexURL, document.baseURI).href,
      bundleURL: new URL(boot.bundleURL, document.baseURI).href,
      bundleIntegrity: boot.bundleIntegrity,
    });
  } catch (error) {
    engineStarting = false;
    if (!showsThisView()) renderWithoutEngine();
    setStatus("error", `The engine could not start: ${error.message}. ${numbersNote()}; Retry tries again.`);
    return;
  } finally {
    clearTimeout(slowTimer);
    engineStarting = false;
  }
  engineReady = true;
  timings.engineReadyMs = performance.now();
  setStatus("ready", `Engine ready (${fmt.duration((performance.now() - started) / 1000)} to start).`);
  enableOffline();
  await detectThisComputer();
  if (view.model === "custom" && !view.cfg) return;
  await recompute();
}

/** Ask the engine what the browser's GPU is (once); at high confidence, on a visit whose URL
 *  names no hardware, select it and write it into the URL like a pick. */
async function detectThisComputer() {
  if (detectionAsked) return;
  detectionAsked = true;
  const result = await thisComputer.detect();
  if (result?.confidence !== "high" || urlNamedHardware || hardwarePicked || view.hw === result.id) return;
  view = { ...view, hw: result.id };
  showView();
  writeURL();
  announce(`This computer's GPU, ${devices.get(result.id)?.name || result.id}, is selected.`);
}

async function recompute() {
  if (!engineReady) return;
  const seq = ++computeSeq;
  const asked = { ...view };
  jobs.cancel();
  const sent = performance.now();
  let result;
  try {
    result = await jobs.now("view", asked);
  } catch (error) {
    if (seq !== computeSeq) return;
    recomputing = false;
    if (error.engineDown) {
      // The worker died, not the input: the numbers on screen stay if they are this view's.
      if (!showsThisView()) renderWithoutEngine();
      return;
    }
    renderFailed(error);
    current = { ...(current || {}), view: asked, failed: true };
    return;
  }
  if (seq !== computeSeq) return; // a newer request is on its way
  timings.recomputeMs.push(performance.now() - sent);
  recomputing = false;
  renderEstimate({ ...result, view: asked });
  background(asked, result, seq);
}

/** Everything below the main numbers, one engine call at a time, newest view only. */
function background(asked, result, seq) {
  const stale = () => seq !== computeSeq;
  jobs.later("advice", { view: asked }).then((advice) => advice && !stale() && renderAdvice(advice)).catch(() => {});
  agent.update();
  race.update();
  for (const kind of charts.kinds) {
    charts.pending(kind);
    jobs.later(`sweep_${kind}`, { view: asked })
      .then((data) => data && !stale() && charts.show(kind, data))
      .catch((error) => !stale() && charts.failed(kind, error.message));
  }
  updateMarks(asked, stale);
  reverse.viewChanged();
}

/** Fit marks of the three pickers; each depends on the view minus its own field. */
async function updateMarks(asked, stale) {
  const ignore = { hardware: ["hw"], models: ["model", "quant", "spec", "draft"], quants: ["quant"] };
  const targets = { hardware: pickers.hardware, models: pickers.models, quants: pickers.quants };
  for (const kind of Object.keys(targets)) {
    const key = `${kind}|${JSON.stringify(Object.entries(asked).filter(([k]) => !ignore[kind].includes(k) && !LANE_KEYS.includes(k)))}`;
    if (markCache.has(key)) {
      targets[kind].setMarks(markCache.get(key));
      continue;
    }
    targets[kind].clearMarks();
    const marks = {};
    for (let offset = 0, total = Infinity; offset < total; offset += MARK_CHUNK) {
      let reply;
      try {
        reply = await jobs.later("marks", { view: asked, kind, offset, limit: MARK_CHUNK });
      } catch {
        break;
      }
      if (reply === null || stale()) return;
      total = reply.total;
      Object.assign(marks, reply.marks);
      targets[kind].setMarks(reply.marks);
    }
    if (markCache.size > 60) markCache.clear();
    markCache.set(key, marks);
  }
}

// ---------------------------------------------------------------- the stream

function stopStream() {
  player?.stop();
  player = null;
  ui.stream.dataset.state = "idle";
  gauge.setLive(null);
}

function runStream() {
  if (!current) return;
  stopStream();
  const schedule = current.estimate.schedule;
  const answer = answers[current.view.answer];
  const hidden = schedule.reasoning_tokens;
  gauge.setDone("");
  ui.streamStatus.textContent = `Processing ${fmt.tokens(current.request.prompt_tokens)} prompt tokens…`;
  player = play({
    element: ui.stream,
    textElement: ui.streamText,
    tokens: answer.tokens,
    arrivals: schedule.arrival_s,
    hidden,
    stepMs: reducedMotion() ? REDUCED_MOTION_STEP_MS : 0,
    onFrame: ({ elapsed, generated, state }) => {
      if (state === "prefill") ui.streamStatus.textContent = `Processing the prompt… ${fmt.duration(elapsed)}`;
      else if (state === "thinking") ui.streamStatus.textContent = `Thinking… ${fmt.count(generated)} of ${fmt.count(hidden)} hidden tokens`;
      else ui.streamStatus.textContent = `First token after ${fmt.duration(schedule.ttft_s)}${hidden ? `, answer after ${fmt.duration(schedule.arrival_s[hidden])}` : ""}`;
      gauge.setLive(state === "prefill" ? null : liveRate(schedule.arrival_s, elapsed));
    },
    onDone: ({ elapsed }) => {
      gauge.setLive(null);
      const end = schedule.arrival_s.at(-1);
      const text = `Done: ${fmt.count(answer.tokens.length)} tokens${hidden ? ` (and ${fmt.count(hidden)} hidden)` : ""} in ${fmt.duration(elapsed)}, ${fmt.rate((schedule.arrival_s.length - 1) / Math.max(end - schedule.ttft_s, 1e-9))} tok/s after the first.`;
      gauge.setDone(text);
      announce(text);
    },
  });
}

// ---------------------------------------------------------------- share

async function copyLink() {
  const url = location.href;
  let copied = false;
  try {
    await navigator.clipboard.writeText(url);
    copied = true;
  } catch {
    copied = false;
  }
  ui.copyLink.textContent = copied ? "Link copied" : "Copy the address bar";
  ui.copyLink.dataset.copied = String(copied);
  announce(copied ? "The link to this view is on the clipboard." : "Copying is blocked here: copy the address from the address bar.");
  setTimeout(() => (ui.copyLink.textContent = "Copy link"), 2000);
}

function readURL() {
  const parsed = parseState(location.search, schema);
  view = parsed.state;
  ui.urlNotice.hidden = !parsed.ignored.length;
  const items = parsed.ignored.slice(0, NOTICE_ITEMS).map((i) => `${i.key} (${i.reason})`);
  const more = parsed.ignored.length - items.length;
  if (more > 0) items.push(`and ${fmt.count(more)} more`);
  ui.urlNotice.textContent = parsed.ignored.length ? `Ignored from the link: ${items.join(", ")}. Using defaults instead.` : "";
}

// ---------------------------------------------------------------- start

function init() {
  fillStaticPickers();
  initTheme($("#theme-toggle"));
  readURL();
  showView();
  if (isBuiltView()) renderEstimate(initial);
  else renderPending(); // the engine starts below
  timings.firstNumberMs = performance.now();
  race.render(race.views());

  for (const element of [ui.hardware, ui.model, ui.quant, ui.engine, ui.answer, ...Object.values(ui.adv), ...Object.values(ui.hwInputs)]) {
    element.addEventListener(element.tagName === "SELECT" ? "change" : "input", onControlsChanged);
  }
  for (const element of [ui.prompt, ui.think]) element.addEventListener("input", onControlsChanged);
  ui.modelConfigApply.addEventListener("click", applyCustomModel);
  ui.run.addEventListener("click", runStream);
  ui.retry.addEventListener("click", startEngine);
  ui.copyLink.addEventListener("click", copyLink);
  window.addEventListener("popstate", () => {
    readURL();
    showView();
    applyView(view, 0);
  });
  startEngine();
}

init();
