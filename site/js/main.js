// tokfeel's page: pickers -> the engine (Python in a Web Worker) -> numbers -> a streamed answer,
// then the rest (verdicts, charts, race, lists) in the background.
//
// The first numbers come from the build (the same engine in CPython), so they show before Pyodide
// has booted; then every change is recomputed in the worker. The state lives in the URL (url.js,
// state.js, schema.js). This module wires the panels (site/js/panels/*, one per
// site/templates/panels/*.j2, each querying inside its own root) to the engine (session.js).

import { LANE_SEPARATOR, quantFor } from "./schema.js";
import { Charts } from "./charts.js";
import { Race, LANE_KEYS } from "./race.js";
import { initTheme } from "./theme.js";
import { Session } from "./session.js";
import { readURL, shareButton, writeURL } from "./url.js";
import { boot, catalog, answers, devices, initial, models, panelRoot, schema } from "./data.js";
import { SetupPanel } from "./panels/setup.js";
import { ResultsPanel } from "./panels/results.js";
import { AdvicePanel } from "./panels/advice.js";
import { PlayerPanel } from "./panels/player.js";
import { ExplainPanel } from "./panels/explain.js";
import { agentPanel, measurePanel, reversePanel } from "./panels/tools.js";
import { ThisComputer } from "./detect.js";
import { revealFromFragment } from "./measure.js";
import { diagnostics } from "./diagnostics.js";
import { $, $$, announce, revealTarget } from "./dom.js";

/** Wait this long after the last keystroke in a number field before recomputing. */
const TYPING_DEBOUNCE_MS = 150;
/** A pick's fields are updated with its numbers, or after this long if they are late. */
const CONTROLS_WAIT_MS = 100;
const ENGINE_DOWN = "The engine is not running: press Retry at the top to compute this set-up.";

class App {
  constructor() {
    this.view = {}; // the view in the URL
    this.current = null; // {view, request, estimate, cli, commands} shown now
    this.computeSeq = 0;
    this.recomputing = false; // a recompute is scheduled or in flight
    this.scheduling = 0; // the computeSeq whose stream schedule is on its way (0: none)
    this.heldControls = null; // the fields' update applyView held back until the numbers arrive
    /** A link's state wins: detection fills only a visit whose URL names no hardware, and only
     *  until the visitor picks one. */
    this.urlNamedHardware = new URLSearchParams(location.search).has("hw");
    this.urlNamedThisComputer = new URLSearchParams(location.search).has("me");
    this.hardwarePicked = false;
    this.detectionAsked = false;
    const header = panelRoot("header");
    this.urlNotice = $("#url-notice");
    this.session = new Session($('[data-testid="engine-status"]', header), {
      onReady: async () => {
        try {
          // A link naming its device: its numbers first, then detection (which can only add me).
          if (this.urlNamedHardware) await this.recompute();
          if ((await this.detectThisComputer()) || !this.urlNamedHardware) await this.recompute();
        } finally {
          this.player.loadMarkdown(); // after the first numbers, off the boot's critical path
        }
      },
      onDown: () => {
        this.player.loadMarkdown();
        this.recomputing = false;
        if (!this.showsThisView()) this.renderWithoutEngine();
      },
      describeNumbers: () => this.numbersNote(),
    });
    this.session.start(); // first: the worker's boot overlaps building the panels below
    this.jobs = this.session.jobs;
    initTheme($("#theme-toggle", header));
    shareButton($("#copy-link", header));

    // What the panels may ask of the app.
    const app = {
      jobs: this.jobs,
      catalog,
      answers,
      getView: () => ({ ...this.view }),
      setView: (patch) => this.setView(patch),
      controlsChanged: (event) => this.controlsChanged(event),
      setLanes: (lanes) => this.setView(Object.fromEntries(LANE_KEYS.map((key, i) => [key, lanes[i] || ""]))),
      useHardware: (id, cards = 1) => this.pickHardware({ hw: id, gpus: cards }),
      /** The decode rate measured on this computer ({hw, model, quant, decode_tps}), kept in the
       *  URL (me_run) so a copied link shows it; setting it recomputes nothing. */
      measured: () => {
        const [hw, model, quant, tps] = this.view.me_run.split(LANE_SEPARATOR);
        return tps ? { hw, model, quant, decode_tps: Number(tps) } : null;
      },
      setMeasured: (m) => {
        this.view = { ...this.view, me_run: [m.hw, m.model, m.quant, m.decode_tps.toFixed(2)].join(LANE_SEPARATOR) };
        writeURL(this.view, schema);
        this.race.update();
      },
      /** The headline's comparison with this computer (null: none to make). */
      showRatio: (ratio) => this.results.showRatio(ratio, devices.get(this.view.me)?.name || this.view.me),
      /** The visitor says which device this computer is: it becomes the pick and the reference. */
      useThisComputer: (id) => this.pickHardware({ hw: id, me: id }),
    };
    this.setup = new SetupPanel(panelRoot("setup"), app);
    this.thisComputer = new ThisComputer(this.setup.ui.hardwareNote, app);
    this.results = new ResultsPanel(panelRoot("results"));
    this.advice = new AdvicePanel(panelRoot("advice"), (patch) => this.setView(patch));
    this.player = new PlayerPanel(panelRoot("player"), () => this.current);
    this.explain = new ExplainPanel(panelRoot("explain"));
    this.charts = new Charts($$('[data-testid="chart"]', panelRoot("charts")), new URL(boot.chartURL, document.baseURI).href);
    const race = panelRoot("race");
    this.race = new Race({ container: $("#lanes", race), addButton: $('[data-testid="add-lane"]', race), runButton: $("#race-run", race) }, app);
    this.reverse = reversePanel(panelRoot("reverse"), app);
    this.agent = agentPanel(panelRoot("agent"), app);
    this.measure = measurePanel(panelRoot("measure"), app);
  }

  // ------------------------------------------------------------ the view

  showView() {
    this.heldControls = null; // the whole view is shown: nothing held is left to show
    this.setup.show(this.view);
    this.player.showView(this.view);
  }

  controlsChanged(event) {
    this.flushControls(event?.target); // a pick before the last change's reply builds on it
    const { errors, next } = this.setup.read(this.view);
    if (next.hw !== this.view.hw) this.hardwarePicked = true;
    this.setup.showFormErrors(errors);
    if (errors.length) return;
    const typing = event?.type === "input" && event.target.type === "number";
    this.applyView(next, typing ? TYPING_DEBOUNCE_MS : 0);
  }

  pickHardware(patch) {
    this.setView(patch);
    this.setup.focusHardware();
  }

  /** Change part of the view from code (a suggestion, a race lane, a device from the list). */
  setView(patch) {
    if (patch.hw) this.hardwarePicked = true;
    const next = { ...this.view, ...patch };
    if (patch.model && patch.model !== this.view.model && !patch.quant) next.quant = quantFor(models.get(next.model), next.quant);
    this.applyView(next, 0, true);
  }

  /** Make `next` the view: ask the engine for its numbers, then update the page (flushControls).
   *  `showFields`: the view came from code or the URL, so every field is set to it. A call sent
   *  at once updates the fields with its numbers, in one task: written before, they cost a
   *  rendering frame and Chromium's autofill re-reading the form (~5 ms) ahead of the reply. */
  applyView(next, delayMs, showFields = false) {
    const shown = this.heldControls?.shown || this.view; // the view the fields show
    this.heldControls = { shown, showFields: showFields || Boolean(this.heldControls?.showFields), modelChanged: next.model !== shown.model };
    this.view = next;
    this.advice.stale = true;
    clearTimeout(this.debounce);
    clearTimeout(this.flushTimer);
    const waitsForConfig = next.model === "custom" && !next.cfg;
    if (delayMs === 0 && this.session.ready && !waitsForConfig) {
      this.recomputing = true;
      this.recompute();
      this.flushTimer = setTimeout(() => this.flushControls(), CONTROLS_WAIT_MS);
      return;
    }
    this.flushControls();
    if (waitsForConfig) {
      this.renderPending("Paste a config.json and press “Use this config”.");
      return;
    }
    if (!this.session.ready) {
      this.renderWithoutEngine();
      return;
    }
    this.recomputing = true;
    this.debounce = setTimeout(() => this.recompute(), delayMs);
  }

  /** Show the view applyView held back (fields, prompt, URL); `keep`: a field just changed keeps its value. */
  flushControls(keep = null) {
    const held = this.heldControls;
    if (!held) return;
    this.heldControls = null;
    clearTimeout(this.flushTimer);
    const property = keep?.type === "checkbox" ? "checked" : "value";
    const kept = keep?.[property];
    if (held.showFields) this.setup.show(this.view);
    else this.setup.showPicked(this.view, held.modelChanged);
    if (keep && keep[property] !== kept) keep[property] = kept;
    this.player.showView(this.view);
    writeURL(this.view, schema);
    this.player.stop();
  }

  /** Ask the engine what the browser's GPU is (once); at high confidence, on a visit whose URL
   *  names no hardware, select it and write it into the URL like a pick; true if it did. */
  async detectThisComputer() {
    if (this.detectionAsked) return false;
    this.detectionAsked = true;
    const result = await this.thisComputer.detect();
    if (result?.confidence !== "high") return false;
    const patch = !this.urlNamedThisComputer && !this.view.me ? { me: result.id } : {};
    if (!this.urlNamedHardware && !this.hardwarePicked && this.view.hw !== result.id) patch.hw = result.id;
    if (!Object.keys(patch).length) return false;
    this.view = { ...this.view, ...patch };
    this.showView();
    writeURL(this.view, schema);
    if (patch.hw) announce(`This computer's GPU, ${devices.get(result.id)?.name || result.id}, is selected.`);
    return true;
  }

  // ------------------------------------------------------------ numbers

  /** `explainLater`: the explanation, below the numbers, is written in the next task (after a pick). */
  renderEstimate(result, explainLater = false) {
    this.current = result;
    this.results.render(result);
    this.player.show(result);
    this.setup.engineError(null, this.view);
    clearTimeout(this.explainTimer);
    const explain = () => {
      this.explainTimer = 0;
      this.explain.render(result, this.setup.deviceSpec(result.view));
    };
    if (explainLater) this.explainTimer = setTimeout(explain, 0);
    else explain();
  }

  /** No numbers (yet, or the engine is down: `unavailable`): say so, never "NaN". */
  renderPending(message = "", unavailable = false) {
    this.results[unavailable ? "unavailable" : "pending"](message, this.setup.name(this.view));
    this.player.pending();
  }

  /** A changed set-up while the engine starts: the build's numbers struck out, and the time the
   *  engine has taken so far, updated every second until it answers. */
  renderWaiting() {
    const update = () => this.results.waiting(initial, this.setup.name(this.view), (performance.now() - this.session.startedAt) / 1000);
    update();
    this.player.pending();
    clearInterval(this.waitTimer);
    this.waitTimer = setInterval(() => {
      if (this.session.starting && !this.isBuiltView() && this.results.root.dataset.stale === "true") update();
      else clearInterval(this.waitTimer);
    }, 1000);
  }

  /** Whether the view in the URL is the one the build computed numbers for. */
  isBuiltView() {
    return Object.keys(schema).every((key) => this.view[key] === initial.view[key]);
  }

  /** Whether the numbers on screen were computed for the view in the URL. */
  showsThisView() {
    return Boolean(this.current && !this.current.failed && JSON.stringify(this.current.view) === JSON.stringify(this.view));
  }

  /** Numbers while the engine is not answering: the build's for the view it computed, else a
   *  placeholder while it starts, else why there are none. */
  renderWithoutEngine() {
    if (this.isBuiltView()) this.renderEstimate(initial);
    else if (this.session.starting) this.renderWaiting();
    else this.renderPending(ENGINE_DOWN, true);
  }

  /** What the numbers on screen are, for a status message about the engine. */
  numbersNote() {
    if (!this.showsThisView()) return "No numbers can be computed for this set-up until it runs";
    return this.current === initial ? "The numbers shown were computed when this page was built" : "The numbers shown are the last ones computed";
  }

  async recompute() {
    if (!this.session.ready || (this.view.model === "custom" && !this.view.cfg)) return; // no config.json yet
    const seq = ++this.computeSeq;
    const asked = { ...this.view };
    this.jobs.cancel();
    const sent = performance.now();
    // The numbers, then the stream's schedule: sent together, answered in that order, so the
    // worker computes the schedule while the page draws the numbers (Run waits for it).
    const numbers = this.jobs.now("numbers", asked);
    this.scheduling = seq;
    this.jobs.now("schedule", asked).then(
      (answer) => seq === this.computeSeq && this.showSchedule(answer.schedule),
      (error) => seq === this.computeSeq && !error.engineDown && this.current && !this.current.failed && this.player.scheduleFailed(error.message),
    ).finally(() => this.scheduling === seq && (this.scheduling = 0));
    let result;
    try {
      result = await numbers;
    } catch (error) {
      this.flushControls();
      if (seq !== this.computeSeq) return;
      this.recomputing = false;
      if (error.engineDown) {
        // The worker died, not the input: the numbers on screen stay if they are this view's.
        if (!this.showsThisView()) this.renderWithoutEngine();
        return;
      }
      this.renderPending("", true);
      this.setup.engineError(error, this.view);
      this.current = { ...(this.current || {}), view: asked, failed: true };
      return;
    }
    const replied = performance.now();
    this.flushControls();
    if (seq !== this.computeSeq) return; // a newer request is on its way
    this.recomputing = false;
    this.renderEstimate({ ...result, view: asked }, true);
    this.session.recorded(sent, replied);
    this.background(asked, seq);
  }

  /** The stream's schedule for the numbers on screen: Run may play them. */
  showSchedule(schedule) {
    if (!this.current || this.current.failed) return;
    this.current = { ...this.current, estimate: { ...this.current.estimate, schedule } };
    this.player.show(this.current);
  }

  /** Everything below the main numbers, one engine call at a time, newest view only. */
  background(asked, seq) {
    const stale = () => seq !== this.computeSeq;
    this.jobs.later("advice", { view: asked }).then((advice) => advice && !stale() && this.advice.render(advice)).catch(() => {});
    this.agent.update();
    this.race.update();
    for (const kind of this.charts.kinds) {
      this.charts.pending(kind);
      this.jobs.later(`sweep_${kind}`, { view: asked })
        .then((data) => data && !stale() && this.charts.show(kind, data))
        .catch((error) => !stale() && this.charts.failed(kind, error.message));
    }
    this.setup.updateMarks(this.jobs, asked, stale);
    this.reverse.viewChanged();
  }

  // ------------------------------------------------------------ start

  init() {
    this.view = readURL(schema, this.urlNotice);
    this.showView();
    if (this.isBuiltView()) this.renderEstimate(initial);
    else this.renderWaiting();
    this.session.timings.firstNumberMs = performance.now();
    this.race.render(this.race.views());
    window.addEventListener("popstate", () => this.applyView(readURL(schema, this.urlNotice), 0, true));
    const reveal = () => {
      revealTarget();
      revealFromFragment();
    };
    window.addEventListener("hashchange", reveal);
    reveal();
  }
}

const app = new App();
window.__tokfeel = diagnostics(app);
app.init();
