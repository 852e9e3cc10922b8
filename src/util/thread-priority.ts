// Background threads (a school's feed re-render pass) give way, on a busy core, to the thread that answers
// requests. The kernel shares a core between runnable threads by their nice values, not by what they do: at
// equal nice a render worker with seconds of work takes half the core that a request is waiting for (issue 46:
// a pull's re-render made a few requests wait several times longer than any while idle). A worker run some
// nice steps lower still gets every cycle nobody else wants, so a pass on an idle host is no slower.
import { getPriority, setPriority } from 'node:os';

/** How many nice steps below the thread that starts it a background thread runs (each ~1.25× less CPU share). */
export const BACKGROUND_NICE_STEPS = 10;
/** The lowest priority a thread can have. */
const LOWEST = 19;

/** The nice value a background thread takes when the thread that started it runs at `current`. */
export function backgroundNice(current: number): number {
  return Math.min(LOWEST, current + BACKGROUND_NICE_STEPS);
}

/**
 * Lowers the calling thread's CPU priority by BACKGROUND_NICE_STEPS, on Linux only: there nice is a per-thread
 * attribute and setpriority(PRIO_PROCESS, 0) names the calling thread, while elsewhere it would lower the whole
 * process, its request thread included. Returns the thread's nice value after, or null where it did nothing (not
 * Linux, or the call refused: the thread then runs as before, which is only slower for requests).
 */
export function lowerThisThreadsPriority(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const target = backgroundNice(getPriority(0));
    setPriority(0, target);
    return getPriority(0);
  } catch {
    return null;
  }
}
