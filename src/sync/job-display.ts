// What a scheduled job's status says to a person (`rostercal status`, /admin): one rule for both, so they never
// disagree about a job that died with its replica or a fire that was let pass.
import type { JobStatus } from '../store/types.ts';

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
