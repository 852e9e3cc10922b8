// Long work that shares the process with the web server (a full re-render of a district's feeds) gives the event
// loop back often enough for requests to be answered meanwhile. Awaiting a node:sqlite query or an already
// settled promise does not: its continuation runs as a microtask, before any I/O.

/** Who waits for a turn of the loop, first come first served. */
const waiting: (() => void)[] = [];
let resuming = false;

/** Resumes one waiter, and asks for the next turn while others wait. */
function resumeOne(): void {
  const next = waiting.shift();
  if (waiting.length > 0) setImmediate(resumeOne);
  else resuming = false;
  next?.();
}

/**
 * Resolves after pending I/O callbacks have run (setImmediate: the check phase follows the poll phase), one
 * waiter a turn. Every piece of long work yields here (a pull's statements, its page parsing and record
 * preparation, a re-render): each resuming on a setImmediate of its own, all of them resumed in the same check
 * phase, each for a slice of its own, and the loop's turn held the sum of their slices (a district pull: ~110 ms
 * of CPU at once with 10-ms slices). One a turn, a turn holds one slice, and requests are answered in between.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (resuming) return;
    resuming = true;
    setImmediate(resumeOne);
  });
}

/**
 * A budget of synchronous time: pause() yields to the event loop once `budgetMs` have passed since the last
 * yield, and costs a clock read otherwise, so loops can call it per item.
 */
export class TimeSlice {
  readonly #budgetMs: number;
  #since = performance.now();

  constructor(budgetMs = 10) {
    this.#budgetMs = budgetMs;
  }

  /** Whether the budget is spent (the caller should yield before more work). */
  get spent(): boolean {
    return performance.now() - this.#since >= this.#budgetMs;
  }

  async pause(): Promise<void> {
    if (!this.spent) return;
    await yieldToEventLoop();
    this.#since = performance.now();
  }

  /** Yields now, whatever the budget (before a step that cannot be cut). */
  async yield(): Promise<void> {
    await yieldToEventLoop();
    this.#since = performance.now();
  }
}

/**
 * Runs work written as a generator (each `yield` a point where it may pause) to its end at once: the
 * synchronous form of such work, for callers that are not sharing the loop with anything.
 */
export function runSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs work written as a generator, awaiting `pause` (default: a turn of the event loop) at each `yield`. */
export async function runStepsPaced<T>(
  steps: Generator<void, T>,
  pause: () => Promise<void> = yieldToEventLoop,
): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}
