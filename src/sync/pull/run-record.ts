// The run's record in the store: closing runs whose process died, progress after each resource, and the end of
// a run that did not finish by itself (interrupted, or failed outside the upstream).
import type { Logger } from '../../log.ts';
import type { RunProgress, Store, SyncRun } from '../../store/types.ts';
import type { EndpointStats } from '../../upstream/api.ts';

const LEGACY_RUN_MS = 2 * 3_600_000;

/**
 * Runs of the school whose process died (they read as interrupted) are closed as such, for good. `recent`: its
 * last runs, newest first (RunsRepository.pullOpening, read with the rest of what the pull asks first).
 */
export async function closeInterruptedRuns(
  store: Pick<Store, 'runs'>,
  recent: readonly SyncRun[],
  schoolId: string,
  now: Date,
  log: Logger,
) {
  for (const run of recent) {
    // Runs recorded before runs had owners can only be judged by their age.
    const legacy =
      run.status === 'running' && !run.owner && now.getTime() - Date.parse(run.startedAt) > LEGACY_RUN_MS;
    if (!legacy && (run.status !== 'interrupted' || run.finishedAt !== null)) continue;
    await store.runs.finishRun(run.id, {
      status: 'interrupted',
      finishedAt: now.toISOString(),
      counts: run.counts,
      upstreamRequests: run.upstreamRequests,
      retries: run.retries,
      throttled: run.throttled,
      errors: [...run.errors, `interrupted: the process running it (${run.owner ?? 'unknown'}) stopped`],
      warning: run.warning,
    });
    log.warn({ runId: run.id, schoolId, owner: run.owner }, 'closed a run whose process stopped');
  }
}

/** The run's counts after a resource's transaction committed, so a kill -9 from here on leaves true counts. */
export async function recordProgress(
  store: Pick<Store, 'runs'>,
  runId: number,
  progress: RunProgress,
  upstream: EndpointStats,
  log: Logger,
  opts?: { atCommit?: boolean },
): Promise<void> {
  progress.upstreamRequests = upstream.requests;
  progress.retries = upstream.retries;
  progress.throttled = upstream.throttled;
  // The records are written either way; a store that cannot take this line fails the run's end, if anything.
  // (Left for a transaction's commit, it is written with the records, or neither is.)
  await store.runs
    .recordRunProgress(runId, progress, opts)
    .catch((err: unknown) => log.error({ err, runId }, 'could not record the run’s progress'));
}

/**
 * Ends a run that stopped before it could record its own end (interrupted, or failed in the store or a bug):
 * it keeps what it committed so far and must not stay "running". A store that cannot take this is only logged;
 * the caller throws what stopped the run.
 */
export async function recordRunStopped(
  store: Pick<Store, 'runs'>,
  runId: number,
  end: { status: 'interrupted' | 'failed'; at: Date; progress: RunProgress; error: string },
  log: Logger,
): Promise<void> {
  await store.runs
    .finishRun(runId, {
      status: end.status,
      finishedAt: end.at.toISOString(),
      ...end.progress,
      errors: [`${end.status}: ${end.error}`],
      warning: null,
    })
    .catch((e: unknown) => log.error({ err: e, runId }, `could not record the ${end.status} run`));
}

export function diffStats(after: EndpointStats, before: EndpointStats): EndpointStats {
  return {
    requests: after.requests - before.requests,
    retries: after.retries - before.retries,
    throttled: after.throttled - before.throttled,
    errors: after.errors - before.errors,
  };
}
