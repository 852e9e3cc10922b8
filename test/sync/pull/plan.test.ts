// How each resource is read this time (sync/pull/plan.ts), from what a real SQLite store holds: whole when a pull is
// full, when a resource never completed a listing or its cursor cannot be trusted, or when sensitive rosters were
// turned on or off; only what changed since a good cursor; reference data only when due; a beat not come round skips.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchool } from '../../../src/config.ts';
import type { ResourceMode } from '../../../src/jobs/pull-summary.ts';
import type { ResourceKind } from '../../../src/store/types.ts';
import { planResources } from '../../../src/sync/pull/plan.ts';
import { SENSITIVE_KEY } from '../../../src/sync/pull/sensitive.ts';
import { cursorKey, refreshKey } from '../../../src/sync/pull/types.ts';
import { RESOURCES } from '../../../src/sync/resources.ts';
import { openTestStore, type TestStore } from '../helpers.ts';

const school = parseSchool({
  id: 'hill',
  name: 'Hill',
  upstream: { url: 'http://127.0.0.1:9', token: 't' },
  timeZone: 'UTC',
});
const NOW = new Date('2026-03-02T10:00:00.000Z');
const REFERENCE = RESOURCES.filter((r) => !r.incremental).map((r) => r.kind);
let ts: TestStore;

beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});
afterAll(() => ts?.cleanup());

async function modes(kind: 'full' | 'incremental', beatsFrom: Date | null = null, now = NOW) {
  const plan = planResources(await ts.store.records.cursors('hill'), school, kind, now, beatsFrom);
  expect(plan.map((p) => p.spec.kind)).toEqual(RESOURCES.map((r) => r.kind));
  return Object.fromEntries(
    plan.map((p) => [p.spec.kind, { mode: p.mode, after: p.updatedAfter }]),
  ) as Record<ResourceKind, { mode: ResourceMode; after?: string }>;
}

const set = (key: string, value: string) => ts.store.records.setCursor('hill', key, value);

describe('the pull’s plan', () => {
  it('reads everything whole on a full pull, and on a first incremental one', async () => {
    for (const m of Object.values(await modes('full'))) expect(m).toEqual({ mode: 'full', after: undefined });
    for (const m of Object.values(await modes('incremental'))) expect(m.mode).toBe('full');
  });

  it('reads only what changed since a good cursor, and reference data only when it is due', async () => {
    await set(SENSITIVE_KEY, 'off');
    for (const kind of ['sessions', 'absences', 'teams'] as const)
      await set(cursorKey(kind), '2026-03-02T09:58:00.000Z');
    for (const kind of REFERENCE) await set(refreshKey(kind), '2026-03-02T09:01:00.000Z');
    const m = await modes('incremental');
    expect(m.sessions).toEqual({ mode: 'incremental', after: '2026-03-02T09:58:00.000Z' });
    expect(m.teams.mode).toBe('incremental');
    for (const kind of REFERENCE) expect(m[kind].mode, kind).toBe('skipped');
    // 60 minutes after the last refresh (the default referenceRefreshMinutes) it is due again.
    const later = await modes('incremental', null, new Date('2026-03-02T10:01:00.000Z'));
    for (const kind of REFERENCE) expect(later[kind].mode, kind).toBe('full');
  });

  it('reads whole a resource whose cursor is no date or lies a day ahead', async () => {
    await set(cursorKey('sessions'), 'yesterday');
    await set(cursorKey('absences'), '2026-03-03T10:00:01.000Z');
    await set(cursorKey('teams'), '2026-03-03T09:59:59.000Z');
    const m = await modes('incremental');
    expect(m.sessions.mode).toBe('full');
    expect(m.absences.mode).toBe('full');
    expect(m.teams).toEqual({ mode: 'incremental', after: '2026-03-03T09:59:59.000Z' });
    await set(cursorKey('sessions'), '2026-03-02T09:58:00.000Z');
    await set(cursorKey('absences'), '2026-03-02T09:58:00.000Z');
  });

  it('reads every team again when sensitive rosters were turned on or off', async () => {
    await set(SENSITIVE_KEY, 'on');
    expect((await modes('incremental')).teams.mode).toBe('full');
    await set(SENSITIVE_KEY, 'off');
    expect((await modes('incremental')).teams.mode).toBe('incremental');
  });

  it('on a scheduled fire, skips a resource whose beat has not come round', async () => {
    await set('readAt:teams', '2026-03-02T09:59:00.000Z');
    await set('readAt:absences', '2026-03-02T09:59:00.000Z');
    const m = await modes('incremental', NOW);
    expect(m.sessions.mode).toBe('incremental');
    expect(m.absences.mode).toBe('incremental');
    expect(m.teams.mode).toBe('skipped');
    // `rostercal sync` (no fire) reads every incremental resource.
    expect((await modes('incremental', null)).teams.mode).toBe('incremental');
  });
});
