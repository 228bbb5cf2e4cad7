// The set-up panel (site/templates/panels/controls.j2): the pickers and fields that make the view.
// It shows a view, reads the view its fields describe (with the errors that stop it), and puts
// an engine error next to the field it is about. Custom hardware and pasted configs: custom.js.

import * as fmt from "../format.js";
import { $, el, setText, setValue } from "../dom.js";
import { quantFor } from "../schema.js";
import { Picker } from "../pickers.js";
import { LANE_KEYS } from "../race.js";
import { answers, catalog, devices, models, schema, viewFields } from "../data.js";
import { engineReason, kvReason, quantReason, runOptions, viewBackend, viewEngine } from "../runs.js";
import { CustomModel } from "./custom.js";

/** Prompt presets (article 002's cases, docs/sources.md): a label and a token count. */
const PROMPT_PRESETS = [
  ["Short question", 20],
  ["Paragraph", 150],
  ["2k document", 2000],
  ["12k paste", 12000],
  ["50k codebase", 50000],
];
/** The Advanced settings, in the order of the form (so errors are listed as the fields appear). */
const ADVANCED_KEYS = ["depth", "kv", "fa", "batch", "threads", "gpus", "split", "pipe", "slot", "nvlink", "offload", "gpu_pct", "ngl", "ncmoe", "ot", "ram", "file", "ctx", "ub", "nb", "build", "cold", "gemm", "spec", "workload", "draft", "draft_n"];
/** Picker marks come in chunks of this many items per engine call. */
const MARK_CHUNK = 16;

const searchText = (...parts) => parts.flat().filter(Boolean).join(" ");

/** "4x8" -> "PCIe 4.0 x8"; "card" -> the card's own link. */
function slotLabel(slot) {
  if (slot === "card") return "as the card (x16)";
  const [gen, lanes] = slot.split("x");
  return `PCIe ${gen}.0 x${lanes}`;
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

export class SetupPanel {
  /** app: {getView(), setView(patch), controlsChanged(event)} */
  constructor(root, app) {
    const q = (selector) => $(selector, root);
    this.app = app;
    this.ui = {
      hardware: q("#hardware-select"),
      hardwareNote: q("#hardware-note"),
      model: q("#model-select"),
      modelNote: q("#model-note"),
      quant: q("#quant-select"),
      engine: q("#engine-select"),
      showAll: q("#show-all"),
      runsNote: q("#runs-note"),
      prompt: q("#prompt-tokens"),
      presets: q("#prompt-presets"),
      answer: q("#answer-select"),
      answerNote: q("#answer-note"),
      thinkField: q("#think-field"),
      think: q("#think-tokens"),
      advanced: q("#advanced"),
      gpuPctField: q("#gpu-pct-field"),
      flagFields: [q("#ngl-field"), q("#ncmoe-field"), q("#ot-field")],
      draftRow: q("#draft-row"),
      formError: q("#form-error"),
    };
    this.adv = Object.fromEntries(ADVANCED_KEYS.map((key) => [key, q(`[name="${key}"]`)]));
    this.custom = new CustomModel(root, app);
    this.markCache = new Map(); // "kind|key" -> marks
    this.pickers = {
      hardware: new Picker({
        select: this.ui.hardware,
        search: q("#hardware-search"),
        items: catalog.hardware,
        groupOf: (d) => d.family,
        valueOf: (d) => d.id,
        labelOf: (d) => `${d.name} · ${fmt.gibibytes(d.memory_gib)} · ${fmt.bandwidth(d.bandwidth_gbs)}`,
        searchText: (d) => searchText(d.name, d.aliases, d.family, d.vendor, d.kind),
        extras: [["custom", "Custom hardware: enter its specs…", "Your own"]],
      }),
      models: new Picker({
        select: this.ui.model,
        search: q("#model-search"),
        items: catalog.models,
        groupOf: (m) => m.family,
        valueOf: (m) => m.id,
        labelOf: (m) => `${m.name}${m.moe ? ` · ${fmt.number(m.active_params_b, 1)}B active` : ""}${m.reasoning ? " · thinks" : ""}`,
        searchText: (m) => searchText(m.name, m.aliases, m.family, m.org, m.moe ? "moe" : "dense", m.reasoning ? "reasoning thinking" : ""),
        extras: [["custom", "Custom model: paste a config.json…", "Your own"]],
      }),
      quants: new Picker({
        select: this.ui.quant,
        items: catalog.quants,
        groupOf: (q) => {
          const model = models.get(this.app.getView().model);
          return model?.quants.includes(q.name) ? `Published for ${model.name}` : `Other ${q.kind.toUpperCase()} formats`;
        },
        valueOf: (q) => q.name,
        labelOf: (q) => `${q.name} · ${fmt.number(q.bits_per_weight, 2)} bits per weight`,
        searchText: (q) => q.name,
        reasonOf: (q) => quantReason(q, this.backend),
      }),
    };
    this.backend = "";
    this.runsKey = "";
    this.fillStaticPickers();
    this.ui.showAll.addEventListener("change", () => this.showRuns(app.getView()));
    const { hardware, model, quant, engine, answer, prompt, think } = this.ui;
    for (const element of [hardware, model, quant, engine, answer, ...Object.values(this.adv), ...Object.values(this.custom.hwInputs), ...Object.values(this.custom.kindInputs)]) {
      element.addEventListener(element.tagName === "SELECT" ? "change" : "input", (event) => app.controlsChanged(event));
    }
    for (const element of [prompt, think]) element.addEventListener("input", (event) => app.controlsChanged(event));
  }

  fillStaticPickers() {
    const { ui, adv } = this;
    ui.answer.replaceChildren(...Object.entries(answers).map(([kind, a]) => el("option", { value: kind }, `${a.title} (${fmt.count(a.tokens.length)} tokens)`)));
    adv.slot.replaceChildren(...viewFields.slot.choices.map((slot) => el("option", { value: slot }, slotLabel(slot))));
    adv.nvlink.replaceChildren(...viewFields.nvlink.choices.map((v) => el("option", { value: v }, v === "yes" ? "fitted" : "none (PCIe)")));
    const drafts = catalog.models.filter((m) => m.params_b <= 8);
    adv.draft.replaceChildren(el("option", { value: "" }, "smallest of the same family"), ...drafts.map((m) => el("option", { value: m.id }, `${m.name} (${fmt.number(m.params_b, 1)}B)`)));
    for (const [label, count] of PROMPT_PRESETS) {
      ui.presets.append(
        el("button", { type: "button", class: "chip", dataset: { tokens: count }, "aria-pressed": "false", onclick: () => {
          ui.prompt.value = String(count);
          this.app.controlsChanged({ target: ui.prompt }); // the field it set, kept if a change is still held
        } }, label),
      );
    }
  }

  /** Every field shows `view`. */
  show(view) {
    const { ui } = this;
    this.pickers.hardware.value = view.hw;
    this.pickers.models.value = view.model;
    this.showQuants(view);
    setValue(ui.engine, view.engine);
    setValue(ui.prompt, String(view.prompt));
    setValue(ui.answer, view.answer);
    setValue(ui.think, String(view.think));
    for (const [key, input] of Object.entries(this.adv)) setValue(input, String(view[key]));
    this.custom.show(view);
    if (ADVANCED_KEYS.some((key) => view[key] !== viewFields[key].default)) ui.advanced.open = true;
    this.showDependent(view);
  }

  /** A visitor's pick already shows in its field: update once what depends on it. */
  showPicked(view, modelChanged) {
    if (modelChanged) this.showQuants(view);
    this.showDependent(view);
  }

  /** The weights picker groups by the model: re-render it for the view's model. Its list depends
   *  only on the model (groups), the device's backend (what runs), "show all" and a choice that
   *  won't run (kept in the list), so it is rebuilt only when one of them changes (marks are
   *  written in place): a pick used to rebuild its ~90 options up to three times. */
  showQuants(view) {
    this.backend = viewBackend(view);
    const quants = this.pickers.quants;
    const chosen = quants.byValue.get(view.quant);
    const key = JSON.stringify([view.model, this.backend, quants.showAll, chosen && quants.reasonOf(chosen) ? view.quant : ""]);
    if (key !== this.quantsKey || !quants.optionOf.has(view.quant)) {
      this.quantsKey = key;
      quants.render(view.quant);
    }
    quants.value = view.quant;
  }

  /** Formats, engines and KV caches the view's device can run; the others only with "show all",
   *  each with its reason (runs.js). Redrawn only when what decides it changes. */
  showRuns(view) {
    const { ui, adv } = this;
    const showAll = ui.showAll.checked;
    const key = JSON.stringify([viewBackend(view), view.hw, view.quant, view.engine, view.kv, showAll]);
    if (key === this.runsKey) return;
    this.runsKey = key;
    this.backend = viewBackend(view);
    const quants = this.pickers.quants;
    quants.showAll = showAll;
    this.showQuants(view);
    const quant = catalog.quants.find((q) => q.name === view.quant);
    const engines = runOptions(catalog.engines.map((e) => [e.id, e.name, engineReason(e, this.backend, quant)]), view.engine, showAll);
    ui.engine.replaceChildren(el("option", { value: "" }, "Usual for the device"), ...engines.children);
    setValue(ui.engine, view.engine);
    const kvs = runOptions(viewFields.kv.choices.map((kv) => [kv, kv === "f16" ? "f16 (default)" : kv, kvReason(kv, this.backend, viewEngine(view, this.backend, quant))]), view.kv, showAll);
    adv.kv.replaceChildren(...kvs.children);
    setValue(adv.kv, view.kv);
    const hidden = [[quants.hidden, "format"], [engines.hidden, "engine"], [kvs.hidden, "KV cache type"]].filter(([n]) => n);
    setText(ui.runsNote, hidden.length
      ? `Offering what runs on ${catalog.backends[this.backend] || this.backend}; ${hidden.map(([n, what]) => `${n} ${what}${n > 1 ? "s" : ""}`).join(", ")} hidden.`
      : "");
  }

  /** Fields that only apply to some set-ups, and the notes about the chosen items. */
  showDependent(view) {
    const { ui, adv } = this;
    this.custom.showDependent(view);
    this.showRuns(view);
    const model = models.get(view.model);
    ui.thinkField.hidden = !model?.reasoning;
    ui.gpuPctField.hidden = view.offload !== "layers";
    for (const field of ui.flagFields) field.hidden = view.offload !== "flags";
    ui.draftRow.hidden = view.spec === "off";
    adv.draft.disabled = view.spec !== "draft";
    adv.split.disabled = view.gpus < 2;
    adv.pipe.disabled = view.gpus < 2 || view.split !== "layer";
    const device = devices.get(view.hw);
    const kind = view.hw === "custom" ? view.hw_kind : device?.kind;
    // Each setting is offered for the device kinds it applies to (engine/options.py devices): system
    // RAM beside discrete cards, CPU threads on a CPU device.
    adv.slot.disabled = !viewFields.slot.devices.includes(kind);
    adv.ram.disabled = !viewFields.ram.devices.includes(kind);
    adv.threads.disabled = !viewFields.threads.devices.includes(kind);
    // A bridge is an accessory of some cards and joins a pair (4 on H200 NVL); built-in NVLink
    // (SXM boards) needs no choice.
    adv.nvlink.disabled = !(device?.nvlink_bridge && view.gpus > 1 && view.gpus <= device.nvlink_cards);
    for (const button of ui.presets.children) {
      const pressed = String(Number(button.dataset.tokens) === view.prompt);
      if (button.getAttribute("aria-pressed") !== pressed) button.setAttribute("aria-pressed", pressed);
    }
    // The notes depend on the device and the model alone: rebuilt only when one of them changes.
    if (device !== this.noteDevice || !device) this.showHardwareNote(device);
    if (model !== this.noteModel || !model) this.showModelNote(model);
    const answer = answers[view.answer];
    const characters = answer.tokens.join("").length;
    setText(ui.answerNote, `${fmt.count(answer.tokens.length)} tokens, ${fmt.number(characters / answer.tokens.length, 1)} characters per token`);
  }

  showHardwareNote(device) {
    this.noteDevice = device;
    this.ui.hardwareNote.replaceChildren(
      ...(device
        ? [
            `${fmt.gibibytes(device.memory_gib)} · ${fmt.bandwidth(device.bandwidth_gbs)} · ${fmt.tflops(device.fp16_tflops)} FP16${device.launch_price_usd ? ` · launched at ${fmt.usd(device.launch_price_usd)}` : ""}${device.street_price ? ` · ${device.street_price.condition} ${fmt.usd(device.street_price.usd)} (${device.street_price.date})` : ""} · `,
            sourcesLink(`hw-${device.id}`, "hardware-sources-link", `Sources of the ${device.name} figures in the catalog`),
          ]
        : ["Enter the specs from the vendor's page."]),
    );
  }

  showModelNote(model) {
    this.noteModel = model;
    this.ui.modelNote.replaceChildren(
      ...(model
        ? [
            `${model.org} · ${model.moe ? `mixture of ${fmt.count(model.experts)} experts, ${fmt.count(model.experts_per_token)} per token` : "dense"} · ${fmt.count(model.layers)} layers · up to ${fmt.tokens(model.max_context)} tokens of context${model.reasoning ? " · thinks before answering" : ""} · `,
            sourcesLink(`model-${model.id}`, "model-sources-link", `Sources of the ${model.name} architecture in the catalog`),
          ]
        : ["Read from the pasted config.json."]),
    );
  }

  /** The view the fields describe, from `view`, or the errors that stop it. */
  read(view) {
    const { ui } = this;
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
    for (const [key, input] of Object.entries(this.adv)) read(key, input.value);
    if (next.hw === "custom") {
      for (const [key, input] of Object.entries(this.custom.hwInputs)) read(key, input.value);
      Object.assign(next, this.custom.readKind());
    }
    if (next.model !== view.model) {
      next.quant = quantFor(models.get(next.model), next.quant);
      if (next.spec === "draft" && next.draft && models.get(next.draft)?.tokenizer !== models.get(next.model)?.tokenizer) next.draft = "";
    }
    return { errors, next };
  }

  showFormErrors(errors) {
    const others = errors.filter(([key]) => !key.startsWith("hw_"));
    this.custom.showHardwareErrors(errors.filter(([key]) => key.startsWith("hw_")));
    this.ui.formError.hidden = !others.length;
    this.ui.formError.textContent = others.map(([, text]) => text).join(" ");
  }

  /** An engine error goes next to the input it is about (null clears them). */
  engineError(error, view) {
    const shown = this.custom.engineError(error, view);
    this.ui.formError.hidden = !error || shown;
    this.ui.formError.textContent = error && !shown ? error.message : "";
  }

  /** The chosen set-up in words, from the catalogs alone (for the set-up line before it is computed). */
  name(view) {
    const device = view.hw === "custom" ? view.hw_name || "Custom hardware" : devices.get(view.hw)?.name;
    const model = view.model === "custom" ? "your model (config.json)" : models.get(view.model)?.name;
    return `${device}${view.gpus > 1 ? ` ×${view.gpus}` : ""} · ${model} · ${view.quant}`;
  }

  /** The view's device: the catalog's, or the custom fields' specs. */
  deviceSpec(view) {
    if (view.hw !== "custom") return devices.get(view.hw);
    return { name: view.hw_name, memory_gib: view.hw_mem, bandwidth_gbs: view.hw_bw, fp16_tflops: view.hw_tf };
  }

  focusHardware() {
    this.ui.hardware.focus();
  }

  /** Fit marks of the three pickers; each depends on the view minus its own field. */
  async updateMarks(jobs, asked, stale) {
    const ignore = { hardware: ["hw"], models: ["model", "quant", "spec", "draft"], quants: ["quant"] };
    for (const [kind, picker] of Object.entries(this.pickers)) {
      const key = `${kind}|${JSON.stringify(Object.entries(asked).filter(([k]) => !ignore[kind].includes(k) && !LANE_KEYS.includes(k)))}`;
      if (this.markCache.has(key)) {
        picker.setMarks(this.markCache.get(key));
        continue;
      }
      picker.clearMarks();
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
        picker.setMarks(reply.marks);
      }
      if (this.markCache.size > 60) this.markCache.clear();
      this.markCache.set(key, marks);
    }
  }
}
