// Single reads of what a complete full listing left out (sync/pull/confirm-missing.ts), against the sandbox over
// HTTP and a real SQLite store: only a 404 proves a record gone, a 200 says it is still there; a listing with a gap,
// or one the deletion guard refuses, deletes nothing, so nothing is asked.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Id } from '../../../src/domain/types.ts';
import { confirmMissing, missingFrom } from '../../../src/sync/pull/confirm-missing.ts';
import { fetchResource } from '../../../src/sync/pull/gather.ts';
import type { Gathered } from '../../../src/sync/pull/gathered.ts';
import type { ResourceRunContext } from '../../../src/sync/pull/types.ts';
import { writeRecords } from '../../../src/sync/pull/write-records.ts';
import { newSchool } from '../../store/each-store.ts';
import { team } from '../../store/fixtures.ts';
import { TEST_NOW } from '../../support/clock.ts';
import { resetSandboxStats, sandboxStats } from '../helpers.ts';
import { gathered, spec, stageSchool, stageWorld } from './stage-context.ts';

const world = stageWorld();
let ctx: ResourceRunContext;
/** The upstream's teams, as the store holds them; plus one it never had. */
let upstreamIds: Id[];
const NEVER_UPSTREAM = 999_999;
const teams = { ...spec('teams'), confirm: spec('teams').confirm! };

beforeAll(async () => {
  // The small school has five teams: two of six missing is past the default 30 % guard.
  const school = stageSchool(newSchool(), world.sandbox, { deletionGuard: { maxShrinkFraction: 0.5 } });
  ({ ctx } = await world.context(school));
  const fetched = await fetchResource(ctx, teams, undefined);
  if (!fetched.result.ok) throw fetched.result.error;
  const got = fetched.result.download;
  await world.store.transaction((tx) => writeRecords(tx, school, teams, got, { skipped: 0, at: TEST_NOW }));
  await got.records.close();
  upstreamIds = [...got.seen].sort((a, b) => a - b);
  await world.store.records.upsert(school.id, 'teams', [team(NEVER_UPSTREAM, [])], TEST_NOW);
});

const singleReads = async () => (await sandboxStats(world.sandbox.url)).routes['GET /teams/{id}'];

async function confirm(got: Gathered) {
  const noted: string[] = [];
  await resetSandboxStats(world.sandbox.url);
  await confirmMissing(ctx, teams, got, (l) => noted.push(l));
  return { confirmations: Object.fromEntries(got.confirmations), noted, reads: await singleReads() };
}

describe('confirming what a full listing left out', () => {
  it('finds which stored records the listing left out', async () => {
    const [kept, ...rest] = upstreamIds;
    expect(await missingFrom(world.store, ctx, teams, gathered(rest))).toEqual({
      storedCount: upstreamIds.length + 1,
      missing: [kept, NEVER_UPSTREAM],
    });
    // A listing that returned every record the store held as it began: nothing to read.
    expect(await missingFrom(world.store, ctx, teams, gathered(rest, { allSeen: true }))).toEqual({
      storedCount: rest.length,
      missing: [],
    });
  });

  it('takes only a 404 for gone; a record the upstream still has is present', async () => {
    expect(upstreamIds.length).toBeGreaterThanOrEqual(5);
    const [kept, ...rest] = upstreamIds;
    const { confirmations, noted, reads } = await confirm(gathered(rest));
    expect(confirmations).toEqual({ [kept!]: 'present', [NEVER_UPSTREAM]: 'gone' });
    expect(reads).toEqual({ total: 2, byStatus: { '200': 1, '404': 1 } });
    expect(noted).toEqual([]);
  });

  it('asks nothing of a listing with a gap, nor of one the deletion guard refuses', async () => {
    const [, ...rest] = upstreamIds;
    const tally = { announced: upstreamIds.length, received: rest.length, repeated: 0, ids: new Set(rest) };
    const gap = await confirm(gathered(rest, { tallies: [{ label: 'teams', tally }] }));
    expect(gap).toEqual({ confirmations: {}, noted: [], reads: undefined });
    const shrunk = await confirm(gathered(upstreamIds.slice(0, 2)));
    expect(shrunk).toEqual({ confirmations: {}, noted: [], reads: undefined });
    const unknownIds = await confirm(gathered(rest, { unknownSkipped: 1 }));
    expect(unknownIds).toEqual({ confirmations: {}, noted: [], reads: undefined });
  });
});
