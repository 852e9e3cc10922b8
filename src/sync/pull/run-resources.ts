// A recorded run's body: plan every resource, write them one at a time in order while the downloads run one
// ahead, store the outputs, and record how the run ended.
import type { PullKind, PullSummary, ResourceOutcome } from '../../jobs/pull-summary.ts';
import { syncWindow } from '../../jobs/window.ts';
import type { Logger } from '../../log.ts';
import type { PullFence } from '../../store/lease-fence.ts';
import type { ResourceKind, RunCounts, RunProgress, RunStatus } from '../../store/types.ts';
import type { EndpointStats } from '../../upstream/api.ts';
import { describeSkew, SkewMeter, skewConsequence } from '../../upstream/clock.ts';
import { RESOURCES } from '../resources.ts';
import { message } from './errors.ts';
import { releaseUnwritten, startDownloads } from './gather.ts';
import { planResources } from './plan.ts';
import { type DeferredCursors, type OnApplied, pullResource } from './pull-resource.ts';
import { diffStats, recordProgress } from './run-record.ts';
import {
  type PlannedResource,
  type PullOptions,
  type PullProgress,
  type ResourceResult,
  type ResourceRunContext,
  zeroCounts,
} from './types.ts';

export interface RunInfo {
  runId: number;
  kind: PullKind;
  upgradedBecause: string | null;
  startedAt: Date;
  now: () => Date;
  onProgress: (event: PullProgress) => void;
  log: Logger;
  /** What the run has committed so far (kept in its record after each resource). */
  progress: RunProgress;
  /**
   * The school's lease as this run took it: its writes are made only while it is still held so. pullSchool always
   * gives it; a stage run alone in a test, under no lease, writes unfenced.
   */
  fence?: PullFence;
}

/** What the resources' turns came to, for the run's record. */
interface Turns {
  resources: ResourceOutcome[];
  errors: string[];
  warnings: string[];
}

function notAttempted(step: PlannedResource, why: string): ResourceOutcome {
  return {
    kind: step.spec.kind,
    mode: step.mode,
    status: 'skipped',
    counts: zeroCounts(),
    pages: 0,
    durationMs: 0,
    error: `not attempted: ${why}`,
  };
}

/**
 * The least time between two progress lines in the run's record for resources that changed nothing. A resource
 * that added, changed or deleted records has its counts recorded at once; one that only read (or was skipped,
 * or failed and rolled back) waits for the next line or the run's end, so an unchanged pull writes its record
 * once at its end instead of once per resource (10 statements a pull; issue 46).
 */
const PROGRESS_EVERY_MS = 1_000;

/** Whether a resource's turn committed any record: its counts must be in the run's record before the next. */
function wroteAny(result: ResourceResult): boolean {
  const wrote = (c: RunCounts | undefined) => c !== undefined && c.added + c.changed + c.deleted > 0;
  return result.outcome.status !== 'failed' && (wrote(result.outcome.counts) || wrote(result.extra?.counts));
}

/** Each resource in turn; after a fatal failure the rest are not attempted. */
async function takeTurns(
  opts: PullOptions,
  run: RunInfo,
  ctx: ResourceRunContext,
  plan: readonly PlannedResource[],
  before: EndpointStats,
): Promise<Turns> {
  const { store, client } = opts;
  const { runId, onProgress, log, progress } = run;
  const turns: Turns = { resources: [], errors: [], warnings: [] };
  const counts = progress.counts;
  let aborted: string | null = null;
  const downloads = startDownloads(ctx, plan, () => aborted !== null || opts.signal?.aborted === true);
  const written = new Set<ResourceKind>();
  let recordedAt = Date.now();
  const deferred: DeferredCursors = new Map();
  try {
    for (const step of plan) {
      // Stopped from outside: pullLeased has recorded the run as interrupted; nothing more may be written.
      opts.signal?.throwIfAborted();
      if (aborted) {
        const outcome = notAttempted(step, aborted);
        turns.resources.push(outcome);
        onProgress({ type: 'resource-done', kind: step.spec.kind, outcome });
        continue;
      }
      written.add(step.spec.kind);
      // A resource that writes has the run's progress line written in its transaction, as it commits, with
      // what it committed (one statement with its cursors on PostgreSQL, where it was one more of its own).
      let recordedWithin = false;
      const onApplied: OnApplied = async (kind, applied) => {
        const next = { ...counts, [kind]: applied.counts };
        if (applied.extra) next[applied.extra.kind] = applied.extra.counts;
        const line = { ...progress, counts: next };
        await recordProgress(store, runId, line, diffStats(client.totals(), before), log, { atCommit: true });
        recordedWithin = true;
      };
      const fetching = downloads.get(step.spec.kind);
      const result = await pullResource(ctx, step.spec, step.mode, fetching, deferred, onApplied);
      turns.resources.push(result.outcome);
      if (step.mode !== 'skipped') counts[step.spec.kind] = result.outcome.counts;
      if (result.extra) counts[result.extra.kind] = result.extra.counts;
      turns.errors.push(...result.errors);
      if (result.warning) turns.warnings.push(result.warning);
      if (recordedWithin && result.outcome.status !== 'failed') recordedAt = Date.now();
      else if (wroteAny(result) || Date.now() - recordedAt >= PROGRESS_EVERY_MS) {
        await recordProgress(store, runId, progress, diffStats(client.totals(), before), log);
        recordedAt = Date.now();
      }
      log.debug(
        { runId, resource: step.spec.kind, status: result.outcome.status, ...result.outcome.counts },
        'resource done',
      );
      onProgress({ type: 'resource-done', kind: step.spec.kind, outcome: result.outcome });
      if (result.fatal) aborted = result.outcome.error ?? 'upstream refused access';
    }
    // The cursors of the last resources that had nothing else to write (pull-resource.ts), in one statement.
    await store.records.setCursors(opts.school.id, deferred, ctx.fence ? { fence: ctx.fence.fence } : {});
  } finally {
    releaseUnwritten(downloads, written);
  }
  return turns;
}

/** The run's status: failed (a resource, or the outputs), suspicious (warnings), or succeeded. */
async function judgeRun(opts: PullOptions, turns: Turns): Promise<RunStatus> {
  let failed = turns.resources.some((r) => r.status === 'failed');
  if (!failed && opts.storeOutputs) {
    try {
      await opts.storeOutputs();
    } catch (err) {
      opts.signal?.throwIfAborted();
      failed = true;
      turns.errors.push(message(err));
    }
  }
  return failed ? 'failed' : turns.warnings.length > 0 ? 'suspicious' : 'succeeded';
}

function logEnd(log: Logger, summary: PullSummary) {
  const { runId, kind, status, durationMs, upstream, counts, warning, upstreamSkewMs } = summary;
  const line = { runId, kind, status, durationMs, upstream, counts, upstreamSkewMs };
  if (status === 'failed') log.error(line, 'pull failed');
  else if (status === 'suspicious') log.warn({ ...line, warning }, 'pull finished but was suspicious');
  else log.info(line, 'pull finished');
  // Nothing is lost by it (cursors follow the upstream's clock), but times the upstream gives (updatedAt, and
  // an operator comparing logs) read off by as much: said on every pull that measures it.
  const skew = describeSkew(upstreamSkewMs);
  if (skew)
    log.warn(
      { runId, upstreamSkewMs },
      `the upstream's clock is ${skew}; ${skewConsequence(upstreamSkewMs!)}`,
    );
}

export async function runResources(opts: PullOptions, run: RunInfo): Promise<PullSummary> {
  const { store, client, school } = opts;
  const { runId, kind, startedAt, now, onProgress, log, progress } = run;
  client.beginRun();
  const before: EndpointStats = client.totals();
  const window = syncWindow(startedAt, school.syncWindow);
  log.info({ runId, kind, window }, 'pull started');

  // The cursors and every resource's missing-record marks, in one statement.
  const { cursors, missing: marks } = await store.records.pullState(
    school.id,
    RESOURCES.map((r) => r.kind),
  );
  const plan = planResources(cursors, school, kind, startedAt, opts.beatsFrom ?? null);
  onProgress({
    type: 'start',
    schoolId: school.id,
    kind,
    resources: plan.map((p) => ({ kind: p.spec.kind, mode: p.mode })),
  });

  const skew = new SkewMeter();
  const beatAt = opts.beatsFrom ?? startedAt;
  const ctx: ResourceRunContext = {
    store,
    client,
    school,
    window,
    startedAt,
    beatAt,
    now,
    onProgress,
    log,
    skew,
    marks,
    cursors,
    ...(run.fence ? { fence: run.fence } : {}),
  };
  const turns = await takeTurns(opts, run, ctx, plan, before);
  const status = await judgeRun(opts, turns);
  const { resources, errors, warnings } = turns;
  const counts = progress.counts;
  const upstream = diffStats(client.totals(), before);
  const finishedAt = now();
  const warning = warnings.length > 0 ? warnings.join('; ') : null;
  const upstreamSkewMs = skew.estimate();
  opts.signal?.throwIfAborted();
  await store.runs.finishRun(runId, {
    upstreamSkewMs,
    status,
    finishedAt: finishedAt.toISOString(),
    counts,
    upstreamRequests: upstream.requests,
    retries: upstream.retries,
    throttled: upstream.throttled,
    errors,
    warning,
  });

  const summary: PullSummary = {
    runId,
    schoolId: school.id,
    kind,
    requestedKind: opts.kind,
    upgradedBecause: run.upgradedBecause,
    status,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationMs: finishedAt.getTime() - startedAt.getTime(),
    resources,
    counts,
    upstream,
    upstreamSkewMs,
    errors,
    warning,
  };
  logEnd(log, summary);
  onProgress({ type: 'done', summary });
  return summary;
}
