// The last stage (→ Applied): a plan's operations to provider calls, in chunks, with the mapping table kept in
// step — creates are recorded as pending before they are sent (so a crash leaves a trace that makes the next run
// reconcile), results are saved after each chunk — and calendars that the provider told to rest paused. A dry
// run's last stage only counts what it would write.
import type { Id } from '../domain/types.ts';
import type { PushMapping } from '../store/types.ts';
import type { Planned } from './adopt-plan.ts';
import { encodeCalendarId } from './calendar-id.ts';
import type { PushContext } from './context.ts';
import type { Ensured } from './ensure.ts';
import { pauseCalendar } from './pause.ts';
import { PENDING } from './plan.ts';
import type { WriteOp, WriteResult } from './provider.ts';
import { type CalendarOutcome, isGone, noteFailure, STATE_AFTER } from './summary.ts';

/** What the run reports of a calendar, and what a replaced public calendar's retirement reads. */
export interface Applied extends Pick<Ensured, 'spec' | 'ref' | 'outcome' | 'retire'> {}

type ApplyContext = Pick<
  PushContext,
  | 'store'
  | 'schoolId'
  | 'targetId'
  | 'provider'
  | 'chunkSize'
  | 'pauseMinutes'
  | 'startedAt'
  | 'clock'
  | 'log'
> &
  Pick<PushContext, 'note' | 'reached'>;

/** A calendar while its writes go: its outcome is this stage's own, counted as results come in. */
interface Writing {
  readonly c: Planned;
  readonly outcome: CalendarOutcome;
}

/** A snapshot of an outcome still being counted. */
const settled = (w: Writing): CalendarOutcome => ({ ...w.outcome, counts: { ...w.outcome.counts } });

/** Writes the plan: adoptions and forgotten mappings first, then the operations, then the calendars' state. */
export async function applyPlan(ctx: ApplyContext, planned: readonly Planned[]): Promise<Applied[]> {
  const { store, schoolId, targetId } = ctx;
  const adopt = planned.flatMap((c) => c.adopt);
  if (adopt.length) await store.push.upsertPushMappings(adopt);
  for (const c of planned)
    if (c.forget.length) await store.push.deletePushMappings(schoolId, targetId, c.spec.key, [...c.forget]);
  const writing: Writing[] = planned.map((c) => ({
    c,
    outcome: { ...c.outcome, counts: { ...c.outcome.counts } },
  }));
  await writeOps(ctx, writing);
  const reconciledAt = ctx.clock().toISOString();
  for (const { c, outcome } of writing) {
    if (!outcome.reconciled || outcome.state !== 'ok' || !c.ref) continue;
    await store.push.savePushCalendar({
      schoolId,
      target: targetId,
      calendarKey: c.spec.key,
      remoteCalendarId: encodeCalendarId(c.ref.owner, c.ref.remoteCalendarId),
      pausedUntil: null,
      lastReconciledAt: reconciledAt,
    });
  }
  for (const w of writing)
    if (w.outcome.state === 'paused' && w.c.ref) {
      const note = await pauseCalendar(ctx, w.c);
      if (note) w.outcome.note = note;
      ctx.reached(settled(w));
    }
  for (const w of writing) if (isGone(w.outcome)) await forgetCalendar(ctx, w);
  return writing.map((w) => {
    const { spec, ref, retire } = w.c;
    return { spec, ref, retire, outcome: settled(w) };
  });
}

/** A dry run's last stage: it counts what it would write. */
export function countPlanned(planned: readonly Planned[]): Applied[] {
  return planned.map(({ spec, ref, outcome, retire, ops }) => {
    const counts = { ...outcome.counts };
    for (const op of ops) {
      if (op.kind === 'create') counts.created++;
      else if (op.kind === 'update') counts.updated++;
      else counts.deleted++;
    }
    return { spec, ref, retire, outcome: { ...outcome, counts } };
  });
}

/** A remote calendar deleted by hand: forget it and its mappings, so the next run creates it again. */
async function forgetCalendar(ctx: ApplyContext, w: Writing): Promise<void> {
  const { c, outcome } = w;
  outcome.note = 'the remote calendar is gone (deleted by hand?): it is created again on the next run';
  ctx.reached(settled(w));
  ctx.note(`${c.spec.key}: ${outcome.note}`);
  await ctx.store.push.savePushCalendar({
    schoolId: ctx.schoolId,
    target: ctx.targetId,
    calendarKey: c.spec.key,
    remoteCalendarId: '',
    pausedUntil: null,
    lastReconciledAt: null,
  });
  if (c.mappings.size || c.ops.length)
    await ctx.store.push.deletePushMappings(ctx.schoolId, ctx.targetId, c.spec.key, [
      ...new Set([...c.mappings.keys(), ...c.ops.map((o) => o.identity.sessionId)]),
    ]);
}

function mappingOf(
  ctx: ApplyContext,
  calendarKey: string,
  sessionId: Id,
  remoteEventId: string,
  contentHash: string,
): PushMapping {
  const { schoolId, targetId: target, startedAt: updatedAt } = ctx;
  return { schoolId, target, calendarKey, sessionId, remoteEventId, contentHash, updatedAt };
}

/** Every calendar's operations, interleaved so each chunk spreads over many calendars (and mailboxes). */
function interleave(writing: Writing[]): { w: Writing; op: WriteOp }[] {
  const all: { w: Writing; op: WriteOp }[] = [];
  const queues = writing.filter((w) => w.c.ops.length).map((w) => ({ w, ops: [...w.c.ops] }));
  while (queues.some((q) => q.ops.length))
    for (const q of queues) if (q.ops.length) all.push({ w: q.w, op: q.ops.shift()! });
  return all;
}

async function writeOps(ctx: ApplyContext, writing: Writing[]): Promise<void> {
  const all = interleave(writing);
  const paused = new Set<string>();
  for (let i = 0; i < all.length; i += ctx.chunkSize) {
    const chunk = all
      .slice(i, i + ctx.chunkSize)
      .filter((x) => !paused.has(x.w.c.spec.key) && x.w.outcome.state !== 'skipped');
    if (chunk.length === 0) continue;
    // Write-ahead: a create is recorded as pending before it is sent, so a crash leaves a mapping that makes the
    // next run reconcile this calendar instead of trusting the table.
    const pending = chunk.flatMap(({ w, op }) =>
      op.kind === 'create'
        ? [mappingOf(ctx, w.c.spec.key, op.identity.sessionId, op.remoteEventId ?? '', PENDING)]
        : [],
    );
    if (pending.length) await ctx.store.push.upsertPushMappings(pending);
    const results = await ctx.provider.apply(chunk.map((x) => x.op));
    await record(ctx, chunk, results, paused);
  }
  const failed = writing.reduce((n, w) => n + w.outcome.counts.failed, 0);
  for (const w of writing)
    if (w.outcome.counts.failed && w.outcome.state === 'ok') {
      w.outcome.state = 'failed';
      ctx.reached(settled(w));
    }
  if (failed) ctx.log.warn({ failed }, 'some push writes failed');
}

/** A chunk's results into counts, calendar states and the mapping table. */
async function record(
  ctx: ApplyContext,
  chunk: { w: Writing; op: WriteOp }[],
  results: WriteResult[],
  paused: Set<string>,
): Promise<void> {
  const upserts: PushMapping[] = [];
  const deletes = new Map<string, Id[]>();
  chunk.forEach(({ w, op }, j) => {
    const r = results[j]!;
    const { c, outcome } = w;
    const counts = outcome.counts;
    if (!r.ok) {
      counts.failed++;
      noteFailure(outcome, r.kind);
      // A plain error fails the write alone: the calendar's state follows from its counts once all are in.
      if (r.kind !== 'error') outcome.state = STATE_AFTER[r.kind];
      // Nothing more is written to a calendar that rests or is gone.
      if (r.kind === 'quota' || r.kind === 'calendar-gone') paused.add(c.spec.key);
      outcome.note = r.reason;
      ctx.log.warn(
        { calendar: c.spec.key, session: op.identity.sessionId, kind: op.kind, reason: r.reason },
        'push write failed',
      );
      return;
    }
    if (op.kind === 'delete') {
      counts.deleted++;
      // Deleting a duplicate of a desired session leaves that session's mapping alone.
      if (!c.desired.has(op.identity.sessionId) && op.identity.sessionId >= 0) {
        const list = deletes.get(c.spec.key) ?? [];
        list.push(op.identity.sessionId);
        deletes.set(c.spec.key, list);
      }
      return;
    }
    if (op.kind === 'create' && !r.adopted) counts.created++;
    else counts.updated++;
    upserts.push(mappingOf(ctx, c.spec.key, op.identity.sessionId, r.remoteEventId ?? '', op.rendered.hash));
  });
  for (const w of new Set(chunk.map((x) => x.w))) ctx.reached(settled(w));
  if (upserts.length) await ctx.store.push.upsertPushMappings(upserts);
  for (const [key, ids] of deletes)
    await ctx.store.push.deletePushMappings(ctx.schoolId, ctx.targetId, key, ids);
}
