// A resource's cursors (sync/pull/advance-cursors.ts), in a real SQLite store: they move only with the records they
// cover (in the resource's transaction, and not after a listing that may have left some out), to the listing's own
// time on the upstream's clock less the overlap; a cursor found in the upstream's future makes the next read whole;
// without a `Date` the upstream's clock as measured elsewhere stands in, and with nothing measured the cursor stays.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceMode } from '../../../src/jobs/pull-summary.ts';
import type { ResourceKind } from '../../../src/store/types.ts';
import { advanceCursors } from '../../../src/sync/pull/advance-cursors.ts';
import { clockMemoryOf } from '../../../src/sync/pull/clock-memory.ts';
import type { Gathered } from '../../../src/sync/pull/gathered.ts';
import { judgeListing } from '../../../src/sync/pull/judge-listing.ts';
import { SENSITIVE_KEY } from '../../../src/sync/pull/sensitive.ts';
import type { ResourceRunContext } from '../../../src/sync/pull/types.ts';
import { newSchool, T0 } from '../../store/each-store.ts';
import { member, team } from '../../store/fixtures.ts';
import { openTestStore, type TestStore } from '../helpers.ts';
import { gathered, spec, stageContext, stageSchool } from './stage-context.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
});
afterAll(() => ts?.cleanup());

const STARTED = new Date('2026-11-23T12:00:00.000Z');
const LISTED = Date.parse('2026-11-23T11:58:30.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
/** The school's overlap, 120 s by default. */
const OVERLAP = 120_000;

async function setup(patch: Record<string, unknown> = {}) {
  const school = stageSchool(newSchool(), undefined, patch);
  return { school, ...(await stageContext(ts.store, school, { startedAt: STARTED })) };
}

function advance(
  ctx: ResourceRunContext,
  kind: ResourceKind,
  mode: ResourceMode,
  got: Gathered,
  deferred: ReadonlyMap<string, string> = new Map(),
) {
  return ts.store.transaction((tx) =>
    advanceCursors(tx, ctx, spec(kind), mode, judgeListing(got, mode === 'full'), got, deferred),
  );
}

const cursors = async (schoolId: string) => Object.fromEntries(await ts.store.records.cursors(schoolId));

describe("a resource's cursors", () => {
  it("move to the listing's upstream time less the overlap, with the beat's mark and, when full, the refresh", async () => {
    const { school, ctx } = await setup();
    await advance(ctx, 'sessions', 'incremental', gathered([1], { listedAt: LISTED }));
    expect(await cursors(school.id)).toEqual({
      'updatedAfter:sessions': iso(LISTED - OVERLAP),
      'readAt:sessions': STARTED.toISOString(),
    });
    await advance(ctx, 'teams', 'full', gathered([1], { listedAt: LISTED + 5_000 }));
    expect(await cursors(school.id)).toMatchObject({
      'updatedAfter:teams': iso(LISTED + 5_000 - OVERLAP),
      'refreshedAt:teams': STARTED.toISOString(),
    });
  });

  it('stay where they were after a listing that may have left records out', async () => {
    const { school, ctx } = await setup();
    const before = new Map([['updatedAfter:absences', iso(LISTED - 3_600_000)]]);
    await ts.store.records.setCursors(school.id, before);
    const tally = { announced: 4, received: 3, repeated: 0, ids: new Set([1, 2, 3]) };
    const got = gathered([1, 2, 3], { listedAt: LISTED, tallies: [{ label: 'absences', tally }] });
    await advance(ctx, 'absences', 'incremental', got);
    expect(await cursors(school.id)).toEqual(Object.fromEntries(before));
  });

  it('go with the transaction, the deferred ones of earlier resources in the same statement', async () => {
    const { school, ctx } = await setup();
    const deferred = new Map([['refreshedAt:staff', STARTED.toISOString()]]);
    const failed = ts.store.transaction(async (tx) => {
      const got = gathered([1], { listedAt: LISTED });
      await advanceCursors(tx, ctx, spec('sessions'), 'incremental', judgeListing(got, false), got, deferred);
      throw new Error('the write of a later chunk failed');
    });
    await expect(failed).rejects.toThrow('the write of a later chunk failed');
    expect(await cursors(school.id)).toEqual({});
    await advance(ctx, 'sessions', 'incremental', gathered([1], { listedAt: LISTED }), deferred);
    expect(await cursors(school.id)).toMatchObject({
      'refreshedAt:staff': STARTED.toISOString(),
      'updatedAfter:sessions': iso(LISTED - OVERLAP),
    });
  });

  it('of reference data are only its refresh, on a full read', async () => {
    const { school, ctx } = await setup();
    await advance(ctx, 'students', 'full', gathered([1], { listedAt: LISTED }));
    expect(await cursors(school.id)).toEqual({ 'refreshedAt:students': STARTED.toISOString() });
  });

  it("read whole next time when the cursor asked lay in the upstream's future", async () => {
    const { school, ctx, lines } = await setup();
    await advance(
      ctx,
      'sessions',
      'incremental',
      gathered([1], { listedAt: LISTED, askedAfter: iso(LISTED + 60_000) }),
    );
    expect((await cursors(school.id))['updatedAfter:sessions']).toBe(new Date(0).toISOString());
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      "the sessions cursor lay after the upstream's time: its clock went back, or this server's clock set the cursor; sessions are read whole next time",
    ]);
  });

  it("without a Date follow the upstream's clock as measured, or stay put with nothing measured, saying so once", async () => {
    const { school, ctx, lines } = await setup();
    const asked = iso(LISTED - 600_000);
    await advance(ctx, 'sessions', 'incremental', gathered([1], { askedAfter: asked, askedAt: LISTED }));
    await advance(ctx, 'absences', 'incremental', gathered([1], { askedAt: LISTED }));
    expect(await cursors(school.id)).toMatchObject({
      'updatedAfter:sessions': asked,
      'updatedAfter:absences': new Date(0).toISOString(),
    });
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);

    // The upstream's clock measured on another answer: 5 minutes behind this server's.
    const other = await setup();
    const now = Date.now();
    clockMemoryOf(other.ctx.client).note({ date: now - 300_000, sentAt: now - 50, receivedAt: now });
    await advance(other.ctx, 'sessions', 'incremental', gathered([1], { askedAt: now }));
    expect((await cursors(other.school.id))['updatedAfter:sessions']).toBe(iso(now - 300_000 - OVERLAP));
  });

  it('after sensitive rosters were turned off, strip the teams the full listing did not rewrite', async () => {
    const { school, ctx } = await setup();
    const medical = [member(7, { medicalConditions: ['Asthma'] })];
    const teams = [1, 2, 3].map((id) => team(id, [], { students: medical }));
    await ts.store.records.upsert(school.id, 'teams', teams, T0);
    await ts.store.records.setCursors(school.id, new Map([[SENSITIVE_KEY, 'on']]));
    // Team 1 came whole in the listing (and was written without them); team 2 was not listed; team 3 came
    // malformed, so its stored record stood.
    const got = gathered([1, 3], { listedAt: LISTED, malformed: new Set([3]) });
    await advance(ctx, 'teams', 'full', got);
    const conditions = async (id: number) =>
      (await ts.store.records.get(school.id, 'teams', id))!.students[0]!.medicalConditions;
    expect(await conditions(1)).toEqual(['Asthma']);
    expect(await conditions(2)).toEqual([]);
    expect(await conditions(3)).toEqual([]);
    expect((await cursors(school.id))[SENSITIVE_KEY]).toBe('off');
  });

  it('after sensitive rosters were turned on, strip nothing and mark the teams as stored with them', async () => {
    const { school, ctx } = await setup({ rosters: { sensitive: true } });
    const medical = [member(7, { medicalConditions: ['Asthma'] })];
    await ts.store.records.upsert(school.id, 'teams', [team(2, [], { students: medical })], T0);
    await ts.store.records.setCursors(school.id, new Map([[SENSITIVE_KEY, 'off']]));
    await advance(ctx, 'teams', 'full', gathered([1], { listedAt: LISTED }));
    const stored = await ts.store.records.get(school.id, 'teams', 2);
    expect(stored!.students[0]!.medicalConditions).toEqual(['Asthma']);
    expect((await cursors(school.id))[SENSITIVE_KEY]).toBe('on');
  });
});
