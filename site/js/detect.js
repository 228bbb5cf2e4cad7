// This computer: read what the browser says about its GPU, on the main thread, and let the engine
// (engine/page/detect.py, through the worker) map it to a catalog device with a confidence. The
// rule and the names live there; this module only reads the signals and shows the answer.
// Nothing read here leaves the page.
//
// A link's state always wins: the page preselects the detected device only on a visit whose URL
// names no hardware, only at high confidence, and then writes it into the URL like a pick.
// Otherwise the detection is a one-click suggestion (for a chip with variants, one per variant).

import { el } from "./dom.js";

/** WebGPU adapters can take a while (or never answer) on some drivers: wait at most this long. */
const WEBGPU_TIMEOUT_MS = 1500;
/** Signals are cut to the engine's limit (engine/page/detect.py MAX_SIGNAL_LENGTH). */
const MAX_SIGNAL = 400;

function text(value) {
  return typeof value === "string" ? value.slice(0, MAX_SIGNAL) : "";
}

function withTimeout(promise, ms) {
  return Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(null), ms))]);
}

/** The unmasked WebGL renderer and vendor of a context of a canvas made here (never drawn). */
function readWebGL() {
  try {
    const canvas = document.createElement("canvas");
    const gl = canvas.getContext("webgl2") || canvas.getContext("webgl");
    if (!gl) return {};
    const ext = gl.getExtension("WEBGL_debug_renderer_info");
    // Firefox deprecated the extension and puts its sanitised renderer in RENDERER itself.
    const renderer = ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
    const vendor = ext ? gl.getParameter(ext.UNMASKED_VENDOR_WEBGL) : gl.getParameter(gl.VENDOR);
    gl.getExtension("WEBGL_lose_context")?.loseContext();
    return { renderer: text(renderer), vendor: text(vendor) };
  } catch {
    return {};
  }
}

async function adapterInfo(options) {
  const adapter = await withTimeout(navigator.gpu.requestAdapter(options), WEBGPU_TIMEOUT_MS);
  if (!adapter) return null;
  if (adapter.info) return adapter.info;
  return typeof adapter.requestAdapterInfo === "function" ? withTimeout(adapter.requestAdapterInfo(), WEBGPU_TIMEOUT_MS) : null;
}

/** WebGPU's adapter (vendor, architecture) as a cross-check, and the high-performance adapter's
 *  vendor when it differs (a laptop with two GPUs). */
async function readWebGPU() {
  if (!navigator.gpu || typeof navigator.gpu.requestAdapter !== "function") return {};
  try {
    const info = await adapterInfo();
    const fast = await adapterInfo({ powerPreference: "high-performance" });
    const out = { gpu_vendor: text(info?.vendor), gpu_architecture: text(info?.architecture), gpu_description: text(info?.description) };
    if (fast?.vendor && fast.vendor !== info?.vendor) out.hybrid_vendor = text(fast.vendor);
    return out;
  } catch {
    return {};
  }
}

/** Chromium's user-agent hints: platform, CPU architecture, phone or not. */
async function readHints() {
  const data = navigator.userAgentData;
  if (!data || typeof data.getHighEntropyValues !== "function") return {};
  try {
    const values = await withTimeout(data.getHighEntropyValues(["architecture", "platform"]), WEBGPU_TIMEOUT_MS);
    return { platform: text(values?.platform || data.platform), architecture: text(values?.architecture), mobile: Boolean(data.mobile) };
  } catch {
    return { platform: text(data.platform), mobile: Boolean(data.mobile) };
  }
}

/** Every signal, as engine/page/detect.py read_signals takes them. Never throws. */
export async function readSignals() {
  const [gpu, hints] = await Promise.all([readWebGPU(), readHints()]);
  const cores = navigator.hardwareConcurrency;
  const memory = navigator.deviceMemory;
  return {
    ...readWebGL(),
    ...gpu,
    ...hints,
    cores: Number.isFinite(cores) && cores > 0 ? Math.min(cores, 4096) : null,
    memory_gb: Number.isFinite(memory) && memory > 0 ? Math.min(memory, 4096) : null,
    brave: Boolean(navigator.brave),
  };
}

export class ThisComputer {
  /** app: {jobs, catalog, useThisComputer(id)}; the box goes right after `anchor`. */
  constructor(anchor, app) {
    this.app = app;
    this.result = null;
    this.signals = readSignals();
    this.hook = el("span", { "data-testid": "detected-device", dataset: { value: "unknown", confidence: "low", state: "reading" } }, "reading what the browser reports…");
    this.headline = el("span", { class: "detected-headline" }, "reading…");
    this.why = el("p", { class: "detected-why" });
    this.choices = el("span", { class: "detected-choices" });
    this.box = el("details", { class: "detected field-note", id: "detected" },
      el("summary", {}, el("span", { class: "detected-label" }, "This computer: "), this.headline),
      this.why,
      el("p", {}, "What the browser reports (nothing leaves this page): ", this.hook));
    this.line = el("div", { class: "detected-line" }, this.box, this.choices);
    anchor.after(this.line);
    this.devices = new Map(app.catalog.hardware.map((d) => [d.id, d]));
  }

  /** Ask the engine what the signals name; resolves with its answer (or null if it failed). */
  async detect() {
    const signals = await this.signals;
    try {
      this.result = await this.app.jobs.now("detect_device", signals);
    } catch (error) {
      this.hook.dataset.state = "failed";
      this.headline.textContent = `not detected (${error.message}).`;
      return null;
    }
    this.show(this.result);
    return this.result;
  }

  name(id) {
    return this.devices.get(id)?.name || id;
  }

  show(result, chosen = "") {
    const { hook } = this;
    hook.dataset.value = result.id;
    hook.dataset.confidence = result.confidence;
    hook.dataset.state = "done";
    hook.textContent = result.reported;
    this.why.textContent = [result.why, ...result.notes].join(" ");
    if (result.confidence === "low") {
      this.headline.textContent = "not detected; choose it in the picker.";
      this.choices.replaceChildren();
      return;
    }
    this.headline.textContent = result.confidence === "high" ? `${this.name(result.id)}${result.notes.length ? " (see the note)" : ""}` : `${result.device}, which one?`;
    this.choices.replaceChildren(
      ...result.variants.map((id) =>
        el("button", {
          type: "button",
          class: "chip",
          "aria-pressed": String(id === chosen),
          onclick: () => {
            this.app.useThisComputer(id);
            this.show(result, id);
          },
        }, result.variants.length > 1 ? this.name(id) : `Use ${this.name(id)}`),
      ),
    );
  }
}
