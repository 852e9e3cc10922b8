// bench:fleet's reading of a fresh replica's start-up from serve's log: per school, how long it waited for a
// start-up slot, how long its pull took (reading and writing) and its feeds' re-render, and how many pulls ran at
// once: where the start-up's time went.
import { quantile } from './proc.ts';

interface SchoolTimes {
  began?: number;
  pullStarted?: number;
  pullFinished?: number;
  ended?: number;
  renderMs: number;
  requests: number;
  throttled: number;
}

export interface StartupBreakdown {
  schools: number;
  /** Per figure, the schools' values (s), ascending. */
  waitedForSlot: number[];
  beforePull: number[];
  pull: number[];
  render: number[];
  afterPull: number[];
  /** Pull time summed over schools ÷ the wall time from the first pull's start to the last's end. */
  meanAtOnce: number;
  maxAtOnce: number;
  requests: number;
  throttled: number;
}

export function startupBreakdown(log: Record<string, unknown>[], spawnedAt: number): StartupBreakdown {
  const bySchool = new Map<string, SchoolTimes>();
  const of = (id: string) => {
    const s = bySchool.get(id) ?? { renderMs: 0, requests: 0, throttled: 0 };
    bySchool.set(id, s);
    return s;
  };
  for (const l of log) {
    const at = Date.parse(String(l.time));
    // The start-up pull is the one run by runNow: a full pull without a fire time.
    const startup = l.job === 'full' && l.fireTime === undefined;
    if (l.msg === 'start-up pull began') of(String(l.schoolId)).began = at;
    else if (l.msg === 'start-up pull finished') of(String(l.schoolId)).ended = at;
    else if (l.msg === 'pull started' && startup) of(String(l.schoolId)).pullStarted ??= at;
    else if (l.msg === 'pull finished' && startup) {
      const s = of(String(l.schoolId));
      s.pullFinished = at;
      const up = l.upstream as { requests?: number; throttled?: number } | undefined;
      s.requests += up?.requests ?? 0;
      s.throttled += up?.throttled ?? 0;
    } else if (l.msg === 'feeds re-rendered') {
      const s = bySchool.get(String(l.school));
      // Only the pass inside the start-up pull (before its end).
      if (s && s.pullFinished === undefined) s.renderMs += Number(l.ms ?? 0);
    }
  }
  const done = [...bySchool.values()].filter((s) => s.pullStarted && s.pullFinished && s.ended);
  const secs = (xs: number[]) => xs.map((x) => x / 1000).sort((a, b) => a - b);
  const events: [number, number][] = [];
  for (const s of done) events.push([s.pullStarted!, 1], [s.pullFinished!, -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let maxAtOnce = 0;
  for (const [, d] of events) {
    now += d;
    maxAtOnce = Math.max(maxAtOnce, now);
  }
  const first = Math.min(...done.map((s) => s.pullStarted!));
  const last = Math.max(...done.map((s) => s.pullFinished!));
  const pullMs = done.map((s) => s.pullFinished! - s.pullStarted!);
  return {
    schools: done.length,
    waitedForSlot: secs(done.map((s) => (s.began ?? s.pullStarted!) - spawnedAt)),
    beforePull: secs(done.map((s) => (s.began ? s.pullStarted! - s.began : 0))),
    pull: secs(pullMs.map((ms, i) => ms - done[i]!.renderMs)),
    render: secs(done.map((s) => s.renderMs)),
    afterPull: secs(done.map((s) => s.ended! - s.pullFinished!)),
    meanAtOnce: done.length ? pullMs.reduce((a, b) => a + b, 0) / Math.max(1, last - first) : 0,
    maxAtOnce,
    requests: done.reduce((a, s) => a + s.requests, 0),
    throttled: done.reduce((a, s) => a + s.throttled, 0),
  };
}

export function printStartupBreakdown(b: StartupBreakdown): void {
  const row = (name: string, xs: number[]) =>
    console.log(
      `  ${name.padEnd(48)}${(xs[0] ?? 0).toFixed(2).padStart(8)}${quantile(xs, 0.5).toFixed(2).padStart(8)}${quantile(xs, 0.9).toFixed(2).padStart(8)}` +
        `${(xs.at(-1) ?? 0).toFixed(2).padStart(8)}${xs
          .reduce((a, c) => a + c, 0)
          .toFixed(1)
          .padStart(9)}`,
    );
  console.log(
    `start-up per school (s), ${b.schools} schools${''.padEnd(16)}     min     p50     p90     max      sum`,
  );
  row('from spawn to its start-up slot', b.waitedForSlot);
  row('slot to pull started (lease, run record)', b.beforePull);
  row('pull: read upstream and write the store', b.pull);
  row('pull: its feeds re-rendered and stored', b.render);
  row('pull finished to slot freed (after-pull steps)', b.afterPull);
  console.log(
    `  pulls at once: mean ${b.meanAtOnce.toFixed(1)}, max ${b.maxAtOnce}; upstream requests ${b.requests} ` +
      `(${(b.requests / Math.max(1, b.schools)).toFixed(0)} a school), ${b.throttled} answered 429`,
  );
}
