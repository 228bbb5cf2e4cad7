// Background work for the engine worker, one call at a time.
//
// The worker answers in order, so a page that sent twenty sweep chunks at once would make the
// next interaction wait behind all of them. Instead, foreground calls (the numbers for what the
// visitor just chose) go straight to the worker, and background calls (charts, picker marks,
// lists) queue here and are sent one by one: a foreground call waits for at most one short
// background call. A new view cancels the queued background work of the old one.

export class Jobs {
  constructor(client) {
    this.client = client;
    this.queue = [];
    this.busy = false;
    this.generation = 0;
  }

  /** A call for what is on screen now: sent at once. */
  now(fn, args) {
    return this.client.call(fn, args);
  }

  /** A background call: resolves with its result, or with null if cancelled before it ran. */
  later(fn, args) {
    return new Promise((resolve, reject) => {
      this.queue.push({ fn, args, resolve, reject, generation: this.generation });
      this.pump();
    });
  }

  /** Drop the queued background calls (their promises resolve with null). */
  cancel() {
    this.generation += 1;
    for (const job of this.queue) job.resolve(null);
    this.queue = [];
  }

  /** Resolves when nothing is queued or running (benchmarks and tests wait on it). */
  idle() {
    if (!this.busy && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.onIdle = [...(this.onIdle || []), resolve];
    });
  }

  async pump() {
    if (this.busy) return;
    const job = this.queue.shift();
    if (!job) {
      // Callers queue their next chunk in a microtask after the last one resolved: look again
      // after those have run before calling the queue idle.
      setTimeout(() => {
        if (this.busy || this.queue.length) return;
        for (const resolve of this.onIdle || []) resolve();
        this.onIdle = [];
      }, 0);
      return;
    }
    this.busy = true;
    try {
      job.resolve(await this.client.call(job.fn, job.args));
    } catch (error) {
      job.reject(error);
    } finally {
      this.busy = false;
      this.pump();
    }
  }
}
