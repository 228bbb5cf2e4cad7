// The page's state lives in the URL query string, so a copied link reproduces the view.
//
// Parsing is strict and total: every key has a validator; a value it rejects (unknown id, not a
// number, out of range, absurdly long) is dropped in favour of the default and reported, so the
// page can say what it ignored. Nothing from the URL is ever inserted as markup.
// engine/page/query.py parse_query reads a query string exactly the same way (the tests compare them).

import { readJSON } from "./dom.js";

/** The parser's limits, from the engine (engine/page/fields.py URL_LIMITS, in the page by the build):
 *  the longest value of a key that sets no maxLength of its own, the longest link (refused whole
 *  rather than cut: a cut value could still parse, silently wrong), how deeply a pasted
 *  config.json may nest, and how much of an unknown key a notice quotes. */
const LIMITS = readJSON("url-limits");
export const MAX_QUERY_LENGTH = LIMITS.max_query_length;
export const MAX_JSON_DEPTH = LIMITS.max_json_depth;
const MAX_VALUE_LENGTH = LIMITS.max_value_length;
const SHOWN_KEY_LENGTH = LIMITS.shown_key_length;

/** A validator for an id from `choices` (a Set or a function returning a Set). */
export function idField(choices) {
  return (raw) => {
    const set = typeof choices === "function" ? choices() : choices;
    return set.has(raw) ? { ok: true, value: raw } : { ok: false, reason: "unknown" };
  };
}

/** A validator for a whole number in [min, max]. */
export function intField(min, max) {
  return (raw) => {
    if (/^-\d/.test(raw)) return { ok: false, reason: "negative" };
    if (!/^\d{1,9}$/.test(raw)) return { ok: false, reason: "not a whole number" };
    const value = Number(raw);
    if (value < min || value > max) return { ok: false, reason: `outside ${min}-${max}` };
    return { ok: true, value };
  };
}

/** A validator for a number in [min, max] (decimals allowed). */
export function numberField(min, max) {
  return (raw) => {
    if (/^-\d/.test(raw)) return { ok: false, reason: "negative" };
    if (!/^\d{1,9}(\.\d{1,6})?$/.test(raw)) return { ok: false, reason: "not a number" };
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) return { ok: false, reason: `outside ${min}-${max}` };
    return { ok: true, value };
  };
}

/** A validator for one of a fixed list of strings. */
export function choiceField(choices) {
  const set = new Set(choices);
  return (raw) => (set.has(raw) ? { ok: true, value: raw } : { ok: false, reason: "unknown" });
}

/** A validator for free text (a name): printable, at most `maxLength` characters. */
export function textField(maxLength) {
  return (raw) => {
    if (raw.length > maxLength) return { ok: false, reason: "too long" };
    if (/[\u0000-\u001f\u007f]/.test(raw)) return { ok: false, reason: "control characters" };
    return { ok: true, value: raw };
  };
}

/** How deeply brackets nest in a JSON text, outside strings (engine/page/fields.py json_depth). */
export function jsonDepth(text) {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "[" || char === "{") deepest = Math.max(deepest, ++depth);
    else if (char === "]" || char === "}") depth -= 1;
  }
  return deepest;
}

/** A validator for a JSON object kept as its text (a pasted config.json). */
export function jsonField() {
  return (raw) => {
    if (jsonDepth(raw) > MAX_JSON_DEPTH) return { ok: false, reason: "nested too deeply" };
    try {
      const value = JSON.parse(raw);
      if (value && typeof value === "object" && !Array.isArray(value)) return { ok: true, value: raw };
    } catch {
      return { ok: false, reason: "not valid JSON" };
    }
    return { ok: false, reason: "not a JSON object" };
  };
}

/** A validator for a race lane: up to parts.length values joined by `separator`, each empty or
 *  accepted by its part's validator (`parts` = [[name, validator], ...]). */
export function laneField(parts, separator) {
  return (raw) => {
    const values = raw.split(separator);
    if (values.length > parts.length) return { ok: false, reason: "too many parts" };
    for (let i = 0; i < values.length; i++) {
      if (values[i] !== "" && !parts[i][1](values[i]).ok) return { ok: false, reason: `unknown ${parts[i][0]}` };
    }
    return { ok: true, value: raw };
  };
}

/**
 * Parse `search` (location.search) against `schema` ({key: {parse, default}}).
 * Returns {state, ignored: [{key, reason}]}: state has every schema key (defaults filled in).
 */
export function parseState(search, schema) {
  const state = {};
  const ignored = [];
  for (const [key, spec] of Object.entries(schema)) state[key] = spec.default;
  if (typeof search !== "string") return { state, ignored: [{ key: "(link)", reason: "unreadable" }] };
  if (search.length > MAX_QUERY_LENGTH) return { state, ignored: [{ key: "(link)", reason: "too long" }] };
  const seen = new Set();
  for (const [key, raw] of new URLSearchParams(search)) {
    if (!Object.hasOwn(schema, key)) {
      ignored.push({ key: Array.from(key).slice(0, SHOWN_KEY_LENGTH).join(""), reason: "unknown setting" });
      continue;
    }
    if (seen.has(key)) {
      ignored.push({ key, reason: "given twice" });
      continue;
    }
    seen.add(key);
    if (raw.length > (schema[key].maxLength || MAX_VALUE_LENGTH)) {
      ignored.push({ key, reason: "too long" });
      continue;
    }
    const result = schema[key].parse(raw);
    if (result.ok) state[key] = result.value;
    else ignored.push({ key, reason: result.reason });
  }
  return { state, ignored };
}

/** The query string for `state`: only keys that differ from their defaults, in schema order. */
export function serializeState(state, schema) {
  const params = new URLSearchParams();
  for (const [key, spec] of Object.entries(schema)) {
    const value = state[key];
    if (value === spec.default || value === null || value === undefined) continue;
    params.set(key, typeof value === "boolean" ? (value ? "1" : "0") : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}
