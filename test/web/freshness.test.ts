// "Updated 5 minutes ago from the school's system" (web/freshness.ts): the last pull that succeeded, on a real SQLite
// store, never a push or a failed pull; and the words for how long ago.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunKind, RunStatus } from '../../src/store/types.ts';
import { ago, lastPulledAt } from '../../src/web/freshness.ts';
import { runEnd } from '../store/fixtures.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  await ts.store.records.upsertSchool({ id: 'hill', name: 'Hill', timeZone: 'UTC' });
});
afterAll(() => ts?.cleanup());

async function run(kind: RunKind, status: RunStatus | 'running', startedAt: string, finishedAt: string) {
  const id = await ts.store.runs.startRun({ schoolId: 'hill', kind, at: startedAt });
  if (status === 'running') return;
  await ts.store.runs.finishRun(id, runEnd(status, finishedAt));
}

describe('when the school’s data was last read', () => {
  it('is the finish of the latest successful pull, full or incremental', async () => {
    expect(await lastPulledAt(ts.store, 'hill')).toBeNull();
    await run('full', 'succeeded', '2026-03-02T09:00:00.000Z', '2026-03-02T09:01:00.000Z');
    expect(await lastPulledAt(ts.store, 'hill')).toEqual(new Date('2026-03-02T09:01:00.000Z'));
    await run('incremental', 'succeeded', '2026-03-02T09:10:00.000Z', '2026-03-02T09:10:05.000Z');
    // Neither a push, a failed pull nor one still running says the data is fresher.
    await run('push', 'succeeded', '2026-03-02T09:20:00.000Z', '2026-03-02T09:20:30.000Z');
    await run('incremental', 'failed', '2026-03-02T09:30:00.000Z', '2026-03-02T09:30:01.000Z');
    await run('incremental', 'running', '2026-03-02T09:40:00.000Z', '');
    expect(await lastPulledAt(ts.store, 'hill')).toEqual(new Date('2026-03-02T09:10:05.000Z'));
    expect(await lastPulledAt(ts.store, 'other')).toBeNull();
  });
});

describe('how long ago', () => {
  const now = new Date('2026-03-02T10:00:00.000Z');
  const earlier = (s: number) => new Date(now.getTime() - s * 1000);
  it('says it in the largest whole unit, singular for one', () => {
    expect(ago(earlier(0), now)).toBe('just now');
    expect(ago(earlier(59), now)).toBe('just now');
    expect(ago(earlier(60), now)).toBe('1 minute ago');
    expect(ago(earlier(5 * 60 + 30), now)).toBe('5 minutes ago');
    expect(ago(earlier(3600), now)).toBe('1 hour ago');
    expect(ago(earlier(2 * 3600 + 59 * 60), now)).toBe('2 hours ago');
    expect(ago(earlier(86_400 * 3), now)).toBe('3 days ago');
    // A clock behind the store's: not "in the future", just now.
    expect(ago(earlier(-120), now)).toBe('just now');
  });
});
