// The data the build renders into the page (JSON islands in index.html): read once, shared by
// every module. Nothing here changes after load.

import { readJSON } from "./dom.js";
import { buildSchema } from "./schema.js";

export const boot = readJSON("boot-config");
export const viewFields = readJSON("view-fields");
export const useCases = readJSON("use-cases");
export const catalog = readJSON("catalog-data");
export const answersData = readJSON("answers-data");
export const answers = answersData.answers;
/** The first view's numbers, computed by the same engine in CPython at build time. */
export const initial = readJSON("initial-view");
export const schema = buildSchema(viewFields, catalog, answers);
export const devices = new Map(catalog.hardware.map((d) => [d.id, d]));
export const models = new Map(catalog.models.map((m) => [m.id, m]));

/** A panel's DOM root (data-panel="name" in site/templates/panels/name.j2). */
export function panelRoot(name) {
  return document.querySelector(`[data-panel="${name}"]`);
}
