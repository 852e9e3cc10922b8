// bench:fleet's reading of serve's log: each school's incremental fires in a window, the lag from each fire to its
// pull's start, and the fires let pass, by why. A fire is judged only where its time is at least `grace` before
// the window's end (a fire that had its whole grace and did not start is late either way); a window too short to
// hold one judged fire is said to be so, never counted as met.
import { quantile } from './proc.ts';

/**
 * Why a fire was let pass, by what it says of the replica:
 * - folded: the school's start-up pull (a full one, still to start) does its work, or the one incremental pull
 *   queued behind it while it runs (background-sync.ts, QUEUED); not a miss;
 * - paced: the upstream asked us to slow down (429); the product's policy, not the replica's load;
 * - overlap: the school's previous pull (or fire) was still running: load, or a pull longer than the interval;
 * - store: the store failed; other: anything else.
 */
export type SkipClass = 'folded' | 'paced' | 'overlap' | 'store' | 'other';

export function skipClass(reason: string): SkipClass {
  if (reason.startsWith('folded into')) return 'folded';
  if (reason.startsWith('slowed down')) return 'paced';
  if (
    reason.startsWith('overlap') ||
    reason.startsWith('another pull of this school') ||
    /^a pull of .* is already running/.test(reason)
  )
    return 'overlap';
  if (reason.startsWith('store') || reason.startsWith('the store')) return 'store';
  return 'other';
}

export interface FireWindow {
  from: number;
  to: number;
  /** How long a fire has to start before it is late (ms). */
  graceMs: number;
}

export interface FireJudgement {
  /** The window's start, and the fires' interval (s). */
  from: number;
  intervalS: number;
  /** Fires the window can judge (those at least `graceMs` before its end): [from, judgedUntil]. */
  judgedUntil: number;
  /** Start lags (s) by school, ascending. */
  lags: Map<string, number[]>;
  /** Fires let pass, by school, those folded into a start-up pull left out. */
  passed: Map<string, number>;
  /** Skips by class, then by reason (instants taken out). */
  byClass: Map<SkipClass, Map<string, number>>;
  /** Distinct seconds of the interval at which pulls began (1: every school in one burst). */
  phases: number;
  /** Incremental pulls started from a fire in the window, judged or not (what the CPU was spent on). */
  started: number;
  /** Re-render passes and the feeds they rendered, in the window. */
  passes: number;
  rendered: number;
}

const count = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

export function judgeFires(log: Record<string, unknown>[], w: FireWindow, intervalS: number): FireJudgement {
  const j: FireJudgement = {
    from: w.from,
    intervalS,
    judgedUntil: w.to - w.graceMs,
    lags: new Map(),
    passed: new Map(),
    byClass: new Map(),
    phases: 0,
    started: 0,
    passes: 0,
    rendered: 0,
  };
  const phases = new Set<number>();
  const judged = (t: number) => t >= w.from && t <= j.judgedUntil;
  for (const line of log) {
    const at = Date.parse(String(line.time));
    if (line.msg === 'feeds re-rendered' && at >= w.from && at <= w.to) {
      j.rendered += Number(line.rendered ?? 0);
      j.passes++;
    }
    if (line.job !== 'incremental') continue;
    const school = String(line.schoolId);
    const fireTime = typeof line.fireTime === 'string' ? Date.parse(line.fireTime) : null;
    if (line.msg === 'pull started' && fireTime !== null) {
      if (fireTime >= w.from && fireTime <= w.to) j.started++;
      if (!judged(fireTime)) continue;
      j.lags.set(school, [...(j.lags.get(school) ?? []), (at - fireTime) / 1000]);
      phases.add(Math.floor(fireTime / 1000) % intervalS);
    } else if (String(line.msg).startsWith('fire skipped: ') && judged(fireTime ?? at)) {
      // The reason without its instants (a deferral names the next pull's, a busy lease its holder's).
      const reason = String(line.msg)
        .slice('fire skipped: '.length)
        .replace(/ — next pull at .*$/, '')
        .replace(/ \(.*, since .*\)$/, '');
      const cls = skipClass(reason);
      if (cls !== 'folded') count(j.passed, school);
      const reasons = j.byClass.get(cls) ?? new Map<string, number>();
      count(reasons, reason);
      j.byClass.set(cls, reasons);
    }
  }
  for (const l of j.lags.values()) l.sort((a, b) => a - b);
  j.phases = phases.size;
  return j;
}

export const classTotal = (j: FireJudgement, cls: SkipClass) =>
  [...(j.byClass.get(cls)?.values() ?? [])].reduce((a, b) => a + b, 0);

export interface FireVerdict {
  /** False when the window held no fire to judge: the goals then read "could not judge". */
  judgeable: boolean;
  pulls: number;
  late: number;
  worst: number;
  worstSchool: string;
  p50: number;
  p99: number;
  /** Let pass for load, the store or else (not folded, not the upstream's 429 pace). */
  missed: number;
  paced: number;
  folded: number;
  /** Schools that started no pull in the judged window and let none pass for a reason printed. */
  silent: string[];
}

export function fireVerdict(j: FireJudgement, schools: string[], limitS: number): FireVerdict {
  const all = [...j.lags.values()].flat().sort((a, b) => a - b);
  let worst = 0;
  let worstSchool = '';
  for (const [school, l] of j.lags)
    if ((l.at(-1) ?? 0) > worst) {
      worst = l.at(-1)!;
      worstSchool = school;
    }
  const folded = classTotal(j, 'folded');
  const paced = classTotal(j, 'paced');
  const missed = classTotal(j, 'overlap') + classTotal(j, 'store') + classTotal(j, 'other');
  // Only a window of two intervals or more holds a fire of every school for sure.
  const silent =
    j.judgedUntil - j.from >= 2 * j.intervalS * 1000
      ? schools.filter((s) => !j.lags.get(s)?.length && !j.passed.get(s))
      : [];
  return {
    judgeable: all.length + missed + paced + folded > 0,
    pulls: all.length,
    late: all.filter((l) => l > limitS).length,
    worst,
    worstSchool,
    p50: all.length ? quantile(all, 0.5) : 0,
    p99: all.length ? quantile(all, 0.99) : 0,
    missed,
    paced,
    folded,
    silent,
  };
}

/** The skips, one line per reason, under their class. */
export function printSkips(j: FireJudgement): void {
  const label: Record<SkipClass, string> = {
    folded: 'folded into the start-up pull (its work done by it; not a miss)',
    paced: "the upstream's 429 pace (policy; not a miss, printed)",
    overlap: 'overlap: the previous pull still running (load; a miss)',
    store: 'the store failed (a miss)',
    other: 'other (a miss)',
  };
  for (const [cls, reasons] of j.byClass) {
    console.log(`  let pass, ${label[cls]}: ${classTotal(j, cls)}`);
    for (const [reason, n] of [...reasons.entries()].sort((a, b) => b[1] - a[1]))
      console.log(`    ${String(n).padStart(6)}× ${reason}`);
  }
}
