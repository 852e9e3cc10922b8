// A pull through 429 storms and injected 5xx ends with the same snapshot as a clean pull; a run whose retries
// run out keeps nothing of the resources that failed; malformed records are skipped, counted and never deleted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { openTestStore, snapshot, type TestStore, testClient, testSchool } from './helpers.ts';

// Every sandbox here generates the same school: same seed, same clock.
// Seed 13: its malformed records fall in every listing (the sandbox’s choice of records is uneven across seeds).
const SEED = 13;
const NOW = TEST_NOW;
const now = () => new Date(NOW);

describe('pull under chaos', () => {
  const sandboxes: Sandbox[] = [];
  const stores: TestStore[] = [];
  let clean: Record<string, unknown[]>;
  let cleanStore: TestStore;

  const sandbox = async (opts: Parameters<typeof startSandbox>[0] = {}) => {
    const sb = await startSandbox({ seed: SEED, scale: 'small', now: NOW, ...opts });
    sandboxes.push(sb);
    return sb;
  };
  const store = async () => {
    const ts = await openTestStore('sqlite');
    stores.push(ts);
    return ts;
  };

  beforeAll(async () => {
    const sb = await sandbox();
    cleanStore = await store();
    const school = testSchool(sb);
    const summary = await pullSchool({
      store: cleanStore.store,
      client: testClient(sb),
      school,
      kind: 'full',
      now,
    });
    expect(summary.status).toBe('succeeded');
    clean = await snapshot(cleanStore.store, school.id);
  });
  afterAll(async () => {
    for (const ts of stores) await ts.cleanup();
    for (const sb of sandboxes) await sb.close();
  });

  it('429 storms and 5xx errors end with the same snapshot as a clean run', async () => {
    const sb = await sandbox({ rateLimit: 25, burst: 3, errorRate: 0.2 });
    const ts = await store();
    const school = testSchool(sb);
    const summary = await pullSchool({ store: ts.store, client: testClient(sb), school, kind: 'full', now });
    expect(summary.status).toBe('succeeded');
    expect(summary.upstream.throttled).toBeGreaterThan(0);
    expect(summary.upstream.retries).toBeGreaterThan(summary.upstream.throttled);
    const [run] = await ts.store.runs.listRuns(school.id, { limit: 1 });
    expect(run!.throttled).toBe(summary.upstream.throttled);
    expect(run!.retries).toBe(summary.upstream.retries);
    expect(await snapshot(ts.store, school.id)).toEqual(clean);
  });

  it('a resource whose retries run out keeps nothing, deletes nothing; the rest is stored', async () => {
    const sb = await sandbox({ errorRate: 0.35 });
    // Start from the clean snapshot, then let a flaky run without retries fail some resources part-way.
    const ts = await store();
    const school = testSchool(sb);
    const seeded = await pullSchool({
      store: ts.store,
      client: testClient(sandboxes[0]!),
      school,
      kind: 'full',
      now,
    });
    expect(seeded.status).toBe('succeeded');
    // Upstream moved on: every session renamed. A failed sessions resource must show none of it.
    for (const s of sb.school.sessions) s.title = `${s.title} (v2)`;
    sb.setNow(sb.now()); // bumps the sandbox's state version: no cached listing outlives the edit

    const summary = await pullSchool({
      store: ts.store,
      client: testClient(sb, { maxRetries: 0 }),
      school,
      kind: 'full',
      now,
    });
    expect(summary.status).toBe('failed');
    const failed = summary.resources.filter((r) => r.status === 'failed').map((r) => r.kind);
    expect(failed.length).toBeGreaterThan(0);
    const after = await snapshot(ts.store, school.id);
    for (const kind of failed) expect(after[kind], kind).toEqual(clean[kind]);
    for (const r of summary.resources) expect(r.counts.deleted, r.kind).toBe(0);
    const titles = (after.sessions as { title: string }[]).map((s) => s.title);
    if (failed.includes('sessions')) expect(titles.some((t) => t.endsWith('(v2)'))).toBe(false);
    else expect(titles.every((t) => t.endsWith('(v2)'))).toBe(true);
    expect(summary.errors.some((e) => /failed, nothing of it was kept: .*failed with 5\d\d/.test(e))).toBe(
      true,
    );
    const [run] = await ts.store.runs.listRuns(school.id, { limit: 1 });
    expect(run).toMatchObject({ status: 'failed', errors: summary.errors });
  });

  it('malformed records are skipped and named; the rest is stored and nothing known is deleted', async () => {
    const sb = await sandbox({ malformedRate: 0.08 });
    const ts = await store();
    const school = testSchool(sb);
    await pullSchool({ store: ts.store, client: testClient(sandboxes[0]!), school, kind: 'full', now });

    const summary = await pullSchool({ store: ts.store, client: testClient(sb), school, kind: 'full', now });
    expect(['succeeded', 'suspicious']).toContain(summary.status);
    const skipped = Object.values(summary.counts).reduce((n, c) => n + c.skipped, 0);
    expect(skipped).toBeGreaterThan(0);
    const named = summary.errors.filter((e) => e.includes('skipped malformed record'));
    expect(named.length).toBe(Math.min(skipped, named.length));
    // Each named id really is one the sandbox garbled.
    const sessionIds = summary.errors
      .map((e) => /^sessions: skipped malformed record (\d+):/.exec(e)?.[1])
      .filter((x): x is string => x !== undefined);
    for (const id of sessionIds) expect(sb.isMalformed('sessions', Number(id))).toBe(true);
    for (const c of Object.values(summary.counts)) expect(c.deleted).toBe(0);
    // Nothing lost: every record is still there; the sessions the client refused are kept as they were.
    const after = await snapshot(ts.store, school.id);
    const ids = (xs: unknown[] | undefined) =>
      (xs ?? []).map((x) => (x as { id?: unknown; key?: unknown }).id ?? (x as { key: unknown }).key);
    for (const kind of Object.keys(clean)) expect(ids(after[kind]), kind).toEqual(ids(clean[kind]));
    expect(sessionIds.length, summary.errors.join('\n')).toBeGreaterThan(0);
    expect(after.sessions).toEqual(clean.sessions);
    const [run] = await ts.store.runs.listRuns(school.id, { limit: 1 });
    expect(run!.errors).toEqual(summary.errors);
    expect(run!.counts.sessions!.skipped).toBe(summary.counts.sessions!.skipped);
  });
});
