// This computer as the race's reference (issue 19): the lane that runs this computer's device
// (view field `me`, one unit), every lane's decode over its decode (lane-ratio: "3.1x this
// computer"), the headline's, and a rate measured on it, labelled measured. race.js calls these.

import * as fmt from "./format.js";
import { LANE_PARTS, LANE_SEPARATOR } from "./schema.js";

/** "3.1x this computer": a speed over this computer's, as the race and the headline say it. */
export function ratioText(ratio) {
  if (!(ratio > 0) || !Number.isFinite(ratio)) return "";
  if (Math.abs(ratio - 1) < 0.005) return "as fast as this computer";
  return `${ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1)}x this computer`;
}

/** A lane text running `device` alone with the main set-up's model. */
export function referenceLane(device) {
  return LANE_PARTS.map((part) => (part === "hw" ? device : part === "gpus" ? "1" : "")).join(LANE_SEPARATOR);
}

/** Which of `views` (main first) is this computer: the main set-up if it runs this computer's
 *  device on one unit, else the first lane that does; -1 if none. */
export function thisComputerLane(views) {
  const me = views[0].me;
  if (!me) return -1;
  return views.findIndex((view) => view.hw === me && Number(view.gpus || 1) === 1);
}

/** Each lane's decode over this computer's (lane-ratio) and the headline's (app.showRatio). This
 *  computer's rate is its lane's, else computed as a lane of its own with the main model. */
export async function showRatios(race, main, seq) {
  const views = race.views();
  const own = thisComputerLane(views);
  race.thisButton.hidden = !main.me || own >= 0 || race.addButton.disabled;
  let reference = own >= 0 ? race.results.get(own) : null;
  if (!reference && main.me) {
    try {
      reference = await race.app.jobs.later("lane", { view: main, lane: referenceLane(main.me) });
    } catch {
      reference = null;
    }
    if (seq !== race.seq) return;
  }
  const base = reference && reference.estimate.fit !== "no" ? reference.estimate.decode_tps : null;
  const measured = race.app.measured?.();
  for (let i = 0; i < views.length; i++) {
    const lane = race.laneElement(i);
    if (!lane) continue;
    const reply = race.results.get(i);
    const ratio = base && reply && reply.estimate.fit !== "no" ? reply.estimate.decode_tps / base : null;
    const node = lane.querySelector('[data-testid="lane-ratio"]');
    node.dataset.value = ratio === null ? "" : String(ratio);
    node.textContent = i === own ? "this computer" : ratio === null ? "" : ratioText(ratio);
    node.hidden = ratio === null;
    // A rate measured on this computer with this lane's model and weights (lane-decode stays the
    // prediction).
    const v = reply?.view;
    const match = i === own && measured && v && measured.hw === v.hw && measured.model === v.model && measured.quant === v.quant;
    const label = lane.querySelector('[data-testid="lane-measured"]');
    label.hidden = !match;
    label.dataset.value = match ? String(measured.decode_tps) : "";
    label.textContent = match ? `measured ${fmt.rate(measured.decode_tps)} tok/s` : "";
  }
  const mainReply = race.results.get(0);
  race.app.showRatio?.(base && mainReply && mainReply.estimate.fit !== "no" && own !== 0 ? mainReply.estimate.decode_tps / base : null);
}
