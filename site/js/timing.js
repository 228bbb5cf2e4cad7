// One timed answer from a local server (measure.js): streamed through each server's own API
// (llama-server's OpenAI route with its `timings`, Ollama's native /api/chat with its durations,
// LM Studio's /api/v1/chat events with their stats), timed here as it arrives. TTFT is the wait for
// the first generated token; decode speed is the tokens after the first over the time after the
// first (docs/physics.md section 11), from the server's own token count when it sends a plausible one.

import { HttpError, positiveUpTo, shortText, wholeIn } from "./servers.js";

export const GEN_TOKENS = 256;
/** What a server may send before the page stops listening: a line longer than this, or more
 *  events than this, is not a chat completion of GEN_TOKENS tokens. */
const MAX_LINE_CHARACTERS = 1_000_000;
const MAX_EVENTS = GEN_TOKENS * 16;
/** Plausible values a server reports about itself; anything else is ignored, never shown. */
const MAX_PROMPT_TOKENS = 10_000_000;
const MAX_SERVER_TPS = 1_000_000;

/** A server's own figure for the CSV and the table: finite, positive, or nothing. */
function rate(value) {
  return positiveUpTo(value, MAX_SERVER_TPS);
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
