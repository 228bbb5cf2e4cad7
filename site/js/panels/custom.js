// Your own hardware and your own model, inside the set-up panel: the custom hardware fields, the
// pasted config.json (checked before it is parsed: size, nesting, JSON, one object, what a link
// can carry) and the errors about either.

import * as fmt from "../format.js";
import { $, setValue } from "../dom.js";
import { MAX_JSON_DEPTH, jsonDepth } from "../state.js";
import { viewFields } from "../data.js";

/** A pasted config.json longer than this is refused before it is parsed (real ones are a few
 *  thousand characters; a link carries at most viewFields.cfg.max_length of it, compacted). */
const MAX_PASTE_CHARACTERS = 1000000;

/** The compact JSON of a pasted config, or why it cannot be used: {compact} or {error}. */
export function checkConfig(text) {
  if (!text) return { error: "Paste a model's config.json first." };
  if (text.length > MAX_PASTE_CHARACTERS) return { error: `This is ${fmt.count(text.length)} characters; a model's config.json is a few thousand. Paste the config.json file itself.` };
  if (jsonDepth(text) > MAX_JSON_DEPTH) return { error: `This JSON nests deeper than ${MAX_JSON_DEPTH} levels; a model's config.json nests a few.` };
  let config;
  try {
    config = JSON.parse(text);
  } catch (error) {
    return { error: `This is not valid JSON: ${error.message}.` };
  }
  if (!config || typeof config !== "object" || Array.isArray(config)) return { error: "A config.json is one JSON object ({ … })." };
  const compact = JSON.stringify(config);
  if (compact.length > viewFields.cfg.max_length) return { error: `This config is ${fmt.count(compact.length)} characters; a link can carry at most ${fmt.count(viewFields.cfg.max_length)}.` };
  return { compact };
}

export class CustomModel {
  /** root: the set-up panel; app: {setView(patch)} */
  constructor(root, app) {
    const q = (selector) => $(selector, root);
    this.ui = {
      hardware: q("#custom-hardware"),
      hardwareError: q("#custom-hw-error"),
      model: q("#custom-model"),
      config: q("#model-config"),
      modelError: q("#custom-model-error"),
    };
    this.hwInputs = { hw_name: q("#hw-name"), hw_bw: q("#hw-bw"), hw_mem: q("#hw-mem"), hw_tf: q("#hw-tf"), hw_bwm: q("#hw-bwm"), hw_cores: q("#hw-cores"), hw_threads: q("#hw-threads"), hw_ch: q("#hw-ch"), hw_mts: q("#hw-mts"), hw_isa: q("#hw-isa") };
    // The backend and the unified-memory box decide the kind (readKind); the CPU's own fields
    // show for the cpu backend only.
    this.kindInputs = { backend: q("#hw-backend"), unified: q("#hw-unified") };
    this.ui.unifiedField = q("#hw-unified-field");
    this.ui.cpuFields = q("#custom-cpu-fields");
    this.ui.bwNote = q("#hw-bw-note");
    q("#model-config-apply").addEventListener("click", () => {
      const { compact, error } = checkConfig(this.ui.config.value.trim());
      this.showModelError(error || "");
      if (!error) app.setView({ model: "custom", cfg: compact });
    });
  }

  show(view) {
    for (const [key, input] of Object.entries(this.hwInputs)) setValue(input, String(view[key]));
    setValue(this.kindInputs.backend, view.hw_backend || viewFields.hw_backend.by_kind[view.hw_kind]);
    this.kindInputs.unified.checked = view.hw_kind === "soc";
    if (view.cfg && this.ui.config.value.trim() === "") this.ui.config.value = JSON.stringify(JSON.parse(view.cfg), null, 2);
  }

  /** hw_kind and hw_backend from the backend menu and the unified-memory box: the cpu backend is
   *  a CPU, unified memory a soc, else a card; a backend that is the kind's usual one stays
   *  unset (so links written before the menu existed read the same). */
  readKind() {
    const backend = this.kindInputs.backend.value;
    const kind = backend === "cpu" ? "cpu" : this.kindInputs.unified.checked ? "soc" : "gpu";
    return { hw_kind: kind, hw_backend: backend === viewFields.hw_backend.by_kind[kind] ? "" : backend };
  }

  showDependent(view) {
    this.ui.cpuFields.hidden = view.hw_kind !== "cpu";
    // A CPU's peak from its channels and speed is the engine's (engine/page/view.py custom_hardware):
    // the bandwidth field is then not read, and says so.
    const derived = view.hw_kind === "cpu" && view.hw_bwm === "peak" && view.hw_ch > 0 && view.hw_mts > 0;
    this.hwInputs.hw_bw.disabled = derived;
    this.ui.bwNote.hidden = !derived;
    this.ui.unifiedField.hidden = view.hw_kind === "cpu";
    this.ui.hardware.hidden = view.hw !== "custom";
    this.ui.model.hidden = view.model !== "custom";
  }

  showHardwareErrors(errors) {
    this.ui.hardwareError.hidden = !errors.length;
    this.ui.hardwareError.textContent = errors.map(([, text]) => text).join(" ");
  }

  showModelError(message) {
    this.ui.modelError.hidden = !message;
    this.ui.modelError.textContent = message;
  }

  /** Show an engine error here if it is about the custom hardware or model (null clears);
   *  returns whether it was shown. */
  engineError(error, view) {
    const field = error?.field || "";
    const onHardware = Boolean(error && view.hw === "custom" && field.startsWith("hardware"));
    const onModel = Boolean(error && view.model === "custom" && (field === "" || /^(cfg|config|model)/.test(field)));
    this.ui.hardwareError.hidden = !onHardware;
    this.ui.hardwareError.textContent = onHardware ? error.message : "";
    if (onModel) this.showModelError(error.message);
    else if (!error) this.showModelError("");
    return onHardware || onModel;
  }
}
