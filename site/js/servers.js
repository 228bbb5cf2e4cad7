// What a local server runs: llama-server (/props, /v1/models meta, /slots), Ollama (/api/ps,
// /api/show, /api/tags), LM Studio (/api/v1/models, else /api/v0/models) or any OpenAI-compatible
// server, read only when the visitor presses Measure (measure.js). Every answer is bounded in time
// and size, and every figure a server reports is checked before it is used.

/** Where servers listen by default, tried in this order when no address is entered: llama-server
 *  on 8080 and on 9931 (its announced new default), Ollama on 11434, LM Studio on 1234. */
export const DEFAULT_SERVERS = [
  ["llama-server", "http://localhost:8080"],
  ["llama-server", "http://localhost:9931"],
  ["ollama", "http://localhost:11434"],
  ["lmstudio", "http://localhost:1234"],
];
/** A metadata request (models, props) that takes longer than this is given up. */
const META_TIMEOUT_MS = 4000;
/** Most characters read from a metadata answer (real ones are a few kilobytes; /api/v0/models
 *  with hundreds of models stays far under this). */
const MAX_META_CHARACTERS = 2_000_000;

/** `value` if it is a whole number in [lo, hi], else null. */
export function wholeIn(value, lo, hi) {
  return Number.isInteger(value) && value >= lo && value <= hi ? value : null;
}

/** `value` if it is a finite number in (0, hi], else null. */
export function positiveUpTo(value, hi) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value <= hi ? value : null;
}

export function shortText(value, max = 400) {
  return typeof value === "string" ? value.slice(0, max) : "";
}

export class HttpError extends Error {
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
      build_info: shortText(props.build_info, 80),
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
      // Its release decides its engine (its Go engine before 0.30): the engine reads it.
      version: shortText(version?.version, 40),
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
