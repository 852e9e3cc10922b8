// A push's writes under its target's fence (store.push.fencedBy, lease-fence.ts), on SQLite and PostgreSQL: each is
// written only while the target's lease is held at that fence, else it writes nothing and throws LeaseLostError;
// and each costs as few statements as an unfenced one (on PostgreSQL each statement is a round trip, and a push
// writes a calendar and its mappings per chunk of events, issue 45).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../src/store/lease-fence.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import type { PushCalendar, PushMapping, PushRepository } from '../../src/store/types.ts';
import { countStatements, describeCount } from '../support/statements.ts';
import { DIALECTS, openTestStore, type TestStore } from '../sync/helpers.ts';
import { newSchool, T0, T1 } from './each-store.ts';

/**
 * Statements each fenced write sends (three mappings, one forgotten). Counted on 8 Dec before the fence's check
 * joined the write: PostgreSQL 4 each (BEGIN, the write, the lease row read FOR SHARE, COMMIT); SQLite 3, 4, 3
 * (BEGIN IMMEDIATE with the check, the write — three mappings are two statements of 2 and 1 rows —, COMMIT). After:
 * PostgreSQL 1 each; SQLite as before (its statements are no round trips, and a transaction keeps a write of
 * several statements whole).
 */
const BOUND = {
  postgres: { calendar: 1, mappings: 1, forget: 1 },
  sqlite: { calendar: 3, mappings: 4, forget: 3 },
};

describe.each(DIALECTS)('a push’s fenced writes on %s', (dialect) => {
  let ts: TestStore;
  beforeAll(async () => {
    ts = await openTestStore(dialect);
  });
  afterAll(() => ts?.cleanup());

  /** A replica on another host, beating now, or silent past OWNER_SILENT_MS. */
  async function replica(name: string, silent = false) {
    const owner = { id: `${name}:1:abc`, host: `${name}-host`, pid: 1, startedAt: T0 };
    const at = silent ? Date.now() - OWNER_SILENT_MS - 1_000 : Date.now();
    await ts.store.runs.beat(owner, new Date(at).toISOString());
    return owner.id;
  }
  async function take(target: string, owner: string) {
    const lease = await ts.store.runs.acquirePushLease(target, owner, new Date().toISOString());
    if (!lease.acquired) throw new Error(`${owner} did not get the lease of ${target}`);
    return lease;
  }
  const calendar = (s: string, remoteCalendarId: string): PushCalendar => ({
    schoolId: s,
    target: 'google',
    calendarKey: 'team:10',
    remoteCalendarId,
    pausedUntil: null,
    lastReconciledAt: T1,
  });
  const mapping = (s: string, sessionId: number, hash: string): PushMapping => ({
    schoolId: s,
    target: 'google',
    calendarKey: 'team:10',
    sessionId,
    remoteEventId: `ev${sessionId}`,
    contentHash: hash,
    updatedAt: T0,
  });
  const stored = async (s: string) => ({
    calendars: (await ts.store.push.listPushCalendars(s, 'google')).map((c) => c.remoteCalendarId),
    mappings: (await ts.store.push.listPushMappings(s, 'google')).map((m) => [m.sessionId, m.contentHash]),
  });
  /** The three writes a push makes, each counted. */
  async function writeAll(push: PushRepository, s: string, tag: string) {
    const counts: Record<string, number> = {};
    const counted = async (name: keyof (typeof BOUND)['sqlite'], write: () => Promise<void>) => {
      const counter = countStatements();
      try {
        await write();
      } finally {
        const count = counter.stop();
        counts[name] = count.total;
        console.info(describeCount(`${dialect}, fenced ${name} (${tag})`, count));
      }
    };
    await counted('calendar', () => push.savePushCalendar(calendar(s, `cal-${tag}`)));
    await counted('mappings', () =>
      push.upsertPushMappings([mapping(s, 1, tag), mapping(s, 2, tag), mapping(s, 3, tag)]),
    );
    await counted('forget', () => push.deletePushMappings(s, 'google', 'team:10', [3]));
    return counts;
  }

  it('writes under the held fence, each in its bound of statements', async () => {
    const s = newSchool();
    const target = `${s}/google`;
    const a = await take(target, await replica(`${s}-a`));
    const counts = await writeAll(ts.store.push.fencedBy({ target, fence: a.fence }), s, 'a');
    expect(await stored(s)).toEqual({
      calendars: ['cal-a'],
      mappings: [
        [1, 'a'],
        [2, 'a'],
      ],
    });
    for (const [name, bound] of Object.entries(BOUND[dialect]))
      expect(counts[name], name).toBeLessThanOrEqual(bound);
  });

  it('under a fence the lease moved on from (taken over, or freed), writes nothing and throws LeaseLostError', async () => {
    const s = newSchool();
    const target = `${s}/google`;
    const a = await take(target, await replica(`${s}-a`));
    const held = ts.store.push.fencedBy({ target, fence: a.fence });
    await held.savePushCalendar(calendar(s, 'cal-a'));
    await held.upsertPushMappings([mapping(s, 1, 'a'), mapping(s, 2, 'a')]);
    const before = await stored(s);

    await replica(`${s}-a`, true);
    const b = await take(target, await replica(`${s}-b`));
    expect(b.fence).toBe(a.fence + 1);
    const refused = async (write: Promise<void>) => {
      const err = await write.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LeaseLostError);
      expect(err).toMatchObject({ target, fence: a.fence });
    };
    await refused(held.savePushCalendar(calendar(s, 'cal-a-late')));
    await refused(held.upsertPushMappings([mapping(s, 1, 'late'), mapping(s, 9, 'late')]));
    await refused(held.deletePushMappings(s, 'google', 'team:10', [1, 2]));
    // A delete that would find nothing is refused all the same.
    await refused(held.deletePushMappings(s, 'google', 'team:10', [77]));
    expect(await stored(s)).toEqual(before);

    // Freed by its holder: its fence no longer writes either.
    await ts.store.runs.releasePushLease(target, b.token);
    const freed = ts.store.push.fencedBy({ target, fence: b.fence });
    await expect(freed.savePushCalendar(calendar(s, 'cal-b'))).rejects.toBeInstanceOf(LeaseLostError);
    await expect(freed.upsertPushMappings([mapping(s, 1, 'b')])).rejects.toBeInstanceOf(LeaseLostError);
    await expect(freed.deletePushMappings(s, 'google', 'team:10', [1])).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await stored(s)).toEqual(before);
  });
});
