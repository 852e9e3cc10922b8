// The pull: upstream → store snapshot for one school, recorded as a sync run.
//
// Each resource is first downloaded whole (no store transaction is open while the upstream answers, so readers
// and other writers never wait on the network), then written in one short transaction of bulk statements, so a
// run that fails half-way leaves every resource either fully updated or exactly as it was. What the download
// holds is only what will be written: records the store already holds unchanged are dropped as they arrive, and
// the rest wait in a spool (spool.ts) that moves to a private temporary file past a few megabytes, so the pull's
// memory does not grow with the school; the write takes them back in chunks.
// Full runs read everything in the window and mark what is gone as deleted, unless the deletion guard objects;
// incremental runs ask only for what changed since the resource's cursor and re-read reference data when due.
//
// This file takes the lease and records the run; its stages are in pull/, one job a file, in the order they run:
//   plan.ts              how each resource is read this time (full, incremental, skipped)
//   gather.ts            the download of each resource, one ahead of the writes            → Gathered
//   confirm-missing.ts   single reads of what a complete full listing left out
//   pull-resource.ts     one resource's transaction:
//     write-records.ts     its new and changed records                                      → Written
//     judge-listing.ts     whether its listing can be the whole truth                       → Listed
//     detect-deletions.ts  what the listing shows gone, and the guard's word                → Planned
//     advance-cursors.ts   its cursors, moved with the data                                 → Applied
//   run-resources.ts     every resource in turn, the outputs, and the run's end
//   run-record.ts        the run's record (progress, closing runs whose process died)

import { keepAlive, processOwner } from '../jobs/heartbeat.ts';
import type { PullSummary } from '../jobs/pull-summary.ts';
import { type Logger, silentLogger } from '../log.ts';
import { LeaseLostError, type PullFence } from '../store/lease-fence.ts';
import type { PullOpening, RunProgress } from '../store/types.ts';
import {
  abortReason,
  message,
  PullInterruptedError,
  PullLeaseLostError,
  PullNotNeededError,
  unlessAborted,
} from './pull/errors.ts';
import { takeFencedLease } from './pull/lease.ts';
import { closeInterruptedRuns, recordRunStopped, runningHere } from './pull/run-record.ts';
import { runResources } from './pull/run-resources.ts';
import type { PullOptions } from './pull/types.ts';
import { untilStored } from './pull/until-stored.ts';

export {
  PullBusyError,
  PullInterruptedError,
  PullLeaseLostError,
  PullNotNeededError,
} from './pull/errors.ts';
export { listingGap } from './pull/judge-listing.ts';
export { withoutSensitive } from './pull/sensitive.ts';
export type { PullOptions, PullProgress } from './pull/types.ts';

/** Pulls one school into the store and records the run. Never throws for upstream trouble: see the summary. */
export async function pullSchool(opts: PullOptions): Promise<PullSummary> {
  const { store, school } = opts;
  const log = (opts.log ?? silentLogger).child({ schoolId: school.id });
  // Stopped before it began: nothing to record.
  if (opts.signal?.aborted) throw new PullInterruptedError(school.id, abortReason(opts.signal), null);
  // Alive before anything is recorded, so no other process takes this pull's lease or run for an orphan.
  const stopBeating = await keepAlive(store, log);
  try {
    await store.records.upsertSchool({ id: school.id, name: school.name, timeZone: school.timeZone });
    const held = await takeFencedLease(store, school.id, opts);
    // A no-op for a lease taken over since (the token is no longer its). Refused (the store out of reach), it is
    // asked again until the store takes it: a live owner's lease is never taken over by liveness.
    const release = () => untilStored('release the pull lease', () => held.release(), log);
    if (opts.signal?.aborted) {
      await release();
      throw new PullInterruptedError(school.id, abortReason(opts.signal), null);
    }
    try {
      return await pullLeased(opts, log, { schoolId: school.id, fence: held.fence });
    } finally {
      await release();
    }
  } finally {
    stopBeating();
  }
}

/**
 * The run's kind: a full pull asked for while another held the school (a full fire that met an incremental one)
 * is run by whichever pull takes the lease next, on any replica: it is never dropped.
 */
async function decideKind(
  opts: PullOptions,
  opening: PullOpening,
): Promise<{ kind: PullOptions['kind']; upgradedBecause: string | null }> {
  const { store, school } = opts;
  const request = opening.fullRequest;
  if (opts.answers !== undefined && request === null) {
    const [done] = await store.runs.listRuns(school.id, { kind: 'full', limit: 1 });
    throw new PullNotNeededError(school.id, done ?? null);
  }
  if (opts.kind !== 'incremental') return { kind: opts.kind, upgradedBecause: null };
  if (request)
    return { kind: 'full', upgradedBecause: `full pull asked for at ${request.at} by ${request.by}` };
  if (!opening.completedFull) return { kind: 'full', upgradedBecause: 'first complete run' };
  return { kind: opts.kind, upgradedBecause: null };
}

/** The run under the school's lease: every write of it is made under `fence` (store/lease-fence.ts). */
async function pullLeased(opts: PullOptions, log: Logger, fence: PullFence): Promise<PullSummary> {
  const { store, school } = opts;
  const now = opts.now ?? (() => new Date());
  const onProgress = opts.onProgress ?? (() => {});

  const startedAt = now();
  const opening = await store.runs.pullOpening(school.id);
  await closeInterruptedRuns(store, opening.recent, school.id, startedAt, log);
  const { kind, upgradedBecause } = await decideKind(opts, opening);
  if (upgradedBecause) log.info(`running a full pull: ${upgradedBecause}`);
  const runId = await store.runs.startRun({
    schoolId: school.id,
    kind,
    at: startedAt.toISOString(),
    owner: processOwner().id,
  });
  const ended = runningHere(school.id, runId);
  let ending = false;
  // What the run has committed so far: kept in its record after each resource, and what an interrupted or
  // failed run records, since the resources written before the stop stay written.
  const progress: RunProgress = { counts: {}, upstreamRequests: 0, retries: 0, throttled: 0 };
  try {
    await opts.onStart?.({ runId, kind });
    const summary = await unlessAborted(
      runResources(opts, { runId, kind, upgradedBecause, startedAt, now, onProgress, log, progress, fence }),
      opts.signal,
    );
    // Done, whatever its result (a failed full pull is in the history like any other): requests made before it
    // started are answered; one made while it ran waits for the next pull.
    if (kind === 'full') await store.runs.satisfyFullPull(school.id, startedAt.toISOString());
    return summary;
  } catch (err) {
    // Taken over while it stalled: it wrote nothing since, and ends as interrupted, saying why (never a failure).
    const lost = err instanceof LeaseLostError;
    const interrupted = lost || opts.signal?.aborted === true;
    // Not upstream trouble (that is in the summary) but a stop, the store or a bug: the run must not stay "running".
    const error = lost || !interrupted ? message(err) : abortReason(opts.signal!);
    const status = interrupted ? 'interrupted' : 'failed';
    ending = true;
    await recordRunStopped(store, runId, { status, at: now(), progress, error }, log, ended);
    if (lost) {
      log.warn({ runId, fence: fence.fence }, `pull ended: ${error}`);
      throw new PullLeaseLostError(school.id, error, runId);
    }
    if (!interrupted) throw err;
    log.warn({ runId }, `pull interrupted: ${error}`);
    throw new PullInterruptedError(school.id, error, runId);
  } finally {
    // A run whose stop is still being recorded stays under way here until the store has taken it.
    if (!ending) ended();
  }
}
