// The URL-state schema: the engine's view fields (engine/page/fields.py, rendered into the page by the
// build) with a validator each, built from the catalogs the page carries. Every bound, choice and
// lane part comes from that data; this module only knows how to apply them.

import { choiceField, idField, intField, jsonField, laneField, numberField, textField } from "./state.js";

/** A race lane's parts and separator (engine/page/fields.py LANE_PARTS), set from the view fields
 *  the build renders into the page when the schema is built. */
export let LANE_PARTS = [];
export let LANE_SEPARATOR = "";

/** {key: {default, parse, maxLength}} for parseState/serializeState. */
export function buildSchema(viewFields, catalog, answers) {
  const ids = {
    hardware: new Set(["custom", ...catalog.hardware.map((d) => d.id)]),
    model: new Set(["custom", ...catalog.models.map((m) => m.id)]),
    quant: new Set(catalog.quants.map((q) => q.name)),
    engine: new Set(["", ...catalog.engines.map((e) => e.id)]),
    answer: new Set(Object.keys(answers)),
    draft: new Set(["", ...catalog.models.map((m) => m.id)]),
    device: new Set(["", ...catalog.hardware.map((d) => d.id)]),
  };
  const spec = (raw) => (raw === "off" || raw === "mtp" || ids.model.has(raw) ? { ok: true, value: raw } : { ok: false, reason: "unknown" });
  const partValidators = {
    hw: idField(ids.hardware),
    model: idField(ids.model),
    quant: idField(ids.quant),
    engine: idField(ids.engine),
    spec,
    gpus: intField(viewFields.gpus.min, viewFields.gpus.max),
  };
  const lane = viewFields.lane1;
  LANE_PARTS = lane.parts;
  LANE_SEPARATOR = lane.separator;
  // A lane-like setting (a race lane; a rate measured on this computer, whose "tps" part is a
  // number within the field's bounds) checks each part with its validator.
  const partsOf = (f) => f.parts.map((part, i) => [f.part_names[i], part === "tps" ? numberField(f.min, f.max) : partValidators[part]]);
  const validators = {
    int: (f) => intField(f.min, f.max),
    number: (f) => numberField(f.min, f.max),
    choice: (f) => choiceField(f.choices),
    text: (f) => textField(f.max_length),
    json: () => jsonField(),
    lane: (f) => laneField(partsOf(f), f.separator),
  };
  return Object.fromEntries(
    Object.entries(viewFields).map(([key, field]) => {
      const parse = validators[field.kind] ? validators[field.kind](field) : idField(ids[field.kind]);
      return [key, { default: field.default, parse, maxLength: field.max_length }];
    }),
  );
}

/** A lane's view as its text reads, to show before the engine answers: the main view with the
 *  lane's non-empty parts (engine/page/lanes.py lane_view, which the race then computes, also
 *  drops main settings that cannot apply to the lane's device). */
export function laneView(main, laneText) {
  const view = { ...main, lane1: "", lane2: "", lane3: "" };
  laneText.split(LANE_SEPARATOR).forEach((value, i) => {
    if (value) view[LANE_PARTS[i]] = LANE_PARTS[i] === "gpus" ? Number(value) : value;
  });
  if (!["off", "mtp", "draft"].includes(view.spec)) {
    view.draft = view.spec;
    view.spec = "draft";
  }
  return view;
}

/** The quant to switch to with a model: the current one if the model is published in it, else
 *  the model's own (`quant`, chosen by engine/page/points.py quant_for when the page is built). */
export function quantFor(model, current) {
  if (!model || !model.quants.length || model.quants.includes(current)) return current;
  return model.quant;
}
