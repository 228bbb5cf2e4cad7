// The booted engine's memory, kept for the next visit (used by worker.js only).
//
// A cold boot compiles the runtime, starts CPython, imports the engine and loads the catalogs.
// Then, right after the worker's reply to the page's first view call (so the numbers a visitor
// opened, a shared link's, are not queued behind the copy), the whole WebAssembly heap is copied
// out (Pyodide's memory snapshot: loadPyodide({_makeSnapshot}), makeMemorySnapshot()) and kept in
// Cache Storage under a key naming the engine bundle (content-addressed) and the runtime
// (versioned folder) and the worker script; any other build's snapshot is deleted then. The next
// visit restores it (loadPyodide({_loadSnapshot})) instead of starting CPython and importing the
// engine.
//
// Why a heap copied after some calls restores an engine that answers as a fresh boot does: the
// copy is taken between two calls, never during one (a call runs to its end inside one task of
// the worker, and the copy runs in a task of its own or after a reply). Between calls the engine
// holds its boot state (runtime, imported modules, catalogs) plus memos of pure functions
// (functools.cache / lru_cache over catalog ids, formats and sizes, all functions of their
// arguments and of the bundle's files, which are part of the key); engine.page keeps nothing of
// a visitor's between calls (no module state is assigned by a call). A memo a restored engine
// finds gives the value it would compute. tests/test_engine_snapshot.py checks a restored engine
// against the CLI on a view the first visit did not compute.
//
// Why an earlier attempt failed with "offset is out of bounds": Pyodide writes the snapshot back
// with HEAP8.set(), and the runtime's memory is created by the .wasm itself at its initial size
// (31.5 MB for Pyodide 314), so loadPyodide's INITIAL_MEMORY hint has no effect; a heap that
// had grown before the snapshot (37.7 MB once the catalogs are loaded) does not fit. The memory
// is therefore grown to the snapshot's size between instantiation and the restore (the module
// factory below). A snapshot that fails to restore, or whose engine then does not answer, is
// deleted and the engine boots as on a first visit.

/** Cache Storage cache holding the snapshot (its name does not start with sw.js's CACHE_PREFIX,
 *  so the service worker's clean-up of old builds leaves it alone). */
export const SNAPSHOT_CACHE = "tokfeel.snapshots";

/** The snapshot's key: one per engine bundle, runtime and worker script (all three have
 *  content-addressed or versioned URLs; the worker's boot steps are part of the heap too). */
export function snapshotKey(indexURL, bundleURL, workerURL) {
  return `${bundleURL}.snapshot?runtime=${encodeURIComponent(indexURL)}&worker=${encodeURIComponent(workerURL)}`;
}

/** The kept snapshot's bytes, or null (none, another build's, or no Cache Storage here). */
export async function readSnapshot(key) {
  try {
    if (typeof caches === "undefined") return null;
    const response = await (await caches.open(SNAPSHOT_CACHE)).match(key);
    return response ? new Uint8Array(await response.arrayBuffer()) : null;
  } catch {
    return null;
  }
}

/** Keep `bytes` as the snapshot under `key`, replacing every other one (older builds'). */
export async function writeSnapshot(key, bytes) {
  if (typeof caches === "undefined") return;
  const cache = await caches.open(SNAPSHOT_CACHE);
  for (const request of await cache.keys()) if (request.url !== key) await cache.delete(request);
  await cache.put(key, new Response(bytes, { headers: { "content-type": "application/octet-stream" } }));
}

/** Delete every kept snapshot (one failed to restore, or its engine crashed). */
export async function dropSnapshots() {
  try {
    if (typeof caches !== "undefined") await caches.delete(SNAPSHOT_CACHE);
  } catch {
    // nothing kept, nothing to drop
  }
}

/** loadPyodide's module factory for a restore: Pyodide's own (pyodide.asm.mjs), with the
 *  memory grown to hold `snapshot` before Pyodide copies it in (see above). */
export async function growingModuleFactory(indexURL, snapshot) {
  const { default: createModule } = await import(`${indexURL}pyodide.asm.mjs`);
  return async (settings) => {
    const module = await createModule(settings);
    if (module.HEAP8.length < snapshot.length) module.growMemory(snapshot.length);
    return module;
  };
}
