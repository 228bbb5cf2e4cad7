// The engine's Web Worker: boots Pyodide, unpacks the engine bundle (engine/ + data/, exactly the
// repository's layout) and answers the page's calls through engine.handle(json) -> json.
// The message shapes are declared in protocol.js.

import { MSG } from "./protocol.js";

/** Where the bundle is unpacked; the engine finds data/ next to engine/ there. */
const BUNDLE_DIR = "/home/pyodide/tokfeel";

const started = performance.now();
let handle = null; // the Python function engine.handle, once loaded

function progress(stage, message) {
  self.postMessage({ type: MSG.PROGRESS, stage, message, elapsedMs: Math.round(performance.now() - started) });
}

function reply(id, ok, payload) {
  self.postMessage(ok ? { type: MSG.REPLY, id, ok, result: payload } : { type: MSG.REPLY, id, ok, error: payload });
}

/** Download the engine bundle; integrity-checked, so a stale or damaged file is refused. */
async function fetchBundle(url, integrity) {
  const name = url.split("/").pop();
  let response;
  try {
    response = await fetch(url, { integrity, cache: "no-cache" });
  } catch (error) {
    throw new Error(`the engine bundle ${name} could not be downloaded (missing, or not the file this page was built with): ${error.message}`);
  }
  if (!response.ok) throw new Error(`the engine bundle ${name} could not be downloaded: HTTP ${response.status}`);
  return response.arrayBuffer();
}

async function boot({ indexURL, bundleURL, bundleIntegrity }) {
  progress("runtime", "Loading the Python runtime");
  // The bundle downloads while Pyodide compiles; a failure is kept until it is awaited.
  const bundle = fetchBundle(bundleURL, bundleIntegrity);
  bundle.catch(() => {});
  const { loadPyodide } = await import(`${indexURL}pyodide.mjs`);
  const pyodide = await loadPyodide({ indexURL, packages: [] });
  progress("engine", "Loading the estimation engine");
  pyodide.unpackArchive(await bundle, "zip", { extractDir: BUNDLE_DIR });
  pyodide.pyimport("sys").path.insert(0, BUNDLE_DIR);
  const engine = pyodide.pyimport("engine");
  handle = engine.handle;
  progress("catalogs", "Reading the catalogs");
  // The first call loads and validates every catalog, so later calls are fast.
  const check = JSON.parse(handle(JSON.stringify({ fn: "list", args: { kind: "engines" } })));
  if (!check.ok) throw new Error(check.error.message);
  progress("ready", "Engine ready");
  return { python: pyodide.version, elapsedMs: Math.round(performance.now() - started) };
}

self.addEventListener("message", async (event) => {
  const message = event.data || {};
  if (message.type === MSG.INIT) {
    try {
      reply(message.id, true, await boot(message));
    } catch (error) {
      reply(message.id, false, { message: `the engine could not start: ${error.message || error}`, field: null });
    }
    return;
  }
  if (message.type === MSG.CALL) {
    if (!handle) {
      reply(message.id, false, { message: "the engine is not ready", field: null });
      return;
    }
    try {
      const answer = JSON.parse(handle(JSON.stringify({ fn: message.fn, args: message.args })));
      reply(message.id, answer.ok, answer.ok ? answer.result : answer.error);
    } catch (error) {
      reply(message.id, false, { message: `engine call failed: ${error.message || error}`, field: null });
    }
  }
});

self.addEventListener("unhandledrejection", (event) => {
  self.postMessage({ type: MSG.ERROR, message: `engine worker: ${event.reason?.message || event.reason}` });
});
