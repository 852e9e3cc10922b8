// One resource's turn: its download (gathered ahead, see startDownloads) written in one short transaction of
// named stages: writeRecords → judgeListing → detectDeletions → applyDeletions → advanceCursors (with the beat's
// mark); or, when it brought nothing to write but its cursors, no transaction at all (quietTurn).
import type { ResourceMode, ResourceOutcome } from '../../jobs/pull-summary.ts';
import { LeaseLostError } from '../../store/lease-fence.ts';
import type { ResourceKind, RunCounts } from '../../store/types.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { ResourceSpec } from '../resources.ts';
import { explainUpstreamFailure } from '../upstream-hint.ts';
import { advanceCursors, cursorsAfter } from './advance-cursors.ts';
import { applyDeletions, detectDeletions } from './detect-deletions.ts';
import { isFatal, message } from './errors.ts';
import type { Fetched, Gathered } from './gathered.ts';
import { judgeListing } from './judge-listing.ts';
import { sensitiveChangedIn } from './sensitive.ts';
import { type ResourceResult, type ResourceRunContext, zeroCounts } from './types.ts';
import { writeRecords } from './write-records.ts';

/** What the resource's turn committed. */
interface Applied {
  counts: RunCounts;
  extra?: { kind: ResourceKind; counts: RunCounts };
  guarded: boolean;
  warning: string | null;
}

/**
 * Cursors of the run's resources whose turn had nothing else to write, not yet written: they go with the next
 * resource's transaction, or in one statement at the run's end (takeTurns). Such a cursor covers no record, so
 * writing it a moment later loses nothing; a run stopped first leaves it where it was, and the resource is read
 * again.
 */
export type DeferredCursors = Map<string, string>;

/**
 * What a resource's transaction writes last, with what it committed: the run's progress line (run-resources.ts),
 * so that it is in the record exactly when the records are, in the transaction's last statement.
 */
export type OnApplied = (kind: ResourceKind, applied: Pick<Applied, 'counts' | 'extra'>) => Promise<void>;

/** The store: one short transaction of bulk statements, with no network wait inside it. */
function applyResource(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  got: Gathered,
  skipped: number,
  deferred: DeferredCursors,
  onApplied: OnApplied | undefined,
): Promise<Applied> {
  const full = mode === 'full';
  // Its kinds' locks are taken by the BEGIN itself on PostgreSQL (one round trip instead of one more each).
  const kinds: ResourceKind[] = got.customFields.size > 0 ? [spec.kind, 'customFields'] : [spec.kind];
  // Under the run's lease: written only while it is still the school's (store/lease-fence.ts).
  const writes = { schoolId: ctx.school.id, kinds, ...(ctx.fence ? { fence: ctx.fence.fence } : {}) };
  return ctx.store.transaction(
    async (tx) => {
      const at = ctx.now().toISOString();
      const written = await writeRecords(tx, ctx.school, spec, got, { skipped, at });
      const listed = judgeListing(got, full);
      const planned = await detectDeletions(tx, ctx, spec, got, listed, full);
      const counts = written.counts;
      counts.deleted = await applyDeletions(tx, ctx.school.id, spec.kind, planned, at);
      if (planned.pending > 0) counts.pending = planned.pending;
      await advanceCursors(tx, ctx, spec, mode, listed, got, deferred);
      const extra = written.extra ? { extra: written.extra } : {};
      await onApplied?.(spec.kind, { counts, ...extra });
      return { counts, ...extra, guarded: planned.guarded, warning: planned.warning };
    },
    { writes },
  );
}

/**
 * A turn with nothing to write but cursors, or null: nothing new or changed arrived, and the listing shows
 * nothing gone that may be deleted or marked (judged on reads outside a transaction: only this run writes the
 * kind, under the school's lease). Its cursors join `deferred`, and it opens no transaction: an unchanged
 * resource cost a BEGIN, a cursor write and a COMMIT each (issue 46).
 */
async function quietTurn(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  got: Gathered,
  skipped: number,
  deferred: DeferredCursors,
): Promise<Applied | null> {
  const full = mode === 'full';
  if (got.records.size > 0 || got.customFields.size > 0) return null;
  if (spec.kind === 'teams' && full && sensitiveChangedIn(ctx.cursors, ctx.school)) return null;
  const listed = judgeListing(got, full);
  const planned = await detectDeletions(ctx.store, ctx, spec, got, listed, full);
  if (planned.remove.length > 0 || planned.marks !== null) return null;
  // Nothing to write: this only counts what came unchanged.
  const written = await writeRecords(ctx.store, ctx.school, spec, got, {
    skipped,
    at: ctx.now().toISOString(),
  });
  for (const [key, value] of cursorsAfter(ctx, spec, mode, listed, got)) deferred.set(key, value);
  return {
    counts: written.counts,
    ...(written.extra ? { extra: written.extra } : {}),
    guarded: planned.guarded,
    warning: planned.warning,
  };
}

/** Nothing read: not due this run, or the pull stopped before its download started. */
function notRead(spec: ResourceSpec, mode: ResourceMode): ResourceResult {
  const outcome: ResourceOutcome = {
    kind: spec.kind,
    mode,
    status: 'skipped',
    counts: zeroCounts(),
    pages: 0,
    durationMs: 0,
    ...(mode === 'skipped' ? {} : { error: 'not attempted: the pull was stopped' }),
  };
  return { outcome, errors: [], warning: null };
}

function resourceFailed(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  fetched: Fetched,
  err: unknown,
): ResourceResult {
  const { school, log } = ctx;
  // A refusal the configuration explains (token, URL) is said as such; its stack would say nothing more.
  const explained = explainUpstreamFailure(err, school);
  const why = explained ?? message(err);
  log.error(
    {
      ...(explained && err instanceof UpstreamError ? { failure: { ...err.toJSON(), explained } } : { err }),
      schoolId: school.id,
      resource: spec.kind,
    },
    `pull of ${spec.kind} failed; nothing of it was written`,
  );
  const outcome: ResourceOutcome = {
    kind: spec.kind,
    mode,
    status: 'failed',
    // Rolled back: nothing of it happened, except the skips we saw.
    counts: { ...zeroCounts(), skipped: fetched.skipped },
    pages: fetched.pages,
    durationMs: Date.now() - fetched.began,
    error: why,
  };
  return {
    outcome,
    errors: [...fetched.errors, `${spec.kind}: ${explained ?? `failed, nothing of it was kept: ${why}`}`],
    warning: null,
    fatal: isFatal(err),
  };
}

function resourceDone(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  fetched: Fetched,
  applied: Applied,
): ResourceResult {
  const { warning } = applied;
  if (warning) ctx.log.warn({ schoolId: ctx.school.id, resource: spec.kind }, `deletion guard: ${warning}`);
  const outcome: ResourceOutcome = {
    kind: spec.kind,
    mode,
    status: applied.guarded ? 'guarded' : 'ok',
    counts: applied.counts,
    pages: fetched.pages,
    durationMs: Date.now() - fetched.began,
  };
  return { outcome, errors: fetched.errors, warning, ...(applied.extra ? { extra: applied.extra } : {}) };
}

export async function pullResource(
  ctx: ResourceRunContext,
  spec: ResourceSpec,
  mode: ResourceMode,
  fetching: Promise<Fetched | null> | undefined,
  deferred: DeferredCursors,
  onApplied?: OnApplied,
): Promise<ResourceResult> {
  ctx.onProgress({ type: 'resource', kind: spec.kind, mode });
  const fetched = mode === 'skipped' ? null : await fetching;
  if (!fetched) return notRead(spec, mode);
  let applied: Applied;
  try {
    if (!fetched.result.ok) throw fetched.result.error;
    const got = fetched.result.download;
    const quiet = await quietTurn(ctx, spec, mode, got, fetched.skipped, deferred);
    if (quiet) applied = quiet;
    else {
      applied = await applyResource(ctx, spec, mode, got, fetched.skipped, deferred, onApplied);
      // Written with this resource's own, and committed.
      deferred.clear();
    }
  } catch (err) {
    // Not this resource's failure: the run has lost its lease and must write nothing more (pull.ts ends it).
    if (err instanceof LeaseLostError) throw err;
    return resourceFailed(ctx, spec, mode, fetched, err);
  } finally {
    if (fetched.result.ok) await fetched.result.download.records.close();
  }
  return resourceDone(ctx, spec, mode, fetched, applied);
}
