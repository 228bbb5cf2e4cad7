// "Feel it" (site/templates/panels/player.j2): Run plays the answer on the engine's per-token
// schedule (stream.js) while the gauge shows the rate right now against the use cases.

import * as fmt from "../format.js";
import { $, announce, reducedMotion } from "../dom.js";
import { play, liveRate } from "../stream.js";
import { Gauge } from "../gauge.js";
import { answers, answersData, useCases } from "../data.js";

/** Under reduced motion the streamed text changes at most this often. */
const REDUCED_MOTION_STEP_MS = 500;

export class PlayerPanel {
  /** current(): the result on screen (or null). */
  constructor(root, current) {
    const q = (selector) => $(selector, root);
    this.current = current;
    this.player = null;
    this.ui = {
      run: q('[data-testid="run"]'),
      stream: q('[data-testid="stream"]'),
      streamText: q("#stream-text"),
      streamStatus: q("#stream-status"),
      promptText: q("#prompt-text"),
      tokensNote: q("#tokens-note"),
    };
    this.gauge = new Gauge(
      { bands: q("#gauge-bands"), needle: q("#gauge-needle"), predicted: q("#gauge-predicted"), scale: q("#gauge-scale"), value: q("#live-rate"), done: q("#stream-done") },
      useCases.cases,
    );
    this.ui.run.addEventListener("click", () => this.run());
  }

  /** The prompt of the chosen answer, shown as the user's bubble. */
  showView(view) {
    this.ui.promptText.textContent = answers[view.answer].prompt;
  }

  /** Numbers for this result are on screen: Run may play it. */
  show(result) {
    // Won't run means won't run: no speed on the gauge and nothing for Run to play.
    const runs = result.estimate.fit !== "no";
    this.gauge.setPredicted(runs ? result.estimate.decode_tps : null);
    const answer = answers[result.view.answer];
    this.ui.tokensNote.textContent = `The answer is ${fmt.count(answer.tokens.length)} tokens, counted with ${answersData.tokenizer}, OpenAI's BPE tokenizer: ${fmt.number(answer.tokens.join("").length / answer.tokens.length, 1)} characters per token here; prose packs more characters into a token than code does, and Llama, Qwen or Gemma tokenizers differ by a few percent.`;
    this.ui.run.disabled = !runs;
    this.ui.run.title = runs ? "" : "This set-up cannot load, so there is nothing to stream";
  }

  /** No numbers for the view: nothing to play. */
  pending() {
    this.ui.run.disabled = true;
  }

  stop() {
    this.player?.stop();
    this.player = null;
    this.ui.stream.dataset.state = "idle";
    this.gauge.setLive(null);
  }

  run() {
    const current = this.current();
    if (!current || current.estimate.fit === "no") return;
    this.stop();
    const { ui, gauge } = this;
    const schedule = current.estimate.schedule;
    const answer = answers[current.view.answer];
    const hidden = schedule.reasoning_tokens;
    gauge.setDone("");
    ui.streamStatus.textContent = `Processing ${fmt.tokens(current.request.prompt_tokens)} prompt tokens…`;
    this.player = play({
      element: ui.stream,
      textElement: ui.streamText,
      tokens: answer.tokens,
      arrivals: schedule.arrival_s,
      hidden,
      stepMs: reducedMotion() ? REDUCED_MOTION_STEP_MS : 0,
      onFrame: ({ elapsed, generated, state }) => {
        if (state === "prefill") ui.streamStatus.textContent = `Processing the prompt… ${fmt.duration(elapsed)}`;
        else if (state === "thinking") ui.streamStatus.textContent = `Thinking… ${fmt.count(generated)} of ${fmt.count(hidden)} hidden tokens`;
        else ui.streamStatus.textContent = `First token after ${fmt.duration(schedule.ttft_s)}${hidden ? `, answer after ${fmt.duration(schedule.arrival_s[hidden])}` : ""}`;
        gauge.setLive(state === "prefill" ? null : liveRate(schedule.arrival_s, elapsed));
      },
      onDone: ({ elapsed }) => {
        gauge.setLive(null);
        const end = schedule.arrival_s.at(-1);
        const text = `Done: ${fmt.count(answer.tokens.length)} tokens${hidden ? ` (and ${fmt.count(hidden)} hidden)` : ""} in ${fmt.duration(elapsed)}, ${fmt.rate((schedule.arrival_s.length - 1) / Math.max(end - schedule.ttft_s, 1e-9))} tok/s after the first.`;
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
    this.player = play({ element: this.ui.stream, textElement: this.ui.streamText, tokens, arrivals, hidden: 0 });
  }
}
