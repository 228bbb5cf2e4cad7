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
  for await (const [at, event] of events(response)) {
    const delta = event.choices?.[0]?.delta || {};
    if (delta.content || delta.reasoning_content || delta.reasoning) {
      chunks += 1;
      first ??= at;
      last = at;
    }
    if (event.usage) usage = event.usage;
    if (event.timings?.predicted_per_second) serverTps = event.timings.predicted_per_second;
  }
  if (first === null) throw new Error("the server sent no tokens");
  const tokens = usage?.completion_tokens || chunks;
  const span = (last - first) / 1000;
  return {
    ttft_s: (first - started) / 1000,
    decode_tps: tokens > 1 && span > 0 ? (tokens - 1) / span : null,
    tokens,
    prompt_tokens: usage?.prompt_tokens || null,
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
