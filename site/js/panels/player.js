// "Feel it" (site/templates/panels/player.j2): Run plays the answer on the engine's per-token
// schedule (stream.js), rendered as Markdown (markdown.js), while the bar above it shows the
// phases (reading the prompt, thinking, answering) against the predicted total and the gauge
// the rate right now against the use cases. The box follows the newest text unless the reader
// scrolls up, and follows again once they scroll back to the bottom. Run becomes Stop while it
// plays; "Skip the wait" jumps a phase without an answer token and says how long it was.

import * as fmt from "../format.js";
import { $, announce, reducedMotion, setText } from "../dom.js";
import { play, liveRate } from "../stream.js";
import { Gauge } from "../gauge.js";
import { loadMarkdown, MarkdownView } from "../markdown.js";
import { answers, answersData, boot, useCases } from "../data.js";

/** Under reduced motion the streamed text changes at most this often. */
const REDUCED_MOTION_STEP_MS = 500;
/** The reader is "at the bottom" of the answer box within this many pixels. */
const FOLLOW_SLACK_PX = 40;
/** A wait shorter than this is not worth a Skip button. */
const SKIPPABLE_S = 1;
const IDLE_TEXT = "Press Run to watch the answer arrive at the predicted speed, after the predicted wait.";

export class PlayerPanel {
  /** current(): the result on screen (or null). */
  constructor(root, current) {
    const q = (selector) => $(selector, root);
    this.current = current;
    this.player = null;
    this.following = true;
    this.ui = {
      run: q('[data-testid="run"]'),
      skip: q('[data-testid="skip"]'),
      stream: q('[data-testid="stream"]'),
      streamText: q("#stream-text"),
      streamStatus: q("#stream-status"),
      bar: q("#stream-bar"),
      count: q('[data-testid="stream-count"]'),
      clock: q('[data-testid="stream-clock"]'),
      progress: q('[data-testid="stream-progress"]'),
      phases: { prompt: q(".phase-prompt"), thinking: q(".phase-thinking"), answer: q(".phase-answer") },
      legend: q("#phase-legend"),
      follow: q("#follow"),
      promptText: q("#prompt-text"),
      tokensNote: q("#tokens-note"),
    };
    this.gauge = new Gauge(
      { bands: q("#gauge-bands"), needle: q("#gauge-needle"), predicted: q("#gauge-predicted"), scale: q("#gauge-scale"), value: q("#live-rate"), done: q("#stream-done") },
      useCases.cases,
    );
    this.markdown = null;
    /** Whether the Markdown libraries have loaded or failed (or the build has none). */
    this.markdownSettled = !(boot.markedURL && boot.purifyURL);
    this.ui.run.addEventListener("click", (event) => (this.player ? this.stopByReader() : this.run(event.timeStamp)));
    this.ui.skip.addEventListener("click", () => this.skip());
    this.ui.stream.addEventListener("scroll", () => this.onScroll(), { passive: true });
    this.ui.follow.addEventListener("click", () => {
      this.following = true;
      this.scrollToNewest();
    });
  }

  /** Load marked and DOMPurify (once): called when the engine is ready or could not start, so
   *  they are not on the boot's critical path, and by a Run before then. Without them (a build
   *  without them, a failed load, a Run before they arrive) the answer streams as plain text. */
  loadMarkdown() {
    if (this.markdownSettled || this.markdownLoading) return;
    this.markdownLoading = true;
    loadMarkdown(new URL(boot.markedURL, document.baseURI).href, new URL(boot.purifyURL, document.baseURI).href)
      .then((render) => (this.markdown = new MarkdownView(this.ui.streamText, render)))
      .catch(() => {})
      .finally(() => (this.markdownSettled = true));
  }

  /** The prompt of the chosen answer, shown as the user's bubble. */
  showView(view) {
    setText(this.ui.promptText, answers[view.answer].prompt);
  }

  /** Numbers for this result are on screen: Run may play it once its schedule is there (the
   *  engine sends it right after the numbers; show() is called again with it). */
  show(result) {
    // Won't run means won't run: no speed on the gauge and nothing for Run to play.
    const runs = result.estimate.fit !== "no";
    const scheduled = Boolean(result.estimate.schedule);
    this.gauge.setPredicted(runs ? result.estimate.decode_tps : null);
    const answer = answers[result.view.answer];
    this.ui.tokensNote.textContent = `The answer is ${fmt.count(answer.tokens.length)} tokens, counted with ${answersData.tokenizer}, OpenAI's BPE tokenizer: ${fmt.number(answer.tokens.join("").length / answer.tokens.length, 1)} characters per token here; prose packs more characters into a token than code does, and Llama, Qwen or Gemma tokenizers differ by a few percent.`;
    this.ui.run.disabled = !runs || !scheduled;
    this.ui.run.title = !runs ? "This set-up cannot load, so there is nothing to stream" : scheduled ? "" : "Computing when each token arrives…";
    if (runs && scheduled) this.showPhases(result, 0, 0);
    else this.pending();
  }

  /** The engine could not compute the stream's schedule for the numbers on screen. */
  scheduleFailed(message) {
    this.pending();
    this.ui.run.title = `The stream's timing could not be computed: ${message}`;
  }

  /** No numbers for the view: nothing to play, no phases of another set-up. */
  pending() {
    const { ui } = this;
    ui.run.disabled = true;
    ui.count.textContent = "";
    ui.clock.textContent = "";
    ui.legend.textContent = "";
    for (const phase of Object.values(ui.phases)) phase.hidden = true;
  }

  setPlaying(playing) {
    this.ui.run.dataset.state = playing ? "playing" : "idle";
    this.ui.run.textContent = playing ? "Stop" : "Run";
    if (!playing) this.ui.skip.hidden = true;
    this.ui.follow.hidden = true;
  }

  stop() {
    if (this.player) {
      this.ui.streamStatus.textContent = IDLE_TEXT;
      this.ui.bar.dataset.phase = "idle";
    }
    this.player?.stop();
    this.player = null;
    this.ui.stream.dataset.state = "idle";
    this.gauge.setLive(null);
    this.setPlaying(false);
  }

  stopByReader() {
    const shown = Number(this.ui.stream.dataset.tokens);
    const elapsed = this.elapsed;
    this.stop();
    this.ui.streamStatus.textContent = `Stopped after ${fmt.count(shown)} tokens, ${fmt.duration(elapsed)} in.`;
    announce(this.ui.streamStatus.textContent);
  }

  /** Predicted phases of a schedule, in seconds: [prompt, thinking, answer, total]. */
  static phases(schedule) {
    const arrivals = schedule.arrival_s;
    const hidden = schedule.reasoning_tokens;
    const end = arrivals.at(-1);
    const answerStart = arrivals[Math.min(hidden, arrivals.length - 1)];
    return { prompt: arrivals[0], thinking: answerStart - arrivals[0], answer: end - answerStart, total: end };
  }

  /** The phase bar, the token count and the clock at `elapsed` seconds with `shown` tokens;
   *  the phases themselves and their legend only when a stream starts (`elapsed` 0). Each frame
   *  writes only what changed, so a busy page spends its frames on the text. */
  showPhases(result, elapsed, shown) {
    const { ui } = this;
    const p = PlayerPanel.phases(result.estimate.schedule);
    if (elapsed === 0) {
      for (const name of ["prompt", "thinking", "answer"]) {
        ui.phases[name].style.width = `${(100 * p[name]) / Math.max(p.total, 1e-9)}%`;
        ui.phases[name].hidden = p[name] <= 0;
      }
      const parts = [`reading the prompt ${fmt.duration(p.prompt)}`];
      if (p.thinking > 0) parts.push(`thinking ${fmt.duration(p.thinking)}`);
      parts.push(`answering ${fmt.duration(p.answer)}`);
      ui.legend.textContent = parts.join(" · ");
    }
    const fraction = Math.min(1, elapsed / Math.max(p.total, 1e-9));
    ui.progress.dataset.value = String(fraction);
    ui.progress.style.setProperty("--done", `${(100 * fraction).toFixed(2)}%`);
    ui.count.dataset.value = String(shown);
    setText(ui.count, `${fmt.count(shown)} of ${fmt.count(answers[result.view.answer].tokens.length)} tokens`);
    ui.clock.dataset.value = String(elapsed);
    setText(ui.clock, `${fmt.duration(elapsed)} of ${fmt.duration(p.total)}`);
  }

  onScroll() {
    const s = this.ui.stream;
    this.following = s.scrollHeight - s.scrollTop - s.clientHeight <= FOLLOW_SLACK_PX;
    this.ui.follow.hidden = this.following || !this.player;
  }

  scrollToNewest() {
    const s = this.ui.stream;
    s.scrollTop = s.scrollHeight;
  }

  /** Jump the wait this phase still has (reading the prompt, or thinking) and say how long it was. */
  skip() {
    const result = this.playing;
    if (!this.player || !result) return;
    const p = PlayerPanel.phases(result.estimate.schedule);
    const inPrompt = this.ui.stream.dataset.state === "prefill";
    const to = inPrompt ? p.prompt : p.prompt + p.thinking;
    // The note is set first: the jump draws the first token at once, with the note beside it.
    const note = (skipped) => `Skipped ${fmt.duration(skipped)} of ${inPrompt ? "reading the prompt" : "thinking"} (${fmt.duration(inPrompt ? p.prompt : p.thinking)} in all).`;
    const before = this.skipNote;
    this.skipNote = note(Math.max(0, to - this.elapsed));
    const skipped = this.player.skip(to);
    if (skipped > 0) {
      this.skipNote = note(skipped);
      announce(this.skipNote);
    } else this.skipNote = before;
  }

  run(startedAt = performance.now()) {
    const current = this.current();
    if (!current || current.estimate.fit === "no" || !current.estimate.schedule) return;
    this.stop();
    this.loadMarkdown();
    const { ui, gauge } = this;
    const schedule = current.estimate.schedule;
    const answer = answers[current.view.answer];
    const hidden = schedule.reasoning_tokens;
    const p = PlayerPanel.phases(schedule);
    this.playing = current;
    this.skipNote = "";
    this.elapsed = 0;
    this.following = true;
    this.scrolledAt = 0;
    gauge.setDone("");
    this.setPlaying(true);
    this.markdown?.reset();
    const render = this.markdown ? (text, final) => this.markdown.show(text, final) : undefined;
    ui.streamText.classList.toggle("md", Boolean(render));
    this.player = play({
      element: ui.stream,
      textElement: ui.streamText,
      tokens: answer.tokens,
      arrivals: schedule.arrival_s,
      hidden,
      render,
      startedAt,
      stepMs: reducedMotion() ? REDUCED_MOTION_STEP_MS : 0,
      onFrame: ({ elapsed, generated, state }) => {
        this.elapsed = elapsed;
        const note = this.skipNote ? ` ${this.skipNote}` : "";
        if (state === "prefill") setText(ui.streamStatus, `Reading ${fmt.tokens(current.request.prompt_tokens)} prompt tokens… ${fmt.duration(elapsed)} of ${fmt.duration(p.prompt)}`);
        else if (state === "thinking") setText(ui.streamStatus, `Thinking… ${fmt.count(generated)} of ${fmt.count(hidden)} hidden tokens; the answer starts at ${fmt.duration(p.prompt + p.thinking)}.${note}`);
        else setText(ui.streamStatus, `First token after ${fmt.duration(schedule.ttft_s)}${hidden ? `, answer after ${fmt.duration(p.prompt + p.thinking)}` : ""}.${note}`);
        if (ui.bar.dataset.phase !== state) ui.bar.dataset.phase = state;
        const skippable = (state === "prefill" && p.prompt - elapsed > SKIPPABLE_S) || (state === "thinking" && p.prompt + p.thinking - elapsed > SKIPPABLE_S);
        if (ui.skip.hidden === skippable) ui.skip.hidden = !skippable;
        if (skippable) setText(ui.skip, state === "thinking" ? `Skip the thinking (${fmt.duration(p.thinking)})` : `Skip the wait (${fmt.duration(p.prompt)})`);
        this.showPhases(current, elapsed, Math.max(generated - hidden, 0));
        const shown = generated - hidden;
        if (this.following && shown > 0 && shown !== this.scrolledAt) {
          this.scrolledAt = shown;
          this.scrollToNewest();
        }
        gauge.setLive(state === "prefill" ? null : liveRate(schedule.arrival_s, elapsed));
      },
      onDone: ({ elapsed }) => {
        gauge.setLive(null);
        this.player = null;
        this.setPlaying(false);
        ui.bar.dataset.phase = "done";
        const text = `Done: ${fmt.count(answer.tokens.length)} tokens${hidden ? ` (and ${fmt.count(hidden)} hidden)` : ""} in ${fmt.duration(elapsed)}, ${fmt.rate((schedule.arrival_s.length - 1) / Math.max(p.total - schedule.ttft_s, 1e-9))} tok/s after the first.`;
        gauge.setDone(text);
        announce(text);
      },
    });
  }

  /** Benchmarks: play a given schedule (seconds per token) in the main stream. */
  playSchedule(arrivals) {
    this.stop();
    const source = answers.document.tokens;
    const tokens = Array.from({ length: arrivals.length }, (_, i) => source[i % source.length]);
    this.player = play({ element: this.ui.stream, textElement: this.ui.streamText, tokens, arrivals, hidden: 0, onDone: () => (this.player = null) });
  }
}
