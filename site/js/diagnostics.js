// Read-only diagnostics of the page (window.__tokfeel) for scripts/bench_page.py and the tests.

/** app: main.js's App. */
export function diagnostics(app) {
  return {
    timings: app.session.timings,
    jobs: app.jobs,
    view: () => ({ ...app.view }),
    current: () => app.current,
    /** Benchmarks: play a given schedule (seconds per token) in the main stream. */
    playSchedule: (arrivals) => app.player.playSchedule(arrivals),
    /** The numbers on screen are for the view in the URL, the fields show it, and no engine work is left. */
    settled: () =>
      app.session.ready && !app.heldControls && !app.explainTimer && !app.recomputing && !app.scheduling && app.current !== null &&
      JSON.stringify(app.current.view) === JSON.stringify(app.view) && !app.jobs.busy && app.jobs.queue.length === 0 && app.charts.idle && app.player.markdownSettled,
  };
}
