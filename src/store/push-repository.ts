// Push's bookkeeping: the remote calendars each target owns, and the events it believes are in them (with the
// hash of what it last wrote), so a push run writes only what changed.

import { sql } from 'kysely';
import type { Id } from '../domain/types.ts';
import { maybeInstant, storedInstant } from './instants.ts';
import { LeaseLostError, type PushFence, pgUnderFence } from './lease-fence.ts';
import { chunks, type SqlContext } from './sql-context.ts';
import type { PushCalendar, PushMapping, PushRepository, SchoolId } from './types.ts';

export class SqlPush implements PushRepository {
  readonly #ctx: SqlContext;
  /** Every write commits only while the target's lease is held at this fence (fencedBy). */
  readonly #fence: PushFence | undefined;

  constructor(ctx: SqlContext, fence?: PushFence) {
    this.#ctx = ctx;
    this.#fence = fence;
  }

  fencedBy(fence: PushFence): PushRepository {
    return new SqlPush(this.#ctx, fence);
  }

  /** A write: in a transaction of its own checked against the fence, when there is one (lease-fence.ts). */
  async #write(fn: () => Promise<unknown>): Promise<void> {
    await this.#ctx.transaction(fn, this.#fence && { fence: this.#fence });
  }

  async savePushCalendar(cal: PushCalendar): Promise<void> {
    const values = {
      remote_calendar_id: cal.remoteCalendarId,
      paused_until: maybeInstant(cal.pausedUntil, 'pausedUntil'),
      last_reconciled_at: maybeInstant(cal.lastReconciledAt, 'lastReconciledAt'),
    };
    const key = { school_id: cal.schoolId, target: cal.target, calendar_key: cal.calendarKey };
    if (this.#fence) {
      // One statement with the fence's check on PostgreSQL (sql-context.ts's insertRowsFenced).
      await this.#ctx.insertRowsFenced(
        'push_calendars',
        [{ ...key, ...values }],
        { columns: Object.keys(key), update: ['remote_calendar_id', 'paused_until', 'last_reconciled_at'] },
        this.#fence,
      );
      return;
    }
    // Unfenced (admin acts: a feed's rotation forgets its live calendar).
    await this.#ctx.w
      .insertInto('push_calendars')
      .values({ ...key, ...values })
      .onConflict((oc) => oc.columns(['school_id', 'target', 'calendar_key']).doUpdateSet(values))
      .execute();
  }

  async listPushCalendars(schoolId: SchoolId, target: string): Promise<PushCalendar[]> {
    const rows = await this.#ctx.r
      .selectFrom('push_calendars')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('target', '=', target)
      .orderBy('calendar_key')
      .execute();
    return rows.map((r) => ({
      schoolId: r.school_id,
      target: r.target,
      calendarKey: r.calendar_key,
      remoteCalendarId: r.remote_calendar_id,
      pausedUntil: r.paused_until,
      lastReconciledAt: r.last_reconciled_at,
    }));
  }

  async upsertPushMappings(mappings: PushMapping[]): Promise<void> {
    if (mappings.length === 0) return;
    // Last occurrence of a key wins (PostgreSQL refuses to update one row twice in a statement).
    const byKey = new Map<string, PushMapping>();
    for (const m of mappings)
      byKey.set(JSON.stringify([m.schoolId, m.target, m.calendarKey, m.sessionId]), m);
    const rows = [...byKey.values()].map((m) => ({
      school_id: m.schoolId,
      target: m.target,
      calendar_key: m.calendarKey,
      session_id: m.sessionId,
      remote_event_id: m.remoteEventId,
      content_hash: m.contentHash,
      updated_at: storedInstant(m.updatedAt, 'updatedAt'),
    }));
    const conflict = {
      columns: ['school_id', 'target', 'calendar_key', 'session_id'],
      update: ['remote_event_id', 'content_hash', 'updated_at'] as [string, ...string[]],
    };
    if (this.#fence) await this.#ctx.insertRowsFenced('push_mappings', rows, conflict, this.#fence);
    else await this.#ctx.insertRows('push_mappings', rows, conflict);
  }

  async deletePushMappings(
    schoolId: SchoolId,
    target: string,
    calendarKey: string,
    sessionIds: Id[],
  ): Promise<void> {
    if (sessionIds.length === 0) return;
    const where = { schoolId, target, calendarKey };
    const fence = this.#fence;
    if (fence && this.#ctx.dialect === 'postgres' && sessionIds.length <= this.#ctx.inChunk) {
      // One statement, the fence's check in it (one round trip, not four), that tells a lease lost from no row.
      const { rows } = await pgUnderFence(
        fence,
        (held) =>
          sql`delete from push_mappings where school_id = ${schoolId} and target = ${target}
            and calendar_key = ${calendarKey} and session_id = any(${sessionIds}::int8[]) and ${held}`,
      ).execute(this.#ctx.w);
      if (!rows[0]?.held) throw new LeaseLostError(fence);
      return;
    }
    await this.#write(async () => {
      for (const batch of chunks(sessionIds, this.#ctx.inChunk)) await this.#delete(where, batch);
    });
  }

  async #delete(where: { schoolId: SchoolId; target: string; calendarKey: string }, sessionIds: Id[]) {
    await this.#ctx.w
      .deleteFrom('push_mappings')
      .where('school_id', '=', where.schoolId)
      .where('target', '=', where.target)
      .where('calendar_key', '=', where.calendarKey)
      .where((eb) => this.#ctx.inList(eb, 'session_id', sessionIds, 'int8'))
      .execute();
  }

  async listPushMappings(schoolId: SchoolId, target: string, calendarKey?: string): Promise<PushMapping[]> {
    let q = this.#ctx.r
      .selectFrom('push_mappings')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('target', '=', target);
    if (calendarKey !== undefined) q = q.where('calendar_key', '=', calendarKey);
    const rows = await q.orderBy('calendar_key').orderBy('session_id').execute();
    return rows.map((r) => ({
      schoolId: r.school_id,
      target: r.target,
      calendarKey: r.calendar_key,
      sessionId: Number(r.session_id),
      remoteEventId: r.remote_event_id,
      contentHash: r.content_hash,
      updatedAt: r.updated_at,
    }));
  }
}
