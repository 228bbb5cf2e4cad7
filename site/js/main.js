// tokfeel's page: pickers -> the engine (Python in a Web Worker) -> numbers -> a streamed answer.
//
// The first numbers come from the build (computed by the same engine in CPython), so they show
// before Pyodide has booted; after that every change is recomputed in the worker.

import { EngineClient, STAGES } from "./protocol.js";
import * as fmt from "./format.js";
import { play, liveRate } from "./stream.js";
import { idField, intField, parseState, serializeState } from "./state.js";

/** Prompt presets (seed 002's cases): a label and a token count. */
const PROMPT_PRESETS = [
  ["Short question", 20],
  ["Paragraph", 150],
  ["2k document", 2000],
  ["12k paste", 12000],
  ["50k codebase", 50000],
];

/** Wait this long after the last keystroke before recomputing. */
const RECOMPUTE_DEBOUNCE_MS = 120;

const $ = (selector) => document.querySelector(selector);

function readJSON(id) {
  return JSON.parse(document.getElementById(id).textContent);
}

const boot = readJSON("boot-config");
const viewFields = readJSON("view-fields");
const catalog = readJSON("catalog-data");
const answers = readJSON("answers-data").answers;
const initial = readJSON("initial-view");

const ids = {
  hardware: new Set(catalog.hardware.map((d) => d.id)),
  model: new Set(catalog.models.map((m) => m.id)),
  quant: new Set(catalog.quants.map((q) => q.name)),
  engine: new Set(["", ...catalog.engines.map((e) => e.id)]),
  answer: new Set(Object.keys(answers)),
};

/** URL-state schema: the engine's view fields with a validator each. */
const schema = Object.fromEntries(
  Object.entries(viewFields).map(([key, spec]) => {
    const parse = spec.kind === "int" ? intField(spec.min, spec.max) : idField(ids[spec.kind]);
    return [key, { default: spec.default, parse }];
  }),
);

const ui = {
  status: $('[data-testid="engine-status"]'),
  statusText: $(".status-text"),
  retry: $(".retry"),
  hardware: $("#hardware-select"),
  model: $("#model-select"),
  quant: $("#quant-select"),
  engine: $("#engine-select"),
  prompt: $("#prompt-tokens"),
  presets: $("#prompt-presets"),
  answer: $("#answer-select"),
  formError: $("#form-error"),
  urlNotice: $("#url-notice"),
  decode: $('[data-testid="decode-tps"]'),
  decodeRange: $("#decode-range"),
  prefill: $('[data-testid="prefill-tps"]'),
  ttft: $('[data-testid="ttft"]'),
  ttftUnit: $("#ttft-unit"),
  fit: $('[data-testid="fit"]'),
  memorySummary: $("#memory-summary"),
  membar: $("#membar"),
  tier: $("#tier-note"),
  run: $('[data-testid="run"]'),
  stream: $('[data-testid="stream"]'),
  streamText: $("#stream-text"),
  streamStatus: $("#stream-status"),
  promptText: $("#prompt-text"),
  liveRate: $("#live-rate"),
  breakdown: $("#breakdown"),
  cli: $("#cli-line"),
};

let view = {};
let current = null; // {request, estimate, cli} shown now
let computeSeq = 0;
let player = null;
let engineReady = false;
const client = new EngineClient({
  workerURL: new URL("js/worker.js", document.baseURI).href,
  onProgress: (stage, message) => setStatus("loading", `${STAGES[stage] || message}…`),
  onFailure: (error) => engineFailed(error),
});

// ---------------------------------------------------------------- pickers

function option(value, label) {
  const el = document.createElement("option");
  el.value = value;
  el.textContent = label;
  return el;
}

function fillGrouped(select, items, groupOf, valueOf, labelOf) {
  select.replaceChildren();
  const groups = new Map();
  for (const item of items) {
    const name = groupOf(item);
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(item);
  }
  for (const [name, members] of groups) {
    const group = document.createElement("optgroup");
    group.label = name;
    for (const item of members) group.append(option(valueOf(item), labelOf(item)));
    select.append(group);
  }
}

function buildPickers() {
  fillGrouped(ui.hardware, catalog.hardware, (d) => d.family, (d) => d.id, (d) => `${d.name} · ${fmt.bandwidth(d.bandwidth_gbs)}`);
  fillGrouped(ui.model, catalog.models, (m) => m.family, (m) => m.id, (m) =>
    m.moe ? `${m.name} · ${m.params_b}B (${m.active_params_b}B active)` : `${m.name} · ${m.params_b}B`);
  fillGrouped(ui.quant, catalog.quants, (q) => q.kind.toUpperCase(), (q) => q.name, (q) => `${q.name} · ${q.bits_per_weight} bpw`);
  ui.engine.replaceChildren(option("", "Usual for the device"), ...catalog.engines.map((e) => option(e.id, e.name)));
  ui.answer.replaceChildren(...Object.entries(answers).map(([kind, a]) => option(kind, `${a.title} (${a.tokens.length} tokens)`)));
  for (const [label, count] of PROMPT_PRESETS) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.dataset.tokens = String(count);
    button.addEventListener("click", () => {
      ui.prompt.value = String(count);
      onControlsChanged();
    });
    ui.presets.append(button);
  }
}

function showView() {
  ui.hardware.value = view.hw;
  ui.model.value = view.model;
  ui.quant.value = view.quant;
  ui.engine.value = view.engine;
  ui.prompt.value = String(view.prompt);
  ui.answer.value = view.answer;
  ui.promptText.textContent = answers[view.answer].prompt;
}

function readControls() {
  const errors = [];
  const prompt = schema.prompt.parse(ui.prompt.value.trim());
  if (!prompt.ok) errors.push(`Prompt length: ${prompt.reason} (1 to ${viewFields.prompt.max.toLocaleString("en-US")} tokens).`);
  return {
    errors,
    view: {
      hw: ui.hardware.value,
      model: ui.model.value,
      quant: ui.quant.value,
      engine: ui.engine.value,
      prompt: prompt.ok ? prompt.value : view.prompt,
      answer: ui.answer.value,
    },
  };
}

// ---------------------------------------------------------------- numbers

function setMetric(element, value, text) {
  element.dataset.value = value === null ? "" : String(value);
  element.textContent = text;
}

const FIT_TEXT = { fits: "Fits", offload: "Offload", no: "Won't run" };

function renderEstimate(result) {
  current = result;
  const e = result.estimate;
  setMetric(ui.decode, e.decode_tps, fmt.rate(e.decode_tps));
  ui.decodeRange.textContent = `likely ${fmt.rate(e.decode_tps_low)}–${fmt.rate(e.decode_tps_high)} · ceiling ${fmt.rate(e.decode_ceiling_tps)}`;
  setMetric(ui.prefill, e.prefill_tps, fmt.rate(e.prefill_tps));
  setMetric(ui.ttft, e.ttft_s, fmt.duration(e.ttft_s));
  ui.ttftUnit.textContent = `for ${fmt.tokens(result.request.prompt_tokens)} prompt tokens`;
  setMetric(ui.fit, e.fit, FIT_TEXT[e.fit]);
  ui.fit.dataset.verdict = e.fit;
  const m = e.memory;
  ui.memorySummary.textContent = `${fmt.gigabytes(m.total_gb)} of ${fmt.gigabytes(m.usable_gb)} usable`;
  const fill = ui.membar.querySelector(".membar-fill");
  fill.style.width = `${Math.min(100, (100 * m.total_gb) / Math.max(m.usable_gb, 1e-9))}%`;
  ui.membar.dataset.verdict = e.fit;
  ui.tier.textContent = tierText(e);
  renderBreakdown(e);
  ui.cli.textContent = result.cli;
  ui.run.disabled = false;
}

function tierText(e) {
  if (e.tier === "calibrated") return `Calibrated: ${e.engine} on ${e.backend} is fitted to real measurements; the range is where 80% of them fell.`;
  if (e.tier === "measured") return "Measured: a benchmark of exactly this setup exists.";
  return `Projected: no measurements of ${e.engine} on ${e.backend} yet, so this uses the physics with borrowed efficiencies; the range is wide on purpose.`;
}

function renderBreakdown(e) {
  const b = e.breakdown;
  const m = e.memory;
  const rows = [
    ["Weights read per token", `${fmt.gigabytes(b.weights_read_gb)} at ${fmt.bandwidth(b.bandwidth_gbs)} × ${fmt.percent(b.eta_bw)} realised = ${fmt.duration(b.weights_s)}`],
    ["KV cache read per token", `${fmt.gigabytes(b.kv_read_gb)} = ${fmt.duration(b.kv_s)}`],
    ["Fixed overhead per token", fmt.duration(b.fixed_s)],
    ["Decode step", `${fmt.duration(b.step_s)} → ${fmt.rate(e.decode_tps)} tok/s (${b.memory_bound ? "memory-bound" : "compute-bound"})`],
    ["Bandwidth ceiling", `${fmt.rate(e.decode_ceiling_tps)} tok/s if only weights were read at full bandwidth`],
    ["Prefill", `${fmt.number(b.prefill_flops / 1e12, 1)} TFLOP → ${fmt.duration(b.prefill_s)}`],
    ["Memory", `weights ${fmt.gigabytes(m.weights_gb)} + KV ${fmt.gigabytes(m.kv_gb)} + buffers ${fmt.gigabytes(m.overhead_gb)} = ${fmt.gigabytes(m.total_gb)} of ${fmt.gigabytes(m.usable_gb)} usable`],
  ];
  if (m.host_weights_gb > 0) rows.push(["Offloaded to system RAM", `${fmt.gigabytes(m.host_weights_gb)} (${fmt.duration(b.host_s)} per token)`]);
  ui.breakdown.replaceChildren(
    ...rows.flatMap(([term, detail]) => {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = detail;
      return [dt, dd];
    }),
  );
}

function renderPending() {
  for (const el of [ui.decode, ui.prefill, ui.ttft, ui.fit]) setMetric(el, null, "…");
  ui.decodeRange.textContent = "";
  ui.memorySummary.textContent = "";
  ui.run.disabled = true;
}

function showFormError(message) {
  ui.formError.hidden = !message;
  ui.formError.textContent = message || "";
}

// ---------------------------------------------------------------- engine

function setStatus(state, text) {
  ui.status.dataset.state = state;
  ui.statusText.textContent = text;
  ui.retry.hidden = state !== "error";
}

function engineFailed(error) {
  engineReady = false;
  setStatus("error", `The engine stopped: ${error.message}. The numbers shown are the last ones computed.`);
}

async function startEngine() {
  setStatus("loading", "Starting the engine…");
  const started = performance.now();
  try {
    await client.start({
      indexURL: new URL(boot.indexURL, document.baseURI).href,
      bundleURL: new URL(boot.bundleURL, document.baseURI).href,
      bundleIntegrity: boot.bundleIntegrity,
    });
  } catch (error) {
    setStatus("error", `The engine could not start: ${error.message}. The numbers shown were computed when the page was built.`);
    return;
  }
  engineReady = true;
  setStatus("ready", `Engine ready (${fmt.duration((performance.now() - started) / 1000)} to start).`);
  await recompute();
}

async function recompute() {
  if (!engineReady) return;
  const seq = ++computeSeq;
  const asked = { ...view };
  try {
    const result = await client.call("view", asked);
    if (seq !== computeSeq) return; // a newer request is on its way
    showFormError("");
    renderEstimate({ ...result, view: asked });
  } catch (error) {
    if (seq !== computeSeq) return;
    renderPending();
    for (const el of [ui.decode, ui.prefill, ui.ttft, ui.fit]) el.textContent = "—";
    showFormError(error.message);
  }
}

// ---------------------------------------------------------------- interaction

let debounce = 0;
function onControlsChanged() {
  const { errors, view: next } = readControls();
  showFormError(errors.join(" "));
  if (errors.length) return;
  view = next;
  ui.promptText.textContent = answers[view.answer].prompt;
  history.replaceState(null, "", serializeState(view, schema) || location.pathname);
  stopStream();
  clearTimeout(debounce);
  if (!engineReady) {
    renderPending();
    return;
  }
  debounce = setTimeout(recompute, RECOMPUTE_DEBOUNCE_MS);
}

function stopStream() {
  player?.stop();
  player = null;
  ui.stream.dataset.state = "idle";
}

function runStream() {
  if (!current) return;
  stopStream();
  const schedule = current.estimate.schedule;
  const answer = answers[current.view.answer];
  ui.streamStatus.textContent = `Processing ${fmt.tokens(current.request.prompt_tokens)} prompt tokens…`;
  player = play({
    element: ui.stream,
    textElement: ui.streamText,
    tokens: answer.tokens,
    arrivals: schedule.arrival_s,
    hidden: schedule.reasoning_tokens,
    onFrame: ({ elapsed, state }) => {
      if (state === "prefill") ui.streamStatus.textContent = `Processing the prompt… ${fmt.duration(elapsed)}`;
      else if (state === "thinking") ui.streamStatus.textContent = "Thinking…";
      else ui.streamStatus.textContent = `First token after ${fmt.duration(schedule.ttft_s)}`;
      const live = liveRate(schedule.arrival_s, elapsed);
      ui.liveRate.textContent = state === "streaming" ? `${fmt.rate(live)} tok/s now` : "";
    },
    onDone: ({ elapsed }) => {
      ui.liveRate.textContent = `Done: ${answer.tokens.length} tokens in ${fmt.duration(elapsed)}.`;
    },
  });
}

function init() {
  buildPickers();
  const parsed = parseState(location.search, schema);
  view = parsed.state;
  if (parsed.ignored.length) {
    ui.urlNotice.hidden = false;
    ui.urlNotice.textContent = `Ignored from the link: ${parsed.ignored.map((i) => `${i.key} (${i.reason})`).join(", ")}. Using defaults instead.`;
  }
  showView();
  const sameAsBuilt = Object.keys(schema).every((key) => view[key] === initial.view[key]);
  if (sameAsBuilt) renderEstimate(initial);
  else renderPending();

  for (const el of [ui.hardware, ui.model, ui.quant, ui.engine, ui.answer]) el.addEventListener("change", onControlsChanged);
  ui.prompt.addEventListener("input", onControlsChanged);
  ui.run.addEventListener("click", runStream);
  ui.retry.addEventListener("click", startEngine);
  startEngine();
}

init();
