// Measure your own: stream one chat completion from a local OpenAI-compatible server
// (llama-server, Ollama, LM Studio) and time it, only when the visitor presses Measure. TTFT is
// the wait for the first generated token; decode speed is the tokens after the first over the
// time after the first (physics.md section 11), from the server's own token count when it sends
// one. The page's CSP allows connections to localhost and 127.0.0.1 only.

import { announce } from "./dom.js";
import * as fmt from "./format.js";

const GEN_TOKENS = 256;
const TIMEOUT_MS = 180_000;
const LOCAL = /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/;
/** What a server may send before the page stops listening: a line longer than this, or more
 *  events than this, is not a chat completion of GEN_TOKENS tokens. */
const MAX_LINE_CHARACTERS = 1_000_000;
const MAX_EVENTS = GEN_TOKENS * 16;
/** Plausible values a server reports about itself; anything else is ignored, never shown. */
const MAX_PROMPT_TOKENS = 10_000_000;
const MAX_SERVER_TPS = 1_000_000;

/** `value` if it is a whole number in [lo, hi], else null. */
function wholeIn(value, lo, hi) {
  return Number.isInteger(value) && value >= lo && value <= hi ? value : null;
}

/** `value` if it is a finite number in (0, hi], else null. */
function positiveUpTo(value, hi) {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value <= hi ? value : null;
}

/** Server-sent events from a fetch body: yields [receivedAt, parsed JSON] per data line. */
async function* events(response) {
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
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      try {
        yield [at, JSON.parse(data)];
      } catch {
        // A keep-alive or a line the server did not mean as JSON.
      }
    }
  }
}

/** Time one streamed completion: {ttft_s, decode_tps, tokens, prompt_tokens, server_tps}. */
export async function measureServer(base, model, prompt, signal) {
  const started = performance.now();
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      model: model || "default",
      messages: [{ role: "user", content: prompt }],
      max_tokens: GEN_TOKENS,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    }),
    signal,
  });
  if (!response.ok) {
    const text = (await response.text()).slice(0, 200);
    throw new Error(`the server answered HTTP ${response.status}${text ? `: ${text}` : ""}`);
  }
  let first = null;
  let last = null;
  let chunks = 0;
  let usage = null;
  let serverTps = null;
  let count = 0;
  for await (const [at, event] of events(response)) {
    if (++count > MAX_EVENTS) throw new Error(`the server sent more than ${MAX_EVENTS} events for ${GEN_TOKENS} tokens`);
    if (!event || typeof event !== "object") continue;
    const delta = (Array.isArray(event.choices) && event.choices[0]?.delta) || {};
    if (typeof delta.content === "string" && delta.content || typeof delta.reasoning_content === "string" && delta.reasoning_content || typeof delta.reasoning === "string" && delta.reasoning) {
      chunks += 1;
      first ??= at;
      last = at;
    }
    if (event.usage && typeof event.usage === "object") usage = event.usage;
    serverTps = positiveUpTo(event.timings?.predicted_per_second, MAX_SERVER_TPS) ?? serverTps;
  }
  if (first === null) throw new Error("the server sent no tokens");
  // The server's own count if it is plausible for what streamed (a chunk holds a few tokens at
  // most), else the chunks counted here: a server's numbers are never shown unchecked.
  const tokens = wholeIn(usage?.completion_tokens, chunks, chunks * 8) ?? chunks;
  const span = (last - first) / 1000;
  return {
    ttft_s: (first - started) / 1000,
    decode_tps: tokens > 1 && span > 0 ? (tokens - 1) / span : null,
    tokens,
    prompt_tokens: wholeIn(usage?.prompt_tokens, 1, MAX_PROMPT_TOKENS),
    server_tps: serverTps,
  };
}

export class Measure {
  /** app: {jobs, getView(), answers} */
  constructor(ui, app) {
    Object.assign(this, { ui, app });
    ui.origin.textContent = location.origin;
    ui.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run();
    });
  }

  async run() {
    const { ui } = this;
    const base = ui.url.value.trim().replace(/\/+$/, "").replace(/\/v1$/, "");
    if (!LOCAL.test(base)) {
      ui.status.textContent = "Enter a server on this computer: http://localhost:PORT or http://127.0.0.1:PORT.";
      return;
    }
    const view = this.app.getView();
    const answer = this.app.answers[view.answer];
    ui.status.textContent = `Asking ${base} for ${GEN_TOKENS} tokens…`;
    ui.table.hidden = true; // an earlier measurement's figures never stand beside this one's status
    ui.run.disabled = true;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    let measured;
    try {
      measured = await measureServer(base, ui.model.value.trim(), answer.prompt, controller.signal);
    } catch (error) {
      ui.status.textContent = error.name === "TypeError" || error.name === "AbortError"
        ? `Could not reach ${base}: is the server running, and does it allow this page (CORS, see below)?`
        : `The measurement failed: ${error.message}.`;
      return;
    } finally {
      clearTimeout(timer);
      ui.run.disabled = false;
    }
    const promptTokens = measured.prompt_tokens || answer.prompt_tokens;
    let predicted = null;
    try {
      predicted = (await this.app.jobs.now("view", { ...view, prompt: promptTokens, lane1: "", lane2: "", lane3: "" })).estimate;
    } catch {
      // The prediction column stays empty; the measurement is still worth showing.
    }
    this.show(measured, predicted, promptTokens);
  }

  show(m, predicted, promptTokens) {
    const { ui } = this;
    ui.ttft.textContent = fmt.duration(m.ttft_s);
    ui.ttft.dataset.value = String(m.ttft_s);
    ui.tps.textContent = m.decode_tps === null ? "—" : `${fmt.rate(m.decode_tps)} tok/s`;
    ui.tps.dataset.value = m.decode_tps === null ? "" : String(m.decode_tps);
    ui.ttftPred.textContent = predicted ? fmt.duration(predicted.ttft_s) : "—";
    ui.tpsPred.textContent = predicted ? `${fmt.rate(predicted.decode_tps)} tok/s` : "—";
    ui.table.hidden = false;
    const serverNote = m.server_tps ? ` The server itself reports ${fmt.rate(m.server_tps)} tok/s.` : "";
    const text = `Measured ${fmt.count(m.tokens)} tokens after a ${fmt.count(promptTokens)}-token prompt; the prediction is for the set-up chosen above, so make sure the server runs the same model and weights. The first run after loading a model is slower: measure twice.${serverNote}`;
    ui.status.textContent = text;
    announce(`Measured ${fmt.rate(m.decode_tps)} tokens per second, ${fmt.duration(m.ttft_s)} to the first token.`);
  }
}
