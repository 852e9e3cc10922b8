// What a scheduled job's status says to a person (`rostercal status`, /admin): one rule for both, so they never
// disagree about a job that died with its replica or a fire that was let pass.
import type { JobStatus, SyncRun } from '../store/types.ts';

export interface JobView {
  /** `running`, `interrupted`, `skipped`, or the last run's status. */
  result: string;
  /** Why: the last error, the skip's reason, or whose process stopped. */
  note: string;
  /** When what `result` speaks of happened: the skipped fire's own time for `skipped`, else the last run's start. */
  lastRunAt: string | null;
}

export function describeJob(job: JobStatus): JobView {
  const lastRun =
    [job.lastStartedAt, job.lastFinishedAt]
      .filter((t) => t !== null)
      .sort()
      .at(-1) ?? null;
  const skippedLast = job.lastSkippedAt && (lastRun === null || job.lastSkippedAt > lastRun);
  const skip = skippedLast
    ? `fire at ${job.lastSkippedAt} skipped: ${job.lastSkipReason ?? 'no reason given'}`
    : '';
  const lastRunAt = job.lastStartedAt;
  if (job.state === 'running') return { result: 'running', note: skip, lastRunAt };
  if (job.state === 'interrupted')
    return {
      result: 'interrupted',
      note: `the process running it (${job.owner ?? 'unknown'}) stopped before it finished; the next fire runs it again`,
      lastRunAt,
    };
  if (skippedLast)
    return {
      result: 'skipped',
      note: `skipped: ${job.lastSkipReason ?? 'no reason given'}`,
      lastRunAt: job.lastSkippedAt ?? null,
    };
  return { result: job.lastStatus ?? '—', note: job.lastError ?? '', lastRunAt };
}

/**
 * The note a later pull leaves on a run whose process died (sync/pull/run-record.ts, closeInterruptedRuns): that
 * run's `finishedAt` is when it was found, not when it stopped.
 */
const CLOSED_FOR_DEAD_OWNER = /^interrupted: the process running it \(.*\) stopped$/;

/**
 * How long a run took (ms), for every listing of runs (`status`, `sync`'s start, /admin): `running` while it runs,
 * `unknown` when its process died (killed) before it could say. The time until a later pull closed such a run is
 * not how long it ran: it was shown as if it were (an outside tester's killed pull).
 */
export function runTook(
  run: Pick<SyncRun, 'status' | 'startedAt' | 'finishedAt' | 'errors'>,
): number | 'running' | 'unknown' {
  if (run.status === 'running') return 'running';
  if (run.finishedAt === null) return 'unknown';
  if (run.status === 'interrupted' && run.errors.some((e) => CLOSED_FOR_DEAD_OWNER.test(e))) return 'unknown';
  return Date.parse(run.finishedAt) - Date.parse(run.startedAt);
}
