// The engine's Web Worker: boots Pyodide, unpacks the engine bundle (engine/ as bytecode compiled
// for this runtime, data/ with the catalogs parsed at build time; the repository's layout) and
// answers the page's calls through engine.page.handle(json) -> json.
// The message shapes are declared in protocol.js.

import { MSG } from "./protocol.js";

/** Where the bundle is unpacked; the engine finds data/ next to engine/ there. */
const BUNDLE_DIR = "/home/pyodide/tokfeel";

/** The runtime's files and the engine bundle this worker downloads are also kept in this cache
 *  (when no cache holds them yet); the service worker, registered once the engine is ready,
 *  adopts them instead of downloading them again (sw.js.j2) and then deletes this cache. */
const ADOPT_CACHE = "tokfeel-adopted";

const started = performance.now();
let handle = null; // the Python function engine.page.handle, once loaded
let bootingFrom = null; // the runtime's folder while it loads

function progress(stage, message) {
  self.postMessage({ type: MSG.PROGRESS, stage, message, elapsedMs: Math.round(performance.now() - started) });
}

function reply(id, ok, payload) {
  self.postMessage(ok ? { type: MSG.REPLY, id, ok, result: payload } : { type: MSG.REPLY, id, ok, error: payload });
}

/** Route this worker's downloads under `prefixes` (the runtime, the bundle) past ADOPT_CACHE. */
function adoptDownloads(prefixes) {
  if (typeof caches === "undefined" || self.__tokfeelAdopting) return;
  self.__tokfeelAdopting = true;
  const network = self.fetch.bind(self);
  self.fetch = async (input, init) => {
    const response = await network(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input), self.location.href).href;
    if (response.ok && prefixes.some((prefix) => url.startsWith(prefix))) {
      const copy = response.clone();
      caches
        .match(url)
        .then((held) => (held ? copy.body?.cancel() : caches.open(ADOPT_CACHE).then((cache) => cache.put(url, copy))))
        .catch(() => {}); // only an optimisation: the service worker downloads what is missing
    }
    return response;
  };
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

/** Pyodide's loader and runtime; any failure says which part did not load. */
async function loadRuntime(indexURL) {
  if (typeof WebAssembly !== "object" || typeof WebAssembly.instantiate !== "function") {
    throw new Error("this browser does not allow WebAssembly here, and the engine's Python runtime needs it (a browser setting, a policy or an extension blocks it)");
  }
  let loadPyodide;
  try {
    ({ loadPyodide } = await import(`${indexURL}pyodide.mjs`));
  } catch (error) {
    throw new Error(`the Python runtime's loader (${indexURL}pyodide.mjs) did not load: ${error.message || error}`);
  }
  try {
    return await loadPyodide({ indexURL, packages: [] });
  } catch (error) {
    throw new Error(`the Python runtime (${indexURL}) did not load: ${error.message || error}`);
  }
}

async function boot({ indexURL, bundleURL, bundleIntegrity }) {
  bootingFrom = indexURL;
  adoptDownloads([indexURL, bundleURL]);
  progress("runtime", "Loading the Python runtime");
  // The bundle downloads while Pyodide compiles; a failure is kept until it is awaited.
  const bundle = fetchBundle(bundleURL, bundleIntegrity);
  bundle.catch(() => {});
  const pyodide = await loadRuntime(indexURL);
  progress("engine", "Loading the estimation engine");
  pyodide.unpackArchive(await bundle, "zip", { extractDir: BUNDLE_DIR });
  pyodide.pyimport("sys").path.insert(0, BUNDLE_DIR);
  const page = pyodide.pyimport("engine.page");
  handle = page.handle;
  // Diagnostics for scripts/bench_page.py (read-only): the size of the runtime's WebAssembly heap.
  self.__tokfeelDiagnostics = () => ({ wasmHeapBytes: pyodide._module?.HEAPU8?.byteLength ?? null });
  progress("catalogs", "Reading the catalogs");
  // One estimate of the default view loads every catalog, the fit and the measured points, so the
  // page's first call (a shared link's view) costs what any later one does.
  const check = JSON.parse(handle(JSON.stringify({ fn: "view", args: {} })));
  if (!check.ok) throw new Error(check.error.message);
  progress("ready", "Engine ready");
  bootingFrom = null;
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
    let request;
    try {
      request = JSON.stringify({ fn: message.fn, args: message.args });
    } catch (error) {
      reply(message.id, false, { message: `the call's arguments are not JSON: ${error.message}`, field: null });
      return;
    }
    let answer;
    try {
      answer = handle(request);
    } catch (error) {
      // engine.page.handle never raises for bad input, so this is the runtime itself failing (out of
      // memory, a fatal Pyodide error): the page ends this worker and offers to start a new one.
      handle = null;
      reply(message.id, false, { message: `the engine crashed: ${error.message || error}`, field: null });
      self.postMessage({ type: MSG.ERROR, message: `the engine crashed: ${error.message || error}` });
      return;
    }
    const parsed = JSON.parse(answer);
    reply(message.id, parsed.ok, parsed.ok ? parsed.result : parsed.error);
  }
});

// A promise nobody awaits failed: while booting it is the runtime's loader (a file that did not
// download), later something in the worker itself. Either way the page is told, not left waiting.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  const reason = event.reason?.message || event.reason;
  self.postMessage({ type: MSG.ERROR, message: bootingFrom ? `the Python runtime (${bootingFrom}) did not load: ${reason}` : `engine worker: ${reason}` });
});
