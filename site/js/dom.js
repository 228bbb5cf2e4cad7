// Small DOM helpers: build elements from data without ever parsing markup (so nothing from the
// URL, a catalog or a server can inject HTML).

/** el("td", {class: "num", dataset: {value: 3}}, "text", child) */
export function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") element.className = value;
    else if (name === "dataset") Object.assign(element.dataset, value);
    else if (name === "text") element.textContent = value;
    else if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

/** Write a form field's value or an element's text only when it differs: a picker change shows
 *  the whole view again, and rewriting what is already there still invalidates style and layout
 *  (and, for a <select>, makes Chromium's autofill re-read the form: ~6 ms for ~1,500 options). */
export function setValue(element, value) {
  if (element.value !== value) element.value = value;
}

export function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => [...root.querySelectorAll(selector)];

/** Read a JSON data island (<script type="application/json" id=...>). */
export function readJSON(id) {
  return JSON.parse(document.getElementById(id).textContent);
}

/** Say something to screen-reader users once (a polite live region). */
export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  // A fresh text node after a tick, so the same message is announced again.
  setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/** A definition list's rows: [[term, detail], ...]. */
export function fillList(dl, rows) {
  dl.replaceChildren(...rows.flatMap(([term, detail]) => [el("dt", {}, term), el("dd", {}, detail)]));
}

/** Whether the visitor asked for less motion (checked when it matters: it can change). */
export function reducedMotion() {
  return window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

/** A link to a part of the page (#measure, #explain-decode, ...) opens whatever holds it closed
 *  and scrolls it into view. */
export function revealTarget() {
  const target = location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  if (!target) return;
  for (let node = target.parentElement; node; node = node.parentElement) if (node.tagName === "DETAILS") node.open = true;
  if (target.tagName === "DETAILS") target.open = true;
  target.scrollIntoView({ block: "start" });
}
