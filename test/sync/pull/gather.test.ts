// A resource's download (sync/pull/gather.ts), from the sandbox over HTTP into what a real SQLite store holds:
// every page is read and tallied, only new or changed records are kept for the write (the rest counted), the
// listing's time is the upstream's `Date`; malformed records are seen but not kept; a failure is in the result,
// never thrown; downloads run in plan order, none after a fatal failure or a stop.
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../../src/sandbox/index.ts';
import { fetchResource, startDownloads } from '../../../src/sync/pull/gather.ts';
import type { Fetched, Gathered } from '../../../src/sync/pull/gathered.ts';
import { writeRecords } from '../../../src/sync/pull/write-records.ts';
import { newSchool } from '../../store/each-store.ts';
import { TEST_NOW } from '../../support/clock.ts';
import { listAll, resetSandboxStats, sandboxStats } from '../helpers.ts';
import { spec, stageSchool, stageWorld } from './stage-context.ts';

const world = stageWorld();
const { context } = world;

function download(f: Fetched | null | undefined): Gathered {
  if (!f) throw new Error('no download: not started');
  if (!f.result.ok) throw new Error(`no download: ${String(f.result.error)}`);
  return f.result.download;
}

describe("a resource's download", () => {
  it('keeps every record the store lacks, then only counts them once stored, on the upstream’s time', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx, progress } = await context(school);
    const current = await listAll(ctx.client.students({ current: true }));
    const left = await listAll(ctx.client.students({ current: false }));
    const ids = [...current, ...left].map((s) => s.id).sort((a, b) => a - b);

    const first = await fetchResource(ctx, spec('students'), undefined);
    const got = download(first);
    expect(got.records.size).toBe(ids.length);
    expect([...got.seen].sort((a, b) => a - b)).toEqual(ids);
    expect(got.unchanged).toBe(0);
    expect(got.tallies.map((t) => [t.label, t.tally.announced, t.tally.received])).toEqual([
      ['students', current.length, current.length],
      ['students (left)', left.length, left.length],
    ]);
    // HTTP dates have whole seconds: the world.sandbox's clock, floored.
    expect(got.listedAt).toBe(Math.floor(Date.parse(world.sandbox.now()) / 1000) * 1000);
    expect(first.pages).toBe(progress.filter((e) => e.type === 'page').length);
    await world.store.transaction((tx) =>
      writeRecords(tx, school, spec('students'), got, { skipped: 0, at: TEST_NOW }),
    );
    await got.records.close();

    const again = download(await fetchResource(ctx, spec('students'), undefined));
    expect(again.records.size).toBe(0);
    expect(again.unchanged).toBe(ids.length);
    expect(again.allSeen).toBe(true);
    await again.records.close();
  });

  it('asks an incremental listing only for changes since its cursor, and asks nothing singly', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx } = await context(school);
    await resetSandboxStats(world.sandbox.url);
    const cursor = world.sandbox.now();
    const got = download(await fetchResource(ctx, spec('sessions'), cursor));
    expect(got.records.size).toBe(0);
    expect(got.askedAfter).toBe(cursor);
    expect((await sandboxStats(world.sandbox.url)).routes['GET /sessions/{id}']).toBeUndefined();
    await got.records.close();
  });

  it('sees malformed records by id without keeping them, and notes each', async () => {
    const faulty = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW, malformedRate: 0.2 });
    try {
      const school = stageSchool(newSchool(), faulty);
      const { ctx } = await context(school, faulty);
      const f = await fetchResource(ctx, spec('students'), undefined);
      const got = download(f);
      expect(f.skipped).toBeGreaterThan(0);
      expect(got.malformed.size + got.unknownSkipped).toBe(f.skipped);
      for (const id of got.malformed) {
        expect(faulty.isMalformed('students', id)).toBe(true);
        expect(got.seen.has(id)).toBe(true);
      }
      expect(f.errors.filter((e) => e.startsWith('students: skipped malformed record'))).toHaveLength(
        f.skipped,
      );
      expect(got.records.size).toBe(got.seen.size - got.malformed.size);
      await got.records.close();
    } finally {
      await faulty.close();
    }
  });

  it('never throws: a refused listing is in the result, and no later download starts after it', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx } = await context(school, { url: world.sandbox.url, token: 'not-the-token' });
    await resetSandboxStats(world.sandbox.url);
    const plan = [
      { spec: spec('staff'), mode: 'full' as const },
      { spec: spec('locations'), mode: 'full' as const },
    ];
    const downloads = startDownloads(ctx, plan, () => false);
    const refused = await downloads.get('staff');
    expect(refused?.result).toMatchObject({ ok: false, error: { status: 401 } });
    expect(await downloads.get('locations')).toBeNull();
    expect((await sandboxStats(world.sandbox.url)).total).toBe(1);
  });

  it('starts no download for a resource not due, nor once the pull is stopped', async () => {
    const school = stageSchool(newSchool(), world.sandbox);
    const { ctx, progress } = await context(school);
    const plan = [
      { spec: spec('departments'), mode: 'full' as const },
      { spec: spec('yearGroups'), mode: 'skipped' as const },
      { spec: spec('activities'), mode: 'full' as const },
      { spec: spec('locations'), mode: 'full' as const },
    ];
    // Stopped (a shutdown) once the first resource's page has arrived.
    const downloads = startDownloads(ctx, plan, () => progress.some((e) => e.type === 'page'));
    expect([...downloads.keys()]).toEqual(['departments', 'activities', 'locations']);
    const departments = download(await downloads.get('departments'));
    expect(departments.records.size).toBeGreaterThan(0);
    await departments.records.close();
    expect(await downloads.get('activities')).toBeNull();
    expect(await downloads.get('locations')).toBeNull();
    expect(new Set(progress.flatMap((e) => (e.type === 'page' ? [e.kind] : [])))).toEqual(
      new Set(['departments']),
    );
  });
});
