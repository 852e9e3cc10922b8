// A recurring job as the scheduler runs it: pulls are sync/'s jobs, pushes push/'s (push/triggers.ts). Both
// define their jobs against this contract, so neither imports the other or the scheduler.
import type { Logger } from '../log.ts';
import type { JobResult } from '../store/types.ts';

export interface JobOutcome {
  /** `skipped`: the fire was let pass without running; `error` says why. */
  status: JobResult;
  error?: string | null;
}

/** One recurring job of a school. `run` must not throw for expected trouble: return a failed outcome. */
export interface JobDefinition {
  /** Unique within the school: `incremental`, `full`, `push:google`. */
  name: string;
  cron: string;
  /** A reason to let this fire pass without running (it would only repeat work in progress), or null. */
  skipReason?(): string | null;
  /**
   * Scheduled fires before `until` are let pass (the upstream asked us to slow down: `why`); the status names the
   * first fire that will run. Not consulted by runNow: a person asking for a pull gets one.
   */
  deferredUntil?(at: Date): { until: Date; why: string } | null;
  /**
   * The job says when its run really begins (after waiting its turn) by calling `ctx.started`; otherwise it
   * begins at the fire. Until then, status shows the job's last run, not a wait.
   */
  reportsStart?: boolean;
  run(ctx: JobContext): Promise<JobOutcome>;
}

export interface JobContext {
  fireTime: string | null;
  log: Logger;
  started: () => Promise<void>;
  /**
   * Work that follows the run but is not part of it (a pull's pushes): it holds neither the school's pull lock nor
   * the job's next fire, which a scheduled fire would otherwise let pass as an overlap. `runNow` and `fire` settle
   * after it too; `stop` waits for it like for a job.
   */
  following(work: Promise<unknown>): void;
}
