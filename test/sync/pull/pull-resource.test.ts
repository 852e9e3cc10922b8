// One resource's turn (sync/pull/pull-resource.ts), from the sandbox over HTTP into a real SQLite store: what it
// downloaded is written with its cursors in one transaction; a turn with nothing to write opens none and leaves its
// cursors to the next resource's write; a failed download writes nothing and says why (fatal when the token is
// refused); a resource not due is not read.
import { describe, expect, it } from 'vitest';
import type { ResourceKind } from '../../../src/store/types.ts';
import { fetchResource } from '../../../src/sync/pull/gather.ts';
import { type DeferredCursors, pullResource } from '../../../src/sync/pull/pull-resource.ts';
import type { ResourceRunContext } from '../../../src/sync/pull/types.ts';
import { newSchool } from '../../store/each-store.ts';
import { spec, stageSchool, stageWorld } from './stage-context.ts';

const world = stageWorld();
const { context } = world;
/** A full turn of `kind` with its download started, as runResources starts it. */
const fullTurn = (ctx: ResourceRunContext, kind: ResourceKind, deferred: DeferredCursors) =>
  pullResource(ctx, spec(kind), 'full', fetchResource(ctx, spec(kind), undefined), deferred);
const cursors = async (schoolId: string) => Object.fromEntries(await world.store.records.cursors(schoolId));

describe("a resource's turn", () => {
  it('writes what it downloaded with its cursors, then, unchanged, defers them to the next write', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx } = await context(school);
    const deferred: DeferredCursors = new Map();
    const first = await fullTurn(ctx, 'staff', deferred);
    const staff = (await world.store.records.liveIds(school.id, 'staff')).length;
    expect(staff).toBeGreaterThan(0);
    expect(first.outcome).toMatchObject({
      kind: 'staff',
      status: 'ok',
      counts: { added: staff, deleted: 0 },
    });
    expect(first.errors).toEqual([]);
    expect(await cursors(school.id)).toEqual({ 'refreshedAt:staff': ctx.startedAt.toISOString() });

    // Read again a moment later: nothing to write, so its cursor waits in `deferred`, not in the store.
    await world.store.records.setCursors(school.id, new Map([['refreshedAt:staff', 'before']]));
    const again = await fullTurn(ctx, 'staff', deferred);
    expect(again.outcome).toMatchObject({ status: 'ok', counts: { added: 0, unchanged: staff } });
    expect(await cursors(school.id)).toEqual({ 'refreshedAt:staff': 'before' });
    expect(Object.fromEntries(deferred)).toEqual({ 'refreshedAt:staff': ctx.startedAt.toISOString() });

    // The next resource with something to write takes them with its own, in its transaction.
    const locations = await fullTurn(ctx, 'locations', deferred);
    expect(locations.outcome.status).toBe('ok');
    expect(await cursors(school.id)).toEqual({
      'refreshedAt:staff': ctx.startedAt.toISOString(),
      'refreshedAt:locations': ctx.startedAt.toISOString(),
    });
    expect(deferred.size).toBe(0);
  });

  it('writes nothing of a failed download and says why, fatal when the token is refused', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx, lines } = await context(school, { url: world.sandbox.url, token: 'not-the-token' });
    const deferred: DeferredCursors = new Map([['refreshedAt:staff', 'deferred']]);
    const failed = await fullTurn(ctx, 'staff', deferred);
    expect(failed.outcome).toMatchObject({ kind: 'staff', status: 'failed', counts: { added: 0 } });
    expect(failed.fatal).toBe(true);
    expect(failed.errors).toHaveLength(1);
    expect(failed.errors[0]).toMatch(/^staff: /);
    expect(failed.errors[0]).not.toContain('not-the-token');
    expect(await world.store.records.liveIds(school.id, 'staff')).toEqual([]);
    expect(await cursors(school.id)).toEqual({});
    expect(lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      'pull of staff failed; nothing of it was written',
    ]);
  });

  it('reads nothing of a resource not due, nor of one whose download never started', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx } = await context(school);
    const notDue = await pullResource(ctx, spec('staff'), 'skipped', undefined, new Map());
    expect(notDue.outcome).toMatchObject({ status: 'skipped', pages: 0 });
    expect(notDue.outcome.error).toBeUndefined();
    const stopped = await pullResource(ctx, spec('staff'), 'full', Promise.resolve(null), new Map());
    expect(stopped.outcome).toMatchObject({
      status: 'skipped',
      error: 'not attempted: the pull was stopped',
    });
    expect(await world.store.records.liveIds(school.id, 'staff')).toEqual([]);
  });
});
