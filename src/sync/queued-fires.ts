// The fires of replicas sharing PostgreSQL, through the store's job queue (store/fire-queue.ts, pg-boss): every
// replica's node-cron fires each job; the one whose insert of the fire's job wins takes a job from the queue at
// once and runs it — most often that very fire, maybe an older one another replica queued (the outcome is read
// back from the queue, wherever it ran). One take per insert, so no fire waits for a poll, and every queued fire
// has its take; only a take that failed is tried again, every 2 s (a replica that took what was not owed could
// take another's fire from under it between its insert and its take). A replica that dies running a fire stops beating, and the queue
// fails its job (an outcome for whoever waits on it); its full fire is not lost: its request is in the store
// (`pull_requests`), and the next pull of the school, on any replica, runs full.
import type { JobOutcome } from '../jobs/job.ts';
import type { Logger } from '../log.ts';
import type { FireQueue, QueuedFire, TakenFire } from '../store/fire-queue.ts';
import type { JobResult } from '../store/types.ts';

/** A run of a taken fire: its outcome, and the work after it (a pull's pushes), which the job waits for too. */
export interface FireRun {
  outcome: Promise<JobOutcome>;
  after: Promise<unknown>;
}

export interface QueuedFiresOptions {
  queue: FireQueue;
  log: Logger;
  /** Runs a taken fire through the scheduler's own path; null when this replica has no such job. */
  run(fire: TakenFire): FireRun | null;
  /** How often a take that failed is tried again (default 2 s). */
  retryMs?: number;
}

/** How often `outcome` reads a fire that runs on another replica. */
const READ_BACK_MS = 200;

export class QueuedFires {
  readonly #opts: QueuedFiresOptions;
  /** Fires this replica runs, by job id: their outcome once settled in the queue. */
  readonly #running = new Map<string, Promise<JobOutcome>>();
  #timer: NodeJS.Timeout | null = null;
  /** Takes that failed (the store did), owed to fires this replica queued. */
  #owed = 0;
  #stopped = false;

  constructor(opts: QueuedFiresOptions) {
    this.#opts = opts;
  }

  /** Queues the fire; its job id when this replica's insert won it, null when another replica's had. */
  enqueue(fire: QueuedFire): Promise<string | null> {
    return this.#opts.queue.enqueue(fire);
  }

  /** Takes one queued fire now and runs it (the take that matches an insert). */
  takeNow(): void {
    void this.#take(1);
  }

  /** Starts trying again the takes that failed. */
  start(): void {
    this.#timer = setInterval(() => {
      const owed = this.#owed;
      this.#owed = 0;
      if (owed) void this.#take(owed);
    }, this.#opts.retryMs ?? 2_000);
    this.#timer.unref();
  }

  /** The fire's outcome, from this replica's run or, run elsewhere, read back from the queue. */
  async outcome(id: string): Promise<JobOutcome> {
    for (;;) {
      const here = this.#running.get(id);
      if (here) return here;
      // A read that failed (a dry pool, the database away) is tried again: the fire's outcome is still to come.
      const there = await this.#opts.queue.outcome(id).catch(() => null);
      if (there) return { status: there.status as JobResult, error: there.error ?? null };
      if (this.#stopped) return { status: 'skipped', error: 'the service is stopping' };
      await new Promise((r) => setTimeout(r, READ_BACK_MS));
    }
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
  }

  async #take(limit: number): Promise<void> {
    if (this.#stopped) return;
    let taken: TakenFire[];
    try {
      taken = await this.#opts.queue.take(limit);
    } catch (err) {
      this.#owed += limit;
      this.#opts.log.error({ err }, 'could not take a fire from the queue: trying again in 2 s');
      return;
    }
    for (const fire of taken) this.#running.set(fire.id, this.#runTaken(fire));
  }

  async #runTaken(fire: TakenFire): Promise<JobOutcome> {
    const { queue, log } = this.#opts;
    // Beats while it runs: a replica that dies stops them, and the queue fails its fire.
    const beat = setInterval(
      () => void queue.touch([fire]).catch((err: unknown) => log.warn({ err }, 'fire heartbeat failed')),
      queue.touchEveryMs,
    );
    let outcome: JobOutcome;
    try {
      const run = this.#opts.run(fire);
      if (run) {
        outcome = await run.outcome;
        await run.after;
      } else outcome = { status: 'skipped', error: `no job ${fire.job} of ${fire.schoolId} on this replica` };
    } catch (err) {
      outcome = { status: 'failed', error: err instanceof Error ? err.message : String(err) };
    } finally {
      clearInterval(beat);
    }
    try {
      await queue.finish(fire, { status: outcome.status, error: outcome.error ?? null });
    } catch (err) {
      log.error({ err, schoolId: fire.schoolId, job: fire.job }, 'could not settle a fire in the queue');
    }
    // Kept a moment for a local `outcome` call that raced the settle, then read from the queue like any other.
    setTimeout(() => this.#running.delete(fire.id), 5_000).unref();
    return outcome;
  }
}
