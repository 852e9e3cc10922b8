// The start-up pulls of `rostercal serve`: every school that needs one (never pulled completely, or its last pull
// died with its process), in parallel. One after another, 500 small schools took 334 s (669 ms a school, most of
// it waiting on the upstream's answers), far past the two minutes a fresh replica has to serve them all.
// Each upstream's limits hold: schools behind one upstream (the same origin) pull one at a time, so that upstream
// sees what one school's pull asks of it (its client's pace); different upstreams pull at once, up to a bound
// that keeps some of the store's connections and the cores for requests.

import { mapLimit } from '../util/concurrency.ts';

/** Start-up pulls under way at once across upstreams (the PostgreSQL pool has 10 connections by default). */
export const STARTUP_PULLS_AT_ONCE = 6;

/** What the plan reads of a school (SchoolConfig has it). */
export interface StartupSchool {
  id: string;
  upstream: { url: string };
}

/** The upstream a school's pull talks to: schools with the same one share its limits. */
function upstreamOf(school: StartupSchool): string {
  try {
    return new URL(school.upstream.url).origin;
  } catch {
    return `school:${school.id}`;
  }
}

/**
 * Runs `pull` for each school, schools of one upstream one after another in the given order, at most `atOnce`
 * at a time in all. Settles when every pull has; `pull` should not throw (a thrown error is passed to onError).
 */
export async function runStartupPulls<S extends StartupSchool>(
  schools: readonly S[],
  pull: (school: S) => Promise<void>,
  opts: { atOnce?: number; onError?: (school: S, err: unknown) => void } = {},
): Promise<void> {
  const queues = new Map<string, S[]>();
  for (const s of schools) {
    const key = upstreamOf(s);
    const q = queues.get(key);
    if (q) q.push(s);
    else queues.set(key, [s]);
  }
  // Each of at most `atOnce` lanes takes the next upstream's queue no other lane is draining, and drains it.
  await mapLimit([...queues.values()], opts.atOnce ?? STARTUP_PULLS_AT_ONCE, async (queue) => {
    for (const school of queue) {
      try {
        await pull(school);
      } catch (err) {
        opts.onError?.(school, err);
      }
    }
  });
}
