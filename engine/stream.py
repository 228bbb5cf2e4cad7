"""The stream schedule: when each token of an answer appears, for the page to play.

The first token appears after the TTFT; every later one a decode step later, and each step is a
little slower than the one before because the KV cache it reads has grown by one token. Hidden
reasoning tokens are generated first (the "thinking" phase) and count in the cache. Under
speculative decoding tokens arrive in bursts: every cycle (k drafted tokens, one verification)
releases the accepted drafts and the target's own token at once.
"""

from __future__ import annotations

from itertools import accumulate

from .decode import step_at
from .errors import EngineInputError
from .options import MAX_SCHEDULE_TOKENS

#: Step time is piecewise linear in the context: each term is linear in the cached tokens, a
#: sliding-window layer's cache stops growing at its window, and a ``max`` of two linear terms
#: (memory against compute) bends once where they cross. Between the windows each piece is convex,
#: so its midpoint lies on the chord exactly when the piece is straight: the schedule computes the
#: step at the ends, the windows and midpoints, halving a segment only where its midpoint is off
#: the chord by more than this share, and interpolates the rest. A straight run costs three steps
#: instead of one per token (or the 24 fixed samples used before, two thirds of a page
#: recompute's time in Pyodide).
LINEAR_TOLERANCE = 1e-9
#: At most this many steps are computed per schedule (a guard; a bent piece needs ~2 log2(n)).
MAX_SAMPLES = 64


def _sample_points(system, start: int, end: int) -> dict[int, float]:
    """Step time at the contexts that pin the piecewise-linear schedule from ``start`` to ``end``."""
    batch = system.options.batch
    windows = {layer.window for layer in system.arch.attention if layer.kind == "sliding" and start < layer.window < end}
    values = {c: step_at(system, c, batch).total_s for c in sorted({start, end} | windows)}
    pending = list(zip(sorted(values), sorted(values)[1:]))
    while pending and len(values) < MAX_SAMPLES:
        lo, hi = pending.pop()
        if hi - lo < 2:
            continue
        mid = (lo + hi) // 2
        values[mid] = step_at(system, mid, batch).total_s
        chord = values[lo] + (mid - lo) / (hi - lo) * (values[hi] - values[lo])
        if abs(values[mid] - chord) > LINEAR_TOLERANCE * values[mid]:
            pending += [(lo, mid), (mid, hi)]
    return values


def _step_times(system, start: int, count: int) -> list[float]:
    """Decode step time for contexts start .. start+count-1 (one sequence)."""
    if count <= 3:
        return [step_at(system, start + i, system.options.batch).total_s for i in range(count)]
    values = _sample_points(system, start, start + count - 1)
    points = sorted(values)
    # Segment by segment (the same expression per context as a per-token bisect, a third of the
    # CPU: this loop runs once per token of the answer on every recompute).
    times = []
    append = times.append
    last = len(points) - 1
    for j in range(1, last + 1):
        lo, hi = points[j - 1], points[j]
        a, span, rise = values[lo], hi - lo, values[hi] - values[lo]
        # A sample point starts its segment (weight 0); the last one ends the last segment.
        for c in range(lo, hi + 1 if j == last else hi):
            append(a + (c - lo) / span * rise)
    return times


def _speculative_arrivals(system, draft, ttft_s: float, start: int, total: int) -> list[float]:
    """Arrivals in bursts: cycle times from the plan at the first and last context, linear in
    between (the cache grows by each burst), burst sizes drawn with the acceptance."""
    from .speculative import burst_sizes, plan

    first = plan(system, draft, start)
    last = plan(system, draft, start + total)
    arrivals = [ttft_s]
    now = ttft_s
    done = 1
    for size in burst_sizes(first.acceptance, first.drafted, total - 1):
        share = done / total
        now += first.cycle_s + share * (last.cycle_s - first.cycle_s)
        arrivals.extend([now] * size)
        done += size
    return arrivals


def stream_schedule(system, ttft_s: float, draft=None) -> dict:
    """Arrival time (seconds from the request) of every reasoning and answer token.

    ``draft``: the draft system of speculative decoding (None with MTP or without speculation;
    the request's ``mtp``/``draft`` options decide).
    """
    o = system.options
    total = o.reasoning_tokens + o.gen_tokens
    if total > MAX_SCHEDULE_TOKENS:
        raise EngineInputError(f"a streamed answer is limited to {MAX_SCHEDULE_TOKENS:,} tokens", field="gen_tokens")
    start = o.depth + o.prompt_tokens
    if o.draft or o.mtp:
        arrivals = _speculative_arrivals(system, draft, ttft_s, start, total)
    else:
        steps = _step_times(system, start + 1, total - 1) if total > 1 else []
        arrivals = list(accumulate(steps, initial=ttft_s))
    return {
        "ttft_s": ttft_s,
        "reasoning_tokens": o.reasoning_tokens,
        "answer_tokens": o.gen_tokens,
        "arrival_s": [round(t, 6) for t in arrivals],
    }
