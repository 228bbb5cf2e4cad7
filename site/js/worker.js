// The engine's Web Worker: boots Pyodide, unpacks the engine bundle (engine/ as bytecode compiled
// for this runtime, data/ with the catalogs parsed at build time; the repository's layout) and
// answers the page's calls through engine.page.handle(json) -> json. A later visit restores the
// booted engine from the memory snapshot the first one kept (snapshot.js) instead.
// The message shapes are declared in protocol.js.

import { MSG } from "./protocol.js";
import { dropSnapshots, growingModuleFactory, readSnapshot, snapshotKey, writeSnapshot } from "./snapshot.js";

/** Where the bundle is unpacked; the engine finds data/ next to engine/ there. */
const BUNDLE_DIR = "/home/pyodide/tokfeel";

/** The runtime's files and the engine bundle this worker downloads are also kept in this cache
 *  (when no cache holds them yet); the service worker, registered once the engine is ready,
 *  adopts them instead of downloading them again (sw.js.j2) and then deletes this cache. */
const ADOPT_CACHE = "tokfeel-adopted";

const started = performance.now();
let handle = null; // the Python function engine.page.handle, once loaded
let bootingFrom = null; // the runtime's folder while it loads
let pendingSnapshot = null; // keeps the booted engine's memory, run once (see keepSnapshotNow)
/** Without a view call (a custom model waiting for its config.json) the snapshot is kept this
 *  long after ready, between two calls like any other time. */
const SNAPSHOT_FALLBACK_MS = 5000;
/** Read by scripts/bench_page.py and the tests: when each boot step ended (ms since the worker
 *  started), whether the engine was restored from a snapshot or kept one, the heap's size. */
const diagnostics = { marks: {}, snapshot: null, wasmHeapBytes: () => null, calls: [] };
/** Calls whose timing the diagnostics keep (the latest). */
const KEPT_CALL_TIMINGS = 2000;
self.__tokfeelDiagnostics = () => ({ ...diagnostics, wasmHeapBytes: diagnostics.wasmHeapBytes() });

function mark(step) {
  diagnostics.marks[step] = Math.round(performance.now() - started);
}

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

/** Pyodide's loader and runtime; any failure says which part did not load. `options` are
 *  loadPyodide's snapshot options (snapshot.js). */
async function loadRuntime(indexURL, options = {}) {
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
    return await loadPyodide({ indexURL, packages: [], ...options });
  } catch (error) {
    throw new Error(`the Python runtime (${indexURL}) did not load: ${error.message || error}`);
  }
}

/** The default view's estimate: on a fresh boot it loads every catalog, the fit and the measured
 *  points, so the page's first call (a shared link's view) costs what any later one does; after
 *  a restore it proves the restored engine answers. */
function check() {
  const answer = JSON.parse(handle(JSON.stringify({ fn: "view", args: {} })));
  if (!answer.ok) throw new Error(answer.error.message);
}

/** The booted engine restored from the kept snapshot, or null (none kept, or it failed: then it
 *  is dropped and the boot starts afresh). */
async function restore(indexURL, key, bundle) {
  const snapshot = await readSnapshot(key);
  if (!snapshot) return null;
  try {
    const pyodide = await loadRuntime(indexURL, { _loadSnapshot: snapshot, createPyodideModule: await growingModuleFactory(indexURL, snapshot) });
    mark("runtime");
    // The files are not part of the heap: the engine reads some of them later.
    pyodide.unpackArchive(await bundle, "zip", { extractDir: BUNDLE_DIR });
    mark("unpack");
    handle = pyodide.pyimport("engine.page").handle;
    mark("import");
    check();
    mark("check");
    return pyodide;
  } catch {
    handle = null;
    await dropSnapshots();
    return null;
  }
}

async function boot({ indexURL, bundleURL, bundleIntegrity }) {
  bootingFrom = indexURL;
  adoptDownloads([indexURL, bundleURL]);
  progress("runtime", "Loading the Python runtime");
  // The bundle downloads while Pyodide compiles; a failure is kept until it is awaited.
  const bundle = fetchBundle(bundleURL, bundleIntegrity);
  bundle.catch(() => {});
  const key = snapshotKey(indexURL, bundleURL, self.location.href);
  let pyodide = await restore(indexURL, key, bundle);
  diagnostics.snapshot = pyodide ? "restored" : "none";
  if (!pyodide) {
    pyodide = await loadRuntime(indexURL, { _makeSnapshot: typeof caches !== "undefined" });
    mark("runtime");
    progress("engine", "Loading the estimation engine");
    pyodide.unpackArchive(await bundle, "zip", { extractDir: BUNDLE_DIR });
    mark("unpack");
    pyodide.pyimport("sys").path.insert(0, BUNDLE_DIR);
    handle = pyodide.pyimport("engine.page").handle;
    mark("import");
    progress("catalogs", "Reading the catalogs");
    check();
    mark("check");
    pendingSnapshot = () => keepSnapshot(pyodide, key);
  }
  // Diagnostics for scripts/bench_page.py (read-only): the size of the runtime's WebAssembly heap.
  diagnostics.wasmHeapBytes = () => pyodide._module?.HEAPU8?.byteLength ?? null;
  progress("ready", "Engine ready");
  bootingFrom = null;
  return { python: pyodide.version, elapsedMs: Math.round(performance.now() - started) };
}

/** Take the pending snapshot now (once): after the reply to the page's first view call (its
 *  schedule, when the numbers came first), so the numbers and the stream of the view the visitor
 *  opened (a shared link's) are not queued behind the copy; or
 *  from the fallback timer. Always between two calls, never during one (snapshot.js says why
 *  that state restores correctly). */
function keepSnapshotNow() {
  const snapshot = pendingSnapshot;
  pendingSnapshot = null;
  if (handle) snapshot?.();
}

/** Copy the booted engine's memory (between two calls) and keep it for the next visit. */
function keepSnapshot(pyodide, key) {
  let bytes;
  try {
    bytes = pyodide.makeMemorySnapshot();
  } catch {
    diagnostics.snapshot = "failed";
    return;
  }
  mark("snapshot");
  writeSnapshot(key, bytes).then(
    () => { diagnostics.snapshot = "kept"; },
    () => { diagnostics.snapshot = "not kept"; },
  );
}

self.addEventListener("message", async (event) => {
  const message = event.data || {};
  if (message.type === MSG.INIT) {
    try {
      reply(message.id, true, await boot(message));
    } catch (error) {
      reply(message.id, false, { message: `the engine could not start: ${error.message || error}`, field: null });
    }
    if (pendingSnapshot) setTimeout(keepSnapshotNow, SNAPSHOT_FALLBACK_MS);
    return;
  }
  if (message.type === MSG.CALL) {
    const receivedMs = performance.now();
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
      dropSnapshots(); // a Retry boots afresh rather than restoring what may have led here
      reply(message.id, false, { message: `the engine crashed: ${error.message || error}`, field: null });
      self.postMessage({ type: MSG.ERROR, message: `the engine crashed: ${error.message || error}` });
      return;
    }
    const computedMs = performance.now();
    const parsed = JSON.parse(answer);
    reply(message.id, parsed.ok, parsed.ok ? parsed.result : parsed.error);
    // Absolute times (the page's clock has another origin): when the call arrived and its reply left.
    diagnostics.calls.push({ fn: message.fn, receivedAt: performance.timeOrigin + receivedMs, engineMs: computedMs - receivedMs, repliedAt: performance.timeOrigin + performance.now() });
    if (diagnostics.calls.length > KEPT_CALL_TIMINGS) diagnostics.calls.shift();
    // After the first view's numbers and schedule (or its whole answer) have gone out.
    if (pendingSnapshot && (message.fn === "view" || message.fn === "schedule")) keepSnapshotNow();
  }
});

// A promise nobody awaits failed: while booting it is the runtime's loader (a file that did not
// download), later something in the worker itself. Either way the page is told, not left waiting.
self.addEventListener("unhandledrejection", (event) => {
  event.preventDefault();
  const reason = event.reason?.message || event.reason;
  self.postMessage({ type: MSG.ERROR, message: bootingFrom ? `the Python runtime (${bootingFrom}) did not load: ${reason}` : `engine worker: ${reason}` });
});
