// The applier: a plan's operations to provider calls, in chunks, with the mapping table kept in step — creates
// are recorded as pending before they are sent (so a crash leaves a trace that makes the next run reconcile),
// results are saved after each chunk — and calendars that the provider told to rest paused.
import type { Id, Instant } from '../domain/types.ts';
import type { Logger } from '../log.ts';
import type { PushMapping, SchoolId, Store } from '../store/types.ts';
import { encodeCalendarId } from './calendar-id.ts';
import type { CalendarWork } from './gather.ts';
import { PENDING } from './plan.ts';
import type { PushProvider, WriteOp, WriteResult } from './provider.ts';
import { isGone, noteFailure, STATE_AFTER } from './summary.ts';

export interface ApplyStep {
  store: Pick<Store, 'push'>;
  schoolId: SchoolId;
  targetId: string;
  provider: PushProvider;
  /** Writes per chunk between mapping saves. */
  chunkSize: number;
  /** How long a calendar rests after the provider said quota exceeded. */
  pauseMinutes: number;
  /** The time stamped on mappings. */
  at: Instant;
  clock: () => Date;
  log: Logger;
  note: (msg: string) => void;
}

/** Writes the plan: adoptions and forgotten mappings first, then the operations, then the calendars' state. */
export async function applyPlan(step: ApplyStep, works: CalendarWork[]): Promise<void> {
  const { store, schoolId, targetId } = step;
  const adopt = works.flatMap((w) => w.adopt);
  if (adopt.length) await store.push.upsertPushMappings(adopt);
  for (const w of works)
    if (w.forget.length) await store.push.deletePushMappings(schoolId, targetId, w.spec.key, w.forget);
  await writeOps(step, works);
  const reconciledAt = step.clock().toISOString();
  for (const w of works) {
    if (!w.outcome.reconciled || w.outcome.state !== 'ok' || !w.ref) continue;
    await store.push.savePushCalendar({
      schoolId,
      target: targetId,
      calendarKey: w.spec.key,
      remoteCalendarId: encodeCalendarId(w.ref.owner, w.ref.remoteCalendarId),
      pausedUntil: null,
      lastReconciledAt: reconciledAt,
    });
  }
  for (const w of works) if (w.outcome.state === 'paused' && w.ref) await pauseCalendar(step, w);
  for (const w of works) if (isGone(w.outcome)) await forgetCalendar(step, w);
}

/** Rests a calendar for pauseMinutes (quota exceeded); the next runs skip it until then. */
export async function pauseCalendar(step: ApplyStep, w: CalendarWork): Promise<void> {
  if (!w.ref?.remoteCalendarId) return;
  const until = new Date(step.clock().getTime() + step.pauseMinutes * 60_000).toISOString();
  w.outcome.note = `paused until ${until} (quota exceeded)`;
  await step.store.push.savePushCalendar({
    schoolId: step.schoolId,
    target: step.targetId,
    calendarKey: w.spec.key,
    remoteCalendarId: encodeCalendarId(w.ref.owner, w.ref.remoteCalendarId),
    pausedUntil: until,
    lastReconciledAt: w.stored?.lastReconciledAt ?? null,
  });
}

/** A remote calendar deleted by hand: forget it and its mappings, so the next run creates it again. */
async function forgetCalendar(step: ApplyStep, w: CalendarWork): Promise<void> {
  w.outcome.note = 'the remote calendar is gone (deleted by hand?): it is created again on the next run';
  step.note(`${w.spec.key}: ${w.outcome.note}`);
  await step.store.push.savePushCalendar({
    schoolId: step.schoolId,
    target: step.targetId,
    calendarKey: w.spec.key,
    remoteCalendarId: '',
    pausedUntil: null,
    lastReconciledAt: null,
  });
  if (w.mappings.size || w.ops.length)
    await step.store.push.deletePushMappings(step.schoolId, step.targetId, w.spec.key, [
      ...new Set([...w.mappings.keys(), ...w.ops.map((o) => o.identity.sessionId)]),
    ]);
}

function mappingOf(
  step: ApplyStep,
  calendarKey: string,
  sessionId: Id,
  remoteEventId: string,
  contentHash: string,
): PushMapping {
  const { schoolId, targetId: target, at: updatedAt } = step;
  return { schoolId, target, calendarKey, sessionId, remoteEventId, contentHash, updatedAt };
}

/** Every calendar's operations, interleaved so each chunk spreads over many calendars (and mailboxes). */
function interleave(works: CalendarWork[]): { w: CalendarWork; op: WriteOp }[] {
  const all: { w: CalendarWork; op: WriteOp }[] = [];
  const queues = works.filter((w) => w.ops.length).map((w) => ({ w, ops: [...w.ops] }));
  while (queues.some((q) => q.ops.length))
    for (const q of queues) if (q.ops.length) all.push({ w: q.w, op: q.ops.shift()! });
  return all;
}

async function writeOps(step: ApplyStep, works: CalendarWork[]): Promise<void> {
  const all = interleave(works);
  const paused = new Set<string>();
  for (let i = 0; i < all.length; i += step.chunkSize) {
    const chunk = all
      .slice(i, i + step.chunkSize)
      .filter((x) => !paused.has(x.w.spec.key) && x.w.outcome.state !== 'skipped');
    if (chunk.length === 0) continue;
    // Write-ahead: a create is recorded as pending before it is sent, so a crash leaves a mapping that makes the
    // next run reconcile this calendar instead of trusting the table.
    const pending = chunk.flatMap(({ w, op }) =>
      op.kind === 'create'
        ? [mappingOf(step, w.spec.key, op.identity.sessionId, op.remoteEventId ?? '', PENDING)]
        : [],
    );
    if (pending.length) await step.store.push.upsertPushMappings(pending);
    const results = await step.provider.apply(chunk.map((x) => x.op));
    await record(step, chunk, results, paused);
  }
  const failed = works.reduce((n, w) => n + w.outcome.counts.failed, 0);
  for (const w of works) if (w.outcome.counts.failed && w.outcome.state === 'ok') w.outcome.state = 'failed';
  if (failed) step.log.warn({ failed }, 'some push writes failed');
}

/** A chunk's results into counts, calendar states and the mapping table. */
async function record(
  step: ApplyStep,
  chunk: { w: CalendarWork; op: WriteOp }[],
  results: WriteResult[],
  paused: Set<string>,
): Promise<void> {
  const upserts: PushMapping[] = [];
  const deletes = new Map<string, Id[]>();
  chunk.forEach(({ w, op }, j) => {
    const r = results[j]!;
    const c = w.outcome.counts;
    if (!r.ok) {
      c.failed++;
      noteFailure(w.outcome, r.kind);
      // A plain error fails the write alone: the calendar's state follows from its counts once all are in.
      if (r.kind !== 'error') w.outcome.state = STATE_AFTER[r.kind];
      // Nothing more is written to a calendar that rests or is gone.
      if (r.kind === 'quota' || r.kind === 'calendar-gone') paused.add(w.spec.key);
      w.outcome.note = r.reason;
      step.log.warn(
        { calendar: w.spec.key, session: op.identity.sessionId, kind: op.kind, reason: r.reason },
        'push write failed',
      );
      return;
    }
    if (op.kind === 'delete') {
      c.deleted++;
      // Deleting a duplicate of a desired session leaves that session's mapping alone.
      if (!w.desired.has(op.identity.sessionId) && op.identity.sessionId >= 0) {
        const list = deletes.get(w.spec.key) ?? [];
        list.push(op.identity.sessionId);
        deletes.set(w.spec.key, list);
      }
      return;
    }
    if (op.kind === 'create' && !r.adopted) c.created++;
    else c.updated++;
    upserts.push(mappingOf(step, w.spec.key, op.identity.sessionId, r.remoteEventId ?? '', op.rendered.hash));
  });
  if (upserts.length) await step.store.push.upsertPushMappings(upserts);
  for (const [key, ids] of deletes)
    await step.store.push.deletePushMappings(step.schoolId, step.targetId, key, ids);
}
