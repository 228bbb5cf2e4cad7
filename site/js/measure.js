// Measure your own: find the local server (llama-server, Ollama, LM Studio or any OpenAI-compatible
// one), read what it has loaded (servers.js), stream one answer and time it (timing.js), only when
// the visitor presses Measure (on a public page every request to localhost can raise the browser's
// permission prompt, so nothing is sent at load). The server's own timings are shown beside the
// page's.
//
// What the server runs is resolved to the catalog by the engine (engine/page/server.py, through
// the worker), which predicts for exactly that model, weight format and placement on the device in
// the pickers. The page's CSP allows connections to localhost and 127.0.0.1 only.

import { announce, el } from "./dom.js";
import * as fmt from "./format.js";
import { DEFAULT_SERVERS, identify } from "./servers.js";
import { GEN_TOKENS, measureServer } from "./timing.js";

const TIMEOUT_MS = 180_000;
const LOCAL = /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/;
const SERVER_NAMES = { "llama-server": "llama-server", ollama: "Ollama", lmstudio: "LM Studio", openai: "an OpenAI-compatible server" };
/** A model load shorter than this is Ollama's bookkeeping, not a load inside the run. */
const LOAD_FLAG_S = 1;
/** The CSV columns of data/calibration/measurements.csv (the input of python -m engine score). */
export const CSV_COLUMNS = ["source_id", "hardware", "n_devices", "split_mode", "model", "params_b", "active_params_b", "quant", "backend", "engine", "test", "n_tokens", "depth", "batch", "flash_attn", "tokens_per_s", "notes"];
/** source_id of a row a visitor copies from the page. */
export const VISITOR_SOURCE = "tokfeel_visitor_measurement";
const ENGINE_NAMES = { "llama-server": "llama.cpp", ollama: "ollama", lmstudio: "llama.cpp", openai: "other" };

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
    // The release, as calibration rows name it: python -m engine score picks Ollama's engine by it.
    server.server === "ollama" && server.report?.version ? `backend_version=${server.report.version}` : "",
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
      // The layers llama.cpp offloaded are in its load log only (no server reports them over
      // HTTP): the line, if pasted, goes to the engine as it is (engine/page/server.py reads it).
      const offloadLog = ui.log?.value.trim() || "";
      const report = offloadLog ? { ...found.report, offload_log: offloadLog } : found.report;
      resolved = named ? await this.app.jobs.now("server_model", { report, view: asked }) : null;
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
