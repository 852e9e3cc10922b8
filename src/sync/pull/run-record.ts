// The run's record in the store: closing runs whose process died, progress after each resource, and the end of
// a run that did not finish by itself (interrupted, or failed outside the upstream).
import { processOwner } from '../../jobs/heartbeat.ts';
import type { Logger } from '../../log.ts';
import type { RunProgress, Store, SyncRun } from '../../store/types.ts';
import type { EndpointStats } from '../../upstream/api.ts';
import { untilStored } from './until-stored.ts';

const LEGACY_RUN_MS = 2 * 3_600_000;

/**
 * The pull runs this process has under way (`schoolId/runId`). A run `running` in this process's name that is not
 * among them ended without the store taking its end (out of reach at that moment): its owner is alive, so only
 * this process can tell it is over.
 */
const runsHere = new Set<string>();

/** Marks the run as under way in this process until the returned function is called. */
export function runningHere(schoolId: string, runId: number): () => void {
  const key = `${schoolId}/${runId}`;
  runsHere.add(key);
  return () => runsHere.delete(key);
}

/** Why the run must be closed as interrupted now, or null: its process died, or it is this one's and ended. */
function whyInterrupted(run: SyncRun, schoolId: string, now: Date): string | null {
  if (run.finishedAt !== null) return null;
  if (run.status === 'interrupted') return `the process running it (${run.owner ?? 'unknown'}) stopped`;
  if (run.status !== 'running' || run.kind === 'push') return null;
  // Runs recorded before runs had owners can only be judged by their age.
  if (!run.owner)
    return now.getTime() - Date.parse(run.startedAt) > LEGACY_RUN_MS
      ? 'the process running it (unknown) stopped'
      : null;
  if (run.owner === processOwner().id && !runsHere.has(`${schoolId}/${run.id}`))
    return 'it ended in this process while the store could not take its end';
  return null;
}

/**
 * Runs of the school whose process died (they read as interrupted), or that ended in this process without the
 * store taking their end, are closed as interrupted, for good. `recent`: its last runs, newest first
 * (RunsRepository.pullOpening, read with the rest of what the pull asks first).
 */
export async function closeInterruptedRuns(
  store: Pick<Store, 'runs'>,
  recent: readonly SyncRun[],
  schoolId: string,
  now: Date,
  log: Logger,
) {
  for (const run of recent) {
    const why = whyInterrupted(run, schoolId, now);
    if (!why) continue;
    await store.runs.finishRun(run.id, {
      status: 'interrupted',
      finishedAt: now.toISOString(),
      counts: run.counts,
      upstreamRequests: run.upstreamRequests,
      retries: run.retries,
      throttled: run.throttled,
      errors: [...run.errors, `interrupted: ${why}`],
      warning: run.warning,
    });
    const said =
      run.owner === processOwner().id
        ? 'that ended here before the store took its end'
        : 'whose process stopped';
    log.warn({ runId: run.id, schoolId, owner: run.owner }, `closed a run ${said}`);
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
 * it keeps what it committed so far and must not stay "running". A store that cannot take this is logged and
 * asked again in the background until it does (untilStored), the run counted as under way here until then, so no
 * later pull closes it differently meanwhile; the caller throws what stopped the run.
 */
export async function recordRunStopped(
  store: Pick<Store, 'runs'>,
  runId: number,
  end: { status: 'interrupted' | 'failed'; at: Date; progress: RunProgress; error: string },
  log: Logger,
  /** Called once the store took the run's end (or it was given up on). */
  settled?: () => void,
): Promise<void> {
  await untilStored(
    `record the ${end.status} run`,
    () =>
      store.runs.finishRun(runId, {
        status: end.status,
        finishedAt: end.at.toISOString(),
        ...end.progress,
        errors: [`${end.status}: ${end.error}`],
        warning: null,
      }),
    log,
    { bindings: { runId }, ...(settled ? { settled } : {}) },
  );
}

export function diffStats(after: EndpointStats, before: EndpointStats): EndpointStats {
  return {
    requests: after.requests - before.requests,
    retries: after.retries - before.retries,
    throttled: after.throttled - before.throttled,
    errors: after.errors - before.errors,
  };
}
