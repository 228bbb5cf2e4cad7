// The stream player: plays a canned answer on the engine's schedule.
//
// Scheduling is by elapsed time, not by one timer per token: on every animation frame the player
// counts how many tokens are due (arrival time <= elapsed) and shows exactly those. So 1 tok/s and
// 3000 tok/s are both exact, a slow frame never loses time, and the KV-cache slowdown and
// speculative-decoding bursts in the schedule play as they are. The clock starts at `startedAt`
// (the click's own timestamp), not when the handler or the first frame runs, so a busy main
// thread delays a frame but never shifts the schedule.

/** Index of the first arrival later than `t` (= how many tokens are due at `t`). */
export function tokensDue(arrivals, t) {
  let lo = 0;
  let hi = arrivals.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (arrivals[mid] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Play answer `tokens` (strings) into `textElement` on `arrivals` (seconds from the start, one per
 * generated token: first the `hidden` reasoning tokens, then one per answer token).
 * `element` gets data-state (prefill / thinking / streaming / done), data-tokens (answer tokens
 * shown) and data-thinking (reasoning tokens generated). `onFrame({elapsed, generated, state})`
 * runs every frame. With `stepMs` (reduced motion) the text changes at most that often, in
 * larger pieces: the same tokens at the same average rate, without the constant movement.
 * `render(text, final)`, when given, shows the answer so far instead of appending plain text.
 * Returns {stop(), skip(toS)}: skip moves the clock forward to `toS` seconds of the schedule.
 */
export function play({ element, textElement, tokens, arrivals, hidden = 0, stepMs = 0, onFrame, onDone, render, startedAt, now = () => performance.now() }) {
  const total = Math.min(arrivals.length, hidden + tokens.length);
  let start = Math.min(startedAt ?? now(), now());
  let generated = 0;
  let frame = 0;
  let stopped = false;
  let lastStep = -Infinity;
  let text = "";
  element.dataset.state = "prefill";
  element.dataset.tokens = "0";
  element.dataset.thinking = "0";
  if (render) render("", false);
  else textElement.textContent = "";

  function tick() {
    if (stopped) return;
    const elapsed = (now() - start) / 1000;
    const due = Math.min(tokensDue(arrivals, elapsed), total);
    const stepping = stepMs > 0 && due < total && elapsed * 1000 - lastStep < stepMs;
    if (due > generated && !stepping) {
      lastStep = elapsed * 1000;
      const from = Math.max(generated - hidden, 0);
      const to = Math.max(due - hidden, 0);
      generated = due;
      element.dataset.tokens = String(to);
      element.dataset.thinking = String(Math.min(generated, hidden));
      if (to > from) {
        const piece = tokens.slice(from, to).join("");
        if (render) {
          text += piece;
          render(text, due >= total);
        } else textElement.append(piece);
      }
    }
    let state = "prefill";
    if (generated >= total) state = "done";
    else if (generated > 0) state = generated <= hidden ? "thinking" : "streaming";
    if (element.dataset.state !== state) element.dataset.state = state;
    onFrame?.({ elapsed, generated, state });
    if (state === "done") {
      stopped = true; // a frame or the timer still pending finds the player finished
      onDone?.({ elapsed });
      return;
    }
    if (!frame) frame = requestAnimationFrame(() => { frame = 0; tick(); });
  }
  // The first token is also timed on its own: a busy page may run frames late, a timer for the
  // exact arrival shows the token no later than the first frame after it is due.
  const firstTimer = setTimeout(tick, Math.max(0, arrivals[0] * 1000 - (now() - start)));
  tick();
  return {
    stop() {
      stopped = true;
      clearTimeout(firstTimer);
      cancelAnimationFrame(frame);
    },
    /** Jump the clock to `toS` seconds into the schedule (never backwards); returns the seconds skipped. */
    skip(toS) {
      const elapsed = (now() - start) / 1000;
      if (stopped || toS <= elapsed) return 0;
      start -= (toS - elapsed) * 1000;
      tick();
      return toS - elapsed;
    },
  };
}

/** Live decode rate over the last `windowS` seconds of a schedule, at time `t`. */
export function liveRate(arrivals, t, windowS = 1) {
  const due = tokensDue(arrivals, t);
  if (due < 2) return 0;
  const from = tokensDue(arrivals, Math.max(arrivals[0], t - windowS));
  const span = arrivals[due - 1] - arrivals[Math.max(from - 1, 0)];
  const count = due - Math.max(from - 1, 0) - 1;
  return span > 0 && count > 0 ? count / span : 0;
}
