// The engine session: the Web Worker running Python (protocol.js), its boot and Retry, the status
// line in the header, and the queue of background calls (jobs.js).
//
// A boot still running after SLOW_BOOT_MS says so; any failure says what failed and offers
// Retry; the numbers on screen stay (the app decides what they are: describeNumbers()).

import { EngineClient, STAGES } from "./protocol.js";
import * as fmt from "./format.js";
import { $ } from "./dom.js";
import { Jobs } from "./jobs.js";
import { enableOffline } from "./offline.js";
import { boot } from "./data.js";

/** A boot still running after this long says so (a cold boot takes about 6 s on two slow cores). */
const SLOW_BOOT_MS = 15000;

export class Session {
  /**
   * root: the engine status element; onReady(): the engine answers; onDown(): it stopped or
   * could not start; describeNumbers(): what the numbers on screen are, for the status line.
   */
  constructor(root, { onReady, onDown, describeNumbers }) {
    Object.assign(this, { onReady, onDown, describeNumbers });
    this.ui = { status: root, text: $(".status-text", root), retry: $(".retry", root) };
    this.ready = false;
    this.starting = false;
    this.slowNote = "";
    this.timings = { recomputeMs: [], recomputes: [], firstNumberMs: null, engineReadyMs: null };
    this.client = new EngineClient({
      workerURL: new URL("./worker.js", import.meta.url).href,
      onProgress: (stage, message) => this.setStatus("loading", `${STAGES[stage] || message}…${this.slowNote}`),
      onFailure: (error) => this.failed(error),
    });
    this.jobs = new Jobs(this.client);
    this.ui.retry.addEventListener("click", () => this.start());
  }

  /** A recompute's times (ms): `sent` the call, `replied` its reply read, now its numbers written
   *  (scripts/bench_page.py reads them). */
  recorded(sent, replied) {
    const shownMs = performance.now() - sent;
    this.timings.recomputeMs.push(shownMs);
    this.timings.recomputes.push({ sentAt: performance.timeOrigin + sent, repliedMs: replied - sent, shownMs });
  }

  setStatus(state, text) {
    this.ui.status.dataset.state = state;
    this.ui.text.textContent = text;
    this.ui.retry.hidden = state !== "error";
  }

  failed(error) {
    if (this.starting) return; // start() reports a failed start itself
    this.ready = false;
    this.onDown();
    this.setStatus("error", `The engine stopped: ${error.message}. ${this.describeNumbers()}; Retry starts it again.`);
  }

  /** Boot (or reboot, from Retry) the engine; a boot never waits forever (BOOT_TIMEOUT_MS). */
  async start() {
    if (this.starting) return;
    this.starting = true;
    this.startedAt = performance.now();
    this.ready = false;
    this.slowNote = "";
    this.setStatus("loading", "Starting the engine…");
    const slowTimer = setTimeout(() => {
      this.slowNote = " This is taking longer than usual (a slow connection or a busy computer?).";
      this.setStatus("loading", `${this.ui.text.textContent}${this.slowNote}`);
    }, SLOW_BOOT_MS);
    try {
      await this.client.start({
        indexURL: new URL(boot.indexURL, document.baseURI).href,
        bundleURL: new URL(boot.bundleURL, document.baseURI).href,
        bundleIntegrity: boot.bundleIntegrity,
      });
    } catch (error) {
      this.starting = false;
      this.onDown();
      this.setStatus("error", `The engine could not start: ${error.message}. ${this.describeNumbers()}; Retry tries again.`);
      return;
    } finally {
      clearTimeout(slowTimer);
      this.starting = false;
    }
    this.ready = true;
    this.timings.engineReadyMs = performance.now();
    this.setStatus("ready", `Engine ready (${fmt.duration((performance.now() - this.startedAt) / 1000)} to start).`);
    enableOffline();
    await this.onReady();
  }
}
