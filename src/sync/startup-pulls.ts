// The start-up pulls of `rostercal serve`: every school that needs one (never pulled completely, or its last pull
// died with its process), in parallel. One after another, 500 small schools took 334 s (669 ms a school, most of
// it waiting on the upstream's answers), far past the two minutes a fresh replica has to serve them all.
// Each upstream's limits hold: schools behind one upstream (the same origin) pull one at a time, so that upstream
// sees what one school's pull asks of it (its client's pace); different upstreams pull at once, up to a bound
// that keeps some of the store's connections and the cores for requests.

/** Start-up pulls under way at once across upstreams, when no width is given. */
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

/** How often a width that may have grown is looked at again while no pull ends (ms). */
const LOOK_AGAIN_MS = 250;

/**
 * Runs `pull` for each school, schools of one upstream one after another in the given order, at most `atOnce`
 * at a time in all: a number, or a width read again whenever a pull ends and every LOOK_AGAIN_MS (startup-width.ts).
 * A narrower width lets running pulls end; a wider one starts more. Settles when every pull has; `pull` should
 * not throw (a thrown error is passed to onError).
 */
export async function runStartupPulls<S extends StartupSchool>(
  schools: readonly S[],
  pull: (school: S) => Promise<void>,
  opts: { atOnce?: number | (() => number); onError?: (school: S, err: unknown) => void } = {},
): Promise<void> {
  const queues = new Map<string, S[]>();
  for (const s of schools) {
    const key = upstreamOf(s);
    const q = queues.get(key);
    if (q) q.push(s);
    else queues.set(key, [s]);
  }
  const atOnce = opts.atOnce ?? STARTUP_PULLS_AT_ONCE;
  const width = typeof atOnce === 'function' ? () => Math.max(1, atOnce()) : () => Math.max(1, atOnce);
  // Upstreams with schools still to pull and no pull under way, in the configured order.
  const ready = [...queues.values()];
  let running = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => pump(), LOOK_AGAIN_MS);
    const pump = () => {
      while (running < width() && ready.length > 0) {
        const queue = ready.shift()!;
        const school = queue.shift()!;
        running++;
        void pull(school)
          .catch((err: unknown) => opts.onError?.(school, err))
          .finally(() => {
            running--;
            // The upstream's next school goes to the front: its schools stay one after another, in order.
            if (queue.length > 0) ready.unshift(queue);
            if (running === 0 && ready.length === 0) {
              clearInterval(timer);
              resolve();
            } else pump();
          });
      }
    };
    if (ready.length === 0) {
      clearInterval(timer);
      resolve();
    } else pump();
  });
}
