// Measure your own: find the local server (llama-server, Ollama, LM Studio or any OpenAI-compatible
// one), read what it has loaded, stream one answer and time it, only when the visitor presses
// Measure (on a public page every request to localhost can raise the browser's permission prompt,
// so nothing is sent at load). TTFT is the wait for the first generated token; decode speed is the
// tokens after the first over the time after the first (physics.md section 11), from the server's
// own token count when it sends a plausible one. The server's own timings are shown beside them.
//
// What the server runs is resolved to the catalog by the engine (engine/page/server.py, through
// the worker), which predicts for exactly that model, weight format and placement on the device in
// the pickers. The page's CSP allows connections to localhost and 127.0.0.1 only.

import { announce, el } from "./dom.js";
import * as fmt from "./format.js";

const GEN_TOKENS = 256;
const TIMEOUT_MS = 180_000;
/** A metadata request (models, props) that takes longer than this is given up. */
const META_TIMEOUT_MS = 4000;
/** Most characters read from a metadata answer (real ones are a few kilobytes; /api/v0/models
 *  with hundreds of models stays far under this). */
const MAX_META_CHARACTERS = 2_000_000;
const LOCAL = /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/;
/** Where servers listen by default, tried in this order when no address is entered: llama-server
 *  on 8080 and on 9931 (its announced new default), Ollama on 11434, LM Studio on 1234. */
export const DEFAULT_SERVERS = [
  ["llama-server", "http://localhost:8080"],
  ["llama-server", "http://localhost:9931"],
  ["ollama", "http://localhost:11434"],
  ["lmstudio", "http://localhost:1234"],
];
const SERVER_NAMES = { "llama-server": "llama-server", ollama: "Ollama", lmstudio: "LM Studio", openai: "an OpenAI-compatible server" };
/** What a server may send before the page stops listening: a line longer than this, or more
 *  events than this, is not a chat completion of GEN_TOKENS tokens. */
const MAX_LINE_CHARACTERS = 1_000_000;
const MAX_EVENTS = GEN_TOKENS * 16;
/** Plausible values a server reports about itself; anything else is ignored, never shown. */
const MAX_PROMPT_TOKENS = 10_000_000;
const MAX_SERVER_TPS = 1_000_000;
/** A model load shorter than this is Ollama's bookkeeping, not a load inside the run. */
const LOAD_FLAG_S = 1;
/** The CSV columns of data/calibration/measurements.csv (the contract's `score` input). */
export const CSV_COLUMNS = ["source_id", "hardware", "n_devices", "split_mode", "model", "params_b", "active_params_b", "quant", "backend", "engine", "test", "n_tokens", "depth", "batch", "flash_attn", "tokens_per_s", "notes"];
/** source_id of a row a visitor copies from the page. */
export const VISITOR_SOURCE = "tokfeel_visitor_measurement";
const ENGINE_NAMES = { "llama-server": "llama.cpp", ollama: "ollama", lmstudio: "llama.cpp", openai: "other" };

/** `value` if it is a whole number in [lo, hi], else null. */
function wholeIn(value, lo, hi) {
  return Number.isInteger(value) && value >= lo && value <= hi ? value : null;
}

/** `value` if it is a finite number in (0, hi], else null. */
function positiveUpTo(value, hi) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value <= hi ? value : null;
}

function shortText(value, max = 400) {
  return typeof value === "string" ? value.slice(0, max) : "";
}

/** A server's own figure for the CSV and the table: finite, positive, or nothing. */
function rate(value) {
  return positiveUpTo(value, MAX_SERVER_TPS);
}

class HttpError extends Error {
  constructor(status, text) {
    super(`the server answered HTTP ${status}${text ? `: ${text}` : ""}`);
    this.status = status;
  }
}

/** GET (or POST) a small JSON answer, bounded in time and size; null for a 404. */
async function fetchJSON(url, { method = "GET", body, token, signal } = {}) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), META_TIMEOUT_MS);
  signal?.addEventListener("abort", () => controller.abort());
  try {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: controller.signal });
    if (response.status === 404 || response.status === 405 || response.status === 501) return null;
    const text = await readBounded(response);
    if (!response.ok) throw new HttpError(response.status, text.slice(0, 200));
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  } finally {
    clearTimeout(timer);
  }
}

async function readBounded(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (text.length > MAX_META_CHARACTERS) {
      reader.cancel();
      throw new Error("the server's answer is longer than two million characters");
    }
  }
  return text;
}

/** Lines of a streamed body: yields [receivedAt, line]. */
async function* lines(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const at = performance.now();
    buffer += decoder.decode(value, { stream: true });
    if (buffer.length > MAX_LINE_CHARACTERS && buffer.indexOf("\n") < 0) throw new Error("the server sent a line longer than a million characters; is this a chat-completion server?");
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      yield [at, line];
    }
  }
  if (buffer.trim()) yield [performance.now(), buffer.trim()];
}

/** Server-sent events: yields [receivedAt, event name, parsed JSON] per data line. */
async function* sse(response) {
  let name = "";
  for await (const [at, line] of lines(response)) {
    if (line.startsWith("event:")) {
      name = line.slice(6).trim();
      continue;
    }
    if (!line.startsWith("data:")) {
      if (line === "") name = "";
      continue;
    }
    const data = line.slice(5).trim();
    if (data === "[DONE]") return;
    try {
      yield [at, name, JSON.parse(data)];
    } catch {
      // A keep-alive or a line the server did not mean as JSON.
    }
  }
}

/** Newline-delimited JSON (Ollama's native API): yields [receivedAt, parsed JSON]. */
async function* ndjson(response) {
  for await (const [at, line] of lines(response)) {
    if (!line) continue;
    try {
      yield [at, JSON.parse(line)];
    } catch {
      // Not JSON: ignored like a keep-alive.
    }
  }
}

// ---------------------------------------------------------------- what the server runs

/** llama-server: /props (model_path, model_ftype, build, slots) and /v1/models (meta). */
async function readLlamaServer(base, options) {
  const props = await fetchJSON(`${base}/props`, options);
  if (!props || typeof props !== "object" || !("model_path" in props || "default_generation_settings" in props || "build_info" in props)) return null;
  const models = await fetchJSON(`${base}/v1/models`, options).catch(() => null);
  const entry = Array.isArray(models?.data) ? models.data[0] : null;
  const meta = entry?.meta && typeof entry.meta === "object" ? entry.meta : {};
  let busy = null;
  const slots = await fetchJSON(`${base}/slots`, options).catch(() => null);
  if (Array.isArray(slots)) busy = slots.filter((slot) => slot && slot.is_processing === true).length;
  const path = shortText(props.model_path);
  return {
    server: "llama-server",
    model: shortText(entry?.id) || "default",
    report: {
      server: "llama-server",
      names: [path.split(/[\\/]/).pop(), shortText(entry?.id)].filter(Boolean),
      ftype: shortText(props.model_ftype),
      params: positiveUpTo(meta.n_params, 1e13),
      size_bytes: positiveUpTo(meta.size, 1e14),
      n_ctx: positiveUpTo(props.default_generation_settings?.n_ctx ?? props.n_ctx, 1e8),
      n_embd: positiveUpTo(meta.n_embd, 1e6),
    },
    build: shortText(props.build_info, 80),
    slots: wholeIn(props.total_slots, 1, 4096),
    busy,
  };
}

/** Ollama: /api/ps (loaded models, size and size_vram), /api/show (model_info), /api/tags (file size). */
async function readOllama(base, wanted, options) {
  const ps = await fetchJSON(`${base}/api/ps`, options);
  if (!ps || !Array.isArray(ps.models)) return null;
  const loaded = ps.models.filter((m) => m && typeof m === "object");
  const chosen = loaded.find((m) => m.name === wanted || m.model === wanted) || (wanted ? { name: wanted, model: wanted } : loaded[0]);
  if (!chosen) return { server: "ollama", model: "", empty: "Ollama runs, but no model is loaded: give a model name (it will be loaded inside the run, which the measurement then flags), or run one first (ollama run MODEL)." };
  const name = shortText(chosen.model || chosen.name);
  const show = await fetchJSON(`${base}/api/show`, { ...options, method: "POST", body: { model: name } }).catch(() => null);
  const info = show?.model_info && typeof show.model_info === "object" ? show.model_info : {};
  const arch = shortText(info["general.architecture"]);
  const tags = await fetchJSON(`${base}/api/tags`, options).catch(() => null);
  const file = Array.isArray(tags?.models) ? tags.models.find((m) => m && (m.model === name || m.name === name)) : null;
  const details = { ...(chosen.details || {}), ...(show?.details || {}) };
  const version = await fetchJSON(`${base}/api/version`, options).catch(() => null);
  return {
    server: "ollama",
    model: name,
    report: {
      server: "ollama",
      names: [name, shortText(info["general.basename"]), shortText(info["general.name"])].filter(Boolean),
      arch,
      ftype: shortText(details.quantization_level),
      params: positiveUpTo(info["general.parameter_count"], 1e13),
      params_string: shortText(details.parameter_size, 20),
      size_bytes: positiveUpTo(file?.size, 1e14),
      loaded_bytes: positiveUpTo(chosen.size, 1e14),
      size_vram: typeof chosen.size_vram === "number" && chosen.size_vram >= 0 ? Math.min(chosen.size_vram, 1e14) : null,
      n_ctx: positiveUpTo(chosen.context_length, 1e8),
      layers: positiveUpTo(info[`${arch}.block_count`], 1e4),
      n_embd: positiveUpTo(info[`${arch}.embedding_length`], 1e6),
    },
    build: version?.version ? `Ollama ${shortText(version.version, 40)}` : "",
    others: loaded.length - (loaded.includes(chosen) ? 1 : 0),
  };
}

/** LM Studio: /api/v1/models (0.4+), else /api/v0/models (0.3.6+). */
async function readLmStudio(base, wanted, options) {
  const v1 = await fetchJSON(`${base}/api/v1/models`, options);
  if (v1 && Array.isArray(v1.models)) {
    const models = v1.models.filter((m) => m && m.type !== "embedding");
    const loaded = models.filter((m) => Array.isArray(m.loaded_instances) && m.loaded_instances.length);
    const chosen = models.find((m) => m.key === wanted) || loaded[0];
    if (!chosen) return { server: "lmstudio", model: "", empty: "LM Studio runs, but no model is loaded: load one (or give its name)." };
    const config = chosen.loaded_instances?.[0]?.config || {};
    return {
      server: "lmstudio",
      api: "v1",
      model: shortText(chosen.key),
      report: {
        server: "lmstudio",
        names: [shortText(chosen.key), shortText(chosen.display_name)].filter(Boolean),
        arch: shortText(chosen.architecture),
        ftype: shortText(chosen.quantization?.name),
        format: shortText(chosen.format),
        params_string: shortText(chosen.params_string, 20),
        size_bytes: positiveUpTo(chosen.size_bytes, 1e14),
        n_ctx: positiveUpTo(config.context_length, 1e8),
      },
      flashAttention: typeof config.flash_attention === "boolean" ? config.flash_attention : null,
      build: "LM Studio",
    };
  }
  const v0 = await fetchJSON(`${base}/api/v0/models`, options);
  if (!v0 || !Array.isArray(v0.data)) return null;
  const chosen = v0.data.find((m) => m && m.id === wanted) || v0.data.find((m) => m && m.state === "loaded" && m.type !== "embeddings");
  if (!chosen) return { server: "lmstudio", model: "", empty: "LM Studio runs, but no model is loaded: load one (or give its name)." };
  return {
    server: "lmstudio",
    api: "v0",
    model: shortText(chosen.id),
    report: { server: "lmstudio", names: [shortText(chosen.id)], arch: shortText(chosen.arch), ftype: shortText(chosen.quantization), format: shortText(chosen.compatibility_type), n_ctx: positiveUpTo(chosen.loaded_context_length ?? chosen.max_context_length, 1e8) },
    build: "LM Studio",
  };
}

/** Which server answers at `base` and what it runs; `hint` says which to ask first. */
export async function identify(base, { wanted = "", token = "", hint = "", signal } = {}) {
  const options = { token, signal };
  const readers = { "llama-server": () => readLlamaServer(base, options), ollama: () => readOllama(base, wanted, options), lmstudio: () => readLmStudio(base, wanted, options) };
  const order = hint ? [hint, ...Object.keys(readers).filter((k) => k !== hint)] : Object.keys(readers);
  let reached = false;
  let lastError = null;
  for (const kind of order) {
    try {
      const found = await readers[kind]();
      reached = true;
      if (found) return found;
    } catch (error) {
      if (error instanceof HttpError) {
        reached = true;
        if (error.status === 401 || error.status === 403) return { server: kind, model: "", auth: true, error };
      }
      lastError = error;
    }
  }
  return reached ? { server: "openai", model: wanted || "default", report: { server: "openai", names: wanted ? [wanted] : [] }, build: "" } : { unreachable: true, error: lastError };
}

// ---------------------------------------------------------------- one timed answer

function emptyCount() {
  return { first: null, last: null, chunks: 0, events: 0 };
}

function counted(state, at) {
  state.chunks += 1;
  state.first ??= at;
  state.last = at;
}

function tick(state) {
  if (++state.events > MAX_EVENTS) throw new Error(`the server sent more than ${MAX_EVENTS} events for ${GEN_TOKENS} tokens`);
}

async function post(url, body, token, signal) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal });
  if (!response.ok) {
    const text = (await response.text()).slice(0, 200);
    throw new HttpError(response.status, text);
  }
  return response;
}

/** OpenAI-compatible streaming (llama-server, LM Studio v0, any other): the page's timing plus
 *  llama-server's `timings` and LM Studio's `stats` when they come. */
async function streamOpenAI(url, model, prompt, token, signal) {
  const response = await post(url, { model: model || "default", messages: [{ role: "user", content: prompt }], max_tokens: GEN_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } }, token, signal);
  const state = emptyCount();
  let usage = null;
  const own = {};
  for await (const [at, , event] of sse(response)) {
    tick(state);
    if (!event || typeof event !== "object") continue;
    const delta = (Array.isArray(event.choices) && event.choices[0]?.delta) || {};
    if ((typeof delta.content === "string" && delta.content) || (typeof delta.reasoning_content === "string" && delta.reasoning_content) || (typeof delta.reasoning === "string" && delta.reasoning)) counted(state, at);
    if (event.usage && typeof event.usage === "object") usage = event.usage;
    const t = event.timings;
    if (t && typeof t === "object") {
      own.decode_tps = rate(t.predicted_per_second) ?? own.decode_tps;
      own.prompt_tps = rate(t.prompt_per_second) ?? own.prompt_tps;
      own.prompt_tokens = wholeIn(t.prompt_n, 0, MAX_PROMPT_TOKENS) ?? own.prompt_tokens;
      own.gen_tokens = wholeIn(t.predicted_n, 1, GEN_TOKENS * 8) ?? own.gen_tokens;
      own.cache_n = wholeIn(t.cache_n, 0, MAX_PROMPT_TOKENS) ?? own.cache_n;
      own.draft_n = wholeIn(t.draft_n, 0, GEN_TOKENS * 64) ?? own.draft_n;
    }
    const s = event.stats;
    if (s && typeof s === "object") {
      own.decode_tps = rate(s.tokens_per_second) ?? own.decode_tps;
      own.ttft_s = positiveUpTo(s.time_to_first_token, 3600) ?? own.ttft_s;
    }
  }
  return { state, usage, own };
}

/** Ollama's native /api/chat: NDJSON, the last object carries the server's own durations (ns). */
async function streamOllama(base, model, prompt, signal) {
  const response = await post(`${base}/api/chat`, { model, messages: [{ role: "user", content: prompt }], stream: true, options: { num_predict: GEN_TOKENS, temperature: 0 } }, "", signal);
  const state = emptyCount();
  const own = {};
  let usage = null;
  for await (const [at, event] of ndjson(response)) {
    tick(state);
    if (!event || typeof event !== "object") continue;
    if (typeof event.error === "string") throw new Error(`Ollama: ${event.error.slice(0, 200)}`);
    const message = event.message || {};
    if ((typeof message.content === "string" && message.content) || (typeof message.thinking === "string" && message.thinking)) counted(state, at);
    if (event.done === true) {
      const seconds = (ns) => (positiveUpTo(ns, 1e15) ?? 0) / 1e9;
      const evalCount = wholeIn(event.eval_count, 1, GEN_TOKENS * 8);
      const promptCount = wholeIn(event.prompt_eval_count, 0, MAX_PROMPT_TOKENS);
      if (evalCount && seconds(event.eval_duration) > 0) own.decode_tps = rate(evalCount / seconds(event.eval_duration));
      if (promptCount && seconds(event.prompt_eval_duration) > 0) own.prompt_tps = rate(promptCount / seconds(event.prompt_eval_duration));
      own.prompt_tokens = promptCount ?? undefined;
      own.gen_tokens = evalCount ?? undefined;
      own.load_s = seconds(event.load_duration);
      usage = { completion_tokens: evalCount, prompt_tokens: promptCount };
    }
  }
  return { state, usage, own };
}

/** LM Studio's /api/v1/chat: named SSE events; chat.end carries the server's stats. */
async function streamLmStudio(base, model, prompt, token, signal) {
  const response = await post(`${base}/api/v1/chat`, { model, input: prompt, stream: true, max_output_tokens: GEN_TOKENS, temperature: 0, store: false }, token, signal);
  const state = emptyCount();
  const own = {};
  let usage = null;
  for await (const [at, name, event] of sse(response)) {
    tick(state);
    if (!event || typeof event !== "object") continue;
    const type = event.type || name;
    if ((type === "message.delta" || type === "reasoning.delta") && typeof event.content === "string" && event.content) counted(state, at);
    if (type === "model_load.start") own.load_s = own.load_s || 1e-3;
    if (type === "model_load.end") own.load_s = positiveUpTo(event.load_time_seconds, 36000) ?? own.load_s;
    if (type === "error") throw new Error(`LM Studio: ${shortText(event.error?.message, 200) || "error"}`);
    if (type === "chat.end") {
      const stats = event.result?.stats || {};
      own.decode_tps = rate(stats.tokens_per_second);
      own.ttft_s = positiveUpTo(stats.time_to_first_token_seconds, 3600) ?? undefined;
      own.prompt_tokens = wholeIn(stats.input_tokens, 0, MAX_PROMPT_TOKENS) ?? undefined;
      own.gen_tokens = wholeIn(stats.total_output_tokens, 1, GEN_TOKENS * 8) ?? undefined;
      if (positiveUpTo(stats.model_load_time_seconds, 36000)) own.load_s = stats.model_load_time_seconds;
      usage = { completion_tokens: own.gen_tokens, prompt_tokens: own.prompt_tokens };
    }
  }
  return { state, usage, own };
}

/** Time one streamed answer from the server `found` describes:
 *  {ttft_s, decode_tps, tokens, prompt_tokens, server_tps, own}. */
export async function measureServer(base, found, prompt, { token = "", signal } = {}) {
  const started = performance.now();
  let run;
  if (found.server === "ollama") run = await streamOllama(base, found.model, prompt, signal);
  else if (found.server === "lmstudio" && found.api === "v1") run = await streamLmStudio(base, found.model, prompt, token, signal);
  else if (found.server === "lmstudio") run = await streamOpenAI(`${base}/api/v0/chat/completions`, found.model, prompt, token, signal);
  else run = await streamOpenAI(`${base}/v1/chat/completions`, found.model, prompt, token, signal);
  const { state, usage, own } = run;
  if (state.first === null) throw new Error("the server sent no tokens");
  // The server's own count if it is plausible for what streamed (a chunk holds a few tokens at
  // most), else the chunks counted here: a server's numbers are never shown unchecked.
  const tokens = wholeIn(usage?.completion_tokens, state.chunks, state.chunks * 8) ?? state.chunks;
  const span = (state.last - state.first) / 1000;
  return {
    ttft_s: (state.first - started) / 1000,
    decode_tps: tokens > 1 && span > 0 ? (tokens - 1) / span : null,
    tokens,
    prompt_tokens: wholeIn(usage?.prompt_tokens, 1, MAX_PROMPT_TOKENS) ?? (own.prompt_tokens || null),
    server_tps: own.decode_tps ?? null,
    own,
  };
}

// ---------------------------------------------------------------- sharing

function csvField(value) {
  const text = value === null || value === undefined ? "" : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The measurement as calibration rows (a pp row and a tg row), in the exact columns of
 *  data/calibration/measurements.csv, with the header. */
export function shareRows({ device, model, quant, engine, measured, server, build, when }) {
  const own = measured.own || {};
  const notes = (test) => [
    `measured from the tokfeel page (${when}) against ${SERVER_NAMES[server.server] || server.server}${build ? ` ${build}` : ""}`,
    server.model ? `server model '${server.model}'` : "",
    test === "tg" ? `decode: ${own.decode_tps ? "the server's own rate" : "timed by the page"}; first token after ${measured.ttft_s.toFixed(3)} s` : "prefill: the server's own rate",
    own.cache_n ? `cache_n=${own.cache_n}` : "",
    own.draft_n ? `draft_n=${own.draft_n} (speculative decoding)` : "",
    own.load_s >= LOAD_FLAG_S ? `model loaded inside the run (${own.load_s.toFixed(1)} s)` : "",
  ].filter(Boolean).join("; ");
  const base = {
    source_id: VISITOR_SOURCE,
    hardware: device.name,
    n_devices: device.gpus || 1,
    split_mode: "none",
    model: model.name,
    params_b: model.params_b,
    active_params_b: model.active_params_b,
    quant,
    backend: device.backend || "",
    engine,
    depth: 0,
    batch: 1,
    flash_attn: server.flashAttention === null || server.flashAttention === undefined ? "" : server.flashAttention ? 1 : 0,
  };
  const rows = [];
  const promptTokens = own.prompt_tokens || measured.prompt_tokens;
  if (own.prompt_tps && promptTokens) rows.push({ ...base, test: "pp", n_tokens: promptTokens, tokens_per_s: Number(own.prompt_tps.toFixed(2)), notes: notes("pp") });
  const decode = own.decode_tps || measured.decode_tps;
  if (decode) rows.push({ ...base, test: "tg", n_tokens: own.gen_tokens || measured.tokens, tokens_per_s: Number(decode.toFixed(2)), notes: notes("tg") });
  if (!rows.length) return "";
  return [CSV_COLUMNS.join(","), ...rows.map((row) => CSV_COLUMNS.map((c) => csvField(row[c])).join(","))].join("\n") + "\n";
}

// ---------------------------------------------------------------- the panel

/** The Measure panel is reachable at #measure: opened and scrolled into view whatever the layout
 *  hides (a closed <details>, a hidden section or tab panel, whose tab is then selected). */
export function revealFromFragment(ids = ["measure"]) {
  const id = decodeURIComponent(location.hash.slice(1));
  if (!ids.includes(id)) return;
  const target = document.getElementById(id);
  if (!target) return;
  for (let node = target; node && node !== document.body; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
    if (node.hidden) {
      if (node.id) document.querySelector(`[aria-controls="${CSS.escape(node.id)}"]`)?.click();
      node.hidden = false;
    }
  }
  requestAnimationFrame(() => target.scrollIntoView({ block: "start" }));
}

/** Why a request to a local server failed, honestly: a browser cannot tell "blocked" from "not
 *  running", so both are said, with what to do about each for this browser and this page. */
export function unreachableText(bases, origin = location.origin, ua = navigator.userAgent) {
  const where = bases.join(", ");
  const parts = [`Nothing answered at ${where}. Either no server is running there, or the browser blocked the request: from a page it cannot tell the two apart.`];
  const publicPage = !/^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(origin);
  const safari = /Safari\//.test(ua) && !/Chrom(e|ium)\/|Edg\//.test(ua);
  if (safari && origin.startsWith("https:")) parts.push("Safari never lets an https page reach http://localhost: open tokfeel from this computer instead (download the site and run `python3 -m http.server` in its folder, then open http://localhost:8000).");
  else if (publicPage && /Chrom(e|ium)\//.test(ua)) parts.push("Chrome and Edge ask once whether this page may reach devices on your local network: allow it (site settings, Local network access) and press Measure again.");
  parts.push("If the server runs, it must allow this page's origin (CORS): llama-server allows any origin unless started with a restricted --cors-origins; Ollama needs OLLAMA_ORIGINS=" + origin + " (pages on localhost are allowed by default); LM Studio needs Enable CORS in its server settings (lms server start --cors).");
  return parts.join(" ");
}

export class Measure {
  /** app: {jobs, getView(), answers, catalog, device() (the device in the pickers)} */
  constructor(ui, app) {
    Object.assign(this, { ui, app });
    ui.origin.textContent = location.origin;
    ui.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run();
    });
    ui.share?.addEventListener("click", () => this.copyShare());
    this.models = new Map(app.catalog.models.map((m) => [m.id, m]));
    this.devices = new Map(app.catalog.hardware.map((d) => [d.id, d]));
  }

  setStatus(text) {
    this.ui.status.textContent = text;
  }

  async find(entered, wanted, token, signal) {
    if (entered) {
      const found = await identify(entered, { wanted, token, signal });
      // Metadata may be refused (an OpenAI-compatible server without those routes, or without
      // CORS on them) while chat still answers: the timed request decides.
      return [entered, found.unreachable ? { server: "openai", model: wanted || "default", report: { server: "openai", names: wanted ? [wanted] : [] }, build: "" } : found];
    }
    for (const [hint, base] of DEFAULT_SERVERS) {
      this.setStatus(`Looking for a server at ${base}…`);
      const found = await identify(base, { wanted, token, hint, signal });
      if (!found.unreachable) return [base, found];
    }
    return [null, { unreachable: true }];
  }

  async run() {
    const { ui } = this;
    const entered = ui.url.value.trim().replace(/\/+$/, "").replace(/\/(v1|api)$/, "");
    if (entered && !LOCAL.test(entered)) {
      this.setStatus("Enter a server on this computer: http://localhost:PORT or http://127.0.0.1:PORT (or leave it empty to try the usual ports).");
      return;
    }
    const view = this.app.getView();
    const answer = this.app.answers[view.answer];
    const wanted = ui.model.value.trim();
    const token = ui.token?.value.trim() || "";
    this.clear();
    ui.run.disabled = true;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    let base;
    let found;
    let measured;
    try {
      this.setStatus(entered ? `Asking ${entered} what it runs…` : "Looking for a server on this computer…");
      [base, found] = await this.find(entered, wanted, token, controller.signal);
      if (found.unreachable) {
        this.setStatus(unreachableText(entered ? [entered] : DEFAULT_SERVERS.map(([, b]) => b)));
        return;
      }
      if (found.auth) {
        this.setStatus(`${SERVER_NAMES[found.server]} at ${base} asks for an API token (HTTP ${found.error.status}): enter it in "API token" and press Measure again.`);
        return;
      }
      if (found.empty) {
        this.setStatus(found.empty);
        return;
      }
      this.setStatus(`Asking ${SERVER_NAMES[found.server]} at ${base} for ${GEN_TOKENS} tokens${found.model && found.model !== "default" ? ` of ${found.model}` : ""}…`);
      measured = await measureServer(base, found, answer.prompt, { token, signal: controller.signal });
    } catch (error) {
      this.setStatus(error.name === "TypeError" || error.name === "AbortError"
        ? `Could not reach ${base || entered}: ${unreachableText([base || entered])}`
        : `The measurement failed: ${error.message}.`);
      return;
    } finally {
      clearTimeout(timer);
      ui.run.disabled = false;
    }
    const promptTokens = measured.prompt_tokens || answer.prompt_tokens;
    const asked = { ...view, prompt: promptTokens, lane1: "", lane2: "", lane3: "" };
    let resolved = null;
    let predicted = null;
    try {
      const named = found.server !== "openai" || found.report.names.length > 0;
      resolved = named ? await this.app.jobs.now("server_model", { report: found.report, view: asked }) : null;
      predicted = resolved?.estimate || (await this.app.jobs.now("view", asked)).estimate;
    } catch (error) {
      resolved = resolved || { model: "", text: `Not resolved: ${error.message}.`, checks: [] };
    }
    this.show({ base, found, measured, resolved, predicted, promptTokens, view: resolved?.view || asked });
  }

  clear() {
    const { ui } = this;
    ui.table.hidden = true; // an earlier measurement's figures never stand beside this one's status
    ui.detected.dataset.value = "";
    ui.detected.textContent = "";
    ui.predicted.dataset.value = "";
    if (ui.share) {
      ui.share.hidden = true;
      ui.share.dataset.value = "";
    }
    ui.flags.replaceChildren();
    this.last = null;
  }

  show({ base, found, measured: m, resolved, predicted, promptTokens, view }) {
    const { ui } = this;
    const own = m.own || {};
    const cell = (node, value, text) => {
      node.dataset.value = value === null || value === undefined ? "" : String(value);
      node.textContent = text;
    };
    cell(ui.ttft, m.ttft_s, fmt.duration(m.ttft_s));
    cell(ui.tps, m.decode_tps, m.decode_tps === null ? "—" : `${fmt.rate(m.decode_tps)} tok/s`);
    ui.ttftPred.textContent = predicted ? fmt.duration(predicted.ttft_s) : "—";
    cell(ui.predicted, predicted ? predicted.decode_tps : null, predicted ? `${fmt.rate(predicted.decode_tps)} tok/s` : "—");
    if (ui.ttftOwn) ui.ttftOwn.textContent = own.ttft_s ? fmt.duration(own.ttft_s) : "—";
    if (ui.tpsOwn) ui.tpsOwn.textContent = own.decode_tps ? `${fmt.rate(own.decode_tps)} tok/s` : "—";
    if (ui.ppOwn) ui.ppOwn.textContent = own.prompt_tps ? `${fmt.rate(own.prompt_tps)} tok/s` : "—";
    if (ui.ppPred) ui.ppPred.textContent = predicted ? `${fmt.rate(predicted.prefill_tps)} tok/s` : "—";
    ui.table.hidden = false;
    const model = resolved?.model ? this.models.get(resolved.model) : null;
    cell(ui.detected, resolved?.model || "", resolved?.text || (found.server === "openai" ? "The server does not say what it runs (an OpenAI-compatible server without llama-server's, Ollama's or LM Studio's own API): the prediction is for the set-up chosen above, so make sure the server runs the same model and weights." : ""));
    const flags = this.flags(found, m, resolved);
    ui.flags.replaceChildren(...flags.map((text) => el("li", {}, text)));
    const device = view.hw === "custom" ? { name: view.hw_name, backend: "" } : this.devices.get(view.hw);
    const where = device ? ` on the ${device.name} chosen above` : "";
    this.setStatus(`Measured ${fmt.count(m.tokens)} tokens after a ${fmt.count(promptTokens)}-token prompt from ${SERVER_NAMES[found.server]} at ${base}; the prediction is for ${model ? `${model.name}, ${resolved.quant},` : "the set-up chosen above"}${where}. ${m.server_tps ? `The server itself reports ${fmt.rate(m.server_tps)} tok/s.` : ""} The first run after loading a model is slower: measure twice.`.replace(/\s+/g, " ").trim());
    if (model && device && ui.share && view.hw !== "custom") {
      const csv = shareRows({
        device: { ...device, gpus: view.gpus, backend: predicted?.backend || "" },
        model,
        quant: resolved.quant,
        engine: ENGINE_NAMES[found.server],
        measured: m,
        server: found,
        build: found.build,
        when: new Date().toISOString().slice(0, 10),
      });
      ui.share.dataset.value = csv;
      ui.share.hidden = !csv;
    }
    this.last = { found, measured: m, resolved };
    const rate = own.decode_tps || m.decode_tps;
    if (model && rate && view.hw !== "custom") this.app.setMeasured?.({ hw: view.hw, model: model.id, quant: resolved.quant, decode_tps: rate });
    announce(`Measured ${fmt.rate(m.decode_tps)} tokens per second, ${fmt.duration(m.ttft_s)} to the first token.`);
  }

  /** What makes this run unlike the prediction. */
  flags(found, m, resolved) {
    const own = m.own || {};
    const out = [...(resolved?.checks || [])];
    if (own.cache_n) out.push(`${fmt.count(own.cache_n)} prompt tokens came from the server's prompt cache: its prefill was not a full one.`);
    if (own.load_s >= LOAD_FLAG_S) out.push(`The server loaded the model inside this run (${fmt.duration(own.load_s)}): the time to first token includes it; measure again.`);
    if (own.draft_n) out.push(`Speculative decoding is on (${fmt.count(own.draft_n)} drafted tokens): decode runs in bursts, faster than the prediction without it.`);
    if (found.busy) out.push(`${fmt.count(found.busy)} other request${found.busy > 1 ? "s were" : " was"} running on the server (busy slots): they share its speed.`);
    if (found.others) out.push(`${fmt.count(found.others)} other model${found.others > 1 ? "s are" : " is"} loaded and share the memory.`);
    return out;
  }

  async copyShare() {
    const text = this.ui.share.dataset.value;
    if (!text) return;
    let copied = false;
    try {
      await navigator.clipboard.writeText(text);
      copied = true;
    } catch {
      copied = false;
    }
    this.ui.shareNote.textContent = copied
      ? "Copied: two rows in the format of data/calibration/measurements.csv. Paste them into an issue or a pull request to contribute them."
      : `Copying is blocked here; the rows are:\n${text}`;
    announce(copied ? "The measurement rows are on the clipboard." : "Copying is blocked: the rows are shown below the button.");
  }
}
