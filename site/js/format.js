// Number formatting for the page, in one place. Every number shown goes through here, so a value
// that is not finite shows as "—" (never "NaN" or "Infinity"), and so does a negative value of a
// quantity that cannot be negative (a speed, a time, a size, a count): whatever a server or a
// link sends, the page never shows a negative speed.

import { readJSON } from "./dom.js";

const group = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
/** Decimals by size per quantity (engine/textformat.py DECIMALS, in the page by the build): the
 *  CLI's text and the page show a number alike. */
const DECIMALS = readJSON("number-formats");

/** `value` with the decimals its size gets (0 decimals: thousands separated). */
function fixed(kind, value) {
  const steps = DECIMALS[kind];
  const digits = (steps.find(([lowest]) => value >= lowest) || steps[steps.length - 1])[1];
  return digits === 0 ? group.format(value) : value.toFixed(digits);
}

function finite(value) {
  return typeof value === "number" && Number.isFinite(value);
}

/** A finite value >= 0: what speeds, times, sizes and counts must be to be shown. */
function amount(value) {
  return finite(value) && value >= 0;
}

/** Tokens per second: 0.42, 4.2, 42.0, 420, 4,200. */
export function rate(value) {
  if (!amount(value)) return "—";
  return fixed("rate", value);
}

/** A duration in seconds: 45 ms, 1.25 s, 3.4 min, 2.1 h. */
export function duration(seconds) {
  if (!amount(seconds)) return "—";
  if (seconds < 1) return `${fixed("milliseconds", seconds * 1000)} ms`;
  if (seconds < 60) return `${fixed("seconds", seconds)} s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** A size in GB (10^9 bytes). */
export function gigabytes(value) {
  if (!amount(value)) return "—";
  return `${fixed("gigabytes", value)} GB`;
}

/** Bytes per GiB over bytes per GB: 2^30 / 10^9. */
export const GIB_IN_GB = 2 ** 30 / 1e9;
/** What the page says of its size unit (the other one, in a tooltip). */
export const SIZE_UNIT_NOTE = "Sizes in GiB (2^30 bytes), the unit memory is sold in: a \"24 GB\" card holds 24 GiB. 1 GiB = 1.074 GB (10^9 bytes, the unit of the engine's JSON and of download sizes).";

/** A memory size the engine states in GB (10^9 bytes), shown in GiB like every size on the page:
 *  "25.4 GB usable" of a 24 GiB card reads 23.7 GiB, never more than the card has. */
export function memory(valueGB) {
  if (!amount(valueGB)) return "—";
  return `${fixed("gigabytes", valueGB / GIB_IN_GB)} GiB`;
}

/** A token count: 512, 12k, 1.2M. */
export function tokens(value) {
  if (!amount(value)) return "—";
  if (value >= 1e6) return `${(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
  if (value >= 1e4) return `${Math.round(value / 1e3)}k`;
  return group.format(value);
}

/** A fraction as a percentage: 0.734 -> "73%". */
export function percent(value) {
  if (!amount(value)) return "—";
  return `${Math.round(value * 100)}%`;
}

/** Bandwidth in GB/s. */
export function bandwidth(value) {
  if (!amount(value)) return "—";
  return `${group.format(value)} GB/s`;
}

/** A price in USD. */
export function usd(value) {
  if (!amount(value)) return "—";
  return `$${group.format(value)}`;
}

/** One formatter per number of decimals: toLocaleString builds a new one on every call, which
 *  was the page's largest cost when it relabels ~1,000 picker options with their fit marks. */
const plain = new Map();

/** A plain number with up to `digits` decimals. */
export function number(value, digits = 2) {
  if (!finite(value)) return "—";
  let formatter = plain.get(digits);
  if (!formatter) plain.set(digits, (formatter = new Intl.NumberFormat("en-US", { maximumFractionDigits: digits })));
  return formatter.format(value);
}

/** A whole count with thousands separators: 1,234. */
export function count(value) {
  if (!amount(value)) return "—";
  return group.format(Math.round(value));
}

/** Memory in GiB as catalogs state it: 24 GiB, 0.5 GiB. */
export function gibibytes(value) {
  if (!amount(value)) return "—";
  return `${value >= 10 ? group.format(value) : number(value, 1)} GiB`;
}

/** Compute in TFLOPS. */
export function tflops(value) {
  if (!amount(value)) return "—";
  return `${number(value, value >= 100 ? 0 : 1)} TFLOPS`;
}

/** A speed-up factor: ×1.85. */
export function factor(value) {
  if (!amount(value)) return "—";
  return `×${value.toFixed(2)}`;
}

/** A chart axis tick: 1, 10, 1k, 100k. */
export function tick(value) {
  if (!amount(value)) return "";
  if (value >= 1e6) return `${number(value / 1e6, 1)}M`;
  if (value >= 1e3) return `${number(value / 1e3, 1)}k`;
  return number(value, 2);
}

/** A context length as people say it: 512, 4k (4,096), 128k (131,072). */
export function contextLength(value) {
  if (!amount(value)) return "—";
  return value >= 1024 && value % 1024 === 0 ? `${group.format(value / 1024)}k` : tokens(value);
}
