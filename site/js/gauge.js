// The live tok/s gauge: a logarithmic track from 1 to 3,000 tok/s with the use-case thresholds
// (article 002, docs/sources.md) marked as bands, a needle for the rate right now and a tick for the prediction.
// The number beside it is what screen readers and reduced-motion visitors get; the track is
// decoration (aria-hidden).

import { el } from "./dom.js";
import * as fmt from "./format.js";

const MIN_TPS = 1;
const MAX_TPS = 3000;
const SCALE = [1, 3, 10, 30, 100, 300, 1000, 3000];

/** Position of a rate on the track, 0..100 (%). */
export function position(tps) {
  const clamped = Math.min(Math.max(tps, MIN_TPS), MAX_TPS);
  return (100 * Math.log(clamped / MIN_TPS)) / Math.log(MAX_TPS / MIN_TPS);
}

export class Gauge {
  constructor({ bands, needle, predicted, scale, value, done }, useCases) {
    Object.assign(this, { needle, predicted, value, done });
    bands.replaceChildren(
      ...useCases.map((c) => {
        const band = el("span", { class: `gauge-band band-${c.id}`, title: `${c.label}: ${c.low}-${c.high}+ tok/s` }, el("span", { class: "gauge-band-label" }, c.short));
        band.style.left = `${position(c.low)}%`;
        band.style.width = `${position(c.high) - position(c.low)}%`;
        return band;
      }),
    );
    scale.replaceChildren(
      ...SCALE.map((tps) => {
        const tick = el("span", {}, fmt.tick(tps));
        tick.style.left = `${position(tps)}%`;
        return tick;
      }),
    );
    this.setLive(null);
  }

  /** The predicted decode speed (a fixed tick on the track). */
  setPredicted(tps) {
    this.predicted.hidden = !(tps > 0);
    if (tps > 0) this.predicted.style.left = `${position(tps)}%`;
  }

  /** The rate right now, or null when nothing streams. */
  setLive(tps) {
    const active = typeof tps === "number";
    this.value.textContent = active ? fmt.rate(tps) : "—";
    this.value.dataset.value = active ? String(tps) : "";
    this.needle.hidden = !active;
    if (active) this.needle.style.left = `${position(tps)}%`;
  }

  setDone(text) {
    this.done.textContent = text;
  }
}
