// The admins' calendar search keeps one index per school and data version. It is made off the request (prepare,
// serve's step after each pull) so an admin's first search does not wait for it; a search that arrives while it
// is being made waits for that build instead of starting another; a pull that changed nothing makes none.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { personName } from '../../src/calendar/context.ts';
import { CalendarSearch } from '../../src/feeds/calendar-search.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { session } from '../store/fixtures.ts';
import { fullPull } from '../sync/helpers.ts';

const NOW = '2026-11-20T00:00:00.000Z';
const SCHOOL = 'hillcrest';

async function pullFrom(store: Store, seed: number): Promise<void> {
  const sandbox: Sandbox = await startSandbox({ seed, scale: 'small', now: NOW });
  try {
    await fullPull(store, sandbox, NOW);
  } finally {
    await sandbox.close();
  }
}

describe('the search index, made off the request', () => {
  let dir: string;
  let store: Store;
  let surname: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'rostercal-search-index-'));
    store = await openStore({ dataDir: dir });
    await pullFrom(store, 7);
    const students = (await store.records.list(SCHOOL, 'students')).filter((s) => s.current);
    surname = students[0]!.lastName;
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is ready after prepare, before any search, and the first search makes none', async () => {
    const search = new CalendarSearch(store);
    expect(search.state(SCHOOL)).toEqual({ subjectsVersion: null, builds: 0 });
    await search.prepare(SCHOOL);
    const version = await store.records.subjectsVersion(SCHOOL);
    expect(version).toBeGreaterThan(0);
    expect(search.state(SCHOOL)).toEqual({ subjectsVersion: version, builds: 1 });
    const answer = await search.search([{ id: SCHOOL }], surname);
    expect(answer.hits.length).toBeGreaterThan(0);
    expect(search.state(SCHOOL).builds).toBe(1);
    // Asked again with the data unchanged (a pull that changed nothing): nothing made.
    await search.prepare(SCHOOL);
    expect(search.state(SCHOOL).builds).toBe(1);
  });

  it('a search arriving while the index is being made waits for that build, not a second one', async () => {
    const search = new CalendarSearch(store);
    const preparing = search.prepare(SCHOOL);
    const [answer] = await Promise.all([search.search([{ id: SCHOOL }], surname), preparing]);
    expect(answer.hits.map((h) => h.def.subject)).toContainEqual(expect.stringContaining(surname));
    expect(search.state(SCHOOL).builds).toBe(1);
    const counted = await search.counts(SCHOOL);
    expect(counted.student).toBeGreaterThan(0);
    expect(search.state(SCHOOL).builds).toBe(1);
  });

  it('is not made again after a pull that changed only sessions: they do not say whom calendars are of', async () => {
    const search = new CalendarSearch(store);
    await search.prepare(SCHOOL);
    const before = await store.records.dataVersion(SCHOOL);
    // What a pull that found only a new session writes.
    await store.records.upsert(SCHOOL, 'sessions', [session(990_001)], NOW);
    expect(await store.records.dataVersion(SCHOOL)).toBeGreaterThan(before);
    // The after-pull step's work (searchIndexAfterPull): nothing to make.
    await search.prepare(SCHOOL);
    expect(search.state(SCHOOL).builds).toBe(1);
  });

  it('is made again after a pull that changed the school, and finds the new names at once', async () => {
    const search = new CalendarSearch(store);
    await search.prepare(SCHOOL);
    const before = search.state(SCHOOL);
    // Another sandbox seed: other children under the same school id.
    await pullFrom(store, 8);
    const version = await store.records.subjectsVersion(SCHOOL);
    expect(version).not.toBe(before.subjectsVersion);
    await search.prepare(SCHOOL);
    expect(search.state(SCHOOL)).toEqual({ subjectsVersion: version, builds: 2 });
    const child = (await store.records.list(SCHOOL, 'students')).find((s) => s.current)!;
    // The first search after the pull answers from the new index (not the one a pull behind) and makes none.
    const answer = await search.search([{ id: SCHOOL }], personName(child));
    expect(answer.hits.map((h) => h.def.scopeId)).toContain(child.id);
    expect(search.state(SCHOOL).builds).toBe(2);
  }, 120_000);
});
