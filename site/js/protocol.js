// The page <-> engine worker protocol, declared once. Both sides import this module.
//
// Page -> worker (every request carries an `id`; the worker answers each with exactly one reply):
//   {type: "init", id, indexURL, bundleURL, bundleIntegrity}   boot Pyodide and load the engine
//   {type: "call", id, fn, args}                               call engine.page.handle({fn, args})
// Worker -> page:
//   {type: "reply", id, ok: true, result}                      the answer to request `id`
//   {type: "reply", id, ok: false, error: {message, field}}    ... or why it failed
//   {type: "event:progress", stage, message, elapsedMs}         boot progress (no id)
//   {type: "event:error", message}                              a failure outside any request
//
// A picker change is two calls sent together: fn "numbers" (what the page shows) then fn
// "schedule" (the stream's per-token times), answered in that order; fn "view" is the two in one
// answer (engine/page/__init__.py declares the functions).
//
// Values crossing the boundary are plain JSON data. No Python source is ever built here: the
// worker calls one Python function, engine.page.handle(json) -> json.

/** Message type names (namespaced like stlite's). */
export const MSG = Object.freeze({
  INIT: "init",
  CALL: "call",
  REPLY: "reply",
  PROGRESS: "event:progress",
  ERROR: "event:error",
});

/** Boot stages the worker reports, in order, with the text the page shows. */
export const STAGES = Object.freeze({
  runtime: "Loading the Python runtime",
  engine: "Loading the estimation engine",
  catalogs: "Reading the catalogs",
  ready: "Engine ready",
});

/** A boot that has not finished by then has failed (wrong MIME type makes Pyodide hang forever). */
export const BOOT_TIMEOUT_MS = 60000;
/** A call that has not answered by then has failed, and so has the worker: it answers in order,
 *  so everything after a stuck call would wait behind it. */
export const CALL_TIMEOUT_MS = 30000;

/** An Error that says the engine itself is down (not that the input was wrong). */
function engineDown(message) {
  const error = new Error(message);
  error.engineDown = true;
  return error;
}

/**
 * The page's handle on the engine worker: start() boots it, call() sends a request and resolves
 * with its reply. Every failure (worker script error, boot timeout, crash, stuck call) rejects
 * with an Error whose message a person can read and whose `engineDown` is true; start() can be
 * called again after any of them (the page's Retry).
 */
export class EngineClient {
  /** @param {{workerURL: string, onProgress?: (stage: string, message: string, ms: number) => void}} options */
  constructor(options) {
    this.options = options;
    this.nextId = 1;
    this.pending = new Map();
    this.worker = null;
    this.failure = null;
  }

  /** Boot the worker and the engine; resolves when the engine answers calls. */
  start(config) {
    this.stop("the engine was restarted");
    this.failure = null;
    let worker;
    try {
      worker = new Worker(this.options.workerURL, { type: "module" });
    } catch (error) {
      this.failure = engineDown(`could not start the engine worker: ${error.message}`);
      return Promise.reject(this.failure);
    }
    this.worker = worker;
    // Events of a worker that was replaced (Retry) are no longer about the engine.
    const current = (handler) => (event) => worker === this.worker && handler(event);
    worker.addEventListener("message", current((event) => this.receive(event.data)));
    worker.addEventListener("error", (event) => {
      event.preventDefault(); // reported here, not as an uncaught error of the page
      if (worker === this.worker) this.fail(`the engine worker failed: ${event.message || "its script did not load (missing file or wrong MIME type?)"}`);
    });
    worker.addEventListener("messageerror", current(() => this.fail("the engine worker sent a message that could not be read")));
    return this.request({ type: MSG.INIT, ...config }, BOOT_TIMEOUT_MS, "starting the engine").catch((error) => {
      // A boot that failed leaves no half-started worker behind.
      this.stop(error.message);
      this.failure = engineDown(error.message);
      throw this.failure;
    });
  }

  /** Call engine function `fn` with `args`; resolves with its result, rejects with its error. */
  call(fn, args) {
    return this.request({ type: MSG.CALL, fn, args }, CALL_TIMEOUT_MS, fn);
  }

  request(message, timeoutMs, what) {
    if (this.failure) return Promise.reject(this.failure);
    if (!this.worker) return Promise.reject(engineDown("the engine is not started"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        const error = engineDown(`${what} took longer than ${Math.round(timeoutMs / 1000)} s`);
        reject(error);
        this.fail(error.message);
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.worker.postMessage({ ...message, id });
    });
  }

  receive(data) {
    if (!data || typeof data !== "object") return;
    if (data.type === MSG.PROGRESS) {
      this.options.onProgress?.(data.stage, data.message, data.elapsedMs);
      return;
    }
    if (data.type === MSG.ERROR) {
      this.fail(data.message);
      return;
    }
    if (data.type !== MSG.REPLY) return;
    const entry = this.pending.get(data.id);
    if (!entry) return;
    this.pending.delete(data.id);
    clearTimeout(entry.timer);
    if (data.ok) {
      entry.resolve(data.result);
    } else {
      const error = new Error(data.error?.message || "the engine failed");
      error.field = data.error?.field || null;
      error.suggestions = data.error?.suggestions || [];
      entry.reject(error);
    }
  }

  /** Reject everything in flight and refuse further calls until start() is called again. */
  fail(message) {
    this.failure = engineDown(message);
    this.stop(message);
    this.options.onFailure?.(this.failure);
  }

  /** End the worker (if any) and reject what it still owed. */
  stop(message) {
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(engineDown(message));
    }
    this.pending.clear();
    this.worker?.terminate();
    this.worker = null;
  }
}
